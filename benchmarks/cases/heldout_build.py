"""Build the held-out issue-detection case set (red team, written blind to the reasoner).

Every expected label here comes from ``docs/scene-format.md`` (query forms, levels, spatial
relations, issue rules and their priority order) applied by hand to the real FloorPlan1 kitchen
metadata, then re-checked by :func:`oracle` below — a small, independent reading of the same
rules that recomputes distances, relations, flags and the priority order from the variant's
scene dict. A case whose hand label and oracle disagree, or whose geometry sits within a margin
of a threshold (reach 1.1 m, near 0.5 m, left/right 5 cm, relation range 1.0 m), is refused.

Writes, next to this file (the format of ``build_cases.py``, whose patch ops it reuses):

- ``heldout_variants.json``: ``{variant id: [patch op, ...]}``;
- ``heldout.jsonl``: one case a line (``id variant query category level form explain``, with
  ``grounding`` when the argument phrase is unambiguous, and PDDL cases adding
  ``preconditions``, ``unsatisfied`` and ``bindings`` — parameter name -> scene name).

Run: ``python3 benchmarks/cases/heldout_build.py`` (prints the distribution), then
``python3 benchmarks/detect.py --cases benchmarks/cases/heldout.jsonl
--variants benchmarks/cases/heldout_variants.json``.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

# build_cases.py sits beside this script (the patch format lives there).
from build_cases import KITCHEN, apply_patch, build_scene, load_kitchen

if not KITCHEN.is_file():  # a clone without ../shared beside it: one line, exit 2
    print(f"heldout_build.py: needs {KITCHEN} (../shared), missing", file=sys.stderr)
    raise SystemExit(2)

HERE = Path(__file__).resolve().parent

REACH = 1.1
HANDOVER = 0.5
MARGIN = 0.12  # m: refuse a reach case whose distance is this close to robot.reach
SINGLE_SLOT = {"CoffeeMachine", "Toaster"}

Op = list[Any]

# ----------------------------------------------------------------------------- ids
K0 = load_kitchen()
_BY_TYPE: dict[str, list[str]] = {}
for _o in K0["objects"]:
    _BY_TYPE.setdefault(_o["objectType"], []).append(_o["objectId"])


def I(kind: str) -> str:  # noqa: E743 - short on purpose: I("Apple") is an objectId
    """The objectId of the only object of type ``kind`` in the real kitchen."""
    ids = _BY_TYPE[kind]
    if len(ids) != 1:
        raise ValueError(f"{kind} is not unique: {ids}")
    return ids[0]


APPLE, TOMATO, BOWL, MUG, BREAD = I("Apple"), I("Tomato"), I("Bowl"), I("Mug"), I("Bread")
KNIFE, BKNIFE, POTATO, LETTUCE, PAN = (
    I("Knife"),
    I("ButterKnife"),
    I("Potato"),
    I("Lettuce"),
    I("Pan"),
)
FRIDGE, EGG, MICRO, TOASTER, COFFEE = (
    I("Fridge"),
    I("Egg"),
    I("Microwave"),
    I("Toaster"),
    I("CoffeeMachine"),
)
SPOON, SPATULA, PLATE, CUP, POT, KETTLE = (
    I("Spoon"),
    I("Spatula"),
    I("Plate"),
    I("Cup"),
    I("Pot"),
    I("Kettle"),
)
LIGHT, FAUCET, BOTTLE, WINE, CARD, BOOK = (
    I("LightSwitch"),
    I("Faucet"),
    I("Bottle"),
    I("WineBottle"),
    I("CreditCard"),
    I("Book"),
)
TOWEL = I("PaperTowelRoll")
ISLAND = "CounterTop|-00.08|+01.15|00.00"
BACK_COUNTER = "CounterTop|+00.69|+00.95|-02.48"
LEFT_COUNTER = "CounterTop|-01.87|+00.95|-01.21"
SPOON_DRAWER = "Drawer|+00.95|+00.83|-02.20"
LOW_LEFT_CABINET = "Cabinet|-01.55|+00.50|-01.97"
MID_SHELF = "Shelf|+01.75|+00.55|-02.56"
VASE_A, VASE_B = "Vase|+01.56|+00.56|-02.50", "Vase|+01.99|+00.56|-02.49"
FAR_STOOL = "Stool|+00.74|+00.00|+00.56"
DRAWERS = sorted(_BY_TYPE["Drawer"])
CABINETS = sorted(_BY_TYPE["Cabinet"])
KNOBS = sorted(_BY_TYPE["StoveKnob"])
CHAIR = "Chair|-01.55|+00.00|+00.75"
CHAIR_OBJ = {
    "objectId": CHAIR,
    "objectType": "Chair",
    "position": {"x": -1.55, "y": 0.0, "z": 0.75},
    "pickupable": False,
    "moveable": True,
    "receptacle": True,
    "openable": False,
    "toggleable": False,
    "sliceable": False,
    "parentReceptacles": ["Floor|+00.00|+00.00|+00.00"],
    "receptacleObjectIds": [],
    "visible": True,
}

# ----------------------------------------------------------------------------- poses
# Agent stances (x, z, yaw); reach margins are checked by the oracle per case.
HOME = ["agent", {"x": 0.0, "z": -1.25, "yaw": 180.0}]  # the kitchen's own pose
STOVE = ["agent", {"x": -0.25, "z": -1.7, "yaw": 180.0}]
LEFT = ["agent", {"x": -1.2, "z": -0.6, "yaw": 270.0}]
LEFT2 = ["agent", {"x": -1.2, "z": -0.2, "yaw": 270.0}]
FRIDGE_SIDE = ["agent", {"x": -1.2, "z": 1.0, "yaw": 270.0}]
BACK = ["agent", {"x": 0.8, "z": -1.6, "yaw": 180.0}]
LIGHT_SIDE = ["agent", {"x": 1.6, "z": -0.2, "yaw": 90.0}]
POT_SIDE = ["agent", {"x": -1.0, "z": -1.6, "yaw": 225.0}]


def human(
    name: str | None,
    pose: Op,
    dist: float,
    *,
    looking: bool = True,
    hands: bool = True,
    hid: str = "person_1",
) -> Op:
    """A person ``dist`` m straight ahead of the agent pose."""
    a = pose[1]
    yaw = math.radians(a["yaw"])
    return [
        "human",
        {
            "id": hid,
            "name": name,
            "position": {
                "x": round(a["x"] + dist * math.sin(yaw), 3),
                "y": 0.0,
                "z": round(a["z"] + dist * math.cos(yaw), 3),
            },
            "looking_at_robot": looking,
            "hands_free": hands,
        },
    ]


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


# ----------------------------------------------------------------------------- the cases
def build() -> tuple[dict[str, list[Op]], list[dict[str, Any]]]:
    kitchen = load_kitchen()
    variants: dict[str, list[Op]] = {"base": [HOME]}
    cases: list[dict[str, Any]] = []
    # Batch 1 ("ho-") was run once and reported; batch 2 ("ho2-", stress cases: priority
    # combinations, numbered names and objectIds, above/below, particles and gerunds) was
    # written after that run, still blind to the reasoner, and run once on its own.
    batch = ["ho"]

    def variant(name: str, *ops: Op) -> str:
        if name in variants and variants[name] != list(ops):
            raise ValueError(f"variant {name!r} defined twice differently")
        variants[name] = list(ops)
        return name

    def case(
        cat: str,
        var: str,
        query: str,
        level: str,
        form: str,
        spec: dict[str, Any],
        explain: list[str],
        grounding: dict[str, list[str]] | None = None,
        **extra: Any,
    ) -> None:
        d = build_scene(variants, var, kitchen)
        got = oracle(d, spec)
        if got != cat:
            raise ValueError(f"{query!r} on {var}: hand label {cat}, oracle {got}")
        # explanations may only be required to name objects with an unambiguous display name
        types = Counter(o["objectType"] for o in d["objects"])
        people = {h["name"] for h in d.get("humans") or []}
        for n in explain:
            if n in types and types[n] != 1:
                raise ValueError(f"{query!r}: explain name {n} is not a unique display name")
            if n not in types and n not in people and cat != "not_present":
                raise ValueError(f"{query!r}: explain name {n} is not in {var}")
        n_cat = sum(c["category"] == cat and c["id"].startswith(batch[0] + "-") for c in cases) + 1
        c: dict[str, Any] = {
            "id": f"{batch[0]}-{cat}-{n_cat:02d}",
            "variant": var,
            "query": query,
            "category": cat,
            "level": level,
            "form": form,
            "explain": explain,
        }
        if grounding is not None:
            c["grounding"] = grounding
        c.update(extra)
        cases.append(c)

    def pddl(
        cat: str,
        var: str,
        query: str,
        spec: dict[str, Any],
        explain: list[str],
        bindings: dict[str, str],
        pre: list[str],
        unsat: list[str],
    ) -> None:
        case(
            cat,
            var,
            query,
            "AS",
            "structured",
            spec,
            explain,
            pddl=True,
            preconditions=pre,
            unsatisfied=unsat,
            bindings=bindings,
        )

    def rel(var: str, types: set[str], relation: str, anchor: str) -> list[str]:
        return related(build_scene(variants, var, kitchen), types, relation, anchor)

    # --------------------------------------------------------------- variants
    base = "base"
    stove = variant("ho_stove", STOVE)
    left2 = variant("ho_left2", LEFT2)
    fridge_side = variant("ho_fridge_side", FRIDGE_SIDE)
    back = variant("ho_back", BACK)
    light = variant("ho_light", LIGHT_SIDE)
    fridge_open = variant("ho_fridge_open", FRIDGE_SIDE, ["set", FRIDGE, {"isOpen": True}])
    hold_knife_home = variant("ho_home_knife", HOME, ["hold", KNIFE])
    hold_apple_home = variant("ho_home_apple", HOME, ["hold", APPLE])
    hold_tomato_back = variant("ho_back_tomato", BACK, ["hold", TOMATO])
    hold_bread_left2 = variant("ho_left2_bread", LEFT2, ["hold", BREAD])
    hold_bread_home = variant("ho_home_bread", HOME, ["hold", BREAD])
    hold_mug_stove = variant("ho_stove_mug", STOVE, ["hold", MUG])
    hold_apple_stove = variant("ho_stove_apple", STOVE, ["hold", APPLE])
    hold_tomato_stove = variant("ho_stove_tomato", STOVE, ["hold", TOMATO])
    hold_apple_light = variant("ho_light_apple", LIGHT_SIDE, ["hold", APPLE])
    hold_spatula_left2 = variant("ho_left2_spatula", LEFT2, ["hold", SPATULA])
    hold_knife_back = variant("ho_back_knife", BACK, ["hold", KNIFE])
    veg_only_lettuce = variant("ho_only_lettuce", LEFT, ["remove", TOMATO], ["remove", POTATO])
    no_tomato_fridge = variant("ho_no_tomato_fridge", FRIDGE_SIDE, ["remove", TOMATO])
    no_tomato_home = variant("ho_no_tomato_home", HOME, ["remove", TOMATO])
    no_tomato_mug = variant("ho_no_tomato_mug", HOME, ["remove", TOMATO], ["hold", MUG])
    no_fruit = variant("ho_no_fruit", HOME, ["remove", TOMATO], ["remove", APPLE])
    dirty_bowl = variant(
        "ho_two_bowls_one_dirty",
        HOME,
        ["clone", BOWL, "Bowl|+00.05|+01.10|-00.55", {"x": 0.05, "z": -0.55}, ISLAND],
        ["set", "Bowl|+00.05|+01.10|-00.55", {"isDirty": True}],
    )
    two_tomatoes = variant(
        "ho_two_tomatoes",
        HOME,
        ["clone", TOMATO, "Tomato|-00.20|+01.14|-00.95", {"x": -0.20, "z": -0.95}, ISLAND],
    )
    two_mugs = variant(
        "ho_two_mugs",
        LEFT,
        ["clone", MUG, "Mug|-01.76|+00.90|-00.35", {"x": -1.76, "z": -0.35}, LEFT_COUNTER],
    )
    two_potatoes = variant(
        "ho_two_potatoes",
        POT_SIDE,
        ["clone", POTATO, "Potato|-01.45|+00.93|-02.25", {"x": -1.45, "z": -2.25}, LEFT_COUNTER],
    )
    potato_in_pan = variant("ho_potato_in_pan", BACK, ["put", POTATO, PAN])
    potato_in_pot = variant("ho_potato_in_pot", POT_SIDE, ["put", POTATO, POT])
    spoon_in_mug = variant("ho_spoon_in_mug", LEFT, ["put", SPOON, MUG])
    mug_in_coffee = variant("ho_mug_in_coffee_cup", LEFT2, ["put", MUG, COFFEE], ["hold", CUP])
    bread_in_toaster = variant(
        "ho_bread_in_toaster_apple", LEFT2, ["put", BREAD, TOASTER], ["hold", APPLE]
    )
    lettuce_in_bowl = variant("ho_lettuce_in_bowl", HOME, ["put", LETTUCE, BOWL])
    fridge_blocked = variant(
        "ho_fridge_blocked", FRIDGE_SIDE, ["add", CHAIR_OBJ], ["blocked", FRIDGE, [CHAIR]]
    )
    micro_blocked = variant("ho_micro_blocked", STOVE, ["blocked", MICRO, [KETTLE]])
    tomato_blocked = variant("ho_tomato_blocked", HOME, ["blocked", TOMATO, [BOWL]])
    lettuce_blocked = variant(
        "ho_lettuce_blocked",
        LEFT,
        ["remove", TOMATO],
        ["remove", POTATO],
        ["blocked", LETTUCE, [TOWEL]],
    )
    lettuce_in_fridge = variant(
        "ho_lettuce_in_fridge",
        FRIDGE_SIDE,
        ["remove", TOMATO],
        ["remove", POTATO],
        ["put", LETTUCE, FRIDGE],
    )
    dirty_mug_cabinet = variant(
        "ho_dirty_mug_in_cabinet",
        POT_SIDE,
        ["put", MUG, LOW_LEFT_CABINET],
        ["set", MUG, {"isDirty": True}],
    )
    bread_sliced = variant(
        "ho_bread_sliced_knife", LEFT, ["hold", KNIFE], ["set", BREAD, {"isSliced": True}]
    )
    fridge_open_egg = variant(
        "ho_fridge_open_holding_egg", FRIDGE_SIDE, ["set", FRIDGE, {"isOpen": True}], ["hold", EGG]
    )
    one_stool = variant("ho_one_stool", HOME, ["remove", FAR_STOOL])
    lucia_ready = variant("ho_lucia_ready", HOME, ["hold", APPLE], human("Lucia", HOME, 0.4))
    lucia_far = variant("ho_lucia_far", HOME, ["hold", APPLE], human("Lucia", HOME, 1.5))
    lucia_mid = variant("ho_lucia_1m2", HOME, ["hold", APPLE], human("Lucia", HOME, 1.2))
    lucia_away = variant(
        "ho_lucia_not_looking", HOME, ["hold", APPLE], human("Lucia", HOME, 0.4, looking=False)
    )
    lucia_busy = variant(
        "ho_lucia_hands_full", HOME, ["hold", APPLE], human("Lucia", HOME, 0.4, hands=False)
    )
    lucia_near = variant("ho_lucia_near", HOME, human("Lucia", HOME, 0.4))
    lucia_blocked = variant(
        "ho_lucia_blocked",
        HOME,
        human("Lucia", HOME, 0.4),
        ["blocked", "person_1", [BOWL]],
    )
    stranger = variant("ho_stranger", HOME, ["hold", APPLE], human(None, HOME, 0.4))
    marco = variant("ho_marco_only", HOME, human("Marco", HOME, 0.4))

    # --------------------------------------------------------------- none
    case("none", base, "could you grab the tomato for me?", "AS", "natural",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"the tomato": [TOMATO]})  # fmt: skip
    case("none", base, "pick(ButterKnife)", "AS", "structured",
         {"act": "pick", "t": BKNIFE}, ["ButterKnife"], {"ButterKnife": [BKNIFE]})  # fmt: skip
    case("none", left2, "switch on the toaster please", "AS", "natural",
         {"act": "turnon", "t": TOASTER}, ["Toaster"], {"the toaster": [TOASTER]})  # fmt: skip
    case("none", left2, "turnon(CoffeeMachine)", "AS", "structured",
         {"act": "turnon", "t": COFFEE}, ["CoffeeMachine"], {"CoffeeMachine": [COFFEE]})  # fmt: skip
    case("none", stove, "Open the microwave", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave"], {"the microwave": [MICRO]})  # fmt: skip
    case("none", fridge_open, "take the egg out of the fridge", "AR", "natural",
         {"act": "pick", "t": EGG}, ["Egg"])  # fmt: skip
    case("none", hold_tomato_back, "could you put the tomato into the pan", "AS", "natural",
         {"act": "place", "o": TOMATO, "t": PAN}, ["Pan"],
         {"the tomato": [TOMATO], "the pan": [PAN]})  # fmt: skip
    case("none", hold_bread_left2, "put the bread in the toaster", "AS", "natural",
         {"act": "place", "o": BREAD, "t": TOASTER}, ["Toaster"])  # fmt: skip
    assert rel(veg_only_lettuce, {"Lettuce", "Tomato", "Potato"}, "on", LEFT_COUNTER) == [LETTUCE]
    case("none", veg_only_lettuce, "please take the vegetable", "AN", "natural",
         {"act": "pick", "t": LETTUCE}, ["Lettuce"], {"the vegetable": [LETTUCE]})  # fmt: skip
    utensils = {"ButterKnife", "Knife", "Fork", "Spoon", "Spatula", "Ladle"}
    assert rel(base, utensils, "near", TOMATO) == [BKNIFE]
    case("none", base, "Could you pick up the utensil next to the tomato?", "AR", "natural",
         {"act": "pick", "t": BKNIFE}, ["ButterKnife"],
         {"the utensil next to the tomato": [BKNIFE]})  # fmt: skip
    assert rel(base, {"Bowl"}, "left", TOMATO) == [BOWL]
    case("none", base, "grab the bowl to the left of the tomato", "AR", "natural",
         {"act": "pick", "t": BOWL}, ["Bowl"],
         {"the bowl to the left of the tomato": [BOWL]})  # fmt: skip
    case("none", lucia_near, "go over to Lucia", "AS", "natural",
         {"act": "approach", "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("none", lucia_ready, "Could you pass the apple to Lucia?", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Apple", "Lucia"])  # fmt: skip
    case("none", light, "switch off the light", "AN", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch"], {"the light": [LIGHT]})  # fmt: skip
    case("none", fridge_open, "Shut the fridge, please.", "AS", "natural",
         {"act": "close", "t": FRIDGE}, ["Fridge"], {"the fridge": [FRIDGE]})  # fmt: skip
    case("none", hold_knife_home, "cut the tomato", "AS", "natural",
         {"act": "slice", "t": TOMATO}, ["Tomato"], {"the tomato": [TOMATO]})  # fmt: skip
    assert rel(dirty_bowl, {"Bowl"}, "on", ISLAND) == sorted([BOWL, "Bowl|+00.05|+01.10|-00.55"])
    case("none", dirty_bowl, "pick the dirty bowl", "AC", "natural",
         {"act": "pick", "t": "Bowl|+00.05|+01.10|-00.55"}, [],
         {"the dirty bowl": ["Bowl|+00.05|+01.10|-00.55"]})  # fmt: skip
    case("none", base, "pick up the tomatoe", "AS", "natural",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"the tomatoe": [TOMATO]})  # fmt: skip
    case("none", stove, "open the micowave", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave"], {"the micowave": [MICRO]})  # fmt: skip
    case("none", no_tomato_fridge, "grab the fruit", "AN", "natural",
         {"act": "pick", "t": APPLE}, ["Apple"], {"the fruit": [APPLE]})  # fmt: skip
    case("none", left2, "turn on the toaster that is off", "AC", "natural",
         {"act": "turnon", "t": TOASTER}, ["Toaster"])  # fmt: skip
    pddl("none", back, "(open tiago drawer3)", {"act": "open", "t": SPOON_DRAWER}, [],
         {"r": "tiago", "d": SPOON_DRAWER}, ["(hand_free tiago)", "(closed drawer3)"], [])  # fmt: skip
    pddl("none", hold_knife_home, "(slice tiago tomato knife)", {"act": "slice", "t": TOMATO},
         ["Tomato"], {"r": "tiago", "o": "Tomato", "k": "Knife"},
         ["(holding tiago knife)", "(sliceable tomato)"], [])  # fmt: skip

    # --------------------------------------------------------------- ambiguity
    case("ambiguity", base, "Could you open the drawer?", "AS", "natural",
         {"ground": DRAWERS}, [], {"the drawer": DRAWERS})  # fmt: skip
    case("ambiguity", base, "open(Cabinet)", "AS", "structured",
         {"ground": CABINETS}, [], {"Cabinet": CABINETS})  # fmt: skip
    all_utensils = of_types(kitchen, utensils)
    case("ambiguity", base, "take the utensil", "AN", "natural",
         {"ground": all_utensils}, [], {"the utensil": all_utensils})  # fmt: skip
    appliances = [MICRO, TOASTER, COFFEE]  # at least these: the ambiguity holds either way
    case("ambiguity", base, "turn on the appliance", "AN", "natural",
         {"ground": appliances}, [])  # fmt: skip
    assert rel(base, {"Vase"}, "on", MID_SHELF) == [VASE_A, VASE_B]
    case("ambiguity", base, "pick up the vase on the shelf", "AR", "natural",
         {"ground": [VASE_A, VASE_B]}, [])  # fmt: skip
    mugs = of_types(build_scene(variants, two_mugs, kitchen), {"Mug"})
    case("ambiguity", two_mugs, "pick(Mug)", "AS", "structured",
         {"ground": mugs}, [], {"Mug": mugs})  # fmt: skip
    potatoes = of_types(build_scene(variants, two_potatoes, kitchen), {"Potato"})
    case("ambiguity", two_potatoes, "pick up the raw potato", "AC", "natural",
         {"ground": potatoes}, [], {"the raw potato": potatoes})  # fmt: skip
    tomatoes = rel(two_tomatoes, {"Tomato"}, "right", BOWL)
    assert len(tomatoes) == 2
    case("ambiguity", two_tomatoes, "pick the tomato to the right of the bowl", "AR", "natural",
         {"ground": tomatoes}, [], {"the tomato to the right of the bowl": tomatoes})  # fmt: skip
    pddl("ambiguity", stove, "(turnon tiago knob)", {"ground": KNOBS}, [],
         {"r": "tiago", "k": "StoveKnob"}, ["(hand_free tiago)"], [])  # fmt: skip
    case("ambiguity", base, "pick up the vase", "AS", "natural",
         {"ground": [VASE_A, VASE_B]}, [], {"the vase": [VASE_A, VASE_B]})  # fmt: skip
    case("ambiguity", base, "open the closed cabinet", "AC", "natural",
         {"ground": CABINETS}, [], {"the closed cabinet": CABINETS})  # fmt: skip
    dishware = of_types(kitchen, {"Bowl", "Cup", "Mug", "Plate"})
    case("ambiguity", base, "Pick up the dishware please", "AN", "natural",
         {"ground": dishware}, [])  # fmt: skip
    case("ambiguity", stove, "turn off the stove knob", "AS", "natural",
         {"ground": KNOBS}, [], {"the stove knob": KNOBS})  # fmt: skip

    # --------------------------------------------------------------- not_present
    case("not_present", base, "pick up the banana", "AS", "natural",
         {"ground": []}, ["banana"], {"the banana": []})  # fmt: skip
    case("not_present", base, "turnon(Television)", "AS", "structured",
         {"ground": []}, ["Television"], {"Television": []})  # fmt: skip
    case("not_present", base, "could u open the dishwasher", "AS", "natural",
         {"ground": []}, ["dishwasher"], {"the dishwasher": []})  # fmt: skip
    case("not_present", base, "pick up the sliced tomato", "AC", "natural",
         {"ground": []}, ["tomato"], {"the sliced tomato": []})  # fmt: skip
    case("not_present", base, "grab the dirty mug", "AC", "natural",
         {"ground": []}, ["mug"], {"the dirty mug": []})  # fmt: skip
    assert rel(base, {"Apple"}, "in", FRIDGE) == []
    case("not_present", base, "pick the apple in the fridge", "AR", "natural",
         {"ground": []}, ["apple"])  # fmt: skip
    assert rel(base, {"Spoon"}, "near", TOASTER) == []
    case("not_present", base, "take the spoon next to the toaster", "AR", "natural",
         {"ground": []}, ["spoon"], {"the spoon next to the toaster": []})  # fmt: skip
    case("not_present", stranger, "give the apple to Carlos", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "nobody"}, ["Carlos"])  # fmt: skip
    case("not_present", marco, "approach(Lucia)", "AS", "structured",
         {"act": "approach", "p": "nobody"}, ["Lucia"])  # fmt: skip
    case("not_present", no_fruit, "could you grab a fruit", "AN", "natural",
         {"ground": []}, ["fruit"], {"a fruit": []})  # fmt: skip
    pddl("not_present", base, "(pick tiago pills shelf2)", {"ground": []}, ["pills"],
         {"r": "tiago", "o": "pills", "l": "Shelf|+01.75|+00.88|-02.56"},
         ["(hand_free tiago)", "(at pills shelf2)"], [])  # fmt: skip
    case("not_present", base, "pick up the bananna", "AS", "natural",
         {"ground": []}, [], {"the bananna": []})  # fmt: skip
    case("not_present", base, "close the open drawer", "AC", "natural",
         {"ground": []}, ["drawer"], {"the open drawer": []})  # fmt: skip

    # --------------------------------------------------------------- out_of_reach
    case("out_of_reach", base, "pick(Apple)", "AS", "structured",
         {"act": "pick", "t": APPLE}, ["Apple"], {"Apple": [APPLE]})  # fmt: skip
    case("out_of_reach", base, "Could you grab the credit card?", "AS", "natural",
         {"act": "pick", "t": CARD}, ["CreditCard"], {"the credit card": [CARD]})  # fmt: skip
    case("out_of_reach", base, "turn off the lights", "AN", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch"], {"the lights": [LIGHT]})  # fmt: skip
    case("out_of_reach", base, "switch on the coffee machine", "AS", "natural",
         {"act": "turnon", "t": COFFEE}, ["CoffeeMachine"],
         {"the coffee machine": [COFFEE]})  # fmt: skip
    case("out_of_reach", base, "Could you please open up the fridge for me", "AS", "natural",
         {"act": "open", "t": FRIDGE}, ["Fridge"])  # fmt: skip
    case("out_of_reach", hold_bread_home, "put the bread in the toaster", "AS", "natural",
         {"act": "place", "o": BREAD, "t": TOASTER}, ["Toaster"],
         {"the bread": [BREAD], "the toaster": [TOASTER]})  # fmt: skip
    assert rel(base, {"CreditCard"}, "near", APPLE) == [CARD]
    case("out_of_reach", base, "grab the credit card near the apple", "AR", "natural",
         {"act": "pick", "t": CARD}, ["CreditCard"],
         {"the credit card near the apple": [CARD]})  # fmt: skip
    case("out_of_reach", base, "pick up the raw potato", "AC", "natural",
         {"act": "pick", "t": POTATO}, ["Potato"], {"the raw potato": [POTATO]})  # fmt: skip
    case("out_of_reach", lucia_far, "hand Lucia the apple", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    pddl("out_of_reach", base, "(open tiago fridge)", {"act": "open", "t": FRIDGE}, ["Fridge"],
         {"r": "tiago", "o": "Fridge"}, ["(hand_free tiago)", "(closed fridge)"], [])  # fmt: skip
    case("out_of_reach", no_tomato_home, "pick up the fruit", "AN", "natural",
         {"act": "pick", "t": APPLE}, ["Apple"], {"the fruit": [APPLE]})  # fmt: skip
    case("out_of_reach", base, "turn on the faucet", "AS", "natural",
         {"act": "turnon", "t": FAUCET}, ["Faucet"], {"the faucet": [FAUCET]})  # fmt: skip
    pddl("out_of_reach", lucia_mid, "(handover tiago apple lucia)",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"],
         {"r": "tiago", "o": "Apple", "h": "Lucia"}, ["(holding tiago apple)"], [])  # fmt: skip

    # --------------------------------------------------------------- obstructed
    case("obstructed", potato_in_pan, "pick up the pan", "AS", "natural",
         {"act": "pick", "t": PAN}, ["Pan", "Potato"], {"the pan": [PAN]})  # fmt: skip
    case("obstructed", spoon_in_mug, "pick(Mug)", "AS", "structured",
         {"act": "pick", "t": MUG}, ["Mug", "Spoon"], {"Mug": [MUG]})  # fmt: skip
    case("obstructed", mug_in_coffee, "place(Cup, CoffeeMachine)", "AS", "structured",
         {"act": "place", "o": CUP, "t": COFFEE}, ["CoffeeMachine", "Mug"],
         {"Cup": [CUP], "CoffeeMachine": [COFFEE]})  # fmt: skip
    case("obstructed", bread_in_toaster, "put the apple inside the toaster", "AS", "natural",
         {"act": "place", "o": APPLE, "t": TOASTER}, ["Toaster", "Bread"])  # fmt: skip
    case("obstructed", fridge_blocked, "open(Fridge)", "AS", "structured",
         {"act": "open", "t": FRIDGE}, ["Fridge", "Chair"], {"Fridge": [FRIDGE]})  # fmt: skip
    case("obstructed", micro_blocked, "can you open the microwave", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave", "Kettle"])  # fmt: skip
    case("obstructed", fridge_blocked, "go to the fridge", "AS", "natural",
         {"act": "approach", "t": FRIDGE}, ["Fridge", "Chair"])  # fmt: skip
    case("obstructed", lucia_blocked, "go to Lucia", "AS", "natural",
         {"act": "approach", "p": "person_1"}, ["Lucia", "Bowl"])  # fmt: skip
    assert rel(potato_in_pan, {"Pan"}, "left", SPATULA) == [PAN]
    case("obstructed", potato_in_pan, "lift the pan to the left of the spatula", "AR", "natural",
         {"act": "pick", "t": PAN}, ["Pan", "Potato"],
         {"the pan to the left of the spatula": [PAN]})  # fmt: skip
    case("obstructed", lettuce_in_bowl, "pick the clean bowl", "AC", "natural",
         {"act": "pick", "t": BOWL}, ["Bowl", "Lettuce"], {"the clean bowl": [BOWL]})  # fmt: skip
    case("obstructed", tomato_blocked, "pick(Tomato)", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato", "Bowl"], {"Tomato": [TOMATO]})  # fmt: skip
    pddl("obstructed", potato_in_pan, "(pick tiago pan counter2)", {"act": "pick", "t": PAN},
         ["Pan", "Potato"], {"r": "tiago", "o": "Pan", "l": BACK_COUNTER},
         ["(hand_free tiago)", "(clear pan)"], ["(clear pan)"])  # fmt: skip
    case("obstructed", lettuce_blocked, "take the vegetable", "AN", "natural",
         {"act": "pick", "t": LETTUCE}, ["Lettuce", "PaperTowelRoll"],
         {"the vegetable": [LETTUCE]})  # fmt: skip
    case("obstructed", potato_in_pot, "lift the pot off the counter", "AS", "natural",
         {"act": "pick", "t": POT}, ["Pot", "Potato"])  # fmt: skip

    # --------------------------------------------------------------- wrong_state
    case("wrong_state", base, "turnoff(Faucet)", "AS", "structured",
         {"act": "turnoff", "t": FAUCET}, ["Faucet"], {"Faucet": [FAUCET]})  # fmt: skip
    case("wrong_state", light, "turnon(LightSwitch)", "AS", "structured",
         {"act": "turnon", "t": LIGHT}, ["LightSwitch"], {"LightSwitch": [LIGHT]})  # fmt: skip
    case("wrong_state", back, "pick up the spoon", "AS", "natural",
         {"act": "pick", "t": SPOON}, ["Spoon"], {"the spoon": [SPOON]})  # fmt: skip
    case("wrong_state", hold_tomato_stove, "Place the tomato inside the microwave, please.",
         "AS", "natural", {"act": "place", "o": TOMATO, "t": MICRO}, ["Microwave"])  # fmt: skip
    case("wrong_state", base, "take the wine bottle", "AS", "natural",
         {"act": "pick", "t": WINE}, ["WineBottle"], {"the wine bottle": [WINE]})  # fmt: skip
    case("wrong_state", back, "pick(Plate)", "AS", "structured",
         {"act": "pick", "t": PLATE}, ["Plate"], {"Plate": [PLATE]})  # fmt: skip
    case("wrong_state", dirty_mug_cabinet, "pick the dirty mug", "AC", "natural",
         {"act": "pick", "t": MUG}, ["Mug"], {"the dirty mug": [MUG]})  # fmt: skip
    case("wrong_state", lucia_away, "pass the apple to Lucia please", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("wrong_state", lucia_busy, "handover(Apple, Lucia)", "AS", "structured",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    assert rel(fridge_side, {"Egg"}, "in", FRIDGE) == [EGG]
    case("wrong_state", fridge_side, "take the egg out of the fridge", "AR", "natural",
         {"act": "pick", "t": EGG}, ["Egg", "Fridge"])  # fmt: skip
    case("wrong_state", stove, "close(Microwave)", "AS", "structured",
         {"act": "close", "t": MICRO}, ["Microwave"], {"Microwave": [MICRO]})  # fmt: skip
    case("wrong_state", bread_sliced, "slice the bread", "AS", "natural",
         {"act": "slice", "t": BREAD}, ["Bread"], {"the bread": [BREAD]})  # fmt: skip
    pddl("wrong_state", fridge_side, "(close tiago fridge)", {"act": "close", "t": FRIDGE},
         ["Fridge"], {"r": "tiago", "o": "Fridge"}, ["(hand_free tiago)", "(opened fridge)"],
         ["(opened fridge)"])  # fmt: skip
    case("wrong_state", fridge_open, "open the frige", "AS", "natural",
         {"act": "open", "t": FRIDGE}, ["Fridge"], {"the frige": [FRIDGE]})  # fmt: skip
    case("wrong_state", lettuce_in_fridge, "pick the vegetable", "AN", "natural",
         {"act": "pick", "t": LETTUCE}, ["Lettuce", "Fridge"],
         {"the vegetable": [LETTUCE]})  # fmt: skip
    case("wrong_state", back, "grab the plate in the cabinet", "AR", "natural",
         {"act": "pick", "t": PLATE}, ["Plate"])  # fmt: skip

    # --------------------------------------------------------------- wrong_property
    case("wrong_property", one_stool, "pick up the stool", "AS", "natural",
         {"act": "pick", "t": "Stool|+00.70|+00.00|-00.51"}, ["Stool"],
         {"the stool": ["Stool|+00.70|+00.00|-00.51"]})  # fmt: skip
    case("wrong_property", base, "open(Toaster)", "AS", "structured",
         {"act": "open", "t": TOASTER}, ["Toaster"], {"Toaster": [TOASTER]})  # fmt: skip
    case("wrong_property", base, "Please turn on the kettle", "AS", "natural",
         {"act": "turnon", "t": KETTLE}, ["Kettle"], {"the kettle": [KETTLE]})  # fmt: skip
    case("wrong_property", base, "pick(Microwave)", "AS", "structured",
         {"act": "pick", "t": MICRO}, ["Microwave"], {"Microwave": [MICRO]})  # fmt: skip
    case("wrong_property", base, "pick up the light", "AN", "natural",
         {"act": "pick", "t": LIGHT}, ["LightSwitch"], {"the light": [LIGHT]})  # fmt: skip
    assert rel(base, {"Vase"}, "closest", BOTTLE) == [VASE_A]
    case("wrong_property", base, "open the vase closest to the bottle", "AR", "natural",
         {"act": "open", "t": VASE_A}, [],
         {"the vase closest to the bottle": [VASE_A]})  # fmt: skip
    case("wrong_property", hold_knife_home, "cut the clean bowl in half", "AC", "natural",
         {"act": "slice", "t": BOWL}, ["Bowl"], {"the clean bowl": [BOWL]})  # fmt: skip
    pddl("wrong_property", base, "(pick tiago island)", {"act": "pick", "t": ISLAND}, [],
         {"r": "tiago", "o": ISLAND}, ["(hand_free tiago)"], [])  # fmt: skip
    case("wrong_property", hold_apple_home, "put the apple on the book", "AS", "natural",
         {"act": "place", "o": APPLE, "t": BOOK}, ["Book"],
         {"the apple": [APPLE], "the book": [BOOK]})  # fmt: skip
    case("wrong_property", hold_tomato_back, "place(Tomato, Kettle)", "AS", "structured",
         {"act": "place", "o": TOMATO, "t": KETTLE}, ["Kettle"],
         {"Tomato": [TOMATO], "Kettle": [KETTLE]})  # fmt: skip
    case("wrong_property", base, "open the shelving unit", "AS", "natural",
         {"act": "open", "t": I("ShelvingUnit")}, ["ShelvingUnit"],
         {"the shelving unit": [I("ShelvingUnit")]})  # fmt: skip
    case("wrong_property", hold_knife_back, "slice(Kettle)", "AS", "structured",
         {"act": "slice", "t": KETTLE}, ["Kettle"], {"Kettle": [KETTLE]})  # fmt: skip

    # --------------------------------------------------------------- robot_state
    case("robot_state", hold_apple_home, "could you grab the butter knife", "AS", "natural",
         {"act": "pick", "t": BKNIFE}, ["ButterKnife", "Apple"],
         {"the butter knife": [BKNIFE]})  # fmt: skip
    case("robot_state", hold_mug_stove, "open the microwave please", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave", "Mug"],
         {"the microwave": [MICRO]})  # fmt: skip
    case("robot_state", hold_apple_light, "turn off the light switch", "AS", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch", "Apple"],
         {"the light switch": [LIGHT]})  # fmt: skip
    case("robot_state", base, "put the tomato on the plate", "AS", "natural",
         {"act": "place", "o": TOMATO, "t": PLATE}, ["Tomato"],
         {"the tomato": [TOMATO], "the plate": [PLATE]})  # fmt: skip
    case("robot_state", base, "place(Bread, Toaster)", "AS", "structured",
         {"act": "place", "o": BREAD, "t": TOASTER}, ["Bread"],
         {"Bread": [BREAD], "Toaster": [TOASTER]})  # fmt: skip
    case("robot_state", base, "slice the bread", "AS", "natural",
         {"act": "slice", "t": BREAD}, ["Bread"], {"the bread": [BREAD]})  # fmt: skip
    case("robot_state", hold_apple_home, "cut up the tomato", "AS", "natural",
         {"act": "slice", "t": TOMATO}, ["Tomato"], {"the tomato": [TOMATO]})  # fmt: skip
    case("robot_state", no_tomato_mug, "pick up the fruit", "AN", "natural",
         {"act": "pick", "t": APPLE}, ["Apple", "Mug"], {"the fruit": [APPLE]})  # fmt: skip
    case("robot_state", hold_apple_home, "pick up the utensil next to the tomato", "AR",
         "natural", {"act": "pick", "t": BKNIFE}, ["ButterKnife", "Apple"],
         {"the utensil next to the tomato": [BKNIFE]})  # fmt: skip
    case("robot_state", hold_apple_stove, "open the closed microwave", "AC", "natural",
         {"act": "open", "t": MICRO}, ["Microwave", "Apple"],
         {"the closed microwave": [MICRO]})  # fmt: skip
    pddl("robot_state", back, "(place tiago tomato pan)",
         {"act": "place", "o": TOMATO, "t": PAN}, ["Tomato"],
         {"r": "tiago", "o": "Tomato", "d": "Pan"}, ["(holding tiago tomato)"],
         ["(holding tiago tomato)"])  # fmt: skip
    case("robot_state", fridge_open_egg, "close the fridge", "AS", "natural",
         {"act": "close", "t": FRIDGE}, ["Fridge", "Egg"], {"the fridge": [FRIDGE]})  # fmt: skip
    case("robot_state", hold_spatula_left2, "turnon(Toaster)", "AS", "structured",
         {"act": "turnon", "t": TOASTER}, ["Toaster", "Spatula"],
         {"Toaster": [TOASTER]})  # fmt: skip

    # =============================================================== batch 2 (stress)
    batch[0] = "ho2"
    apple_blocked = variant("ho2_apple_blocked", HOME, ["blocked", APPLE, [BOWL]])
    fridge_open_far = variant("ho2_fridge_open_far", HOME, ["set", FRIDGE, {"isOpen": True}])
    fridge_open_blocked = variant(
        "ho2_fridge_open_blocked",
        FRIDGE_SIDE,
        ["set", FRIDGE, {"isOpen": True}],
        ["add", CHAIR_OBJ],
        ["blocked", FRIDGE, [CHAIR]],
    )
    lucia_far_away = variant(
        "ho2_lucia_far_not_looking",
        HOME,
        ["hold", APPLE],
        human("Lucia", HOME, 1.5, looking=False),
    )
    toaster_full_far = variant(
        "ho2_toaster_full_far", HOME, ["put", BREAD, TOASTER], ["hold", APPLE]
    )
    apple_fridge_open = variant(
        "ho2_apple_fridge_open",
        FRIDGE_SIDE,
        ["set", FRIDGE, {"isOpen": True}],
        ["hold", APPLE],
    )
    apple_back = variant("ho2_back_apple", BACK, ["hold", APPLE])
    cup_left2 = variant("ho2_left2_cup", LEFT2, ["hold", CUP])
    micro_open_apple = variant(
        "ho2_micro_open_apple", STOVE, ["set", MICRO, {"isOpen": True}], ["hold", APPLE]
    )
    two_people = variant(
        "ho2_lucia_and_marco",
        HOME,
        ["hold", APPLE],
        human("Lucia", HOME, 0.4),
        human("Marco", ["agent", {"x": 0.0, "z": -1.25, "yaw": 90.0}], 1.5, hid="person_2"),
    )
    stranger_mug = variant("ho2_stranger_mug", HOME, ["hold", MUG], human(None, HOME, 0.4))
    lettuce_knife = variant(
        "ho2_only_lettuce_knife", LEFT, ["remove", TOMATO], ["remove", POTATO], ["hold", KNIFE]
    )
    no_fruit_knife = variant(
        "ho2_no_fruit_knife", HOME, ["remove", TOMATO], ["remove", APPLE], ["hold", KNIFE]
    )
    hold_tomato_home = variant("ho2_home_tomato", HOME, ["hold", TOMATO])
    light_on_far = "base"

    # priority combinations (two issues hold; the doc's order decides)
    case("ambiguity", hold_apple_home, "open the drawer please", "AS", "natural",
         {"ground": DRAWERS}, [], {"the drawer": DRAWERS})  # fmt: skip
    case("not_present", hold_apple_home, "pick up the banana", "AS", "natural",
         {"ground": []}, ["banana"], {"the banana": []})  # fmt: skip
    case("robot_state", hold_apple_home, "pick(Microwave)", "AS", "structured",
         {"act": "pick", "t": MICRO}, ["Microwave", "Apple"], {"Microwave": [MICRO]})  # fmt: skip
    case("robot_state", hold_apple_home, "turn on the kettle", "AS", "natural",
         {"act": "turnon", "t": KETTLE}, ["Kettle", "Apple"], {"the kettle": [KETTLE]})  # fmt: skip
    case("wrong_state", fridge_open_blocked, "open the fridge", "AS", "natural",
         {"act": "open", "t": FRIDGE}, ["Fridge"], {"the fridge": [FRIDGE]})  # fmt: skip
    case("obstructed", apple_blocked, "pick up the apple", "AS", "natural",
         {"act": "pick", "t": APPLE}, ["Apple", "Bowl"], {"the apple": [APPLE]})  # fmt: skip
    case("wrong_state", fridge_open_far, "open(Fridge)", "AS", "structured",
         {"act": "open", "t": FRIDGE}, ["Fridge"], {"Fridge": [FRIDGE]})  # fmt: skip
    case("wrong_state", lucia_far_away, "give Lucia the apple", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("obstructed", toaster_full_far, "put the apple in the toaster", "AS", "natural",
         {"act": "place", "o": APPLE, "t": TOASTER}, ["Toaster", "Bread"])  # fmt: skip
    case("out_of_reach", hold_knife_home, "slice the apple", "AS", "natural",
         {"act": "slice", "t": APPLE}, ["Apple"], {"the apple": [APPLE]})  # fmt: skip
    case("none", apple_fridge_open, "put the apple in the fridge", "AS", "natural",
         {"act": "place", "o": APPLE, "t": FRIDGE}, ["Fridge"],
         {"the apple": [APPLE], "the fridge": [FRIDGE]})  # fmt: skip
    case("wrong_state", hold_apple_home, "place(Apple, Fridge)", "AS", "structured",
         {"act": "place", "o": APPLE, "t": FRIDGE}, ["Fridge"],
         {"Apple": [APPLE], "Fridge": [FRIDGE]})  # fmt: skip
    case("wrong_property", hold_knife_home, "slice(Toaster)", "AS", "structured",
         {"act": "slice", "t": TOASTER}, ["Toaster"], {"Toaster": [TOASTER]})  # fmt: skip
    case("out_of_reach", fridge_open_far, "grab the egg", "AS", "natural",
         {"act": "pick", "t": EGG}, ["Egg"], {"the egg": [EGG]})  # fmt: skip
    case("ambiguity", hold_apple_home, "open the closed cabinet", "AC", "natural",
         {"ground": CABINETS}, [], {"the closed cabinet": CABINETS})  # fmt: skip
    case("not_present", stranger_mug, "handover(Mug, Lucia)", "AS", "structured",
         {"act": "handover", "o": MUG, "p": "nobody"}, ["Lucia"])  # fmt: skip

    # numbered display names, objectIds, case and typos in structured queries
    case("wrong_property", base, "pick(Cabinet_4)", "AS", "structured",
         {"act": "pick", "t_any": CABINETS}, [])  # fmt: skip
    case("robot_state", hold_apple_home, "open(Drawer_2)", "AS", "structured",
         {"act": "open", "t_any": DRAWERS}, ["Apple"])  # fmt: skip
    case("none", base, f"pick({TOMATO})", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {TOMATO: [TOMATO]})  # fmt: skip
    case("none", base, "pick(tomato)", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"tomato": [TOMATO]})  # fmt: skip
    case("none", base, "PICK UP THE TOMATO!", "AS", "natural",
         {"act": "pick", "t": TOMATO}, ["Tomato"])  # fmt: skip
    case("none", base, "pick(Tomatoe)", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"Tomatoe": [TOMATO]})  # fmt: skip
    case("none", left2, "turn on the cofee machine", "AS", "natural",
         {"act": "turnon", "t": COFFEE}, ["CoffeeMachine"],
         {"the cofee machine": [COFFEE]})  # fmt: skip
    case("wrong_property", base, "pick(Floor)", "AS", "structured",
         {"act": "pick", "t": I("Floor")}, ["Floor"], {"Floor": [I("Floor")]})  # fmt: skip
    case("wrong_property", base, "pick up the window", "AS", "natural",
         {"act": "pick", "t": I("Window")}, ["Window"], {"the window": [I("Window")]})  # fmt: skip

    # everyday phrasing: gerunds, split particles, fillers
    case("none", stove, "Hey robot, would you mind opening the microwave?", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave"])  # fmt: skip
    case("none", left2, "Turn the toaster on", "AS", "natural",
         {"act": "turnon", "t": TOASTER}, ["Toaster"], {"the toaster": [TOASTER]})  # fmt: skip
    case("wrong_state", left2, "Switch the coffee machine off", "AS", "natural",
         {"act": "turnoff", "t": COFFEE}, ["CoffeeMachine"],
         {"the coffee machine": [COFFEE]})  # fmt: skip
    case("none", fridge_open, "take out the egg from the fridge", "AR", "natural",
         {"act": "pick", "t": EGG}, ["Egg"])  # fmt: skip
    case("none", base, "Can you please pick up the bowl, thanks!", "AS", "natural",
         {"act": "pick", "t": BOWL}, ["Bowl"], {"the bowl": [BOWL]})  # fmt: skip
    case("none", hold_tomato_home, "Place the tomato into the bowl", "AS", "natural",
         {"act": "place", "o": TOMATO, "t": BOWL}, ["Bowl"],
         {"the tomato": [TOMATO], "the bowl": [BOWL]})  # fmt: skip
    case("none", light, "could you turn the lights off", "AN", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch"])  # fmt: skip
    case("out_of_reach", light_on_far, "open the book", "AS", "natural",
         {"act": "open", "t": BOOK}, ["Book"], {"the book": [BOOK]})  # fmt: skip
    case("out_of_reach", base, "open(Kettle)", "AS", "structured",
         {"act": "open", "t": KETTLE}, ["Kettle"], {"Kettle": [KETTLE]})  # fmt: skip
    case("out_of_reach", hold_knife_home, "slice the potato", "AS", "natural",
         {"act": "slice", "t": POTATO}, ["Potato"], {"the potato": [POTATO]})  # fmt: skip

    # two constraints, closest, above / below
    both_left = rel(dirty_bowl, {"Bowl"}, "left", TOMATO)
    assert len(both_left) == 2
    case("ambiguity", dirty_bowl, "pick the bowl to the left of the tomato", "AR", "natural",
         {"ground": both_left}, [], {"the bowl to the left of the tomato": both_left})  # fmt: skip
    dirty = "Bowl|+00.05|+01.10|-00.55"
    case("none", dirty_bowl, "pick the dirty bowl to the left of the tomato", "AC", "natural",
         {"act": "pick", "t": dirty}, [],
         {"the dirty bowl to the left of the tomato": [dirty]})  # fmt: skip
    closest = rel(two_tomatoes, {"Tomato"}, "closest", BOWL)
    assert closest == ["Tomato|-00.20|+01.14|-00.95"]
    case("none", two_tomatoes, "pick the tomato closest to the bowl", "AR", "natural",
         {"act": "pick", "t": closest[0]}, [],
         {"the tomato closest to the bowl": closest})  # fmt: skip
    assert rel(base, {"Vase"}, "above", I("Statue")) == [VASE_B]
    case("out_of_reach", base, "pick up the vase above the statue", "AR", "natural",
         {"act": "pick", "t": VASE_B}, [], {"the vase above the statue": [VASE_B]})  # fmt: skip
    assert rel(base, {"Vase"}, "below", BOTTLE) == [VASE_A]
    case("wrong_property", base, "open the vase below the bottle", "AR", "natural",
         {"act": "open", "t": VASE_A}, [], {"the vase below the bottle": [VASE_A]})  # fmt: skip
    burners = rel(base, {"StoveBurner"}, "below", MICRO)
    assert len(burners) == 4
    case("ambiguity", stove, "pick the burner below the microwave", "AR", "natural",
         {"ground": burners}, [], {"the burner below the microwave": burners})  # fmt: skip
    assert rel(base, {"Cup"}, "above", I("SaltShaker")) == [CUP]
    case("wrong_state", stove, "grab the cup above the salt shaker", "AR", "natural",
         {"act": "pick", "t": CUP}, ["Cup"], {"the cup above the salt shaker": [CUP]})  # fmt: skip
    assert rel(base, {"Plate"}, "above", KETTLE) == [PLATE]
    case("wrong_state", back, "take the plate above the kettle", "AR", "natural",
         {"act": "pick", "t": PLATE}, ["Plate"], {"the plate above the kettle": [PLATE]})  # fmt: skip

    # people, places, categories
    case("none", two_people, "hand the apple to Lucia", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("out_of_reach", two_people, "hand the apple to Marco", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_2"}, ["Marco"])  # fmt: skip
    case("none", lucia_ready, "give the apple to lucia", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("none", apple_back, "put the apple on the pan", "AS", "natural",
         {"act": "place", "o": APPLE, "t": PAN}, ["Pan"], {"the pan": [PAN]})  # fmt: skip
    case("ambiguity", apple_back, "put the apple in the drawer", "AS", "natural",
         {"ground": DRAWERS}, [], {"the drawer": DRAWERS})  # fmt: skip
    case("none", cup_left2, "place the cup in the coffee machine", "AS", "natural",
         {"act": "place", "o": CUP, "t": COFFEE}, ["CoffeeMachine"],
         {"the cup": [CUP], "the coffee machine": [COFFEE]})  # fmt: skip
    case("none", micro_open_apple, "put the apple into the microwave", "AS", "natural",
         {"act": "place", "o": APPLE, "t": MICRO}, ["Microwave"],
         {"the microwave": [MICRO]})  # fmt: skip
    case("ambiguity", base, "turn off the electronic device", "AN", "natural",
         {"ground": [MICRO, TOASTER, COFFEE]}, [])  # fmt: skip
    case("none", lettuce_knife, "slice the vegetable", "AN", "natural",
         {"act": "slice", "t": LETTUCE}, ["Lettuce"], {"the vegetable": [LETTUCE]})  # fmt: skip
    case("not_present", no_fruit_knife, "cut a fruit", "AN", "natural",
         {"ground": []}, ["fruit"], {"a fruit": []})  # fmt: skip
    case("ambiguity", base, "turnoff(StoveKnob)", "AS", "structured",
         {"ground": KNOBS}, [], {"StoveKnob": KNOBS})  # fmt: skip

    return variants, cases


def main(argv: list[str] | None = None) -> int:
    variants, cases = build()
    # Every variant must apply cleanly to the real kitchen (and be used).
    used = {c["variant"] for c in cases}
    for v in variants:
        apply_patch(load_kitchen(), variants[v])
    unused = set(variants) - used
    if unused:
        raise ValueError(f"unused variants: {sorted(unused)}")
    (HERE / "heldout_variants.json").write_text(json.dumps(variants, indent=1) + "\n")
    with (HERE / "heldout.jsonl").open("w") as fh:
        for c in cases:
            fh.write(json.dumps(c) + "\n")
    print(f"{len(cases)} cases, {len(variants)} variants -> {HERE}")
    for key in ("category", "level", "form"):
        counts = Counter(c[key] for c in cases)
        print(f"  {key:9}", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"  pddl      {sum(bool(c.get('pddl')) for c in cases)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
