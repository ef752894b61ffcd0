"""ZenohBus: REVECA's messages over real Zenoh sessions on 127.0.0.1 (no other address)."""

from __future__ import annotations

import ipaddress
import json
import threading
import time

import pytest

zenoh = pytest.importorskip("zenoh")

from bt_raider.cooperation.messaging import InProcessHub, Message, MessageKind  # noqa: E402
from bt_raider.cooperation.validator import ReobservingValidator  # noqa: E402
from bt_raider.errors import CommunicationError  # noqa: E402
from bt_raider.fleet.faults import FaultTolerantBus  # noqa: E402
from bt_raider.fleet.zenoh_bus import ZenohBus  # noqa: E402
from bt_raider.fleet.zenoh_config import loopback_endpoint, make_config  # noqa: E402

pytestmark = pytest.mark.zenoh

SUB = {"action": "put", "target": "apple", "object_id": "12"}


def request(sender: str = "alice", to: str = "bob", **data) -> Message:
    return Message(
        kind=MessageKind.VALIDATION_REQUEST,
        sender=sender,
        step=3,
        to=to,
        text=f"{to}, have you taken the apple?",
        data={"subgoal": SUB, **data},
    )


def answer_no(req: Message) -> Message:
    return req.reply(
        req.to,
        4,
        kind=MessageKind.VALIDATION_ANSWER,
        text="No, I have not taken the apple.",
        data={"answer": "no", "subgoal": dict(req.data["subgoal"])},
    )


class Raw(ZenohBus):
    """A collaborator whose answers are replaced by ``wire`` bytes (fault injection)."""

    wire: bytes = b""

    def encode_answer(self, answer: Message) -> bytes:
        return self.wire


@pytest.fixture
def team():
    """Factory of buses on loopback, each connected to the ones made before; closed at the end."""
    made: list[ZenohBus] = []

    def make(name: str, cls=ZenohBus, **kwargs) -> ZenohBus:
        endpoint = loopback_endpoint()
        bus = cls(
            name,
            team="t",
            listen=[endpoint],
            connect=[b._endpoint for b in made],
            **kwargs,
        )
        bus._endpoint = endpoint
        made.append(bus)
        for other in made:
            assert other.wait_for_peers([b.name for b in made], 10.0), "peers did not meet"
        return bus

    yield make
    for b in made:
        b.close()


def _addresses_of_this_process() -> list[str]:
    psutil = pytest.importorskip("psutil")
    return [c.laddr.ip for c in psutil.Process().net_connections(kind="inet") if c.laddr]


def test_sessions_bind_loopback_only(team):
    alice = team("alice")
    team("bob")
    # A bus left to its defaults also listens on loopback only, with multicast scouting off.
    default = ZenohBus("carol", team="t", connect=[alice._endpoint])
    try:
        assert alice.wait_for_peers(["carol"], 10.0)
        addresses = _addresses_of_this_process()
        assert addresses, "the sessions opened no socket"
        for ip in addresses:
            assert ipaddress.ip_address(ip).is_loopback, f"a socket is bound to {ip}"
    finally:
        default.close()
    config = json.loads(make_config().get_json("scouting/multicast/enabled"))
    assert config is False


def test_request_answered_by_the_collaborators_queryable(team):
    alice, bob = team("alice"), team("bob")
    seen: list[Message] = []

    def serve(req: Message) -> Message:
        seen.append(req)
        return answer_no(req)

    bob.serve(serve)
    req = request()
    reply = alice.request("bob", req, 2.0)
    assert reply is not None
    assert reply.kind is MessageKind.VALIDATION_ANSWER
    assert reply.data["answer"] == "no" and reply.reply_to == req.id and reply.to == "alice"
    assert [m.id for m in seen] == [req.id]
    assert alice.fault_count == 0 and bob.fault_count == 0
    # Both frames are counted on the side that sent them.
    assert alice.stats.messages == 1 and bob.stats.messages == 1
    assert alice.stats.characters == len(req.to_json())
    assert len(alice.rtts) == 1


def test_timeout_is_unknown_and_counted(team):
    alice, bob = team("alice"), team("bob")

    def slow(req: Message) -> Message:
        time.sleep(1.2)
        return answer_no(req)

    bob.serve(slow)
    started = time.monotonic()
    assert alice.request("bob", request(), 0.3) is None
    elapsed = time.monotonic() - started
    assert 0.25 <= elapsed < 0.3 + alice.grace + 0.3
    assert alice.fault_summary() == {"timeout": 1}
    assert alice.fault_log[-1].peer == "bob"


@pytest.mark.parametrize(
    ("wire", "fault"),
    [
        (b"{not json", "malformed"),
        (b"\xff\xfe\x00garbage", "malformed"),
        (json.dumps({"kind": "validation_answer", "sender": "bob"}).encode(), "malformed"),
        (
            json.dumps({"kind": "hello", "sender": "bob", "step": 1, "text": "x" * 600}).encode(),
            "oversized",
        ),
        (b"x" * 10_000, "oversized"),
    ],
)
def test_garbage_answers_are_unknown_and_counted(team, wire, fault):
    alice, bob = team("alice"), team("bob", cls=Raw)
    bob.wire = wire
    bob.serve(answer_no)
    assert alice.request("bob", request(), 2.0) is None
    assert alice.fault_summary() == {fault: 1}


def test_answer_to_another_request_is_rejected(team):
    alice, bob = team("alice"), team("bob", cls=Raw)
    other = request()
    bob.wire = answer_no(other).to_json().encode()  # a valid frame, for a different request
    bob.serve(answer_no)
    assert alice.request("bob", request(), 2.0) is None
    assert alice.fault_summary() == {"mismatched": 1}


def test_server_error_and_missing_collaborator(team):
    alice, bob = team("alice"), team("bob")

    def broken(req: Message) -> Message:
        raise RuntimeError("memory locked")

    bob.serve(broken)
    assert alice.request("bob", request(), 2.0) is None
    assert alice.fault_summary() == {"error_reply": 1}
    assert bob.fault_summary() == {"handler_error": 1}
    started = time.monotonic()
    assert alice.request("carol", request(to="carol"), 2.0) is None
    assert time.monotonic() - started < 1.0, "an absent collaborator must not cost the timeout"
    assert alice.faults["unreachable"] == 1


def test_broadcasts_reach_everyone_else_and_direct_messages_one(team):
    alice, bob, carol = team("alice"), team("bob"), team("carol")
    heard: list[str] = []
    carol.subscribe(lambda m: heard.append(m.text))
    hello = Message(
        kind=MessageKind.HELLO, sender="alice", step=0, text="Hi, I'm Alice.", room="kitchen"
    )
    alice.publish(hello)
    direct = Message(kind=MessageKind.STATUS, sender="alice", step=1, text="only for bob", to="bob")
    alice.publish(direct)
    assert bob.wait_broadcasts({"alice": 1}, 5.0) and carol.wait_broadcasts({"alice": 1}, 5.0)
    deadline = time.monotonic() + 5.0
    got_bob: list[Message] = []
    while len(got_bob) < 2 and time.monotonic() < deadline:
        got_bob += bob.poll()
        time.sleep(0.01)
    # Broadcast and direct messages travel on different Zenoh keys, and Zenoh orders messages
    # per key only: both arrive, in either order.
    assert sorted(m.id for m in got_bob) == sorted([hello.id, direct.id])
    time.sleep(0.2)
    assert [m.id for m in carol.poll()] == [hello.id]
    assert heard == ["Hi, I'm Alice."]
    assert alice.poll() == []  # one's own broadcast is not delivered back
    assert alice.broadcasts_sent == 1
    assert bob.broadcasts_from() == {"alice": 1}


def test_malformed_and_spoofed_publications_are_dropped(team):
    alice, bob = team("alice"), team("bob")
    raw = alice.session
    raw.put("bt_raider/t/alice/out/hello", b"\x00\x01 not a frame")
    spoof = Message(kind=MessageKind.HELLO, sender="mallory", step=0, text="trust me")
    raw.put("bt_raider/t/alice/out/hello", spoof.to_json().encode())
    raw.put("bt_raider/t/alice/out/hello", b"{" + b" " * 3000 + b"}")
    good = Message(kind=MessageKind.HELLO, sender="alice", step=0, text="real")
    alice.publish(good)
    assert bob.wait_broadcasts({"alice": 1}, 5.0)
    assert [m.id for m in bob.poll()] == [good.id]
    assert bob.fault_summary() == {"malformed": 1, "mismatched": 1, "oversized": 1}


def test_topics_carry_bounded_payloads(team):
    alice, bob = team("alice", max_topic_chars=100), team("bob", max_topic_chars=100)
    got: list[tuple[str, str]] = []
    done = threading.Event()

    def on_record(sender: str, text: str) -> None:
        got.append((sender, text))
        done.set()

    bob.subscribe_topic("memory", on_record)
    alice.subscribe_topic("memory", lambda s, t: got.append(("echo", t)))
    time.sleep(0.3)  # let the subscription reach alice
    with pytest.raises(CommunicationError, match="at most 100"):
        alice.publish_topic("memory", "x" * 101)
    alice.session.put("bt_raider/t/alice/topic/memory", b"y" * 500)  # over the bound: dropped
    alice.publish_topic("memory", '{"id": "r1"}')
    assert done.wait(5.0)
    time.sleep(0.1)
    assert got == [("alice", '{"id": "r1"}')]
    assert bob.fault_summary() == {"oversized": 1}


def test_our_own_mistakes_raise(team):
    alice = team("alice")
    with pytest.raises(CommunicationError, match="signed by 'bob'"):
        alice.publish(Message(kind=MessageKind.HELLO, sender="bob", step=0))
    with pytest.raises(CommunicationError, match="addressed to 'bob' but sent to 'carol'"):
        alice.request("carol", request(), 1.0)
    with pytest.raises(CommunicationError, match="timeout"):
        alice.request("bob", request(), -1)
    with pytest.raises(CommunicationError, match="at most 500"):
        alice.publish(Message(kind=MessageKind.HELLO, sender="alice", step=0, text="x" * 600))
    with pytest.raises(CommunicationError, match="key segment"):
        ZenohBus("a/b")
    with pytest.raises(CommunicationError, match="not a Zenoh locator"):
        ZenohBus("dave", listen=["127.0.0.1:7447"])
    with pytest.raises(CommunicationError, match="zenoh mode 'server'"):
        make_config(mode="server")
    alice.close()
    with pytest.raises(CommunicationError, match="closed"):
        alice.publish(Message(kind=MessageKind.HELLO, sender="alice", step=0))


def test_a_collaborator_leaving_is_seen_and_then_unreachable(team):
    alice, bob = team("alice"), team("bob")
    bob.serve(answer_no)
    assert alice.request("bob", request(), 2.0) is not None
    bob.close()
    deadline = time.monotonic() + 5.0
    while alice.alive("bob") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alice.alive("bob")
    assert alice.request("bob", request(), 0.5) is None
    assert alice.faults["unreachable"] == 1


def test_fault_tolerant_bus_turns_in_process_errors_into_unknown():
    hub = InProcessHub()
    alice = FaultTolerantBus(hub.connect("alice"))
    bob = hub.connect("bob")
    try:
        # Bob serves nothing: "no answer"; carol is not on the bus: the hub raises.
        assert alice.request("bob", request(), 0.2) is None
        assert alice.request("carol", request(to="carol"), 0.2) is None
        bob.serve(answer_no)
        assert alice.request("bob", request(), 0.2).data["answer"] == "no"
        assert alice.fault_summary() == {"no_answer": 1, "request_error": 1}
        assert "carol" in alice.fault_log[-1].detail
    finally:
        hub.close()


def _silent_collaborator():
    """Alice's real REVECA validator, in a 2-robot episode where bob has left the bus."""
    from bt_raider.examples.cooperative_table.episode import Episode

    episode = Episode(1, robots=2, policy="always-ask")
    alice, bob = episode.agents
    for agent in episode.agents:
        agent.perceive()
    bob.bus.close()  # requests to bob now go unanswered
    return episode, alice


@pytest.mark.parametrize(
    ("seen", "kind", "achieved_by", "words"),
    [
        (True, "reobserved_present", None, "still there, committing"),
        (False, "reobserved_gone", "bob", "is gone, taken as done"),
        (None, "committed_blind", None, "cannot re-observe from here, committing anyway"),
        (RuntimeError("camera off"), "committed_blind", None, "cannot re-observe"),
    ],
)
def test_unknown_answers_follow_the_reobserve_policy(seen, kind, achieved_by, words):
    episode, alice = _silent_collaborator()
    looked: list = []

    def reobserve(subgoal):
        looked.append(subgoal)
        if isinstance(seen, Exception):
            raise seen
        return seen

    try:
        policy = ReobservingValidator(alice.validator, reobserve)
        subgoal = alice.memory.goal.subgoals[0]
        result = policy.validate(subgoal)
        assert result.answers == {"bob": "unknown"}
        assert looked == [subgoal]
        assert result.achieved_by == achieved_by
        assert "no answer from bob" in result.reason and words in result.reason
        assert policy.counts == {"unknown": 1, kind: 1}
        assert policy.mode == "always"  # the rest of the validator shows through
    finally:
        for agent in episode.agents:
            agent.shutdown()
        episode.hub.close()


def test_answered_validations_pass_through_the_policy_untouched():
    from bt_raider.examples.cooperative_table.episode import Episode

    episode = Episode(1, robots=2, policy="always-ask")
    alice = episode.agents[0]
    for agent in episode.agents:
        agent.perceive()
    try:
        policy = ReobservingValidator(alice.validator, lambda s: pytest.fail("looked again"))
        result = policy.validate(alice.memory.goal.subgoals[0])
        assert result.answers == {"bob": "no"} and result.commit
        assert policy.counts == {}
    finally:
        for agent in episode.agents:
            agent.shutdown()
        episode.hub.close()
