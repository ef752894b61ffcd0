"""A team's own robot and pick node, for the tests of the release invariant (issue 32, item 4).

Nothing of bt_raider's ActionBehaviour or SimWorld: the robot keeps its scene as an AI2-THOR
metadata dict and changes it as it acts (a pick fills its one hand), and the pick node is a plain
py_trees behaviour that learns its object through ``retarget``. The planner proposes whatever
code a test gives it: a hostile recovery.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import Phase, RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
WAIT_S = 5.0

CLEAN_CUP, DIRTY_CUP = "Cup|clean", "Cup|dirty"
APPLE, OTHER_APPLE, KNIFE, BOWL = "Apple|1", "Apple|2", "Knife|1", "Bowl|1"


def thing(object_id: str, kind: str, x: float, z: float = 0.5, **more: Any) -> dict[str, Any]:
    return {
        "objectId": object_id,
        "objectType": kind,
        "position": {"x": x, "y": 0.9, "z": z},
        "visible": True,
        "pickupable": True,
        **more,
    }


def kitchen(
    *,
    apples: int = 1,
    far_clean_cup: bool = False,
    hidden_apple: bool = False,
    far_cups: bool = False,
) -> dict[str, Any]:
    """Two cups (one clean, one dirty), one or two apples, a knife and a bowl, all in reach
    (the clean cup 2.5 m away with ``far_clean_cup``, both with ``far_cups``; with ``hidden_apple``, no apple: the
    robot sees it once it moves, see :class:`OneArmRobot`)."""
    objects = [
        thing(
            CLEAN_CUP,
            "Cup",
            0.3,
            2.5 if far_clean_cup or far_cups else 0.4,
            dirtyable=True,
            isDirty=False,
        ),
        thing(DIRTY_CUP, "Cup", -0.3, 2.5 if far_cups else 0.4, dirtyable=True, isDirty=True),
        thing(APPLE, "Apple", 0.0, 0.5),
        thing(KNIFE, "Knife", 0.15, 0.45),
        thing(BOWL, "Bowl", -0.1, 0.6, pickupable=False, receptacle=True),
    ]
    if apples == 2:
        objects.append(thing(OTHER_APPLE, "Apple", 0.2, 0.6))
    if hidden_apple:
        objects = [o for o in objects if o["objectType"] != "Apple"]
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": objects,
        "inventoryObjects": [],
    }


class OneArmRobot:
    """The team's robot: one arm (``arms``: more); each action takes two polls; its scene
    follows what it does."""

    def __init__(self, scene: dict[str, Any], arms: int = 1) -> None:
        self.scene = scene
        self.arms = arms
        #: What perception reports once the robot moves (the apple behind the bowl).
        self.arriving: list[dict[str, Any]] = []
        if not any(o["objectType"] == "Apple" for o in scene["objects"]):
            self.arriving.append(thing(APPLE, "Apple", 0.0, 0.5))
        if arms > 1:
            scene["robot"] = {"arms": arms}
        self.log: list[tuple[str, list[str]]] = []
        self.refused: list[str] = []
        self._left: dict[Hashable, int] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.log.append((action, [str(a) for a in args]))
        self._left[len(self.log)] = 2
        return len(self.log)

    def poll(self, handle: Hashable) -> Progress:
        self._left[handle] -= 1
        if self._left[handle] > 0:
            return Progress(ActionState.RUNNING, "moving")
        action, args = self.log[int(str(handle)) - 1]
        by_id = {o["objectId"]: o for o in self.scene["objects"]}
        if action == "pick":
            if len(self.scene["inventoryObjects"]) >= self.arms or args[0] not in by_id:
                self.refused.append(f"pick({args[0]})")
                return Progress(ActionState.FAILED, "the hand is full or there is no such thing")
            by_id[args[0]]["isPickedUp"] = True
            kind = by_id[args[0]]["objectType"]
            self.scene["inventoryObjects"].append({"objectId": args[0], "objectType": kind})
        elif action == "move_to":  # what was out of sight is in sight from there
            self.scene["objects"].extend(self.arriving)
            self.arriving = []
        elif action == "place" and args and args[0] in by_id:
            by_id[args[0]]["isPickedUp"] = False
            held = self.scene["inventoryObjects"]
            self.scene["inventoryObjects"] = [i for i in held if i["objectId"] != args[0]]
        return Progress(ActionState.SUCCEEDED, f"{action} done")

    def cancel(self, handle: Hashable) -> None:
        self._left.pop(handle, None)

    def observe(self) -> dict[str, Any]:
        return copy.deepcopy(self.scene)

    def picks(self) -> list[str]:
        return [args[0] for action, args in self.log if action == "pick"]


class MyPick(py_trees.behaviour.Behaviour):
    """The team's pick node: its own target, or what its guard resolved."""

    def __init__(self, name: str, target: str, robot: OneArmRobot) -> None:
        super().__init__(name)
        self.target, self.robot = target, robot
        self.resolved: Any = None
        self.picked: list[str] = []

    def retarget(self, resolved: Any) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        target = self.resolved.args[0] if self.resolved is not None else self.target
        self.picked.append(target)
        self.handle = self.robot.start("pick", [target])

    def update(self) -> Status:
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return R
        return S if state is ActionState.SUCCEEDED else F


class Hostile:
    """A recovery planner that proposes the code it is given, whatever the request."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.requests: list[Any] = []

    def propose(self, request: Any, *, cancel: Any = None) -> str:
        self.requests.append(request)
        return self.code


def settle(root: py_trees.behaviour.Behaviour, timeout: float = WAIT_S) -> None:
    """Wait until no guard (nor its recovery subtree) has work in flight."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        nodes = list(root.iterate())
        for node in list(nodes):
            tree = getattr(node, "recovery_tree", None)
            if tree is not None:
                nodes.extend(tree.iterate())
        if all(getattr(n, "pending", None) is None or n.pending.done() for n in nodes):
            return
        time.sleep(0.001)
    raise AssertionError("background work did not finish")


def run(guard: RaiderGuard, child: py_trees.behaviour.Behaviour, ticks: int = 80) -> list[Any]:
    """Tick ``guard`` to its end; per tick, (guard status, child status, phase)."""
    rows: list[Any] = []
    for _ in range(ticks):
        guard.tick_once()
        rows.append((guard.status, child.status, guard.phase))
        if guard.status is not R:
            return rows
        settle(guard)
    raise AssertionError(f"the guard did not finish: {guard.feedback_message}")


def refused_rows(rows: list[Any]) -> None:
    """The child never ran: INVALID on every tick, the guard RUNNING until it fails closed."""
    assert all(child is I for _, child, _ in rows), rows
    assert all(status is R for status, _, _ in rows[:-1]), rows
    assert rows[-1] == (F, I, Phase.DONE), rows


def guarded(
    query: str, code: str, *, verify: bool, answers: list[str] | None = None, **scene: bool
) -> tuple[RaiderGuard, MyPick, OneArmRobot]:
    """A guard over the team's pick node in :func:`kitchen` (``scene``: its options), the real
    symbolic checker, a planner proposing ``code``, a person answering ``answers``; one
    recovery attempt."""
    robot = OneArmRobot(kitchen(**scene))  # type: ignore[arg-type]
    child = MyPick("my pick", "Cup", robot)
    recovery = Recovery(Hostile(code), robot, ScriptedHuman(answers or []), verify=verify)
    guard = RaiderGuard(
        child, query, SymbolicReasoner(), scene=robot.observe, recovery=recovery, max_attempts=1
    )
    return guard, child, robot
