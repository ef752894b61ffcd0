"""Reading model replies: the agent's text protocol, JSON objects, recovery code."""

import pytest

from bt_raider.llm.replies import (
    clean_code,
    find_final,
    loads_lenient,
    parse_json_reply,
    parse_tool_calls,
)


def test_tool_calls_are_read_leniently():
    text = (
        "call\\_tool{tool: get_obj_state, args: [Fridge]} "
        "call_tool{'tool': 'check_obj_relationship', 'args': ['on top of', 'Plate',]}\n"
        'call_tool: {"tool": "dist_to_target", "args": "Bowl|+00.27|+01.10|-00.75"}'
    )
    calls, _ = parse_tool_calls(text)
    assert [(c.name, c.args, c.error) for c in calls] == [
        ("get_obj_state", ["Fridge"], None),
        ("check_obj_relationship", ["on top of", "Plate"], None),
        ("dist_to_target", "Bowl|+00.27|+01.10|-00.75", None),
    ]
    assert loads_lenient("{final_response: none, x: None, y: True}") == {
        "final_response": "none",
        "x": None,
        "y": True,
    }
    with pytest.raises(ValueError, match="not JSON"):
        loads_lenient("{{{")


def test_final_response_is_found_in_prose_and_code_fences():
    answer, seen = find_final(
        'Decision:\n```json\n{"final_response": "ambiguity", "a": {"b": 1}}\n```'
    )
    assert seen and answer == {"final_response": "ambiguity", "a": {"b": 1}}
    assert find_final("no answer yet") == (None, False)
    assert find_final("I will give the final_response after the tools.") == (None, False)
    assert find_final('{"final_response": "none", oops') == (None, True)


def test_parse_json_reply_tolerates_fences_and_text():
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_reply('Sure: {"choice": "B"} done') == {"choice": "B"}
    with pytest.raises(ValueError, match="no JSON object"):
        parse_json_reply("B")


def test_clean_code() -> None:
    assert clean_code("```python\n  x = ask('?')\n  pick(x)\n```\nThis plan works.") == (
        "x = ask('?')\npick(x)"
    )
    assert clean_code("corrective actions: say('hi')\n\n  pick('A')") == "say('hi')\npick('A')"
