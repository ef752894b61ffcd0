"""Fleet memory: what worked for one robot reaches the others -- through the CDR rules.

When a robot records a success it stores the ``[information -> goal]`` pair in its own
:class:`~bt_raider.memory.VectorMemory` and publishes it (topic ``memory`` of a
:class:`~bt_raider.fleet.zenoh_bus.ZenohBus`). Every other robot **ingests** it into its own memory,
but not blindly (Ma et al.: a memory is only as good as its consistency):

1. the record is checked: well-formed, within the bound, signed by the robot that published it;
2. its id is looked up: a record already held -- delivered twice, or echoed -- changes nothing
   (ingestion is idempotent; a *different* record under a known id is rejected);
3. it is judged by the Conflict Detection Rules against the memory's nearest contexts
   (:meth:`~bt_raider.memory.VectorMemory.resolve`, no trimming). If a rule fires against a
   **trusted** record -- one this robot learnt itself (by default, fleet records are not
   trusted over local experience) -- the record is **quarantined**: stored with the outcome
   ``quarantined``, the reason and the conflicting ids in its metadata, so it is kept, visible in
   the history, and never retrieved as an example; otherwise it is **accepted** as a success.

Each record carries a stable id (:func:`record_id`: origin + content hash), so a robot that
succeeds twice at the same thing does not duplicate it either.

Embedding a sentence and writing it takes milliseconds to seconds, and a success is reported from
a behaviour's tick, so all memory work -- recording a local success, publishing it, ingesting a
delivered record -- runs in order on one thread owned by the :class:`FleetMemory` (as
:class:`~bt_raider.recovery.fewshot.MemoryLink` does): :meth:`FleetMemory.record_success` only queues.
:meth:`FleetMemory.finish` ends a session without losing a record in flight: it tells the team
how many records this robot published and waits until it has taken in what each peer published.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from bt_raider.cooperation.messaging import decode_object
from bt_raider.errors import CommunicationError, MemoryStoreError

if TYPE_CHECKING:
    from bt_raider.memory import VectorMemory

log = logging.getLogger("bt_raider.fleet.fleet_memory")

#: Topic the records travel on.
TOPIC = "memory"
#: Suffix of the topic a robot's end note travels on (``memory-done``: how many it published).
DONE_SUFFIX = "-done"
#: Longest record payload, in characters.
MAX_RECORD_CHARS = 4000
#: Outcome stored for a quarantined record (never retrieved as an example).
QUARANTINED = "quarantined"
#: Ingestion outcomes.
STATUSES = ("accepted", "duplicate", "quarantined", "rejected")

_FIELDS = ("v", "id", "origin", "information", "goal", "metadata")


def record_id(origin: str, information: str, goal: str) -> str:
    """A stable id: the same robot recording the same success gets the same id."""
    digest = hashlib.sha256(f"{origin}\n{information.strip()}\n{goal.strip()}".encode()).hexdigest()
    return f"{origin}-{digest[:16]}"


@dataclass(frozen=True)
class FleetRecord:
    """One ``[information -> goal]`` success as it travels between robots.

    Raises:
        CommunicationError: a field is missing, empty or of the wrong type.
    """

    id: str
    origin: str
    information: str
    goal: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        for name in ("id", "origin", "information", "goal"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise CommunicationError(
                    f"fleet record field {name!r} must be a non-empty string, got {value!r}"
                )
        if not isinstance(self.metadata, Mapping):
            raise CommunicationError(
                f"fleet record {self.id!r}: metadata must be an object, got "
                f"{type(self.metadata).__name__}"
            )
        object.__setattr__(self, "metadata", dict(self.metadata))

    def to_json(self, *, max_chars: int = MAX_RECORD_CHARS) -> str:
        text = json.dumps(
            {
                "v": 1,
                "id": self.id,
                "origin": self.origin,
                "information": self.information,
                "goal": self.goal,
                "metadata": self.metadata,
            },
            separators=(",", ":"),
            ensure_ascii=False,
            sort_keys=True,
        )
        if len(text) > max_chars:
            raise CommunicationError(
                f"fleet record {self.id!r} is {len(text)} characters: a record holds at most {max_chars}"
            )
        return text

    @classmethod
    def from_json(cls, text: str, *, max_chars: int = MAX_RECORD_CHARS) -> FleetRecord:
        """Read a record written by :meth:`to_json`.

        Raises:
            CommunicationError: too long, not JSON, not an object, unknown version or fields.
        """
        raw = decode_object(text, "fleet record", max_chars, preview=60)
        if raw.get("v") != 1:
            raise CommunicationError(
                f"fleet record version {raw.get('v')!r} is unknown: expected 1"
            )
        unknown = sorted(set(raw) - set(_FIELDS))
        if unknown:
            raise CommunicationError(
                f"fleet record has unknown field(s) {', '.join(unknown)}: expected {', '.join(_FIELDS)}"
            )
        missing: Any = None  # a field left out is None, which __post_init__ refuses
        return cls(
            id=raw.get("id", missing),
            origin=raw.get("origin", missing),
            information=raw.get("information", missing),
            goal=raw.get("goal", missing),
            metadata=raw.get("metadata") or {},
        )


@dataclass(frozen=True)
class Ingested:
    """What happened to one delivered record.

    Attributes:
        status: ``accepted``, ``duplicate``, ``quarantined`` or ``rejected``.
        record_id: the record's id (None when it could not be read).
        origin: the robot it came from.
        reason: why (for quarantined and rejected records: the rule and the conflicting record).
        conflicts_with: ids of the trusted records it conflicts with.
    """

    status: str
    record_id: str | None
    origin: str | None
    reason: str = ""
    conflicts_with: tuple[str, ...] = ()


class RecordTransport(Protocol):
    """Carries text payloads on a topic to every robot of the team (a ZenohBus does)."""

    name: str

    def publish_topic(self, topic: str, text: str) -> None: ...

    def subscribe_topic(self, topic: str, handler: Callable[[str, str], None]) -> None: ...


def _trusted_locally(metadata: Mapping[str, Any]) -> bool:
    return metadata.get("via") != "fleet"


class FleetMemory:
    """A robot's vector memory, shared with its team.

    Args:
        memory: this robot's :class:`~bt_raider.memory.VectorMemory`.
        transport: the team's channel (a :class:`~bt_raider.fleet.zenoh_bus.ZenohBus`); None to
            ingest by hand only.
        name: this robot's name (default: ``transport.name``).
        topic: the topic records travel on.
        k: how many nearest contexts each incoming record is judged against.
        trusted: which stored records outrank an incoming one (gets the record's metadata);
            default: the ones this robot learnt itself.
        max_chars: the record bound.

    Attributes:
        counts: ingestion status -> count (plus ``published``, ``errors`` and ``dropped``:
            deliveries that arrived after :meth:`close`).
        quarantine: record id -> :class:`Ingested` for the records kept aside.
        rejected: the latest rejected deliveries.
        errors: the latest failures of queued work (recording, publishing, ingesting).
    """

    def __init__(
        self,
        memory: VectorMemory,
        transport: RecordTransport | None = None,
        *,
        name: str | None = None,
        topic: str = TOPIC,
        k: int = 5,
        trusted: Callable[[Mapping[str, Any]], bool] = _trusted_locally,
        max_chars: int = MAX_RECORD_CHARS,
    ) -> None:
        if name is None:
            if transport is None:
                raise MemoryStoreError("a fleet memory needs a name when it has no transport")
            name = transport.name
        if k < 1:
            raise MemoryStoreError(f"k is {k}: expected a positive number of contexts")
        self.memory = memory
        self.transport = transport
        self.name = name
        self.topic = topic
        self.k = k
        self.trusted = trusted
        self.max_chars = max_chars
        self.counts: Counter[str] = Counter()
        self.quarantine: dict[str, Ingested] = {}
        self.rejected: list[Ingested] = []
        self.errors: list[str] = []
        self._own: dict[str, FleetRecord] = {}
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._delivered: Counter[str] = Counter()  # sender -> deliveries taken in
        self._peer_published: dict[str, int] = {}  # sender -> records it says it published
        self._closed = False
        self._queued = 0  # jobs submitted and not finished
        # One thread: records land in the order they happened, never on a tick, never after close.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"bt_raider-fleet-{name}")
        if transport is not None:
            transport.subscribe_topic(topic, self._on_payload)
            transport.subscribe_topic(topic + DONE_SUFFIX, self._on_done)

    # -- the memory thread

    def _submit(self, what: str, job: Callable[[], Any]) -> None:
        """Queue ``job``; a failure is logged, kept in :attr:`errors` and counted."""

        def run() -> None:
            try:
                job()
            except Exception as exc:
                self._error(f"{what}: {exc}")
            finally:
                with self._lock:
                    self._queued -= 1

        with self._lock:
            if self._closed:
                raise MemoryStoreError(f"fleet memory {self.name!r} is closed: cannot {what}")
            self._pool.submit(run)
            self._queued += 1

    def _error(self, text: str) -> None:
        with self._lock:
            self.errors.append(text)
            del self.errors[:-100]
            self.counts["errors"] += 1
        log.warning("%s: %s", self.name, text)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued record, publication and ingestion is done.

        Returns:
            True when the queue drained, False when ``timeout`` seconds passed first.
        """
        with self._lock:
            if self._closed:
                return True  # close() drained the queue already
            marker = self._pool.submit(lambda: None)
        try:
            marker.result(timeout)
        except TimeoutError:
            return False
        return True

    def close(self, timeout: float | None = None) -> bool:
        """Finish the queued work, then stop: later deliveries are dropped (and counted).

        The vector memory itself is not closed (its owner closes it, after this). Returns
        False when the queue did not drain within ``timeout`` seconds.
        """
        drained = self.flush(timeout)
        with self._lock:
            self._closed = True
        # Waits for the job under way (never races the memory's close); cancels the rest.
        self._pool.shutdown(wait=True, cancel_futures=not drained)
        with self._lock:
            if self._queued:
                self._error(f"close: {self._queued} queued job(s) cancelled after {timeout} s")
        return drained

    # -- sending

    def record_success(
        self, information: str, goal: str, metadata: Mapping[str, Any] | None = None
    ) -> str:
        """Store a success of this robot and publish it to the team; returns its id.

        Recording the same success again stores nothing new but publishes it again (a late
        joiner gets it; the others see a duplicate).
        """
        rid = record_id(self.name, information, goal)
        meta = dict(metadata or {})
        meta["origin"] = self.name
        record = FleetRecord(rid, self.name, information.strip(), goal.strip(), meta)
        text = record.to_json(max_chars=self.max_chars)  # refuse a record nobody could read

        def store_and_publish() -> None:
            self.memory.record(record.information, record.goal, "success", meta, record_id=rid)
            with self._lock:
                self._own[rid] = record
            self._publish(text)

        self._submit(f"record {rid}", store_and_publish)
        return rid

    def republish(self) -> int:
        """Queue a new publication of every success recorded so far (for late joiners).

        Returns the number of records recorded when this is called; successes still queued
        are published again too, after their first publication.
        """

        def publish_all() -> None:
            with self._lock:
                texts = [r.to_json(max_chars=self.max_chars) for r in self._own.values()]
            for text in texts:
                self._publish(text)

        self.flush()  # count what is queued before this call, as a caller expects
        with self._lock:
            n = len(self._own)
        self._submit("republish", publish_all)
        return n

    def _publish(self, text: str) -> None:
        if self.transport is None:
            return
        self.transport.publish_topic(self.topic, text)
        with self._lock:
            self.counts["published"] += 1

    # -- receiving

    def _on_payload(self, sender: str, text: str) -> None:
        """Transport callback: queue the delivery (never embed on the transport's thread)."""
        with self._lock:
            if self._closed:
                self.counts["dropped"] += 1
                log.warning("%s: closed, dropped a record from %s", self.name, sender)
                return
            self._submit(f"ingest from {sender}", lambda: self._take(sender, text))

    def _take(self, sender: str, text: str) -> None:
        try:
            result = self.ingest(text, sender=sender)
        finally:
            with self._changed:
                self._delivered[sender] += 1
                self._changed.notify_all()
        if result.status in ("quarantined", "rejected"):
            log.warning(
                "%s: %s record %s from %s: %s",
                self.name,
                result.status,
                result.record_id,
                sender,
                result.reason,
            )

    def _on_done(self, sender: str, text: str) -> None:
        """A peer's end note: how many records it published in this session."""
        try:
            published = json.loads(text)["published"]
            if not isinstance(published, int) or published < 0:
                raise ValueError(f"published is {published!r}")
        except (ValueError, KeyError, TypeError) as exc:
            self._error(f"end note from {sender} unreadable ({exc}): {text[:60]!r}")
            return
        with self._changed:
            self._peer_published[sender] = max(published, self._peer_published.get(sender, 0))
            self._changed.notify_all()

    # -- ending a session

    def wait_ingested(self, peers: Iterable[str], timeout: float) -> bool:
        """Wait until each peer's end note arrived and its records are all taken in.

        A peer the transport reports gone (``transport.alive(name)`` False) before its end
        note arrived is not waited for. Returns False when ``timeout`` passed first.
        """
        deadline = time.monotonic() + timeout
        alive = getattr(self.transport, "alive", None)
        waiting = set(peers) - {self.name}
        with self._changed:
            while True:
                waiting = {
                    p
                    for p in waiting
                    if self._delivered[p] < self._peer_published.get(p, 1 << 62)
                    and (p in self._peer_published or alive is None or alive(p))
                }
                left = deadline - time.monotonic()
                if not waiting or left <= 0:
                    return not waiting
                self._changed.wait(min(left, 0.1))  # re-check liveness now and then

    def finish(self, peers: Iterable[str], timeout: float) -> bool:
        """End a session without losing a record in flight.

        Publishes what is queued, tells the team how many records this robot published
        (topic ``<topic>-done``), waits until what each of ``peers`` published has been taken
        in (:meth:`wait_ingested`), then drains the queue. Call :meth:`close` after.

        Returns:
            True when everything arrived within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        flushed = self.flush(timeout)
        with self._lock:
            published = self.counts["published"]
        if self.transport is not None:
            self.transport.publish_topic(
                self.topic + DONE_SUFFIX, json.dumps({"published": published})
            )
        synced = self.wait_ingested(peers, max(0.0, deadline - time.monotonic()))
        return self.flush(max(0.0, deadline - time.monotonic())) and flushed and synced

    def _done(self, result: Ingested) -> Ingested:
        with self._lock:
            self.counts[result.status] += 1
            if result.status == "quarantined" and result.record_id:
                self.quarantine[result.record_id] = result
            elif result.status == "rejected":
                self.rejected.append(result)
                del self.rejected[:-100]
        return result

    def ingest(self, payload: str | FleetRecord, *, sender: str | None = None) -> Ingested:
        """Take one delivered record into this robot's memory, through the CDR rules.

        Args:
            payload: the record, or its JSON text.
            sender: the robot that published it (from the transport); it must be the record's
                origin.

        Returns:
            What happened: ``accepted``, ``duplicate``, ``quarantined`` (kept aside, with the
            reason) or ``rejected`` (unreadable, spoofed, or a known id with other content).
        """
        try:
            record = (
                payload
                if isinstance(payload, FleetRecord)
                else FleetRecord.from_json(payload, max_chars=self.max_chars)
            )
        except CommunicationError as exc:
            return self._done(Ingested("rejected", None, sender, str(exc)))
        if sender is not None and record.origin != sender:
            return self._done(
                Ingested(
                    "rejected",
                    record.id,
                    sender,
                    f"record {record.id} claims origin {record.origin!r} but was sent by {sender!r}",
                )
            )
        with self._lock:
            existing = self._existing(record.id)
            if existing is not None:
                same = existing.information == record.information and existing.goal == record.goal
                if not same:
                    return self._done(
                        Ingested(
                            "rejected",
                            record.id,
                            record.origin,
                            f"id {record.id} already holds a different record "
                            f"({existing.information!r} -> {existing.goal!r})",
                        )
                    )
                return self._done(Ingested("duplicate", record.id, record.origin, "already held"))
            conflicts = self._conflicts(record)
            meta = dict(record.metadata)
            meta.update({"origin": record.origin, "via": "fleet"})
            if conflicts:
                reason = "; ".join(
                    f"conflicts with trusted record {c.id} ({c.information!r} -> {c.goal!r}) "
                    f"by rule {c.judgement.rule}"
                    for c in conflicts
                )
                meta.update({"quarantine": reason, "conflicts_with": [c.id for c in conflicts]})
                self.memory.record(
                    record.information, record.goal, QUARANTINED, meta, record_id=record.id
                )
                return self._done(
                    Ingested(
                        "quarantined",
                        record.id,
                        record.origin,
                        reason,
                        tuple(c.id for c in conflicts),
                    )
                )
            self.memory.record(
                record.information, record.goal, "success", meta, record_id=record.id
            )
            return self._done(Ingested("accepted", record.id, record.origin))

    def _existing(self, rid: str) -> Any:
        try:
            return self.memory.get(rid)
        except MemoryStoreError:
            return None

    def _conflicts(self, record: FleetRecord) -> list[Any]:
        """Trusted contexts the CDR rules judge in conflict with the record (no trimming)."""
        if len(self.memory) == 0:
            return []
        resolution = self.memory.resolve(record.information, k=self.k, trim=False)
        return [c for c in resolution.conflicts if self.trusted(c.metadata)]

    def summary(self) -> dict[str, int]:
        """Counts: published, accepted, duplicate, quarantined, rejected, errors."""
        with self._lock:
            return {k: self.counts.get(k, 0) for k in ("published", *STATUSES, "errors")}
