"""RaiderGuard dropped into someone else's tree: their own py_trees behaviours, their own robot.

Nothing of ``bt_raider.robot.actions``' behaviours or the simulator is used here: the
behaviours below are plain ``py_trees.behaviour.Behaviour`` subclasses a team would already
have, the robot is a toy written here (its actions take several polls, it keeps its scene as
an AI2-THOR metadata dict), and the checks are the real symbolic reasoner's. Every tick
asserts the guard's and the child's status.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.errors import SceneError
from bt_raider.perception.scene import Scene
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.robot.retarget import ResolvedAction, Retargetable, guard_named, resolved_for
from bt_raider.runtime.guards import Phase, RaiderGuard, guard_tree

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
WAIT_S = 5.0

CLEAN_CUP = "Cup|+00.20|+00.90|+00.50"
DIRTY_CUP = "Cup|-00.20|+00.90|+00.50"
COUNTER = "CounterTop|+00.00|+00.85|+00.50"


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def kitchen() -> dict[str, Any]:
    """An AI2-THOR metadata dict: a counter in reach with a clean and a dirty cup on it."""

    def cup(object_id: str, x: float, dirty: bool) -> dict[str, Any]:
        return {
            "objectId": object_id,
            "objectType": "Cup",
            "position": {"x": x, "y": 0.9, "z": 0.5},
            "visible": True,
            "pickupable": True,
            "dirtyable": True,
            "isDirty": dirty,
            "parentReceptacles": [COUNTER],
        }

    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": [
            cup(CLEAN_CUP, 0.2, False),
            cup(DIRTY_CUP, -0.2, True),
            {
                "objectId": COUNTER,
                "objectType": "CounterTop",
                "position": {"x": 0.0, "y": 0.85, "z": 0.5},
                "visible": True,
                "receptacle": True,
                "receptacleObjectIds": [CLEAN_CUP, DIRTY_CUP],
            },
        ],
        "inventoryObjects": [],
    }


class ToyRobot:
    """The team's robot: every action takes ``polls`` polls; it keeps its scene as a dict.

    It speaks bt_raider's Robot protocol (start/poll/cancel/observe) so recovery subtrees can
    drive it too; the team's own behaviours below call the same methods.
    """

    def __init__(self, polls: int = 2) -> None:
        self.polls = polls
        self.scene = kitchen()
        self.started: list[tuple[str, list[Any]]] = []
        self.done: list[tuple[str, list[Any]]] = []  # finished actions, names read as objectIds
        self.cancelled: list[Hashable] = []
        self._left: dict[Hashable, int] = {}
        self.observed_on: list[str] = []

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.started.append((action, list(args)))
        handle = len(self.started)
        self._left[handle] = self.polls
        return handle

    def poll(self, handle: Hashable) -> Progress:
        self._left[handle] -= 1
        if self._left[handle] > 0:
            return Progress(ActionState.RUNNING, "moving")
        action, args = self.started[handle - 1]  # type: ignore[operator]
        by_id = {o["objectId"]: o for o in self.scene["objects"]}
        names = Scene.from_dict(copy.deepcopy(self.scene))
        args = [names.resolve(a).id if names.has(a) else a for a in args]  # a name or an id
        self.done.append((action, args))
        if action == "pick":
            if args[0] not in by_id:
                return Progress(ActionState.FAILED, f"no object {args[0]!r} here")
            item = by_id[args[0]]
            item.update(isPickedUp=True, parentReceptacles=None)
            self.scene["inventoryObjects"] = [
                {"objectId": item["objectId"], "objectType": item["objectType"]}
            ]
        elif action == "place":
            where = args[1] if len(args) > 1 else COUNTER  # put down: on the counter
            if args[0] not in by_id or where not in by_id:
                return Progress(ActionState.FAILED, f"cannot place {args[0]!r} on {where!r}")
            by_id[args[0]].update(isPickedUp=False, parentReceptacles=[where])
            self.scene["inventoryObjects"] = []
        return Progress(ActionState.SUCCEEDED, f"{action} done")

    def cancel(self, handle: Hashable) -> None:
        self.cancelled.append(handle)

    def observe(self) -> dict[str, Any]:
        self.observed_on.append(threading.current_thread().name)
        return copy.deepcopy(self.scene)


class RobotAction(py_trees.behaviour.Behaviour):
    """The team's base behaviour: start on the robot in initialise, poll in update."""

    action = ""

    def __init__(self, name: str, robot: ToyRobot, *targets: str) -> None:
        super().__init__(name)
        self.robot = robot
        self.targets = list(targets)

    def args(self) -> list[str]:
        return list(self.targets)

    def initialise(self) -> None:
        self.handle = self.robot.start(self.action, self.args())

    def update(self) -> Status:
        progress = self.robot.poll(self.handle)
        self.feedback_message = progress.message
        if progress.state is ActionState.RUNNING:
            return R
        return S if progress.state is ActionState.SUCCEEDED else F


class Navigate(RobotAction):
    action = "navigate"


class Pick(RobotAction):
    """Implements the retarget protocol: the one method, nothing else of bt_raider."""

    action = "pick"

    def __init__(self, name: str, robot: ToyRobot, *targets: str) -> None:
        super().__init__(name, robot, *targets)
        self.resolved: ResolvedAction | None = None
        self.retargets: list[ResolvedAction | None] = []

    def retarget(self, resolved: ResolvedAction | None) -> None:
        self.retargets.append(resolved)
        self.resolved = resolved

    def args(self) -> list[str]:
        return list(self.resolved.args) if self.resolved else list(self.targets)


class Place(RobotAction):
    """Implements nothing: reads what its guard resolved from the blackboard."""

    action = "place"

    def __init__(self, name: str, robot: ToyRobot, *targets: str, guard_name: str) -> None:
        super().__init__(name, robot, *targets)
        self.guard_name = guard_name  # its guard is made later: found by name when it acts

    @property
    def key(self) -> str:
        return str(guard_named(self.guard_name, self).resolved_key)

    def args(self) -> list[str]:
        resolved = resolved_for(self.guard_name, self)
        return list(resolved["args"]) if resolved is not None else self.targets


def settle(root: py_trees.behaviour.Behaviour, timeout: float = WAIT_S) -> None:
    """Wait until no guard (nor its recovery subtree) has work in flight."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        nodes = [n for n in root.iterate()]
        for guard in [n for n in nodes if isinstance(n, RaiderGuard)]:
            nodes += list(guard.recovery_tree.iterate()) if guard.recovery_tree else []
        if all(getattr(n, "pending", None) is None or n.pending.done() for n in nodes):
            return
        time.sleep(0.001)
    raise AssertionError("background work did not finish")


def drive(
    guard: RaiderGuard,
    child: py_trees.behaviour.Behaviour,
    expected: list[tuple[Status, Status, Phase]],
) -> None:
    """Tick once per row, asserting (guard status, child status, phase) after each tick."""
    for n, row in enumerate(expected, start=1):
        guard.tick_once()
        got = (guard.status, child.status, guard.phase)
        assert got == row, f"tick {n}: expected {row}, got {got} ({guard.feedback_message})"
        settle(guard)


# ---------------------------------------------------------------------- the protocol


def test_the_users_pick_acts_on_the_cup_the_person_chose() -> None:
    robot = ToyRobot(polls=2)
    human = ScriptedHuman(["the clean cup"])
    pick = Pick("Pick cup", robot, "Cup")
    guard = RaiderGuard(
        pick,
        "pick the cup",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
    )
    assert isinstance(pick, Retargetable)
    drive(
        guard,
        pick,
        [
            (R, I, Phase.CHECKING),  # check submitted
            (R, I, Phase.PLANNING),  # two cups: ambiguity, recovery code requested
            (R, I, Phase.RECOVERING),  # the question is asked
            (R, I, Phase.CHECKING),  # "the clean cup": re-check pick(the clean cup)
            (R, R, Phase.ACTING),  # no issue: the user's Pick starts, retargeted
            (S, S, Phase.ACTING),
        ],
    )
    assert "Which cup should I pick up: the clean cup or the dirty cup?" in human.transcript_text()
    assert robot.started == [("pick", [CLEAN_CUP])]  # not "Cup", not the dirty one
    assert robot.scene["inventoryObjects"] == [{"objectId": CLEAN_CUP, "objectType": "Cup"}]
    resolved = pick.resolved
    assert resolved is not None and resolved is guard.resolved
    assert resolved.args == (CLEAN_CUP,) and resolved.recovered
    # The re-checked query names the person's choice (their words, or the object they meant).
    assert resolved.action == "pick" and resolved.query != "pick the cup"
    assert list(resolved.grounding.values()) == [[CLEAN_CUP]] and resolved.verdict.ok
    stored = py_trees.blackboard.Blackboard.get(guard.resolved_key)
    assert stored["args"] == [CLEAN_CUP] and stored["recovered"] is True
    # The next run: the child is told to act on its own arguments again, then re-resolved.
    guard.tick_once()
    assert (guard.status, pick.status, guard.phase) == (R, S, Phase.CHECKING)
    assert pick.retargets[-1] is None and pick.resolved is None and guard.resolved is None
    assert not py_trees.blackboard.Blackboard.exists(guard.resolved_key)


def test_a_passing_check_tells_the_child_the_object_its_argument_grounded_to() -> None:
    robot = ToyRobot(polls=1)
    pick = Pick("Pick cup", robot, "the clean cup")
    guard = RaiderGuard(pick, "pick the clean cup", SymbolicReasoner(), scene=robot.observe)
    drive(guard, pick, [(R, I, Phase.CHECKING), (S, S, Phase.ACTING)])
    assert robot.started == [("pick", [CLEAN_CUP])]
    assert pick.retargets == [guard.resolved]
    assert guard.resolved is not None and not guard.resolved.recovered
    assert guard.resolved.phrases == ("the clean cup",)
    assert robot.observed_on and robot.observed_on[0] != threading.current_thread().name


def test_a_child_that_implements_nothing_reads_the_blackboard() -> None:
    robot = ToyRobot(polls=1)
    robot.scene["inventoryObjects"] = [{"objectId": CLEAN_CUP, "objectType": "Cup"}]
    place = Place("Place cup", robot, "Cup_1", "CounterTop", guard_name="place it")
    guard = RaiderGuard(
        place, "place(Cup_1, CounterTop)", SymbolicReasoner(), scene=robot.observe, name="place it"
    )
    assert not isinstance(place, Retargetable)
    drive(guard, place, [(R, I, Phase.CHECKING), (S, S, Phase.ACTING)])
    assert robot.started == [("place", [CLEAN_CUP, COUNTER])]
    assert py_trees.blackboard.Blackboard.get(guard.resolved_key)["grounding"] == {
        "Cup_1": [CLEAN_CUP],
        "CounterTop": [COUNTER],
    }


def test_pddl_bindings_resolve_to_object_ids() -> None:
    robot = ToyRobot(polls=1)
    pick = Pick("Pick cup", robot, "cup1")
    query = Query(
        "(pick-up tiago cup1 counter)", bindings={"r": "tiago", "o": "Cup_1", "l": "CounterTop"}
    )
    guard = RaiderGuard(pick, query, SymbolicReasoner(), scene=robot.observe)
    drive(guard, pick, [(R, I, Phase.CHECKING), (S, S, Phase.ACTING)])
    assert guard.resolved is not None
    assert guard.resolved.bindings["o"] == CLEAN_CUP  # Cup_1 is the clean one (display order)
    assert guard.resolved.bindings["r"] == "tiago"  # not an object: as given
    assert robot.started == [("pick", [CLEAN_CUP])]


def test_a_retarget_that_raises_fails_closed_and_the_child_never_runs() -> None:
    class Broken(Pick):
        def retarget(self, resolved: ResolvedAction | None) -> None:
            raise ValueError("no such gripper")

    robot = ToyRobot()
    child = Broken("Pick cup", robot, "the clean cup")
    guard = RaiderGuard(child, "pick the clean cup", SymbolicReasoner(), scene=robot.observe)
    drive(guard, child, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert guard.feedback_message == (
        f"Pick cup.retarget({CLEAN_CUP}) raised ValueError: no such gripper"
    )
    assert robot.started == []


def test_a_reset_that_raises_fails_the_next_run_closed_once() -> None:
    class Sticky(Pick):
        def retarget(self, resolved: ResolvedAction | None) -> None:
            if resolved is None:
                raise RuntimeError("cannot forget")
            super().retarget(resolved)

    robot = ToyRobot(polls=1)
    child = Sticky("Pick cup", robot, "the clean cup")
    guard = RaiderGuard(child, "pick the clean cup", SymbolicReasoner(), scene=kitchen())
    drive(
        guard,
        child,
        [
            (R, I, Phase.CHECKING),
            (S, S, Phase.ACTING),
            (F, S, Phase.DONE),  # the next run cannot reset the child: it never starts
        ],
    )
    assert guard.feedback_message == "Pick cup.retarget(None) raised RuntimeError: cannot forget"
    drive(guard, child, [(R, S, Phase.CHECKING), (S, S, Phase.ACTING)])  # the next starts afresh
    assert robot.started == [("pick", [CLEAN_CUP])] * 2


# ---------------------------------------------------------------------- scene=


def test_scene_as_a_dict_and_as_a_callable_returning_a_dict() -> None:
    other = ToyRobot(polls=1)
    fixed = RaiderGuard(
        Pick("Pick A", other, "Cup"), "pick the dirty cup", SymbolicReasoner(), scene=kitchen()
    )
    assert isinstance(fixed.scene, Scene)  # validated and converted when given
    drive(fixed, fixed.decorated, [(R, I, Phase.CHECKING), (S, S, Phase.ACTING)])
    assert other.started == [("pick", [DIRTY_CUP])]
    robot = ToyRobot(polls=1)
    live = RaiderGuard(
        Pick("Pick B", robot, "Cup"), "pick the clean cup", SymbolicReasoner(), scene=robot.observe
    )
    drive(live, live.decorated, [(R, I, Phase.CHECKING), (S, S, Phase.ACTING)])
    assert robot.started == [("pick", [CLEAN_CUP])]
    # The callable is read at every check: the robot now holds the clean cup.
    again = RaiderGuard(
        Pick("Pick C", robot, "Cup"), "pick the dirty cup", SymbolicReasoner(), scene=robot.observe
    )
    drive(again, again.decorated, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert "hold" in again.feedback_message.lower()


def test_a_bad_scene_dict_is_refused_with_the_field_named() -> None:
    bad = kitchen()
    del bad["objects"][0]["objectType"]
    with pytest.raises(SceneError, match=r"objects\[0\]\.objectType"):
        RaiderGuard(Pick("Pick", ToyRobot(), "Cup"), "pick(Cup)", SymbolicReasoner(), scene=bad)
    # From a callable it is found on the worker: the guard fails closed, saying why.
    child = Pick("Pick", ToyRobot(), "Cup")
    guard = RaiderGuard(child, "pick(Cup)", SymbolicReasoner(), scene=lambda: bad)
    drive(guard, child, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert "SceneError" in guard.feedback_message
    assert "objects[0].objectType" in guard.feedback_message


def test_what_the_robot_holds_in_a_dict_scene_reaches_the_recovery() -> None:
    robot = ToyRobot(polls=1)
    robot.scene["inventoryObjects"] = [{"objectId": CLEAN_CUP, "objectType": "Cup"}]
    robot.scene["objects"][0].update(isPickedUp=True, parentReceptacles=None)
    pick = Pick("Pick cup", robot, "Cup")
    guard = RaiderGuard(
        pick,
        "pick the dirty cup",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([])),
    )
    drive(
        guard,
        pick,
        [
            (R, I, Phase.CHECKING),
            (R, I, Phase.PLANNING),  # the hand holds the clean cup
            (R, I, Phase.CHECKING),  # the recovery put it down (every action one poll)
            (S, S, Phase.ACTING),
        ],
    )
    assert guard.plan is not None and guard.plan.request.holding == ["Cup_1"]
    assert ("place", [CLEAN_CUP]) in robot.done  # put down first
    assert robot.started[-1] == ("pick", [DIRTY_CUP])  # then the user's Pick, retargeted
    assert robot.scene["inventoryObjects"] == [{"objectId": DIRTY_CUP, "objectType": "Cup"}]


# ---------------------------------------------------------------------- guard_tree


def users_tree(robot: ToyRobot) -> tuple[py_trees.behaviour.Behaviour, dict[str, Any]]:
    nodes = {
        "go": Navigate("Go to counter", robot, "counter"),
        "mug": Pick("Pick mug", robot, "Mug"),
        "cup": Pick("Pick cup", robot, "the dirty cup"),
        "place": Place(
            "Put cup back", robot, "the dirty cup", "CounterTop", guard_name="Guard Put cup back"
        ),
    }
    nodes["choose"] = py_trees.composites.Selector(
        "A mug, else a cup", memory=True, children=[nodes["mug"], nodes["cup"]]
    )
    nodes["in time"] = py_trees.decorators.Timeout("In time", nodes["place"], duration=30.0)
    root = py_trees.composites.Sequence(
        "Tidy up", memory=True, children=[nodes["go"], nodes["choose"], nodes["in time"]]
    )
    return root, nodes


QUERIES = {
    "Pick mug": "pick(Mug)",
    "Pick cup": "pick the dirty cup",
    "Put cup back": "put the dirty cup on the counter",
}


def test_guard_tree_in_a_sequence_a_selector_and_under_a_decorator() -> None:
    robot = ToyRobot(polls=1)
    root, nodes = users_tree(robot)
    out = guard_tree(
        root, SymbolicReasoner(), select=lambda n: QUERIES.get(n.name), scene=robot.observe
    )
    assert out is root
    guards = {n.decorated.name: n for n in root.iterate() if isinstance(n, RaiderGuard)}
    assert sorted(guards) == ["Pick cup", "Pick mug", "Put cup back"]
    choose, in_time = nodes["choose"], nodes["in time"]
    assert choose.children == [guards["Pick mug"], guards["Pick cup"]]
    assert in_time.decorated is guards["Put cup back"] and in_time.children == [in_time.decorated]
    for name, guard in guards.items():
        assert guard.decorated is nodes[{"Pick mug": "mug", "Pick cup": "cup"}.get(name, "place")]
        assert guard.decorated.parent is guard
    assert guards["Pick mug"].parent is choose and guards["Put cup back"].parent is in_time
    assert [c.parent for c in root.children] == [root, root, root]
    # Guarding again changes nothing.
    guard_tree(root, SymbolicReasoner(), select=lambda n: QUERIES.get(n.name))
    assert sum(isinstance(n, RaiderGuard) for n in root.iterate()) == 3

    assert nodes["place"].key == guards["Put cup back"].resolved_key  # the default name
    watched = [(guards[n], guards[n].decorated) for n in ("Pick mug", "Pick cup", "Put cup back")]
    rows = []
    for _ in range(10):
        root.tick_once()
        rows.append((root.status, nodes["go"].status, *[(g.status, c.status) for g, c in watched]))
        if root.status != R:
            break
        settle(root)
    # columns: the root, Navigate (unguarded), then (guard, child) for the mug, cup and place
    assert rows == [
        # Navigate takes one poll; the selector starts the mug's check.
        (R, S, (R, I), (I, I), (I, I)),
        # No Mug here: its guard fails and Pick mug never ran; the selector checks the cup.
        (R, S, (F, I), (R, I), (I, I)),
        # The cup passes: Pick cup runs on the dirty cup's objectId (one poll); the selector
        # succeeds (py_trees resets its failed child) and the guard under Timeout checks.
        (R, S, (I, I), (S, S), (R, I)),
        # The place passes and runs: the sequence succeeds.
        (S, S, (I, I), (S, S), (S, S)),
    ], [g.feedback_message for g, _ in watched]
    assert robot.started == [
        ("navigate", ["counter"]),
        ("pick", [DIRTY_CUP]),
        ("place", [DIRTY_CUP, COUNTER]),
    ]


def test_guard_tree_on_the_root_itself() -> None:
    robot = ToyRobot(polls=2)
    pick = Pick("Pick cup", robot, "the clean cup")
    out = guard_tree(
        pick, SymbolicReasoner(), select=lambda n: "pick the clean cup", scene=kitchen()
    )
    assert isinstance(out, RaiderGuard) and out.decorated is pick and pick.parent is out
    assert out.parent is None
    drive(out, pick, [(R, I, Phase.CHECKING), (R, R, Phase.ACTING), (S, S, Phase.ACTING)])
    assert robot.started == [("pick", [CLEAN_CUP])]


def test_guard_tree_with_a_bad_query_leaves_the_tree_as_it_was() -> None:
    robot = ToyRobot()
    root, nodes = users_tree(robot)
    before = py_trees.display.unicode_tree(root)

    def select(node: py_trees.behaviour.Behaviour) -> str | None:
        return {"Pick mug": "pick(Mug)", "Put cup back": "   "}.get(node.name)

    with pytest.raises(ValueError, match="non-empty"):
        guard_tree(root, SymbolicReasoner(), select=select)
    assert py_trees.display.unicode_tree(root) == before
    assert nodes["mug"].parent is nodes["choose"] and nodes["place"].parent is nodes["in time"]
    with pytest.raises(ValueError, match="max_attempts"):
        guard_tree(root, SymbolicReasoner(), select=select_pick_mug, max_attempts=-1)
    assert py_trees.display.unicode_tree(root) == before
    assert nodes["choose"].children[0] is nodes["mug"] and nodes["mug"].parent is nodes["choose"]


def select_pick_mug(node: py_trees.behaviour.Behaviour) -> str | None:
    return "pick(Mug)" if node.name == "Pick mug" else None
