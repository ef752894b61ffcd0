"""Planning bounds that bound: ``bt-raider plan --timeout S`` against problems whose reading,
grounding or search outgrows S, and planning under a hard ``ulimit -v``.

Every case runs the real command in a subprocess; the benchmark samples the process tree's
memory (the command and every process below it: the planning child, Fast Downward) every
50 ms and timestamps each stderr line. Rows:

(a) a 5-ary predicate over 12 / 16 / 20 objects (one true fact among up to 3.2 million
    groundings; ``--timeout 3``): wall time and peak RSS of the whole tree. Before, UP's writer
    enumerated every grounding in the parent: 12 / 37 / 102 s and 1.44 GB outside the cap.
(b) visit-all on a 12 x 12 grid, every cell a goal (the size of IPC 2011's first satisficing
    instance, ``problem12-full``; written here), with ``--timeout 5`` and ``60`` and each
    engine: when the first progress line came, and the wall time.
(c) a problem with 200,000 objects (``--timeout 5``): reading it is the long part.
(d) hard ``ulimit -v``: a plan and the medicine demo within 3,000,000 KiB, and a limit too
    small to plan in (100,000 KiB): one line, exit 2.

Targets: wall time <= the limit + 1 s (the interpreter's start-up counts), 0 tracebacks, 0 hangs
(a run still going at the limit + 30 s is killed and counted). Run:
``python3 benchmarks/reliability_planning.py`` (``--quick``: fewer cases). ``run(args)`` returns
the rows, for ``benchmarks/reliability.py``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bt_raider.planners.engines import descendants, installed_engines

ROOT = Path(__file__).resolve().parent.parent
TWO_ROOMS = ROOT / "tests" / "data" / "pddl" / "two_rooms"
#: Seconds past the limit after which a run counts as hung and is killed.
HANG = 30.0

FIVE_DOMAIN = """(define (domain five)
 (:requirements :strips :typing)
 (:types thing)
 (:predicates (link ?a ?b ?c ?d ?e - thing) (at ?a - thing) (done))
 (:action go :parameters (?a ?b - thing) :precondition (at ?a)
  :effect (and (at ?b) (not (at ?a))))
 (:action finish :parameters (?a - thing) :precondition (at ?a) :effect (done)))
"""

VISIT_ALL_DOMAIN = """(define (domain grid-visit-all)
 (:requirements :typing)
 (:types place - object)
 (:predicates (connected ?x ?y - place) (at-robot ?x - place) (visited ?x - place))
 (:action move :parameters (?curpos ?nextpos - place)
  :precondition (and (at-robot ?curpos) (connected ?curpos ?nextpos))
  :effect (and (at-robot ?nextpos) (not (at-robot ?curpos)) (visited ?nextpos))))
"""


def five_problem(objects: int) -> str:
    """One true fact of a 5-ary predicate among ``objects ** 5`` groundings."""
    names = " ".join(f"o{i}" for i in range(objects))
    return (
        f"(define (problem five-{objects}) (:domain five) (:objects {names} - thing)"
        f" (:init (at o0) (link o0 o1 o2 o3 o4)) (:goal (and (done) (at o{objects - 1}))))"
    )


def visit_all_problem(n: int) -> str:
    """An ``n`` x ``n`` grid, the robot in its middle, every cell to visit (IPC's "full")."""
    cell = [[f"loc-x{x}-y{y}" for y in range(n)] for x in range(n)]
    links = []
    for x in range(n):
        for y in range(n):
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= x + dx < n and 0 <= y + dy < n:
                    links.append(f"(connected {cell[x][y]} {cell[x + dx][y + dy]})")
    start = cell[n // 2][n // 2 - 1]
    places = " ".join(c for row in cell for c in row)
    goals = " ".join(f"(visited {c})" for row in cell for c in row)
    return (
        f"(define (problem grid-{n}) (:domain grid-visit-all) (:objects {places} - place)"
        f" (:init (at-robot {start}) (visited {start}) {' '.join(links)})"
        f" (:goal (and {goals})))"
    )


# ---------------------------------------------------------------------------- one run
@dataclass
class Run:
    """One command's outcome."""

    code: int | None
    wall: float
    peak_rss: int  # bytes, the whole process tree
    lines: list[tuple[float, str]] = field(default_factory=list)  # (seconds, stderr line)
    stdout: str = ""

    @property
    def hung(self) -> bool:
        return self.code is None

    @property
    def traceback(self) -> bool:
        return any("Traceback" in line for _, line in self.lines)

    @property
    def first_line(self) -> float | None:
        return self.lines[0][0] if self.lines else None


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def measure(command: list[str], limit: float, *, ulimit_kib: int | None = None) -> Run:
    """Run ``command`` (under ``ulimit -v`` if given), sampling its tree's RSS every 50 ms."""
    if ulimit_kib is not None:
        command = ["bash", "-c", f"ulimit -v {ulimit_kib} && exec {shlex.join(command)}"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    lines: list[tuple[float, str]] = []
    out: list[str] = []

    def read_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.perf_counter() - start, line.rstrip("\n")))

    def read_out() -> None:
        assert proc.stdout is not None
        out.append(proc.stdout.read())

    readers = [threading.Thread(target=f, daemon=True) for f in (read_err, read_out)]
    for reader in readers:
        reader.start()
    peak = 0
    code: int | None = None
    while True:
        code = proc.poll()
        if code is not None:
            break
        peak = max(peak, sum(_rss(p) for p in [proc.pid, *descendants(proc.pid)]))
        if time.perf_counter() - start > limit + HANG:
            for pid in [*descendants(proc.pid), proc.pid]:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            proc.wait()
            code = None
            break
        time.sleep(0.05)
    wall = time.perf_counter() - start
    for reader in readers:
        reader.join(timeout=5)
    return Run(code, wall, peak, lines, "".join(out))


def plan_command(domain: Path, problem: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "bt_raider.cli", "plan", str(domain), str(problem), *extra]


# ---------------------------------------------------------------------------- rows
def _row(case: str, metric: str, value: str, target: str, ok: bool) -> dict[str, Any]:
    # The case leads the metric: reliability.py's table shows the metric alone.
    metric = f"{case}: {metric}"
    return {"case": case, "metric": metric, "value": value, "target": target, "ok": ok}


def _bounded(run: Run, limit: float) -> bool:
    return not run.hung and not run.traceback and run.wall <= limit + 1.0


def _outcome(run: Run) -> str:
    if run.hung:
        return "HUNG"
    last = run.lines[-1][1] if run.lines else ""
    if run.code == 0:
        return "plan found"
    return "exit 2: " + last.split("error: ", 1)[-1][:60] if run.code == 2 else f"exit {run.code}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer cases (a smoke run)")
    return p


def run(args: argparse.Namespace | None = None) -> list[dict[str, Any]]:
    """Every case as rows: ``{"case", "metric", "value", "target", "ok"}``."""
    quick = bool(getattr(args, "quick", False))
    rows: list[dict[str, Any]] = []
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        five = folder / "five.pddl"
        five.write_text(FIVE_DOMAIN)
        # (a) the 5-ary predicate
        for objects in (12,) if quick else (12, 16, 20):
            problem = folder / f"five{objects}.pddl"
            problem.write_text(five_problem(objects))
            r = measure(plan_command(five, problem, "--timeout", "3"), 3)
            runs.append(r)
            rows.append(
                _row(
                    f"5-ary predicate, {objects} objects, --timeout 3",
                    "wall (s) / peak RSS of the tree (MB) / outcome",
                    f"{r.wall:.2f} / {r.peak_rss / 1e6:.0f} / {_outcome(r)}",
                    "<= 4 s",
                    _bounded(r, 3),
                )
            )
            print(f"  {rows[-1]['metric']}: {rows[-1]['value']}", flush=True)
        # (b) visit-all 12 x 12
        domain, problem = folder / "visitall.pddl", folder / "grid12.pddl"
        domain.write_text(VISIT_ALL_DOMAIN)
        problem.write_text(visit_all_problem(12))
        limits = (5.0,) if quick else (5.0, 60.0)
        for engine in installed_engines():
            for limit in limits:
                extra = ["--engine", engine, "--timeout", f"{limit:g}"]
                r = measure(plan_command(domain, problem, *extra), limit)
                runs.append(r)
                first = "-" if r.first_line is None else f"{r.first_line:.2f}"
                said_early = r.first_line is not None and r.first_line <= 2.0
                rows.append(
                    _row(
                        f"visit-all 12x12 (144 goals), {engine}, --timeout {limit:g}",
                        "first progress line (s) / wall (s) / outcome",
                        f"{first} / {r.wall:.2f} / {_outcome(r)}",
                        f"first <= 2 s (or done by then), wall <= {limit + 1:g} s",
                        _bounded(r, limit) and (said_early or r.wall <= 2.0),
                    )
                )
                print(f"  {rows[-1]['metric']}: {rows[-1]['value']}", flush=True)
        # (c) 200,000 objects
        huge = folder / "huge.pddl"
        huge.write_text(five_problem(200_000))
        r = measure(plan_command(five, huge, "--timeout", "5"), 5)
        runs.append(r)
        rows.append(
            _row(
                "200,000 objects, --timeout 5",
                "wall (s) / peak RSS of the tree (MB) / outcome",
                f"{r.wall:.2f} / {r.peak_rss / 1e6:.0f} / {_outcome(r)}",
                "<= 6 s",
                _bounded(r, 5),
            )
        )
        print(f"  {rows[-1]['metric']}: {rows[-1]['value']}", flush=True)
    # (d) hard ulimit -v
    gripper = plan_command(TWO_ROOMS / "domain.pddl", TWO_ROOMS / "problem.pddl", "--run")
    r = measure(gripper, 60, ulimit_kib=3_000_000)
    runs.append(r)
    ok = r.code == 0 and "goal reached: yes" in r.stdout and not r.traceback
    rows.append(
        _row("ulimit -v 3000000: bt-raider plan --run", "exit / wall (s)",
             f"{r.code} / {r.wall:.2f}", "exit 0, goal reached", ok)
    )  # fmt: skip
    print(f"  {rows[-1]['metric']}: {rows[-1]['value']}", flush=True)
    r = measure(gripper, 60, ulimit_kib=100_000)
    runs.append(r)
    ok = r.code == 2 and len(r.lines) == 1 and "too small for planning" in r.lines[0][1]
    rows.append(
        _row("ulimit -v 100000: bt-raider plan", "exit / stderr lines / message",
             f"{r.code} / {len(r.lines)} / {r.lines[-1][1][23:80] if r.lines else ''}",
             "exit 2, one line", ok)
    )  # fmt: skip
    print(f"  {rows[-1]['metric']}: {rows[-1]['value']}", flush=True)
    if not quick:
        demo = [sys.executable, "-m", "bt_raider.cli", "demo", "medicine-delivery"]
        r = measure(demo, 240, ulimit_kib=3_000_000)
        runs.append(r)
        rows.append(
            _row("ulimit -v 3000000: bt-raider demo medicine-delivery", "exit / wall (s)",
                 f"{r.code} / {r.wall:.2f}", "exit 0", r.code == 0 and not r.traceback)
        )  # fmt: skip
        print(f"  {rows[-1]['metric']}: {rows[-1]['value']}", flush=True)
    tracebacks = sum(r.traceback for r in runs)
    hangs = sum(r.hung for r in runs)
    rows.append(
        _row(f"all {len(runs)} runs", "tracebacks / hangs", f"{tracebacks} / {hangs}", "0 / 0",
             tracebacks == hangs == 0)
    )  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    rows = run(parser().parse_args(argv))
    for r in rows:
        target = f"  (target {r['target']})" if r["target"] else ""
        flag = "" if r["ok"] else "  MISSED"
        print(f"{r['metric']}\n  {r['value']}{target}{flag}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
