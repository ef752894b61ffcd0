"""Messages and the in-process bus: frames, the 500-character bound, counting, request/reply."""

from __future__ import annotations

import json
import threading
import time

import pytest

from bt_raider.cooperation.messaging import (
    MAX_FRAME_CHARS,
    InProcessHub,
    Message,
    MessageBus,
    MessageKind,
    fit,
)
from bt_raider.errors import CommunicationError

SUB = {"action": "put", "target": "apple", "location": "coffeetable"}


def hello(sender="alice", text="Hi, I'm Alice in the kitchen.", **kw) -> Message:
    return Message(MessageKind.HELLO, sender, 3, text, room="kitchen", **kw)


def test_a_message_round_trips_through_its_frame():
    msg = Message(
        "validation_request",
        "alice",
        12,
        "Bob, have you already taken the apple (7)?",
        to="bob",
        room="kitchen",
        data={"subgoal": SUB, "since": 4},
    )
    frame = msg.to_json()
    assert len(frame) <= MAX_FRAME_CHARS
    back = Message.from_json(frame)
    assert back == msg
    assert back.kind is MessageKind.VALIDATION_REQUEST
    assert json.loads(frame)["data"]["subgoal"]["target"] == "apple"


def test_the_frame_bound_is_enforced_both_ways():
    long = hello(text="x" * 600)
    with pytest.raises(
        CommunicationError,
        match=r"hello message from 'alice' is \d+ characters: a frame holds at most 500",
    ):
        long.to_json()
    frame = json.dumps(long.to_dict())
    with pytest.raises(CommunicationError, match="at most 500"):
        Message.from_json(frame)
    # exactly at the bound is fine
    base = len(hello(text="").to_json())
    assert len(hello(text="y" * (MAX_FRAME_CHARS - base)).to_json()) == MAX_FRAME_CHARS
    with pytest.raises(CommunicationError):
        hello(text="y" * (MAX_FRAME_CHARS - base + 1)).to_json()


@pytest.mark.parametrize(
    "frame, problem",
    [
        ("not json", "not JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"kind": "hello", "sender": "a"}', "lacks field"),
        ('{"kind": "hello", "sender": "a", "step": 1, "colour": "red"}', "unknown field"),
        (
            '{"kind": "shout", "sender": "a", "step": 1}',
            "kind 'shout' is unknown: expected one of hello",
        ),
        ('{"kind": "hello", "sender": "", "step": 1}', "'sender' must be a non-empty string"),
        ('{"kind": "hello", "sender": "a", "step": -1}', "step must be an integer >= 0"),
        ('{"kind": "hello", "sender": "a", "step": 1, "data": []}', "data must be an object"),
        (
            '{"kind": "validation_request", "sender": "a", "step": 1, "data": {"subgoal": {"action": "put", "target": "x"}}}',
            "needs an addressee",
        ),
        (
            '{"kind": "subgoal_achieved", "sender": "a", "step": 1, "data": {}}',
            "data.subgoal must be an object",
        ),
        (
            '{"kind": "validation_answer", "sender": "a", "step": 1, "reply_to": "r", "data": {"answer": "maybe", "subgoal": {"action": "put", "target": "x"}}}',
            "data.answer 'maybe' is not one of yes, no, unknown",
        ),
        (
            '{"kind": "hello", "sender": "a", "step": 1, "data": {"objects": [{"id": 3}]}}',
            "data.objects must be a list",
        ),
    ],
)
def test_malformed_frames_are_refused_with_the_reason(frame, problem):
    with pytest.raises(CommunicationError, match=problem):
        Message.from_json(frame)


def test_fit_sends_as_many_items_as_one_frame_holds():
    items = [f"object number {i:03d}" for i in range(100)]

    def build(n: int) -> Message:
        return hello(text="I see " + ", ".join(items[:n]))

    msg = fit(build, len(items))
    n = msg.text.count("object number")
    assert 0 < n < 100
    assert len(msg.to_json()) <= MAX_FRAME_CHARS
    with pytest.raises(CommunicationError):
        build(n + 1).to_json()  # one more would not fit


def test_broadcasts_reach_everyone_else_and_are_counted():
    hub = InProcessHub()
    alice, bob, carol = hub.connect("alice"), hub.connect("bob"), hub.connect("carol")
    assert isinstance(alice, MessageBus)
    heard: list[Message] = []
    bob.subscribe(heard.append)
    msg = hello()
    alice.publish(msg)
    assert alice.poll() == []
    assert [m.text for m in bob.poll()] == [msg.text]
    assert [m.text for m in carol.poll()] == [msg.text]
    assert bob.poll() == []  # polling drains
    assert [m.id for m in heard] == [msg.id]
    frame = len(msg.to_json())
    assert alice.stats.messages == 1 and alice.stats.characters == frame
    assert hub.stats.messages == 1 and bob.stats.messages == 0
    addressed = Message(MessageKind.STATUS, "bob", 4, "to carol only", to="carol")
    bob.publish(addressed)
    assert alice.poll() == [] and [m.text for m in carol.poll()] == ["to carol only"]
    assert hub.stats.messages == 2


def test_the_bus_refuses_spoofed_senders_unknown_agents_and_oversized_frames():
    hub = InProcessHub()
    alice = hub.connect("alice")
    hub.connect("bob")
    with pytest.raises(CommunicationError, match="'alice' cannot send a message signed by 'bob'"):
        alice.publish(hello(sender="bob"))
    with pytest.raises(
        CommunicationError, match="no agent 'zed' on the bus: connected are alice, bob"
    ):
        alice.publish(Message(MessageKind.STATUS, "alice", 1, "hi", to="zed"))
    with pytest.raises(CommunicationError, match="at most 500"):
        alice.publish(hello(text="z" * 700))
    with pytest.raises(CommunicationError, match="already connected"):
        hub.connect("alice")
    assert hub.stats.messages == 0  # nothing refused was counted


def request(to="bob") -> Message:
    return Message(
        MessageKind.VALIDATION_REQUEST, "alice", 5, "did you?", to=to, data={"subgoal": SUB}
    )


def test_a_request_is_answered_by_the_served_handler():
    hub = InProcessHub()
    alice, bob = hub.connect("alice"), hub.connect("bob")
    seen: list[Message] = []

    def answer(req: Message) -> Message:
        seen.append(req)
        return req.reply(
            "bob", 5, kind="validation_answer", text="Yes.", data={"answer": "yes", "subgoal": SUB}
        )

    bob.serve(answer)
    req = request()
    reply = alice.request("bob", req, timeout=1.0)
    assert reply is not None and reply.data["answer"] == "yes" and reply.reply_to == req.id
    assert seen[0].id == req.id
    assert alice.stats.messages == 1 and bob.stats.messages == 1  # the answer is bob's
    assert hub.stats.characters == len(req.to_json()) + len(reply.to_json())


def test_no_answer_is_none_and_never_waits_past_the_timeout():
    hub = InProcessHub()
    alice, bob = hub.connect("alice"), hub.connect("bob")
    assert alice.request("bob", request(), timeout=1.0) is None  # nobody serves
    release = threading.Event()

    def slow(req: Message) -> Message:
        release.wait(5)
        return req.reply("bob", 5, kind="validation_answer", data={"answer": "no", "subgoal": SUB})

    bob.serve(slow)
    t0 = time.monotonic()
    assert alice.request("bob", request(), timeout=0.2) is None
    assert time.monotonic() - t0 < 1.0
    release.set()
    hub.close()


def test_a_wrong_answer_or_addressee_is_an_error():
    hub = InProcessHub()
    alice, bob = hub.connect("alice"), hub.connect("bob")
    bob.serve(
        lambda req: Message(
            MessageKind.VALIDATION_ANSWER,
            "bob",
            1,
            reply_to="other",
            to="alice",
            data={"answer": "no", "subgoal": SUB},
        )
    )
    with pytest.raises(CommunicationError, match="answered request"):
        alice.request("bob", request(), timeout=1.0)
    with pytest.raises(CommunicationError, match="addressed to 'bob' but sent to 'alice'"):
        bob.request("alice", request(), timeout=1.0)
    with pytest.raises(CommunicationError, match="timeout must be"):
        alice.request("bob", request(), timeout=-1)
    alice.close()
    with pytest.raises(CommunicationError, match="closed"):
        alice.publish(hello())
