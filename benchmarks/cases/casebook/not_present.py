"""The ``not_present`` cases: an argument phrase grounds to nothing in the scene.

Absent kinds (banana, television), absent states (a dirty mug when every mug is clean),
absent relations, unrecognised or missing people, and a removed apple.
"""

from __future__ import annotations

from .book import CaseBook
from .kitchen import person, rel_set


def add(book: CaseBook) -> None:
    """Add the not_present variants and cases to ``book``."""
    variant, case = book.variant, book.case
    bowl, apple = book.bowl, book.apple
    d0 = book.kitchen.d  # the real kitchen, unpatched
    home = book.home
    v_unrec = variant("stranger_near", home, ["hold", apple], person(None, home, 0.35))
    v_nobody = variant("nobody", home, ["hold", apple])
    v_no_apple = variant("no_apple", ["remove", apple])
    case("not_present", "base", "pick the banana", "AS", "natural", ["banana"], {"the banana": []})
    case("not_present", "base", "pick(Orange)", "AS", "structured", ["Orange"], {"Orange": []})
    case(
        "not_present",
        "base",
        "turn on the television",
        "AS",
        "natural",
        ["television"],
        {"the television": []},
    )
    case(
        "not_present",
        "base",
        "Please open the dishwasher",
        "AS",
        "natural",
        ["dishwasher"],
        {"the dishwasher": []},
    )
    case(
        "not_present", "base", "pick the dirty mug", "AC", "natural", ["Mug"], {"the dirty mug": []}
    )
    case(
        "not_present",
        "base",
        "pick the sliced tomato",
        "AC",
        "natural",
        ["Tomato"],
        {"the sliced tomato": []},
    )
    fruit_left = rel_set(d0, bowl, "left", {"Apple"})
    assert fruit_left == [], fruit_left
    case(
        "not_present",
        "base",
        "pick the fruit to the left of the bowl",
        "AR",
        "natural",
        ["Bowl"],
        {"the fruit to the left of the bowl": []},
    )
    case(
        "not_present",
        "base",
        "pick the apple from the fridge",
        "AR",
        "natural",
        ["Fridge"],
        {"the apple": []},
    )
    case("not_present", v_unrec, "approach Adriana", "AS", "natural", ["Adriana"], {"Adriana": []})
    case(
        "not_present",
        v_unrec,
        "hand the apple to Adriana",
        "AS",
        "natural",
        ["Adriana"],
        {"Adriana": []},
    )
    case(
        "not_present",
        v_nobody,
        "handover(Apple, adriana)",
        "AS",
        "structured",
        ["adriana"],
        {"adriana": []},
    )
    case(
        "not_present",
        "base",
        "pick the medicine",
        "AN",
        "natural",
        ["medicine"],
        {"the medicine": []},
    )
    case(
        "not_present", "base", "pick up the remote", "AS", "natural", ["remote"], {"the remote": []}
    )
    case("not_present", v_no_apple, "pick a fruit", "AN", "natural", ["fruit"], {"a fruit": []})
    case(
        "not_present",
        "base",
        "close the open fridge",
        "AC",
        "natural",
        ["Fridge"],
        {"the open fridge": []},
    )
    case(
        "not_present",
        "base",
        "(pick tiago banana counter)",
        "AS",
        "structured",
        ["Banana"],
        {"Banana": []},
        pddl=True,
        preconditions=["(hand_free tiago)"],
        unsatisfied=[],
        bindings={"banana": "Banana", "counter": "CounterTop_2"},
    )
    case("not_present", "base", "turn off the lamp", "AS", "natural", ["lamp"], {"the lamp": []})
    case(
        "not_present",
        "base",
        "pick the egg from the bowl",
        "AR",
        "natural",
        ["Bowl"],
        {"the egg": []},
    )
