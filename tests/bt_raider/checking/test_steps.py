"""Compound instructions: one sentence, several actions, each checked on the state before it."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.checking.contract import Query
from bt_raider.checking.parse import parse_query
from bt_raider.checking.steps import split_steps
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category
from bt_raider.errors import QueryError
from bt_raider.perception.scene import Scene

from .test_symbolic import near

FRIDGE = "Fridge|-02.00|+00.00|+01.80"
EGG = "Egg|-01.95|+00.80|+01.80"


def check(d, text):
    return SymbolicReasoner().check(Scene(d), Query(text))


@pytest.mark.parametrize(
    "text, steps",
    [
        (
            "open the fridge, take the egg and close it",
            ["open the fridge", "take the egg", "close it"],
        ),
        ("Open the fridge, then take the egg.", ["Open the fridge", "take the egg"]),
        ("go to the fridge and open it", ["go to the fridge", "open it"]),
        ("put the apple and the pear in the bowl", ["put the apple and the pear in the bowl"]),
        ("turn around and walk to the stove", ["turn around and walk to the stove"]),
        ("pick up the salt and pepper", ["pick up the salt and pepper"]),
        ("pick(Apple)", ["pick(Apple)"]),
        ("(pick tiago apple counter)", ["(pick tiago apple counter)"]),
    ],
)
def test_a_sentence_splits_where_a_new_action_starts(text, steps):
    assert split_steps(text) == steps


def test_each_step_is_checked_on_the_state_the_earlier_ones_lead_to(small_kitchen_dict):
    d = near(small_kitchen_dict, "Fridge")
    before = copy.deepcopy(d)
    alone = check(copy.deepcopy(d), "take the egg")
    assert alone.category is Category.WRONG_STATE  # the Fridge is closed
    v = check(d, "open the fridge, take the egg and close it")
    assert [s["query"] for s in v.steps] == ["open the fridge", "take the egg", "close it"]
    cats = [s["verdict"]["category"] for s in v.steps]
    # Opened by step 1, the egg can be taken; holding it, the hand is not free to close.
    assert cats == ["none", "none", "robot_state"]
    # "it" is the last object that can be closed: the Fridge, not the Egg.
    assert v.steps[2]["verdict"]["grounding"] == {"Fridge": [FRIDGE]}
    assert v.category is Category.ROBOT_STATE
    assert v.explanation.startswith("Step 3 of 3 ('close it'):")
    assert "Egg" in v.explanation
    assert d == before  # the caller's scene is untouched


def test_all_steps_clear_is_none_and_says_every_step(small_kitchen_dict):
    d = near(small_kitchen_dict, "Fridge")
    v = check(d, "open the fridge and take the egg")
    assert v.category is Category.NONE
    assert "open the Fridge" in v.explanation and "pick the Egg" in v.explanation
    assert v.grounding == {"the fridge": [FRIDGE], "the egg": [EGG]}


def test_going_somewhere_moves_the_robot_for_the_next_step(small_kitchen_dict):
    alone = check(copy.deepcopy(small_kitchen_dict), "open the fridge")
    assert alone.category is Category.OUT_OF_REACH
    v = check(small_kitchen_dict, "go to the fridge and open it")
    assert [s["verdict"]["category"] for s in v.steps] == ["none", "none"]


def test_the_json_lists_the_steps_only_for_a_compound(small_kitchen_dict):
    d = near(small_kitchen_dict, "Fridge")
    out = json.loads(check(d, "open the fridge and take the egg").dumps())
    assert [s["query"] for s in out["steps"]] == ["open the fridge", "take the egg"]
    assert out["steps"][1]["verdict"]["category"] == "none"
    assert "steps" not in json.loads(check(d, "open the fridge").dumps())


def test_put_inside_puts_in_what_an_earlier_step_opened(small_kitchen_dict):
    from .test_symbolic import hold

    d = near(hold(small_kitchen_dict, "Mug"), "Microwave")
    v = check(d, "open the microwave and put the mug inside")
    assert v.steps[1]["resolved"] == "put the mug in Microwave"
    assert v.steps[1]["verdict"]["grounding"]["Microwave"] == ["Microwave|+01.90|+01.50|-00.60"]
    assert v.steps[1]["verdict"]["category"] == "none", v.steps[1]["verdict"]["explanation"]


def test_it_as_the_object_is_the_thing_taken_not_where_it_was(small_kitchen_dict):
    d = near(small_kitchen_dict, "Bowl")
    v = check(d, "take the tomato from the counter and put it in the bowl")
    assert v.steps[1]["resolved"] == "put Tomato in the bowl"


def test_a_leg_of_a_route_is_no_step_of_its_own():
    assert split_steps("turn left, walk to the fridge and open it") == [
        "turn left, walk to the fridge",
        "open it",
    ]
    assert split_steps("Take a step forward then turn right and walk to the sink.") == [
        "Take a step forward then turn right and walk to the sink."
    ]


_WORDS = [
    "open",
    "the",
    "fridge",
    "take",
    "egg",
    "and",
    "then",
    "close",
    "it",
    ",",
    ".",
    "turn",
    "left",
    "walk",
    "to",
    "put",
    "in",
    "inside",
    "me",
    "I",
    "need",
    "please",
    "a",
    "mug",
    "on",
    "your",
    "right",
    "side",
    "of",
    "go",
    "find",
    "face",
    "bring",
    "get",
    "'d",
    "like",
]


@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=25))
@settings(max_examples=300, deadline=None)
def test_any_word_salad_splits_and_parses_or_is_refused_cleanly(words):
    text = " ".join(words)
    if not text.strip(" ,."):
        return
    steps = split_steps(text)
    assert steps and all(s.strip() for s in steps)
    for step in steps:
        try:
            parse_query(step)
        except QueryError:
            pass  # a clear refusal; anything else is a bug


@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_compound_gives_a_verdict_or_a_query_error(small_kitchen_dict, words):
    text = " ".join(words)
    if not text.strip(" ,."):
        return
    try:
        v = check(copy.deepcopy(small_kitchen_dict), text)
    except QueryError:
        return
    assert v.category in set(Category)
    if v.steps:
        firsts = [s["verdict"]["category"] for s in v.steps]
        bad = next((c for c in firsts if c != "none"), "none")
        assert v.category.value == bad


def test_a_walk_after_a_walk_is_one_route_to_the_last_place():
    text = "Turn left, walk towards the counter, then turn right and walk up to the fridge."
    assert split_steps(text) == [text]
    assert parse_query(text).args[0].head == "fridge"
