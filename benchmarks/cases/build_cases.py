"""Build the issue-detection case set from the real FloorPlan1 kitchen.

Writes, next to this file:

- ``variants.json``: ``{variant id: [patch op, ...]}``; each variant is the kitchen
  (``../shared/scenes/floorplan1_kitchen.json``) changed by its ops, applied in order by
  :func:`apply_patch`;
- ``cases.jsonl``: one case a line::

    {"id": "obstructed-01", "variant": "bowl_apple", "query": "pick(Bowl)",
     "category": "obstructed", "level": "AS", "form": "structured",
     "grounding": {"Bowl": ["Bowl|+00.27|+01.10|-00.75"]},
     "explain": ["Bowl", "Apple"]}

  ``grounding`` (when present) is what each argument phrase must ground to (for an ambiguity:
  every candidate); ``explain`` lists the display names (or people's names) a correct
  explanation mentions; PDDL cases add ``preconditions``, ``unsatisfied`` and ``bindings``.

Expected answers are set by construction, never by running a reasoner: the agent is placed
0.6 m from a target meant to be within reach and 1.6 m (or the kitchen's own distances) from
one meant to be out of it; left/right expectations are computed here with the format doc's
formula (``side`` below), independently of ``bt_raider.perception``, and a case whose
relation would sit within 5 cm of a threshold is refused.

Patch ops (JSON lists): ``["agent", {x, z, yaw}]``, ``["set", id, {flag: value}]``,
``["hold", id]``, ``["put", id, parent id]``, ``["clone", source id, new id, {x, y, z},
parent id or null, {field overrides}]``, ``["add", object dict]``, ``["remove", id]``,
``["blocked", key, [ids]]``, ``["human", {...}]``, ``["location", name, {x, z}]``,
``["robot", {...}]``.

Run: ``python3 benchmarks/cases/build_cases.py`` (prints the distribution).
"""

from __future__ import annotations

import copy
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KITCHEN = HERE.parents[2] / "shared" / "scenes" / "floorplan1_kitchen.json"
REACH_IN = 0.6  # m: a target meant to be within reach (robot.reach is 1.1 m)
OPEN_FLOOR = (0.0, -1.0)  # (x, z) the robot approaches objects from

Op = list[Any]


# --------------------------------------------------------------------------- patches
def load_kitchen(path: Path = KITCHEN) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def _objects(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
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
    objs = _objects(d)
    for pid in objs[oid].get("parentReceptacles") or []:
        parent = objs.get(pid)
        if parent and parent.get("receptacleObjectIds"):
            parent["receptacleObjectIds"] = [i for i in parent["receptacleObjectIds"] if i != oid]
    objs[oid]["parentReceptacles"] = None


def _attach(d: dict[str, Any], oid: str, pid: str) -> None:
    objs = _objects(d)
    objs[oid]["parentReceptacles"] = [pid]
    parent = objs[pid]
    parent["receptacleObjectIds"] = [*(parent.get("receptacleObjectIds") or []), oid]


def apply_patch(d: dict[str, Any], ops: list[Op]) -> dict[str, Any]:
    """Apply ``ops`` to the scene dict ``d`` in place and return it."""
    for op in ops:
        kind, args = op[0], op[1:]
        objs = _objects(d)
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


# --------------------------------------------------------------------------- geometry
class Kitchen:
    """Names, ids and geometry of the kitchen, for writing cases."""

    def __init__(self) -> None:
        self.d = load_kitchen()
        self.objs = _objects(self.d)
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
        o = _objects(d)[oid] if d is not None else self.objs[oid]
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
    objs = _objects(d)
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


# --------------------------------------------------------------------------- the cases
def build() -> tuple[dict[str, list[Op]], list[dict[str, Any]]]:
    K = Kitchen()
    I = K.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    variants: dict[str, list[Op]] = {"base": []}
    cases: list[dict[str, Any]] = []

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
        explain: list[str],
        grounding: dict[str, list[str]] | None = None,
        **extra: Any,
    ) -> None:
        n = sum(c["category"] == cat for c in cases) + 1
        c: dict[str, Any] = {
            "id": f"{cat}-{n:02d}",
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

    # Extra objects and people.
    chair_id = "Chair|-00.55|+00.00|-01.40"
    chair = {
        "objectId": chair_id,
        "objectType": "Chair",
        "position": {"x": -0.55, "y": 0.0, "z": -1.40},
        "pickupable": False,
        "moveable": True,
        "receptacle": True,
        "parentReceptacles": [I("Floor")],
        "receptacleObjectIds": [],
        "visible": True,
    }

    def medicine(oid: str, x: float, z: float) -> dict[str, Any]:
        return {
            "objectId": oid,
            "objectType": "Medicine",
            "position": {"x": x, "y": 0.97, "z": z},
            "pickupable": True,
            "parentReceptacles": [I("CounterTop_3")],
            "visible": True,
        }

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

    home = ["agent", {"x": 0.0, "z": -1.25, "yaw": 180.0}]
    counter_loc = ["location", "medicine_counter", {"x": -1.05, "z": -1.55}]
    bowl, tomato, apple, mug = I("Bowl"), I("Tomato"), I("Apple"), I("Mug")

    d0 = K.d

    def rel_set(d: dict[str, Any], anchor: str, which: str, types: set[str] | None) -> list[str]:
        out = []
        for o in d["objects"]:
            if o["objectId"] == anchor or (types and o["objectType"] not in types):
                continue
            if side(d, o["objectId"], anchor) == which:
                out.append(o["objectId"])
        return out

    # ================================================================ none
    v_apple = variant("near_apple", K.near("Apple"))
    v_fridge = variant("near_fridge", K.near("Fridge"))
    v_mw_open = variant(
        "near_microwave_open", K.near("Microwave"), ["set", I("Microwave"), {"isOpen": True}]
    )
    v_mw = variant("near_microwave", K.near("Microwave"))
    v_cm = variant("near_coffee", K.near("CoffeeMachine"))
    v_light = variant("near_light", K.near("LightSwitch"))
    v_tom_knife = variant("tomato_knife", K.near("Tomato"), ["hold", I("Knife")])
    v_let_bk = variant("lettuce_butterknife", K.near("Lettuce"), ["hold", I("ButterKnife")])
    v_apple_bowl = variant("hold_apple_bowl", home, ["hold", apple])
    v_mug_cm = variant("hold_mug_coffee", K.near("CoffeeMachine"), ["hold", mug])
    v_counter = variant("counter_free", home, counter_loc, ["add", chair])
    adr_near = person("Adriana", home, 0.35)
    v_adr = variant("adriana_ready", home, adr_near, ["hold", apple])
    v_adr_free = variant("adriana_here", home, person("Adriana", home, 1.5))
    v_mug = variant("near_mug", K.near("Mug"))
    v_knife_open = variant(
        "knife_drawer_open", K.near("Knife"), ["set", I("Drawer_9"), {"isOpen": True}]
    )
    v_egg_open = variant(
        "egg_fridge_open", K.near("Fridge"), ["set", I("Fridge"), {"isOpen": True}]
    )

    case("none", "base", "pick(Bowl)", "AS", "structured", ["Bowl"], {"Bowl": [bowl]})
    case(
        "none",
        "base",
        "Please pick up the tomato",
        "AS",
        "natural",
        ["Tomato"],
        {"the tomato": [tomato]},
    )
    case("none", v_apple, "pick a fruit", "AN", "natural", ["Apple"], {"a fruit": [apple]})
    case(
        "none", v_fridge, "open(Fridge)", "AS", "structured", ["Fridge"], {"Fridge": [I("Fridge")]}
    )
    case(
        "none",
        v_fridge,
        "Can you please open the refrigerator?",
        "AS",
        "natural",
        ["Fridge"],
        {"the refrigerator": [I("Fridge")]},
    )
    case(
        "none",
        v_mw_open,
        "close the microwave",
        "AS",
        "natural",
        ["Microwave"],
        {"the microwave": [I("Microwave")]},
    )
    case("none", v_mw, "Can you please open the microwave?", "AS", "natural", ["Microwave"])
    case(
        "none",
        v_cm,
        "turnon(CoffeeMachine)",
        "AS",
        "structured",
        ["CoffeeMachine"],
        {"CoffeeMachine": [I("CoffeeMachine")]},
    )
    case("none", v_cm, "switch on the coffee maker", "AS", "natural", ["CoffeeMachine"])
    case(
        "none",
        v_light,
        "turn off the light",
        "AN",
        "natural",
        ["LightSwitch"],
        {"the light": [I("LightSwitch")]},
    )
    case("none", v_tom_knife, "slice(Tomato)", "AS", "structured", ["Tomato"], {"Tomato": [tomato]})
    case("none", v_let_bk, "cut the lettuce", "AS", "natural", ["Lettuce"])
    case(
        "none",
        v_apple_bowl,
        "place(Apple, Bowl)",
        "AS",
        "structured",
        ["Apple", "Bowl"],
        {"Apple": [apple], "Bowl": [bowl]},
    )
    case(
        "none",
        v_mug_cm,
        "put the mug in the coffee machine",
        "AS",
        "natural",
        ["Mug", "CoffeeMachine"],
        {"the mug": [mug], "the coffee machine": [I("CoffeeMachine")]},
    )
    case(
        "none",
        v_counter,
        "approach(medicine_counter)",
        "AS",
        "structured",
        ["medicine_counter"],
        {"medicine_counter": ["medicine_counter"]},
    )
    case(
        "none",
        v_adr_free,
        "approach Adriana",
        "AS",
        "natural",
        ["Adriana"],
        {"Adriana": ["person_1"]},
    )
    case(
        "none",
        v_adr,
        "hand the apple to Adriana",
        "AS",
        "natural",
        ["Apple", "Adriana"],
        {"the apple": [apple], "Adriana": ["person_1"]},
    )
    case("none", v_adr, "handover(Apple, adriana)", "AS", "structured", ["Apple", "Adriana"])
    case("none", v_mug, "pick the clean mug", "AC", "natural", ["Mug"], {"the clean mug": [mug]})
    case(
        "none",
        v_knife_open,
        "Grab the knife",
        "AS",
        "natural",
        ["Knife"],
        {"the knife": [I("Knife")]},
    )
    case(
        "none",
        v_egg_open,
        "take the egg from the fridge",
        "AR",
        "natural",
        ["Egg"],
        {"the egg": [I("Egg")], "the fridge": [I("Fridge")]},
    )
    veg_right = rel_set(d0, bowl, "right", {"Tomato", "Lettuce", "Potato"})
    assert veg_right == [tomato], veg_right
    case(
        "none",
        "base",
        "pick the vegetable to the right of the bowl",
        "AR",
        "natural",
        ["Tomato"],
        {"the vegetable to the right of the bowl": veg_right},
    )
    ute_right = rel_set(
        d0, bowl, "right", {"Knife", "ButterKnife", "Fork", "Spoon", "Spatula", "Ladle"}
    )
    assert ute_right == [I("ButterKnife")], ute_right
    case(
        "none",
        "base",
        "grab the utensil on the right of the bowl",
        "AR",
        "natural",
        ["ButterKnife"],
        {"the utensil on the right of the bowl": ute_right},
    )
    dish_left = rel_set(d0, tomato, "left", {"Plate", "Bowl", "Cup", "Mug"})
    assert dish_left == [bowl], dish_left
    case(
        "none",
        "base",
        "pick the dishware to the left of the tomato",
        "AR",
        "natural",
        ["Bowl"],
        {"the dishware to the left of the tomato": dish_left},
    )
    case(
        "none",
        v_tom_knife,
        "slice the unsliced tomato",
        "AC",
        "natural",
        ["Tomato"],
        {"the unsliced tomato": [tomato]},
    )
    case(
        "none",
        v_apple,
        "pick the apple from the counter",
        "AR",
        "natural",
        ["Apple"],
        {"the apple": [apple]},
    )
    case(
        "none",
        "base",
        "(pick tiago tomato counter)",
        "AS",
        "structured",
        ["Tomato"],
        {"Tomato": [tomato]},
        pddl=True,
        preconditions=["(robot_at tiago counter)", "(item_at tomato counter)", "(hand_free tiago)"],
        unsatisfied=[],
        bindings={"r": "tiago", "i": "Tomato", "l": "CounterTop_2"},
    )
    case(
        "none",
        v_counter,
        "(approach tiago home medicine_counter)",
        "AS",
        "structured",
        ["medicine_counter"],
        pddl=True,
        preconditions=["(robot_at tiago home)"],
        unsatisfied=[],
        bindings={"r": "tiago", "from": "home", "to": "medicine_counter"},
    )

    # ================================================================ ambiguity
    apple2 = "Apple|+00.10|+01.15|-00.30"
    v_two_apples = variant(
        "two_apples",
        ["clone", apple, apple2, {"x": 0.10, "y": 1.15, "z": -0.30}, I("CounterTop_2")],
    )
    mug2 = "Mug|-01.40|+00.90|-00.95"
    v_dirty_mugs = variant(
        "two_dirty_mugs",
        ["set", mug, {"isDirty": True}],
        ["clone", mug, mug2, {"x": -1.40, "y": 0.90, "z": -0.95}, I("CounterTop_3")],
    )
    bk2 = "ButterKnife|-00.25|+01.11|-00.95"
    v_two_knives = variant(
        "two_butterknives",
        ["clone", I("ButterKnife"), bk2, {"x": -0.25, "y": 1.11, "z": -0.95}, I("CounterTop_2")],
    )
    adr_bob = variant(
        "adriana_and_bob",
        home,
        ["hold", apple],
        person("Adriana", home, 0.35),
        person("Bob", home, 0.4, pid="person_2", lateral=0.3),
    )
    med1, med2 = "Medicine|-01.90|+00.97|-02.42", "Medicine|-01.45|+00.97|-02.40"
    v_meds = variant(
        "two_medicines",
        ["add", medicine(med1, -1.90, -2.42)],
        ["add", medicine(med2, -1.45, -2.40)],
    )
    cabinets = sorted(K.by_type["Cabinet"])
    drawers = sorted(K.by_type["Drawer"])
    veg = [I("Lettuce"), I("Potato"), tomato]
    elec = [I("CoffeeMachine"), I("Microwave"), I("Toaster")]
    case(
        "ambiguity",
        "base",
        "pick the vegetable",
        "AN",
        "natural",
        ["Lettuce", "Potato", "Tomato"],
        {"the vegetable": veg},
    )
    case(
        "ambiguity",
        "base",
        "open the cabinet",
        "AS",
        "natural",
        [K.names[c] for c in cabinets],
        {"the cabinet": cabinets},
    )
    case(
        "ambiguity",
        "base",
        "turn off the electronic device",
        "AN",
        "natural",
        ["CoffeeMachine", "Microwave", "Toaster"],
        {"the electronic device": elec},
    )
    case(
        "ambiguity",
        "base",
        "pick(Vase)",
        "AS",
        "structured",
        ["Vase_1", "Vase_2"],
        {"Vase": sorted(K.by_type["Vase"])},
    )
    case(
        "ambiguity",
        v_two_apples,
        "pick(Apple)",
        "AS",
        "structured",
        ["Apple_1", "Apple_2"],
        {"Apple": [apple, apple2]},
    )
    case(
        "ambiguity",
        v_two_apples,
        "Grab the apple",
        "AS",
        "natural",
        ["Apple_1", "Apple_2"],
        {"the apple": [apple, apple2]},
    )
    case(
        "ambiguity",
        v_dirty_mugs,
        "pick the dirty mug",
        "AC",
        "natural",
        ["Mug_1", "Mug_2"],
        {"the dirty mug": [mug, mug2]},
    )
    case(
        "ambiguity",
        "base",
        "open the closed drawer",
        "AC",
        "natural",
        [K.names[x] for x in drawers],
        {"the closed drawer": drawers},
    )
    item_right = rel_set(d0, bowl, "right", None)
    case(
        "ambiguity",
        "base",
        "pick the item to the right of the bowl",
        "AR",
        "natural",
        [K.names[x] for x in item_right],
        {"the item to the right of the bowl": item_right},
    )
    cutlery = [I("Knife"), I("ButterKnife"), I("Fork"), I("Spoon")]
    case(
        "ambiguity",
        "base",
        "pick up the cutlery",
        "AN",
        "natural",
        ["Knife", "ButterKnife", "Fork", "Spoon"],
        {"the cutlery": cutlery},
    )
    case(
        "ambiguity",
        adr_bob,
        "hand the apple to the user",
        "AS",
        "natural",
        ["Adriana", "Bob"],
        {"the user": ["person_1", "person_2"]},
    )
    case(
        "ambiguity",
        v_meds,
        "pick the medicine",
        "AN",
        "natural",
        ["Medicine_1", "Medicine_2"],
        {"the medicine": [med1, med2]},
    )
    case(
        "ambiguity",
        v_meds,
        "(pick tiago adrianas_medicine medicine_counter)",
        "AS",
        "structured",
        ["Medicine_1", "Medicine_2"],
        {"Medicine": [med1, med2]},
        pddl=True,
        preconditions=["(hand_free tiago)"],
        unsatisfied=[],
        bindings={"r": "tiago", "i": "Medicine", "l": "medicine_counter"},
    )
    burners = sorted(K.by_type["StoveBurner"])
    case(
        "ambiguity",
        "base",
        "turn on the stove",
        "AS",
        "natural",
        [K.names[x] for x in burners],
        {"the stove": burners},
    )
    d_knives = build_scene(variants, v_two_knives, K.d)
    two_right = rel_set(
        d_knives, bowl, "right", {"Knife", "ButterKnife", "Fork", "Spoon", "Spatula", "Ladle"}
    )
    assert sorted(two_right) == sorted([I("ButterKnife"), bk2]), two_right
    case(
        "ambiguity",
        v_two_knives,
        "pick the utensil to the right of the bowl",
        "AR",
        "natural",
        ["ButterKnife_1", "ButterKnife_2"],
        {"the utensil to the right of the bowl": two_right},
    )
    case(
        "ambiguity",
        "base",
        "pick a drink",
        "AN",
        "natural",
        ["Bottle", "WineBottle"],
        {"a drink": [I("Bottle"), I("WineBottle")]},
    )
    case(
        "ambiguity",
        "base",
        "open(Drawer)",
        "AS",
        "structured",
        [K.names[x] for x in drawers],
        {"Drawer": drawers},
    )
    case(
        "ambiguity",
        v_dirty_mugs,
        "Could you pick the mug?",
        "AS",
        "natural",
        ["Mug_1", "Mug_2"],
        {"the mug": [mug, mug2]},
    )

    # ================================================================ not_present
    v_unrec = variant("stranger_near", home, ["hold", apple], person(None, home, 0.35))
    v_nobody = variant("nobody", home, ["hold", apple])
    v_no_apple = variant("no_apple", ["remove", apple])
    case("not_present", "base", "pick the banana", "AS", "natural", ["banana"], {"the banana": []})
    case("not_present", "base", "pick(Orange)", "AS", "structured", ["Orange"], {"Orange": []})
    case(
        "not_present",
        "base",
        "turn on the television",
        "AS",
        "natural",
        ["television"],
        {"the television": []},
    )
    case(
        "not_present",
        "base",
        "Please open the dishwasher",
        "AS",
        "natural",
        ["dishwasher"],
        {"the dishwasher": []},
    )
    case(
        "not_present", "base", "pick the dirty mug", "AC", "natural", ["Mug"], {"the dirty mug": []}
    )
    case(
        "not_present",
        "base",
        "pick the sliced tomato",
        "AC",
        "natural",
        ["Tomato"],
        {"the sliced tomato": []},
    )
    fruit_left = rel_set(d0, bowl, "left", {"Apple"})
    assert fruit_left == [], fruit_left
    case(
        "not_present",
        "base",
        "pick the fruit to the left of the bowl",
        "AR",
        "natural",
        ["Bowl"],
        {"the fruit to the left of the bowl": []},
    )
    case(
        "not_present",
        "base",
        "pick the apple from the fridge",
        "AR",
        "natural",
        ["Fridge"],
        {"the apple": []},
    )
    case("not_present", v_unrec, "approach Adriana", "AS", "natural", ["Adriana"], {"Adriana": []})
    case(
        "not_present",
        v_unrec,
        "hand the apple to Adriana",
        "AS",
        "natural",
        ["Adriana"],
        {"Adriana": []},
    )
    case(
        "not_present",
        v_nobody,
        "handover(Apple, adriana)",
        "AS",
        "structured",
        ["adriana"],
        {"adriana": []},
    )
    case(
        "not_present",
        "base",
        "pick the medicine",
        "AN",
        "natural",
        ["medicine"],
        {"the medicine": []},
    )
    case(
        "not_present", "base", "pick up the remote", "AS", "natural", ["remote"], {"the remote": []}
    )
    case("not_present", v_no_apple, "pick a fruit", "AN", "natural", ["fruit"], {"a fruit": []})
    case(
        "not_present",
        "base",
        "close the open fridge",
        "AC",
        "natural",
        ["Fridge"],
        {"the open fridge": []},
    )
    case(
        "not_present",
        "base",
        "(pick tiago banana counter)",
        "AS",
        "structured",
        ["Banana"],
        {"Banana": []},
        pddl=True,
        preconditions=["(hand_free tiago)"],
        unsatisfied=[],
        bindings={"banana": "Banana", "counter": "CounterTop_2"},
    )
    case("not_present", "base", "turn off the lamp", "AS", "natural", ["lamp"], {"the lamp": []})
    case(
        "not_present",
        "base",
        "pick the egg from the bowl",
        "AR",
        "natural",
        ["Bowl"],
        {"the egg": []},
    )

    # ================================================================ out_of_reach
    v_hold_knife = variant("hold_knife", home, ["hold", I("Knife")])
    v_apple_fridge_open = variant(
        "hold_apple_fridge_open", home, ["hold", apple], ["set", I("Fridge"), {"isOpen": True}]
    )
    v_adr_far = variant("adriana_far", home, ["hold", apple], person("Adriana", home, 1.2))
    v_adr_mid = variant("adriana_mid", home, ["hold", apple], person("Adriana", home, 0.9))
    v_mw_open_home = variant("microwave_open", home, ["set", I("Microwave"), {"isOpen": True}])
    case("out_of_reach", "base", "pick(Apple)", "AS", "structured", ["Apple"], {"Apple": [apple]})
    case("out_of_reach", "base", "pick a fruit", "AN", "natural", ["Apple"], {"a fruit": [apple]})
    case("out_of_reach", "base", "open the fridge", "AS", "natural", ["Fridge"])
    case("out_of_reach", "base", "turn on the coffee machine", "AS", "natural", ["CoffeeMachine"])
    case(
        "out_of_reach",
        v_hold_knife,
        "slice(Lettuce)",
        "AS",
        "structured",
        ["Lettuce"],
        {"Lettuce": [I("Lettuce")]},
    )
    case(
        "out_of_reach",
        v_apple_fridge_open,
        "put the apple in the fridge",
        "AS",
        "natural",
        ["Fridge"],
        {"the apple": [apple], "the fridge": [I("Fridge")]},
    )
    case(
        "out_of_reach",
        "base",
        "pick the clean mug",
        "AC",
        "natural",
        ["Mug"],
        {"the clean mug": [mug]},
    )
    case(
        "out_of_reach",
        "base",
        "pick the apple from the counter",
        "AR",
        "natural",
        ["Apple"],
        {"the apple": [apple]},
    )
    case(
        "out_of_reach",
        v_adr_far,
        "hand the apple to Adriana",
        "AS",
        "natural",
        ["Adriana"],
        {"Adriana": ["person_1"]},
    )
    case("out_of_reach", v_adr_mid, "handover(Apple, Adriana)", "AS", "structured", ["Adriana"])
    case("out_of_reach", v_mw_open_home, "close(Microwave)", "AS", "structured", ["Microwave"])
    case(
        "out_of_reach",
        "base",
        "turn off the light",
        "AN",
        "natural",
        ["LightSwitch"],
        {"the light": [I("LightSwitch")]},
    )
    case(
        "out_of_reach",
        "base",
        "pick the vegetable closest to the coffee machine",
        "AR",
        "natural",
        ["Lettuce"],
        {"the vegetable closest to the coffee machine": [I("Lettuce")]},
    )
    case(
        "out_of_reach",
        "base",
        "(pick tiago apple counter)",
        "AS",
        "structured",
        ["Apple"],
        {"Apple": [apple]},
        pddl=True,
        preconditions=["(robot_at tiago counter)", "(hand_free tiago)"],
        unsatisfied=["(robot_at tiago counter)"],
        bindings={"r": "tiago", "i": "Apple", "l": "CounterTop_2"},
    )
    case(
        "out_of_reach",
        "base",
        "pick the unsliced potato",
        "AC",
        "natural",
        ["Potato"],
        {"the unsliced potato": [I("Potato")]},
    )
    case("out_of_reach", "base", "Could you grab the bread?", "AS", "natural", ["Bread"])
    case("out_of_reach", "base", "open the microwave", "AS", "natural", ["Microwave"])

    # ================================================================ obstructed
    v_bowl_apple = variant("bowl_apple", home, ["put", apple, bowl])
    v_bowl_tomato = variant("bowl_tomato", home, ["put", tomato, bowl])
    v_pan_tomato = variant("pan_tomato", K.near("Pan"), ["put", tomato, I("Pan")])
    v_mw_blocked = variant(
        "microwave_blocked",
        K.near("Microwave"),
        ["add", chair],
        ["blocked", I("Microwave"), [chair_id]],
    )
    v_fridge_blocked = variant(
        "fridge_blocked", K.near("Fridge"), ["add", chair], ["blocked", I("Fridge"), [chair_id]]
    )
    v_cm_full = variant(
        "coffee_occupied",
        K.near("CoffeeMachine"),
        ["hold", I("Cup")],
        ["put", mug, I("CoffeeMachine")],
    )
    slice_id = "BreadSliced|-01.84|+00.95|+00.13"
    v_toaster_full = variant(
        "toaster_occupied",
        K.near("Toaster"),
        ["hold", I("Bread")],
        [
            "clone",
            I("Bread"),
            slice_id,
            {"x": -1.84, "y": 0.95, "z": 0.13},
            I("Toaster"),
            {"objectType": "BreadSliced", "isSliced": True},
        ],
    )
    v_counter_blocked = variant(
        "counter_blocked",
        home,
        counter_loc,
        ["add", chair],
        ["blocked", "medicine_counter", [chair_id]],
    )
    v_adr_blocked = variant(
        "adriana_blocked",
        home,
        person("Adriana", home, 2.0),
        ["add", chair],
        ["blocked", "person_1", [chair_id]],
    )
    v_light_blocked = variant(
        "light_blocked",
        K.near("LightSwitch"),
        ["add", chair],
        ["blocked", I("LightSwitch"), [chair_id]],
    )
    v_tomato_blocked = variant(
        "tomato_blocked",
        K.near("Tomato"),
        ["hold", I("Knife")],
        ["add", chair],
        ["blocked", tomato, [chair_id]],
    )
    case(
        "obstructed",
        v_bowl_apple,
        "pick(Bowl)",
        "AS",
        "structured",
        ["Bowl", "Apple"],
        {"Bowl": [bowl]},
    )
    case(
        "obstructed",
        v_bowl_tomato,
        "pick up the bowl",
        "AS",
        "natural",
        ["Bowl", "Tomato"],
        {"the bowl": [bowl]},
    )
    case("obstructed", v_pan_tomato, "pick(Pan)", "AS", "structured", ["Pan", "Tomato"])
    case("obstructed", v_pan_tomato, "grab the frying pan", "AS", "natural", ["Pan", "Tomato"])
    case("obstructed", v_mw_blocked, "open the microwave", "AS", "natural", ["Microwave", "Chair"])
    case("obstructed", v_fridge_blocked, "open(Fridge)", "AS", "structured", ["Fridge", "Chair"])
    case(
        "obstructed",
        v_cm_full,
        "place(Cup, CoffeeMachine)",
        "AS",
        "structured",
        ["CoffeeMachine", "Mug"],
        {"Cup": [I("Cup")], "CoffeeMachine": [I("CoffeeMachine")]},
    )
    case(
        "obstructed",
        v_cm_full,
        "put the cup in the coffee machine",
        "AS",
        "natural",
        ["CoffeeMachine", "Mug"],
    )
    case(
        "obstructed",
        v_toaster_full,
        "put the bread in the toaster",
        "AS",
        "natural",
        ["Toaster", "BreadSliced"],
    )
    case(
        "obstructed",
        v_counter_blocked,
        "approach(medicine_counter)",
        "AS",
        "structured",
        ["medicine_counter", "Chair"],
    )
    case(
        "obstructed",
        v_counter_blocked,
        "go to the medicine counter",
        "AS",
        "natural",
        ["medicine_counter", "Chair"],
        {"the medicine counter": ["medicine_counter"]},
    )
    case(
        "obstructed",
        v_adr_blocked,
        "approach Adriana",
        "AS",
        "natural",
        ["Adriana", "Chair"],
        {"Adriana": ["person_1"]},
    )
    case(
        "obstructed",
        v_light_blocked,
        "turn off the light",
        "AN",
        "natural",
        ["LightSwitch", "Chair"],
    )
    case(
        "obstructed",
        v_bowl_apple,
        "pick the clean bowl",
        "AC",
        "natural",
        ["Bowl", "Apple"],
        {"the clean bowl": [bowl]},
    )
    case(
        "obstructed",
        v_bowl_apple,
        "pick the dishware to the left of the tomato",
        "AR",
        "natural",
        ["Bowl", "Apple"],
        {"the dishware to the left of the tomato": [bowl]},
    )
    case("obstructed", v_tomato_blocked, "slice the tomato", "AS", "natural", ["Tomato", "Chair"])
    case(
        "obstructed",
        v_bowl_apple,
        "(pick tiago bowl counter)",
        "AS",
        "structured",
        ["Bowl", "Apple"],
        pddl=True,
        preconditions=["(clear bowl)", "(hand_free tiago)"],
        unsatisfied=["(clear bowl)"],
        bindings={"r": "tiago", "o": "Bowl", "l": "CounterTop_2"},
    )
    case(
        "obstructed",
        v_counter_blocked,
        "(approach tiago home medicine_counter)",
        "AS",
        "structured",
        ["medicine_counter", "Chair"],
        pddl=True,
        preconditions=["(robot_at tiago home)"],
        unsatisfied=[],
        bindings={"r": "tiago", "from": "home", "to": "medicine_counter"},
    )
    case("obstructed", v_bowl_apple, "pick the empty bowl", "AC", "natural", ["Bowl", "Apple"])

    # ================================================================ wrong_state
    v_fridge_open = variant(
        "near_fridge_open", K.near("Fridge"), ["set", I("Fridge"), {"isOpen": True}]
    )
    v_tom_sliced = variant(
        "tomato_sliced_knife",
        K.near("Tomato"),
        ["hold", I("Knife")],
        ["set", tomato, {"isSliced": True}],
    )
    v_egg = variant("near_egg", K.near("Egg"))
    v_apple_fridge = variant("hold_apple_fridge", K.near("Fridge"), ["hold", apple])
    v_apple_mw = variant("hold_apple_microwave", K.near("Microwave"), ["hold", apple])
    v_adr_look = variant(
        "adriana_not_looking", home, ["hold", apple], person("Adriana", home, 0.35, looking=False)
    )
    v_adr_busy = variant(
        "adriana_busy", home, ["hold", apple], person("Adriana", home, 0.35, hands=False)
    )
    v_knife = variant("near_knife", K.near("Knife"))
    v_cup = variant(
        "near_cup_filled", K.near("Cup"), ["set", I("Cup"), {"isFilledWithLiquid": True}]
    )
    v_fork = variant("near_fork", K.near("Fork"))
    case(
        "wrong_state",
        v_fridge_open,
        "open(Fridge)",
        "AS",
        "structured",
        ["Fridge"],
        {"Fridge": [I("Fridge")]},
    )
    case("wrong_state", v_fridge, "close the fridge", "AS", "natural", ["Fridge"])
    case("wrong_state", v_cm, "turnoff(CoffeeMachine)", "AS", "structured", ["CoffeeMachine"])
    case("wrong_state", v_light, "turn on the light switch", "AS", "natural", ["LightSwitch"])
    case("wrong_state", v_tom_sliced, "slice(Tomato)", "AS", "structured", ["Tomato"])
    case(
        "wrong_state",
        v_egg,
        "pick(Egg)",
        "AS",
        "structured",
        ["Egg", "Fridge"],
        {"Egg": [I("Egg")]},
    )
    case(
        "wrong_state",
        v_egg,
        "grab the egg from the fridge",
        "AR",
        "natural",
        ["Egg", "Fridge"],
        {"the egg": [I("Egg")], "the fridge": [I("Fridge")]},
    )
    case("wrong_state", v_apple_fridge, "put the apple in the fridge", "AS", "natural", ["Fridge"])
    case("wrong_state", v_apple_mw, "place(Apple, Microwave)", "AS", "structured", ["Microwave"])
    case("wrong_state", v_adr_look, "hand the apple to Adriana", "AS", "natural", ["Adriana"])
    case("wrong_state", v_adr_busy, "handover(Apple, Adriana)", "AS", "structured", ["Adriana"])
    case(
        "wrong_state",
        v_knife,
        "Grab the knife",
        "AS",
        "natural",
        ["Knife", "Drawer_9"],
        {"the knife": [I("Knife")]},
    )
    case(
        "wrong_state",
        v_light,
        "turn on the light",
        "AN",
        "natural",
        ["LightSwitch"],
        {"the light": [I("LightSwitch")]},
    )
    case(
        "wrong_state",
        v_mw_open,
        "open the microwave that is open",
        "AC",
        "natural",
        ["Microwave"],
        {"the microwave that is open": [I("Microwave")]},
    )
    case(
        "wrong_state",
        v_cup,
        "pick the filled cup",
        "AC",
        "natural",
        ["Cup", K.names[next(p for p in K.objs[I("Cup")]["parentReceptacles"])]],
        {"the filled cup": [I("Cup")]},
    )
    case(
        "wrong_state",
        v_fork,
        "pick the fork from the drawer",
        "AR",
        "natural",
        ["Fork", K.names[K.objs[I("Fork")]["parentReceptacles"][0]]],
        {"the fork": [I("Fork")]},
    )
    case(
        "wrong_state",
        v_cm,
        "(turnon tiago coffeemachine)",
        "AS",
        "structured",
        ["has_water"],
        pddl=True,
        preconditions=["(has_water coffeemachine)"],
        unsatisfied=["(has_water coffeemachine)"],
        bindings={"coffeemachine": "CoffeeMachine"},
    )
    case("wrong_state", v_fridge_open, "open the refrigerator", "AS", "natural", ["Fridge"])
    case("wrong_state", v_egg, "pick the egg", "AS", "natural", ["Egg", "Fridge"])

    # ================================================================ wrong_property
    v_bread = variant("near_bread", K.near("Bread"))
    v_knife_bowl = variant("hold_knife_home", home, ["hold", I("Knife")])
    v_knife_mug = variant("hold_knife_mug", K.near("Mug"), ["hold", I("Knife")])
    v_apple_home = variant("hold_apple_home", home, ["hold", apple])
    v_plant = variant("near_plant", K.near("HousePlant"))
    v_stool = variant("near_stool", K.near("Stool_1"))
    v_sink = variant("near_sink", K.near("Sink"))
    case(
        "wrong_property",
        "base",
        "pick(CounterTop_2)",
        "AS",
        "structured",
        ["CounterTop_2"],
        {"CounterTop_2": [I("CounterTop_2")]},
    )
    case("wrong_property", v_fridge, "pick up the fridge", "AS", "natural", ["Fridge"])
    case("wrong_property", v_apple, "open(Apple)", "AS", "structured", ["Apple"])
    case("wrong_property", v_bread, "open the bread", "AS", "natural", ["Bread"])
    case("wrong_property", "base", "turnon(Bowl)", "AS", "structured", ["Bowl"])
    case("wrong_property", v_fridge, "turn on the fridge", "AS", "natural", ["Fridge"])
    case("wrong_property", v_knife_bowl, "slice the bowl", "AS", "natural", ["Bowl"])
    case("wrong_property", v_knife_mug, "slice(Mug)", "AS", "structured", ["Mug"])
    case(
        "wrong_property",
        v_apple_home,
        "put the apple on the tomato",
        "AS",
        "natural",
        ["Tomato"],
        {"the apple": [apple], "the tomato": [tomato]},
    )
    case(
        "wrong_property",
        v_plant,
        "pick up the plant",
        "AS",
        "natural",
        ["HousePlant"],
        {"the plant": [I("HousePlant")]},
    )
    case("wrong_property", v_stool, "pick(Stool_1)", "AS", "structured", ["Stool_1"])
    case("wrong_property", v_sink, "open(Sink)", "AS", "structured", ["Sink"])
    case(
        "wrong_property",
        v_light,
        "open the light",
        "AN",
        "natural",
        ["LightSwitch"],
        {"the light": [I("LightSwitch")]},
    )
    case(
        "wrong_property",
        v_apple,
        "turn on the fruit",
        "AN",
        "natural",
        ["Apple"],
        {"the fruit": [apple]},
    )
    case(
        "wrong_property",
        v_fridge,
        "pick the closed fridge",
        "AC",
        "natural",
        ["Fridge"],
        {"the closed fridge": [I("Fridge")]},
    )
    case(
        "wrong_property",
        "base",
        "turn on the vegetable to the right of the bowl",
        "AR",
        "natural",
        ["Tomato"],
        {"the vegetable to the right of the bowl": [tomato]},
    )
    case(
        "wrong_property",
        v_apple,
        "(open tiago apple)",
        "AS",
        "structured",
        ["Apple"],
        pddl=True,
        preconditions=["(openable apple)"],
        unsatisfied=["(openable apple)"],
        bindings={"apple": "Apple"},
    )
    case(
        "wrong_property",
        v_apple_home,
        "place(Apple, ButterKnife)",
        "AS",
        "structured",
        ["ButterKnife"],
    )

    # ================================================================ robot_state
    v_mug_home = variant("hold_mug_home", home, ["hold", mug])
    v_apple_fr = v_apple_fridge
    v_tom_cm = variant("hold_tomato_coffee", K.near("CoffeeMachine"), ["hold", tomato])
    v_tom = variant("near_tomato", K.near("Tomato"))
    v_apple_tom = variant("hold_apple_tomato", K.near("Tomato"), ["hold", apple])
    v_adr_empty = variant("adriana_empty_hand", home, person("Adriana", home, 0.35))
    v_mug_apple = variant("hold_mug_near_apple", K.near("Apple"), ["hold", mug])
    v_mug_light = variant("hold_bowl_light", K.near("LightSwitch"), ["hold", bowl])
    v_knife_mw = variant(
        "hold_knife_microwave",
        K.near("Microwave"),
        ["hold", I("Knife")],
        ["set", I("Microwave"), {"isOpen": True}],
    )
    case(
        "robot_state",
        v_mug_home,
        "pick(Tomato)",
        "AS",
        "structured",
        ["Tomato", "Mug"],
        {"Tomato": [tomato]},
    )
    case("robot_state", v_mug_home, "Grab the bowl", "AS", "natural", ["Bowl", "Mug"])
    case("robot_state", v_apple_fr, "open the fridge", "AS", "natural", ["Fridge", "Apple"])
    case(
        "robot_state",
        "base",
        "place(Apple, Bowl)",
        "AS",
        "structured",
        ["Apple"],
        {"Apple": [apple], "Bowl": [bowl]},
    )
    case(
        "robot_state",
        v_tom_cm,
        "put the mug in the coffee machine",
        "AS",
        "natural",
        ["Mug", "Tomato"],
    )
    case("robot_state", v_tom, "slice(Tomato)", "AS", "structured", ["Tomato"])
    case("robot_state", v_apple_tom, "slice the tomato", "AS", "natural", ["Tomato", "Apple"])
    case(
        "robot_state",
        v_mug_cm,
        "turn on the coffee maker",
        "AS",
        "natural",
        ["CoffeeMachine", "Mug"],
    )
    case("robot_state", v_adr_empty, "hand the apple to Adriana", "AS", "natural", ["Apple"])
    case(
        "robot_state",
        v_mug_apple,
        "pick a fruit",
        "AN",
        "natural",
        ["Apple", "Mug"],
        {"a fruit": [apple]},
    )
    case(
        "robot_state",
        v_mug_home,
        "pick the vegetable to the right of the bowl",
        "AR",
        "natural",
        ["Tomato", "Mug"],
        {"the vegetable to the right of the bowl": [tomato]},
    )
    case(
        "robot_state",
        v_mug_home,
        "pick the clean mug",
        "AC",
        "natural",
        ["Mug"],
        {"the clean mug": [mug]},
    )
    case(
        "robot_state",
        v_mug_home,
        "(pick tiago tomato counter)",
        "AS",
        "structured",
        ["Mug"],
        pddl=True,
        preconditions=["(hand_free tiago)"],
        unsatisfied=["(hand_free tiago)"],
        bindings={"r": "tiago", "i": "Tomato", "l": "CounterTop_2"},
    )
    case(
        "robot_state",
        "base",
        "(put tiago apple bowl)",
        "AS",
        "structured",
        ["Apple"],
        pddl=True,
        preconditions=["(holding tiago apple)"],
        unsatisfied=["(holding tiago apple)"],
        bindings={"apple": "Apple", "bowl": "Bowl"},
    )
    case("robot_state", v_knife_mw, "close(Microwave)", "AS", "structured", ["Microwave", "Knife"])
    case(
        "robot_state",
        v_mug_light,
        "Could you turn off the light?",
        "AN",
        "natural",
        ["LightSwitch", "Bowl"],
    )
    case("robot_state", v_mug_home, "pick the unsliced tomato", "AC", "natural", ["Tomato", "Mug"])
    case("robot_state", "base", "put the apple in the bowl", "AS", "natural", ["Apple"])

    # ================================================================ everyday paraphrases
    # Written in the style of ALFRED's human step descriptions, expectations set by the rules.
    case(
        "none",
        "base",
        "Pick up the tomato on the counter",
        "AR",
        "natural",
        ["Tomato"],
        {"the tomato on the counter": [tomato]},
    )
    case(
        "out_of_reach",
        "base",
        "Take the bread off the counter",
        "AR",
        "natural",
        ["Bread"],
        {"the bread": [I("Bread")]},
    )
    case(
        "wrong_state",
        v_cup,
        "Take the cup out of the cabinet",
        "AR",
        "natural",
        ["Cup"],
        {"the cup": [I("Cup")]},
    )
    case(
        "none",
        v_apple,
        "Pick up the red apple",
        "AS",
        "natural",
        ["Apple"],
        {"the red apple": [apple]},
    )
    case(
        "robot_state",
        v_mug_home,
        "Grab the bowl that is on the counter",
        "AR",
        "natural",
        ["Bowl", "Mug"],
        {"the bowl that is on the counter": [bowl]},
    )
    case(
        "obstructed",
        v_bowl_apple,
        "Could you please lift the bowl?",
        "AS",
        "natural",
        ["Bowl", "Apple"],
    )
    case("wrong_property", v_fridge, "grab the fridge", "AS", "natural", ["Fridge"])
    case(
        "not_present", "base", "Pick up the laptop", "AS", "natural", ["laptop"], {"the laptop": []}
    )
    case(
        "ambiguity",
        "base",
        "Turn on the burner",
        "AS",
        "natural",
        [K.names[x] for x in burners],
        {"the burner": burners},
    )
    case("wrong_state", v_light, "switch the light on", "AN", "natural", ["LightSwitch"])
    case("none", v_cm, "Power on the coffee machine, please.", "AS", "natural", ["CoffeeMachine"])
    case(
        "out_of_reach", "base", "Could you open the microwave door?", "AS", "natural", ["Microwave"]
    )
    case("none", v_adr, "Give the apple to Adriana", "AS", "natural", ["Apple", "Adriana"])
    case("wrong_state", v_adr_look, "Give Adriana the apple", "AS", "natural", ["Adriana"])
    case(
        "not_present",
        v_unrec,
        "deliver the apple to the user",
        "AS",
        "natural",
        [],
        {"the user": []},
    )
    case(
        "out_of_reach",
        v_hold_knife,
        "Use the knife to cut the lettuce into slices.",
        "AS",
        "natural",
        ["Lettuce"],
    )
    case(
        "ambiguity",
        v_two_apples,
        "pick up an apple",
        "AS",
        "natural",
        ["Apple_1", "Apple_2"],
        {"an apple": [apple, apple2]},
    )
    case("none", v_mug, "take the empty mug", "AC", "natural", ["Mug"], {"the empty mug": [mug]})

    return variants, cases


def main(argv: list[str] | None = None) -> int:
    if not KITCHEN.is_file():  # a clone without ../shared beside it
        print(f"build_cases.py: needs {KITCHEN} (../shared), missing", file=sys.stderr)
        return 2
    variants, cases = build()
    (HERE / "variants.json").write_text(json.dumps(variants, indent=1) + "\n")
    with (HERE / "cases.jsonl").open("w") as fh:
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
