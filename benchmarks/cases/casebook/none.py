"""The ``none`` cases: the action can be done as asked (the control group of every category).

Each is a near twin of an issue case in another category (the same query with the target
within reach, the door open, the right hand free), so a reasoner that flags everything fails
here.
"""

from __future__ import annotations

from .book import CaseBook
from .kitchen import person, rel_set


def add(book: CaseBook) -> None:
    """Add the none variants and cases to ``book``."""
    variant, case = book.variant, book.case
    bowl, tomato, apple, mug = book.bowl, book.tomato, book.apple, book.mug
    K = book.kitchen
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    d0 = book.kitchen.d  # the real kitchen, unpatched
    home = book.home
    counter_loc = book.counter_loc
    chair = book.chair
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
