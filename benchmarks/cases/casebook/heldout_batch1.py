"""Batch 1 of the held-out set ("ho-" ids): one function per category, run once and reported.

Every label is the format doc's rules applied by hand, then re-checked by the oracle when the
case is added.
"""

from __future__ import annotations

from .heldout_book import HeldoutBook
from .heldout_oracle import of_types
from .heldout_scene import (
    APPLE,
    BACK_COUNTER,
    BKNIFE,
    BOOK,
    BOTTLE,
    BOWL,
    BREAD,
    CABINETS,
    CARD,
    COFFEE,
    CUP,
    DRAWERS,
    EGG,
    FAUCET,
    FRIDGE,
    ISLAND,
    KETTLE,
    KNOBS,
    LEFT_COUNTER,
    LETTUCE,
    LIGHT,
    MICRO,
    MID_SHELF,
    MUG,
    PAN,
    PLATE,
    POT,
    POTATO,
    SPATULA,
    SPOON,
    SPOON_DRAWER,
    TOASTER,
    TOMATO,
    VASE_A,
    VASE_B,
    WINE,
    I,
    add_variants,
)
from .patch import build_scene

UTENSILS = {"ButterKnife", "Knife", "Fork", "Spoon", "Spatula", "Ladle"}


def add(book: HeldoutBook) -> None:
    """Add batch 1's variants, then its cases category by category (ids follow this order)."""
    add_variants(book)
    for category in (
        _none,
        _ambiguity,
        _not_present,
        _out_of_reach,
        _obstructed,
        _wrong_state,
        _wrong_property,
        _robot_state,
    ):
        category(book)


def _none(book: HeldoutBook) -> None:
    """Batch 1's ``none`` cases."""
    case, pddl, rel = book.case, book.pddl, book.rel
    case("none", "base", "could you grab the tomato for me?", "AS", "natural",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"the tomato": [TOMATO]})  # fmt: skip
    case("none", "base", "pick(ButterKnife)", "AS", "structured",
         {"act": "pick", "t": BKNIFE}, ["ButterKnife"], {"ButterKnife": [BKNIFE]})  # fmt: skip
    case("none", "ho_left2", "switch on the toaster please", "AS", "natural",
         {"act": "turnon", "t": TOASTER}, ["Toaster"], {"the toaster": [TOASTER]})  # fmt: skip
    case("none", "ho_left2", "turnon(CoffeeMachine)", "AS", "structured",
         {"act": "turnon", "t": COFFEE}, ["CoffeeMachine"], {"CoffeeMachine": [COFFEE]})  # fmt: skip
    case("none", "ho_stove", "Open the microwave", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave"], {"the microwave": [MICRO]})  # fmt: skip
    case("none", "ho_fridge_open", "take the egg out of the fridge", "AR", "natural",
         {"act": "pick", "t": EGG}, ["Egg"])  # fmt: skip
    case("none", "ho_back_tomato", "could you put the tomato into the pan", "AS", "natural",
         {"act": "place", "o": TOMATO, "t": PAN}, ["Pan"],
         {"the tomato": [TOMATO], "the pan": [PAN]})  # fmt: skip
    case("none", "ho_left2_bread", "put the bread in the toaster", "AS", "natural",
         {"act": "place", "o": BREAD, "t": TOASTER}, ["Toaster"])  # fmt: skip
    assert rel("ho_only_lettuce", {"Lettuce", "Tomato", "Potato"}, "on", LEFT_COUNTER) == [LETTUCE]
    case("none", "ho_only_lettuce", "please take the vegetable", "AN", "natural",
         {"act": "pick", "t": LETTUCE}, ["Lettuce"], {"the vegetable": [LETTUCE]})  # fmt: skip
    assert rel("base", UTENSILS, "near", TOMATO) == [BKNIFE]
    case("none", "base", "Could you pick up the utensil next to the tomato?", "AR", "natural",
         {"act": "pick", "t": BKNIFE}, ["ButterKnife"],
         {"the utensil next to the tomato": [BKNIFE]})  # fmt: skip
    assert rel("base", {"Bowl"}, "left", TOMATO) == [BOWL]
    case("none", "base", "grab the bowl to the left of the tomato", "AR", "natural",
         {"act": "pick", "t": BOWL}, ["Bowl"],
         {"the bowl to the left of the tomato": [BOWL]})  # fmt: skip
    case("none", "ho_lucia_near", "go over to Lucia", "AS", "natural",
         {"act": "approach", "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("none", "ho_lucia_ready", "Could you pass the apple to Lucia?", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Apple", "Lucia"])  # fmt: skip
    case("none", "ho_light", "switch off the light", "AN", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch"], {"the light": [LIGHT]})  # fmt: skip
    case("none", "ho_fridge_open", "Shut the fridge, please.", "AS", "natural",
         {"act": "close", "t": FRIDGE}, ["Fridge"], {"the fridge": [FRIDGE]})  # fmt: skip
    case("none", "ho_home_knife", "cut the tomato", "AS", "natural",
         {"act": "slice", "t": TOMATO}, ["Tomato"], {"the tomato": [TOMATO]})  # fmt: skip
    assert rel("ho_two_bowls_one_dirty", {"Bowl"}, "on", ISLAND) == sorted(
        [BOWL, "Bowl|+00.05|+01.10|-00.55"]
    )
    case("none", "ho_two_bowls_one_dirty", "pick the dirty bowl", "AC", "natural",
         {"act": "pick", "t": "Bowl|+00.05|+01.10|-00.55"}, [],
         {"the dirty bowl": ["Bowl|+00.05|+01.10|-00.55"]})  # fmt: skip
    case("none", "base", "pick up the tomatoe", "AS", "natural",
         {"act": "pick", "t": TOMATO}, ["Tomato"], {"the tomatoe": [TOMATO]})  # fmt: skip
    case("none", "ho_stove", "open the micowave", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave"], {"the micowave": [MICRO]})  # fmt: skip
    case("none", "ho_no_tomato_fridge", "grab the fruit", "AN", "natural",
         {"act": "pick", "t": APPLE}, ["Apple"], {"the fruit": [APPLE]})  # fmt: skip
    case("none", "ho_left2", "turn on the toaster that is off", "AC", "natural",
         {"act": "turnon", "t": TOASTER}, ["Toaster"])  # fmt: skip
    pddl("none", "ho_back", "(open tiago drawer3)", {"act": "open", "t": SPOON_DRAWER}, [],
         {"r": "tiago", "d": SPOON_DRAWER}, ["(hand_free tiago)", "(closed drawer3)"], [])  # fmt: skip
    pddl("none", "ho_home_knife", "(slice tiago tomato knife)", {"act": "slice", "t": TOMATO},
         ["Tomato"], {"r": "tiago", "o": "Tomato", "k": "Knife"},
         ["(holding tiago knife)", "(sliceable tomato)"], [])  # fmt: skip


def _ambiguity(book: HeldoutBook) -> None:
    """Batch 1's ``ambiguity`` cases."""
    case, pddl, rel = book.case, book.pddl, book.rel
    kitchen = book.kitchen
    variants = book.variants
    case("ambiguity", "base", "Could you open the drawer?", "AS", "natural",
         {"ground": DRAWERS}, [], {"the drawer": DRAWERS})  # fmt: skip
    case("ambiguity", "base", "open(Cabinet)", "AS", "structured",
         {"ground": CABINETS}, [], {"Cabinet": CABINETS})  # fmt: skip
    all_utensils = of_types(kitchen, UTENSILS)
    case("ambiguity", "base", "take the utensil", "AN", "natural",
         {"ground": all_utensils}, [], {"the utensil": all_utensils})  # fmt: skip
    appliances = [MICRO, TOASTER, COFFEE]  # at least these: the ambiguity holds either way
    case("ambiguity", "base", "turn on the appliance", "AN", "natural",
         {"ground": appliances}, [])  # fmt: skip
    assert rel("base", {"Vase"}, "on", MID_SHELF) == [VASE_A, VASE_B]
    case("ambiguity", "base", "pick up the vase on the shelf", "AR", "natural",
         {"ground": [VASE_A, VASE_B]}, [])  # fmt: skip
    mugs = of_types(build_scene(variants, "ho_two_mugs", kitchen), {"Mug"})
    case("ambiguity", "ho_two_mugs", "pick(Mug)", "AS", "structured",
         {"ground": mugs}, [], {"Mug": mugs})  # fmt: skip
    potatoes = of_types(build_scene(variants, "ho_two_potatoes", kitchen), {"Potato"})
    case("ambiguity", "ho_two_potatoes", "pick up the raw potato", "AC", "natural",
         {"ground": potatoes}, [], {"the raw potato": potatoes})  # fmt: skip
    tomatoes = rel("ho_two_tomatoes", {"Tomato"}, "right", BOWL)
    assert len(tomatoes) == 2
    case("ambiguity", "ho_two_tomatoes", "pick the tomato to the right of the bowl", "AR",
         "natural", {"ground": tomatoes}, [],
         {"the tomato to the right of the bowl": tomatoes})  # fmt: skip
    pddl("ambiguity", "ho_stove", "(turnon tiago knob)", {"ground": KNOBS}, [],
         {"r": "tiago", "k": "StoveKnob"}, ["(hand_free tiago)"], [])  # fmt: skip
    case("ambiguity", "base", "pick up the vase", "AS", "natural",
         {"ground": [VASE_A, VASE_B]}, [], {"the vase": [VASE_A, VASE_B]})  # fmt: skip
    case("ambiguity", "base", "open the closed cabinet", "AC", "natural",
         {"ground": CABINETS}, [], {"the closed cabinet": CABINETS})  # fmt: skip
    dishware = of_types(kitchen, {"Bowl", "Cup", "Mug", "Plate"})
    case("ambiguity", "base", "Pick up the dishware please", "AN", "natural",
         {"ground": dishware}, [])  # fmt: skip
    case("ambiguity", "ho_stove", "turn off the stove knob", "AS", "natural",
         {"ground": KNOBS}, [], {"the stove knob": KNOBS})  # fmt: skip


def _not_present(book: HeldoutBook) -> None:
    """Batch 1's ``not_present`` cases."""
    case, pddl, rel = book.case, book.pddl, book.rel
    case("not_present", "base", "pick up the banana", "AS", "natural",
         {"ground": []}, ["banana"], {"the banana": []})  # fmt: skip
    case("not_present", "base", "turnon(Television)", "AS", "structured",
         {"ground": []}, ["Television"], {"Television": []})  # fmt: skip
    case("not_present", "base", "could u open the dishwasher", "AS", "natural",
         {"ground": []}, ["dishwasher"], {"the dishwasher": []})  # fmt: skip
    case("not_present", "base", "pick up the sliced tomato", "AC", "natural",
         {"ground": []}, ["tomato"], {"the sliced tomato": []})  # fmt: skip
    case("not_present", "base", "grab the dirty mug", "AC", "natural",
         {"ground": []}, ["mug"], {"the dirty mug": []})  # fmt: skip
    assert rel("base", {"Apple"}, "in", FRIDGE) == []
    case("not_present", "base", "pick the apple in the fridge", "AR", "natural",
         {"ground": []}, ["apple"])  # fmt: skip
    assert rel("base", {"Spoon"}, "near", TOASTER) == []
    case("not_present", "base", "take the spoon next to the toaster", "AR", "natural",
         {"ground": []}, ["spoon"], {"the spoon next to the toaster": []})  # fmt: skip
    case("not_present", "ho_stranger", "give the apple to Carlos", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "nobody"}, ["Carlos"])  # fmt: skip
    case("not_present", "ho_marco_only", "approach(Lucia)", "AS", "structured",
         {"act": "approach", "p": "nobody"}, ["Lucia"])  # fmt: skip
    case("not_present", "ho_no_fruit", "could you grab a fruit", "AN", "natural",
         {"ground": []}, ["fruit"], {"a fruit": []})  # fmt: skip
    pddl("not_present", "base", "(pick tiago pills shelf2)", {"ground": []}, ["pills"],
         {"r": "tiago", "o": "pills", "l": "Shelf|+01.75|+00.88|-02.56"},
         ["(hand_free tiago)", "(at pills shelf2)"], [])  # fmt: skip
    case("not_present", "base", "pick up the bananna", "AS", "natural",
         {"ground": []}, [], {"the bananna": []})  # fmt: skip
    case("not_present", "base", "close the open drawer", "AC", "natural",
         {"ground": []}, ["drawer"], {"the open drawer": []})  # fmt: skip


def _out_of_reach(book: HeldoutBook) -> None:
    """Batch 1's ``out_of_reach`` cases."""
    case, pddl, rel = book.case, book.pddl, book.rel
    case("out_of_reach", "base", "pick(Apple)", "AS", "structured",
         {"act": "pick", "t": APPLE}, ["Apple"], {"Apple": [APPLE]})  # fmt: skip
    case("out_of_reach", "base", "Could you grab the credit card?", "AS", "natural",
         {"act": "pick", "t": CARD}, ["CreditCard"], {"the credit card": [CARD]})  # fmt: skip
    case("out_of_reach", "base", "turn off the lights", "AN", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch"], {"the lights": [LIGHT]})  # fmt: skip
    case("out_of_reach", "base", "switch on the coffee machine", "AS", "natural",
         {"act": "turnon", "t": COFFEE}, ["CoffeeMachine"],
         {"the coffee machine": [COFFEE]})  # fmt: skip
    case("out_of_reach", "base", "Could you please open up the fridge for me", "AS", "natural",
         {"act": "open", "t": FRIDGE}, ["Fridge"])  # fmt: skip
    case("out_of_reach", "ho_home_bread", "put the bread in the toaster", "AS", "natural",
         {"act": "place", "o": BREAD, "t": TOASTER}, ["Toaster"],
         {"the bread": [BREAD], "the toaster": [TOASTER]})  # fmt: skip
    assert rel("base", {"CreditCard"}, "near", APPLE) == [CARD]
    case("out_of_reach", "base", "grab the credit card near the apple", "AR", "natural",
         {"act": "pick", "t": CARD}, ["CreditCard"],
         {"the credit card near the apple": [CARD]})  # fmt: skip
    case("out_of_reach", "base", "pick up the raw potato", "AC", "natural",
         {"act": "pick", "t": POTATO}, ["Potato"], {"the raw potato": [POTATO]})  # fmt: skip
    case("out_of_reach", "ho_lucia_far", "hand Lucia the apple", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    pddl("out_of_reach", "base", "(open tiago fridge)", {"act": "open", "t": FRIDGE}, ["Fridge"],
         {"r": "tiago", "o": "Fridge"}, ["(hand_free tiago)", "(closed fridge)"], [])  # fmt: skip
    case("out_of_reach", "ho_no_tomato_home", "pick up the fruit", "AN", "natural",
         {"act": "pick", "t": APPLE}, ["Apple"], {"the fruit": [APPLE]})  # fmt: skip
    case("out_of_reach", "base", "turn on the faucet", "AS", "natural",
         {"act": "turnon", "t": FAUCET}, ["Faucet"], {"the faucet": [FAUCET]})  # fmt: skip
    pddl("out_of_reach", "ho_lucia_1m2", "(handover tiago apple lucia)",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"],
         {"r": "tiago", "o": "Apple", "h": "Lucia"}, ["(holding tiago apple)"], [])  # fmt: skip


def _obstructed(book: HeldoutBook) -> None:
    """Batch 1's ``obstructed`` cases."""
    case, pddl, rel = book.case, book.pddl, book.rel
    case("obstructed", "ho_potato_in_pan", "pick up the pan", "AS", "natural",
         {"act": "pick", "t": PAN}, ["Pan", "Potato"], {"the pan": [PAN]})  # fmt: skip
    case("obstructed", "ho_spoon_in_mug", "pick(Mug)", "AS", "structured",
         {"act": "pick", "t": MUG}, ["Mug", "Spoon"], {"Mug": [MUG]})  # fmt: skip
    case("obstructed", "ho_mug_in_coffee_cup", "place(Cup, CoffeeMachine)", "AS", "structured",
         {"act": "place", "o": CUP, "t": COFFEE}, ["CoffeeMachine", "Mug"],
         {"Cup": [CUP], "CoffeeMachine": [COFFEE]})  # fmt: skip
    case("obstructed", "ho_bread_in_toaster_apple", "put the apple inside the toaster", "AS",
         "natural", {"act": "place", "o": APPLE, "t": TOASTER}, ["Toaster", "Bread"])  # fmt: skip
    case("obstructed", "ho_fridge_blocked", "open(Fridge)", "AS", "structured",
         {"act": "open", "t": FRIDGE}, ["Fridge", "Chair"], {"Fridge": [FRIDGE]})  # fmt: skip
    case("obstructed", "ho_micro_blocked", "can you open the microwave", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave", "Kettle"])  # fmt: skip
    case("obstructed", "ho_fridge_blocked", "go to the fridge", "AS", "natural",
         {"act": "approach", "t": FRIDGE}, ["Fridge", "Chair"])  # fmt: skip
    case("obstructed", "ho_lucia_blocked", "go to Lucia", "AS", "natural",
         {"act": "approach", "p": "person_1"}, ["Lucia", "Bowl"])  # fmt: skip
    assert rel("ho_potato_in_pan", {"Pan"}, "left", SPATULA) == [PAN]
    case("obstructed", "ho_potato_in_pan", "lift the pan to the left of the spatula", "AR",
         "natural", {"act": "pick", "t": PAN}, ["Pan", "Potato"],
         {"the pan to the left of the spatula": [PAN]})  # fmt: skip
    case("obstructed", "ho_lettuce_in_bowl", "pick the clean bowl", "AC", "natural",
         {"act": "pick", "t": BOWL}, ["Bowl", "Lettuce"], {"the clean bowl": [BOWL]})  # fmt: skip
    case("obstructed", "ho_tomato_blocked", "pick(Tomato)", "AS", "structured",
         {"act": "pick", "t": TOMATO}, ["Tomato", "Bowl"], {"Tomato": [TOMATO]})  # fmt: skip
    pddl("obstructed", "ho_potato_in_pan", "(pick tiago pan counter2)", {"act": "pick", "t": PAN},
         ["Pan", "Potato"], {"r": "tiago", "o": "Pan", "l": BACK_COUNTER},
         ["(hand_free tiago)", "(clear pan)"], ["(clear pan)"])  # fmt: skip
    case("obstructed", "ho_lettuce_blocked", "take the vegetable", "AN", "natural",
         {"act": "pick", "t": LETTUCE}, ["Lettuce", "PaperTowelRoll"],
         {"the vegetable": [LETTUCE]})  # fmt: skip
    case("obstructed", "ho_potato_in_pot", "lift the pot off the counter", "AS", "natural",
         {"act": "pick", "t": POT}, ["Pot", "Potato"])  # fmt: skip


def _wrong_state(book: HeldoutBook) -> None:
    """Batch 1's ``wrong_state`` cases."""
    case, pddl, rel = book.case, book.pddl, book.rel
    case("wrong_state", "base", "turnoff(Faucet)", "AS", "structured",
         {"act": "turnoff", "t": FAUCET}, ["Faucet"], {"Faucet": [FAUCET]})  # fmt: skip
    case("wrong_state", "ho_light", "turnon(LightSwitch)", "AS", "structured",
         {"act": "turnon", "t": LIGHT}, ["LightSwitch"], {"LightSwitch": [LIGHT]})  # fmt: skip
    case("wrong_state", "ho_back", "pick up the spoon", "AS", "natural",
         {"act": "pick", "t": SPOON}, ["Spoon"], {"the spoon": [SPOON]})  # fmt: skip
    case("wrong_state", "ho_stove_tomato", "Place the tomato inside the microwave, please.",
         "AS", "natural", {"act": "place", "o": TOMATO, "t": MICRO}, ["Microwave"])  # fmt: skip
    case("wrong_state", "base", "take the wine bottle", "AS", "natural",
         {"act": "pick", "t": WINE}, ["WineBottle"], {"the wine bottle": [WINE]})  # fmt: skip
    case("wrong_state", "ho_back", "pick(Plate)", "AS", "structured",
         {"act": "pick", "t": PLATE}, ["Plate"], {"Plate": [PLATE]})  # fmt: skip
    case("wrong_state", "ho_dirty_mug_in_cabinet", "pick the dirty mug", "AC", "natural",
         {"act": "pick", "t": MUG}, ["Mug"], {"the dirty mug": [MUG]})  # fmt: skip
    case("wrong_state", "ho_lucia_not_looking", "pass the apple to Lucia please", "AS", "natural",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    case("wrong_state", "ho_lucia_hands_full", "handover(Apple, Lucia)", "AS", "structured",
         {"act": "handover", "o": APPLE, "p": "person_1"}, ["Lucia"])  # fmt: skip
    assert rel("ho_fridge_side", {"Egg"}, "in", FRIDGE) == [EGG]
    case("wrong_state", "ho_fridge_side", "take the egg out of the fridge", "AR", "natural",
         {"act": "pick", "t": EGG}, ["Egg", "Fridge"])  # fmt: skip
    case("wrong_state", "ho_stove", "close(Microwave)", "AS", "structured",
         {"act": "close", "t": MICRO}, ["Microwave"], {"Microwave": [MICRO]})  # fmt: skip
    case("wrong_state", "ho_bread_sliced_knife", "slice the bread", "AS", "natural",
         {"act": "slice", "t": BREAD}, ["Bread"], {"the bread": [BREAD]})  # fmt: skip
    pddl("wrong_state", "ho_fridge_side", "(close tiago fridge)", {"act": "close", "t": FRIDGE},
         ["Fridge"], {"r": "tiago", "o": "Fridge"}, ["(hand_free tiago)", "(opened fridge)"],
         ["(opened fridge)"])  # fmt: skip
    case("wrong_state", "ho_fridge_open", "open the frige", "AS", "natural",
         {"act": "open", "t": FRIDGE}, ["Fridge"], {"the frige": [FRIDGE]})  # fmt: skip
    case("wrong_state", "ho_lettuce_in_fridge", "pick the vegetable", "AN", "natural",
         {"act": "pick", "t": LETTUCE}, ["Lettuce", "Fridge"],
         {"the vegetable": [LETTUCE]})  # fmt: skip
    case("wrong_state", "ho_back", "grab the plate in the cabinet", "AR", "natural",
         {"act": "pick", "t": PLATE}, ["Plate"])  # fmt: skip


def _wrong_property(book: HeldoutBook) -> None:
    """Batch 1's ``wrong_property`` cases."""
    case, pddl, rel = book.case, book.pddl, book.rel
    case("wrong_property", "ho_one_stool", "pick up the stool", "AS", "natural",
         {"act": "pick", "t": "Stool|+00.70|+00.00|-00.51"}, ["Stool"],
         {"the stool": ["Stool|+00.70|+00.00|-00.51"]})  # fmt: skip
    case("wrong_property", "base", "open(Toaster)", "AS", "structured",
         {"act": "open", "t": TOASTER}, ["Toaster"], {"Toaster": [TOASTER]})  # fmt: skip
    case("wrong_property", "base", "Please turn on the kettle", "AS", "natural",
         {"act": "turnon", "t": KETTLE}, ["Kettle"], {"the kettle": [KETTLE]})  # fmt: skip
    case("wrong_property", "base", "pick(Microwave)", "AS", "structured",
         {"act": "pick", "t": MICRO}, ["Microwave"], {"Microwave": [MICRO]})  # fmt: skip
    case("wrong_property", "base", "pick up the light", "AN", "natural",
         {"act": "pick", "t": LIGHT}, ["LightSwitch"], {"the light": [LIGHT]})  # fmt: skip
    assert rel("base", {"Vase"}, "closest", BOTTLE) == [VASE_A]
    case("wrong_property", "base", "open the vase closest to the bottle", "AR", "natural",
         {"act": "open", "t": VASE_A}, [],
         {"the vase closest to the bottle": [VASE_A]})  # fmt: skip
    case("wrong_property", "ho_home_knife", "cut the clean bowl in half", "AC", "natural",
         {"act": "slice", "t": BOWL}, ["Bowl"], {"the clean bowl": [BOWL]})  # fmt: skip
    pddl("wrong_property", "base", "(pick tiago island)", {"act": "pick", "t": ISLAND}, [],
         {"r": "tiago", "o": ISLAND}, ["(hand_free tiago)"], [])  # fmt: skip
    case("wrong_property", "ho_home_apple", "put the apple on the book", "AS", "natural",
         {"act": "place", "o": APPLE, "t": BOOK}, ["Book"],
         {"the apple": [APPLE], "the book": [BOOK]})  # fmt: skip
    case("wrong_property", "ho_back_tomato", "place(Tomato, Kettle)", "AS", "structured",
         {"act": "place", "o": TOMATO, "t": KETTLE}, ["Kettle"],
         {"Tomato": [TOMATO], "Kettle": [KETTLE]})  # fmt: skip
    case("wrong_property", "base", "open the shelving unit", "AS", "natural",
         {"act": "open", "t": I("ShelvingUnit")}, ["ShelvingUnit"],
         {"the shelving unit": [I("ShelvingUnit")]})  # fmt: skip
    case("wrong_property", "ho_back_knife", "slice(Kettle)", "AS", "structured",
         {"act": "slice", "t": KETTLE}, ["Kettle"], {"Kettle": [KETTLE]})  # fmt: skip


def _robot_state(book: HeldoutBook) -> None:
    """Batch 1's ``robot_state`` cases."""
    case, pddl = book.case, book.pddl
    case("robot_state", "ho_home_apple", "could you grab the butter knife", "AS", "natural",
         {"act": "pick", "t": BKNIFE}, ["ButterKnife", "Apple"],
         {"the butter knife": [BKNIFE]})  # fmt: skip
    case("robot_state", "ho_stove_mug", "open the microwave please", "AS", "natural",
         {"act": "open", "t": MICRO}, ["Microwave", "Mug"],
         {"the microwave": [MICRO]})  # fmt: skip
    case("robot_state", "ho_light_apple", "turn off the light switch", "AS", "natural",
         {"act": "turnoff", "t": LIGHT}, ["LightSwitch", "Apple"],
         {"the light switch": [LIGHT]})  # fmt: skip
    case("robot_state", "base", "put the tomato on the plate", "AS", "natural",
         {"act": "place", "o": TOMATO, "t": PLATE}, ["Tomato"],
         {"the tomato": [TOMATO], "the plate": [PLATE]})  # fmt: skip
    case("robot_state", "base", "place(Bread, Toaster)", "AS", "structured",
         {"act": "place", "o": BREAD, "t": TOASTER}, ["Bread"],
         {"Bread": [BREAD], "Toaster": [TOASTER]})  # fmt: skip
    case("robot_state", "base", "slice the bread", "AS", "natural",
         {"act": "slice", "t": BREAD}, ["Bread"], {"the bread": [BREAD]})  # fmt: skip
    case("robot_state", "ho_home_apple", "cut up the tomato", "AS", "natural",
         {"act": "slice", "t": TOMATO}, ["Tomato"], {"the tomato": [TOMATO]})  # fmt: skip
    case("robot_state", "ho_no_tomato_mug", "pick up the fruit", "AN", "natural",
         {"act": "pick", "t": APPLE}, ["Apple", "Mug"], {"the fruit": [APPLE]})  # fmt: skip
    case("robot_state", "ho_home_apple", "pick up the utensil next to the tomato", "AR",
         "natural", {"act": "pick", "t": BKNIFE}, ["ButterKnife", "Apple"],
         {"the utensil next to the tomato": [BKNIFE]})  # fmt: skip
    case("robot_state", "ho_stove_apple", "open the closed microwave", "AC", "natural",
         {"act": "open", "t": MICRO}, ["Microwave", "Apple"],
         {"the closed microwave": [MICRO]})  # fmt: skip
    pddl("robot_state", "ho_back", "(place tiago tomato pan)",
         {"act": "place", "o": TOMATO, "t": PAN}, ["Tomato"],
         {"r": "tiago", "o": "Tomato", "d": "Pan"}, ["(holding tiago tomato)"],
         ["(holding tiago tomato)"])  # fmt: skip
    case("robot_state", "ho_fridge_open_holding_egg", "close the fridge", "AS", "natural",
         {"act": "close", "t": FRIDGE}, ["Fridge", "Egg"], {"the fridge": [FRIDGE]})  # fmt: skip
    case("robot_state", "ho_left2_spatula", "turnon(Toaster)", "AS", "structured",
         {"act": "turnon", "t": TOASTER}, ["Toaster", "Spatula"],
         {"Toaster": [TOASTER]})  # fmt: skip
