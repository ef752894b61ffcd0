"""REVECA's relevance: the levels, the four rules, an LLM's structured answer and its fallback."""

import pytest

from bt_raider.cooperation.observations import (
    Relevance,
)
from bt_raider.cooperation.relevance import LLMRelevance, SymbolicRelevance
from bt_raider.errors import BackendError
from bt_raider.llm.chat import ScriptedChat
from bt_raider.simulation.multirobot import CATALOGUE
from tests.bt_raider.cooperation.reveca_helpers import GOAL, obj


def test_symbolic_relevance_follows_the_four_rules():
    rules = SymbolicRelevance(CATALOGUE)
    infos = [
        obj("7", "apple"),
        obj("1", "coffeetable", kind="surface", actions=("put",)),
        obj("2", "fridge", kind="container", holds=("food",), states=("CLOSED",)),
        obj("3", "wardrobe", kind="container", holds=("misc",), states=("CLOSED",)),
        obj("4", "banana"),  # food, like the goal objects
        obj("5", "book"),
        obj("6", "desk", kind="surface", holds=("*",), actions=("put",)),
    ]
    assert rules.estimate(infos, GOAL) == [
        Relevance.STRONG,
        Relevance.MEDIUM,
        Relevance.MEDIUM,
        Relevance.NONE,
        Relevance.LOW,
        Relevance.NONE,
        Relevance.NONE,
    ]


def test_llm_relevance_reads_structured_json_from_reveca_prompt():
    chat = ScriptedChat(
        ['Thinking... {"reasoning": "apple is named", "relevance": {"7": "Strong", "5": "None"}}']
    )
    est = LLMRelevance(chat, agent="alice")
    assert est.estimate([obj("7", "apple"), obj("5", "book")], GOAL) == [
        Relevance.STRONG,
        Relevance.NONE,
    ]
    (call,) = chat.calls
    prompt = call[0]["content"]
    assert "alice" in prompt and "put cupcake, apple on the <coffeetable> (1)" in prompt
    assert "id 7: <apple>" in prompt and "id 5: <book>" in prompt
    assert "Strong" in prompt and "JSON" in prompt


def test_llm_relevance_feeds_mistakes_back_then_falls_back():
    chat = ScriptedChat(
        ['{"relevance": {"7": "Strong"}}', '{"relevance": {"7": "High", "5": "None"}}']
    )
    est = LLMRelevance(chat, fallback=SymbolicRelevance(CATALOGUE), retries=1)
    assert est.estimate([obj("7", "apple"), obj("5", "book")], GOAL) == [
        Relevance.STRONG,
        Relevance.NONE,
    ]
    assert len(chat.calls) == 2
    feedback = chat.calls[1][-1]["content"]
    assert "no relevance for id(s) 5" in feedback  # the model is told what was wrong
    assert "not usable" in est.failures[0] or "no usable JSON" in est.failures[0]
    strict = LLMRelevance(ScriptedChat(["no json here", "still none"]), retries=1)
    with pytest.raises(BackendError, match="no usable JSON after 2 tries"):
        strict.estimate([obj("7", "apple")], GOAL)
