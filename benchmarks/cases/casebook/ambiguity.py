"""The ``ambiguity`` cases: an argument phrase grounds to two or more objects or people.

``grounding`` lists every candidate; ``explain`` names them all, so a correct explanation
says which ones it could not choose between.
"""

from __future__ import annotations

from .book import CaseBook
from .kitchen import person, rel_set
from .patch import build_scene

#: The second apple of variant ``two_apples`` (the paraphrases reuse it).
APPLE_2 = "Apple|+00.10|+01.15|-00.30"


def add(book: CaseBook) -> None:
    """Add the ambiguity variants and cases to ``book``."""
    variant, case = book.variant, book.case
    bowl, tomato, apple, mug = book.bowl, book.tomato, book.apple, book.mug
    K = book.kitchen
    I = book.id  # noqa: E741 - short on purpose: I("Bowl") is an objectId
    variants = book.variants
    d0 = book.kitchen.d  # the real kitchen, unpatched
    home = book.home
    medicine = book.medicine
    v_two_apples = variant(
        "two_apples",
        ["clone", apple, APPLE_2, {"x": 0.10, "y": 1.15, "z": -0.30}, I("CounterTop_2")],
    )
    mug2 = "Mug|-01.40|+00.90|-00.95"
    v_dirty_mugs = variant(
        "two_dirty_mugs",
        ["set", mug, {"isDirty": True}],
        ["clone", mug, mug2, {"x": -1.40, "y": 0.90, "z": -0.95}, I("CounterTop_3")],
    )
    bk2 = "ButterKnife|-00.25|+01.11|-00.95"
    v_two_knives = variant(
        "two_butterknives",
        ["clone", I("ButterKnife"), bk2, {"x": -0.25, "y": 1.11, "z": -0.95}, I("CounterTop_2")],
    )
    adr_bob = variant(
        "adriana_and_bob",
        home,
        ["hold", apple],
        person("Adriana", home, 0.35),
        person("Bob", home, 0.4, pid="person_2", lateral=0.3),
    )
    med1, med2 = "Medicine|-01.90|+00.97|-02.42", "Medicine|-01.45|+00.97|-02.40"
    v_meds = variant(
        "two_medicines",
        ["add", medicine(med1, -1.90, -2.42)],
        ["add", medicine(med2, -1.45, -2.40)],
    )
    cabinets = sorted(K.by_type["Cabinet"])
    drawers = sorted(K.by_type["Drawer"])
    veg = [I("Lettuce"), I("Potato"), tomato]
    elec = [I("CoffeeMachine"), I("Microwave"), I("Toaster")]
    case(
        "ambiguity",
        "base",
        "pick the vegetable",
        "AN",
        "natural",
        ["Lettuce", "Potato", "Tomato"],
        {"the vegetable": veg},
    )
    case(
        "ambiguity",
        "base",
        "open the cabinet",
        "AS",
        "natural",
        [K.names[c] for c in cabinets],
        {"the cabinet": cabinets},
    )
    case(
        "ambiguity",
        "base",
        "turn off the electronic device",
        "AN",
        "natural",
        ["CoffeeMachine", "Microwave", "Toaster"],
        {"the electronic device": elec},
    )
    case(
        "ambiguity",
        "base",
        "pick(Vase)",
        "AS",
        "structured",
        ["Vase_1", "Vase_2"],
        {"Vase": sorted(K.by_type["Vase"])},
    )
    case(
        "ambiguity",
        v_two_apples,
        "pick(Apple)",
        "AS",
        "structured",
        ["Apple_1", "Apple_2"],
        {"Apple": [apple, APPLE_2]},
    )
    case(
        "ambiguity",
        v_two_apples,
        "Grab the apple",
        "AS",
        "natural",
        ["Apple_1", "Apple_2"],
        {"the apple": [apple, APPLE_2]},
    )
    case(
        "ambiguity",
        v_dirty_mugs,
        "pick the dirty mug",
        "AC",
        "natural",
        ["Mug_1", "Mug_2"],
        {"the dirty mug": [mug, mug2]},
    )
    case(
        "ambiguity",
        "base",
        "open the closed drawer",
        "AC",
        "natural",
        [K.names[x] for x in drawers],
        {"the closed drawer": drawers},
    )
    item_right = rel_set(d0, bowl, "right", None)
    case(
        "ambiguity",
        "base",
        "pick the item to the right of the bowl",
        "AR",
        "natural",
        [K.names[x] for x in item_right],
        {"the item to the right of the bowl": item_right},
    )
    cutlery = [I("Knife"), I("ButterKnife"), I("Fork"), I("Spoon")]
    case(
        "ambiguity",
        "base",
        "pick up the cutlery",
        "AN",
        "natural",
        ["Knife", "ButterKnife", "Fork", "Spoon"],
        {"the cutlery": cutlery},
    )
    case(
        "ambiguity",
        adr_bob,
        "hand the apple to the user",
        "AS",
        "natural",
        ["Adriana", "Bob"],
        {"the user": ["person_1", "person_2"]},
    )
    case(
        "ambiguity",
        v_meds,
        "pick the medicine",
        "AN",
        "natural",
        ["Medicine_1", "Medicine_2"],
        {"the medicine": [med1, med2]},
    )
    case(
        "ambiguity",
        v_meds,
        "(pick tiago adrianas_medicine medicine_counter)",
        "AS",
        "structured",
        ["Medicine_1", "Medicine_2"],
        {"Medicine": [med1, med2]},
        pddl=True,
        preconditions=["(hand_free tiago)"],
        unsatisfied=[],
        bindings={"r": "tiago", "i": "Medicine", "l": "medicine_counter"},
    )
    burners = sorted(K.by_type["StoveBurner"])
    case(
        "ambiguity",
        "base",
        "turn on the stove",
        "AS",
        "natural",
        [K.names[x] for x in burners],
        {"the stove": burners},
    )
    d_knives = build_scene(variants, v_two_knives, K.d)
    two_right = rel_set(
        d_knives, bowl, "right", {"Knife", "ButterKnife", "Fork", "Spoon", "Spatula", "Ladle"}
    )
    assert sorted(two_right) == sorted([I("ButterKnife"), bk2]), two_right
    case(
        "ambiguity",
        v_two_knives,
        "pick the utensil to the right of the bowl",
        "AR",
        "natural",
        ["ButterKnife_1", "ButterKnife_2"],
        {"the utensil to the right of the bowl": two_right},
    )
    case(
        "ambiguity",
        "base",
        "pick a drink",
        "AN",
        "natural",
        ["Bottle", "WineBottle"],
        {"a drink": [I("Bottle"), I("WineBottle")]},
    )
    case(
        "ambiguity",
        "base",
        "open(Drawer)",
        "AS",
        "structured",
        [K.names[x] for x in drawers],
        {"Drawer": drawers},
    )
    case(
        "ambiguity",
        v_dirty_mugs,
        "Could you pick the mug?",
        "AS",
        "natural",
        ["Mug_1", "Mug_2"],
        {"the mug": [mug, mug2]},
    )
