"""worker: checks blocked from the first tick do not starve the quick ones on a cold pool."""

from __future__ import annotations

import threading
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider.robot.worker import Pending, WorkerPool, submit


def blocked(release: threading.Event, started: list[str], name: str) -> Any:
    """A check that waits on ``release`` and ignores its cancel event (a call that hangs)."""

    def job(*, cancel: threading.Event) -> str:
        started.append(name)
        release.wait(60)
        return name

    return job


def quick(x: int, *, cancel: threading.Event) -> int:
    return x


def test_quick_jobs_behind_jobs_blocked_on_every_worker_of_a_cold_pool_finish():
    # No job has finished when every worker is taken: before, nothing counted as late, and
    # the quick jobs waited for the blocked ones (their deadline, 30 s in the field).
    pool = WorkerPool(2, slow_after=0.05, name="test_cold")
    release, started = threading.Event(), []
    try:
        stuck = [submit(blocked(release, started, f"b{i}"), executor=pool) for i in range(2)]
        rest = [submit(quick, i, executor=pool) for i in range(20)]
        assert all(p.wait(30) for p in rest), pool
        assert [p.result() for p in rest] == list(range(20))
        # They finished while the blocked ones still ran, on stand-ins for the held threads.
        assert not any(p.done() for p in stuck)
        assert sorted(started) == ["b0", "b1"] and 1 <= pool.covered <= 2
        assert 3 <= pool.threads <= 2 + pool.covered  # a stand-in each, if jobs were left
    finally:
        release.set()
    assert all(p.wait(10) for p in stuck)
    pool.shutdown()


class Check(py_trees.behaviour.Behaviour):
    """A node that submits its work at its first tick and polls it (never blocks a tick)."""

    def __init__(self, name: str, work: Any, pool: WorkerPool) -> None:
        super().__init__(name)
        self.work, self.pool = work, pool
        self.pending: Pending[Any] | None = None

    def initialise(self) -> None:
        self.pending = submit(self.work, executor=self.pool)

    def update(self) -> Status:
        assert self.pending is not None
        if not self.pending.done():
            self.feedback_message = "checking"
            return Status.RUNNING
        self.feedback_message = f"done: {self.pending.result()}"
        return Status.SUCCESS


def test_a_tree_of_quick_checks_goes_on_while_blocked_checks_hold_every_thread():
    pool = WorkerPool(2, slow_after=0.05, name="test_cold_tree")
    release, started = threading.Event(), []
    blocked_nodes = [Check(f"b{i}", blocked(release, started, f"b{i}"), pool) for i in range(2)]
    quick_nodes = [
        Check(f"q{i}", lambda *, cancel, i=i: quick(i, cancel=cancel), pool) for i in range(12)
    ]
    root = py_trees.composites.Parallel(
        "all",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True),
        children=[*blocked_nodes, *quick_nodes],  # the blocked ones submit first
    )
    finished_order: list[str] = []
    try:
        for _ in range(3000):  # ticks, not seconds: each waits for a job to finish at most
            root.tick_once()
            for node in quick_nodes:
                if node.status is Status.SUCCESS and node.name not in finished_order:
                    finished_order.append(node.name)
            # Every tick: the blocked checks run on, the root waits for them.
            assert all(n.status is Status.RUNNING for n in blocked_nodes)
            assert root.status is Status.RUNNING
            if len(finished_order) == len(quick_nodes):
                break
            pending = [n.pending for n in quick_nodes if n.pending and not n.pending.done()]
            if pending:
                pending[0].wait(0.05)
        assert sorted(finished_order) == sorted(n.name for n in quick_nodes)
        assert all(n.feedback_message == f"done: {n.name[1:]}" for n in quick_nodes)
        assert all(n.feedback_message == "checking" for n in blocked_nodes)
    finally:
        release.set()
    for node in blocked_nodes:
        assert node.pending is not None and node.pending.wait(10)
    root.tick_once()
    assert root.status is Status.SUCCESS
    pool.shutdown()
