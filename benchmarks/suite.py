"""The README's second command's test run: wall time, CPU time and the ten slowest tests.

Runs ``python -m pytest --durations=10`` (the project's own options: every core) in this
checkout and prints what issue 36 asks for: the wall time, the user and system CPU of pytest and
every process it waited for, the counts of the summary line, and the ten slowest tests. On a
machine other jobs keep busy, the CPU figure moves less than the wall time; with two cores the
wall time cannot fall below about half the CPU time.

Usage::

    python3 benchmarks/suite.py             # the whole suite
    python3 benchmarks/suite.py -- tests/x  # extra pytest arguments after --
    python3 benchmarks/suite.py --log run.log  # pytest's whole output in run.log
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    parser.add_argument(
        "--log",
        type=Path,
        help="where pytest's whole output goes (default: a new file in the temp folder)",
    )
    args = parser.parse_args(argv)
    # -rfE puts one line per failure or error in the summary, so a failure is named, not lost.
    command = [sys.executable, "-m", "pytest", "-p", "no:warnings", "-rfE", "--durations=10"]
    command += args.pytest_args
    before = os.times()
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    after = os.times()
    user = after.children_user - before.children_user
    system = after.children_system - before.children_system
    # The whole output is kept: a failure's traceback is what a slow, loaded run is rerun for.
    log = args.log or Path(tempfile.mkstemp(prefix="bt-raider-suite-", suffix=".log")[1])
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    out = done.stdout.splitlines()
    summary = next((line for line in reversed(out) if re.search(r"\d+ (passed|failed)", line)), "")
    slow_at = next(
        (k for k, line in enumerate(out) if "slowest" in line and "durations" in line), None
    )
    print(f"command: {' '.join(command[1:])} (in {ROOT})")
    print(f"result:  {summary.strip('= ') or 'no summary line'} (exit {done.returncode})")
    print(f"wall:    {wall:.1f} s ({int(wall // 60)} min {wall % 60:.0f} s)")
    print(f"CPU:     {user:.1f} s user + {system:.1f} s system = {user + system:.1f} s")
    print(f"load:    {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores")
    print(f"log:     {log}")
    failed = [line for line in out if line.startswith(("FAILED ", "ERROR "))]
    if failed:
        print("failed:")
        for line in failed:
            print(f"  {line}")
    if slow_at is not None:
        print("ten slowest:")
        for line in out[slow_at + 1 : slow_at + 11]:
            print(f"  {line.strip()}")
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
