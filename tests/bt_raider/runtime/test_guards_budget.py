"""RaiderGuard under the per-tick budgets: checks sent and verdicts taken in a few per tick.

A tree of a thousand guards must not submit a thousand checks, or take in hundreds of
verdicts, in one tick (``SUBMIT_BUDGET``, ``INTAKE_BUDGET``). These tests give the guards a
budget the test opens tick by tick and assert every guard's and child's status after each tick.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.robot.worker import WindowBudget
from bt_raider.runtime import guards as guards_module
from bt_raider.runtime.guards import Phase, RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
WAIT_S = 5.0


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


class Room:
    """A budget the test opens: ``take()`` is True ``room`` more times."""

    def __init__(self, room: int = 0) -> None:
        self.room = room

    def take(self) -> bool:
        if self.room <= 0:
            return False
        self.room -= 1
        return True


@pytest.fixture
def budgets(monkeypatch: pytest.MonkeyPatch) -> tuple[Room, Room]:
    submit, intake = Room(), Room(10**6)
    monkeypatch.setattr(guards_module, "SUBMIT_BUDGET", submit)
    monkeypatch.setattr(guards_module, "INTAKE_BUDGET", intake)
    return submit, intake


class Passing:
    """Finds no issue at once; records what it checked."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        with self.lock:
            self.calls.append(str(query))
        return Verdict(Category.NONE, f"{query} can run.", action="pick")


class Child(py_trees.behaviour.Behaviour):
    """Runs for ``ticks`` ticks, then succeeds."""

    def __init__(self, name: str, ticks: int = 2) -> None:
        super().__init__(name)
        self.ticks = ticks
        self.count = 0

    def initialise(self) -> None:
        self.count = 0

    def update(self) -> Status:
        self.count += 1
        return S if self.count >= self.ticks else R


def settle(*guards: RaiderGuard) -> None:
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        if all(g.pending is None or g.pending.done() for g in guards):
            return
        time.sleep(0.001)
    raise AssertionError("checks did not finish")


def statuses(guards: list[RaiderGuard]) -> list[tuple[Status, Status]]:
    return [(g.status, g.decorated.status) for g in guards]


def test_checks_beyond_the_submit_budget_go_at_later_ticks(budgets: tuple[Room, Room]) -> None:
    submit, _ = budgets
    checker = Passing()
    guards = [RaiderGuard(Child(f"c{i}"), f"pick(Thing_{i})", checker) for i in range(5)]
    root = py_trees.composites.Parallel(
        "plan",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True),
        children=list(guards),
    )
    submit.room = 2
    root.tick_once()
    settle(*guards)
    # Every guard started its run (RUNNING, checking); two checks went, three wait for room.
    assert statuses(guards) == [(R, I)] * 5
    assert [g.phase for g in guards] == [Phase.CHECKING] * 5
    assert [g.pending is not None for g in guards] == [True, True, False, False, False]
    assert sorted(checker.calls) == ["pick(Thing_0)", "pick(Thing_1)"]
    assert all(g.feedback_message == f"checking pick(Thing_{i})" for i, g in enumerate(guards))

    root.tick_once()  # no room: the two verdicts are taken in, nothing is sent
    settle(*guards)
    assert statuses(guards) == [(R, R), (R, R), (R, I), (R, I), (R, I)]
    assert [g.phase for g in guards] == [Phase.ACTING] * 2 + [Phase.CHECKING] * 3
    assert len(checker.calls) == 2

    submit.room = 2
    root.tick_once()
    settle(*guards)
    assert statuses(guards) == [(S, S), (S, S), (R, I), (R, I), (R, I)]
    assert sorted(checker.calls)[2:] == ["pick(Thing_2)", "pick(Thing_3)"]
    assert guards[4].pending is None

    submit.room = 10
    root.tick_once()
    settle(*guards)
    assert statuses(guards) == [(S, S), (S, S), (R, R), (R, R), (R, I)]
    root.tick_once()
    settle(*guards)
    assert statuses(guards) == [(S, S), (S, S), (S, S), (S, S), (R, R)]
    root.tick_once()
    assert statuses(guards) == [(S, S)] * 5 and root.status == S
    assert sorted(checker.calls) == [f"pick(Thing_{i})" for i in range(5)]  # each checked once


def test_a_guard_stopped_before_its_check_went_never_sends_it(budgets: tuple[Room, Room]) -> None:
    submit, _ = budgets
    checker = Passing()
    child = Child("c")
    guard = RaiderGuard(child, "pick(Apple)", checker)
    guard.tick_once()
    assert (guard.status, child.status, guard.phase) == (R, I, Phase.CHECKING)
    assert guard.pending is None
    guard.stop(I)  # preempted by its parent
    assert (guard.status, child.status, guard.phase) == (I, I, Phase.IDLE)
    submit.room = 5
    time.sleep(0.05)
    assert checker.calls == []  # the stop dropped the unsent check
    guard.tick_once()  # a new run sends a new check
    assert (guard.status, child.status, guard.phase) == (R, I, Phase.CHECKING)
    settle(guard)
    assert checker.calls == ["pick(Apple)"]
    guard.tick_once()
    assert (guard.status, child.status, guard.phase) == (R, R, Phase.ACTING)


def test_verdicts_beyond_the_intake_budget_wait_for_a_later_tick(
    budgets: tuple[Room, Room],
) -> None:
    submit, intake = budgets
    submit.room, intake.room = 10, 0
    checker = Passing()
    guards = [RaiderGuard(Child(f"c{i}"), f"pick(Thing_{i})", checker) for i in range(3)]
    for g in guards:
        g.tick_once()
    settle(*guards)
    for _ in range(2):  # done, but no room to take the verdicts in: still checking
        for g in guards:
            g.tick_once()
        assert statuses(guards) == [(R, I)] * 3
        assert [g.phase for g in guards] == [Phase.CHECKING] * 3
        assert all(g.pending is not None and g.pending.done() for g in guards)
    intake.room = 2
    for g in guards:
        g.tick_once()
    assert statuses(guards) == [(R, R), (R, R), (R, I)]
    intake.room = 1
    for g in guards:
        g.tick_once()
    assert statuses(guards) == [(S, S), (S, S), (R, R)]
    assert guards[2].verdict is not None and guards[2].verdict.ok


def test_a_replaced_query_source_is_read_at_the_next_run(budgets: tuple[Room, Room]) -> None:
    submit, _ = budgets
    submit.room = 10**6
    checker = Passing()
    child = Child("c", ticks=1)
    guard = RaiderGuard(child, "pick(Apple)", checker)
    for _ in range(2):
        guard.tick_once()
        settle(guard)
    assert (guard.status, child.status) == (S, S)
    guard.query_source = "pick(Mug)"
    for _ in range(2):
        guard.tick_once()
        settle(guard)
    assert (guard.status, child.status) == (S, S)
    assert checker.calls == ["pick(Apple)", "pick(Mug)"]
    guard.query_source = "   "  # not a query: the run fails closed, saying why
    guard.tick_once()
    assert (guard.status, child.status, guard.phase) == (F, S, Phase.DONE)
    assert guard.feedback_message.startswith("cannot build the query to check: ")
    assert checker.calls == ["pick(Apple)", "pick(Mug)"]


def test_window_budget_counts_per_window_and_refuses_bad_sizes() -> None:
    budget = WindowBudget(3, window=3600.0)
    assert [budget.take() for _ in range(5)] == [True, True, True, False, False]
    budget = WindowBudget(2, window=0.01)
    assert [budget.take() for _ in range(3)] == [True, True, False]
    time.sleep(0.02)  # a new window
    assert [budget.take() for _ in range(3)] == [True, True, False]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="per_window"):
            WindowBudget(bad)  # type: ignore[arg-type]
    for bad_window in (0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="window"):
            WindowBudget(4, window=bad_window)
