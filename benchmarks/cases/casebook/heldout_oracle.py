"""The held-out set's oracle: a small, independent reading of the format doc's issue rules.

It recomputes distances, relations, flags and the priority order from a variant's scene dict,
so a hand label that disagrees with the doc is refused (see ``HeldoutBook.case``). Geometry
within a margin of a threshold (reach 1.1 m, near 0.5 m, left/right 5 cm, relation range
1.0 m) raises instead of answering.
"""

from __future__ import annotations

import math
from typing import Any

REACH = 1.1  # m: robot.reach
HANDOVER = 0.5  # m: the farthest a person may stand to be handed something
MARGIN = 0.12  # m: refuse a reach case whose distance is this close to robot.reach
SINGLE_SLOT = {"CoffeeMachine", "Toaster"}  # receptacles that hold one thing at a time


# ----------------------------------------------------------------------------- geometry
def objs(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["objectId"]: o for o in d["objects"]}


def hdist(a: dict[str, float], b: dict[str, float]) -> float:
    return math.hypot(a["x"] - b["x"], a["z"] - b["z"])


def bbox_dist(d: dict[str, Any], oid: str) -> float:
    """Horizontal distance from the agent to the nearest point of the object's box."""
    o = objs(d)[oid]
    ag = d["agent"]["position"]
    box = o.get("axisAlignedBoundingBox") or {}
    pts = box.get("cornerPoints")
    if not pts:
        return hdist(ag, o["position"])
    xs, zs = [p[0] for p in pts], [p[2] for p in pts]
    nx = min(max(ag["x"], min(xs)), max(xs))
    nz = min(max(ag["z"], min(zs)), max(zs))
    return math.hypot(nx - ag["x"], nz - ag["z"])


def agent_dist(d: dict[str, Any], oid: str) -> float:
    return hdist(d["agent"]["position"], objs(d)[oid]["position"])


def far(d: dict[str, Any], oid: str) -> bool:
    """Out of reach by the doc's rule; refuses a distance near the threshold."""
    c, b = agent_dist(d, oid), bbox_dist(d, oid)
    if c > REACH + MARGIN and b > REACH + MARGIN:
        return True
    if c < REACH - MARGIN:  # the box is never farther than its centre
        return False
    raise ValueError(f"{oid}: distance {c:.2f} m (box {b:.2f} m) too close to reach {REACH}")


def side(d: dict[str, Any], x: str, y: str) -> str | None:
    """left/right of the format doc, from the robot's viewpoint; refuses a near-threshold pair."""
    o = objs(d)
    yaw = math.radians(d["agent"]["rotation"]["y"])
    r = (math.cos(yaw), -math.sin(yaw))
    px, pz = o[x]["position"]["x"], o[x]["position"]["z"]
    qx, qz = o[y]["position"]["x"], o[y]["position"]["z"]
    dist = math.hypot(px - qx, pz - qz)
    off = (px - qx) * r[0] + (pz - qz) * r[1]
    if abs(dist - 1.0) < 0.05 or (dist < 1.0 and abs(abs(off) - 0.05) < 0.03):
        raise ValueError(f"{x} vs {y}: near a threshold (d={dist:.2f}, offset={off:.2f})")
    if dist > 1.0:
        return None
    return "right" if off > 0.05 else "left" if off < -0.05 else None


def near(d: dict[str, Any], x: str, y: str) -> bool:
    dist = hdist(objs(d)[x]["position"], objs(d)[y]["position"])
    if abs(dist - 0.5) < 0.04:
        raise ValueError(f"{x} vs {y}: {dist:.2f} m is too close to the 0.5 m 'near' limit")
    return dist < 0.5


def _box(o: dict[str, Any]) -> tuple[float, float, float, float, float, float]:
    pts = o["axisAlignedBoundingBox"]["cornerPoints"]
    xs, ys, zs = ([p[i] for p in pts] for i in range(3))
    return min(xs), max(xs), min(ys), max(ys), min(zs), max(zs)


def vertical(d: dict[str, Any], x: str, y: str) -> str | None:
    """above/below of the format doc: boxes overlap in (x, z) and one lies higher.

    Refuses pairs whose (x, z) overlap or vertical gap is under 2 cm, where "lies higher"
    read by box bottom/top or by centre could disagree.
    """
    a, b = _box(objs(d)[x]), _box(objs(d)[y])
    ox = min(a[1], b[1]) - max(a[0], b[0])
    oz = min(a[5], b[5]) - max(a[4], b[4])
    if ox <= 0 or oz <= 0:
        if max(ox, oz) > -0.02 and min(ox, oz) > -0.02:
            raise ValueError(f"{x} vs {y}: (x, z) overlap too close to zero")
        return None
    if min(ox, oz) < 0.02:
        raise ValueError(f"{x} vs {y}: (x, z) overlap of {min(ox, oz):.3f} m is marginal")
    if a[2] - b[3] > 0.02:
        return "above"
    if b[2] - a[3] > 0.02:
        return "below"
    raise ValueError(f"{x} vs {y}: boxes overlap vertically; above/below is unclear")


def of_types(d: dict[str, Any], types: set[str]) -> list[str]:
    return sorted(o["objectId"] for o in d["objects"] if o["objectType"] in types)


def related(d: dict[str, Any], types: set[str], rel: str, anchor: str) -> list[str]:
    """The objects of ``types`` in relation ``rel`` to ``anchor`` (doc section 2)."""
    o = objs(d)
    cands = [x for x in of_types(d, types) if x != anchor]
    if rel in ("left", "right"):
        return [x for x in cands if side(d, x, anchor) == rel]
    if rel == "near":
        return [x for x in cands if near(d, x, anchor)]
    if rel in ("in", "on"):
        return [x for x in cands if anchor in (o[x].get("parentReceptacles") or [])]
    if rel in ("above", "below"):
        return [x for x in cands if vertical(d, x, anchor) == rel]
    if rel == "closest":
        ranked = sorted(cands, key=lambda x: hdist(o[x]["position"], o[anchor]["position"]))
        d0 = hdist(o[ranked[0]]["position"], o[anchor]["position"])
        d1 = hdist(o[ranked[1]]["position"], o[anchor]["position"])
        if d1 - d0 < 0.05:
            raise ValueError(f"closest to {anchor}: a near tie ({d0:.2f} vs {d1:.2f})")
        return ranked[:1]
    raise ValueError(f"unknown relation {rel!r}")


# ----------------------------------------------------------------------------- the oracle
def oracle(d: dict[str, Any], spec: dict[str, Any]) -> str:
    """The category the format doc's rules give for one grounded action (priority order).

    ``spec``: ``{"act": pick|place|open|close|turnon|turnoff|slice|approach|handover,
    "t": target id, "o": object id (place/handover), "p": person id}``, or
    ``{"ground": [ids]}`` alone for a grounding outcome (0 -> not_present, 2+ -> ambiguity).
    """
    if "ground" in spec and spec.get("act") is None:
        n = len(spec["ground"])
        return "not_present" if n == 0 else "ambiguity" if n >= 2 else "?"
    o = objs(d)
    act = spec["act"]
    held = [i["objectId"] for i in d.get("inventoryObjects") or []]
    held_types = [o[i]["objectType"] for i in held]
    blocked = d.get("blocked") or {}
    issues: list[str] = []
    if act in ("handover", "approach") and "p" in spec:
        people = {h["id"]: h for h in d.get("humans") or []}
        h = people.get(spec["p"])
        if h is None or h["name"] is None:
            return "not_present"
        if act == "handover":
            if spec["o"] not in held:
                raise ValueError("handover of an object the robot does not hold: doc is silent")
            if not (h["looking_at_robot"] and h["hands_free"]):
                issues.append("wrong_state")
            if blocked.get(spec["p"]):
                issues.append("obstructed")
            dist = hdist(d["agent"]["position"], h["position"])
            if abs(dist - HANDOVER) < 0.08:
                raise ValueError(f"person at {dist:.2f} m: too close to handover distance")
            if dist > HANDOVER:
                issues.append("out_of_reach")
        else:
            if blocked.get(spec["p"]):
                issues.append("obstructed")
            dist = hdist(d["agent"]["position"], h["position"])
            if dist > HANDOVER:  # the doc gives approach no distance rule: keep people close
                raise ValueError("approach to a far person: the doc is silent on its reach")
        return issues[0] if issues else "none"

    if "t_any" in spec:  # a numbered display name: every candidate must give one answer
        got = {oracle(d, {k: v for k, v in {**spec, "t": t}.items() if k != "t_any"})
               for t in spec["t_any"]}  # fmt: skip
        if len(got) != 1:
            raise ValueError(f"numbered name: candidates disagree {got}")
        return got.pop()
    t = o[spec["t"]]
    tid = spec["t"]
    parents = [o[p] for p in t.get("parentReceptacles") or [] if p in o]
    if act == "pick":
        if held:
            issues.append("robot_state")
        if not t.get("pickupable"):
            issues.append("wrong_property")
        if any(p.get("openable") and not p.get("isOpen") for p in parents):
            issues.append("wrong_state")
        if t.get("receptacleObjectIds") or blocked.get(tid):
            issues.append("obstructed")
        if not issues and far(d, tid):  # last in priority: only measured when it decides
            issues.append("out_of_reach")
    elif act == "place":
        if spec["o"] not in held:
            issues.append("robot_state")
        if not t.get("receptacle"):
            issues.append("wrong_property")
        if t.get("openable") and not t.get("isOpen"):
            issues.append("wrong_state")
        if (t["objectType"] in SINGLE_SLOT and t.get("receptacleObjectIds")) or blocked.get(tid):
            issues.append("obstructed")
        if not issues and far(d, tid):  # last in priority: only measured when it decides
            issues.append("out_of_reach")
    elif act in ("open", "close", "turnon", "turnoff"):
        if held:
            issues.append("robot_state")
        flag_ok = t.get("openable") if act in ("open", "close") else t.get("toggleable")
        if not flag_ok:
            issues.append("wrong_property")
        state = t.get("isOpen") if act in ("open", "close") else t.get("isToggled")
        if flag_ok and bool(state) == (act in ("open", "turnon")):
            issues.append("wrong_state")
        if blocked.get(tid):
            issues.append("obstructed")
        if not issues and far(d, tid):  # last in priority: only measured when it decides
            issues.append("out_of_reach")
    elif act == "slice":
        if "Knife" not in held_types:
            issues.append("robot_state")
        if not t.get("sliceable"):
            issues.append("wrong_property")
        if t.get("sliceable") and t.get("isSliced"):
            issues.append("wrong_state")
        if blocked.get(tid):
            issues.append("obstructed")
        if not issues and far(d, tid):  # last in priority: only measured when it decides
            issues.append("out_of_reach")
    elif act == "approach":
        if blocked.get(tid):
            issues.append("obstructed")
        elif far(d, tid):  # the doc is silent on approach + reach: only near targets
            raise ValueError("approach to a far object: the doc is silent on its reach")
    else:
        raise ValueError(f"unknown act {act!r}")
    order = [
        "robot_state",
        "wrong_property",
        "wrong_state",
        "obstructed",
        "out_of_reach",
    ]
    issues.sort(key=order.index)
    return issues[0] if issues else "none"
