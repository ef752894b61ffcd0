"""Each class of reply, through a guarded "pick the cup" in a user's own tree (README drop-in).

Two cups in reach: a blue clean one on the robot's right and a red dirty one on its left. The
child is a plain py_trees behaviour and the robot is written here; the check, recovery and the
reader are the real ones; a :class:`ScriptedHuman` replies. Every tick asserts the guard's and
the child's status; each test asserts the cup picked, or that nothing was picked.
"""

from __future__ import annotations

import re
import time
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
CLEAN = "Cup|+00.20|+00.90|+00.50"  # blue, on the robot's right
DIRTY = "Cup|-00.20|+00.90|+00.50"  # red, on the robot's left


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def _cup(object_id: str, x: float, dirty: bool, colour: str) -> dict[str, Any]:
    return {
        "objectId": object_id,
        "objectType": "Cup",
        "position": {"x": x, "y": 0.9, "z": 0.5},
        "pickupable": True,
        "dirtyable": True,
        "isDirty": dirty,
        "color": colour,
    }


SCENE = {
    "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
    "objects": [_cup(CLEAN, 0.2, False, "blue"), _cup(DIRTY, -0.2, True, "red")],
}


class Robot:
    """The user's robot: each action takes two polls; it records what it started."""

    def __init__(self) -> None:
        self.started: list[tuple[str, list[Any]]] = []
        self._left: dict[Hashable, int] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.started.append((action, list(args)))
        self._left[len(self.started)] = 2
        return len(self.started)

    def poll(self, handle: Hashable) -> Progress:
        self._left[handle] -= 1
        done = self._left[handle] == 0
        return Progress(ActionState.SUCCEEDED if done else ActionState.RUNNING)

    def cancel(self, handle: Hashable) -> None:
        self._left.pop(handle, None)

    def observe(self) -> dict[str, Any]:
        return SCENE


class Pick(py_trees.behaviour.Behaviour):
    """The user's own pick node; ``retarget`` is what the guard calls."""

    def __init__(self, robot: Robot) -> None:
        super().__init__("Pick cup")
        self.robot, self.resolved, self.handle = robot, None, 0

    def retarget(self, resolved: Any) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        target = self.resolved.args[0] if self.resolved else "Cup"
        self.handle = self.robot.start("pick", [target])  # type: ignore[assignment]

    def update(self) -> Status:
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return R
        return S if state is ActionState.SUCCEEDED else F


def _settle(root: py_trees.behaviour.Behaviour, guard: RaiderGuard) -> None:
    """Wait (bounded) for the background check / question started by the last tick."""
    end = time.monotonic() + 5.0
    while time.monotonic() < end:
        nodes = list(root.iterate())
        if guard.recovery_tree is not None:
            nodes += list(guard.recovery_tree.iterate())
        if all(getattr(n, "pending", None) is None or n.pending.done() for n in nodes):
            return
        time.sleep(0.001)
    raise AssertionError("background work did not finish")


def run(replies: list[str]) -> tuple[list[tuple[Status, Status]], Robot, ScriptedHuman]:
    """Tick the guarded pick to its end; (guard, child) status after every tick."""
    robot, human = Robot(), ScriptedHuman(replies)
    pick = Pick(robot)
    guard = RaiderGuard(
        pick,
        "pick the cup",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
    )
    root = py_trees.composites.Sequence("serve tea", memory=True, children=[guard])
    ticks: list[tuple[Status, Status]] = []
    for _ in range(200):
        root.tick_once()
        ticks.append((guard.status, pick.status))
        if guard.status in (S, F):
            break
        _settle(root, guard)
    return ticks, robot, human


def assert_picked(ticks: list[tuple[Status, Status]], robot: Robot, cup: str) -> None:
    # The child is untouched until the check passes, then runs two polls and succeeds.
    assert ticks[-2:] == [(R, R), (S, S)], ticks
    assert all(t == (R, I) for t in ticks[:-2]), ticks
    assert robot.started == [("pick", [cup])]


def assert_nothing_picked(ticks: list[tuple[Status, Status]], robot: Robot) -> None:
    assert ticks[-1] == (F, I), ticks
    assert all(t == (R, I) for t in ticks[:-1]), ticks
    assert robot.started == []


def asked(human: ScriptedHuman) -> list[str]:
    return [e.text for e in human.transcript if e.kind == "ask"]


# --------------------------------------------------------------------------- questions


def test_the_question_names_the_cups_as_a_person_tells_them_apart() -> None:
    ticks, robot, human = run(["the blue cup"])
    assert_picked(ticks, robot, CLEAN)
    question = asked(human)[0]
    assert question == "Which cup should I pick up: the blue cup or the red cup?"
    assert not re.search(r"Cup_\d|\|", question)  # no internal label


# --------------------------------------------------------------------------- reply classes


@pytest.mark.parametrize(
    ("reply", "cup"),
    [
        ("not the clean one", DIRTY),  # picked the clean cup before
        ("not the dirty one", CLEAN),  # picked the dirty cup before
        ("not the one on the left", CLEAN),
        ("The blue one, sorry, I meant the other one.", DIRTY),  # the blue one before
        ("the red one, no, the blue one", CLEAN),
        ("the first one", CLEAN),  # the question listed the blue cup first
        ("option 2", DIRTY),
        ("the clean one, not the dirty one", CLEAN),
        ("the dirty cup", DIRTY),
        ("the one on the right", CLEAN),
    ],
)
def test_a_reply_that_designates_one_cup_picks_that_cup(reply: str, cup: str) -> None:
    ticks, robot, human = run([reply])
    assert_picked(ticks, robot, cup)
    assert len(asked(human)) == 1


@pytest.mark.parametrize(
    "unclear",
    [
        "option 0",  # int("0") - 1 picked the last cup before
        "the 0th one",
        "option 3",
        "the clean one or the dirty one",  # picked the clean cup before
        "both",
        "either one",
        "the other one",  # other than what?
        "the second to last one",
        "the banana",  # another object
        "just pick it up",  # an action
        "why?",
        "Robert'); DROP TABLE objects;--",
        "",
    ],
)
def test_an_unclear_reply_is_asked_again_and_never_guessed(unclear: str) -> None:
    ticks, robot, human = run([unclear, "the red one"])
    assert_picked(ticks, robot, DIRTY)
    questions = asked(human)
    assert len(questions) == 2 and questions[0] == questions[1]
    said = [e.text for e in human.transcript if e.kind == "say"]
    assert len(said) == 1 and said[0].startswith(("Sorry", "I am asking", "I need"))


@pytest.mark.parametrize(
    "replies",
    [
        ["option 0"] * 3,
        ["the clean one or the dirty one"] * 3,
        ["The green one, sorry, I meant the other one."] * 3,
    ],
)
def test_a_reply_that_stays_unclear_ends_in_a_defined_failure(replies: list[str]) -> None:
    ticks, robot, human = run(replies)
    assert_nothing_picked(ticks, robot)
    assert 3 <= len(asked(human))


@pytest.mark.parametrize("reply", ["I don't know", "No. Do it yourself.", "leave it"])
def test_dont_know_and_refusals_end_without_a_pick(reply: str) -> None:
    ticks, robot, human = run([reply])
    assert_nothing_picked(ticks, robot)
    assert len(asked(human)) == 1
