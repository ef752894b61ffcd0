"""Writing a :class:`~bt_raider.memory.vector.VectorMemory`: storing records, hiding them.

A record is an [information -> goal] pair with an outcome (:data:`SUCCESS`, or another short
word: only successes are few-shot examples), metadata and an id.
:meth:`~bt_raider.memory.vector.VectorMemory.record_many` checks every item before it is
written, embeds the new ones in batches, extracts their actions and stores row and vector
together; delivering a record again under its ``record_id`` changes nothing, a different
record under a known id is an error. :meth:`~bt_raider.memory.vector.VectorMemory.delete`
hides a record from retrieval and :meth:`~bt_raider.memory.vector.VectorMemory.restore`
brings it back; its row and history stay. Mixed into ``VectorMemory``, which documents these
methods as its own.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bt_raider.errors import MemoryStoreError
from bt_raider.memory.actions import Action, Extractor, actions_to_json
from bt_raider.memory.index import VectorIndex
from bt_raider.memory.store import Row, Store, guarded

#: Outcomes that make a record eligible as a few-shot example.
SUCCESS = "success"


class _Writing:
    """The writing side of :class:`~bt_raider.memory.vector.VectorMemory` (a mixin of it)."""

    # What this mixin uses of its host, declared for the type checker (this module may not
    # import ``vector``). The annotations make no class attributes; VectorMemory.__init__ sets
    # them. The method stubs exist only for the type checker; VectorMemory defines them.
    path: Path
    extractor: Extractor
    _lock: threading.RLock
    _excluded: set[int]
    _rows: OrderedDict[int, tuple[Row, tuple[Action, ...]]]

    if TYPE_CHECKING:

        def _writable(self, what: str) -> None: ...
        def _opened(self) -> tuple[Store, VectorIndex]: ...
        def _embed(self, texts: Sequence[str]) -> np.ndarray: ...

    @guarded
    def record(
        self,
        information: str,
        goal: str,
        outcome: str | bool = SUCCESS,
        metadata: dict[str, Any] | None = None,
        *,
        record_id: str | None = None,
    ) -> str:
        """Store an [information -> goal] pair; returns its id.

        Idempotent by ``record_id``: delivering the same record again returns its id and
        changes nothing; a different record under a known id is an error.
        """
        return self.record_many(
            [
                {
                    "information": information,
                    "goal": goal,
                    "outcome": outcome,
                    "metadata": metadata,
                    "record_id": record_id,
                }
            ]
        )[0]

    @guarded
    def record_many(self, items: Iterable[dict[str, Any]], batch_size: int = 256) -> list[str]:
        """Store many records (embedded in batches); returns their ids in order.

        Each item has ``information``, ``goal`` and optionally ``outcome`` (default success),
        ``metadata`` and ``record_id``.
        """
        self._writable("record")
        ids: list[str] = []
        batch: list[dict[str, Any]] = []
        for n, item in enumerate(items):
            batch.append(self._validate(item, n))
            if len(batch) >= batch_size:
                ids += self._insert(batch)
                batch = []
        if batch:
            ids += self._insert(batch)
        return ids

    def _validate(self, item: dict[str, Any], n: int) -> dict[str, Any]:
        if not isinstance(item, dict):
            raise MemoryStoreError(f"record {n + 1} is {item!r}: expected a dict")
        unknown = set(item) - {"information", "goal", "outcome", "metadata", "record_id"}
        if unknown:
            raise MemoryStoreError(
                f"record {n + 1}: unknown field {sorted(unknown)[0]!r}: expected information, "
                "goal, outcome, metadata, record_id"
            )
        info, goal = item.get("information"), item.get("goal")
        for key, value in (("information", info), ("goal", goal)):
            if not isinstance(value, str) or not value.strip():
                raise MemoryStoreError(
                    f"record {n + 1}: {key} is {value!r}: expected a non-empty string"
                )
        assert isinstance(info, str) and isinstance(goal, str)  # checked just above
        outcome = item.get("outcome", SUCCESS)
        if isinstance(outcome, bool):
            outcome = SUCCESS if outcome else "failure"
        if not isinstance(outcome, str) or not outcome.strip():
            raise MemoryStoreError(
                f"record {n + 1}: outcome is {outcome!r}: expected 'success', 'failure' or a "
                "short word"
            )
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise MemoryStoreError(f"record {n + 1}: metadata is {metadata!r}: expected a dict")
        try:
            meta_json = json.dumps(metadata, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise MemoryStoreError(
                f"record {n + 1}: metadata is not JSON-serialisable: {exc}"
            ) from exc
        record_id = item.get("record_id")
        if record_id is not None and (not isinstance(record_id, str) or not record_id.strip()):
            raise MemoryStoreError(
                f"record {n + 1}: record_id is {record_id!r}: expected a non-empty string"
            )
        return {
            "id": record_id,
            "information": info.strip(),
            "goal": goal.strip(),
            "outcome": outcome.strip().lower(),
            "metadata": meta_json,
        }

    def _insert(self, batch: list[dict[str, Any]]) -> list[str]:
        with self._lock:
            store, index = self._opened()
            ids: list[str | None] = []
            todo: list[dict[str, Any]] = []
            fresh: dict[str, dict[str, Any]] = {}
            for r in batch:
                rid = r["id"]
                if rid is not None:
                    existing = store.by_id(rid)
                    if existing is None and rid in fresh:
                        existing_item = fresh[rid]
                        self._same_or_raise(rid, existing_item, r)
                        ids.append(rid)
                        continue
                    if existing is not None:
                        self._same_or_raise(
                            rid,
                            {
                                "information": existing.information,
                                "goal": existing.goal,
                                "outcome": existing.outcome,
                                "metadata": json.dumps(existing.metadata, sort_keys=True),
                            },
                            r,
                        )
                        ids.append(rid)
                        continue
                else:
                    r["id"] = rid = uuid.uuid4().hex
                fresh[rid] = r
                todo.append(r)
                ids.append(rid)
            if todo:
                vectors = self._embed([r["information"] for r in todo])
                for r, v in zip(todo, vectors, strict=True):
                    r["embedding"] = v
                    r["actions"] = actions_to_json(self.extractor.extract(r["information"]))
                    r["extractor"] = self.extractor.name
                expected = store.mutation
                labels = store.insert(todo)
                index.add(np.asarray(labels, dtype=np.int64), vectors)
                for r, label in zip(todo, labels, strict=True):
                    if r["outcome"] != SUCCESS:
                        self._excluded.add(label)
                if store.mutation == expected + 1 and index.mutation == expected:
                    index.mutation = expected + 1
            return [i for i in ids if i is not None]

    @staticmethod
    def _same_or_raise(rid: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        for key in ("information", "goal", "outcome", "metadata"):
            if old[key] != new[key]:
                raise MemoryStoreError(
                    f"record id {rid!r} already holds a different record ({key} "
                    f"{old[key]!r} != {new[key]!r}): re-delivering a record must not change it"
                )

    @guarded
    def delete(self, record_id: str, reason: str = "judged wrong") -> bool:
        """Hide a record from retrieval (hnswlib ``mark_deleted``); its row and history stay.

        Returns False when it was already deleted.
        """
        with self._lock:
            store, index = self._opened()
            store.writable("delete")
            row = self._row_by_id(store, record_id)
            expected = store.mutation
            changed = store.mark_deleted(record_id, reason)
            if changed:
                index.mark_deleted(row.label)
                self._excluded.discard(row.label)
                self._rows.pop(row.label, None)
                if store.mutation == expected + 1 and index.mutation == expected:
                    index.mutation = expected + 1
            return bool(changed)

    @guarded
    def restore(self, record_id: str) -> bool:
        """Undo :meth:`delete`; returns False when the record was not deleted."""
        with self._lock:
            store, index = self._opened()
            store.writable("restore")
            row = self._row_by_id(store, record_id, embedding=True)
            expected = store.mutation
            changed = store.restore(record_id)
            if changed:
                index.unmark_deleted(row.label, row.embedding)
                if row.outcome != SUCCESS:
                    self._excluded.add(row.label)
                if store.mutation == expected + 1 and index.mutation == expected:
                    index.mutation = expected + 1
            return bool(changed)

    def _row_by_id(self, store: Store, record_id: str, embedding: bool = False) -> Row:
        row = store.by_id(record_id, embedding=embedding)
        if row is None:
            raise MemoryStoreError(
                f"no record with id {record_id!r} in {str(self.path)!r}: see "
                "bt-raider memory query/stats for the ids"
            )
        return row
