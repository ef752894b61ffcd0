"""Batch 2 of the held-out set ("ho2-" ids): stress cases written after batch 1 was run.

Still blind to the reasoner, and run once on its own: priority combinations, numbered names
and objectIds, above/below, particles and gerunds, several people.
"""

from __future__ import annotations

from .heldout_book import HeldoutBook
from .heldout_scene import (
    APPLE,
    BACK,
    BOOK,
    BOTTLE,
    BOWL,
    BREAD,
    CABINETS,
    CHAIR,
    CHAIR_OBJ,
    COFFEE,
    CUP,
    DRAWERS,
    EGG,
    FRIDGE,
    FRIDGE_SIDE,
    HOME,
    KETTLE,
    KNIFE,
    KNOBS,
    LEFT,
    LEFT2,
    LETTUCE,
    LIGHT,
    MICRO,
    MUG,
    PAN,
    PLATE,
    POTATO,
    STOVE,
    TOASTER,
    TOMATO,
    VASE_A,
    VASE_B,
    I,
    human,
)


def add(book: HeldoutBook) -> None:
    """Add batch 2's variants, then its cases theme by theme (ids follow this order)."""
    book.batch = "ho2"
    _variants(book)
    for theme in (_priorities, _numbered_names, _everyday_phrasing, _relations, _people_places):
        theme(book)


def _variants(book: HeldoutBook) -> None:
    """Define batch 2's own variants."""
    variant = book.variant
    variant("ho2_apple_blocked", HOME, ["blocked", APPLE, [BOWL]])
    variant("ho2_fridge_open_far", HOME, ["set", FRIDGE, {"isOpen": True}])
    variant(
        "ho2_fridge_open_blocked",
        FRIDGE_SIDE,
        ["set", FRIDGE, {"isOpen": True}],
        ["add", CHAIR_OBJ],
        ["blocked", FRIDGE, [CHAIR]],
    )
    variant(
        "ho2_lucia_far_not_looking",
        HOME,
        ["hold", APPLE],
        human("Lucia", HOME, 1.5, looking=False),
    )
    variant("ho2_toaster_full_far", HOME, ["put", BREAD, TOASTER], ["hold", APPLE])
    variant(
        "ho2_apple_fridge_open",
        FRIDGE_SIDE,
        ["set", FRIDGE, {"isOpen": True}],
        ["hold", APPLE],
    )
    variant("ho2_back_apple", BACK, ["hold", APPLE])
    variant("ho2_left2_cup", LEFT2, ["hold", CUP])
    variant("ho2_micro_open_apple", STOVE, ["set", MICRO, {"isOpen": True}], ["hold", APPLE])
    variant(
        "ho2_lucia_and_marco",
        HOME,
        ["hold", APPLE],
        human("Lucia", HOME, 0.4),
        human("Marco", ["agent", {"x": 0.0, "z": -1.25, "yaw": 90.0}], 1.5, hid="person_2"),
    )
    variant("ho2_stranger_mug", HOME, ["hold", MUG], human(None, HOME, 0.4))
    variant("ho2_only_lettuce_knife", LEFT, ["remove", TOMATO], ["remove", POTATO], ["hold", KNIFE])
    variant("ho2_no_fruit_knife", HOME, ["remove", TOMATO], ["remove", APPLE], ["hold", KNIFE])
    variant("ho2_home_tomato", HOME, ["hold", TOMATO])


def _priorities(book: HeldoutBook) -> None:
    """Two issues hold; the doc's priority order decides."""
    case = book.case
    case("ambiguity", "ho_home_apple", "open the drawer please", "AS", "natural",
         {"ground": DRAWERS}, [], {"the drawer": DRAWERS})  # fmt: skip
    case("not_present", "ho_home_apple", "pick up the banana", "AS", "natural",
         {"ground": []}, ["banana"], {"the banana": []})  # fmt: skip
    case("robot_state", "ho_home_apple", "pick(Microwave)", "AS", "structured",
         {"act": "pick", "t": MICRO}, ["Microwave", "Apple"], {"Microwave": [MICRO]})  # fmt: skip
    case("robot_state", "ho_home_apple", "turn on the kettle", "AS", "natural",
         {"act": "turnon", "t": KETTLE}, ["Kettle", "Apple"], {"the kettle": [KETTLE]})  # fmt: skip
    case("wrong_state", "ho2_fridge_open_blocked", "open the fridge", "AS", "natural",
         {"act": "open", "t": FRIDGE}, ["Fridge"], {"the fridge": [FRIDGE]})  # fmt: skip
    case("obstructed", "ho2_apple_blocked", "pick up the apple", "AS", "natural",
         {"act": "pick", "t": APPLE}, ["Apple", "Bowl"], {"the apple": [APPLE]})  # fmt: skip
    case("wrong_state", "ho2_fridge_open_far", "open(Fridge)", "AS", "structured",
         {"act": "open", "t": FRIDGE}, ["Fridge"], {"Fridge": [FRIDGE]})  # fmt: skip
    case("wrong_state", "ho2_lucia_far_not_looking", "give Lucia the apple", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("obstructed", "ho2_toaster_full_far", "put the apple in the toaster", "AS", "natural",
         {"act": "place", "o": APPLE, "t": TOASTER}, ["Toaster", "Bread"])  # fmt: skip
    case("out_of_reach", "ho_home_knife", "slice the apple", "AS", "natural",
         {"act": "slice", "t": APPLE}, ["Apple"], {"the apple": [APPLE]})  # fmt: skip
    case("none", "ho2_apple_fridge_open", "put the apple in the fridge", "AS", "natural",
         {"act": "place", "o": APPLE, "t": FRIDGE}, ["Fridge"],
         {"the apple": [APPLE], "the fridge": [FRIDGE]})  # fmt: skip
    case("wrong_state", "ho_home_apple", "place(Apple, Fridge)", "AS", "structured",
         {"act": "place", "o": APPLE, "t": FRIDGE}, ["Fridge"],
         {"Apple": [APPLE], "Fridge": [FRIDGE]})  # fmt: skip
    case("wrong_property", "ho_home_knife", "slice(Toaster)", "AS", "structured",
         {"act": "slice", "t": TOASTER}, ["Toaster"], {"Toaster": [TOASTER]})  # fmt: skip
    case("out_of_reach", "ho2_fridge_open_far", "grab the egg", "AS", "natural",
         {"act": "pick", "t": EGG}, ["Egg"], {"the egg": [EGG]})  # fmt: skip
    case("ambiguity", "ho_home_apple", "open the closed cabinet", "AC", "natural",
         {"ground": CABINETS}, [], {"the closed cabinet": CABINETS})  # fmt: skip
    case("not_present", "ho2_stranger_mug", "handover(Mug, Lucia)", "AS", "structured",
         {"act": "handover", "o": MUG, "p": "nobody"}, ["Lucia"])  # fmt: skip


def _numbered_names(book: HeldoutBook) -> None:
    """Numbered display names, objectIds, case and typos in structured queries."""
    case = book.case
    case("wrong_property", "base", "pick(Cabinet_4)", "AS", "structured",
         {"act": "pick", "t_any": CABINETS}, [])  # fmt: skip
    case("robot_state", "ho_home_apple", "open(Drawer_2)", "AS", "structured",
         {"act": "open", "t_any": DRAWERS}, ["Apple"])  # fmt: skip
    case("none", "base", f"pick({TOMATO})", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {TOMATO: [TOMATO]})  # fmt: skip
    case("none", "base", "pick(tomato)", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"tomato": [TOMATO]})  # fmt: skip
    case("none", "base", "PICK UP THE TOMATO!", "AS", "natural",
         {"act": "pick", "t": TOMATO}, ["Tomato"])  # fmt: skip
    case("none", "base", "pick(Tomatoe)", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"Tomatoe": [TOMATO]})  # fmt: skip
    case("none", "ho_left2", "turn on the cofee machine", "AS", "natural",
         {"act": "turnon", "t": COFFEE}, ["CoffeeMachine"],
         {"the cofee machine": [COFFEE]})  # fmt: skip
    case("wrong_property", "base", "pick(Floor)", "AS", "structured",
         {"act": "pick", "t": I("Floor")}, ["Floor"], {"Floor": [I("Floor")]})  # fmt: skip
    case("wrong_property", "base", "pick up the window", "AS", "natural",
         {"act": "pick", "t": I("Window")}, ["Window"], {"the window": [I("Window")]})  # fmt: skip


def _everyday_phrasing(book: HeldoutBook) -> None:
    """Everyday phrasing: gerunds, split particles, fillers."""
    case = book.case
    light_on_far = "base"
    case("none", "ho_stove", "Hey robot, would you mind opening the microwave?", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave"])  # fmt: skip
    case("none", "ho_left2", "Turn the toaster on", "AS", "natural",
         {"act": "turnon", "t": TOASTER}, ["Toaster"], {"the toaster": [TOASTER]})  # fmt: skip
    case("wrong_state", "ho_left2", "Switch the coffee machine off", "AS", "natural",
         {"act": "turnoff", "t": COFFEE}, ["CoffeeMachine"],
         {"the coffee machine": [COFFEE]})  # fmt: skip
    case("none", "ho_fridge_open", "take out the egg from the fridge", "AR", "natural",
         {"act": "pick", "t": EGG}, ["Egg"])  # fmt: skip
    case("none", "base", "Can you please pick up the bowl, thanks!", "AS", "natural",
         {"act": "pick", "t": BOWL}, ["Bowl"], {"the bowl": [BOWL]})  # fmt: skip
    case("none", "ho2_home_tomato", "Place the tomato into the bowl", "AS", "natural",
         {"act": "place", "o": TOMATO, "t": BOWL}, ["Bowl"],
         {"the tomato": [TOMATO], "the bowl": [BOWL]})  # fmt: skip
    case("none", "ho_light", "could you turn the lights off", "AN", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch"])  # fmt: skip
    case("out_of_reach", light_on_far, "open the book", "AS", "natural",
         {"act": "open", "t": BOOK}, ["Book"], {"the book": [BOOK]})  # fmt: skip
    case("out_of_reach", "base", "open(Kettle)", "AS", "structured",
         {"act": "open", "t": KETTLE}, ["Kettle"], {"Kettle": [KETTLE]})  # fmt: skip
    case("out_of_reach", "ho_home_knife", "slice the potato", "AS", "natural",
         {"act": "slice", "t": POTATO}, ["Potato"], {"the potato": [POTATO]})  # fmt: skip


def _relations(book: HeldoutBook) -> None:
    """Two constraints, closest, above / below."""
    case, rel = book.case, book.rel
    both_left = rel("ho_two_bowls_one_dirty", {"Bowl"}, "left", TOMATO)
    assert len(both_left) == 2
    case("ambiguity", "ho_two_bowls_one_dirty", "pick the bowl to the left of the tomato", "AR",
         "natural", {"ground": both_left}, [],
         {"the bowl to the left of the tomato": both_left})  # fmt: skip
    dirty = "Bowl|+00.05|+01.10|-00.55"
    case("none", "ho_two_bowls_one_dirty", "pick the dirty bowl to the left of the tomato", "AC",
         "natural", {"act": "pick", "t": dirty}, [],
         {"the dirty bowl to the left of the tomato": [dirty]})  # fmt: skip
    closest = rel("ho_two_tomatoes", {"Tomato"}, "closest", BOWL)
    assert closest == ["Tomato|-00.20|+01.14|-00.95"]
    case("none", "ho_two_tomatoes", "pick the tomato closest to the bowl", "AR", "natural",
         {"act": "pick", "t": closest[0]}, [],
         {"the tomato closest to the bowl": closest})  # fmt: skip
    assert rel("base", {"Vase"}, "above", I("Statue")) == [VASE_B]
    case("out_of_reach", "base", "pick up the vase above the statue", "AR", "natural",
         {"act": "pick", "t": VASE_B}, [], {"the vase above the statue": [VASE_B]})  # fmt: skip
    assert rel("base", {"Vase"}, "below", BOTTLE) == [VASE_A]
    case("wrong_property", "base", "open the vase below the bottle", "AR", "natural",
         {"act": "open", "t": VASE_A}, [], {"the vase below the bottle": [VASE_A]})  # fmt: skip
    burners = rel("base", {"StoveBurner"}, "below", MICRO)
    assert len(burners) == 4
    case("ambiguity", "ho_stove", "pick the burner below the microwave", "AR", "natural",
         {"ground": burners}, [], {"the burner below the microwave": burners})  # fmt: skip
    assert rel("base", {"Cup"}, "above", I("SaltShaker")) == [CUP]
    case("wrong_state", "ho_stove", "grab the cup above the salt shaker", "AR", "natural",
         {"act": "pick", "t": CUP}, ["Cup"], {"the cup above the salt shaker": [CUP]})  # fmt: skip
    assert rel("base", {"Plate"}, "above", KETTLE) == [PLATE]
    case("wrong_state", "ho_back", "take the plate above the kettle", "AR", "natural",
         {"act": "pick", "t": PLATE}, ["Plate"], {"the plate above the kettle": [PLATE]})  # fmt: skip


def _people_places(book: HeldoutBook) -> None:
    """People, places, categories."""
    case = book.case
    case("none", "ho2_lucia_and_marco", "hand the apple to Lucia", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("out_of_reach", "ho2_lucia_and_marco", "hand the apple to Marco", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_2"}, ["Marco"])  # fmt: skip
    case("none", "ho_lucia_ready", "give the apple to lucia", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("none", "ho2_back_apple", "put the apple on the pan", "AS", "natural",
         {"act": "place", "o": APPLE, "t": PAN}, ["Pan"], {"the pan": [PAN]})  # fmt: skip
    case("ambiguity", "ho2_back_apple", "put the apple in the drawer", "AS", "natural",
         {"ground": DRAWERS}, [], {"the drawer": DRAWERS})  # fmt: skip
    case("none", "ho2_left2_cup", "place the cup in the coffee machine", "AS", "natural",
         {"act": "place", "o": CUP, "t": COFFEE}, ["CoffeeMachine"],
         {"the cup": [CUP], "the coffee machine": [COFFEE]})  # fmt: skip
    case("none", "ho2_micro_open_apple", "put the apple into the microwave", "AS", "natural",
         {"act": "place", "o": APPLE, "t": MICRO}, ["Microwave"],
         {"the microwave": [MICRO]})  # fmt: skip
    case("ambiguity", "base", "turn off the electronic device", "AN", "natural",
         {"ground": [MICRO, TOASTER, COFFEE]}, [])  # fmt: skip
    case("none", "ho2_only_lettuce_knife", "slice the vegetable", "AN", "natural",
         {"act": "slice", "t": LETTUCE}, ["Lettuce"], {"the vegetable": [LETTUCE]})  # fmt: skip
    case("not_present", "ho2_no_fruit_knife", "cut a fruit", "AN", "natural",
         {"ground": []}, ["fruit"], {"a fruit": []})  # fmt: skip
    case("ambiguity", "base", "turnoff(StoveKnob)", "AS", "structured",
         {"ground": KNOBS}, [], {"StoveKnob": KNOBS})  # fmt: skip
