"""VectorMemory: record, examples without conflicts, trimming, deletion, idempotency."""

from __future__ import annotations

import hashlib
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from bt_raider.errors import MemoryStoreError
from bt_raider.memory import Example, VectorMemory

LIGHT = [
    ("turn on the hall light", "Active(HallLight)"),
    ("turn off the hall light", "~Active(HallLight)"),
    ("please turn on the hall light", "Active(HallLight)"),
]


@pytest.fixture
def memory(tmp_path, hash_embedder):
    m = VectorMemory(tmp_path / "m.db", embedder=hash_embedder)
    m.open()
    yield m
    m.close()


def test_examples_drop_the_conflicting_context(memory):
    ids = memory.record_many({"information": i, "goal": g} for i, g in LIGHT)
    res = memory.resolve("could you turn on the hall light", k=3, trim=False)
    kept = [c.information for c in res.kept]
    assert "turn off the hall light" not in kept
    assert set(kept) >= {"turn on the hall light", "please turn on the hall light"}
    (conflict,) = res.conflicts
    assert conflict.id == ids[1] and conflict.judgement.rule == "phi1"
    examples = memory.examples("could you turn on the hall light", k=2, trim=False)
    assert all(isinstance(e, Example) for e in examples) and len(examples) == 2
    assert examples[0].score >= examples[1].score
    assert {e.goal for e in examples} == {"Active(HallLight)"}
    naive = [e.information for e in memory.search("could you turn on the hall light", 3)]
    assert "turn off the hall light" in naive  # what CDR removes


def test_trimming_cuts_links_that_persist_and_are_honoured(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    with VectorMemory(path, embedder=hash_embedder) as memory:
        on, off, _ = memory.record_many({"information": i, "goal": g} for i, g in LIGHT)
        # Without trimming, a query the rules cannot judge ("turn" with no on/off) gets both.
        both = [c.id for c in memory.resolve("turn the hall light", 3, trim=False).kept]
        assert on in both and off in both
        res = memory.resolve("turn on the hall light", 3)  # witness: consistent on, conflict off
        assert res.cuts_added == 2  # on--off and please-on--off
    with VectorMemory(path, embedder=hash_embedder) as memory:  # reopened: links still cut
        assert memory.stats()["cut_links"] == 2
        res = memory.resolve("turn the hall light", 3, trim=False)
        kept = [c.id for c in res.kept]
        assert not ({on, off} <= set(kept))  # never together again
        assert [c.status for c in res.contexts if c.id in {on, off}] in (
            ["kept", "cut"],
            ["cut", "kept"],
        )


def test_trimming_keeps_links_the_rules_see_agreeing(memory):
    memory.record_many(
        [
            {
                "information": "pick up the apple and put it in the fridge",
                "goal": "In(apple, fridge)",
            },
            {"information": "put the apple in the fridge", "goal": "In(apple, fridge)"},
            {"information": "put the apple in the sink", "goal": "In(apple, sink)"},
        ]
    )
    res = memory.resolve("pick up the apple", 3)
    assert [c.status for c in res.contexts].count("conflict") == 2
    # The query conflicts with "put ... in the fridge" and keeps "pick up ... and put it in
    # the fridge", but those two share the put action: no cut between them.
    assert res.cuts_added == 0


def test_delete_hides_but_keeps_history_and_restore_brings_back(memory):
    ids = memory.record_many({"information": i, "goal": g} for i, g in LIGHT)
    assert memory.delete(ids[0], reason="robot failed with it")
    assert memory.delete(ids[0]) is False
    assert ids[0] not in [e.id for e in memory.search("turn on the hall light", 3)]
    rec = memory.get(ids[0])
    assert rec.deleted and rec.deleted_reason == "robot failed with it"
    assert rec.information == "turn on the hall light"
    assert [e["kind"] for e in memory.history(ids[0])] == ["delete", "add"]
    assert len(memory) == 2 and memory.stats()["deleted"] == 1
    assert memory.restore(ids[0])
    assert memory.search("turn on the hall light", 1)[0].id == ids[0]
    with pytest.raises(MemoryStoreError, match="no record with id 'nope'"):
        memory.delete("nope")


def test_record_is_idempotent_by_record_id(memory, hash_embedder):
    rid = memory.record(
        "open the fridge", "Open(fridge)", "success", {"robot": "a"}, record_id="fleet-1"
    )
    calls = hash_embedder.calls
    again = memory.record(
        "open the fridge", "Open(fridge)", "success", {"robot": "a"}, record_id="fleet-1"
    )
    assert rid == again == "fleet-1" and len(memory) == 1
    assert hash_embedder.calls == calls  # nothing embedded on re-delivery
    with pytest.raises(MemoryStoreError, match="'fleet-1' already holds a different record"):
        memory.record("close the fridge", "Open(fridge)", record_id="fleet-1")
    # Twice in one batch is one record too.
    ids = memory.record_many([{"information": "x y", "goal": "g", "record_id": "b"}] * 2)
    assert ids == ["b", "b"] and len(memory) == 2


def test_failures_are_stored_but_never_examples(memory):
    ok = memory.record("open the fridge", "Open(fridge)", "success")
    bad = memory.record("open the fridge now", "Open(fridge)", outcome=False)
    assert memory.get(bad).outcome == "failure"
    assert [e.id for e in memory.examples("open the fridge", 5)] == [ok]
    assert {e.id for e in memory.search("open the fridge", 5, all_outcomes=True)} == {ok, bad}


def test_records_carry_metadata_and_actions(memory):
    rid = memory.record("pick up the mug", "Holding(mug)", metadata={"robot": "tiago", "step": 3})
    rec = memory.get(rid)
    assert rec.metadata == {"robot": "tiago", "step": 3}
    assert [a.key for a in rec.actions] == [("take", "mug")] and rec.extractor == "symbolic"


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"information": "", "goal": "g"}, "information is ''"),
        ({"information": "x", "goal": None}, "goal is None"),
        ({"information": "x", "goal": "g", "metadata": {"f": object()}}, "not JSON-serialisable"),
        ({"information": "x", "goal": "g", "colour": 1}, "unknown field 'colour'"),
        ({"information": "x", "goal": "g", "outcome": 3}, "outcome is 3"),
    ],
)
def test_bad_records_are_refused_and_nothing_is_stored(memory, item, message):
    with pytest.raises(MemoryStoreError, match=message):
        memory.record_many([{"information": "fine", "goal": "g"}, item])
    assert len(memory) == 0


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_a_database_of_another_embedder_refuses_to_mix(tmp_path, hash_embedder, minilm):
    path = tmp_path / "m.db"
    with VectorMemory(path, embedder=hash_embedder) as memory:
        memory.record("open the fridge", "Open(fridge)")
    with VectorMemory(path, embedder=minilm) as other:
        assert other.stats()["live"] == 1  # reading works without embedding
        with pytest.raises(
            MemoryStoreError, match="embedder 'test-hash-64', not 'all-MiniLM-L6-v2'"
        ):
            other.examples("open the fridge")


def test_k_must_be_positive(memory):
    with pytest.raises(MemoryStoreError, match="k is 0"):
        memory.examples("x", k=0)


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_end_to_end_with_minilm_hall_light(tmp_path, minilm):
    """The paper's Figure 1 on the real model: the off-command is near, and dropped."""
    with VectorMemory(tmp_path / "m.db", embedder=minilm) as memory:
        memory.record_many(
            [
                {"information": "Can you turn off the hall light?", "goal": "~Active(HallLight)"},
                {"information": "Switch on the hall light please", "goal": "Active(HallLight)"},
                {"information": "Can you pass me an apple?", "goal": "Holding(user, apple)"},
                {"information": "open the fridge", "goal": "Open(fridge)"},
            ]
        )
        naive = memory.search("Can you turn on the hall light?", 2)
        assert naive[0].information == "Can you turn off the hall light?"  # the nearest is wrong
        res = memory.resolve("Can you turn on the hall light?", k=2)
        assert res.kept[0].information == "Switch on the hall light please"
        assert [c.information for c in res.conflicts] == ["Can you turn off the hall light?"]
        assert res.conflicts[0].score >= memory.theta
        stats = memory.stats()
        assert stats["embedder"] == "all-MiniLM-L6-v2" and stats["journal_mode"] == "wal"


def test_self_trim_needs_no_model(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    with VectorMemory(path, embedder=hash_embedder) as memory:
        memory.record_many({"information": i, "goal": g} for i, g in LIGHT)
    calls = hash_embedder.calls
    with VectorMemory(path, embedder=hash_embedder) as memory:
        report = memory.trim(k=3)
        assert report["queries"] == 3 and report["cuts_added"] >= 1
        assert hash_embedder.calls == calls
        assert memory.history()[0]["kind"] == "trim"


def test_refill_rounds_filter_out_what_is_cut_from_a_kept_context(tmp_path, hash_embedder):
    memory = VectorMemory(tmp_path / "m.db", embedder=hash_embedder, trim=False)
    with memory:
        objects = [
            "mug",
            "cup",
            "plate",
            "bowl",
            "knife",
            "fork",
            "spoon",
            "pan",
            "pot",
            "vase",
            "pen",
        ]
        memory.record_many({"information": f"pick up the {o}", "goal": o} for o in objects)
        a = memory.record("grab the apple", "Holding(apple)")
        b = memory.record("grab an apple slowly today", "Holding(apple)")
        c = memory.record("lift one big red apple now please", "Holding(apple)")
        labels = {r.id: r.label for r in memory.store.by_labels(range(1, 20)).values()}
        memory.store.add_cuts([(labels[a], labels[b], "phi1", "an earlier witness")])
        memory._has_cuts = True
        res = memory.resolve("pick up the apple", k=2)
        # Round one: the eleven "pick up the <other>" conflict, "grab the apple" is kept.
        assert [x.status for x in res.contexts[:11]] == ["conflict"] * 11
        assert [x.id for x in res.kept] == [a, c]
        # Round two asked hnswlib to skip b (cut from a): it is not even retrieved.
        assert b not in [x.id for x in res.contexts]


# A writer process that prints each record id once ``record`` has returned (acknowledged).
# Every few records it also saves the index, so kills land inside index saves too.
WRITER = r"""
import hashlib, sys
import numpy as np
from bt_raider.memory import VectorMemory

class Embedder:
    name, dim = "test-random-16", 16
    def embed(self, texts):
        rows = [np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
                .normal(size=16) for t in texts]
        out = np.asarray(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

memory = VectorMemory(sys.argv[1], embedder=Embedder()).open()
start = int(sys.argv[2])
print("ready", flush=True)
for i in range(start, start + 100000):
    memory.record(f"command number {i}", f"G{i}", record_id=f"r{i}")
    if i % 5 == 0:
        memory.flush()
    print(f"r{i}", flush=True)
"""


def test_acknowledged_records_survive_sigkill_and_the_index_agrees(tmp_path):
    """SIGKILL a writer at random times: every record it acknowledged is there and found."""
    path = tmp_path / "mem.db"
    rng = random.Random(7)
    acknowledged: list[str] = []
    for round_ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(round_ * 100000)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 0.6))
            proc.send_signal(signal.SIGKILL)
            acknowledged += [line.strip() for line in proc.stdout if line.startswith("r")]
        finally:
            proc.kill()
            proc.wait(timeout=10)
            proc.stdout.close()
    assert len(acknowledged) >= 6
    embed = RandomVectors()
    with VectorMemory(path, embedder=embed) as memory:
        stored = {memory.get(rid).id for rid in acknowledged}  # raises if one is missing
        assert stored == set(acknowledged)
        for rid in rng.sample(acknowledged, min(30, len(acknowledged))):
            hit = memory.search(memory.get(rid).information, 1)
            assert [e.id for e in hit] == [rid]


class RandomVectors:
    """The writer's embedder, for searching what it wrote."""

    name, dim = "test-random-16", 16

    def embed(self, texts):
        rows = [
            np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).normal(
                size=16
            )
            for t in texts
        ]
        out = np.asarray(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
