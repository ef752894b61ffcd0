"""A care-home robot written the way a first-time user writes one: its own action names
(NavigateTo, PickUp, PutDown, HandTo, OpenDoor, PressButton), its own plain py_trees node and
a scene it keeps as a dict. Nothing here comes from bt_raider but the Robot protocol's types.
"""

from __future__ import annotations

import copy
from typing import Any

import py_trees

from bt_raider import (
    ActionState,
    Progress,
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
)

Status = py_trees.common.Status

#: The robot's own action names (what its action servers are called).
ACTIONS = ["NavigateTo", "PickUp", "PutDown", "HandTo", "OpenDoor", "PressButton"]


def thing(object_id: str, kind: str, x: float, z: float, **flags: Any) -> dict[str, Any]:
    return {
        "objectId": object_id,
        "objectType": kind,
        "position": {"x": x, "y": 0.8, "z": z},
        **flags,
    }


def person(pid: str, name: str | None, x: float, z: float, **more: Any) -> dict[str, Any]:
    return {"id": pid, "name": name, "position": {"x": x, "z": z}, "looking_at_robot": True, **more}


def lounge(
    *,
    holding: str | None = None,
    people: list[dict[str, Any]] | None = None,
    objects: list[dict[str, Any]] | None = None,
    **more: Any,
) -> dict[str, Any]:
    """The lounge of the care home: the robot at the origin facing +z."""
    objs = [
        thing("PillOrganiser|1", "PillOrganiser", 0.0, 0.1, pickupable=True),
        thing("Door|corridor", "Door", 0.0, 2.0, openable=True, isOpen=False),
        thing("Table|1", "Table", 0.6, 0.4, receptacle=True),
        *(objects or []),
    ]
    scene: dict[str, Any] = {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": objs,
        "humans": people if people is not None else [person("h1", "Ana", 0.4, 0.3)],
        "locations": {"corridor": {"x": 0.0, "z": 3.0}, "lounge": {"x": 0.0, "z": 0.0}},
        **more,
    }
    if holding:
        held = next(o for o in objs if o["objectId"] == holding)
        held["isPickedUp"] = True
        scene["inventoryObjects"] = [{"objectId": holding, "objectType": held["objectType"]}]
    return scene


class CareRobot:
    """The user's robot: every action finishes at its first poll; ``log`` keeps what ran."""

    def __init__(self, scene: dict[str, Any]) -> None:
        self.scene = copy.deepcopy(scene)
        self.log: list[tuple[str, list[Any]]] = []
        self.handles = 0

    def start(self, action: str, args: Any) -> int:
        args = [str(a) for a in args]
        self.log.append((action, args))
        self.handles += 1
        getattr(self, f"_{action}", lambda *a: None)(*args)
        return self.handles

    # What each action does to the robot's view of the world (its perception, simplified).
    def _find(self, ref: str) -> dict[str, Any] | None:
        for o in self.scene["objects"]:
            if ref in (o["objectId"], o["objectType"]):
                return o
        return None

    def _NavigateTo(self, target: str, *rest: str) -> None:  # noqa: N802 (the robot's names)
        places = self.scene.get("locations") or {}
        people = {h["id"]: h for h in self.scene.get("humans") or []}
        people.update({h["name"]: h for h in self.scene.get("humans") or [] if h.get("name")})
        found = self._find(target)
        where = (
            places.get(target)
            or (found or {}).get("position")
            or (people.get(target) or {}).get("position")
        )
        if where is not None:
            # Stop 0.3 m short of it, on the robot's side (z), facing +z as before.
            here = self.scene["agent"]["position"]
            self.scene["agent"]["position"] = {
                "x": where["x"],
                "y": here["y"],
                "z": where["z"] - 0.3,
            }

    def _OpenDoor(self, door: str) -> None:  # noqa: N802
        found = self._find(door)
        if found is not None:
            found["isOpen"] = True

    def _PickUp(self, thing: str) -> None:  # noqa: N802
        found = self._find(thing)
        if found is not None:
            found["isPickedUp"] = True
            held = {"objectId": found["objectId"], "objectType": found["objectType"]}
            self.scene["inventoryObjects"] = [held]

    def _HandTo(self, thing: str, person: str) -> None:  # noqa: N802
        self.scene["inventoryObjects"] = []

    def poll(self, handle: Any) -> Progress:
        return Progress(ActionState.SUCCEEDED)

    def cancel(self, handle: Any) -> None:
        pass

    def observe(self) -> dict[str, Any]:
        return self.scene

    def did(self, action: str) -> list[list[Any]]:
        return [args for name, args in self.log if name == action]


class Act(py_trees.behaviour.Behaviour):
    """The user's own action node: one robot call, with what the guard resolved."""

    def __init__(self, action: str, args: list[str], robot: CareRobot) -> None:
        super().__init__(f"{action}({', '.join(args)})")
        self.action, self.args, self.robot, self.resolved = action, args, robot, None
        self.handle: Any = None

    def retarget(self, resolved: Any) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        args = list(self.resolved.args) if self.resolved else self.args
        self.handle = self.robot.start(self.action, args)

    def update(self) -> Status:
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return Status.RUNNING
        return Status.SUCCESS if state is ActionState.SUCCEEDED else Status.FAILURE


def tick(root: py_trees.behaviour.Behaviour, limit: int = 600) -> list[Status]:
    """Tick ``root`` until it ends; the statuses it returned, tick by tick."""
    import time

    statuses = []
    for _ in range(limit):
        root.tick_once()
        statuses.append(root.status)
        if root.status in (Status.SUCCESS, Status.FAILURE):
            break
        time.sleep(0.003)
    return statuses


def guarded(
    query: str,
    action: str,
    args: list[str],
    scene: dict[str, Any],
    answers: list[str],
    actions: Any = ACTIONS,
    **recovery: Any,
) -> tuple[RaiderGuard, Act, CareRobot, ScriptedHuman]:
    """The user's node for ``action`` under a guard for ``query``, with symbolic recovery on a
    care robot over ``scene`` and a person who answers ``answers``."""
    robot = CareRobot(scene)
    human = ScriptedHuman(answers)
    node = Act(action, args, robot)
    guard = RaiderGuard(
        node,
        query,
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human, actions=actions, **recovery),
        name=f"guard {query}",
    )
    return guard, node, robot, human
