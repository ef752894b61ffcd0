"""Everyday paraphrases across the categories, in the style of ALFRED's step descriptions.

They reuse the other categories' variants, so they are written last; their ids continue each
category's numbering.
"""

from __future__ import annotations

from .ambiguity import APPLE_2
from .book import CaseBook


def add(book: CaseBook) -> None:
    """Add the paraphrase cases (they define no variants of their own) to ``book``."""
    case = book.case
    bowl, tomato, apple, mug = book.bowl, book.tomato, book.apple, book.mug
    K = book.kitchen
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    burners = sorted(K.by_type["StoveBurner"])
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
        "near_cup_filled",
        "Take the cup out of the cabinet",
        "AR",
        "natural",
        ["Cup"],
        {"the cup": [I("Cup")]},
    )
    case(
        "none",
        "near_apple",
        "Pick up the red apple",
        "AS",
        "natural",
        ["Apple"],
        {"the red apple": [apple]},
    )
    case(
        "robot_state",
        "hold_mug_home",
        "Grab the bowl that is on the counter",
        "AR",
        "natural",
        ["Bowl", "Mug"],
        {"the bowl that is on the counter": [bowl]},
    )
    case(
        "obstructed",
        "bowl_apple",
        "Could you please lift the bowl?",
        "AS",
        "natural",
        ["Bowl", "Apple"],
    )
    case("wrong_property", "near_fridge", "grab the fridge", "AS", "natural", ["Fridge"])
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
    case("wrong_state", "near_light", "switch the light on", "AN", "natural", ["LightSwitch"])
    case(
        "none",
        "near_coffee",
        "Power on the coffee machine, please.",
        "AS",
        "natural",
        ["CoffeeMachine"],
    )
    case(
        "out_of_reach", "base", "Could you open the microwave door?", "AS", "natural", ["Microwave"]
    )
    case(
        "none", "adriana_ready", "Give the apple to Adriana", "AS", "natural", ["Apple", "Adriana"]
    )
    case(
        "wrong_state", "adriana_not_looking", "Give Adriana the apple", "AS", "natural", ["Adriana"]
    )
    case(
        "not_present",
        "stranger_near",
        "deliver the apple to the user",
        "AS",
        "natural",
        [],
        {"the user": []},
    )
    case(
        "out_of_reach",
        "hold_knife",
        "Use the knife to cut the lettuce into slices.",
        "AS",
        "natural",
        ["Lettuce"],
    )
    case(
        "ambiguity",
        "two_apples",
        "pick up an apple",
        "AS",
        "natural",
        ["Apple_1", "Apple_2"],
        {"an apple": [apple, APPLE_2]},
    )
    case(
        "none", "near_mug", "take the empty mug", "AC", "natural", ["Mug"], {"the empty mug": [mug]}
    )
