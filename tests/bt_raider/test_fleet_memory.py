"""Fleet memory: records cross robots through the CDR rules (real MiniLM, real hnswlib)."""

from __future__ import annotations

import threading
import time

import pytest

from bt_raider.errors import CommunicationError
from bt_raider.fleet_memory import QUARANTINED, FleetMemory, FleetRecord, record_id
from bt_raider.memory import TransformersEmbedder, VectorMemory

pytestmark = pytest.mark.slow  # loads the bundled embedding model once


@pytest.fixture(scope="module")
def embedder():
    e = TransformersEmbedder()
    e.setup()
    return e


@pytest.fixture
def memories(tmp_path, embedder):
    opened: list[VectorMemory] = []

    def make(name: str) -> VectorMemory:
        m = VectorMemory(tmp_path / f"{name}.db", embedder=embedder)
        m.open()
        opened.append(m)
        return m

    yield make
    for m in opened:
        m.close()


def record(origin: str, information: str, goal: str) -> FleetRecord:
    return FleetRecord(record_id(origin, information, goal), origin, information, goal, {"step": 7})


def test_a_consistent_record_is_accepted_and_retrievable(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    r = record("alice", "put the apple on the coffeetable", "On(apple, coffeetable)")
    result = bob.ingest(r.to_json(), sender="alice")
    assert result.status == "accepted" and result.record_id == r.id
    stored = bob.memory.get(r.id)
    assert stored.outcome == "success"
    assert stored.metadata["origin"] == "alice" and stored.metadata["via"] == "fleet"
    assert stored.metadata["step"] == 7
    examples = bob.memory.examples("place the apple onto the coffee table", k=3)
    assert [e.id for e in examples] == [r.id]


def test_ingestion_is_idempotent(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    r = record("alice", "open the fridge", "Open(fridge)")
    assert bob.ingest(r.to_json(), sender="alice").status == "accepted"
    for _ in range(3):
        assert bob.ingest(r.to_json(), sender="alice").status == "duplicate"
    assert len(bob.memory) == 1
    assert bob.summary() == {
        "published": 0,
        "accepted": 1,
        "duplicate": 3,
        "quarantined": 0,
        "rejected": 0,
    }
    # The same success recorded twice by its robot keeps one id.
    assert record_id("alice", "open the fridge", "Open(fridge)") == r.id
    assert record_id("carol", "open the fridge", "Open(fridge)") != r.id


def test_a_record_conflicting_with_local_experience_is_quarantined(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    local = bob.record_success("turn on the hall light", "Active(HallLight)")
    incoming = record("alice", "turn off the hall light", "Active(HallLight)")
    result = bob.ingest(incoming.to_json(), sender="alice")
    assert result.status == "quarantined"
    assert result.conflicts_with == (local,)
    assert local in result.reason and "phi1" in result.reason
    kept = bob.memory.get(incoming.id)  # kept aside, not dropped ...
    assert kept.outcome == QUARANTINED
    assert kept.metadata["conflicts_with"] == [local]
    # ... and never offered as an example.
    ids = [e.id for e in bob.memory.examples("turn off the hall light", k=5)]
    assert incoming.id not in ids
    assert bob.quarantine[incoming.id].reason == result.reason
    # Re-delivery changes nothing: still one quarantined copy.
    assert bob.ingest(incoming.to_json(), sender="alice").status == "duplicate"
    assert bob.memory.get(incoming.id).outcome == QUARANTINED
    assert len(bob.memory) == 2


def test_fleet_records_do_not_outrank_each_other_unless_trusted(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    on = record("alice", "turn on the hall light", "Active(HallLight)")
    off = record("carol", "turn off the hall light", "Active(HallLight)")
    assert bob.ingest(on, sender="alice").status == "accepted"
    # Neither is bob's own experience: both kept, the CDR retrieval keeps them apart.
    assert bob.ingest(off, sender="carol").status == "accepted"
    strict = FleetMemory(memories("dave"), name="dave", trusted=lambda meta: True)
    assert strict.ingest(on, sender="alice").status == "accepted"
    assert strict.ingest(off, sender="carol").status == "quarantined"


@pytest.mark.parametrize(
    ("payload", "sender", "reason"),
    [
        ("{not json", "alice", "not JSON"),
        ('{"v": 2, "id": "x"}', "alice", "version 2"),
        (
            '{"v": 1, "id": "x", "origin": "alice", "information": "", "goal": "g"}',
            "alice",
            "information",
        ),
        (
            '{"v": 1, "id": "x", "origin": "alice", "information": "i", "goal": "g", "evil": 1}',
            "alice",
            "evil",
        ),
        ("x" * 5000, "alice", "at most 4000"),
    ],
)
def test_unreadable_records_are_rejected(memories, payload, sender, reason):
    bob = FleetMemory(memories("bob"), name="bob")
    result = bob.ingest(payload, sender=sender)
    assert result.status == "rejected" and reason in result.reason
    assert len(bob.memory) == 0


def test_spoofed_or_rewritten_records_are_rejected(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    r = record("alice", "grab the mug", "Holding(mug)")
    spoofed = bob.ingest(r.to_json(), sender="mallory")
    assert spoofed.status == "rejected" and "sent by 'mallory'" in spoofed.reason
    assert bob.ingest(r.to_json(), sender="alice").status == "accepted"
    rewritten = FleetRecord(r.id, "alice", "grab the knife", "Holding(knife)")
    result = bob.ingest(rewritten.to_json(), sender="alice")
    assert result.status == "rejected" and "different record" in result.reason
    assert bob.memory.get(r.id).information == "grab the mug"


@pytest.mark.zenoh
def test_records_cross_zenoh_and_redelivery_adds_nothing(memories):
    pytest.importorskip("zenoh")
    from bt_raider.zenoh_bus import ZenohBus, loopback_endpoint

    ea, eb = loopback_endpoint(), loopback_endpoint()
    a = ZenohBus("alice", team="fleet", listen=[ea])
    b = ZenohBus("bob", team="fleet", listen=[eb], connect=[ea])
    try:
        assert a.wait_for_peers(["bob"], 10) and b.wait_for_peers(["alice"], 10)
        alice = FleetMemory(memories("alice"), a)
        bob = FleetMemory(memories("bob"), b)
        bob_local = bob.record_success("turn on the hall light", "Active(HallLight)")
        got = threading.Event()
        b.subscribe_topic("memory", lambda s, t: got.set())
        time.sleep(0.3)  # subscriptions reach alice
        ok = alice.record_success("put the apple on the coffeetable", "On(apple, coffeetable)")
        bad = alice.record_success("turn off the hall light", "Active(HallLight)")
        alice.republish()  # the team hears both again

        deadline = time.monotonic() + 20
        while sum(bob.summary()[k] for k in ("accepted", "duplicate", "quarantined")) < 4:
            assert time.monotonic() < deadline, f"records did not arrive: {bob.summary()}"
            time.sleep(0.05)
        assert bob.summary() == {
            "published": 1,
            "accepted": 1,
            "duplicate": 2,
            "quarantined": 1,
            "rejected": 0,
        }
        assert bob.memory.get(ok).outcome == "success"
        assert bob.quarantine[bad].conflicts_with == (bob_local,)
        assert len(bob.memory) == 3
        assert alice.summary()["rejected"] == 0
        assert a.fault_summary() == {} and b.fault_summary() == {}
    finally:
        a.close()
        b.close()


def test_records_that_cannot_travel_are_refused(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    with pytest.raises(CommunicationError, match="at most"):
        bob.record_success("x" * 5000, "g")
    assert len(bob.memory) == 0
