"""The SQLite store: WAL mode, refusing files that are not ours, history."""

from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bt_raider.errors import MemoryStoreError
from bt_raider.memory.store import SCHEMA_VERSION, Store


def test_new_database_is_in_wal_mode_with_meta(tmp_path):
    store = Store(tmp_path / "sub" / "m.db")  # parent folders are created
    assert store.journal_mode() == "wal"
    assert store.get_meta("schema") == str(SCHEMA_VERSION)
    assert len(store.store_id) == 32 and store.mutation == 0
    store.close()
    raw = sqlite3.connect(tmp_path / "sub" / "m.db")
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent
    raw.close()


def test_insert_delete_restore_bump_the_mutation_and_keep_rows(tmp_path):
    store = Store(tmp_path / "m.db")
    row = dict(
        id="r1",
        information="open the fridge",
        goal="Open(fridge)",
        outcome="success",
        metadata="{}",
        actions="[]",
        extractor="symbolic",
        embedding=np.ones(4, np.float32),
    )
    (label,) = store.insert([row])
    assert store.mutation == 1 and store.count() == 1
    assert store.mark_deleted("r1", "wrong") == 1 and store.mutation == 2
    assert store.mark_deleted("r1", "again") == 0  # already deleted: no change
    assert store.count() == 0 and store.count(live_only=False) == 1
    got = store.by_id("r1", embedding=True)
    assert got.deleted and got.deleted_reason == "wrong" and got.label == label
    assert np.array_equal(got.embedding, np.ones(4, np.float32))
    assert store.restore("r1") == 1 and store.count() == 1
    assert [e["kind"] for e in store.events("r1")] == ["restore", "delete", "add"]
    store.close()


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(MemoryStoreError, match="cannot open memory database .*corrupt.db"):
        Store(path)
    assert path.read_bytes() == b"this is not sqlite" * 100  # nothing lost


def test_another_applications_database_is_refused(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (name TEXT)")
    db.commit()
    db.close()
    with pytest.raises(MemoryStoreError, match="another application.*customers"):
        Store(path)


def test_directory_and_newer_schema_are_refused(tmp_path):
    with pytest.raises(MemoryStoreError, match="is a directory"):
        Store(tmp_path)
    store = Store(tmp_path / "m.db")
    store.set_meta("schema", SCHEMA_VERSION + 1)
    store.close()
    with pytest.raises(MemoryStoreError, match="newer than this"):
        Store(tmp_path / "m.db")


def test_cut_links_are_symmetric_and_deduplicated(tmp_path):
    store = Store(tmp_path / "m.db")
    rows = [
        dict(
            id=f"r{i}",
            information=f"s{i}",
            goal="g",
            outcome="success",
            metadata="{}",
            actions="[]",
            extractor="symbolic",
            embedding=np.ones(2, np.float32),
        )
        for i in range(3)
    ]
    a, b, c = store.insert(rows)
    assert store.add_cuts([(b, a, "phi1", "q"), (a, b, "phi1", "q"), (c, c, "x", "q")]) == 1
    assert store.cuts_among([a, b, c]) == {(min(a, b), max(a, b))}
    assert store.cut_partners(a) == {b} and store.cut_count() == 1
    assert store.cuts()[0]["witness"] == "q"
    store.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty \\(0 bytes\\)"),
        (b'{"information": "open the fridge"}\n', "not an SQLite database"),
        (bytes(range(256)) * 8, "not an SQLite database"),
    ],
    ids=["empty", "text", "binary"],
)
def test_an_existing_file_is_never_silently_started_over(tmp_path, content, message):
    path = tmp_path / "mem.db"
    path.write_bytes(content)
    with pytest.raises(
        MemoryStoreError, match=f"cannot open memory database '.*mem.db': {message}"
    ):
        Store(path)
    assert path.read_bytes() == content  # nothing lost, nothing created next to it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mem.db"]


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "mem.db"
    os.mkfifo(fifo)
    with pytest.raises(MemoryStoreError, match="not a regular file"):
        Store(fifo)


def test_read_only_needs_an_existing_database_and_refuses_writes(tmp_path):
    with pytest.raises(MemoryStoreError, match="no memory database .* read-only"):
        Store(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()
    Store(tmp_path / "m.db").close()
    store = Store(tmp_path / "m.db", read_only=True)
    assert store.read_only and store.get_meta("schema") == str(SCHEMA_VERSION)
    with pytest.raises(MemoryStoreError, match="open read-only \\(read_only=True\\): cannot"):
        store.set_meta("theta", 0.3)
    with pytest.raises(MemoryStoreError, match="open read-only"):
        store.mark_deleted("r1", "x")
    store.close()


# -- a damaged database is one documented error from the library, never a raw sqlite3 error


class _Files(tuple):
    """The database, index and sidecar bytes (short in Hypothesis' reports)."""

    def __new__(cls, *files):
        return super().__new__(cls, files)

    def __repr__(self):
        return f"<memory files of {len(self[0]):,} bytes>"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A memory of 300 records (index file beside it): its bytes, to damage copies of."""
    from bt_raider.memory import VectorMemory
    from tests.memory.conftest import HashEmbedder

    folder = tmp_path_factory.mktemp("pristine")
    db = folder / "m.db"
    with VectorMemory(db, embedder=HashEmbedder()) as memory:
        memory.record_many(
            [
                {"information": f"turn on the light {i} " + "x" * 200, "goal": "on(l)"}
                for i in range(300)
            ]
        )
    return _Files(
        db.read_bytes(),
        (folder / "m.db.hnsw").read_bytes(),
        (folder / "m.db.hnsw.json").read_bytes(),
    )


def _use(path):
    """Open the memory and use every kind of read and a write, as a robot would."""
    from bt_raider.memory import VectorMemory
    from tests.memory.conftest import HashEmbedder

    with VectorMemory(path, embedder=HashEmbedder()) as memory:
        memory.examples("turn on the light 3", 3)
        memory.stats()
        memory.trim()
        memory.record("open the door", "open(door)")


def _lay_out(tmp_path, pristine, data, with_index):
    db = tmp_path / "m.db"
    db.write_bytes(data)
    if with_index:  # the index is then trusted by its checksum, and rows are read lazily
        (tmp_path / "m.db.hnsw").write_bytes(pristine[1])
        (tmp_path / "m.db.hnsw.json").write_bytes(pristine[2])
    return db


@pytest.mark.parametrize("with_index", [False, True], ids=["rebuilt", "index-kept"])
def test_a_damaged_database_is_a_damaged_database_error(tmp_path, pristine, with_index):
    from bt_raider.memory.store import DamagedDatabaseError

    data = bytearray(pristine[0])
    page = int.from_bytes(data[16:18], "big")
    data[2 * page :] = bytes(len(data) - 2 * page)  # header and schema survive, records do not
    db = _lay_out(tmp_path, pristine, bytes(data), with_index)
    with pytest.raises(
        DamagedDatabaseError,
        match=r"memory database '.*m\.db' is damaged \(.*restore it from a backup",
    ) as caught:
        _use(db)
    assert isinstance(caught.value, MemoryStoreError) and "\n" not in str(caught.value)
    assert db.read_bytes() == bytes(data)  # nothing written over it


def test_a_stored_embedding_of_the_wrong_length_or_not_finite_is_damage(tmp_path, pristine):
    from bt_raider.memory.store import DamagedDatabaseError

    for n, blob in enumerate([b"\x00" * 12, np.full(64, np.nan, dtype=np.float32).tobytes()]):
        (tmp_path / str(n)).mkdir()
        db = _lay_out(tmp_path / str(n), pristine, pristine[0], False)
        with sqlite3.connect(db) as raw:
            raw.execute("UPDATE records SET embedding = ? WHERE label = 7", (blob,))
        raw.close()
        with pytest.raises(DamagedDatabaseError, match="record label 7: its embedding is not"):
            _use(db)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    at=st.floats(0.0, 1.0),
    length=st.integers(1, 8192),
    fill=st.binary(min_size=1, max_size=64),
    with_index=st.booleans(),
)
# Found by this test: SQLite quoted the damaged text, a newline in it, into the message.
@example(at=0.875, length=2, fill=b"\n\x80", with_index=False)
def test_any_damage_is_a_memory_error_or_harmless(
    tmp_path_factory, pristine, at, length, fill, with_index
):
    folder = tmp_path_factory.mktemp("damage")
    data = bytearray(pristine[0])
    start = int(at * (len(data) - 1))
    data[start : start + length] = (fill * (length // len(fill) + 1))[
        : len(data[start : start + length])
    ]
    db = _lay_out(folder, pristine, bytes(data), with_index)
    try:
        _use(db)
    except MemoryStoreError as exc:  # DamagedDatabaseError included
        assert "\n" not in str(exc) and "m.db" in str(exc)
