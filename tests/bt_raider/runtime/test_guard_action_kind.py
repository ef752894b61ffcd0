"""A guard never runs its node on words that ask for another kind of action (issue 32, P10).

"The cup, please." asks the robot to hand the cup over. The explorer put those words on a guard
whose node picks: the recovery picked the cup and went to the person, the handover's re-check
passed, and the guard released the pick node, which picked with the hand full. The guard now
carries the kind of action it checked (``guard.designation.kinds``) and refuses a node that
says it does another kind, at the first verdict, before any recovery moves the robot.

Plain py_trees behaviours and a robot written here (nothing of ActionBehaviour or SimWorld);
every test asserts the guard's and its node's status on every tick.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import UsageError
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.designation import GuardIntent, action_kind, outside
from bt_raider.robot.human import ScriptedHuman
from bt_raider.robot.retarget import ResolvedAction
from bt_raider.runtime.guards import Phase, RaiderGuard
from tests.bt_raider.runtime.intent_world import Hostile, OneArmRobot, settle

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
CUP, APPLE, ALEX = "Cup|1", "Apple|1", "alex"


def _thing(object_id: str, kind: str, x: float, z: float) -> dict[str, Any]:
    position = {"x": x, "y": 0.9, "z": z}
    return {"objectId": object_id, "objectType": kind, "position": position, "pickupable": True}


def room(arms: int = 1) -> dict[str, Any]:
    """A cup and an apple in reach, and Alex facing the robot 0.4 m ahead, hands free."""
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": [_thing(CUP, "Cup", 0.2, 0.4), _thing(APPLE, "Apple", -0.2, 0.4)],
        "inventoryObjects": [],
        "robot": {"arms": arms},
        "humans": [
            {
                "id": ALEX,
                "name": "Alex",
                "position": {"x": 0.0, "y": 0.0, "z": 0.4},
                "rotation": {"y": 180.0},
                "looking_at_robot": True,
                "hands_free": True,
                "user": True,
            }
        ],
    }


class TeamRobot(OneArmRobot):
    """The team's robot (:class:`OneArmRobot`: two polls an action, a pick fills a hand,
    refused when all are full), which also goes to just before an object and hands over what
    it holds."""

    def __init__(self, scene: dict[str, Any]) -> None:
        super().__init__(scene, arms=scene["robot"]["arms"])

    def poll(self, handle: Hashable) -> Progress:
        progress = super().poll(handle)
        action, args = self.log[int(str(handle)) - 1]
        if progress.state is not ActionState.SUCCEEDED:
            return progress
        by_id = {o["objectId"]: o for o in self.scene["objects"]}
        if action == "move_to" and args[0] in by_id:
            where = by_id[args[0]]["position"]
            self.scene["agent"]["position"] = {"x": where["x"], "y": 0.9, "z": where["z"] - 0.3}
        elif action == "handover":
            held = self.scene["inventoryObjects"]
            if not any(i["objectId"] == args[0] for i in held):
                self.refused.append(f"handover({args[0]})")
                return Progress(ActionState.FAILED, "it holds no such thing")
            self.scene["inventoryObjects"] = [i for i in held if i["objectId"] != args[0]]
            self.scene["objects"] = [o for o in self.scene["objects"] if o["objectId"] != args[0]]
        return progress


class Node(py_trees.behaviour.Behaviour):
    """The team's node: ``robot.start(verb, args)``, its own arguments or what its guard
    resolved; ``action`` says what it does (None: it says nothing)."""

    def __init__(self, verb: str, args: list[str], robot: TeamRobot, *, says: bool = True):
        super().__init__(f"my {verb} {args[0]}")
        self.verb, self.args, self.robot = verb, args, robot
        if says:
            self.action = verb
        self.resolved: Any = None
        self.handle: Hashable | None = None

    def retarget(self, resolved: Any) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        args = list(self.resolved.args) if self.resolved is not None else self.args
        self.handle = self.robot.start(self.verb, args[: len(self.args)])

    def update(self) -> Status:
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return R
        return S if state is ActionState.SUCCEEDED else F


def guard_over(
    node: Node, robot: TeamRobot, words: str, planner: Any = None, **kw: Any
) -> RaiderGuard:
    recovery = Recovery(planner or SymbolicRecoveryPlanner(), robot, ScriptedHuman([]))
    return RaiderGuard(
        node, words, SymbolicReasoner(), scene=robot.observe, recovery=recovery, **kw
    )


def ticks(root: py_trees.behaviour.Behaviour, nodes: list[Any], most: int = 200) -> list[Any]:
    """Tick ``root`` to its end; per tick, the status of each of ``nodes`` (and a guard's
    phase right after its status)."""
    rows = []
    for _ in range(most):
        root.tick_once()
        row: list[Any] = []
        for node in nodes:
            row.append(node.status)
            if isinstance(node, RaiderGuard):
                row.append(node.phase)
        rows.append(tuple(row))
        if root.status is not R:
            return rows
        settle(root)
    raise AssertionError(f"{root.name} did not finish: {root.feedback_message}")


def assert_refused_at_once(rows: list[Any]) -> None:
    """The node never ran (INVALID on every tick); the guard checked, then failed closed
    without planning or recovering anything."""
    assert all(child is I for _, _, child in rows), rows
    assert all(status is R and phase is Phase.CHECKING for status, phase, _ in rows[:-1]), rows
    assert rows[-1] == (F, Phase.DONE, I), rows


def assert_ran_once(rows: list[Any], guard: RaiderGuard) -> None:
    """The node stayed INVALID until its guard released it, then ran (RUNNING) to SUCCESS;
    the guard RUNNING until then."""
    assert rows[-1] == (S, Phase.ACTING, S), (rows, guard.feedback_message)
    first = next(i for i, (_, phase, _) in enumerate(rows) if phase is Phase.ACTING)
    assert all(child is I for _, _, child in rows[:first]), rows
    assert all(status is R for status, _, _ in rows[:-1]), rows
    assert all(child is R for _, _, child in rows[first:-1]), rows


@pytest.mark.parametrize("says", [True, False], ids=["node says pick", "guard told pick"])
def test_a_pick_node_under_words_for_a_handover_never_runs(says: bool) -> None:
    py_trees.blackboard.Blackboard.clear()
    robot = TeamRobot(room())
    pick = Node("pick", ["Cup"], robot, says=says)
    guard = guard_over(pick, robot, "The cup, please.", node_action=None if says else "pick")
    rows = ticks(guard, [guard, pick])
    assert_refused_at_once(rows)
    assert robot.log == []  # refused before any recovery moved the robot
    assert guard.designation is not None and guard.designation.kinds == ("handover",)
    assert guard.refusal == guard.feedback_message
    message = guard.feedback_message
    assert "'The cup, please.' ask for a handover" in message
    assert "my pick Cup does a pick" in message and "give the guard words for a pick" in message
    assert guard.resolved is None


def test_the_same_words_over_a_handover_node_hand_the_cup_over_once() -> None:
    # The words a person uses: the recovery picks the cup (the handover needs it in hand),
    # the node hands it over; one pick, none with a full hand.
    py_trees.blackboard.Blackboard.clear()
    robot = TeamRobot(room())
    give = Node("handover", ["Cup", "Alex"], robot)
    guard = guard_over(give, robot, "The cup, please.")
    rows = ticks(guard, [guard, give])
    assert_ran_once(rows, guard)
    assert robot.picks() == [CUP] and robot.refused == []
    assert robot.log[-1] == ("handover", [CUP, ALEX])
    assert guard.designation is not None and guard.designation.kinds == ("handover",)


def test_a_node_that_says_nothing_is_judged_by_the_words_alone() -> None:
    # A node that does not say what it does, under words for its own action, runs as ever.
    py_trees.blackboard.Blackboard.clear()
    robot = TeamRobot(room())
    pick = Node("pick", ["Cup"], robot, says=False)
    guard = guard_over(pick, robot, "pick the cup")
    rows = ticks(guard, [guard, pick])
    assert_ran_once(rows, guard)
    assert robot.log == [("pick", [CUP])]


def test_in_a_parallel_the_refused_branch_never_runs_and_stops_the_other() -> None:
    # Seed 401's second finding: the handover words over a pick node in a py_trees Parallel,
    # beside a guarded pick of the apple (two hands).
    py_trees.blackboard.Blackboard.clear()
    robot = TeamRobot(room(arms=2))
    cup = Node("pick", ["Cup"], robot)
    apple = Node("pick", ["Apple"], robot)
    first = guard_over(cup, robot, "The cup, please.", name="fetch")
    second = guard_over(apple, robot, "pick the apple", name="fetch")
    both = py_trees.composites.Parallel(
        "both at once",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(),
        children=[first, second],
    )
    rows = ticks(both, [both, first, cup, second, apple])
    for row in rows:
        assert row[3] is I, rows  # the cup's node: never ticked
        if row[1] is R:
            assert row[0] is R and row[2] is Phase.CHECKING, rows
    end = rows[-1]
    assert end[0] is F and end[1:4] == (F, Phase.DONE, I), rows
    # The parallel stopped the apple's branch wherever it got (INVALID), or it had finished.
    assert end[4] in (I, S) and end[6] in (I, S), rows
    assert CUP not in robot.picks() and robot.refused == []
    assert all(args[0] != CUP for _, args in robot.log), robot.log
    assert first.refusal is not None and "ask for a handover" in first.refusal


@pytest.mark.parametrize("verify", [True, False])
def test_a_recovery_that_already_picked_never_lets_the_node_pick_again(verify: bool) -> None:
    # "pick the cup" out of reach, a plan that picks it itself and then only speaks. Verified,
    # it is refused (the verifier carries the hand: the node's pick could not run after it);
    # unverified, it runs, the re-check finds the cup in hand, and the node never picks again.
    py_trees.blackboard.Blackboard.clear()
    robot = TeamRobot(room())
    robot.scene["objects"][0]["position"]["z"] = 2.5
    pick = Node("pick", ["Cup"], robot)
    code = f"move_to({CUP!r})\npick({CUP!r})\nsay('Here it is.')"
    recovery = Recovery(Hostile(code), robot, ScriptedHuman([]), verify=verify)
    guard = RaiderGuard(
        pick,
        "pick the cup",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=recovery,
        max_attempts=1,
    )
    rows = ticks(guard, [guard, pick])
    assert all(child is I for _, _, child in rows), rows
    assert all(status is R for status, _, _ in rows[:-1]), rows
    assert rows[-1][:2] == (F, Phase.DONE), rows
    assert robot.picks() == ([] if verify else [CUP]) and robot.refused == [], robot.log
    if verify:
        assert "caused by the plan" in guard.feedback_message, guard.feedback_message
    else:
        assert "already holding the Cup" in guard.feedback_message, guard.feedback_message


def test_the_release_lies_outside_words_for_another_kind_of_action() -> None:
    # Defence in depth: whatever a recovery resumes with, a pick is no release of a handover.
    grounding = {"The cup": [CUP], "me": [ALEX]}
    intent = GuardIntent.read("The cup, please.", [("handover", ("The cup", "me"), grounding)])
    verdict = Verdict(Category.NONE, "fine", action="pick")
    released = ResolvedAction("pick", (CUP,), {}, {}, verdict)
    problems = outside(intent, released)
    assert problems and "is a pick, and the instruction asks for a handover" in problems[0]
    same = ResolvedAction("Give", ("The cup", "me"), {}, {}, verdict)
    assert outside(intent, same) == []  # the robot's name for a handover is a handover


@pytest.mark.parametrize(
    ("name", "kind"),
    [("Grab", "pick"), ("Give", "handover"), ("move_to", "approach"), ("GoTo", "approach")],
)
def test_action_kinds_by_any_name(name: str, kind: str) -> None:
    assert action_kind(name) == kind
    assert action_kind("frobnicate") is None and action_kind(None) is None
    assert action_kind("grasp_it", {"grasp_it": "pick"}.get) == "pick"


def test_a_guard_told_an_action_nobody_knows_is_a_usage_error() -> None:
    robot = TeamRobot(room())
    with pytest.raises(UsageError, match="node_action must name a kind of action"):
        guard_over(Node("pick", ["Cup"], robot), robot, "pick the cup", node_action="dance")
