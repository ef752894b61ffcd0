"""The FloorPlan1 kitchen as the case set's author sees it: display names, stances, sides.

Expected answers are set by construction, never by running a reasoner: :meth:`Kitchen.near`
places the agent 0.6 m from a target meant to be within reach, and :func:`side` computes
left/right with the format doc's formula, independently of ``bt_raider.perception``, refusing
a relation within 5 cm of a threshold.
"""

from __future__ import annotations

import math
from typing import Any

from .patch import Op, load_kitchen, objects

REACH_IN = 0.6  # m: a target meant to be within reach (robot.reach is 1.1 m)
OPEN_FLOOR = (0.0, -1.0)  # (x, z) the robot approaches objects from


class Kitchen:
    """Names, ids and geometry of the kitchen, for writing cases."""

    def __init__(self) -> None:
        self.d = load_kitchen()
        self.objs = objects(self.d)
        by_type: dict[str, list[str]] = {}
        for o in self.d["objects"]:
            by_type.setdefault(o["objectType"], []).append(o["objectId"])
        self.names: dict[str, str] = {}
        for t, ids in by_type.items():
            if len(ids) == 1:
                self.names[ids[0]] = t
            else:
                for i, oid in enumerate(sorted(ids), start=1):
                    self.names[oid] = f"{t}_{i}"
        self.ids = {n: i for i, n in self.names.items()}
        self.by_type = by_type

    def id(self, name: str) -> str:
        return self.ids[name]

    def xz(self, oid: str, d: dict[str, Any] | None = None) -> tuple[float, float]:
        o = objects(d)[oid] if d is not None else self.objs[oid]
        return o["position"]["x"], o["position"]["z"]

    def near(self, name: str, dist: float = REACH_IN) -> Op:
        """An agent op: ``dist`` m from the object, on the open-floor side, facing it."""
        x, z = self.xz(self.id(name))
        ux, uz = OPEN_FLOOR[0] - x, OPEN_FLOOR[1] - z
        n = math.hypot(ux, uz) or 1.0
        ax, az = x + dist * ux / n, z + dist * uz / n
        yaw = math.degrees(math.atan2(x - ax, z - az)) % 360
        return ["agent", {"x": round(ax, 3), "z": round(az, 3), "yaw": round(yaw, 2)}]


def side(d: dict[str, Any], x_id: str, y_id: str) -> str | None:
    """``right``/``left`` per the format doc (robot's viewpoint), None; raises near a threshold."""
    objs = objects(d)
    yaw = math.radians((d["agent"].get("rotation") or {}).get("y", 0.0))
    r = (math.cos(yaw), -math.sin(yaw))
    px, pz = objs[x_id]["position"]["x"], objs[x_id]["position"]["z"]
    qx, qz = objs[y_id]["position"]["x"], objs[y_id]["position"]["z"]
    dist = math.hypot(px - qx, pz - qz)
    offset = (px - qx) * r[0] + (pz - qz) * r[1]
    if abs(dist - 1.0) < 0.05:
        raise ValueError(f"{x_id} vs {y_id}: too close to the 1 m range (d={dist:.2f})")
    if dist > 1.0:
        return None
    if abs(abs(offset) - 0.05) < 0.03:
        raise ValueError(f"{x_id} vs {y_id}: too close to the 5 cm margin (s={offset:.2f})")
    if offset > 0.05:
        return "right"
    if offset < -0.05:
        return "left"
    return None


def rel_set(d: dict[str, Any], anchor: str, which: str, types: set[str] | None) -> list[str]:
    """The objects (of ``types``, or any) that lie ``which`` (left/right) of ``anchor`` in ``d``."""
    out = []
    for o in d["objects"]:
        if o["objectId"] == anchor or (types and o["objectType"] not in types):
            continue
        if side(d, o["objectId"], anchor) == which:
            out.append(o["objectId"])
    return out


def person(
    name: str | None,
    agent_op: Op,
    dist: float,
    *,
    looking: bool = True,
    hands: bool = True,
    pid: str = "person_1",
    lateral: float = 0.0,
) -> Op:
    """A human op ``dist`` m ahead of the agent pose and ``lateral`` m to its right.

    ``name`` None is a person the robot does not recognise.
    """
    a = agent_op[1]
    yaw = math.radians(a["yaw"])
    hx = a["x"] + dist * math.sin(yaw) + lateral * math.cos(yaw)
    hz = a["z"] + dist * math.cos(yaw) - lateral * math.sin(yaw)
    return [
        "human",
        {
            "id": pid,
            "name": name,
            "position": {"x": round(hx, 3), "y": 0.0, "z": round(hz, 3)},
            "looking_at_robot": looking,
            "hands_free": hands,
        },
    ]
