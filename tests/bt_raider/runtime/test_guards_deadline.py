"""RaiderGuard's check deadline: hung checks fail closed and never starve the other guards.

The trees are plain py_trees (a Parallel of guards around the test's own behaviours); the
hung checker blocks on an event the test releases at the end and ignores its cancel event,
like a check stuck in a call that cannot be interrupted.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import py_trees
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.robot.worker import WorkerPool
from bt_raider.runtime.guards import DEFAULT_DEADLINE, RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
WAIT_S = 20.0  # "does not hang" bound, generous for a loaded machine


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


class Hung:
    """A check that never returns until ``release`` is set (it ignores ``cancel``)."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release
        self.entered = 0

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        self.entered += 1
        self.release.wait(60)
        return Verdict(Category.NONE, "too late to matter", action="pick")


class Quick:
    """A check that takes ``seconds`` and finds no issue."""

    def __init__(self, seconds: float = 0.02) -> None:
        self.seconds = seconds

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        time.sleep(self.seconds)
        return Verdict(Category.NONE, f"{query} can run", action="pick")


class Step(py_trees.behaviour.Behaviour):
    """The user's own action: succeeds at its first tick, counting its ticks."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.ticks = 0

    def update(self) -> Status:
        self.ticks += 1
        return S


def tree_of(guards: list[RaiderGuard]) -> py_trees.composites.Parallel:
    """All guards side by side; a failing guard does not stop the others."""
    return py_trees.composites.Parallel(
        "plan",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True),
        children=[py_trees.decorators.FailureIsSuccess(f"go on {g.name}", g) for g in guards],
    )


def test_hung_checks_fail_closed_at_their_deadline_and_the_other_guards_go_on() -> None:
    pool = WorkerPool(8, name="test_guards_hung")  # the shared pool's size
    release = threading.Event()
    hung_checker = Hung(release)
    hung = [
        RaiderGuard(Step(f"hung {i}"), "pick(Apple)", hung_checker, name=f"hung {i}",
                    executor=pool, deadline=0.5)
        for i in range(10)
    ]  # fmt: skip
    others = [
        RaiderGuard(Step(f"step {i}"), "pick(Apple)", Quick(), name=f"other {i}",
                    executor=pool, deadline=None)
        for i in range(40)
    ]  # fmt: skip
    root = tree_of(hung + others)
    rows: list[list[tuple[Status, Status]]] = []
    try:
        end = time.monotonic() + WAIT_S
        while root.status != S and time.monotonic() < end:
            root.tick_once()
            rows.append([(g.status, g.decorated.status) for g in hung])
            time.sleep(0.01)
        assert root.status == S, [g.feedback_message for g in others if g.status != S]
        # Every other guard got its verdict and ran its step, though all 8 workers hung.
        assert all(g.status == S and g.decorated.ticks == 1 for g in others)
        assert hung_checker.entered == 10
    finally:
        release.set()
    for g in hung:
        assert g.status == F and g.decorated.ticks == 0
        assert "deadline of 0.5 s" in g.feedback_message and "failing closed" in g.feedback_message
        verdict = py_trees.blackboard.Blackboard.get(g.key)
        assert verdict["category"] == "unknown" and "deadline" in verdict["explanation"]
    # Tick by tick, a hung guard runs until it fails; its child never leaves INVALID.
    for column in zip(*rows, strict=True):
        statuses = [guard for guard, _ in column]
        assert {child for _, child in column} == {I}
        first_failure = statuses.index(F)
        assert set(statuses[:first_failure]) == {R} and set(statuses[first_failure:]) == {F}
    assert pool.threads - pool.covered <= 8  # extra threads only stood in for hung ones
    pool.shutdown(wait=False)


def test_past_the_thread_cap_new_guards_fail_closed_at_their_deadline() -> None:
    # Every thread the pool may have is held by a check that ignores its cancel event: a new
    # guard's check can never start. Its deadline counts from the submission, so the guard
    # ends FAILURE with an unknown verdict saying why, instead of RUNNING for ever.
    pool = WorkerPool(2, max_extra=1, slow_after=0.05, cancel_grace=0.05, name="test_guards_cap")
    release = threading.Event()
    hung_checker = Hung(release)
    stuck = [
        RaiderGuard(Step(f"stuck {i}"), "pick(Apple)", hung_checker, name=f"stuck {i}",
                    executor=pool, deadline=0.2)
        for i in range(4)
    ]  # fmt: skip
    late = [
        RaiderGuard(Step(f"late {i}"), "pick(Apple)", Quick(), name=f"late {i}",
                    executor=pool, deadline=0.3)
        for i in range(3)
    ]  # fmt: skip
    try:
        first = tree_of(stuck)
        end = time.monotonic() + WAIT_S
        while first.status != S and time.monotonic() < end:
            first.tick_once()
            time.sleep(0.01)
        assert all(g.status == F for g in stuck) and hung_checker.entered == 3  # the cap: 3
        second = tree_of(late)
        second.tick_once()
        assert [(g.status, g.decorated.status) for g in late] == [(R, I)] * 3
        t0 = time.monotonic()
        while second.status != S and time.monotonic() < end:
            second.tick_once()
            assert all(g.decorated.status == I for g in late)
            time.sleep(0.01)
        took = time.monotonic() - t0
    finally:
        release.set()
    assert took < 0.3 + 2.0  # at their deadline, with a loaded machine's slack
    for g in late:
        assert (g.status, g.decorated.status) == (F, I) and g.decorated.ticks == 0
        assert "could not start within its deadline of 0.3 s" in g.feedback_message
        verdict = py_trees.blackboard.Blackboard.get(g.key)
        assert verdict["category"] == "unknown"
    pool.shutdown(wait=False)


def test_a_verdict_that_comes_after_the_deadline_is_not_trusted() -> None:
    pool = WorkerPool(1, name="test_guards_late")
    child = Step("pick")
    guard = RaiderGuard(child, "pick(Apple)", Quick(0.3), executor=pool, deadline=0.1)
    guard.tick_once()
    assert (guard.status, child.status) == (R, I)
    pending = guard.pending
    assert pending is not None and pending.wait(WAIT_S)  # finished, but 0.2 s late
    assert pending.result().verdict.category is Category.NONE
    guard.tick_once()
    assert (guard.status, child.status) == (F, I) and child.ticks == 0
    assert "deadline of 0.1 s" in guard.feedback_message
    pool.shutdown()


def test_no_deadline_waits_for_a_slow_check() -> None:
    pool = WorkerPool(1, name="test_guards_none")
    child = Step("pick")
    guard = RaiderGuard(child, "pick(Apple)", Quick(0.3), executor=pool, deadline=None)
    guard.tick_once()
    assert guard.pending is not None and guard.pending.wait(WAIT_S)
    guard.tick_once()
    assert (guard.status, child.status) == (S, S)
    pool.shutdown()


def test_the_default_deadline_is_set() -> None:
    guard = RaiderGuard(Step("pick"), "pick(Apple)", Quick())
    assert guard.deadline == DEFAULT_DEADLINE == 30.0


@given(
    st.one_of(
        st.booleans(),
        st.text(max_size=3),
        st.integers(-3, 3),
        st.floats(allow_nan=True, allow_infinity=True),
    )
)
@settings(max_examples=60, deadline=None)
def test_deadline_must_be_finite_seconds_above_zero(deadline: Any) -> None:
    ok = (
        not isinstance(deadline, (bool, str))
        and deadline == deadline  # not NaN
        and 0 < deadline < float("inf")
    )
    if ok:
        assert (
            RaiderGuard(Step("s"), "pick(Apple)", Quick(), deadline=deadline).deadline == deadline
        )
    else:
        with pytest.raises(ValueError, match="deadline"):
            RaiderGuard(Step("s"), "pick(Apple)", Quick(), deadline=deadline)
