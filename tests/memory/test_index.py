"""The hnswlib index on disk: persisted next to the database, rebuilt from it when stale."""

from __future__ import annotations

import json
import shutil

from bt_raider.memory import VectorMemory

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
