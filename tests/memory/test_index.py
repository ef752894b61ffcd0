"""The hnswlib index on disk: persisted next to the database, rebuilt from it when stale."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bt_raider.errors import MemoryStoreError
from bt_raider.memory import VectorMemory
from bt_raider.memory.index import CHECKSUM_KEY
from bt_raider.memory.store import Store

TEXTS = ["open the fridge", "close the fridge", "pick up the apple", "slice the bread"]


def fill(path, embedder):
    with VectorMemory(path, embedder=embedder) as memory:
        ids = memory.record_many({"information": t, "goal": t.upper()} for t in TEXTS)
    return ids


def test_index_is_saved_next_to_the_database_and_loaded_back(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    fill(path, hash_embedder)
    assert (tmp_path / "m.db.hnsw").is_file() and (tmp_path / "m.db.hnsw.json").is_file()
    with VectorMemory(path, embedder=hash_embedder) as memory:
        assert memory.index.how == "loaded"
        assert [e.information for e in memory.search("open the fridge", 1)] == ["open the fridge"]


def test_deleted_index_file_is_rebuilt_from_the_database_without_the_model(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    fill(path, hash_embedder)
    (tmp_path / "m.db.hnsw").unlink()
    calls = hash_embedder.calls
    with VectorMemory(path, embedder=hash_embedder) as memory:
        assert memory.index.how == "rebuilt" and memory.index.live_count == 4
        assert hash_embedder.calls == calls  # vectors came from SQLite blobs
        vector = hash_embedder.embed(["slice the bread"])[0]
        assert memory.search_vector(vector, 1)[0].information == "slice the bread"


def test_stale_index_after_a_crash_is_rebuilt(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    fill(path, hash_embedder)
    crashed = VectorMemory(path, embedder=hash_embedder).open()
    crashed.record("turn on the lamp", "Active(lamp)")
    crashed.store.close()  # the process dies: the index file is never saved
    with VectorMemory(path, embedder=hash_embedder) as memory:
        assert memory.index.how == "rebuilt" and memory.index.live_count == 5
        assert memory.search("turn on the lamp", 1)[0].information == "turn on the lamp"


def test_index_of_another_database_is_not_trusted(tmp_path, hash_embedder):
    fill(tmp_path / "a.db", hash_embedder)
    with VectorMemory(tmp_path / "b.db", embedder=hash_embedder) as memory:
        memory.record("water the plant", "Wet(plant)")
    for suffix in (".hnsw", ".hnsw.json"):
        shutil.copy(tmp_path / f"a.db{suffix}", tmp_path / f"b.db{suffix}")
    with VectorMemory(tmp_path / "b.db", embedder=hash_embedder) as memory:
        assert memory.index.how == "rebuilt" and memory.index.live_count == 1


def test_garbage_index_file_is_rebuilt(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    fill(path, hash_embedder)
    (tmp_path / "m.db.hnsw").write_bytes(b"\x00" * 64)
    meta = json.loads((tmp_path / "m.db.hnsw.json").read_text())
    assert meta["elements"] == 4
    with VectorMemory(path, embedder=hash_embedder) as memory:
        assert memory.index.how == "rebuilt" and memory.index.live_count == 4


def test_deletions_survive_save_and_rebuild(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    ids = fill(path, hash_embedder)
    with VectorMemory(path, embedder=hash_embedder) as memory:
        memory.delete(ids[0])
    with VectorMemory(path, embedder=hash_embedder) as memory:  # loaded, deletion marked
        assert memory.index.how == "loaded"
        assert ids[0] not in [e.id for e in memory.search("open the fridge", 4)]
    (tmp_path / "m.db.hnsw").unlink()
    with VectorMemory(path, embedder=hash_embedder) as memory:  # rebuilt, deleted left out
        assert memory.index.live_count == 3
        assert ids[0] not in [e.id for e in memory.search("open the fridge", 4)]


def test_writes_from_another_process_are_picked_up(tmp_path, hash_embedder):
    path = tmp_path / "m.db"
    fill(path, hash_embedder)
    reader = VectorMemory(path, embedder=hash_embedder).open()
    with VectorMemory(path, embedder=hash_embedder) as writer:
        new = writer.record("water the plant", "Wet(plant)")
        writer.delete(writer.search("slice the bread", 1)[0].id)
    hits = [e.id for e in reader.search("water the plant", 5)]
    assert hits[0] == new and len(hits) == 4  # one added, one deleted
    reader.close()


# -- an index that proves itself ---------------------------------------------------------


class RandomEmbedder:
    """Deterministic pseudo-random unit vectors per text: no ties between neighbours."""

    name = "test-random-32"
    dim = 32

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
            out[i] = np.random.default_rng(seed).normal(size=self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


QUERIES = [f"query {i}" for i in range(12)]


def neighbours(memory):
    return [[e.id for e in memory.search(q, 5)] for q in QUERIES]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A memory of 200 records (10 deleted), saved; its files and the neighbours of QUERIES."""
    folder = tmp_path_factory.mktemp("saved")
    path = folder / "mem.db"
    embedder = RandomEmbedder()
    with VectorMemory(path, embedder=embedder) as memory:
        ids = memory.record_many(
            {"information": f"record {i}", "goal": f"G{i}"} for i in range(200)
        )
        for record_id in ids[:10]:
            memory.delete(record_id)
    with VectorMemory(path, embedder=embedder) as memory:
        assert memory.index.how == "loaded"
        expected = neighbours(memory)
    files = {s: (folder / f"mem.db{s}").read_bytes() for s in ("", ".hnsw", ".hnsw.json")}
    return Saved((files, expected))


class Saved(tuple):
    """The saved files and neighbours, with a short repr for Hypothesis's reports."""

    def __repr__(self) -> str:
        return "<saved memory of 200 records>"


def restore(folder, files):
    for suffix, data in files.items():
        (folder / f"mem.db{suffix}").write_bytes(data)
    return folder / "mem.db"


def test_the_checksum_is_in_the_sidecar_and_the_database(saved, tmp_path):
    files, _ = saved
    path = restore(tmp_path, files)
    meta = json.loads(files[".hnsw.json"])
    assert meta["bytes"] == len(files[".hnsw"])
    assert meta["blake2b"] == hashlib.blake2b(files[".hnsw"], digest_size=32).hexdigest()
    store = Store(path)
    assert store.get_meta(CHECKSUM_KEY) == meta["blake2b"]
    store.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    flips=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
        min_size=1,
        max_size=16,
    ),
    run=st.integers(1, 4096),
)
def test_a_damaged_index_is_never_loaded_and_the_rebuild_gives_the_same_neighbours(
    saved, flips, run
):
    files, expected = saved
    data = bytearray(files[".hnsw"])
    # Flip bytes at random offsets, optionally a whole run of them (up to 4 KB).
    for where, xor in flips:
        at = int(where * len(data))
        for i in range(at, min(at + (run if where < 0.05 else 1), len(data))):
            data[i] ^= xor
    assume(data != files[".hnsw"])  # two flips of one byte may cancel out
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        path = restore(folder, {**files, ".hnsw": bytes(data)})
        with VectorMemory(path, embedder=RandomEmbedder()) as memory:
            assert memory.index.how == "rebuilt"
            assert "checksum" in memory.index.reason
            assert neighbours(memory) == expected
        with VectorMemory(path, embedder=RandomEmbedder()) as memory:
            assert memory.index.how == "loaded"  # the rebuilt index was saved, checksummed
            assert neighbours(memory) == expected


@pytest.mark.parametrize(
    "damage",
    ["empty", "truncated", "no checksum", "swapped sidecar", "old index", "checksum in db"],
)
def test_other_damage_is_rebuilt_with_a_warning_naming_the_file(saved, tmp_path, caplog, damage):
    files, expected = saved
    path = restore(tmp_path, files)
    index, sidecar = tmp_path / "mem.db.hnsw", tmp_path / "mem.db.hnsw.json"
    if damage == "empty":
        index.write_bytes(b"")
    elif damage == "truncated":
        index.write_bytes(files[".hnsw"][: len(files[".hnsw"]) // 2])
    elif damage == "no checksum":
        meta = json.loads(files[".hnsw.json"])
        del meta["blake2b"]
        sidecar.write_text(json.dumps(meta))
    elif damage in ("swapped sidecar", "old index"):
        # An index and sidecar saved at another state of the same database.
        with VectorMemory(path, embedder=RandomEmbedder()) as memory:
            memory.record("one more", "G")
        with VectorMemory(path, embedder=RandomEmbedder()) as memory:
            memory.delete(memory.search("one more", 1)[0].id)
        if damage == "swapped sidecar":
            index.write_bytes(files[".hnsw"])  # the sidecar says another file
        else:
            sidecar.write_bytes(files[".hnsw.json"])  # the sidecar is stale
    else:
        store = Store(path)
        store.set_meta(CHECKSUM_KEY, "0" * 64)  # the database no longer vouches for the file
        store.close()
    caplog.set_level(logging.WARNING, logger="bt_raider.memory.index")
    with VectorMemory(path, embedder=RandomEmbedder()) as memory:
        assert memory.index.how == "rebuilt"
        assert neighbours(memory) == expected
    if damage != "old index":  # a stale sidecar is normal after a crash: no warning
        assert str(index) in caplog.text and "rebuilt from" in caplog.text


def test_a_read_only_memory_answers_queries_and_refuses_writes(saved, tmp_path):
    files, expected = saved
    path = restore(tmp_path, files)
    with VectorMemory(path, embedder=RandomEmbedder(), read_only=True) as memory:
        assert memory.store.read_only_reason == "read_only=True"
        assert neighbours(memory) == expected
        memory.examples("query 1", 3)  # a query cuts no links in a read-only memory
        for write in (
            lambda: memory.record("new", "G"),
            lambda: memory.delete(expected[0][0]),
            lambda: memory.set_theta(0.4),
            lambda: memory.trim(),
        ):
            with pytest.raises(MemoryStoreError, match="open read-only .*read_only=True"):
                write()
    for suffix, data in files.items():
        assert (tmp_path / f"mem.db{suffix}").read_bytes() == data  # nothing was written


def test_a_database_without_write_permission_opens_read_only_even_for_root(saved, tmp_path):
    files, expected = saved
    path = restore(tmp_path, files)
    (tmp_path / "mem.db.hnsw").unlink()  # must be rebuilt, and cannot be saved
    path.chmod(0o444)
    with VectorMemory(path, embedder=RandomEmbedder()) as memory:
        assert memory.store.read_only_reason == "file mode 0444"
        assert memory.index.how == "rebuilt" and neighbours(memory) == expected
        with pytest.raises(MemoryStoreError, match="read-only .*file mode 0444"):
            memory.record("new", "G")
    assert path.read_bytes() == files[""] and not (tmp_path / "mem.db.hnsw").exists()


def test_a_database_on_a_read_only_filesystem_can_be_queried(saved, tmp_path):
    files, expected = saved
    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)]).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root): no read-only filesystem to test")
    try:
        path = restore(mount, files)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        with VectorMemory(path, embedder=RandomEmbedder()) as memory:
            assert memory.store.read_only_reason == "read-only filesystem"
            assert memory.index.how == "loaded" and neighbours(memory) == expected
            with pytest.raises(MemoryStoreError, match="read-only filesystem"):
                memory.record("new", "G")
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_saving_replaces_planted_links_and_never_writes_through_them(tmp_path, hash_embedder):
    victims = tmp_path / "victims"
    victims.mkdir()
    folder = tmp_path / "memory"
    folder.mkdir()
    names = ["m.db.hnsw", "m.db.hnsw.json", "m.db.hnsw.tmp", "m.db.hnsw.json.tmp"]
    for name in names:
        (victims / name).write_text(f"someone else's {name}")
        (folder / name).symlink_to(victims / name)
    fill(folder / "m.db", hash_embedder)
    for name in names:
        assert (victims / name).read_text() == f"someone else's {name}"
    for name in names[:2]:  # the index and its sidecar: real files where the links were
        assert (folder / name).is_file() and not (folder / name).is_symlink()
    assert not [p for p in folder.iterdir() if p.name.startswith(".hnsw-")]  # nothing left
    with VectorMemory(folder / "m.db", embedder=hash_embedder) as memory:
        assert memory.index.how == "loaded" and memory.index.live_count == len(TEXTS)


@pytest.mark.parametrize("kind", ["sparse", "fifo", "huge-sidecar"])
def test_an_absurd_index_or_sidecar_is_rebuilt_without_reading_it(tmp_path, hash_embedder, kind):
    import os

    path = tmp_path / "m.db"
    fill(path, hash_embedder)
    index, sidecar = tmp_path / "m.db.hnsw", tmp_path / "m.db.hnsw.json"
    meta = json.loads(sidecar.read_text())
    if kind == "sparse":  # 8 GiB that claim to be the index (the checksum copied from the db)
        index.unlink()
        with index.open("wb") as handle:
            handle.truncate(8 << 30)
        meta["bytes"] = 8 << 30
        sidecar.write_text(json.dumps(meta))
    elif kind == "fifo":
        sidecar.unlink()
        os.mkfifo(sidecar)  # reading it would block
    else:
        sidecar.write_text(json.dumps(meta) + " " * (8 << 20))
    with VectorMemory(path, embedder=hash_embedder) as memory:
        assert memory.index.how == "rebuilt" and memory.index.live_count == len(TEXTS)
        why = {"sparse": "larger than any index", "fifo": "missing", "huge-sidecar": "unreadable"}
        assert why[kind] in memory.index.reason
    assert index.stat().st_size < 1 << 20  # replaced by the rebuilt index
