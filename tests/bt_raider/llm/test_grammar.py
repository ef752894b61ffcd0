"""The grammars admit what the agent's and the recovery planner's parsers read, and nothing else.

The grammars are checked with a small GBNF-to-regex reader (``gbnf.py``); where llama-cpp-python
is installed, llama.cpp's own grammar parser must accept them too.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bt_raider.checking.agent import CATEGORY_MEANINGS
from bt_raider.errors import UsageError
from bt_raider.llm.grammar import raider_turn, recovery_code
from bt_raider.llm.replies import find_final, parse_tool_calls
from bt_raider.perception.tools import default_tools
from bt_raider.recovery.safecode import DEFAULT_ACTIONS, Vocabulary, parse_recovery
from tests.bt_raider.llm.gbnf import admits

TOOLS = default_tools().openai_tools()
CATEGORIES = {c.value: c.response.value for c in CATEGORY_MEANINGS}
NAMES = ["Cup_1", "Cup_2", "CounterTop", "Alice", 'odd "quoted" name']
TURN = str(raider_turn(TOOLS, NAMES, CATEGORIES))


def _call(tool: str, args: list[object]) -> str:
    return "call_tool" + json.dumps({"tool": tool, "args": args}, ensure_ascii=False)


def test_a_tool_call_and_a_final_response_are_admitted_and_read():
    call = _call("dist_to_target", ["Cup_1"])
    assert admits(TURN, call)
    calls, _ = parse_tool_calls(call)
    assert [(c.name, c.args) for c in calls] == [("dist_to_target", ["Cup_1"])]
    final = json.dumps(
        {
            "final_response": "unfeasibility",
            "category": "out_of_reach",
            "explanation": "Cup_1 is 2 m away",
            "grounding": {"the cup": ["Cup_1"]},
        }
    )
    assert admits(TURN, final)
    answer, attempted = find_final(final)
    assert attempted and answer is not None and answer["category"] == "out_of_reach"


@pytest.mark.parametrize(
    "reply",
    [
        _call("made_up_tool", ["Cup_1"]),  # warning 2 cannot be written
        _call("dist_to_target", ["Cup_9"]),  # a name the scene does not have
        _call("dist_to_target", []),  # the wrong number of arguments
        json.dumps(  # a category with the wrong response
            {
                "final_response": "none",
                "category": "out_of_reach",
                "explanation": "x",
                "grounding": {},
            }
        ),
        _call("robot_holding", []) + "\n" + json.dumps({"final_response": "none"}),  # warning 1
        "The robot can pick the cup.",  # warning 4: neither
    ],
)
def test_what_the_pfm_warns_about_cannot_be_written(reply):
    assert not admits(TURN, reply)


def _params(tool: str) -> tuple[list[dict], int]:
    """The tool's parameter schemas in order, and how many of them are required."""
    for spec in TOOLS:
        if spec["function"]["name"] == tool:
            params = spec["function"]["parameters"]
            return list(params["properties"].values()), len(params["required"])
    raise KeyError(tool)


@st.composite
def calls(draw):
    """A tool call with every required argument and some optional ones, each of its kind."""
    tool = draw(st.sampled_from([t["function"]["name"] for t in TOOLS]))
    params, required = _params(tool)
    count = draw(st.integers(required, len(params)))
    args = [
        draw(st.sampled_from(p["enum"] if "enum" in p else NAMES))
        if p["type"] == "string"
        else draw(st.integers(0, 9))
        for p in params[:count]
    ]
    return tool, args


@settings(max_examples=150, deadline=None)
@given(st.lists(calls(), min_size=1, max_size=3))
def test_every_admitted_batch_of_calls_is_read_back_call_for_call(batch):
    text = "\n".join(_call(tool, args) for tool, args in batch)
    assert admits(TURN, text)
    calls, _ = parse_tool_calls(text)
    assert [(c.name, c.args) for c in calls] == [(t, a) for t, a in batch]


def test_a_parameter_with_choices_takes_only_them_and_an_optional_one_may_be_left_out():
    assert admits(TURN, _call("check_obj_relationship", ["inside", "Cup_1"]))
    assert admits(TURN, _call("check_obj_relationship", ["inside", "Cup_1", "CounterTop"]))
    # The argument Gemma 3 270M wrote first: an object where the relation goes.
    assert not admits(TURN, _call("check_obj_relationship", ["Cup_1", "Cup_2", "CounterTop"]))
    assert not admits(TURN, _call("check_obj_relationship", ["inside"]))


def test_recovery_code_grammar_admits_whitelisted_code_in_the_users_words():
    vocab = Vocabulary({"grab": 1, "go_to": 1}, defaults=False)
    grammar = str(recovery_code({n: vocab.arities(n) for n in vocab.names}, ["Cup_1", "Table"]))
    code = 'item = ask("Which cup, the red or the blue one?")\ngo_to("Table")\ngrab(item)'
    assert admits(grammar, code)
    program = parse_recovery(code, vocab)
    assert [s.action for s in program.steps] == ["ask", "go_to", "grab"]
    assert not admits(grammar, 'pick("Cup_1")')  # not the user's action
    assert not admits(grammar, 'grab("Cup_1", "Table")')  # wrong arity
    assert not admits(grammar, 'import os\ngrab("Cup_1")')
    assert not admits(grammar, 'grab("Plate_7")')  # not in the scene


def test_grammars_refuse_empty_definitions():
    with pytest.raises(UsageError, match="tool"):
        raider_turn([], NAMES, CATEGORIES)
    with pytest.raises(UsageError, match="name"):
        raider_turn(TOOLS, [], CATEGORIES)
    with pytest.raises(UsageError, match="action"):
        recovery_code({"ask": (1,)}, ["Cup_1"])


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama-cpp-python is not installed (the llm-gguf extra)",
)
def test_llama_cpp_parses_the_generated_grammars():
    import llama_cpp

    llama_cpp.LlamaGrammar.from_string(TURN, verbose=False)
    llama_cpp.LlamaGrammar.from_string(
        str(raider_turn(TOOLS, NAMES, CATEGORIES, final_only=True)), verbose=False
    )
    llama_cpp.LlamaGrammar.from_string(
        str(recovery_code({k: v[0] for k, v in DEFAULT_ACTIONS.items()}, NAMES)), verbose=False
    )
