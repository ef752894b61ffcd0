"""Start-up of the command line: wall time of ``bt-raider check`` to its verdict, and what it imports.

Runs ``bt-raider check --scene SCENE "open(Fridge)"`` as a fresh process ``--runs`` times and
prints the median, minimum and maximum wall time, then the bt_raider modules loaded by building
the parser for ``check`` alone (the CLI imports only the sub-command it runs).

The scene defaults to the medicine-delivery kitchen that ships with the package, so this runs
without ``../shared``.

    python3 benchmarks/startup.py [--runs 15] [--scene SCENE.json]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from importlib import resources


def wall_times(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"startup: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    return times


def modules_for_check() -> list[str]:
    code = (
        "import sys; from bt_raider.cli import build_parser; "
        "build_parser(['check', '--scene', 's.json', 'q']); "
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('bt_raider'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="processes to time (default 15)")
    parser.add_argument("--scene", help="scene file (default: the shipped medicine kitchen)")
    args = parser.parse_args()
    exe = shutil.which("bt-raider")
    if exe is None:
        print("startup: bt-raider is not on PATH (pip install -e . first)", file=sys.stderr)
        return 2
    scene = args.scene or str(
        resources.files("bt_raider.examples.medicine_delivery") / "scene.json"
    )
    wall_times([exe, "check", "--scene", scene, "open(Fridge)"], 2)  # warm the file cache
    times = wall_times([exe, "check", "--scene", scene, "open(Fridge)"], args.runs)
    print(
        f"bt-raider check, {args.runs} runs: median {statistics.median(times):.3f} s, "
        f"min {min(times):.3f} s, max {max(times):.3f} s"
    )
    loaded = modules_for_check()
    print(f"building the parser for 'check' loads {len(loaded)} bt_raider modules:")
    print("  " + ", ".join(loaded))
    return 0


if __name__ == "__main__":
    sys.exit(main())
