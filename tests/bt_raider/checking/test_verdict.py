"""Verdict: the check output contract (scene-format.md section 4)."""

import json

import pytest

from bt_raider.checking.verdict import (
    PRIORITY,
    Category,
    Response,
    ToolCall,
    Verdict,
    parse_category,
)


def test_response_follows_category():
    assert Verdict(Category.NONE, "ok").final_response is Response.NONE
    assert Verdict("ambiguity", "two cups").final_response is Response.AMBIGUITY
    for cat in PRIORITY[1:]:
        assert Verdict(cat, "x").final_response is Response.UNFEASIBILITY


def test_unknown_fails_closed_and_says_why():
    v = Verdict.unknown("time limit of 20 s reached")
    assert v.category is Category.UNKNOWN
    assert v.final_response is Response.UNFEASIBILITY
    assert not v.ok
    assert "did not finish" in v.explanation and "20 s" in v.explanation


def test_json_has_exactly_the_contract_keys():
    v = Verdict(
        "obstructed",
        "The Bowl cannot be picked: an Apple is inside it.",
        grounding={"the bowl": ["Bowl|1"]},
        objects=["Bowl|1", "Apple|2"],
        tool_calls=[ToolCall("check_obj_relationship", ["inside", "Bowl"], ["Apple"])],
        questions=["Is anything inside the Bowl?"],
    )
    out = json.loads(v.dumps())
    assert list(out) == [
        "final_response",
        "category",
        "explanation",
        "grounding",
        "objects",
        "tool_calls",
    ]
    assert out["final_response"] == "unfeasibility"
    assert out["tool_calls"] == [
        {"tool": "check_obj_relationship", "args": ["inside", "Bowl"], "result": ["Apple"]}
    ]
    assert v.as_dict()["questions"] == ["Is anything inside the Bowl?"]


def test_tool_call_error_is_reported():
    tc = ToolCall("dist_to_target", ["Banana"], error="no object 'Banana'")
    assert tc.to_json()["error"] == "no object 'Banana'"


def test_parse_category_accepts_raider_labels_and_rejects_others():
    assert parse_category("IU2") is Category.OBSTRUCTED
    assert parse_category(" Out_Of_Reach ") is Category.OUT_OF_REACH
    with pytest.raises(ValueError, match="expected one of"):
        parse_category("too_heavy")
    with pytest.raises(ValueError):
        Verdict("bogus", "x")


def test_priority_order_is_the_format_docs():
    assert [c.value for c in PRIORITY] == [
        "ambiguity",
        "not_present",
        "robot_state",
        "wrong_property",
        "wrong_state",
        "obstructed",
        "out_of_reach",
    ]


@pytest.mark.parametrize("cat", list(Category))
def test_categories_print_as_their_value(cat):
    assert (
        str(cat) == cat.value and f"{cat}" == cat.value and format(cat, ">14") == f"{cat.value:>14}"
    )
    assert cat == cat.value  # still a str Enum: compares equal to its value


def test_responses_print_as_their_value():
    assert str(Response.UNFEASIBILITY) == "unfeasibility" and f"{Response.NONE}" == "none"
    assert str(Category.ROBOT_STATE) == "robot_state"
