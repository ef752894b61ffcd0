"""Start-up of the command line: ``bt-raider check`` to its verdict, the medicine demo, imports.

Times fresh processes and prints the median, minimum and maximum wall time of each:

- ``bt-raider check --scene SCENE "pick(Apple)"`` (the FloorPlan1 kitchen of ``../shared`` when
  it is there, else the medicine-delivery scene shipped with the package), through the console
  script installed beside this interpreter, and through the one on ``PATH`` when that is another
  file (a pyenv shim adds its own start-up);
- ``python -c pass`` and ``python -c "import numpy"``, the floor under every command;
- ``bt-raider demo medicine-delivery --no-memory`` and with its memory (a fresh database each
  run: the embedding model loads every time), ``--demo-runs`` times each;

then the bt_raider modules loaded by building the parser for ``check`` alone.

Bytecode: an editable install run with ``PYTHONDONTWRITEBYTECODE`` set (as on our machines)
recompiles every bt_raider module at every start, which costs more than all the imports. A
regular ``pip install`` compiles them once; so does this script (``compileall`` on the package
folders, into the usual git-ignored ``__pycache__``) unless ``--no-compile``.

Side by side with an older commit (``--before DIR``): the runs alternate between the two trees so
both see the same machine load. DIR is a checkout importable as ``bt_raider`` from
``PYTHONPATH``::

    git worktree add /tmp/before e315e05
    for d in perception memory planners examples; do ln -s ../$d /tmp/before/bt_raider/$d; done
    python3 benchmarks/startup.py --before /tmp/before

    python3 benchmarks/startup.py [--runs 15] [--demo-runs 5] [--scene SCENE.json] [--before DIR]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KITCHEN = ROOT.parent / "shared" / "scenes" / "floorplan1_kitchen.json"
#: Source folders of the package (``package_dir`` in setup.cfg).
FOLDERS = ("bt_raider", "perception", "memory", "planners", "examples")


#: Commands run from here: ``python -c`` puts its working directory first on sys.path, and the
#: repository's own ``bt_raider`` there would shadow the tree being timed.
CWD = tempfile.gettempdir()


def _env(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    return env


def _time(cmd: list[str], tree: Path | None, out_dir: bool) -> float:
    if out_dir:
        cmd = [*cmd, "--out", tempfile.mkdtemp(prefix="bt_raider_startup_")]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(tree), cwd=CWD)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"startup: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed


def measure(
    label: str, cmd: list[str], runs: int, trees: dict[str, Path | None], out_dir: bool = False
) -> None:
    """Time ``cmd`` ``runs`` times in each tree, alternating, and print one line per tree."""
    for tree in trees.values():
        _time(cmd, tree, out_dir)  # warm the file cache
    times: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():
            times[name].append(_time(cmd, tree, out_dir))
    for name, ts in times.items():
        where = f" [{name}]" if len(trees) > 1 else ""
        print(
            f"{label}{where}, {runs} runs: median {statistics.median(ts):.3f} s, "
            f"min {min(ts):.3f} s, max {max(ts):.3f} s",
            flush=True,
        )


def modules_for_check(tree: Path | None) -> list[str]:
    code = (
        "import sys; from bt_raider.cli import build_parser; "
        "build_parser(['check', '--scene', 's.json', 'q']); "
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('bt_raider'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=_env(tree),
        cwd=CWD,
    )
    return out.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="check processes to time (15)")
    parser.add_argument("--demo-runs", type=int, default=5, help="demo processes to time (5)")
    parser.add_argument("--scene", help="scene file (default: the kitchen, else the shipped one)")
    parser.add_argument("--query", default="pick(Apple)", help="the action checked")
    parser.add_argument("--before", type=Path, help="an older checkout to time side by side")
    parser.add_argument("--no-compile", action="store_true", help="leave bytecode as it is")
    args = parser.parse_args()

    installed = Path(sys.executable).parent / "bt-raider"
    exe = str(installed) if installed.exists() else shutil.which("bt-raider")
    if exe is None:
        print("startup: bt-raider is not installed (pip install -e . first)", file=sys.stderr)
        return 2
    scene = (
        str(Path(args.scene).resolve())
        if args.scene
        else str(
            KITCHEN
            if KITCHEN.exists()
            else resources.files("bt_raider.examples.medicine_delivery") / "scene.json"
        )
    )
    trees: dict[str, Path | None] = {"now": None}
    if args.before is not None:
        trees = {"before": args.before.resolve(), "now": None}
    if not args.no_compile:
        for tree in trees.values():
            base = tree if tree is not None else ROOT
            for folder in FOLDERS:
                path = base / folder
                if path.is_dir():
                    compileall.compile_dir(str(path), quiet=1)
    note = " (set: bytecode compiled first)" if not args.no_compile else " (set)"
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print(f"PYTHONDONTWRITEBYTECODE{note}")
    print(f"scene: {scene}")

    measure("python -c pass", [sys.executable, "-c", "pass"], args.runs, {"": None})
    measure(
        "python -c 'import numpy'", [sys.executable, "-c", "import numpy"], args.runs, {"": None}
    )
    check = ["check", "--scene", scene, args.query]
    measure(f"bt-raider check {args.query!r} ({exe})", [exe, *check], args.runs, trees)
    on_path = shutil.which("bt-raider")
    if on_path and Path(on_path).resolve() != Path(exe).resolve():
        measure(f"bt-raider check {args.query!r} ({on_path})", [on_path, *check], args.runs, trees)
    demo = [exe, "demo", "medicine-delivery"]
    if args.demo_runs > 0:
        measure(
            "demo medicine-delivery --no-memory",
            [*demo, "--no-memory"],
            args.demo_runs,
            trees,
            True,
        )
        measure("demo medicine-delivery (memory, new db)", demo, args.demo_runs, trees, True)
    for name, tree in trees.items():
        loaded = modules_for_check(tree)
        where = f" [{name}]" if len(trees) > 1 else ""
        print(f"building the parser for 'check' loads {len(loaded)} bt_raider modules{where}:")
        print("  " + ", ".join(loaded))
    return 0


if __name__ == "__main__":
    sys.exit(main())
