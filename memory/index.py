"""The hnswlib index (cosine), saved next to the database and rebuilt from it when stale.

The database is the source of truth. The index file ``<db>.hnsw`` has a sidecar
``<db>.hnsw.json`` naming the database (its ``store_id``), the database's mutation counter at
save time, the dimension, the parameters, the file's size and its BLAKE2b checksum; the
checksum is also stored in the database (meta key ``index_blake2b``). On open, an index whose
sidecar does not match the database -- missing, from another database, saved before the last
write, another dimension -- is rebuilt from the embeddings stored in SQLite, so no model is
needed.

An index proves itself before hnswlib sees it: hnswlib trusts the file's bytes and crashes the
process (SIGSEGV) or returns other neighbours on a damaged file, so the bytes are hashed first
and loaded only when the checksum matches both the sidecar and the database. Any mismatch is
logged (naming the file) and the index is rebuilt; a damaged index is never loaded.

Labels are the records' integer labels. Deleted records are ``mark_deleted`` in hnswlib (and
left out of a rebuild); the set of marked labels is tracked here because hnswlib cannot list it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from bt_raider.errors import InputFileError, MemoryStoreError, require
from bt_raider.files import MAX_CONFIG_BYTES, open_binary, read_json
from bt_raider.memory.store import Store

SPACE = "cosine"
#: Most bytes of an index file (10 million 384-d vectors with their links: about 20 GiB).
MAX_INDEX_BYTES = 64 * 2**30
#: The database meta key holding the checksum of the last saved index file.
CHECKSUM_KEY = "index_blake2b"

log = logging.getLogger("bt_raider.memory.index")

#: Stale reasons that are normal life (a new memory, a crash before the index was saved): the
#: index is rebuilt without a warning. Every other reason means damage or a foreign file.
_EXPECTED = {"missing", "stale"}


def checksum(f: BinaryIO) -> tuple[str, int]:
    """BLAKE2b-256 (hex) and length of what is left to read in ``f``, read in chunks."""
    h = hashlib.blake2b(digest_size=32)
    size = 0
    while chunk := f.read(1 << 22):
        h.update(chunk)
        size += len(chunk)
    return h.hexdigest(), size


#: Up to this many live records an index is rebuilt on one thread (reproducibly).
DETERMINISTIC_REBUILD = 20_000


class VectorIndex:
    """An hnswlib HNSW graph over a store's live embeddings.

    Args:
        path: the index file (the sidecar is ``path`` + ``.json``).
        dim: vector length.
        M: graph degree (hnswlib's M).
        ef_construction: build-time beam width.
        ef: query-time beam width (raised to ``k`` when a query asks for more).
    """

    def __init__(
        self, path: Path, dim: int, *, M: int = 16, ef_construction: int = 200, ef: int = 64
    ) -> None:
        self.path = Path(path)
        self.meta_path = Path(str(path) + ".json")
        self.dim = int(dim)
        self.M = int(M)
        self.ef_construction = int(ef_construction)
        self.ef = int(ef)
        self._hnswlib = require("hnswlib", "memory", needed_by="VectorIndex")
        self._index: Any = None  # an hnswlib.Index once opened (hnswlib ships no types)
        self._lock = threading.RLock()
        self.deleted: set[int] = set()
        self.max_label = 0
        self.mutation = -1  # the database mutation this index reflects
        self.how = ""  # "loaded", "rebuilt" or "new"
        self.reason: str | None = None  # why the saved index was not loaded

    # -- life cycle ---------------------------------------------------------

    def open(self, store: Store) -> str:
        """Load the saved index if it matches ``store`` and its checksum, else rebuild.

        Returns ``"loaded"``, ``"rebuilt"`` or ``"new"``. A rebuilt index is not saved here
        (:meth:`save` does it, unless the database is read-only).
        """
        with self._lock:
            reason = self._stale_reason(store)
            if reason is None:
                try:
                    self._load(store)
                    self.how = "loaded"
                    return self.how
                except (RuntimeError, OSError, ValueError, KeyError) as exc:
                    reason = f"unreadable ({exc})"
            if reason not in _EXPECTED:
                log.warning(
                    "memory index %s is not trusted (%s): rebuilt from %s",
                    self.path,
                    reason,
                    store.path,
                )
            self.rebuild(store)
            self.how = "rebuilt" if reason != "missing" or store.count(False) else "new"
            self.reason = reason
            return self.how

    def _stale_reason(self, store: Store) -> str | None:
        if not self.path.is_file() or not self.meta_path.is_file():
            return "missing"
        try:
            meta = self._meta()
            if not isinstance(meta, dict):
                return "sidecar is not a JSON object"
        except InputFileError:
            return "sidecar unreadable"
        if meta.get("store_id") != store.store_id:
            return "another database"
        try:
            if int(meta.get("mutation", -1)) != store.mutation:
                return "stale"
            if int(meta.get("dim", -1)) != self.dim or meta.get("space") != SPACE:
                return "dimension"
        except (TypeError, ValueError):
            return "sidecar unreadable"
        if not meta.get("blake2b"):
            return "no checksum (saved by an older bt_raider)"
        if meta["blake2b"] != store.get_meta(CHECKSUM_KEY):
            return "checksum differs from the database's"
        # Refused from its size before a byte is hashed: no graph of these records is larger.
        limit = (store.count(live_only=False) + 1024) * (4 * self.dim + 16 * self.M + 64) + (
            1 << 20
        )
        if os.stat(self.path).st_size > limit:
            return f"larger than any index of this database ({limit:,} bytes)"
        return None

    def _meta(self) -> Any:
        """The sidecar's JSON, read within bounds (never a FIFO, never without end)."""
        return read_json(self.meta_path, what="memory index sidecar", max_bytes=MAX_CONFIG_BYTES)

    def _new(self, capacity: int) -> Any:
        index = self._hnswlib.Index(space=SPACE, dim=self.dim)
        index.init_index(
            max_elements=max(int(capacity), 1024), ef_construction=self.ef_construction, M=self.M
        )
        index.set_ef(self.ef)
        return index

    def _load(self, store: Store) -> None:
        """Hash the file, then hand hnswlib the very bytes that were hashed.

        The file is opened once; hashing and loading both go through that descriptor
        (``/proc/self/fd/N`` on Linux), so a file replaced in between is never loaded.
        """
        try:
            meta = self._meta()
        except InputFileError as exc:
            raise ValueError(str(exc)) from exc
        count = int(meta["elements"])
        with open_binary(self.path, what="memory index", max_bytes=MAX_INDEX_BYTES) as f:
            if os.fstat(f.fileno()).st_size != int(meta["bytes"]):
                raise ValueError(f"size differs from the sidecar's {meta['bytes']} bytes")
            digest, size = checksum(f)
            if digest != meta["blake2b"] or size != int(meta["bytes"]):
                raise ValueError("checksum mismatch: the file is damaged")
            fd_path = f"/proc/self/fd/{f.fileno()}"
            source = fd_path if os.path.exists(fd_path) else str(self.path)
            index = self._hnswlib.Index(space=SPACE, dim=self.dim)
            index.load_index(source, max_elements=max(2 * count, 1024))
        if index.element_count != count:
            raise ValueError("element count differs from the sidecar")
        index.set_ef(self.ef)
        ids = set(index.get_ids_list())
        self.deleted = {x for x in store.labels_where("deleted_at IS NOT NULL") if x in ids}
        self.max_label = max(ids) if ids else 0
        self._index = index
        self.mutation = int(meta["mutation"])

    def rebuild(self, store: Store) -> None:
        """A fresh graph from the live embeddings in ``store``."""
        with self._lock:
            live = store.count(live_only=True)
            index = self._new(max(2 * live, 1024))
            # hnswlib's threads insert in a racy order, so two rebuilds give different graphs
            # (and, rarely, different approximate neighbours). A small memory rebuilds on one
            # thread, the same graph every time, in well under a second; a large one uses
            # every core.
            threads = 1 if live <= DETERMINISTIC_REBUILD else -1
            mutation = store.mutation
            max_label = 0
            for labels, vectors in store.embeddings():
                if vectors.shape[1] != self.dim:
                    raise MemoryStoreError(
                        f"stored embeddings have length {vectors.shape[1]}, the embedder gives "
                        f"{self.dim}: the database was built with another embedder"
                    )
                index.add_items(vectors, labels, num_threads=threads)
                max_label = int(labels[-1])
            self._index = index
            self.deleted = set()
            self.max_label = max_label
            self.mutation = mutation

    def save(self, store: Store) -> None:
        """Write the index and its sidecar atomically (temp file, then rename).

        The checksum goes into the database before the file is renamed into place, so a crash
        at any point leaves either the old pair or a mismatch (rebuilt on open), never a
        damaged file that passes. Nothing is written when the database is read-only.
        """
        with self._lock:
            if self._index is None or store.read_only:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Written in a private folder (unique name, mode 0700) beside the index, then
            # renamed: a link planted at any predictable name is replaced, never written through.
            work = Path(tempfile.mkdtemp(prefix=".hnsw-", dir=self.path.parent))
            try:
                self._save(store, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)

    def _save(self, store: Store, work: Path) -> None:
        """Write the index and its sidecar in ``work``, then rename them into place."""
        assert self._index is not None
        tmp = work / "index"
        self._index.save_index(str(tmp))
        with open_binary(tmp, what="memory index", max_bytes=MAX_INDEX_BYTES) as f:
            os.fsync(f.fileno())
            digest, size = checksum(f)
        store.set_meta(CHECKSUM_KEY, digest)
        os.replace(tmp, self.path)
        meta = {
            "store_id": store.store_id,
            "mutation": self.mutation,
            "dim": self.dim,
            "space": SPACE,
            "elements": int(self._index.element_count),
            "M": self.M,
            "ef_construction": self.ef_construction,
            "bytes": size,
            "blake2b": digest,
        }
        tmp_meta = work / "sidecar"
        tmp_meta.write_text(json.dumps(meta, indent=1))
        os.replace(tmp_meta, self.meta_path)

    def sync(self, store: Store) -> None:
        """Catch up with writes another process made to the database."""
        with self._lock:
            mutation = store.mutation
            if mutation == self.mutation:
                return
            ids = set(self._index.get_ids_list())
            live = set(store.labels_where("deleted_at IS NULL"))
            for label in (ids - live) - self.deleted:
                self.mark_deleted(label)
            for label in live & self.deleted:
                self.unmark_deleted(label)
            missing = sorted(live - ids)
            if missing:
                rows = store.by_labels(missing, embedding=True)
                vectors = np.stack([rows[x].stored_embedding() for x in missing])
                self.add(np.asarray(missing, dtype=np.int64), vectors)
            self.mutation = mutation

    # -- contents -----------------------------------------------------------

    @property
    def live_count(self) -> int:
        return 0 if self._index is None else int(self._index.element_count) - len(self.deleted)

    @property
    def element_count(self) -> int:
        return 0 if self._index is None else int(self._index.element_count)

    def add(self, labels: np.ndarray, vectors: np.ndarray) -> None:
        with self._lock:
            vectors = np.ascontiguousarray(vectors, dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[1] != self.dim:
                raise MemoryStoreError(
                    f"vectors of shape {vectors.shape} do not fit an index of dimension {self.dim}"
                )
            needed = self._index.element_count + len(labels)
            if needed > self._index.get_max_elements():
                self._index.resize_index(max(needed, 2 * self._index.get_max_elements()))
            self._index.add_items(vectors, np.asarray(labels, dtype=np.int64))
            self.max_label = max(self.max_label, int(np.max(labels)))

    def mark_deleted(self, label: int) -> None:
        with self._lock:
            if label in self.deleted:
                return
            try:
                self._index.mark_deleted(int(label))
            except RuntimeError:
                return  # not in the index (never added): nothing to hide
            self.deleted.add(int(label))

    def unmark_deleted(self, label: int, vector: np.ndarray | None = None) -> None:
        with self._lock:
            if label in self.deleted:
                self._index.unmark_deleted(int(label))
                self.deleted.discard(int(label))
            elif vector is not None and int(label) not in set(self._index.get_ids_list()):
                self.add(np.array([label]), vector.reshape(1, -1))

    def vectors(self, labels: Collection[int]) -> np.ndarray:
        return np.asarray(self._index.get_items(list(labels)), dtype=np.float32)

    # -- search -------------------------------------------------------------

    def knn(
        self,
        vector: np.ndarray,
        k: int,
        exclude: Collection[int] | None = None,
        num_threads: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest live labels and their cosine similarities, best first.

        ``exclude`` is passed to hnswlib as its ``filter`` (labels never returned).
        """
        with self._lock:
            live = self.live_count - (len(exclude) if exclude else 0)
            k = min(int(k), max(live, 0))
            if k <= 0:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
            self._index.set_ef(max(self.ef, k))
            query = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, -1)
            filt: Callable[[int], bool] | None = None
            if exclude:
                blocked = exclude if isinstance(exclude, (set, frozenset)) else set(exclude)
                filt = lambda label: label not in blocked  # noqa: E731 - hnswlib wants a callable
            while True:
                try:
                    labels, dist = self._index.knn_query(
                        query, k=k, num_threads=num_threads, filter=filt
                    )
                    break
                except RuntimeError:
                    # Too few reachable elements for k (many marked deleted): ask for fewer.
                    if k <= 1:
                        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
                    k = max(1, k // 2)
            return labels[0].astype(np.int64), (1.0 - dist[0]).astype(np.float32)
