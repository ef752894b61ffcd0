"""A guard whose query names the object by colour or by its side from the robot.

The user's own py_trees behaviour and a robot written here; the check is the real symbolic
reasoner's. The robot acts on the box the words designate, or not at all: every tick asserts
the guard's and the child's status.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.retarget import ResolvedAction
from bt_raider.runtime.guards import Phase, RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
RED, BLUE = "Box|-00.40|+00.90|+00.50", "Box|+00.40|+00.90|+00.50"


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


class BoxRobot:
    """Two boxes half a metre ahead, a red one on the robot's left and a blue one on its right;
    every action takes two polls."""

    def __init__(self) -> None:
        def box(object_id: str, x: float, colour: str) -> dict[str, Any]:
            return {
                "objectId": object_id,
                "objectType": "Box",
                "position": {"x": x, "y": 0.9, "z": 0.5},
                "pickupable": True,
                "color": colour,
            }

        self.scene = {
            "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
            "objects": [box(RED, -0.4, "red"), box(BLUE, 0.4, "blue")],
        }
        self.started: list[tuple[str, list[Any]]] = []
        self._left: dict[Hashable, int] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.started.append((action, list(args)))
        self._left[len(self.started)] = 2
        return len(self.started)

    def poll(self, handle: Hashable) -> Progress:
        self._left[handle] -= 1
        if self._left[handle] > 0:
            return Progress(ActionState.RUNNING, "reaching")
        return Progress(ActionState.SUCCEEDED, "picked")

    def cancel(self, handle: Hashable) -> None:
        self._left.pop(handle, None)

    def observe(self) -> dict[str, Any]:
        return copy.deepcopy(self.scene)


class Pick(py_trees.behaviour.Behaviour):
    """The team's pick: picks what the guard resolved (the one method bt_raider adds)."""

    def __init__(self, robot: BoxRobot) -> None:
        super().__init__("Pick")
        self.robot = robot
        self.resolved: ResolvedAction | None = None

    def retarget(self, resolved: ResolvedAction | None) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        target = self.resolved.args[0] if self.resolved else "Box"
        self.handle = self.robot.start("pick", [target])

    def update(self) -> Status:
        progress = self.robot.poll(self.handle)
        self.feedback_message = progress.message
        if progress.state is ActionState.RUNNING:
            return R
        return S if progress.state is ActionState.SUCCEEDED else F


def run(query: str, expected: list[tuple[Status, Status, Phase]]) -> tuple[BoxRobot, RaiderGuard]:
    robot = BoxRobot()
    pick = Pick(robot)
    guard = RaiderGuard(pick, query, SymbolicReasoner(), scene=robot.observe)
    for n, row in enumerate(expected, start=1):
        guard.tick_once()
        got = (guard.status, pick.status, guard.phase)
        assert got == row, f"tick {n}: expected {row}, got {got} ({guard.feedback_message})"
        while guard.pending is not None and not guard.pending.done():
            time.sleep(0.001)  # the check runs on a worker: wait for it, not for a clock
    return robot, guard


PASSES = [(R, I, Phase.CHECKING), (R, R, Phase.ACTING), (S, S, Phase.ACTING)]


@pytest.mark.parametrize(
    ("query", "box"),
    [
        ("pick the red box", RED),
        ("pick the blue box", BLUE),
        ("pick the box on the left", RED),
        ("pick the box on the right", BLUE),
        ("pick the right box", BLUE),
        ("pick the red box on the left", RED),
    ],
)
def test_the_users_pick_acts_on_the_box_the_words_designate(query, box):
    robot, guard = run(query, PASSES)
    assert robot.started == [("pick", [box])]
    assert guard.resolved is not None and guard.resolved.args == (box,)


@pytest.mark.parametrize(
    ("query", "category", "said"),
    [
        ("pick the green box", "not_present", "the Box_2 is red and the Box_1 is blue"),
        ("pick the red box on the right", "not_present", "the Box_2 is on the robot's left"),
        ("pick the box in front of you", "ambiguity", "at a similar angle"),
    ],
)
def test_words_that_designate_no_box_or_two_never_move_the_robot(query, category, said):
    robot, guard = run(query, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert robot.started == []
    assert guard.verdict is not None and guard.verdict.category.value == category
    assert said in guard.verdict.explanation and said in guard.feedback_message
