"""What the REVECA tests share: a goal and a maker of object information."""

from __future__ import annotations

from bt_raider.cooperation.observations import Goal, ObjectInfo
from bt_raider.simulation.multirobot import CATALOGUE

GOAL = Goal(("cupcake", "apple"), "coffeetable", "on", "1", "livingroom", (2.0, 2.0))


def obj(oid, name, room="kitchen", pos=(10.0, 3.0), step=0, kind="object", **kw) -> ObjectInfo:
    category = kw.pop("category", CATALOGUE.get(name, "furniture"))
    actions = kw.pop("actions", ("grab",) if kind == "object" else ("open",))
    return ObjectInfo(
        oid, name, room, pos, step, kind=kind, category=category, actions=actions, **kw
    )
