"""RAIDER's Precond baseline: Table B.3's fixed checks, and what it cannot see."""

from __future__ import annotations

import pytest

from bt_raider.checking.contract import Checker, Query
from bt_raider.checking.precond import PrecondBaseline
from bt_raider.checking.verdict import Category
from bt_raider.errors import QueryError
from bt_raider.perception.scene import Scene


def obj(d, name):
    return next(o for o in d["objects"] if name in (o["objectType"], o["objectId"]))


def hold(d, name):
    o = obj(d, name)
    o["isPickedUp"] = True
    d["inventoryObjects"] = [{"objectId": o["objectId"], "objectType": o["objectType"]}]
    return d


def check(d, query):
    return PrecondBaseline().check(Scene(d), Query(query))


def test_is_a_checker():
    assert isinstance(PrecondBaseline(), Checker)


def test_pick_checks_in_table_order(small_kitchen_dict):
    v = check(small_kitchen_dict, "pick(Apple)")
    # No distance check: the Apple is 1.79 m away and Precond lets it run.
    assert v.category is Category.NONE
    assert v.questions == ["is_present Apple", "robot_holding none"]
    assert "All preconditions to pick the Apple hold" in v.explanation
    hold(small_kitchen_dict, "Mug")
    v = check(small_kitchen_dict, "pick(Apple)")
    assert v.category is Category.ROBOT_STATE
    assert v.explanation == "Cannot pick the Apple: the robot is holding the Mug."
    assert [c.tool for c in v.tool_calls] == ["object_detection", "robot_holding"]


def test_pick_from_a_closed_openable_location(small_kitchen_dict):
    v = check(small_kitchen_dict, "pick(Egg, Fridge)")
    assert v.category is Category.WRONG_STATE and "Fridge is not open" in v.explanation
    obj(small_kitchen_dict, "Fridge")["isOpen"] = True
    assert check(small_kitchen_dict, "pick(Egg, Fridge)").ok
    # Without the location argument the closed fridge goes unchecked.
    obj(small_kitchen_dict, "Fridge")["isOpen"] = False
    assert check(small_kitchen_dict, "pick(Egg)").ok


def test_place_needs_the_object_in_hand(small_kitchen_dict):
    v = check(small_kitchen_dict, "place(Apple, Bowl)")
    assert v.category is Category.ROBOT_STATE and "not holding the Apple" in v.explanation
    hold(small_kitchen_dict, "Apple")
    assert check(small_kitchen_dict, "place(Apple, Bowl)").ok
    assert check(small_kitchen_dict, "place(Apple, Fridge)").category is Category.WRONG_STATE


@pytest.mark.parametrize(
    "query, setup, category",
    [
        ("open(Fridge)", {}, Category.NONE),
        ("open(Fridge)", {"Fridge": {"isOpen": True}}, Category.WRONG_STATE),
        ("close(Fridge)", {}, Category.WRONG_STATE),
        ("open(Apple)", {}, Category.WRONG_PROPERTY),
        ("turnon(CoffeeMachine)", {}, Category.NONE),
        ("turnoff(CoffeeMachine)", {}, Category.WRONG_STATE),
        ("turnon(Bowl)", {}, Category.WRONG_PROPERTY),
        ("slice(Tomato)", {}, Category.ROBOT_STATE),
    ],
)
def test_receptacle_and_toggle_checks(small_kitchen_dict, query, setup, category):
    for name, flags in setup.items():
        obj(small_kitchen_dict, name).update(flags)
    assert check(small_kitchen_dict, query).category is category


def test_slice_checks(small_kitchen_dict):
    hold(small_kitchen_dict, "Knife")
    assert check(small_kitchen_dict, "slice(Tomato)").ok
    assert check(small_kitchen_dict, "slice(Bowl)").category is Category.WRONG_PROPERTY
    obj(small_kitchen_dict, "Tomato")["isSliced"] = True
    assert check(small_kitchen_dict, "slice(Tomato)").category is Category.WRONG_STATE


def test_no_ambiguity_no_categories_no_relations_no_states(small_kitchen_dict):
    # Nine cabinets: Precond takes the first and finds nothing wrong.
    assert check(small_kitchen_dict, "open the cabinet").category is Category.NONE
    # A category is not an object type.
    assert check(small_kitchen_dict, "pick a fruit").category is Category.NOT_PRESENT
    # State adjectives and relations are ignored: the Mug is clean, yet "dirty mug" passes.
    assert check(small_kitchen_dict, "pick the dirty mug").ok
    # Something on the Bowl is not one of its checks either.
    apple, bowl = obj(small_kitchen_dict, "Apple"), obj(small_kitchen_dict, "Bowl")
    apple["parentReceptacles"] = [bowl["objectId"]]
    bowl["receptacleObjectIds"] = [apple["objectId"]]
    assert check(small_kitchen_dict, "pick(Bowl)").ok


def test_actions_outside_table_b3_run_unchecked(small_kitchen):
    v = PrecondBaseline().check(small_kitchen, "approach(Fridge)")
    assert v.ok and "no precondition model for approach" in v.explanation


def test_bad_query(small_kitchen):
    with pytest.raises(QueryError):
        PrecondBaseline().check(small_kitchen, "dance(Apple)")
