"""The held-out set's view of the kitchen: ids by type, agent stances, people, batch 1's variants.

The ids are read from the real kitchen when this module is imported (heldout_build.py checks
that ../shared is there first), so a renamed object fails here, not in a case.
"""

from __future__ import annotations

import math

from .heldout_book import HeldoutBook
from .patch import Op, load_kitchen

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


# ----------------------------------------------------------------------------- variants
def add_variants(book: HeldoutBook) -> None:
    """Define the variants batch 1's cases run on (batch 2 reuses some)."""
    variant = book.variant
    variant("ho_stove", STOVE)
    variant("ho_left2", LEFT2)
    variant("ho_fridge_side", FRIDGE_SIDE)
    variant("ho_back", BACK)
    variant("ho_light", LIGHT_SIDE)
    variant("ho_fridge_open", FRIDGE_SIDE, ["set", FRIDGE, {"isOpen": True}])
    variant("ho_home_knife", HOME, ["hold", KNIFE])
    variant("ho_home_apple", HOME, ["hold", APPLE])
    variant("ho_back_tomato", BACK, ["hold", TOMATO])
    variant("ho_left2_bread", LEFT2, ["hold", BREAD])
    variant("ho_home_bread", HOME, ["hold", BREAD])
    variant("ho_stove_mug", STOVE, ["hold", MUG])
    variant("ho_stove_apple", STOVE, ["hold", APPLE])
    variant("ho_stove_tomato", STOVE, ["hold", TOMATO])
    variant("ho_light_apple", LIGHT_SIDE, ["hold", APPLE])
    variant("ho_left2_spatula", LEFT2, ["hold", SPATULA])
    variant("ho_back_knife", BACK, ["hold", KNIFE])
    variant("ho_only_lettuce", LEFT, ["remove", TOMATO], ["remove", POTATO])
    variant("ho_no_tomato_fridge", FRIDGE_SIDE, ["remove", TOMATO])
    variant("ho_no_tomato_home", HOME, ["remove", TOMATO])
    variant("ho_no_tomato_mug", HOME, ["remove", TOMATO], ["hold", MUG])
    variant("ho_no_fruit", HOME, ["remove", TOMATO], ["remove", APPLE])
    variant(
        "ho_two_bowls_one_dirty",
        HOME,
        ["clone", BOWL, "Bowl|+00.05|+01.10|-00.55", {"x": 0.05, "z": -0.55}, ISLAND],
        ["set", "Bowl|+00.05|+01.10|-00.55", {"isDirty": True}],
    )
    variant(
        "ho_two_tomatoes",
        HOME,
        ["clone", TOMATO, "Tomato|-00.20|+01.14|-00.95", {"x": -0.20, "z": -0.95}, ISLAND],
    )
    variant(
        "ho_two_mugs",
        LEFT,
        ["clone", MUG, "Mug|-01.76|+00.90|-00.35", {"x": -1.76, "z": -0.35}, LEFT_COUNTER],
    )
    variant(
        "ho_two_potatoes",
        POT_SIDE,
        ["clone", POTATO, "Potato|-01.45|+00.93|-02.25", {"x": -1.45, "z": -2.25}, LEFT_COUNTER],
    )
    variant("ho_potato_in_pan", BACK, ["put", POTATO, PAN])
    variant("ho_potato_in_pot", POT_SIDE, ["put", POTATO, POT])
    variant("ho_spoon_in_mug", LEFT, ["put", SPOON, MUG])
    variant("ho_mug_in_coffee_cup", LEFT2, ["put", MUG, COFFEE], ["hold", CUP])
    variant("ho_bread_in_toaster_apple", LEFT2, ["put", BREAD, TOASTER], ["hold", APPLE])
    variant("ho_lettuce_in_bowl", HOME, ["put", LETTUCE, BOWL])
    variant("ho_fridge_blocked", FRIDGE_SIDE, ["add", CHAIR_OBJ], ["blocked", FRIDGE, [CHAIR]])
    variant("ho_micro_blocked", STOVE, ["blocked", MICRO, [KETTLE]])
    variant("ho_tomato_blocked", HOME, ["blocked", TOMATO, [BOWL]])
    variant(
        "ho_lettuce_blocked",
        LEFT,
        ["remove", TOMATO],
        ["remove", POTATO],
        ["blocked", LETTUCE, [TOWEL]],
    )
    variant(
        "ho_lettuce_in_fridge",
        FRIDGE_SIDE,
        ["remove", TOMATO],
        ["remove", POTATO],
        ["put", LETTUCE, FRIDGE],
    )
    variant(
        "ho_dirty_mug_in_cabinet",
        POT_SIDE,
        ["put", MUG, LOW_LEFT_CABINET],
        ["set", MUG, {"isDirty": True}],
    )
    variant("ho_bread_sliced_knife", LEFT, ["hold", KNIFE], ["set", BREAD, {"isSliced": True}])
    variant(
        "ho_fridge_open_holding_egg", FRIDGE_SIDE, ["set", FRIDGE, {"isOpen": True}], ["hold", EGG]
    )
    variant("ho_one_stool", HOME, ["remove", FAR_STOOL])
    variant("ho_lucia_ready", HOME, ["hold", APPLE], human("Lucia", HOME, 0.4))
    variant("ho_lucia_far", HOME, ["hold", APPLE], human("Lucia", HOME, 1.5))
    variant("ho_lucia_1m2", HOME, ["hold", APPLE], human("Lucia", HOME, 1.2))
    variant("ho_lucia_not_looking", HOME, ["hold", APPLE], human("Lucia", HOME, 0.4, looking=False))
    variant("ho_lucia_hands_full", HOME, ["hold", APPLE], human("Lucia", HOME, 0.4, hands=False))
    variant("ho_lucia_near", HOME, human("Lucia", HOME, 0.4))
    variant(
        "ho_lucia_blocked",
        HOME,
        human("Lucia", HOME, 0.4),
        ["blocked", "person_1", [BOWL]],
    )
    variant("ho_stranger", HOME, ["hold", APPLE], human(None, HOME, 0.4))
    variant("ho_marco_only", HOME, human("Marco", HOME, 0.4))
