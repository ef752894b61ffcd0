"""The agent's settings the real-model benchmark compares: the PFM off, and constrained decoding.

The models are scripted (ScriptedChat); the constrained one records the grammar of every turn,
which is read with the suite's GBNF reader, so what a real model could write on a turn is known.
"""

from __future__ import annotations

import itertools
import json

import pytest

from bt_raider.checking.agent import RaiderAgent
from bt_raider.checking.verdict import Category
from bt_raider.llm.chat import ScriptedChat
from bt_raider.perception.tools import default_tools
from tests.bt_raider.llm.gbnf import admits


def call(tool: str, *args) -> str:
    return f'call_tool{{"tool": "{tool}", "args": {json.dumps(list(args))}}}'


def final(category: str, response: str, explanation: str) -> str:
    return json.dumps(
        {
            "final_response": response,
            "category": category,
            "explanation": explanation,
            "grounding": {},
        }
    )


class GrammarChat(ScriptedChat):
    """A scripted model that says it decodes under a grammar and records each turn's grammar."""

    supports_grammar = True

    def __init__(self, replies) -> None:
        super().__init__(replies)
        self.grammars: list[str | None] = []

    def complete(self, messages, *, tools=None, timeout=None, grammar=None):
        self.grammars.append(None if grammar is None else str(grammar))
        return super().complete(messages, tools=tools, timeout=timeout)


@pytest.fixture
def tools():
    return default_tools()


def _kinds(verdict) -> list[str]:
    return [m.get("kind") for m in verdict.trace]


def test_without_the_pfm_a_made_up_tool_result_wins_and_is_counted(small_kitchen, tools):
    made_up = call("dist_to_target", "Apple") + "\n" + final("none", "none", "It is close.")
    honest = final("out_of_reach", "unfeasibility", "The Apple is 2.04 m away.")
    bare = RaiderAgent(ScriptedChat([made_up, honest]), tools, pfm=False)
    verdict = bare.check(small_kitchen, "pick the apple")
    assert verdict.category is Category.NONE  # the ablation believes the made-up result
    assert _kinds(verdict).count("unmanaged") == 1 and "warning" not in _kinds(verdict)
    managed = RaiderAgent(ScriptedChat([made_up, honest]), tools)
    verdict = managed.check(small_kitchen, "pick the apple")
    assert verdict.category is Category.OUT_OF_REACH
    assert "unmanaged" not in _kinds(verdict) and _kinds(verdict).count("warning") == 1


def test_without_the_pfm_prose_ends_the_check_unknown_without_a_warning(small_kitchen, tools):
    chat = ScriptedChat(["I think the robot can pick it.", final("none", "none", "fine")])
    verdict = RaiderAgent(chat, tools, pfm=False).check(small_kitchen, "pick the apple")
    assert verdict.category is Category.UNKNOWN and len(chat.calls) == 1
    assert "warning" not in _kinds(verdict)


def test_a_grammar_model_gets_the_turn_grammar_and_the_last_turn_admits_only_a_verdict(
    small_kitchen, tools
):
    looping = itertools.chain(
        [call("dist_to_target", "Apple")] * 2,
        [final("out_of_reach", "unfeasibility", "The Apple is 2.04 m away.")],
    )
    chat = GrammarChat(looping)
    agent = RaiderAgent(chat, tools, max_turns=3, answer_last_turn=True)
    verdict = agent.check(small_kitchen, "pick the apple")
    assert verdict.category is Category.OUT_OF_REACH
    first, second, last = chat.grammars
    assert first == second == str(agent.grammar(small_kitchen))
    assert admits(first, call("dist_to_target", "Apple"))
    assert last == str(agent.grammar(small_kitchen, final_only=True))
    assert not admits(last, call("dist_to_target", "Apple"))
    assert admits(last, final("out_of_reach", "unfeasibility", "The Apple is 2.04 m away."))
    # The PFM says the budget is spent, once, just before the last call.
    notes = [m for m in chat.calls[2] if m["content"].startswith("This is your last message")]
    assert len(notes) == 1
    assert chat.calls[2][-1]["content"] == notes[0]["content"]
    assert not any(m["content"].startswith("This is your last") for m in chat.calls[1])


def test_the_last_turn_grammar_holds_without_the_pfm_but_no_note_is_sent(small_kitchen, tools):
    chat = GrammarChat([call("dist_to_target", "Apple"), final("none", "none", "close")])
    verdict = RaiderAgent(chat, tools, max_turns=2, pfm=False, answer_last_turn=True).check(
        small_kitchen, "pick the apple"
    )
    assert verdict.category is Category.NONE
    assert chat.grammars[1] is not None and not admits(chat.grammars[1], call("robot_holding"))
    assert not any(m["content"].startswith("This is your last") for m in chat.calls[1])


def test_a_single_turn_budget_keeps_the_full_grammar(small_kitchen, tools):
    # With one turn the model has not seen a tool result yet: forcing a verdict would force a
    # guess, so the only turn may still call tools (and the check then ends unknown).
    chat = GrammarChat([call("dist_to_target", "Apple")])
    agent = RaiderAgent(chat, tools, max_turns=1, answer_last_turn=True)
    verdict = agent.check(small_kitchen, "pick the apple")
    assert verdict.category is Category.UNKNOWN
    assert admits(chat.grammars[0], call("dist_to_target", "Apple"))


def test_by_default_a_model_that_keeps_calling_tools_ends_unknown_not_made_to_guess(
    small_kitchen, tools
):
    chat = GrammarChat(itertools.repeat(call("dist_to_target", "Apple")))
    verdict = RaiderAgent(chat, tools, max_turns=3).check(small_kitchen, "pick the apple")
    assert verdict.category is Category.UNKNOWN and "after 3 model call(s)" in verdict.explanation
    assert len(set(chat.grammars)) == 1 and admits(chat.grammars[-1], call("robot_holding"))
    assert not any(m["content"].startswith("This is your last") for m in chat.calls[-1])


def test_constrain_false_or_a_model_without_grammars_gets_none(small_kitchen, tools):
    chat = GrammarChat([final("out_of_reach", "unfeasibility", "far")])
    RaiderAgent(chat, tools, constrain=False).check(small_kitchen, "pick the apple")
    assert chat.grammars == [None]
    plain = ScriptedChat([final("out_of_reach", "unfeasibility", "far")])
    verdict = RaiderAgent(plain, tools).check(small_kitchen, "pick the apple")
    assert verdict.category is Category.OUT_OF_REACH  # complete() got no grammar argument


def test_agent_on_gives_the_settings_to_the_agent_and_the_rest_to_the_backend():
    pytest.importorskip("openai", reason="the openai backend needs the llm extra")
    from bt_raider.checking.agent import agent_on

    agent = agent_on(
        "openai",
        base_url="http://127.0.0.1:9/v1",
        api_key="unused",
        max_turns=2,
        pfm=False,
        constrain=False,
        answer_last_turn=True,
    )
    assert (agent.max_turns, agent.pfm, agent.constrain, agent.answer_last_turn) == (
        2,
        False,
        False,
        True,
    )
    assert "127.0.0.1:9" in repr(agent.chat) or "127.0.0.1:9" in str(vars(agent.chat))
