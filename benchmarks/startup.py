"""Start-up of the command line: ``bt-raider check`` to its verdict, the medicine demo, imports.

Times fresh processes and prints, for each, the median, minimum and maximum wall time and the
median CPU time (user + system of the process and the children it waited for; on a machine
other jobs keep busy the CPU figure moves less than the wall time):

- ``bt-raider check --scene SCENE "open the fridge"`` (the FloorPlan1 kitchen of ``../shared``
  when it is there, else the medicine-delivery scene shipped with the package), through the
  console script installed beside this interpreter, through the one on ``PATH`` when that is
  another file (a pyenv shim adds its own start-up), and through each ``--exe`` given;
- ``python -c pass`` (the floor under every command: the interpreter and ``site``, which runs
  the ``.pth`` files of site-packages; an editable install's is a setuptools import finder),
  ``python -S -c pass`` (no ``site``) and ``python -c "import numpy"``;
- ``bt-raider demo medicine-delivery --no-memory`` and with its memory (a fresh database each
  run: the embedding model loads every time), ``--demo-runs`` times each;

then, for each command, the heavy packages its process loaded (numpy, scipy, unified-planning,
torch: ``check`` and the demo without memory need none of them) and how many bt_raider modules.

Which install: ``README``'s first command is ``pip install -e .`` (editable): every start runs
setuptools' finder from a ``.pth`` file (about 25 ms on our machine). A regular ``pip install .``
has no finder. Each line names the install it timed. To time a regular install beside the
editable one, without touching the environment the project is installed in::

    python3 -m venv --without-pip /tmp/regular
    python3 -c "import site; print(site.getsitepackages()[0])" \\
        > /tmp/regular/lib/python3.11/site-packages/deps.pth   # the dependencies, no .pth run
    git archive HEAD | (mkdir -p /tmp/src && tar -x -C /tmp/src)
    python3 -m pip wheel --no-deps --no-build-isolation -w /tmp/wheel /tmp/src
    /tmp/regular/bin/python -m pip install --no-deps --ignore-installed /tmp/wheel/*.whl
    python3 benchmarks/startup.py --exe /tmp/regular/bin/bt-raider

Bytecode: an editable install run with ``PYTHONDONTWRITEBYTECODE`` set (as on our machines)
recompiles every bt_raider module at every start, which costs more than all the imports. A
regular ``pip install`` compiles them once; so does this script (``compileall`` on the package
folders, into the usual git-ignored ``__pycache__``) unless ``--no-compile``.

Side by side with an older commit (``--before DIR``): the runs alternate between the two trees so
both see the same machine load. DIR is a checkout importable as ``bt_raider`` from
``PYTHONPATH`` (``git archive`` leaves the repository's worktree list alone)::

    mkdir /tmp/before && git archive e315e05 | tar -x -C /tmp/before
    for d in perception memory planners examples; do ln -s ../$d /tmp/before/bt_raider/$d; done
    python3 benchmarks/startup.py --before /tmp/before

The other tree is this working tree: while someone edits it, a file changed since the last
compile is compiled at every start. Bytecode is refreshed before each command's runs; for
figures of one commit, time a ``git archive`` of it as DIR against another.

    python3 benchmarks/startup.py [--runs 15] [--demo-runs 5] [--scene SCENE.json]
        [--query Q] [--before DIR] [--exe BT_RAIDER ...] [--no-compile]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
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
#: Third-party packages reported when a command's process loads them.
HEAVY = ("numpy", "scipy", "unified_planning", "pyperplan", "torch", "transformers", "openai")


#: Commands run from here: ``python -c`` puts its working directory first on sys.path, and the
#: repository's own ``bt_raider`` there would shadow the tree being timed.
CWD = tempfile.gettempdir()


def _env(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(cmd: list[str], tree: Path | None, out_dir: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd``."""
    if out_dir:
        cmd = [*cmd, "--out", tempfile.mkdtemp(prefix="bt_raider_startup_")]
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(tree), cwd=CWD)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"startup: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed, _children_cpu() - cpu


def compile_trees(trees: dict[str, Path | None]) -> None:
    """Bytecode for every source folder of each tree (``compileall``: only what changed)."""
    for tree in trees.values():
        base = tree if tree is not None else ROOT
        for folder in FOLDERS:
            path = base / folder
            if path.is_dir():
                compileall.compile_dir(str(path), quiet=1)


#: Compile again before each command's runs (unless --no-compile): a file edited since the
#: last compile (someone working in the tree) would otherwise be compiled at every start.
RECOMPILE = True


def measure(
    label: str, cmd: list[str], runs: int, trees: dict[str, Path | None], out_dir: bool = False
) -> None:
    """Time ``cmd`` ``runs`` times in each tree, alternating, and print one line per tree."""
    if RECOMPILE:
        compile_trees(trees)
    for tree in trees.values():
        _time(cmd, tree, out_dir)  # warm the file cache
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():
            times[name].append(_time(cmd, tree, out_dir))
    for name, runs_ in times.items():
        wall = [w for w, _ in runs_]
        cpu = [c for _, c in runs_]
        where = f" [{name}]" if len(trees) > 1 else ""
        print(
            f"{label}{where}, {runs} runs: median {statistics.median(wall):.3f} s, "
            f"min {min(wall):.3f} s, max {max(wall):.3f} s; CPU median {statistics.median(cpu):.3f} s",
            flush=True,
        )


def interpreter_of(exe: str) -> str | None:
    """The Python a console script runs (its ``#!`` line), or None (a shim, a binary)."""
    try:
        with open(exe, "rb") as f:
            first = f.readline(400).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    if Path(words[0]).name == "env":  # "#!/usr/bin/env python3"
        return shutil.which(words[1]) if len(words) > 1 else None
    return words[0] if "python" in Path(words[0]).name else None


def install_kind(python: str, tree: Path | None = None) -> str:
    """``editable (setuptools finder)``, ``regular`` or ``source tree`` for ``python``."""
    if tree is not None:
        return "source tree on PYTHONPATH"
    code = (
        "import sys, bt_raider; "
        "print(any(m.startswith('__editable__') for m in sys.modules), bt_raider.__file__)"
    )
    out = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=_env(None), cwd=CWD
    )
    if out.returncode != 0:
        return "unknown (bt_raider not importable)"
    editable, where = out.stdout.split(maxsplit=1)
    if editable == "True":
        return "editable install (setuptools finder at every start)"
    return f"regular install ({Path(where.strip()).parent.parent})"


def modules_loaded(python: str, argv: list[str], tree: Path | None) -> tuple[list[str], int]:
    """The :data:`HEAVY` packages and the number of bt_raider modules ``bt-raider ARGV`` loads."""
    code = (
        "import contextlib, io, json, sys\n"
        "from bt_raider.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({argv!r})\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "ours = sum(1 for m in sys.modules if m.split('.')[0] == 'bt_raider')\n"
        "print(json.dumps([code, heavy, ours]))\n"
    )
    out = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=_env(tree), cwd=CWD
    )
    if out.returncode != 0:
        raise SystemExit(f"startup: bt-raider {' '.join(argv)} failed: {out.stderr[-800:]}")
    code, heavy, ours = json.loads(out.stdout.strip().splitlines()[-1])
    if code != 0:
        raise SystemExit(f"startup: bt-raider {' '.join(argv)} exited {code}")
    return heavy, ours


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="check processes to time (15)")
    parser.add_argument("--demo-runs", type=int, default=5, help="demo processes to time (5)")
    parser.add_argument("--scene", help="scene file (default: the kitchen, else the shipped one)")
    parser.add_argument("--query", default="open the fridge", help="the action checked")
    parser.add_argument("--before", type=Path, help="an older checkout to time side by side")
    parser.add_argument(
        "--exe",
        action="append",
        default=[],
        metavar="BT_RAIDER",
        help="another install's bt-raider console script to time check with (repeatable)",
    )
    parser.add_argument("--no-compile", action="store_true", help="leave bytecode as it is")
    args = parser.parse_args()
    global RECOMPILE
    RECOMPILE = not args.no_compile

    installed = Path(sys.executable).parent / "bt-raider"
    exe = str(installed) if installed.exists() else shutil.which("bt-raider")
    if exe is None:
        print("startup: bt-raider is not installed (pip install -e . first)", file=sys.stderr)
        return 2
    for other in args.exe:
        if not Path(other).is_file():
            print(f"startup: --exe {other}: no such file", file=sys.stderr)
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
        compile_trees(trees)
    note = " (set: bytecode compiled first)" if not args.no_compile else " (set)"
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print(f"PYTHONDONTWRITEBYTECODE{note}")
    print(f"scene: {scene}")
    print(f"{exe}: {install_kind(sys.executable)}")
    for other in args.exe:
        python = interpreter_of(other)
        print(f"{other}: {install_kind(python) if python else 'unknown install'}")

    pythons = [sys.executable] + [p for p in map(interpreter_of, args.exe) if p]
    for python in dict.fromkeys(pythons):
        mine = {"": None}
        measure(f"{python} -c pass", [python, "-c", "pass"], args.runs, mine)
        measure(f"{python} -S -c pass", [python, "-S", "-c", "pass"], args.runs, mine)
    measure(
        "python -c 'import numpy'", [sys.executable, "-c", "import numpy"], args.runs, {"": None}
    )
    check = ["check", "--scene", scene, args.query]
    measure(f"bt-raider check {args.query!r} ({exe})", [exe, *check], args.runs, trees)
    on_path = shutil.which("bt-raider")
    if on_path and Path(on_path).resolve() != Path(exe).resolve():
        measure(f"bt-raider check {args.query!r} ({on_path})", [on_path, *check], args.runs, trees)
    for other in args.exe:
        measure(f"bt-raider check {args.query!r} ({other})", [other, *check], args.runs, {"": None})
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
    out = tempfile.mkdtemp(prefix="bt_raider_startup_")
    for name, tree in trees.items():
        where = f" [{name}]" if len(trees) > 1 else ""
        for argv in (
            check,
            ["demo", "medicine-delivery", "--no-memory", "--out", out],
        ):
            heavy, ours = modules_loaded(sys.executable, argv, tree)
            label = " ".join(argv[:2]) if argv[0] == "demo" else "check"
            print(
                f"bt-raider {label}{where} loads {ours} bt_raider modules and "
                f"{', '.join(heavy) if heavy else 'none'} of {', '.join(HEAVY)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
