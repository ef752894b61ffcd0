"""A compound instruction inside a guard: each step checked, recovered and resolved on its own.

"pick the cup and put it in the bowl" is two steps. Before, the guard recovered the sentence as
one action (a question "Where can I find the cup and put it in the bowl?", a plan
``move_to('the fridge take the egg and close it')``) and resolved it to
``args == ('the cup and put it in the bowl',)``. Now the first step with an issue is recovered
on its own, and ``resolved.steps`` holds one resolution per step. The robot and the child are
written here (plain py_trees behaviours); every tick asserts the guard's and the child's status.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import py_trees
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionBehaviour, ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.robot.retarget import ResolvedAction
from bt_raider.runtime.guards import Phase, RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741

CLEAN_CUP, DIRTY_CUP = "Cup|+00.20|+00.90|+00.50", "Cup|-00.20|+00.90|+00.50"
BOWL = "Bowl|+00.00|+00.90|+00.60"


def thing(object_id: str, x: float, z: float, **flags: Any) -> dict[str, Any]:
    return {
        "objectId": object_id,
        "objectType": object_id.split("|", 1)[0],
        "position": {"x": x, "y": 0.9, "z": z},
        "visible": True,
        **flags,
    }


def kitchen() -> dict[str, Any]:
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "robot": {"reach": 1.1, "arms": 1},
        "objects": [
            thing(CLEAN_CUP, 0.2, 0.5, pickupable=True, dirtyable=True, isDirty=False),
            thing(DIRTY_CUP, -0.2, 0.5, pickupable=True, dirtyable=True, isDirty=True),
            thing(BOWL, 0.0, 0.6, pickupable=True, receptacle=True),
        ],
        "inventoryObjects": [],
    }


class TeamRobot:
    """The team's robot: every action takes ``polls`` polls; it logs what it was asked."""

    def __init__(self, polls: int = 2) -> None:
        self.polls = polls
        self.scene = kitchen()
        self.log: list[tuple[str, list[Any]]] = []
        self._left: dict[int, int] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.log.append((action, list(args)))
        self._left[len(self.log)] = self.polls
        return len(self.log)

    def poll(self, handle: Hashable) -> Progress:
        self._left[handle] -= 1  # type: ignore[index]
        done = self._left[handle] <= 0  # type: ignore[index]
        return Progress(ActionState.SUCCEEDED if done else ActionState.RUNNING)

    def cancel(self, handle: Hashable) -> None:
        self._left.pop(handle, None)  # type: ignore[call-overload]

    def observe(self) -> dict[str, Any]:
        return self.scene


class DoAll(py_trees.behaviour.Behaviour):
    """The team's node for a whole instruction: it runs each resolved step in turn."""

    def __init__(self, robot: TeamRobot) -> None:
        super().__init__("do it")
        self.robot = robot
        self.resolved: ResolvedAction | None = None
        self.todo: list[tuple[str, list[str]]] = []

    def retarget(self, resolved: ResolvedAction | None) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        assert self.resolved is not None
        self.todo = [(str(s.action), list(s.args)) for s in self.resolved.steps]
        self.handle: Hashable = None

    def update(self) -> Status:
        if self.handle is None:
            action, args = self.todo.pop(0)
            self.handle = self.robot.start(action, args)
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return R
        self.handle = None
        if state is not ActionState.SUCCEEDED:
            return F
        return S if not self.todo else R


def drive(guard: RaiderGuard, child: py_trees.behaviour.Behaviour, ticks: int = 4000) -> None:
    """Tick to the end, asserting the guard's and the child's status on every tick."""
    for _ in range(ticks):
        guard.tick_once()
        if guard.phase is not Phase.ACTING:
            assert child.status is I, (guard.phase, child.status)
        else:
            assert child.status in (R, S, F) and guard.status is child.status
        assert guard.feedback_message
        if guard.status is not R:
            return
        for node in [guard, *(guard.recovery_tree.iterate() if guard.recovery_tree else [])]:
            pending = getattr(node, "pending", None)
            if pending is not None:
                assert pending.wait(30)
    raise AssertionError(f"still running: {guard.feedback_message}")


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def guarded(query: str, robot: TeamRobot, human: ScriptedHuman, child: Any = None) -> Any:
    child = child or DoAll(robot)
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, human)
    guard = RaiderGuard(child, query, SymbolicReasoner(), scene=robot.observe, recovery=recovery)
    return guard, child


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    which=st.sampled_from([("the clean cup", CLEAN_CUP), ("the dirty cup", DIRTY_CUP)]),
    join=st.sampled_from([" and ", ", then ", " and then ", ". Then "]),
    polls=st.integers(1, 3),
)
def test_each_step_is_recovered_and_resolved_on_its_own(
    which: tuple[str, str], join: str, polls: int
) -> None:
    py_trees.blackboard.Blackboard.clear()
    answer, cup = which
    robot = TeamRobot(polls)
    human = ScriptedHuman([answer])
    guard, child = guarded(f"pick the cup{join}put it in the bowl", robot, human)

    drive(guard, child)

    assert guard.status is S and child.status is S
    # The question is about the first step alone (no unparsed sentence reaches the person).
    question = human.transcript[0].text
    assert "bowl" not in question.lower() and "put" not in question.lower()
    assert guard.steps[0] == f"pick({cup})"  # the recovered step, resolved
    resolved = guard.resolved
    assert resolved is not None and len(resolved.steps) == 2
    first, second = resolved.steps
    assert (first.action, first.args, first.recovered) == ("pick", (cup,), True)
    assert (second.action, second.args, second.recovered) == ("place", (cup, BOWL), False)
    assert resolved.args == (cup,) and resolved.action == "pick"  # the first step's
    assert resolved.for_action("place") is second and resolved.for_action("Put") is second
    stored = py_trees.blackboard.Blackboard.get(guard.resolved_key)
    assert [s["args"] for s in stored["steps"]] == [[cup], [cup, BOWL]]
    assert robot.log == [("pick", [cup]), ("place", [cup, BOWL])]


def test_a_single_action_sees_no_change() -> None:
    robot = TeamRobot()
    child = ActionBehaviour("pick", ["cup"], robot)
    guard, _ = guarded("pick the cup", robot, ScriptedHuman(["the clean cup"]), child)

    drive(guard, child)

    assert guard.status is S and child.status is S and guard.steps == []
    assert guard.resolved is not None and guard.resolved.steps == ()
    assert "steps" not in guard.resolved.as_dict()
    assert robot.log == [("pick", [CLEAN_CUP])]


def test_an_action_behaviour_takes_its_own_step_of_a_compound() -> None:
    robot = TeamRobot()
    place = ActionBehaviour("put", ["the cup", "the bowl"], robot)
    guard, _ = guarded("pick the clean cup and put it in the bowl", robot, ScriptedHuman([]), place)

    drive(guard, place)

    assert guard.status is S and place.status is S
    assert robot.log == [("put", [CLEAN_CUP, BOWL])]  # its step's objects, not the phrases


def test_an_issue_only_the_earlier_steps_cause_fails_closed_before_anything_runs() -> None:
    robot = TeamRobot()  # one arm: the second pick finds the hand busy
    human = ScriptedHuman([])
    guard, child = guarded("pick the clean cup and pick the bowl", robot, human)

    drive(guard, child)

    assert guard.status is F and child.status is I
    assert "Step 2 of 2" in guard.feedback_message
    assert "only after the earlier steps" in guard.feedback_message
    assert robot.log == [] and human.transcript == []


def test_a_missing_object_in_a_later_step_is_asked_about_alone() -> None:
    robot = TeamRobot()
    human = ScriptedHuman(["I don't know"])
    guard, child = guarded("pick the clean cup and put it in the box", robot, human)

    drive(guard, child)

    assert guard.status is F and child.status is I
    question = human.transcript[0].text.lower()
    assert "box" in question and "cup" not in question and "put" not in question
    assert robot.log == []


class WalkingRobot:
    """The team's robot in the medicine-delivery kitchen (two arms): ``move_to`` takes it to
    0.6 m of the target; other actions are logged, and the world otherwise stays as it is."""

    def __init__(self) -> None:
        path = Path(__file__).resolve().parents[3] / "examples/medicine_delivery/scene.json"
        self.scene = json.loads(path.read_text())
        self.scene["robot"]["arms"] = 2
        self.log: list[tuple[str, list[Any]]] = []

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.log.append((action, list(args)))
        if action == "move_to":
            target = next(o for o in self.scene["objects"] if o["objectId"] == args[0])
            where, agent = target["position"], self.scene["agent"]["position"]
            dx, dz = agent["x"] - where["x"], agent["z"] - where["z"]
            norm = math.hypot(dx, dz) or 1.0
            agent.update(x=where["x"] + 0.6 * dx / norm, z=where["z"] + 0.6 * dz / norm)
        return len(self.log)

    def poll(self, handle: Hashable) -> Progress:
        return Progress(ActionState.SUCCEEDED)

    def cancel(self, handle: Hashable) -> None:
        pass

    def observe(self) -> dict[str, Any]:
        return copy.deepcopy(self.scene)


def test_open_the_fridge_take_the_egg_and_close_it() -> None:
    """The issue's own sentence: the first step is out of reach; only it is recovered."""
    robot = WalkingRobot()
    child = DoAll(robot)  # type: ignore[arg-type]
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]))
    guard = RaiderGuard(
        child,
        "open the fridge, take the egg and close it",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=recovery,
    )

    drive(guard, child)

    assert guard.status is S and child.status is S
    assert guard.plan is not None and guard.plan.code == "move_to('Fridge')\nopen('Fridge')"
    fridge, egg = "Fridge|-02.10|+00.00|+01.07", "Egg|-02.04|+00.81|+01.24"
    assert guard.resolved is not None
    assert [(s.action, s.args) for s in guard.resolved.steps] == [
        ("open", (fridge,)),
        ("pick", (egg,)),
        ("close", (fridge,)),
    ]
    assert robot.log == [
        ("move_to", [fridge]),  # the recovery of step 1
        ("open", [fridge]),  # the team's node, step by step
        ("pick", [egg]),
        ("close", [fridge]),
    ]


class SceneFreeChecker:
    """A team's checker that needs no scene and passes every instruction, as a sentence."""

    def check(self, scene: Any, query: Any) -> Any:
        from bt_raider.checking.verdict import Category, Verdict

        return Verdict(
            Category.NONE, "fine", grounding={"the cup": [CLEAN_CUP], "the bowl": [BOWL]}
        )


def test_without_a_scene_a_compound_resolves_step_by_step_or_fails_closed() -> None:
    robot = TeamRobot(polls=1)
    child = DoAll(robot)
    guard = RaiderGuard(child, "pick the cup and put the cup in the bowl", SceneFreeChecker())

    drive(guard, child)

    assert guard.status is S and child.status is S
    assert guard.resolved is not None
    assert [(s.action, s.args) for s in guard.resolved.steps] == [
        ("pick", (CLEAN_CUP,)),
        ("place", (CLEAN_CUP, BOWL)),
    ]
    assert robot.log == [("pick", [CLEAN_CUP]), ("place", [CLEAN_CUP, BOWL])]

    # "it" with no scene to check the steps on: what it is cannot be known, so nothing runs.
    robot, child = TeamRobot(polls=1), None
    child = DoAll(robot)
    guard = RaiderGuard(child, "pick the cup and put it in the bowl", SceneFreeChecker())
    drive(guard, child)
    assert guard.status is F and child.status is I
    assert "cannot tell what 'it' means" in guard.feedback_message
    assert robot.log == []
