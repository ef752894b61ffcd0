"""The memory's source of truth: one SQLite database in WAL mode.

Tables:

* ``records`` -- every memory ever stored: text (``information``), ``goal``, ``outcome``,
  metadata, the extracted actions, the embedding as a float32 blob (so the vector index can be
  rebuilt without the model), and the deletion mark. Rows are never removed: a deleted record
  keeps its row with ``deleted_at`` and the reason, and can be restored.
* ``cut_links`` -- pairs of records whose similarity link was cut by the trimming theorem,
  with the witness query and rule.
* ``events`` -- history: added, deleted, restored, calibrated, trimmed.
* ``meta`` -- schema version, store id, embedder identity, theta, the mutation counter the
  index file is checked against.

The integer ``label`` of a record is its hnswlib label; ``id`` is its public string id.

A database SQLite can open but not read back (a malformed page, a value that is not what was
written) raises :class:`DamagedDatabaseError` from every method of
:class:`~bt_raider.memory.vector.VectorMemory` (:func:`guarded`), never a raw ``sqlite3``
error: the memory is neither repaired in place nor started over.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import sqlite3
import stat
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

import numpy as np

from bt_raider.errors import InputFileError, MemoryStoreError
from bt_raider.files import connect_sqlite, read_head

SCHEMA_VERSION = 1


class DamagedDatabaseError(MemoryStoreError):
    """The memory database is damaged: SQLite opened it but cannot read it back.

    A malformed page, a truncated file, or a stored value that is not what bt_raider wrote (an
    embedding of the wrong length or not finite, metadata that is not JSON). The message names
    the file and what SQLite or the check found; restore the file from a backup (bt_raider
    neither repairs a damaged memory in place nor starts it over). The command line prints it
    as one line and exits 2.
    """


#: SQLite errors about the situation, not the file: a lock held, a full disk, no permission.
_NOT_DAMAGE = ("locked", "busy", "readonly", "read-only", "disk i/o", "unable to open", "full")


def full_disk(path: str | Path, exc: BaseException | None = None) -> str | None:
    """Why writing next to ``path`` fails when its filesystem is full, else None.

    SQLite reports a full disk as "database or disk is full", or, when it cannot even make its
    ``-shm`` file, as "disk I/O error"; an :class:`OSError` says ``ENOSPC``. Either, or no free
    block left where ``path`` is, names the full disk as the cause.
    """
    folder = Path(path).parent
    text = str(exc).lower() if exc is not None else ""
    said = isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "disk is full" in text
    try:
        info = os.statvfs(folder)
    except (OSError, ValueError):
        info = None
    empty = info is not None and info.f_bavail * info.f_frsize < 64 * 1024
    if not (said or (empty and (exc is None or "disk i/o" in text or "full" in text))):
        return None
    free = "" if info is None else f", {info.f_bavail * info.f_frsize:,} bytes free"
    return (
        f"the disk is full where it lives ({str(folder)!r}{free}): SQLite needs room for its "
        "journal even to read; free some space and run the command again"
    )


def database_error(path: str | Path, exc: BaseException) -> MemoryStoreError:
    """The bt_raider error for a ``sqlite3`` error ``exc`` from the memory database at ``path``."""
    full = full_disk(path, exc)
    if full:
        return MemoryStoreError(f"memory database {str(path)!r}: {full}")
    # One line: SQLite may quote the damaged bytes ("Could not decode to UTF-8 column ...
    # with text '...'"), newlines and all.
    text = " ".join(str(exc).split())
    if isinstance(exc, sqlite3.OperationalError) and any(
        word in text.lower() for word in _NOT_DAMAGE
    ):
        return MemoryStoreError(f"memory database {str(path)!r}: {text}")
    return DamagedDatabaseError(
        f"memory database {str(path)!r} is damaged ({type(exc).__name__}: {text[:200]}): "
        "restore it from a backup"
    )


_F = TypeVar("_F", bound=Callable[..., Any])


def guarded(method: _F) -> _F:
    """``method`` of an object with a ``path``, its ``sqlite3`` errors as bt_raider errors.

    SQLite notices a damaged page only when a statement reads it, which can be any statement:
    so every public method of the memory is guarded, not only opening it.
    """

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from exc

    return cast(_F, wrapper)


def _damaged(path: Path, label: Any, what: str) -> DamagedDatabaseError:
    return DamagedDatabaseError(
        f"memory database {str(path)!r} is damaged (record label {label!r}: {what}): restore "
        "it from a backup"
    )


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    label INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    information TEXT NOT NULL,
    goal TEXT NOT NULL,
    outcome TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    actions TEXT NOT NULL DEFAULT '[]',
    extractor TEXT NOT NULL,
    embedding BLOB NOT NULL,
    created_at REAL NOT NULL,
    deleted_at REAL,
    deleted_reason TEXT
);
CREATE TABLE IF NOT EXISTS cut_links (
    a INTEGER NOT NULL REFERENCES records(label),
    b INTEGER NOT NULL REFERENCES records(label),
    rule TEXT,
    witness TEXT,
    created_at REAL NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cut_links_b ON cut_links(b);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    record TEXT,
    detail TEXT NOT NULL DEFAULT '{}'
);
"""


@dataclass
class Row:
    """One stored record, as read back from the database."""

    label: int
    id: str
    information: str
    goal: str
    outcome: str
    metadata: dict[str, Any]
    actions_json: str
    extractor: str
    created_at: float
    deleted_at: float | None = None
    deleted_reason: str | None = None
    embedding: np.ndarray | None = field(default=None, repr=False)

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    def stored_embedding(self) -> np.ndarray:
        """The embedding of a row read with it (``embedding=True``, :meth:`Store.rows`)."""
        assert self.embedding is not None, f"record {self.id} was read without its embedding"
        return self.embedding


class Store:
    """Thread-safe access to the memory database.

    Args:
        path: the database file; created (with parent folders) when the path does not exist.
            An existing path must be an SQLite file written by bt_raider: an empty (0-byte)
            file, a text file or a FIFO is refused, never overwritten with a new memory.
        read_only: open for reading only (``file:...?mode=ro``); every write then raises
            :class:`MemoryStoreError`. A file without write permission bits (even for root),
            a file this process may not write, or a read-only filesystem is opened read-only
            without being asked.

    Raises:
        MemoryStoreError: the path is a directory, not a regular file, empty, not an SQLite
            database, another application's database, or has a newer schema.
    """

    #: How many :class:`_Transaction` blocks are open (set by the first one; absent before).
    _depth: int
    #: The stored vectors' length, once read from meta (see :meth:`_stored_dim`).
    _dim: int | None

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self.read_only_reason = _check_existing(self.path, read_only)
        self.read_only = self.read_only_reason is not None
        try:
            if self.read_only:
                self._db = _connect_read_only(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = connect_sqlite(
                    self.path,
                    what="memory database",
                    check_same_thread=False,
                    isolation_level=None,
                    timeout=30.0,
                )
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            tables = {
                r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        except InputFileError as exc:
            raise MemoryStoreError(f"cannot open memory database {exc}") from None
        except (sqlite3.DatabaseError, OSError) as exc:
            full = full_disk(self.path, exc)
            if full:  # not the file's fault: say so, not "expected an SQLite file"
                raise MemoryStoreError(
                    f"cannot open memory database {str(self.path)!r}: {full}"
                ) from exc
            raise MemoryStoreError(
                f"cannot open memory database {str(self.path)!r}: {exc}; expected an SQLite "
                "file written by bt_raider.memory, or a path to create one"
            ) from exc
        user_tables = {t for t in tables if not t.startswith("sqlite_")}
        if user_tables and "meta" not in user_tables:
            self._db.close()
            raise MemoryStoreError(
                f"{str(self.path)!r} is an SQLite database of another application (tables "
                f"{', '.join(sorted(user_tables))}): expected a bt_raider memory database"
            )
        try:
            if not user_tables:
                if self.read_only:
                    raise MemoryStoreError(
                        f"memory database {str(self.path)!r} is empty and open read-only "
                        f"({self.read_only_reason}): there is nothing to read"
                    )
                self._db.executescript(_SCHEMA)  # idempotent (IF NOT EXISTS)
                self._init_meta()
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise database_error(self.path, exc) from exc
        except MemoryStoreError:
            self._db.close()
            raise

    # -- plumbing -----------------------------------------------------------

    def transaction(self) -> _Transaction:
        """``with store.transaction():`` -- one atomic write (BEGIN IMMEDIATE ... COMMIT)."""
        return _Transaction(self)

    def _init_meta(self) -> None:
        with self.transaction():
            self._db.executemany(
                "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                [
                    ("schema", str(SCHEMA_VERSION)),
                    ("store_id", uuid.uuid4().hex),
                    ("mutation", "0"),
                    ("created_at", repr(time.time())),
                ],
            )

    def _check_schema(self) -> None:
        version = self.get_meta("schema")
        if version is None:
            raise MemoryStoreError(
                f"{str(self.path)!r} has no schema version: not a bt_raider memory database"
            )
        if int(version) > SCHEMA_VERSION:
            raise MemoryStoreError(
                f"memory database {str(self.path)!r} has schema {version}, newer than this "
                f"bt_raider understands ({SCHEMA_VERSION}): upgrade bt_raider"
            )

    def close(self) -> None:
        with self._lock:
            if not self.read_only:
                try:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.DatabaseError:
                    pass
            self._db.close()

    def journal_mode(self) -> str:
        return str(self._db.execute("PRAGMA journal_mode").fetchone()[0])

    # -- meta ---------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def writable(self, what: str = "write") -> None:
        """Raise :class:`MemoryStoreError` when the database is open read-only."""
        if self.read_only:
            raise MemoryStoreError(
                f"memory database {str(self.path)!r} is open read-only "
                f"({self.read_only_reason}): cannot {what}; open a writable copy to change it"
            )

    def set_meta(self, key: str, value: Any) -> None:
        self.writable(f"set {key}")
        with self._lock:
            self._db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, str(value)),
            )

    @property
    def store_id(self) -> str:
        return str(self.get_meta("store_id"))

    @property
    def mutation(self) -> int:
        return int(self.get_meta("mutation", "0") or 0)

    def _bump(self) -> None:
        self._db.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'mutation'"
        )

    def log(self, kind: str, record: str | None = None, **detail: Any) -> None:
        self.writable(f"log {kind}")
        with self._lock:
            self._db.execute(
                "INSERT INTO events(at, kind, record, detail) VALUES (?, ?, ?, ?)",
                (time.time(), kind, record, json.dumps(detail, default=str)),
            )

    # -- records ------------------------------------------------------------

    def insert(self, rows: Sequence[dict[str, Any]]) -> list[int]:
        """Insert records (one transaction); returns their labels."""
        now = time.time()
        labels = []
        with self.transaction():
            for r in rows:
                cur = self._db.execute(
                    "INSERT INTO records(id, information, goal, outcome, metadata, actions, "
                    "extractor, embedding, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        r["id"],
                        r["information"],
                        r["goal"],
                        r["outcome"],
                        r["metadata"],
                        r["actions"],
                        r["extractor"],
                        np.ascontiguousarray(r["embedding"], dtype=np.float32).tobytes(),
                        now,
                    ),
                )
                label = cur.lastrowid
                assert label is not None  # an INSERT into a rowid table sets it
                labels.append(int(label))
                self._db.execute(
                    "INSERT INTO events(at, kind, record, detail) VALUES (?, 'add', ?, '{}')",
                    (now, r["id"]),
                )
            self._bump()
        return labels

    _COLUMNS = (
        "label, id, information, goal, outcome, metadata, actions, extractor, created_at, "
        "deleted_at, deleted_reason"
    )

    def _row(self, r: tuple[Any, ...], embedding: bytes | None = None) -> Row:
        # SQLite keeps any type in any column: a damaged file can hand back anything.
        if not isinstance(r[0], int) or not all(isinstance(x, str) for x in r[1:8]):
            raise _damaged(self.path, r[0], "a text column holds another type")
        try:
            metadata = json.loads(r[5])
        except ValueError:
            raise _damaged(self.path, r[0], "its metadata is not JSON") from None
        if not isinstance(metadata, dict):
            raise _damaged(self.path, r[0], "its metadata is not a JSON object")
        try:
            actions = json.loads(r[6] or "[]")
        except ValueError:
            raise _damaged(self.path, r[0], "its actions are not JSON") from None
        if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
            raise _damaged(self.path, r[0], "its actions are not a list of objects")
        return Row(
            label=r[0],
            id=r[1],
            information=r[2],
            goal=r[3],
            outcome=r[4],
            metadata=metadata,
            actions_json=r[6],
            extractor=r[7],
            created_at=r[8],
            deleted_at=r[9],
            deleted_reason=r[10],
            embedding=None if embedding is None else self._vector(r[0], embedding),
        )

    def _stored_dim(self) -> int | None:
        """The vectors' length recorded in meta (set with the first embedding, then fixed)."""
        if getattr(self, "_dim", None) is None:
            stored = self.get_meta("dim")
            self._dim = int(stored) if stored is not None and stored.isdigit() else None
        return self._dim

    def _vector(self, label: Any, blob: Any, dim: int | None = None) -> np.ndarray:
        """A stored embedding, checked: float32 bytes of the stored dimension, finite."""
        dim = dim or self._stored_dim()
        size = 4 * dim if dim else None
        if not isinstance(blob, bytes) or len(blob) % 4 or (size and len(blob) != size):
            raise _damaged(self.path, label, "its embedding is not the stored dimension")
        vector = np.frombuffer(blob, dtype=np.float32)
        if not np.isfinite(vector).all():
            raise _damaged(self.path, label, "its embedding is not finite")
        return vector

    def by_id(self, record_id: str, embedding: bool = False) -> Row | None:
        cols = self._COLUMNS + (", embedding" if embedding else "")
        with self._lock:
            r = self._db.execute(
                f"SELECT {cols} FROM records WHERE id = ?", (record_id,)
            ).fetchone()
        if r is None:
            return None
        return self._row(r[:11], r[11] if embedding else None)

    def by_labels(self, labels: Iterable[int], embedding: bool = False) -> dict[int, Row]:
        labels = [int(x) for x in labels]
        if not labels:
            return {}
        cols = self._COLUMNS + (", embedding" if embedding else "")
        out: dict[int, Row] = {}
        with self._lock:
            for start in range(0, len(labels), 900):  # SQLite's bound-variable limit
                chunk = labels[start : start + 900]
                marks = ",".join("?" * len(chunk))
                for r in self._db.execute(
                    f"SELECT {cols} FROM records WHERE label IN ({marks})", chunk
                ):
                    out[r[0]] = self._row(r[:11], r[11] if embedding else None)
        return out

    def embeddings(
        self, after: int = 0, batch: int = 4096
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(labels, vectors)`` of live records with label > ``after``, in chunks."""
        last = after
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT label, embedding FROM records WHERE label > ? AND deleted_at IS NULL "
                    "ORDER BY label LIMIT ?",
                    (last, batch),
                ).fetchall()
            if not rows:
                return
            labels = np.array([r[0] for r in rows], dtype=np.int64)
            first = self._vector(rows[0][0], rows[0][1])
            vectors = np.stack([first] + [self._vector(r[0], r[1], len(first)) for r in rows[1:]])
            yield labels, vectors
            last = int(labels[-1])

    def labels_where(self, sql: str, args: Sequence[Any] = ()) -> list[int]:
        with self._lock:
            return [r[0] for r in self._db.execute(f"SELECT label FROM records WHERE {sql}", args)]

    def rows(self, live_only: bool = True, batch: int = 2048) -> Iterator[Row]:
        """Every record (with its embedding), in label order."""
        last = 0
        where = "AND deleted_at IS NULL" if live_only else ""
        while True:
            with self._lock:
                chunk = self._db.execute(
                    f"SELECT {self._COLUMNS}, embedding FROM records WHERE label > ? {where} "
                    "ORDER BY label LIMIT ?",
                    (last, batch),
                ).fetchall()
            if not chunk:
                return
            for r in chunk:
                yield self._row(r[:11], r[11])
            last = chunk[-1][0]

    def mark_deleted(self, record_id: str, reason: str) -> int:
        with self.transaction():
            cur = self._db.execute(
                "UPDATE records SET deleted_at = ?, deleted_reason = ? "
                "WHERE id = ? AND deleted_at IS NULL",
                (time.time(), reason, record_id),
            )
            if cur.rowcount:
                self._db.execute(
                    "INSERT INTO events(at, kind, record, detail) VALUES (?, 'delete', ?, ?)",
                    (time.time(), record_id, json.dumps({"reason": reason})),
                )
                self._bump()
        return int(cur.rowcount)

    def restore(self, record_id: str) -> int:
        with self.transaction():
            cur = self._db.execute(
                "UPDATE records SET deleted_at = NULL, deleted_reason = NULL "
                "WHERE id = ? AND deleted_at IS NOT NULL",
                (record_id,),
            )
            if cur.rowcount:
                self._db.execute(
                    "INSERT INTO events(at, kind, record, detail) VALUES (?, 'restore', ?, '{}')",
                    (time.time(), record_id),
                )
                self._bump()
        return int(cur.rowcount)

    def count(self, live_only: bool = True) -> int:
        where = "WHERE deleted_at IS NULL" if live_only else ""
        with self._lock:
            return int(self._db.execute(f"SELECT COUNT(*) FROM records {where}").fetchone()[0])

    def outcome_counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT outcome, COUNT(*) FROM records WHERE deleted_at IS NULL GROUP BY outcome"
            ).fetchall()
        return {k: int(v) for k, v in rows}

    # -- cut links ----------------------------------------------------------

    def add_cuts(self, cuts: Iterable[tuple[int, int, str, str]]) -> int:
        """Store cut links ``(a, b, rule, witness)``; returns how many were new."""
        now = time.time()
        rows = [
            (min(a, b), max(a, b), rule, witness, now) for a, b, rule, witness in cuts if a != b
        ]
        if not rows:
            return 0
        with self.transaction():
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO cut_links(a, b, rule, witness, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            return self._db.total_changes - before

    def cuts_among(self, labels: Sequence[int]) -> set[tuple[int, int]]:
        """Cut links with both ends in ``labels``, as ``(low, high)`` pairs."""
        labels = sorted({int(x) for x in labels})
        if len(labels) < 2:
            return set()
        marks = ",".join("?" * len(labels))
        with self._lock:
            rows = self._db.execute(
                f"SELECT a, b FROM cut_links WHERE a IN ({marks}) AND b IN ({marks})",
                labels + labels,
            ).fetchall()
        return {(int(a), int(b)) for a, b in rows}

    def cut_partners(self, label: int) -> set[int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT b FROM cut_links WHERE a = ? UNION SELECT a FROM cut_links WHERE b = ?",
                (label, label),
            ).fetchall()
        return {int(r[0]) for r in rows}

    def cut_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM cut_links").fetchone()[0])

    def cuts(self, limit: int = 100) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT ra.id, rb.id, c.rule, c.witness, c.created_at FROM cut_links c "
                "JOIN records ra ON ra.label = c.a JOIN records rb ON rb.label = c.b "
                "ORDER BY c.created_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            {"a": a, "b": b, "rule": rule, "witness": witness, "at": at}
            for a, b, rule, witness, at in rows
        ]

    # -- history ------------------------------------------------------------

    def events(self, record_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        sql = "SELECT seq, at, kind, record, detail FROM events"
        args: list[Any] = []
        if record_id is not None:
            sql += " WHERE record = ?"
            args.append(record_id)
        sql += " ORDER BY seq DESC LIMIT ?"
        args.append(limit)
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [
            {"seq": s, "at": at, "kind": k, "record": r, "detail": json.loads(d)}
            for s, at, k, r, d in rows
        ]


#: The first 16 bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"


def _check_existing(path: Path, read_only: bool) -> str | None:
    """Refuse an existing path that is not an SQLite file; say why it must be read-only.

    Returns None for a writable database (or a path to create), else the reason it is opened
    read-only.
    """
    where = str(path)
    if not path.exists():
        if read_only:
            raise MemoryStoreError(
                f"no memory database at {where!r} to open read-only: expected an existing file"
            )
        return None
    if path.is_dir():
        raise MemoryStoreError(
            f"memory database path {where!r} is a directory: expected a file (e.g. memory.db)"
        )
    if not path.is_file():
        raise MemoryStoreError(
            f"cannot open memory database {where!r}: not a regular file (a FIFO, socket or "
            "device); expected an SQLite file"
        )
    try:
        # Through bt_raider.files: a FIFO swapped in after the is_file() check is refused,
        # never waited on; a directory is named.
        head = read_head(path, len(SQLITE_HEADER), what="memory database")
        st = os.stat(path)
        fs_read_only = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except InputFileError as exc:
        raise MemoryStoreError(f"cannot open memory database {exc}") from None
    except OSError as exc:
        raise MemoryStoreError(f"cannot read memory database {where!r}: {exc}") from exc
    if not head:
        raise MemoryStoreError(
            f"cannot open memory database {where!r}: the file is empty (0 bytes), not a "
            "bt_raider memory; remove it to start a new memory, or restore it from a backup"
        )
    if head != SQLITE_HEADER:
        raise MemoryStoreError(
            f"cannot open memory database {where!r}: not an SQLite database (it starts "
            f"with {head[:8]!r}); expected a file written by bt_raider.memory"
        )
    if fs_read_only:
        return "read-only filesystem"
    if read_only:
        return "read_only=True"
    if not st.st_mode & 0o222:
        # Root may write anyway; a file with no write bit was meant to be read only.
        return f"file mode {stat.S_IMODE(st.st_mode):04o}"
    if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK | os.X_OK):
        return "no write permission"
    return None


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """An SQLite connection that never writes (``mode=ro``).

    A WAL database needs its ``-shm`` file: when it cannot be created (read-only filesystem or
    folder) and no writer left one, the file is opened ``immutable`` -- nobody can change it.
    """
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    shm = Path(str(path) + "-shm")
    folder_writable = os.access(path.parent, os.W_OK) and not (
        os.statvfs(path.parent).f_flag & os.ST_RDONLY
    )
    if not folder_writable and not shm.exists():
        uri += "&immutable=1"
    db = connect_sqlite(
        path, what="memory database", uri=uri, check_same_thread=False, isolation_level=None
    )
    db.execute("PRAGMA query_only=ON")
    return db


class _Transaction:
    """Re-entrant ``BEGIN IMMEDIATE`` / ``COMMIT`` holding the store's lock."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> _Transaction:
        self.store.writable()
        self.store._lock.acquire()
        depth = getattr(self.store, "_depth", 0)
        if depth == 0:
            self.store._db.execute("BEGIN IMMEDIATE")
        self.store._depth = depth + 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.store._depth -= 1
            if self.store._depth == 0:
                self.store._db.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.store._lock.release()
