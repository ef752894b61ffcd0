"""The ``wrong_property`` cases: the target lacks the affordance the action needs.

Picking up a counter or a fridge, opening an apple, turning on a bowl, slicing a mug, putting
something on a tomato.
"""

from __future__ import annotations

from .book import CaseBook


def add(book: CaseBook) -> None:
    """Add the wrong_property variants and cases to ``book``."""
    variant, case = book.variant, book.case
    tomato, apple = book.tomato, book.apple
    K = book.kitchen
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    home = book.home
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
    case("wrong_property", "near_fridge", "pick up the fridge", "AS", "natural", ["Fridge"])
    case("wrong_property", "near_apple", "open(Apple)", "AS", "structured", ["Apple"])
    case("wrong_property", v_bread, "open the bread", "AS", "natural", ["Bread"])
    case("wrong_property", "base", "turnon(Bowl)", "AS", "structured", ["Bowl"])
    case("wrong_property", "near_fridge", "turn on the fridge", "AS", "natural", ["Fridge"])
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
        "near_light",
        "open the light",
        "AN",
        "natural",
        ["LightSwitch"],
        {"the light": [I("LightSwitch")]},
    )
    case(
        "wrong_property",
        "near_apple",
        "turn on the fruit",
        "AN",
        "natural",
        ["Apple"],
        {"the fruit": [apple]},
    )
    case(
        "wrong_property",
        "near_fridge",
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
        "near_apple",
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
