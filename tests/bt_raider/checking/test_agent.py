"""RAIDER's agent and its program flow manager on the project's small kitchen and real tools.

Faulty models are scripted (ScriptedChat) to trigger each PFM warning and then correct
themselves; the real openai SDK runs end to end against a local fake server over HTTP.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from bt_raider.checking.agent import RaiderAgent
from bt_raider.checking.contract import Checker, Query
from bt_raider.checking.registry import check, make_checker
from bt_raider.checking.verdict import Category, Response, ToolCall
from bt_raider.cli import main as cli_main
from bt_raider.commands import check as check_command
from bt_raider.errors import BackendError
from bt_raider.llm.chat import ChatReply, OpenAIChat, ScriptedChat, ToolCallRequest
from bt_raider.perception.scene import Scene
from bt_raider.perception.tools import default_tools
from tests.bt_raider.llm.fake_openai_server import FakeOpenAIServer

# The small kitchen's Apple (bt_raider.testing.small_kitchen).
APPLE = "Apple|+00.40|+00.96|+01.00"


def final(category: str, explanation: str, response: str | None = None, **extra) -> str:
    """A final response as a model writes it (with some reasoning around it)."""
    if response is None:
        response = {"none": "none", "ambiguity": "ambiguity"}.get(category, "unfeasibility")
    body = {"final_response": response, "category": category, "explanation": explanation}
    body.update(extra)
    return f"Step 4: ISSUE - Decision Making.\n{json.dumps(body)}"


def call(tool: str, *args) -> str:
    return f'call_tool{{"tool": "{tool}", "args": {json.dumps(list(args))}}}'


def contents(messages: list[dict]) -> list[str]:
    return [m.get("content") or "" for m in messages]


def warnings_in(verdict) -> list[int]:
    return [t["warning"] for t in verdict.trace if t.get("kind") == "warning"]


@pytest.fixture
def tools():
    return default_tools()


# --------------------------------------------------------------------------- the happy path


def test_ground_ask_answer_issue_on_the_kitchen(small_kitchen, tools):
    chat = ScriptedChat(
        [
            "Step 1: GROUND - the apple is Apple.\nStep 2: ASK\n- Is the Apple within reach?\n"
            "- Is the robot holding anything?\n"
            + call("dist_to_target", "Apple")
            + "\n"
            + call("robot_holding"),
            final(
                "out_of_reach",
                "The Apple is 2.04 m away, beyond the 1.1 m reach.",
                grounding={"Apple": ["Apple"]},
            ),
        ]
    )
    agent = RaiderAgent(chat, tools)
    assert isinstance(agent, Checker) and agent.protocol == "text"
    verdict = agent.check(small_kitchen, "pick(Apple)")

    assert verdict.category is Category.OUT_OF_REACH
    assert verdict.final_response is Response.UNFEASIBILITY
    assert verdict.grounding == {"Apple": [APPLE]} and verdict.objects == [APPLE]
    expected = round(small_kitchen.distance_to_robot("Apple"), 2)
    assert verdict.tool_calls == [
        ToolCall("dist_to_target", ["Apple"], result=expected),
        ToolCall("robot_holding", [], result=[]),
    ]
    assert verdict.questions == ["Is the Apple within reach?", "Is the robot holding anything?"]
    assert verdict.elapsed_s > 0
    assert warnings_in(verdict) == []
    # The conversation: system prompt, query, reply, one user message per tool result.
    second = chat.calls[1]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user", "user"]
    assert (
        second[3]["content"]
        == f'Call to tool dist_to_target with args ["Apple"] returned {expected}'
    )
    assert second[4]["content"] == "Call to tool robot_holding with args [] returned []"
    assert [t["kind"] for t in verdict.trace][:5] == [
        "system",
        "query",
        "reply",
        "tool_result",
        "tool_result",
    ]
    out = verdict.to_json()
    assert out["category"] == "out_of_reach" and out["tool_calls"][0]["result"] == expected


def test_system_prompt_has_the_four_sections_and_the_scene_robot(small_kitchen_dict, tools):
    from bt_raider.perception.scene import Scene

    small_kitchen_dict["robot"] = {"reach": 0.8, "handover_distance": 0.3, "arms": 2}
    scene = Scene(small_kitchen_dict)
    prompt = RaiderAgent(ScriptedChat(), tools).system_prompt(scene)
    for section in ("Task Objective", "Procedure Steps", "Tool Description", "Constraints"):
        assert f"## {section}" in prompt
    for step in ("GROUND", "ASK", "ANSWER", "ISSUE"):
        assert step in prompt
    for cat in Category:
        if cat is not Category.UNKNOWN:
            assert f"- {cat.value}" in prompt
    assert tools.describe() in prompt
    assert "2 arms with a 0.8m reach" in prompt and "within 0.3m" in prompt
    assert 'call_tool{"tool": "tool_name", "args": [arg1, arg2]}' in prompt
    native = RaiderAgent(ScriptedChat(native_tools=True), tools).system_prompt(scene)
    assert "function-calling interface" in native and "call_tool{" not in native


def test_user_message_carries_plan_preconditions(small_kitchen, tools):
    chat = ScriptedChat([final("wrong_state", "The Fridge holding the Egg is closed.")])
    query = Query(
        "(pick tiago egg fridge)",
        preconditions=("(at tiago fridge)", "(in egg fridge)"),
        unsatisfied=("(at tiago fridge)",),
        bindings={"egg": "Egg"},
    )
    RaiderAgent(chat, tools).check(small_kitchen, query)
    user = chat.calls[0][1]["content"]
    assert user.startswith("(pick tiago egg fridge)")
    assert "- (in egg fridge)" in user and "egg = Egg" in user
    assert "do not hold" in user and user.count("(at tiago fridge)") == 2
    assert "Objects in the scene: Floor, CounterTop_1," in user and "WineBottle" in user


# --------------------------------------------------------------------------- the four warnings


def test_warning_1_made_up_tool_response_discards_the_premature_answer(small_kitchen, tools):
    chat = ScriptedChat(
        [
            call("dist_to_target", "Apple")
            + "\nThe tool will say it is close, so:\n"
            + final("none", "The Apple is within reach."),
            final("out_of_reach", "The Apple is 2.04 m away."),
        ]
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick the apple")
    assert verdict.category is Category.OUT_OF_REACH  # not the made-up "none"
    assert warnings_in(verdict) == [1]
    sent = contents(chat.calls[1])
    w1 = [i for i, c in enumerate(sent) if c.startswith("Warning 1")]
    result = [i for i, c in enumerate(sent) if c.startswith("Call to tool dist_to_target")]
    assert len(w1) == 1 and len(result) == 1 and w1[0] < result[0]  # paper order
    assert "discarded" in sent[w1[0]]
    assert verdict.tool_calls == [ToolCall("dist_to_target", ["Apple"], result=2.04)]


def test_warning_2_made_up_tool_name(small_kitchen, tools):
    chat = ScriptedChat(
        [
            call("measure_distance", "Apple"),
            call("dist_to_target", "Apple"),
            final("out_of_reach", "The Apple is 2.04 m away."),
        ]
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick(Apple)")
    assert verdict.category is Category.OUT_OF_REACH
    assert warnings_in(verdict) == [2]
    warning = chat.calls[1][-1]["content"]
    assert warning.startswith("Warning 2") and '"measure_distance"' in warning
    assert "dist_to_target" in warning and "get_obj_state" in warning
    assert verdict.tool_calls[0].tool == "measure_distance"
    assert "unknown tool" in verdict.tool_calls[0].error
    assert verdict.tool_calls[1] == ToolCall("dist_to_target", ["Apple"], result=2.04)


def test_warning_3_unsuccessful_tool_call_feeds_the_tool_error_back(small_kitchen, tools):
    chat = ScriptedChat(
        [
            call("get_obj_state", "Unicorn") + " " + call("get_obj_state"),
            call("get_obj_state", "Fridge"),
            final("out_of_reach", "The Fridge is 3.44 m away."),
        ]
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "open the fridge")
    assert verdict.category is Category.OUT_OF_REACH
    assert warnings_in(verdict) == [3, 3]
    sent = contents(chat.calls[1])[-2:]
    assert sent[0].startswith("Warning 3") and "no object 'Unicorn'" in sent[0]
    assert "takes 1 argument(s), got 0" in sent[1]
    assert [tc.error is not None for tc in verdict.tool_calls] == [True, True, False]
    assert verdict.tool_calls[2].result == {"open": False}


def test_unreadable_tool_call_is_reported_as_warning_3(small_kitchen, tools):
    chat = ScriptedChat(
        ['call_tool{"tool": "get_obj_state", "args": ["Fridge"}', final("none", "Fine.")]
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "close the fridge")
    assert warnings_in(verdict) == [3]
    assert "could not be read" in chat.calls[1][-1]["content"]
    assert verdict.tool_calls[0].error and verdict.category is Category.NONE


def test_warning_4_missing_or_invalid_final_response(small_kitchen, tools):
    chat = ScriptedChat(
        [
            "I believe the robot can probably do it.",
            final("spilled", "Something spilled."),
            final("obstructed", "Contradiction.", response="none"),
            '{"final_response": "unfeasibility", "explanation": "No category."}',
            final(
                "not_present",
                "There is no unicorn in the small_kitchen.",
                grounding={"unicorn": []},
            ),
        ]
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick the unicorn")
    assert verdict.category is Category.NOT_PRESENT
    assert verdict.grounding == {"unicorn": []}
    assert warnings_in(verdict) == [4, 4, 4, 4]
    w = [chat.calls[i][-1]["content"] for i in range(1, 5)]
    assert all(x.startswith("Warning 4") for x in w)
    assert "neither a tool call nor a final response" in w[0]
    assert "category is 'spilled'" in w[1]
    assert "'obstructed' does not go with final_response 'none'" in w[2]
    assert "category of the unfeasibility is missing" in w[3]
    for valid in ("not_present", "out_of_reach", "wrong_state", "robot_state"):
        assert valid in w[1]


def test_unreadable_final_response_gets_warning_4_and_prose_mentions_no_warning_1(
    small_kitchen, tools
):
    chat = ScriptedChat(
        [
            'Decision: {"final_response": "none", "category": ',
            "I will write the final_response once I know. " + call("get_obj_state", "Fridge"),
            final("none", "The Fridge is closed, so it can be opened."),
        ]
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "open(Fridge)")
    assert verdict.category is Category.NONE
    assert warnings_in(verdict) == [4]
    assert "could not be read as a JSON object" in chat.calls[1][-1]["content"]


# --------------------------------------------------------------------------- parsing


def test_raider_labels_and_single_quotes_are_accepted(small_kitchen, tools):
    chat = ScriptedChat(
        ["{'final_response': 'ambiguity', 'category': 'IA', 'explanation': 'Nine cabinets.', "
         "'grounding': {'the cabinet': 'Cabinet', 'the mug': ['mug'], 'x': ['Unicorn']}}"]
    )  # fmt: skip
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "open the cabinet")
    assert verdict.category is Category.AMBIGUITY
    cabinets = sorted(o.id for o in small_kitchen.of_type("Cabinet"))
    assert sorted(verdict.grounding["the cabinet"]) == cabinets and len(cabinets) == 3
    assert verdict.grounding["the mug"] == [small_kitchen.resolve("Mug").id]
    assert verdict.grounding["x"] == []  # unresolved names are dropped
    assert set(verdict.objects) == set(cabinets) | {small_kitchen.resolve("Mug").id}


def test_people_ground_to_their_id(small_kitchen_dict, tools):
    from bt_raider.perception.scene import Scene

    small_kitchen_dict["humans"] = [
        {"id": "h1", "name": "Adriana", "position": {"x": 0, "y": 0, "z": -1.6},
         "looking_at_robot": False, "hands_free": True}
    ]  # fmt: skip
    small_kitchen_dict["inventoryObjects"] = [{"objectId": APPLE, "objectType": "Apple"}]
    scene = Scene(small_kitchen_dict)
    chat = ScriptedChat(
        [
            call("robot_holding") + call("detect_human_gaze", "Adriana"),
            final(
                "wrong_state",
                "Adriana is not looking at the robot.",
                grounding={"apple": ["Apple"], "adriana": ["Adriana"]},
            ),
        ]
    )
    verdict = RaiderAgent(chat, tools).check(scene, "handover(apple, adriana)")
    assert verdict.category is Category.WRONG_STATE
    assert verdict.grounding == {"apple": [APPLE], "adriana": ["h1"]}
    assert verdict.objects == [APPLE]
    assert [tc.result for tc in verdict.tool_calls] == [["Apple"], False]


# --------------------------------------------------------------------------- stopping


def test_time_limit_ends_a_looping_model(small_kitchen, tools):
    chat = ScriptedChat(itertools.repeat(call("robot_holding")), delay=0.005)
    t0 = time.monotonic()
    verdict = RaiderAgent(chat, tools, time_limit=0.5).check(small_kitchen, "pick(Apple)")
    # The model would loop forever: the limit ends it (generous bound for a loaded machine).
    assert time.monotonic() - t0 < 3.0
    assert verdict.category is Category.UNKNOWN
    assert verdict.final_response is Response.UNFEASIBILITY
    assert verdict.explanation.startswith("The check did not finish")
    assert "time limit of 0.5 s" in verdict.explanation
    assert len(chat.calls) >= 2 and len(verdict.tool_calls) >= len(chat.calls) - 1
    assert all(tc == ToolCall("robot_holding", [], result=[]) for tc in verdict.tool_calls)
    assert verdict.trace[-1]["kind"] == "stop"


def test_time_limit_is_kept_even_when_the_model_hangs(small_kitchen, tools):
    def hang(messages):
        time.sleep(1.5)  # a backend that ignores its timeout
        return final("none", "too late")

    chat = ScriptedChat([hang])
    t0 = time.monotonic()
    verdict = RaiderAgent(chat, tools, time_limit=0.3).check(small_kitchen, "pick(Apple)")
    assert time.monotonic() - t0 < 1.0
    assert verdict.category is Category.UNKNOWN and "time limit" in verdict.explanation


def test_each_model_call_gets_the_remaining_time(small_kitchen, tools):
    timeouts = []

    class Recording(ScriptedChat):
        def complete(self, messages, *, tools=None, timeout=None):
            timeouts.append(timeout)
            return super().complete(messages, tools=tools, timeout=timeout)

    chat = Recording([call("robot_holding"), final("none", "ok")], delay=0.05)
    RaiderAgent(chat, tools, time_limit=5).check(small_kitchen, "pick(Apple)")
    assert len(timeouts) == 2 and 4.8 < timeouts[0] <= 5 and timeouts[1] < timeouts[0] - 0.04


def test_cancel_stops_the_check(small_kitchen, tools):
    cancel = threading.Event()
    chat = ScriptedChat(itertools.repeat("Still thinking."), delay=0.01)
    threading.Timer(0.15, cancel.set).start()
    t0 = time.monotonic()
    verdict = RaiderAgent(chat, tools, time_limit=10).check(
        small_kitchen, "pick(Apple)", cancel=cancel
    )
    assert time.monotonic() - t0 < 1.0
    assert verdict.category is Category.UNKNOWN and "cancelled" in verdict.explanation

    cancelled = threading.Event()
    cancelled.set()
    idle = ScriptedChat([final("none", "ok")])
    verdict = RaiderAgent(idle, tools).check(small_kitchen, "pick(Apple)", cancel=cancelled)
    assert verdict.category is Category.UNKNOWN and idle.calls == []


def test_cancel_interrupts_a_slow_model_call(small_kitchen, tools):
    cancel = threading.Event()
    chat = ScriptedChat([lambda m: (time.sleep(2.0), final("none", "late"))[1]])
    threading.Timer(0.1, cancel.set).start()
    t0 = time.monotonic()
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick(Apple)", cancel=cancel)
    # well under the model's 2 s: the wait was cut short (generous for a loaded CI machine)
    assert time.monotonic() - t0 < 1.5 and "cancelled" in verdict.explanation


def test_a_chat_model_raising_anything_fails_closed(small_kitchen, tools):
    def broken(messages):
        raise KeyError("choices")  # a backend bug, not a BackendError

    verdict = RaiderAgent(ScriptedChat([broken]), tools).check(small_kitchen, "pick(Apple)")
    assert verdict.category is Category.UNKNOWN
    assert "the chat model failed" in verdict.explanation and "KeyError" in verdict.explanation


def test_backend_error_fails_closed(small_kitchen, tools):
    chat = ScriptedChat([call("robot_holding"), BackendError("HTTP 503 from http://gpu-box/v1")])
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick(Apple)")
    assert verdict.category is Category.UNKNOWN
    assert "the chat model failed" in verdict.explanation and "503" in verdict.explanation
    assert verdict.tool_calls == [ToolCall("robot_holding", [], result=[])]


def test_bad_agent_options_are_rejected(tools):
    with pytest.raises(BackendError, match="protocol 'json'.*text, native, auto"):
        RaiderAgent(ScriptedChat(), tools, protocol="json")
    with pytest.raises(BackendError, match="time_limit"):
        RaiderAgent(ScriptedChat(), tools, time_limit=0)


# --------------------------------------------------------------------------- concurrency


def test_tool_calls_of_one_turn_run_concurrently_in_call_order(small_kitchen, tools):
    # Synchronised, not timed: the barrier only opens when all three calls are in flight at
    # once (a serial PFM breaks it), and the events make them finish in reverse order.
    barrier = threading.Barrier(3, timeout=5)
    done = {name: threading.Event() for name in "abc"}
    finished: list[str] = []
    lock = threading.Lock()

    @tools.register
    def slow_echo(scene, text: str) -> str:
        """Waits for its peers, then echoes its text (a slow perception model).

        Args:
            text: what to echo.
        """
        barrier.wait()
        after = {"a": "b", "b": "c"}.get(text)
        if after:
            assert done[after].wait(5)
        with lock:
            finished.append(text)
        done[text].set()
        return text

    chat = ScriptedChat(
        [
            call("slow_echo", "a") + call("slow_echo", "b") + call("slow_echo", "c"),
            final("none", "Done."),
        ]
    )
    verdict = RaiderAgent(chat, tools, max_parallel_tools=3).check(small_kitchen, "pick(Apple)")
    assert finished == ["c", "b", "a"]  # they overlapped and c finished first ...
    results = [c for c in contents(chat.calls[1]) if c.startswith("Call to tool slow_echo")]
    assert [r.split()[-1] for r in results] == ['"a"', '"b"', '"c"']  # ... but comes back last
    assert [tc.result for tc in verdict.tool_calls] == ["a", "b", "c"]
    assert all(tc.error is None for tc in verdict.tool_calls)


# --------------------------------------------------------------------------- native protocol


def test_native_tool_calls_with_scripted_model(small_kitchen, tools):
    chat = ScriptedChat(
        [
            ChatReply(
                "",
                [
                    ToolCallRequest("get_obj_state", {"obj": "Fridge"}, "c1"),
                    ToolCallRequest("teleport", {}, "c2"),
                    ToolCallRequest("dist_to_target", '{"target": "Fridge"', "c3"),
                    ToolCallRequest("dist_to_target", {"target": "Fridge"}, None),
                ],
            ),
            ChatReply(final("none", "made up"), [ToolCallRequest("robot_holding", {}, "c5")]),
            final("out_of_reach", "The Fridge is 3.44 m away.", grounding={"fridge": ["Fridge"]}),
        ],
        native_tools=True,
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "open(Fridge)")
    assert verdict.category is Category.OUT_OF_REACH
    assert [t["function"]["name"] for t in chat.tools_seen[0]] == tools.names()
    second = chat.calls[1]
    assistant = second[2]
    assert [tc["id"] for tc in assistant["tool_calls"]] == ["c1", "c2", "c3", "call_1_3"]
    tool_msgs = second[3:]
    assert [m["role"] for m in tool_msgs] == ["tool"] * 4
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2", "c3", "call_1_3"]
    assert tool_msgs[0]["content"].endswith('returned {"open": false}')
    assert tool_msgs[1]["content"].startswith("Warning 2")
    assert tool_msgs[2]["content"].startswith("Warning 3") and "not JSON" in tool_msgs[2]["content"]
    assert tool_msgs[3]["content"].endswith("returned 3.44")
    # Warning 1 comes after the tool messages, which must directly follow the tool calls.
    third = chat.calls[2]
    assert third[-2]["role"] == "tool" and third[-1]["content"].startswith("Warning 1")
    assert warnings_in(verdict) == [2, 3, 1]


# --------------------------------------------------------------------------- real SDK, real HTTP


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def test_openai_sdk_text_protocol_end_to_end(server, small_kitchen, tools):
    server.push_text(
        "Step 1: the egg is Egg.\n- Is the Egg inside a closed receptacle?\n"
        + call("robot_holding")
        + call("check_obj_relationship", "inside", "Fridge")
        + call("get_obj_state", "Fridge")
    )
    server.push_text(
        final(
            "wrong_state",
            "The Egg is inside the Fridge, which is closed.",
            grounding={"the egg": ["Egg"]},
        )
    )
    agent = RaiderAgent(OpenAIChat("fake-model", base_url=server.url), tools, protocol="text")
    verdict = agent.check(small_kitchen, "pick the egg")
    assert verdict.category is Category.WRONG_STATE
    assert verdict.grounding == {"the egg": [small_kitchen.resolve("Egg").id]}
    assert [tc.result for tc in verdict.tool_calls] == [[], ["Egg"], {"open": False}]
    first, second = server.chat_requests
    assert "tools" not in first and first["model"] == "fake-model"
    assert (
        first["messages"][0]["role"] == "system"
        and "## Procedure Steps" in first["messages"][0]["content"]
    )
    assert first["messages"][1]["content"].startswith("pick the egg")
    assert contents(second["messages"])[-3:] == [
        "Call to tool robot_holding with args [] returned []",
        'Call to tool check_obj_relationship with args ["inside", "Fridge"] returned ["Egg"]',
        'Call to tool get_obj_state with args ["Fridge"] returned {"open": false}',
    ]


def test_openai_sdk_native_tool_calls_end_to_end(server, small_kitchen, tools):
    server.push_tool_calls(
        [("get_obj_state", {"obj": "Fridge"}), ("dist_to_target", {"target": "Fridge"})]
    )
    server.push_text(
        final("out_of_reach", "The Fridge is 3.44 m away.", grounding={"the fridge": ["Fridge"]})
    )
    agent = RaiderAgent(OpenAIChat("fake-model", base_url=server.url), tools)
    assert agent.protocol == "native"
    verdict = agent.check(small_kitchen, "Can you please open the fridge?")
    assert verdict.category is Category.OUT_OF_REACH
    assert verdict.tool_calls == [
        ToolCall("get_obj_state", ["Fridge"], result={"open": False}),
        ToolCall("dist_to_target", ["Fridge"], result=3.44),
    ]
    first, second = server.chat_requests
    assert [t["function"]["name"] for t in first["tools"]] == tools.names()
    assistant, *tool_msgs = second["messages"][2:]
    ids = [tc["id"] for tc in assistant["tool_calls"]]
    assert [m["tool_call_id"] for m in tool_msgs] == ids and len(ids) == 2
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"obj": "Fridge"}
    assert (
        tool_msgs[1]["content"] == 'Call to tool dist_to_target with args ["Fridge"] returned 3.44'
    )


def test_agent_survives_a_server_error_through_retries(server, small_kitchen, tools):
    server.push_error(500, "overloaded")
    server.push_text(final("none", "The Fridge can be closed."))
    chat = OpenAIChat("fake-model", base_url=server.url, backoff=0.01)
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "close(Fridge)")
    assert verdict.category is Category.NONE and len(server.chat_requests) == 2


def test_unreachable_endpoint_gives_unknown_quickly(small_kitchen, tools):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    chat = OpenAIChat("llama3", base_url=url, max_retries=1, backoff=0.01)
    t0 = time.monotonic()
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick(Apple)")
    assert time.monotonic() - t0 < 3.0
    assert verdict.category is Category.UNKNOWN
    assert "unreachable" in verdict.explanation and url in verdict.explanation


def test_a_reply_that_is_not_json_gives_unknown(server, small_kitchen, tools):
    server.push_raw(b"<html>502 Bad Gateway</html>")
    chat = OpenAIChat("fake-model", base_url=server.url, backoff=0.01)
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick(Apple)")
    assert verdict.category is Category.UNKNOWN
    assert "unusable reply" in verdict.explanation and server.url in verdict.explanation


# ------------------------------------------------------------------- bt-raider check, end to end

#: A scene built here: the robot and an apple within reach.
TINY_SCENE = {
    "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
    "objects": [
        {
            "objectId": "Apple|1",
            "objectType": "Apple",
            "position": {"x": 0.3, "y": 0.9, "z": 0.3},
            "visible": True,
            "pickupable": True,
        }
    ],
    "inventoryObjects": [],
}


def run_check(tmp_path, url: str, *extra: str) -> tuple[subprocess.CompletedProcess, float]:
    """``bt-raider check --backend openai`` on TINY_SCENE in a fresh process, keyless."""
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(TINY_SCENE))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    command = [sys.executable, "-m", "bt_raider.cli", "check", "--backend", "openai"]
    command += ["--base-url", url, "--model", "m", "--scene", str(scene), *extra, "pick(Apple)"]
    t0 = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    return done, time.monotonic() - t0


def test_check_time_limit_bounds_the_wall_time_against_a_trickling_server(server, tmp_path):
    # A byte every 0.5 s: the reply would take minutes; the old process lived ~65 s.
    for _ in range(3):
        server.push_trickle(final("none", "The apple can be picked."), every=0.5)
    done, wall = run_check(tmp_path, server.url, "--time-limit", "2")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["category"] == "unknown" and "time limit" in verdict["explanation"]
    # 2 s limit; the interpreter's start-up comes on top (generous for a loaded machine).
    assert wall < 8.0, wall


def test_check_with_a_reply_that_is_not_json_prints_an_unknown_verdict(server, tmp_path):
    server.push_raw(b"{not json")
    done, _ = run_check(tmp_path, server.url)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["category"] == "unknown" and "unusable reply" in verdict["explanation"]


def test_check_answers_at_its_time_limit_while_the_backend_still_loads(
    tmp_path, monkeypatch, capsys
):
    release = threading.Event()

    def slow_to_load(backend, **options):
        release.wait(30)  # like importing the openai SDK on a busy machine
        raise AssertionError("the command should not have waited for this")

    monkeypatch.setattr(check_command, "make_checker", slow_to_load)
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(TINY_SCENE))
    t0 = time.monotonic()
    try:
        rc = cli_main(["check", "--scene", str(scene), "--time-limit", "0.5", "pick(Apple)"])
        elapsed = time.monotonic() - t0
    finally:
        release.set()
    assert rc == 0 and elapsed < 5.0  # 0.5 s and a short grace; generous for a loaded machine
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["category"] == "unknown"
    assert "time limit of 0.5 s" in verdict["explanation"] and "loading" in verdict["explanation"]


def test_make_checker_and_check_with_the_openai_backend(server, small_kitchen):
    checker = make_checker("openai", model="fake-model", base_url=server.url, time_limit=7)
    assert isinstance(checker, RaiderAgent) and checker.time_limit == 7
    assert checker.chat.model == "fake-model"
    server.push_tool_calls([("dist_to_target", {"target": "Apple"})])
    server.push_text(final("out_of_reach", "The Apple is 2.04 m away."))
    verdict = check(
        small_kitchen, "pick(Apple)", backend="openai", model="fake-model", base_url=server.url
    )
    assert verdict.category is Category.OUT_OF_REACH
    assert verdict.tool_calls == [ToolCall("dist_to_target", ["Apple"], result=2.04)]


# --------------------------------------------------------------------------- fail closed
@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e308])
def test_a_tool_reading_an_unusable_number_ends_unknown_whatever_the_model_says(
    small_kitchen_dict, tools, value
):
    # The scene is changed after loading (a simulator, the team's own perception): the robot's
    # x is not a number the reasoner can use. A model told only "the tool failed" could still
    # answer none; the check must not.
    scene = Scene(small_kitchen_dict)
    scene.data["agent"]["position"]["x"] = value
    chat = ScriptedChat(
        [
            call("dist_robot_to_obj", "Apple"),
            final("none", "All preconditions to pick the Apple hold."),
        ]
    )
    verdict = RaiderAgent(chat, tools).check(scene, "pick(Apple)")
    assert verdict.category is Category.UNKNOWN
    assert verdict.final_response is Response.UNFEASIBILITY
    assert "cannot be reasoned about" in verdict.explanation
    assert len(chat.calls) == 1  # the model was not asked again
    assert verdict.tool_calls[0].error is not None


def test_a_tool_error_of_the_models_own_making_still_goes_back_to_it(small_kitchen, tools):
    chat = ScriptedChat(
        [call("dist_robot_to_obj", "Unicorn"), final("not_present", "There is no Unicorn.")]
    )
    verdict = RaiderAgent(chat, tools).check(small_kitchen, "pick(Unicorn)")
    assert verdict.category is Category.NOT_PRESENT and warnings_in(verdict) == [3]
