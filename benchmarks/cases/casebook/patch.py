"""The patch format of the case sets: a variant is the real kitchen changed by a list of ops.

Ops (JSON lists), applied in order by :func:`apply_patch`: ``["agent", {x, z, yaw}]``,
``["set", id, {flag: value}]``, ``["hold", id]``, ``["put", id, parent id]``, ``["clone",
source id, new id, {x, y, z}, parent id or null, {field overrides}]``, ``["add", object dict]``,
``["remove", id]``, ``["blocked", key, [ids]]``, ``["human", {...}]``, ``["location", name,
{x, z}]``, ``["robot", {...}]``. Kept apart from the cases so that the benchmarks that replay
the variants (detect.py, recovery.py) need no case-writing code.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The real FloorPlan1 kitchen, in ../shared beside the repository (absent in a bare clone).
#: ``BT_RAIDER_SHARED`` points at the shared data elsewhere (a worktree has no ../shared).
SHARED = Path(os.environ.get("BT_RAIDER_SHARED") or Path(__file__).resolve().parents[4] / "shared")
KITCHEN = SHARED / "scenes" / "floorplan1_kitchen.json"

Op = list[Any]


def load_kitchen(path: Path = KITCHEN) -> dict[str, Any]:
    """The kitchen's scene dict, read afresh (callers patch it in place)."""
    return json.loads(Path(path).read_text())


def objects(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The scene's objects by objectId (the dicts themselves, so edits land in the scene)."""
    return {o["objectId"]: o for o in d["objects"]}


def _shift(obj: dict[str, Any], dx: float, dy: float, dz: float) -> None:
    p = obj["position"]
    p["x"], p["y"], p["z"] = p["x"] + dx, p.get("y", 0.0) + dy, p["z"] + dz
    box = obj.get("axisAlignedBoundingBox")
    if box:
        if box.get("center"):
            c = box["center"]
            c["x"], c["y"], c["z"] = c["x"] + dx, c["y"] + dy, c["z"] + dz
        if box.get("cornerPoints"):
            box["cornerPoints"] = [[x + dx, y + dy, z + dz] for x, y, z in box["cornerPoints"]]


def _move_to(obj: dict[str, Any], pos: dict[str, float]) -> None:
    p = obj["position"]
    _shift(
        obj, pos["x"] - p["x"], pos.get("y", p.get("y", 0.0)) - p.get("y", 0.0), pos["z"] - p["z"]
    )


def _detach(d: dict[str, Any], oid: str) -> None:
    objs = objects(d)
    for pid in objs[oid].get("parentReceptacles") or []:
        parent = objs.get(pid)
        if parent and parent.get("receptacleObjectIds"):
            parent["receptacleObjectIds"] = [i for i in parent["receptacleObjectIds"] if i != oid]
    objs[oid]["parentReceptacles"] = None


def _attach(d: dict[str, Any], oid: str, pid: str) -> None:
    objs = objects(d)
    objs[oid]["parentReceptacles"] = [pid]
    parent = objs[pid]
    parent["receptacleObjectIds"] = [*(parent.get("receptacleObjectIds") or []), oid]


def apply_patch(d: dict[str, Any], ops: list[Op]) -> dict[str, Any]:
    """Apply ``ops`` to the scene dict ``d`` in place and return it."""
    for op in ops:
        kind, args = op[0], op[1:]
        objs = objects(d)
        if kind == "agent":
            a = args[0]
            d["agent"]["position"]["x"], d["agent"]["position"]["z"] = a["x"], a["z"]
            if "yaw" in a:
                d["agent"].setdefault("rotation", {"x": 0.0, "y": 0.0, "z": 0.0})["y"] = a["yaw"]
        elif kind == "set":
            objs[args[0]].update(args[1])
        elif kind == "hold":
            oid = args[0]
            _detach(d, oid)
            o = objs[oid]
            o["isPickedUp"] = True
            ag = d["agent"]
            yaw = math.radians((ag.get("rotation") or {}).get("y", 0.0))
            at = {
                "x": ag["position"]["x"] + 0.3 * math.sin(yaw),
                "y": 1.0,
                "z": ag["position"]["z"] + 0.3 * math.cos(yaw),
            }
            _move_to(o, at)
            d["inventoryObjects"] = [{"objectId": oid, "objectType": o["objectType"]}]
        elif kind == "put":
            oid, pid = args
            _detach(d, oid)
            parent = objs[pid]["position"]
            _move_to(
                objs[oid], {"x": parent["x"], "y": parent.get("y", 0.0) + 0.05, "z": parent["z"]}
            )
            _attach(d, oid, pid)
        elif kind == "clone":
            src, new_id, pos, pid = args[:4]
            overrides = args[4] if len(args) > 4 else {}
            o = copy.deepcopy(objs[src])
            o["objectId"] = new_id
            o["parentReceptacles"] = None
            o["receptacleObjectIds"] = None if o.get("receptacleObjectIds") is None else []
            if pos is not None:
                _move_to(o, pos)
            o.update(overrides)
            d["objects"].append(o)
            if pid is not None:
                _attach(d, new_id, pid)
        elif kind == "add":
            d["objects"].append(copy.deepcopy(args[0]))
        elif kind == "remove":
            oid = args[0]
            _detach(d, oid)
            for child in objs[oid].get("receptacleObjectIds") or []:
                if child in objs:
                    objs[child]["parentReceptacles"] = None
            d["objects"] = [o for o in d["objects"] if o["objectId"] != oid]
        elif kind == "blocked":
            d.setdefault("blocked", {})[args[0]] = list(args[1])
        elif kind == "human":
            d.setdefault("humans", []).append(copy.deepcopy(args[0]))
        elif kind == "location":
            d.setdefault("locations", {})[args[0]] = dict(args[1])
        elif kind == "robot":
            d.setdefault("robot", {}).update(args[0])
        else:
            raise ValueError(
                f"unknown patch op {kind!r}: expected agent, set, hold, put, clone, "
                "add, remove, blocked, human, location or robot"
            )
    return d


def build_scene(variants: dict[str, list[Op]], variant: str, kitchen: dict[str, Any] | None = None):
    """The scene dict of one variant (a fresh copy of the kitchen with its ops applied)."""
    base = copy.deepcopy(kitchen if kitchen is not None else load_kitchen())
    return apply_patch(base, variants[variant])


def define_variant(variants: dict[str, list[Op]], name: str, ops: Sequence[Op]) -> str:
    """Add variant ``name`` to ``variants`` (again, identically, is fine); return its name."""
    if name in variants and variants[name] != list(ops):
        raise ValueError(f"variant {name!r} defined twice differently")
    variants[name] = list(ops)
    return name
