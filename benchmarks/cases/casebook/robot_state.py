"""The ``robot_state`` cases: the robot's own state forbids the action.

Its hand is full when it must pick, open or switch; it holds nothing when it must place or
hand over; it holds no knife when it must slice.
"""

from __future__ import annotations

from .book import CaseBook
from .kitchen import person


def add(book: CaseBook) -> None:
    """Add the robot_state variants and cases to ``book``."""
    variant, case = book.variant, book.case
    bowl, tomato, apple, mug = book.bowl, book.tomato, book.apple, book.mug
    K = book.kitchen
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    home = book.home
    v_mug_home = variant("hold_mug_home", home, ["hold", mug])
    v_apple_fr = "hold_apple_fridge"
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
        "hold_mug_coffee",
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
