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


# ---------------------------------------------------------------- a plain class, dataclass-like
def _full_verdict() -> Verdict:
    return Verdict(
        "ambiguity",
        "Which cup?",
        grounding={"the cup": ["Cup|1", "Cup|2"]},
        objects=["Cup|1", "Cup|2"],
        tool_calls=[ToolCall("object_detection", [], ["Cup_1", "Cup_2"])],
        questions=["Is there a cup?"],
        trace=[{"role": "ask", "content": "Is there a cup?"}],
        action="pick",
        elapsed_s=0.5,
        steps=[{"query": "pick the cup", "verdict": {"category": "ambiguity"}}],
    )


def test_verdicts_are_equal_by_every_field_and_unhashable():
    assert _full_verdict() == _full_verdict()
    for field, value in [
        ("explanation", "Which mug?"),
        ("objects", ["Cup|1"]),
        ("tool_calls", []),
        ("questions", []),
        ("trace", []),
        ("action", "place"),
        ("elapsed_s", 0.25),
        ("steps", []),
        ("grounding", {}),
    ]:
        assert _full_verdict().replace(**{field: value}) != _full_verdict(), field
    assert Verdict("none", "fine") != ("none", "fine")
    with pytest.raises(TypeError):
        hash(Verdict("none", "fine"))


def test_verdict_defaults_are_fresh_containers():
    a, b = Verdict("none", "fine"), Verdict("none", "fine")
    a.objects.append("Apple|1")
    a.trace.append({"role": "x", "content": "y"})
    assert b.objects == [] and b.trace == [] and b.steps == []


def test_verdict_replace_changes_only_what_it_names_and_checks_the_category():
    v = _full_verdict()
    r = v.replace(category="none", explanation="fine")
    assert r.category is Category.NONE and r.final_response is Response.NONE
    assert (r.grounding, r.tool_calls, r.action) == (v.grounding, v.tool_calls, v.action)
    assert v.category is Category.AMBIGUITY  # the original is untouched
    with pytest.raises(ValueError, match="unknown issue category"):
        v.replace(category="fine")
    with pytest.raises(TypeError):
        v.replace(colour="red")


def test_verdict_repr_names_every_field():
    text = repr(_full_verdict())
    for field in Verdict.FIELDS:
        assert f"{field}=" in text


def test_as_dict_is_a_deep_copy_with_tool_calls_as_dicts():
    v = _full_verdict()
    d = v.as_dict()
    assert d["tool_calls"] == [
        {"tool": "object_detection", "args": [], "result": ["Cup_1", "Cup_2"], "error": None}
    ]
    assert d["category"] == "ambiguity" and d["final_response"] == "ambiguity"
    assert set(d) == {*Verdict.FIELDS, "final_response"}
    d["trace"][0]["content"] = "changed"
    d["grounding"]["the cup"].append("Cup|3")
    assert v.trace[0]["content"] == "Is there a cup?" and v.grounding["the cup"] == [
        "Cup|1",
        "Cup|2",
    ]
    json.dumps(d)  # every value is JSON


def test_tool_calls_compare_by_value_and_replace():
    a = ToolCall("dist_to_target", ["Fridge"], 3.13)
    assert a == ToolCall("dist_to_target", ["Fridge"], 3.13)
    assert a != ToolCall("dist_to_target", ["Fridge"], 3.14)
    b = a.replace(result=None, error="no such object")
    assert (b.tool, b.args, b.result, b.error) == (
        "dist_to_target",
        ["Fridge"],
        None,
        "no such object",
    )
    assert a.error is None
    assert "error=None" in repr(a)
