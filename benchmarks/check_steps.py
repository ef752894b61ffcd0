"""The work ``bt-raider check`` does after its imports, step by step, in fresh processes.

Each run is a new interpreter that imports what a symbolic check imports, turns the collector
off as the command does, then times, in process, each step on the way to the verdict:

- ``scene_load``: ``Scene.load`` of the scene (reading, JSON, ``validate_scene``, names);
- ``lexicon``: ``CategoryLexicon.default()``, the bundled lexicon, built once per process;
- ``tools``: ``default_tools()``, the tool set a checker holds;
- ``checker``: ``make_checker("symbolic")`` (lexicon and tools built already);
- ``check``: the check of the query (the tools it calls are made then);

and, in a second pass of the same process, ``read_json`` and ``validate`` apart (warm). The
figures are the median and the minimum over the runs; the first call of each step in a process
is the one a command pays. Start-up itself (the interpreter, the imports) is
``benchmarks/startup.py``'s.

Side by side with another tree (``--before DIR``, importable as ``bt_raider`` from
``PYTHONPATH``, made as ``benchmarks/startup.py`` says): runs alternate, so both see the same
load. Timings on a busy machine move a lot: compare the minimums, or re-run when it is quiet.

    python3 benchmarks/check_steps.py [--runs 30] [--scene SCENE.json] [--query Q]
        [--before DIR] [--no-compile]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KITCHEN = ROOT.parent / "shared" / "scenes" / "floorplan1_kitchen.json"
STEPS = ("scene_load", "lexicon", "tools", "checker", "check", "read_json", "validate")

CHILD = """
import gc, json, sys, time
import bt_raider.checking.symbolic
from bt_raider.checking.registry import make_checker
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.perception.scene import Scene
from bt_raider.perception.tools import default_tools
from bt_raider.perception.scene_file import read_scene_json
from bt_raider.perception.validation import validate_scene
gc.disable()
gc.freeze()
path, query = sys.argv[1], sys.argv[2]
t, out = time.perf_counter, {}
a = t(); scene = Scene.load(path); out["scene_load"] = t() - a
a = t(); CategoryLexicon.default(); out["lexicon"] = t() - a
a = t(); default_tools(); out["tools"] = t() - a
a = t(); checker = make_checker("symbolic"); out["checker"] = t() - a
a = t(); checker.check(scene, query); out["check"] = t() - a
a = t(); data = read_scene_json(path); out["read_json"] = t() - a
a = t(); validate_scene(data, path); out["validate"] = t() - a
print(json.dumps({k: v * 1000 for k, v in out.items()}))
"""


def run_once(pythonpath: str | None, scene: Path, query: str) -> dict[str, float]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(scene.resolve()), query],
        cwd=tempfile.gettempdir(),  # not the repository: "-c" puts the working folder first
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--scene", type=Path, default=KITCHEN)
    parser.add_argument("--query", default="open the fridge")
    parser.add_argument("--before", help="another tree, importable as bt_raider from PYTHONPATH")
    parser.add_argument("--no-compile", action="store_true", help="leave the bytecode alone")
    args = parser.parse_args()
    if not args.scene.is_file():
        raise SystemExit(f"no scene at {args.scene} (pass --scene)")
    trees: dict[str, str | None] = {"this tree": None}  # the installed one
    if args.before:
        trees["before"] = args.before
    if not args.no_compile:
        # PYTHONDONTWRITEBYTECODE on our machines: without this every run compiles every module.
        for tree in (str(ROOT), args.before):
            if tree:
                for folder in ("bt_raider", "perception", "memory", "planners", "examples"):
                    compileall.compile_dir(Path(tree) / folder, quiet=1)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, pythonpath in trees.items():  # alternating: both see the same machine load
            rows[name].append(run_once(pythonpath, args.scene, args.query))
    print(f"{args.runs} fresh processes each; {args.scene.name}, {args.query!r}; ms")
    print(f"{'step':12}" + "".join(f"{name + ' median':>20}{'min':>8}" for name in trees))
    for step in STEPS:
        line = f"{step:12}"
        for name in trees:
            values = [r[step] for r in rows[name]]
            line += f"{statistics.median(values):20.2f}{min(values):8.2f}"
        print(line)


if __name__ == "__main__":
    main()
