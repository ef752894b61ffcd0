"""Fleet memory: records cross robots through the CDR rules (real MiniLM, real hnswlib)."""

from __future__ import annotations

import threading
import time

import pytest

from bt_raider.errors import CommunicationError, MemoryStoreError
from bt_raider.fleet.fleet_memory import QUARANTINED, FleetMemory, FleetRecord, record_id
from bt_raider.memory import TransformersEmbedder, VectorMemory

pytestmark = [pytest.mark.slow, pytest.mark.torch]  # loads the bundled embedding model once


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
        "errors": 0,
    }
    # The same success recorded twice by its robot keeps one id.
    assert record_id("alice", "open the fridge", "Open(fridge)") == r.id
    assert record_id("carol", "open the fridge", "Open(fridge)") != r.id


def test_a_record_conflicting_with_local_experience_is_quarantined(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    local = bob.record_success("turn on the hall light", "Active(HallLight)")
    assert bob.flush(30)  # recorded off the caller's thread
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
    from bt_raider.fleet.zenoh_bus import ZenohBus
    from bt_raider.fleet.zenoh_config import loopback_endpoint

    ea, eb = loopback_endpoint(), loopback_endpoint()
    a = ZenohBus("alice", team="fleet", listen=[ea])
    b = ZenohBus("bob", team="fleet", listen=[eb], connect=[ea])
    try:
        assert a.wait_for_peers(["bob"], 10) and b.wait_for_peers(["alice"], 10)
        alice = FleetMemory(memories("alice"), a)
        bob = FleetMemory(memories("bob"), b)
        bob_local = bob.record_success("turn on the hall light", "Active(HallLight)")
        # Bob's subscriptions are declared before this probe's: once a probe gets through,
        # alice's publications reach bob's fleet memory too.
        got = threading.Event()
        b.subscribe_topic("probe", lambda s, t: got.set())
        for _ in range(100):
            a.publish_topic("probe", "ping")
            if got.wait(0.1):
                break
        assert got.is_set(), "bob's subscriptions never reached alice"
        ok = alice.record_success("put the apple on the coffeetable", "On(apple, coffeetable)")
        bad = alice.record_success("turn off the hall light", "Active(HallLight)")
        assert alice.republish() == 2  # the team hears both again

        # Each ends its session: the end notes say how many records to wait for.
        done = threading.Thread(target=alice.finish, args=(["bob"], 30))
        done.start()
        assert bob.finish(["alice"], 30), f"records did not arrive: {bob.summary()}"
        done.join(30)
        assert bob.summary() == {
            "published": 1,
            "accepted": 1,
            "duplicate": 2,
            "quarantined": 1,
            "rejected": 0,
            "errors": 0,
        }
        assert alice.summary()["published"] == 4
        assert bob.memory.get(ok).outcome == "success"
        assert bob.quarantine[bad].conflicts_with == (bob_local,)
        assert len(bob.memory) == 3
        assert alice.summary()["rejected"] == 0
        assert a.fault_summary() == {} and b.fault_summary() == {}
        assert alice.close(10) and bob.close(10)
        b.publish_topic("memory", record("bob", "late", "Late()").to_json())
        deadline = time.monotonic() + 10
        while alice.counts["dropped"] == 0:  # a delivery after close is dropped, and counted
            assert time.monotonic() < deadline, alice.counts
            time.sleep(0.02)
    finally:
        a.close()
        b.close()


def test_records_that_cannot_travel_are_refused(memories):
    bob = FleetMemory(memories("bob"), name="bob")
    with pytest.raises(CommunicationError, match="at most"):
        bob.record_success("x" * 5000, "g")
    assert len(bob.memory) == 0


class GatedMemory(VectorMemory):
    """A real vector memory whose writes wait until the test opens the gate."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.fail_on: set[str] = set()
        self.order: list[str] = []

    def record(self, information, goal, outcome, metadata=None, **kwargs):
        self.entered.set()
        assert self.gate.wait(GATE_S), "the test never opened the gate"
        if information in self.fail_on:
            raise RuntimeError(f"disk full while writing {information!r}")
        self.order.append(information)
        return super().record(information, goal, outcome, metadata, **kwargs)


GATE_S = 10.0


@pytest.fixture
def gated(tmp_path, embedder):
    m = GatedMemory(tmp_path / "gated.db", embedder=embedder)
    m.open()
    yield m
    m.gate.set()
    m.close()


def test_record_success_only_queues_and_keeps_order(gated):
    bob = FleetMemory(gated, name="bob")
    start = time.perf_counter()
    ids = [
        bob.record_success(f"put the cup {i} in the sink", f"In(cup{i}, sink)") for i in range(3)
    ]
    queued_in = time.perf_counter() - start
    assert gated.entered.wait(GATE_S)
    # The first write is held on the gate, yet every call has returned (not a benchmark: a
    # call that waited for the write would have waited for the gate).
    assert queued_in < GATE_S / 5 and len(gated) == 0
    assert not bob.flush(0.05)  # still held
    gated.gate.set()
    assert bob.flush(30)
    assert gated.order == [f"put the cup {i} in the sink" for i in range(3)]
    assert [bob.memory.get(i).outcome for i in ids] == ["success"] * 3


def test_queued_failures_are_kept_and_counted_and_close_flushes(gated):
    bob = FleetMemory(gated, name="bob")
    gated.fail_on.add("break the plate")
    bob.record_success("break the plate", "Broken(plate)")
    ok = bob.record_success("wash the plate", "Clean(plate)")
    gated.gate.set()
    assert bob.close(30)  # close waits for what is queued
    assert bob.memory.get(ok).outcome == "success"
    assert bob.summary()["errors"] == 1
    assert len(bob.errors) == 1 and "disk full" in bob.errors[0] and "record " in bob.errors[0]
    with pytest.raises(MemoryStoreError, match="closed"):
        bob.record_success("dry the plate", "Dry(plate)")
