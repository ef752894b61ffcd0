"""A toy robot with its own action names and a small scene built in code, for recovery tests.

The robot is the user's, not ours: it knows ``navigate``, ``grasp`` and ``put`` (no
``move_to``, ``pick`` or ``place``), receives objectIds, and records every call it gets.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Sequence
from typing import Any

from bt_raider.errors import ActionFailed
from bt_raider.perception.scene import Scene
from bt_raider.robot.actions import ActionState, Progress

AGENT = {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}}

#: Medicine_1: next to the plant (0.2 m), on the robot's right; Medicine_2: 1.1 m from the
#: plant, on the robot's left (display names follow the objectIds' order).
NEAR_PLANT = "Medicine|+00.40|+00.95|+00.80"
FAR_FROM_PLANT = "Medicine|-00.50|+00.95|+00.80"
PLANT = "HousePlant|+00.60|+00.95|+00.80"
COUNTER = "CounterTop|+00.00|+00.90|+00.80"
TABLE = "DiningTable|+03.00|+00.00|+00.00"
APPLE = "Apple|+00.00|+01.00|+00.00"
FRIDGE = "Fridge|-02.00|+00.00|+02.00"


def _obj(oid: str, x: float, y: float, z: float, size: float = 0.1, **fields: Any) -> dict:
    half = size / 2
    return {
        "objectId": oid,
        "objectType": oid.split("|", 1)[0],
        "position": {"x": x, "y": y, "z": z},
        "axisAlignedBoundingBox": {
            "center": {"x": x, "y": y, "z": z},
            "size": {"x": size, "y": size, "z": size},
            "cornerPoints": [
                [x + dx * half, y + dy * half, z + dz * half]
                for dx in (1, -1)
                for dy in (1, -1)
                for dz in (1, -1)
            ],
        },
        "visible": True,
        **fields,
    }


def toy_scene_dict(*, holding_apple: bool = False) -> dict:
    """A counter with two medicines and a plant, a far table, a fridge; optionally the robot
    holds an apple."""
    counter = _obj(COUNTER, 0.0, 0.9, 0.8, size=0.0, receptacle=True)
    counter["axisAlignedBoundingBox"]["size"] = {"x": 2.0, "y": 0.05, "z": 0.6}
    on_counter = [NEAR_PLANT, FAR_FROM_PLANT, PLANT]
    counter["receptacleObjectIds"] = list(on_counter)
    objects = [
        counter,
        _obj(TABLE, 3.0, 0.0, 0.0, size=1.0, receptacle=True),
        _obj(PLANT, 0.6, 0.95, 0.8, parentReceptacles=[COUNTER]),
        _obj(NEAR_PLANT, 0.4, 0.95, 0.8, pickupable=True, parentReceptacles=[COUNTER]),
        _obj(FAR_FROM_PLANT, -0.5, 0.95, 0.8, pickupable=True, parentReceptacles=[COUNTER]),
        _obj(FRIDGE, -2.0, 0.0, 2.0, size=1.0, receptacle=True, openable=True, isOpen=False),
        _obj(APPLE, 0.0, 1.0, 0.0, pickupable=True, isPickedUp=holding_apple),
    ]
    data: dict[str, Any] = {"objects": objects, "agent": copy.deepcopy(AGENT)}
    data["inventoryObjects"] = [{"objectId": APPLE, "objectType": "Apple"}] if holding_apple else []
    data["locations"] = {"pharmacy_shelf": {"x": 1.0, "y": 0.0, "z": 1.5}}
    return data


class ToyRobot:
    """The user's robot: navigate(target), grasp(object), put(object[, on]); nothing else.

    ``start`` dispatches to the method of that name, as a user's adapter would; an action the
    robot does not have fails like the issue's ``'ToyRobot' object has no attribute``.
    """

    def __init__(self, data: dict | None = None) -> None:
        self.data = data if data is not None else toy_scene_dict()
        self.calls: list[tuple[str, list[Any]]] = []
        self._results: dict[int, Progress] = {}

    # -- the robot's own actions (objectIds in)
    def _object(self, ref: str) -> dict:
        for o in self.data["objects"]:
            if o["objectId"] == ref:
                return o
        raise ActionFailed(f"ToyRobot: {ref!r} is not an objectId of the scene")

    def navigate(self, target: str) -> str:
        if target in (self.data.get("locations") or {}):
            pos = self.data["locations"][target]
        else:
            pos = self._object(target)["position"]
        self.data["agent"]["position"] = {"x": pos["x"], "y": 0.9, "z": pos["z"] - 0.5}
        return f"at {target}"

    def grasp(self, obj: str) -> str:
        o = self._object(obj)
        if self.data["inventoryObjects"]:
            raise ActionFailed("ToyRobot: the hand is busy")
        o["isPickedUp"] = True
        self.data["inventoryObjects"] = [{"objectId": obj, "objectType": o["objectType"]}]
        return f"holding {obj}"

    def put(self, obj: str, on: str | None = None) -> str:
        o = self._object(obj)
        held = [i["objectId"] for i in self.data["inventoryObjects"]]
        if obj not in held:
            raise ActionFailed(f"ToyRobot: not holding {obj}")
        if on is not None:
            self._object(on)
        o["isPickedUp"] = False
        self.data["inventoryObjects"] = []
        return f"put {obj}"

    # -- the Robot protocol
    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.calls.append((action, list(args)))
        handle = len(self.calls)
        method = getattr(self, action, None) if action in ("navigate", "grasp", "put") else None
        try:
            if method is None:
                raise ActionFailed(f"'ToyRobot' object has no attribute {action!r}")
            self._results[handle] = Progress(ActionState.SUCCEEDED, method(*args))
        except (ActionFailed, TypeError) as exc:
            self._results[handle] = Progress(ActionState.FAILED, str(exc))
        return handle

    def poll(self, handle: Hashable) -> Progress:
        return self._results.get(handle, Progress(ActionState.FAILED, "unknown handle"))  # type: ignore[call-overload]

    def cancel(self, handle: Hashable) -> None:
        self._results.pop(handle, None)  # type: ignore[call-overload]

    def observe(self) -> Scene:
        return Scene(copy.deepcopy(self.data))
