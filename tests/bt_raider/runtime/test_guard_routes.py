"""Recovery on the medicine-delivery scene, with a user's robot and the user's action names.

* A recovery never sends the robot along a route the scene marks blocked: asked where the
  missing aspirin is, the person says "at the medicine counter", whose route a chair blocks.
  The verification after the answer refuses the move; before, the robot was sent there twice.
* The shown recovery code uses the user's action names: for an obstructed ``GoTo`` it says
  ``GoTo(...)`` (or the robot's ``navigate``), never ``approach``, which the robot does not have.

The robot and the behaviours are written here (plain py_trees behaviours); every tick asserts
the guard's and the child's status.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import VARS_NAMESPACE, ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import Phase, RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
SCENE_PATH = Path(__file__).resolve().parents[3] / "examples" / "medicine_delivery" / "scene.json"
MOVES = ("navigate", "move_to", "GoTo", "approach")


class CarefulRobot:
    """The user's robot: it refuses to drive along a route its map marks blocked."""

    def __init__(self) -> None:
        self.scene = json.loads(SCENE_PATH.read_text())
        self.started: list[tuple[str, list[Any]]] = []
        self.refused: list[tuple[str, list[Any]]] = []
        self._outcome: dict[int, Progress] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.started.append((action, list(args)))
        handle = len(self.started)
        blocked = self.scene.get("blocked") or {}
        if action in MOVES and blocked.get(str(args[0])):
            self.refused.append((action, list(args)))
            self._outcome[handle] = Progress(ActionState.FAILED, f"{args[0]}: the way is blocked")
        else:
            self._outcome[handle] = Progress(ActionState.SUCCEEDED, f"{action} done")
        return handle

    def poll(self, handle: Hashable) -> Progress:
        return self._outcome[handle]  # type: ignore[index]

    def cancel(self, handle: Hashable) -> None:
        self._outcome.pop(handle, None)  # type: ignore[call-overload]

    def observe(self) -> dict[str, Any]:
        return copy.deepcopy(self.scene)


class UserAction(py_trees.behaviour.Behaviour):
    """The user's own action node (it never learns about bt_raider)."""

    def __init__(self, name: str, action: str, target: str, robot: CarefulRobot) -> None:
        super().__init__(name)
        self.action, self.target, self.robot = action, target, robot

    def initialise(self) -> None:
        self.handle = self.robot.start(self.action, [self.target])

    def update(self) -> Status:
        progress = self.robot.poll(self.handle)
        self.feedback_message = progress.message
        return S if progress.state is ActionState.SUCCEEDED else F


def settle(guard: RaiderGuard) -> None:
    """Wait for the guard's (and its recovery subtree's) work in flight: not a timing test."""
    nodes: list[Any] = [guard]
    if guard.recovery_tree is not None:
        nodes += list(guard.recovery_tree.iterate())
    for node in nodes:
        pending = getattr(node, "pending", None)
        if pending is not None:
            assert pending.wait(30), f"{node.name}: its work did not finish"


def drive(guard: RaiderGuard, child: py_trees.behaviour.Behaviour, ticks: int = 4000) -> None:
    """Tick to the end, asserting the guard's and the child's status on every tick."""
    for _ in range(ticks):
        guard.tick_once()
        if guard.phase is not Phase.ACTING:
            assert child.status is I, (guard.phase, child.status)
        else:
            assert child.status in (R, S, F)
            assert guard.status is child.status
        assert guard.feedback_message
        if guard.status is not R:
            return
        settle(guard)
    raise AssertionError(f"the guard is still running: {guard.feedback_message}")


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def test_a_recovery_never_drives_along_a_route_the_scene_marks_blocked() -> None:
    robot = CarefulRobot()
    human = ScriptedHuman(["at the medicine counter"] * 6)
    child = UserAction("pick aspirin", "pick", "Aspirin", robot)
    guard = RaiderGuard(
        child,
        "pick the aspirin",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
        deadline=None,
    )

    drive(guard, child)

    assert guard.status is F and child.status is I
    assert robot.refused == []  # never sent along the blocked route
    assert all(action not in MOVES for action, _ in robot.started)
    assert "medicine_counter" in guard.feedback_message
    assert "obstructed" in guard.feedback_message or "blocked" in guard.feedback_message
    assert "where" in human.transcript_text().lower()  # the person was asked, then refused
    # The run's recovery variables went with it.
    assert not [k for k in py_trees.blackboard.Blackboard.storage if k.startswith(VARS_NAMESPACE)]


@pytest.mark.parametrize(
    ("query", "actions", "resume"),
    [
        ("GoTo(medicine_counter)", ["navigate", "grasp", "put"], "navigate('medicine_counter')"),
        ("GoTo(medicine_counter)", ["GoTo", "grasp", "put"], "GoTo('medicine_counter')"),
        ("GoTo(medicine_counter)", None, "GoTo('medicine_counter')"),
        (
            "go to the medicine counter",
            ["navigate", "grasp", "put"],
            "navigate('medicine_counter')",
        ),
        ("go to the medicine counter", {"move_to": "drive"}, "drive('medicine_counter')"),
    ],
)
def test_the_shown_recovery_code_uses_the_users_action_names(
    query: str, actions: Any, resume: str
) -> None:
    robot = CarefulRobot()

    def chair_moved(question: str, answer: str) -> None:
        robot.scene["blocked"] = {}  # the person moved the chair away

    human = ScriptedHuman(["Sure, done."], on_answer=chair_moved)
    child = UserAction("go", "GoTo", "medicine_counter", robot)
    guard = RaiderGuard(
        child,
        query,
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human, actions=actions),
        deadline=None,
    )

    drive(guard, child)

    assert guard.status is S and child.status is S
    assert guard.plan is not None
    code = guard.plan.code
    assert code.splitlines()[-1] == resume
    assert "approach" not in code
    assert robot.started == [("GoTo", ["medicine_counter"])]


def test_a_guard_name_with_dots_and_slashes_keeps_its_verdict_and_resolution() -> None:
    robot = CarefulRobot()
    child = UserAction("go home", "GoTo", "home", robot)
    guard = RaiderGuard(
        child,
        "GoTo(home)",
        SymbolicReasoner(),
        scene=robot.observe,
        name="check Go home, please. v1.2/a",
        deadline=None,
    )

    drive(guard, child)

    assert guard.status is S and child.status is S
    board = py_trees.blackboard.Blackboard
    assert guard.key == f"/bt_raider/verdicts/{guard.guard_id}"
    assert guard.guard_id.startswith("check Go home, please_ v1_2_a#")
    assert board.get(guard.key)["category"] == "none"
    assert board.get(guard.resolved_key)["args"] == ["home"]
    assert robot.started == [("GoTo", ["home"])]
