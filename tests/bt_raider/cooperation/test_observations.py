"""REVECA's memory: relevance estimation, relative proximity, Algorithm 1, observation and hearing."""

from __future__ import annotations

import json

import pytest

from bt_raider.cooperation.observations import (
    InformationError,
    Relevance,
    SubGoal,
)
from tests.bt_raider.cooperation.reveca_helpers import GOAL


def test_relevance_levels_parse_and_order():
    assert Relevance.parse("strong") is Relevance.STRONG
    assert Relevance.parse(" None ") is Relevance.NONE
    assert Relevance.parse(2) is Relevance.MEDIUM
    assert Relevance.STRONG > Relevance.MEDIUM > Relevance.LOW > Relevance.NONE
    assert Relevance.LOW.label == "Low"
    with pytest.raises(InformationError, match="'urgent' is not one of Strong, Medium, Low, None"):
        Relevance.parse("urgent")


def test_subgoals_have_stable_keys_and_round_trip():
    sub = GOAL.subgoal("apple", "7")
    assert sub.key == "put-apple-on-coffeetable" and sub.text == "put apple on coffeetable"
    assert SubGoal.from_dict(json.loads(json.dumps(sub.to_dict()))) == sub
    assert SubGoal("open", "fridge", object_id="2").key == "open-fridge-2"
    with pytest.raises(InformationError, match="'cook' is not one of put, open, explore"):
        SubGoal("cook", "apple")
    with pytest.raises(InformationError, match="'pear' is not a goal object"):
        GOAL.subgoal("pear")
