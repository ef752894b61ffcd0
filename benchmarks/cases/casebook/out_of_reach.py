"""The ``out_of_reach`` cases: the target (or person) is farther than the robot can reach.

The kitchen's own pose keeps most targets beyond robot.reach (1.1 m); people stand beyond
the 0.5 m hand-over distance.
"""

from __future__ import annotations

from .book import CaseBook
from .kitchen import person


def add(book: CaseBook) -> None:
    """Add the out_of_reach variants and cases to ``book``."""
    variant, case = book.variant, book.case
    apple, mug = book.apple, book.mug
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    home = book.home
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
