"""The ``obstructed`` cases: something sits in or on the target, or blocks the way to it.

Objects put into bowls, pans and single-slot appliances, and a chair (not in the real kitchen)
listed in the scene's ``blocked`` map in front of a door, a switch, a place or a person.
"""

from __future__ import annotations

from .book import CaseBook
from .kitchen import person


def add(book: CaseBook) -> None:
    """Add the obstructed variants and cases to ``book``."""
    variant, case = book.variant, book.case
    bowl, tomato, apple, mug = book.bowl, book.tomato, book.apple, book.mug
    K = book.kitchen
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    home = book.home
    counter_loc = book.counter_loc
    chair, chair_id = book.chair, book.chair_id
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
