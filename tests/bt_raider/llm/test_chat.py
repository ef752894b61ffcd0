"""Chat backends: the real openai SDK over HTTP to a local fake server, retries and failures,
a real (tiny, locally built) transformers model, the scripted model, make_chat and prompts."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from bt_raider.errors import BackendError
from bt_raider.llm.chat import (
    DUMMY_API_KEY,
    ChatReply,
    OpenAIChat,
    ScriptedChat,
    ToolCallRequest,
    TransformersChat,
    call_within,
    make_chat,
)
from bt_raider.llm.prompts import PromptError, available, render
from tests.bt_raider.llm.fake_openai_server import FakeOpenAIServer, fake_embedding

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "pick(Apple)"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def _chat(server: FakeOpenAIServer, **kwargs) -> OpenAIChat:
    chat = OpenAIChat("fake-model", base_url=server.url, backoff=0.01, **kwargs)
    chat.sleeps = []
    chat._sleep = chat.sleeps.append  # record the backoff instead of waiting
    return chat


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- ScriptedChat


def test_scripted_chat_replays_in_order_and_records_every_conversation():
    boom = BackendError("scripted outage")
    chat = ScriptedChat(
        [
            "first",
            ChatReply("second", [ToolCallRequest("robot_holding", {}, "c1")]),
            lambda messages: f"saw {len(messages)} messages",
            boom,
        ]
    )
    assert chat.complete(MESSAGES).content == "first"
    reply = chat.complete(MESSAGES, tools=[{"type": "function"}])
    assert reply.tool_calls == [ToolCallRequest("robot_holding", {}, "c1")]
    assert chat.complete(MESSAGES + [{"role": "user", "content": "x"}]).content == "saw 3 messages"
    with pytest.raises(BackendError, match="scripted outage"):
        chat.complete(MESSAGES)
    with pytest.raises(BackendError, match="exhausted: call 5 has no reply"):
        chat.complete(MESSAGES)
    assert len(chat.calls) == 5
    assert chat.calls[0] == MESSAGES and chat.calls[0] is not MESSAGES
    assert chat.tools_seen[:2] == [None, [{"type": "function"}]]


def test_scripted_chat_delay_respects_the_timeout():
    chat = ScriptedChat(["late"], delay=2.0)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="timed out"):
        chat.complete(MESSAGES, timeout=0.05)
    assert time.monotonic() - t0 < 1.5  # cut short, well before the 2 s reply


def test_scripted_chat_rejects_a_bad_script_item():
    with pytest.raises(BackendError, match="must be a str, ChatReply"):
        ScriptedChat([42]).complete(MESSAGES)


# --------------------------------------------------------------------------- OpenAIChat


def test_openai_text_reply_through_the_real_sdk(server):
    server.push_text("Step 1: ground the apple.")
    reply = _chat(server).complete(MESSAGES)
    assert reply == ChatReply("Step 1: ground the apple.", [])
    (body,) = server.chat_requests
    assert body["model"] == "fake-model"
    assert body["messages"] == MESSAGES
    assert body["temperature"] == 0.0
    assert "tools" not in body
    # A base_url without a key uses the dummy key local servers ignore.
    auth = {k.lower(): v for k, v in server.requests[0]["headers"].items()}["authorization"]
    assert auth == f"Bearer {DUMMY_API_KEY}"


def test_openai_native_tool_calls_are_parsed(server):
    tools = [{"type": "function", "function": {"name": "get_obj_state", "parameters": {}}}]
    server.push_tool_calls([("get_obj_state", {"obj": "Fridge"}), ("robot_holding", "{not json")])
    reply = _chat(server).complete(MESSAGES, tools=tools)
    assert [c.name for c in reply.tool_calls] == ["get_obj_state", "robot_holding"]
    assert reply.tool_calls[0].args == {"obj": "Fridge"}
    assert reply.tool_calls[1].args == "{not json"  # kept raw: the agent reports it
    assert all(c.id and c.id.startswith("call_") for c in reply.tool_calls)
    assert server.chat_requests[0]["tools"] == tools


def test_openai_without_native_tools_does_not_send_schemas(server):
    server.push_text("ok")
    _chat(server, native_tools=False).complete(MESSAGES, tools=[{"type": "function"}])
    assert "tools" not in server.chat_requests[0]


@pytest.mark.parametrize("status", [500, 503, 429])
def test_openai_retries_transport_errors_then_succeeds(server, status):
    server.push_error(status, "overloaded")
    server.push_error(status, "still overloaded")
    server.push_text("finally")
    chat = _chat(server)
    assert chat.complete(MESSAGES).content == "finally"
    assert len(server.chat_requests) == 3
    assert chat.sleeps == [0.01, 0.02]  # ours, exponential


def test_openai_gives_up_after_max_retries_naming_url_and_model(server):
    for _ in range(3):
        server.push_error(500, "down")
    chat = _chat(server, max_retries=2)
    with pytest.raises(BackendError) as err:
        chat.complete(MESSAGES)
    assert server.url in str(err.value) and "'fake-model'" in str(err.value)
    assert "HTTP 500" in str(err.value) and "3 attempt(s)" in str(err.value)
    assert len(server.chat_requests) == 3
    assert chat.sleeps == [0.01, 0.02]


@pytest.mark.parametrize(("status", "words"), [(401, "refused the API key"), (400, "rejected")])
def test_openai_does_not_retry_auth_or_request_errors(server, status, words):
    server.push_error(status, "nope")
    server.push_text("never served")
    chat = _chat(server)
    with pytest.raises(BackendError, match=words):
        chat.complete(MESSAGES)
    assert len(server.chat_requests) == 1
    assert chat.sleeps == []
    assert server.pending == 1


def test_openai_unreachable_endpoint_fails_fast_with_a_clear_message():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    chat = OpenAIChat("llama3", base_url=url, max_retries=2, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(BackendError) as err:
        chat.complete(MESSAGES)
    assert time.monotonic() - t0 < 3.0
    text = str(err.value)
    assert url in text and "'llama3'" in text and "unreachable after 3 attempt(s)" in text


def test_openai_timeout_bounds_the_whole_call_including_retries(server):
    def slow(body):
        time.sleep(2.0)
        return 200, server.completion(body, content="too late")

    for _ in range(5):
        server.push(slow)
    chat = OpenAIChat("fake-model", base_url=server.url, max_retries=4, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="timed out|no time left"):
        chat.complete(MESSAGES, timeout=0.3)
    assert time.monotonic() - t0 < 1.5  # the 2 s server never got to answer


def test_openai_api_key_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.push_text("ok")
    OpenAIChat("m", base_url=server.url).complete(MESSAGES)
    headers = {k.lower(): v for k, v in server.requests[0]["headers"].items()}
    assert headers["authorization"] == "Bearer sk-from-env"


def test_openai_without_key_or_base_url_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-4o")


def test_openai_reply_without_choices_is_a_backend_error(server):
    server.push((200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": []}))  # fmt: skip
    with pytest.raises(BackendError, match="without choices"):
        _chat(server).complete(MESSAGES)


def _call_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "bt_raider-call"]


def test_openai_timeout_holds_against_a_server_that_trickles_its_reply(server):
    # One byte every 0.2 s: every read succeeds, so no read timeout ever fires (the ~250-byte
    # reply would take ~50 s), yet the call must end at its 1 s timeout.
    server.push_trickle("too slow to matter", every=0.2)
    chat = OpenAIChat("fake-model", base_url=server.url, max_retries=0)
    t0 = time.monotonic()
    with pytest.raises(BackendError) as err:
        chat.complete(MESSAGES, timeout=1.0)
    assert time.monotonic() - t0 < 3.0  # does not hang (1 s + slack on a loaded machine)
    assert "timed out" in str(err.value) and "timeout 1 s" in str(err.value)
    assert server.url in str(err.value)
    # The abandoned request stops reading too: its thread ends instead of trickling on.
    end = time.monotonic() + 5.0
    while _call_threads() and time.monotonic() < end:
        time.sleep(0.05)
    assert _call_threads() == []


def test_openai_retries_share_one_timeout_against_a_trickling_server(server):
    for _ in range(4):
        server.push_trickle("too slow", every=0.2)
    chat = OpenAIChat("fake-model", base_url=server.url, max_retries=3, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="timed out|no time left"):
        chat.complete(MESSAGES, timeout=1.0)
    assert time.monotonic() - t0 < 3.0


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"", b"[1, 2]", b'{"choices": [{"message": null}]}', b'"text"'],
    ids=["broken", "empty", "list", "null-message", "string"],
)
def test_openai_reply_that_is_not_a_completion_is_a_backend_error(server, body):
    server.push_raw(body)
    server.push_text("never asked for")
    with pytest.raises(BackendError) as err:
        _chat(server).complete(MESSAGES)
    text = str(err.value)
    assert server.url in text and "'fake-model'" in text
    assert "unusable reply" in text or "without choices" in text
    assert server.pending == 1  # not retried: the same server would say the same


def test_openai_base_url_from_the_environment_needs_no_key(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    server.push_text("local")
    chat = OpenAIChat("m")
    assert chat.base_url.rstrip("/") == server.url
    assert chat.complete(MESSAGES).content == "local"
    auth = {k.lower(): v for k, v in server.requests[0]["headers"].items()}["authorization"]
    assert auth == f"Bearer {DUMMY_API_KEY}"


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "https://API.openai.com/v1/"])
def test_openai_own_endpoint_still_needs_a_key(monkeypatch, url):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-4o")
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-4o", base_url=url)


def test_call_within_returns_raises_or_gives_up():
    assert call_within(lambda: 42, 1.0) == 42
    assert call_within(lambda: 7, None) == 7
    with pytest.raises(ZeroDivisionError):
        call_within(lambda: 1 / 0, 1.0)
    release = threading.Event()
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match="0.10 s"):
        call_within(lambda: release.wait(10), 0.1)
    assert time.monotonic() - t0 < 2.0
    release.set()


def test_fake_server_embeddings_are_deterministic(server):
    import openai

    client = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)
    out = client.embeddings.create(model="e", input=["apple", "pear", "apple"])
    vecs = [d.embedding for d in out.data]
    assert vecs[0] == pytest.approx(vecs[2]) and vecs[0] != pytest.approx(vecs[1])
    assert vecs[0] == pytest.approx(fake_embedding("apple"), abs=1e-6)
    assert sum(v * v for v in vecs[1]) == pytest.approx(1.0, abs=1e-5)


# --------------------------------------------------------------------------- TransformersChat


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A real (random, tiny) GPT-2 with a byte-level BPE tokenizer, saved to disk."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("tinylm")
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<unk>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(["call_tool pick the apple final_response none"] * 5, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>")
    # A template that, like Gemma's, refuses a system turn.
    fast.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'system' %}"
        "{{ raise_exception('system role not supported') }}{% endif %}"
        "{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}"
    )
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(fast), n_positions=1024, n_embd=16, n_layer=1, n_head=2,
        eos_token_id=fast.eos_token_id, bos_token_id=fast.eos_token_id,
    )  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def test_transformers_chat_generates_from_a_local_folder(tiny_model):
    chat = make_chat("transformers", model=tiny_model, max_new_tokens=4)
    assert isinstance(chat, TransformersChat) and chat.native_tools is False
    first = chat.complete(MESSAGES, timeout=30)  # system turn folded into the user turn
    assert isinstance(first, ChatReply) and first.tool_calls == []
    tokenizer, _ = chat._loaded
    again = chat.complete(MESSAGES, timeout=30)
    assert again.content == first.content  # greedy decoding is repeatable
    assert chat._loaded[0] is tokenizer  # loaded once
    # max_new_tokens bounds the reply: one token decodes to one vocabulary entry.
    one = TransformersChat(tiny_model, max_new_tokens=1).complete(MESSAGES, timeout=30)
    singles = {
        tokenizer.decode([i], skip_special_tokens=True).strip() for i in range(len(tokenizer))
    }
    assert one.content in singles
    assert first.content.startswith(one.content)


@pytest.mark.torch  # loads torch and transformers before it finds nothing to load
def test_transformers_chat_never_downloads(tmp_path):
    with pytest.raises(BackendError, match="not a folder on disk"):
        TransformersChat("gpt2").complete(MESSAGES)
    with pytest.raises(BackendError, match="cannot load"):
        TransformersChat(str(tmp_path)).complete(MESSAGES)


# --------------------------------------------------------------------------- make_chat


def test_make_chat_builds_each_backend(server):
    assert isinstance(make_chat("scripted", replies=["x"]), ScriptedChat)
    chat = make_chat("openai", model="qwen", base_url=server.url)
    assert isinstance(chat, OpenAIChat) and chat.model == "qwen"


def test_make_chat_errors_name_the_valid_choices():
    with pytest.raises(BackendError, match="unknown chat backend 'claude'.*openai, transformers"):
        make_chat("claude")
    with pytest.raises(BackendError, match="does not take option.*temprature"):
        make_chat("openai", base_url="http://127.0.0.1:1/v1", temprature=0.3)
    with pytest.raises(BackendError, match="needs model="):
        make_chat("transformers")


# --------------------------------------------------------------------------- prompts


def test_render_loads_package_templates():
    assert {"raider_system", "raider_user", "raider_warning"} <= set(available())
    text = render("raider_warning", number=2, tool="teleport", tools=["a", "b"])
    assert text.startswith("Warning 2") and '"teleport"' in text and "a, b" in text


def test_render_errors_name_the_template_and_the_options():
    with pytest.raises(PromptError, match="unknown prompt template 'nope'.*raider_system"):
        render("nope")
    with pytest.raises(PromptError, match="'raider_warning' needs a variable.*'tool'"):
        render("raider_warning", number=2)
