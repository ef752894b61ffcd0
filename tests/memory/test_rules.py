"""Conflict Detection Rules as data: the shipped rules, user rules, validation."""

from __future__ import annotations

import json

import pytest

from bt_raider.errors import MemoryStoreError
from bt_raider.memory.actions import Action
from bt_raider.memory.extract import SymbolicExtractor
from bt_raider.memory.rules import MAX_READINGS, RuleSet, align, readings

ex = SymbolicExtractor()


def judge(rules, a, b, sim=0.9, theta=0.5):
    return rules.judge(ex.extract(a), ex.extract(b), sim, theta)


def test_phi1_same_object_different_operation():
    j = judge(RuleSet.default(), "turn on the hall light", "turn off the hall light")
    assert j.conflict and j.rule == "phi1"
    assert "turn_on" in j.explain() and "0.90" in j.explain()


def test_phi2_same_operation_different_object():
    j = judge(RuleSet.default(), "pass me an apple", "pass me a bottle")
    assert j.conflict and j.rule == "phi2"


def test_negation_rule_and_consistent_pairs():
    rules = RuleSet.default()
    assert judge(rules, "open the door", "don't open the door").rule == "negation"
    assert not judge(rules, "open the fridge", "open the refrigerator please").conflict
    # Unknown objects are no evidence of a conflict.
    assert not judge(rules, "pick it up", "pick up the apple").conflict


def test_vecsim_predicate_gates_every_rule():
    rules = RuleSet.default()
    assert (
        judge(rules, "turn on the light", "turn off the light", sim=0.49, theta=0.5).conflict
        is False
    )
    assert judge(rules, "turn on the light", "turn off the light", sim=0.5, theta=0.5).conflict


def test_alignment_pairs_actions_one_to_one():
    a = ex.extract("take the plate and bring it to the kitchen")
    b = ex.extract("take the plate")
    pairs = align(a, b)
    assert [(x.key, y.key) for x, y in pairs] == [(("take", "plate"), ("take", "plate"))]
    assert not RuleSet.default().judge(a, b, 0.9, 0.5).conflict


def test_user_rule_same_action_different_location(tmp_path):
    base = RuleSet.default().to_json()
    base["rules"].append(
        {
            "name": "elsewhere",
            "description": "same action on the same object, somewhere else",
            "when": {"operation": "same", "object": "same", "location": "different"},
            "vecsim": True,
        }
    )
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(base))
    rules = RuleSet.load(path)
    assert rules.names == ["phi1", "phi2", "phi1_unnamed", "negation", "elsewhere"]
    j = judge(rules, "put the cup on the table", "put the cup in the sink")
    assert j.conflict and j.rule == "elsewhere"
    assert not judge(
        RuleSet.default(), "put the cup on the table", "put the cup in the sink"
    ).conflict


def test_opposite_comparator_and_own_threshold():
    rules = RuleSet.load(
        {
            "opposites": [["turn_on", "turn_off"]],
            "rules": [{"name": "flip", "when": {"operation": "opposite"}, "vecsim": 0.8}],
        }
    )
    on, off = Action("turn_on", "tv"), Action("turn_off", "radio")
    assert rules.judge([on], [off], 0.85, theta=0.99).conflict  # its own 0.8, not theta
    assert not rules.judge([on], [off], 0.7, theta=0.0).conflict
    assert not rules.judge([on], [Action("open", "tv")], 0.95, 0.0).conflict


def test_agree_needs_a_shared_action():
    rules = RuleSet.default()
    a = ex.extract("pick up the apple and put it in the fridge")
    b = ex.extract("put the apple in the fridge")
    assert rules.agree(a, b)
    assert not rules.agree(ex.extract("open the fridge"), ex.extract("close the fridge"))
    assert not rules.agree([], b)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            {"name": "x", "when": {"room": "same"}},
            r"unknown slot 'room': expected one of operation, object",
        ),
        (
            {"name": "x", "when": {"object": "equal"}},
            r"unknown comparator 'equal': expected one of same",
        ),
        ({"name": "x", "when": {"object": "same"}, "weight": 2}, r"unknown field 'weight'"),
        ({"name": "x", "when": {}}, r"'when' must map slots"),
        ({"when": {"object": "same"}}, r"missing 'name'"),
        ({"name": "x", "when": {"object": "same"}, "vecsim": 3}, r"'vecsim' is 3"),
    ],
)
def test_bad_rules_are_named_with_the_valid_options(rule, message):
    with pytest.raises(MemoryStoreError, match=message):
        RuleSet.load({"rules": [rule]})


def test_bad_rule_files():
    with pytest.raises(MemoryStoreError, match="duplicate rule name 'a'"):
        RuleSet.load(
            [{"name": "a", "when": {"object": "same"}}, {"name": "a", "when": {"object": "same"}}]
        )
    with pytest.raises(MemoryStoreError, match="unknown key 'rulez'"):
        RuleSet.load({"rules": [], "rulez": []})
    with pytest.raises(MemoryStoreError, match="not valid JSON"):
        RuleSet.load("{nope")
    with pytest.raises(MemoryStoreError, match="cannot read rules file"):
        RuleSet.load("/nonexistent/rules.json")


def test_an_ambiguous_sentence_conflicts_when_any_reading_does():
    rules = RuleSet.default()
    ambiguous = ex.extract("take the cover on the bed in the living room")
    assert ambiguous[0].alternatives == ("bring",)
    # Read as bringing, it conflicts with taking the cover (phi1) ...
    j = rules.judge(ex.extract("pick up the cover"), ambiguous, 0.9, 0.5)
    assert j.conflict and j.rule == "phi1" and j.pair[1].operation == "bring"
    # ... and read as taking, with taking another object (phi2).
    assert rules.judge(ex.extract("take the book"), ambiguous, 0.9, 0.5).rule == "phi2"
    # Without the alternative the first pair would be judged consistent.
    plain = [Action("take", "cover", location="bed", lu="take", head="cover")]
    assert not rules.judge(ex.extract("pick up the cover"), plain, 0.9, 0.5).conflict
    # The similarity predicate still gates every reading.
    assert not rules.judge(ex.extract("pick up the cover"), ambiguous, 0.4, 0.5).conflict
    # An unrelated action is consistent under both readings.
    assert not rules.judge(ex.extract("open the fridge"), ambiguous, 0.9, 0.5).conflict


def test_readings_are_bounded():
    many = [Action("take", f"o{i}", alternatives=("bring", "put")) for i in range(6)]
    got = readings(many)
    assert len(got) == MAX_READINGS
    assert [a.operation for a in got[0]] == ["take"] * 6  # as written comes first
    assert readings([]) == [()]
