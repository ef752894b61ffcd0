"""The ``wrong_state`` cases: the target is already in the state asked for, or its state forbids it.

An open fridge asked to open, a sliced tomato asked to slice, an egg inside a closed fridge,
a person not looking or with full hands, a coffee machine without water (PDDL).
"""

from __future__ import annotations

from .book import CaseBook
from .kitchen import person


def add(book: CaseBook) -> None:
    """Add the wrong_state variants and cases to ``book``."""
    variant, case = book.variant, book.case
    tomato, apple = book.tomato, book.apple
    K = book.kitchen
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    home = book.home
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
    case("wrong_state", "near_fridge", "close the fridge", "AS", "natural", ["Fridge"])
    case(
        "wrong_state",
        "near_coffee",
        "turnoff(CoffeeMachine)",
        "AS",
        "structured",
        ["CoffeeMachine"],
    )
    case("wrong_state", "near_light", "turn on the light switch", "AS", "natural", ["LightSwitch"])
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
        "near_light",
        "turn on the light",
        "AN",
        "natural",
        ["LightSwitch"],
        {"the light": [I("LightSwitch")]},
    )
    case(
        "wrong_state",
        "near_microwave_open",
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
        "near_coffee",
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
