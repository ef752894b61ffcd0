"""Tick cost of RaiderGuard: ticks never block on slow checks, and cached verdicts are cheap.

A tree of 100 guarded actions under a ``Parallel`` is ticked while every guard waits on a
checker that takes 2 s (each check sleeps on its cancel event, as a model call would block on
I/O). The checks run on a bounded :class:`~bt_raider.robot.worker.WorkerPool` (``--workers``,
at most 100 threads), so with ``--actions 1000`` they queue, as they would on a robot. Printed:

* every tick while checks are pending, the first included (it starts every guard): the
  distribution of its wall time (the longest: target <= 10 ms) and of the main thread's CPU
  time in it (what the tick itself cost, whatever else the machine was doing);
* once every verdict is in and cached, the time per tick of the guarded tree against the same
  tree without guards, both with every action running (target ratio: <= 1.2).

The checks' threads wake up together (checks of one length, sent together) and each wants
the GIL for a moment; with Python's default switch interval (5 ms) a thread waiting that long
makes the ticking thread hand the GIL over mid-tick, and get it back after the others. The
benchmark ticks with ``sys.setswitchinterval(0.02)`` (``--switch-interval``; 0 keeps Python's
default), as the process ticking a tree at 100 Hz may: a tick (a few ms) then runs without
being interrupted, and a check waits up to 20 ms longer for the GIL (nothing next to a model
call of seconds). Once the tree is built it calls ``gc.freeze()`` (``--no-gc-freeze`` to
skip), as a robot would after its setup: the objects made at setup (a thousand guards and
their trees) leave the collector's generations, so a full collection, which any thread may
start while holding the GIL, no longer walks them all (without it, one collection in a run
held the GIL for 46-206 ms on a loaded machine).

Run: ``python3 benchmarks/ticks.py`` (``--help`` for sizes).
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import threading
import time
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.robot.actions import ActionBehaviour, ActionState, Progress
from bt_raider.robot.worker import WorkerPool
from bt_raider.runtime.guards import Phase, RaiderGuard


class SlowChecker:
    """Takes ``seconds`` per check (cancellable), then finds no issue."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        (cancel or threading.Event()).wait(self.seconds)
        return Verdict(Category.NONE, f"{query} can run.", action="pick")


class BusyRobot:
    """A robot whose actions keep running (a long navigation, a slow arm)."""

    _running = Progress(ActionState.RUNNING, "moving")

    def __init__(self) -> None:
        self.count = 0

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.count += 1
        return self.count

    def poll(self, handle: Hashable) -> Progress:
        return self._running

    def cancel(self, handle: Hashable) -> None:
        pass

    def observe(self) -> None:
        return None


def parallel(children: list[py_trees.behaviour.Behaviour]) -> py_trees.composites.Parallel:
    return py_trees.composites.Parallel(
        "plan",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=False),
        children=children,
    )


def timed_tick(root: py_trees.behaviour.Behaviour) -> float:
    start = time.perf_counter()
    root.tick_once()
    return time.perf_counter() - start


def cpu_timed_tick(root: py_trees.behaviour.Behaviour) -> tuple[float, float]:
    """Wall and main-thread CPU seconds of one tick."""
    cpu, start = time.thread_time(), time.perf_counter()
    root.tick_once()
    return time.perf_counter() - start, time.thread_time() - cpu


def percentile(values: Sequence[float], share: float) -> float:
    """The value ``share`` of the way up the sorted values (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def spread(values: Sequence[float]) -> str:
    """Median, p95, p99 and max of seconds, in ms."""
    return (
        f"median {statistics.median(values) * 1e3:.2f}, p95 {percentile(values, 0.95) * 1e3:.2f}, "
        f"p99 {percentile(values, 0.99) * 1e3:.2f}, max {max(values) * 1e3:.2f} ms"
    )


def per_tick(roots: list[py_trees.behaviour.Behaviour], ticks: int, repeats: int) -> list[float]:
    """Best-of-``repeats`` mean seconds per tick of each root (timeit style).

    The roots take turns in every repeat, so a burst of load on the machine hits them alike,
    and the minimum discards repeats that were slowed down by other processes.
    """
    best = [float("inf")] * len(roots)
    for _ in range(repeats):
        for i, root in enumerate(roots):
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                for _ in range(ticks):
                    root.tick_once()
                best[i] = min(best[i], (time.perf_counter() - start) / ticks)
            finally:
                gc.enable()
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=100, help="guarded actions (100)")
    parser.add_argument("--check-s", type=float, default=2.0, help="seconds per check (2.0)")
    parser.add_argument("--hz", type=float, default=100.0, help="tick rate while pending (100)")
    parser.add_argument("--ticks", type=int, default=50, help="ticks per timing run (50)")
    parser.add_argument("--repeats", type=int, default=300, help="timing runs, best kept (300)")
    parser.add_argument(
        "--workers", type=int, default=None, help="check threads (min(actions, 100))"
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=0.02,
        help="sys.setswitchinterval seconds while ticking (0.02; 0: Python's default)",
    )
    parser.add_argument(
        "--no-gc-freeze",
        dest="gc_freeze",
        action="store_false",
        help="do not gc.freeze() the objects made at setup before ticking",
    )
    args = parser.parse_args(argv)
    workers = args.workers or min(args.actions, 100)
    if args.switch_interval > 0:
        sys.setswitchinterval(args.switch_interval)
    switch = sys.getswitchinterval()

    robot = BusyRobot()
    executor = WorkerPool(workers, name="bench")
    executor.warm_up()  # as a robot would at setup, not inside the first tick
    checker = SlowChecker(args.check_s)
    guards = [
        RaiderGuard(
            ActionBehaviour("pick", [f"Object_{i}"], robot),
            f"pick(Object_{i})",
            checker,
            name=f"guard {i}",
            executor=executor,
            deadline=None,  # with --actions 1000 checks queue for longer than the default
        )
        for i in range(args.actions)
    ]
    guarded = parallel(list(guards))
    if args.gc_freeze:
        gc.collect()
        gc.freeze()

    # 1. While checks are pending: every tick must return at once.
    pending_ticks: list[tuple[float, float]] = []
    start = time.perf_counter()
    limit = 10 * args.check_s * -(-args.actions // workers) + 30
    while True:
        pending_before = any(g.phase in (Phase.IDLE, Phase.CHECKING) for g in guards)
        duration, cpu = cpu_timed_tick(guarded)
        if pending_before:
            pending_ticks.append((duration, cpu))
        if all(g.phase is Phase.ACTING for g in guards):
            break
        if time.perf_counter() - start > limit:
            raise SystemExit("checks did not finish")
        time.sleep(max(0.0, 1.0 / args.hz - duration))
    wall = time.perf_counter() - start
    assert guarded.status == Status.RUNNING

    # 2. Verdicts cached, every action running: guarded vs unguarded tree.
    plain = parallel([ActionBehaviour("pick", [f"Object_{i}"], robot) for i in range(args.actions)])
    plain.tick_once()
    guarded_s, plain_s = per_tick([guarded, plain], args.ticks, args.repeats)
    executor.shutdown(wait=True)

    index = max(range(len(pending_ticks)), key=lambda i: pending_ticks[i][0])
    longest, longest_cpu = pending_ticks[index]
    first, first_cpu = pending_ticks[0]
    print(
        f"guarded actions: {args.actions}, check time: {args.check_s:g} s, "
        f"tick rate: {args.hz:g} Hz, check threads: {workers}, "
        f"GIL switch interval: {switch * 1e3:g} ms, gc.freeze() after setup: "
        f"{'yes' if args.gc_freeze else 'no'}"
    )
    print(
        f"pending: {len(pending_ticks)} ticks over {wall:.2f} s (every one counted, the first "
        f"too); max tick {longest * 1e3:.3f} ms (target <= 10 ms; tick {index}: main-thread CPU "
        f"{longest_cpu * 1e3:.3f} ms); first tick {first * 1e3:.2f} ms "
        f"(CPU {first_cpu * 1e3:.2f} ms)"
    )
    print(f"  wall: {spread([d for d, _ in pending_ticks])}")
    print(f"  main-thread CPU: {spread([c for _, c in pending_ticks])}")
    print(
        f"cached: guarded {guarded_s * 1e3:.3f} ms/tick, unguarded {plain_s * 1e3:.3f} ms/tick, "
        f"ratio {guarded_s / plain_s:.2f} (target <= 1.2)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
