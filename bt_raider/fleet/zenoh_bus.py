"""REVECA's message bus over Zenoh: robots in separate processes and on separate machines.

:class:`ZenohBus` implements :class:`bt_raider.cooperation.messaging.MessageBus` on one Zenoh session:

* a **broadcast** (start-up exchange, sub-goal achieved, status) is a *publication* on
  ``<prefix>/<team>/<sender>/out/<kind>``; every robot subscribes to ``<prefix>/<team>/*/out/**``;
* a message addressed to one robot is a publication on ``<prefix>/<team>/<to>/direct/<sender>``;
* a **validation request** is a *query* to the collaborator's queryable
  ``<prefix>/<team>/<to>/inbox``, answered with one reply, and bounded by a timeout;
* presence is a liveliness token ``<prefix>/<team>/<robot>/alive`` (:meth:`ZenohBus.peers`,
  :meth:`ZenohBus.wait_for_peers`);
* other payloads -- the fleet memory's records -- travel on *topics*
  ``<prefix>/<team>/<sender>/topic/<topic>`` (:meth:`ZenohBus.publish_topic`).

The session runs in **peer** mode by default, listens on loopback only (``tcp/127.0.0.1:0``)
unless told otherwise, and has multicast scouting **off** unless ``multicast=True``: peers find
each other through the ``connect`` endpoints they are given (and gossip over those links).

**The network never hangs a robot.** :meth:`ZenohBus.request` waits at most ``timeout``
seconds (plus a small grace for the reply to be delivered) and returns ``None`` -- read as
*unknown* by the validator -- when the collaborator is unreachable, does not answer in time, or
answers with a frame that is malformed, oversized, or does not answer this request. Every such
fault is logged (logger ``bt_raider.fleet.zenoh_bus``) and counted in :attr:`ZenohBus.faults`;
:meth:`ZenohBus.fault_summary` lists them. Malformed or oversized *publications* are dropped and
counted the same way. Only our own mistakes (a bad argument, a closed bus, a frame we would
send that is too long) raise :class:`~bt_raider.errors.CommunicationError`.

:class:`~bt_raider.fleet.faults.FaultTolerantBus` puts the same guarantee in front of any other
bus (the in-process one): a :class:`CommunicationError` from ``request`` becomes ``None`` and is
counted.

A bus given a ``security`` (:mod:`bt_raider.fleet.signing`) signs every frame it sends and drops,
and counts, every frame not signed by the robot it claims to come from. ``zenoh`` (the
``eclipse-zenoh`` package) is optional: it is imported when a bus is created.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from bt_raider.cooperation.messaging import (
    MAX_FRAME_CHARS,
    Handler,
    Message,
    MessageStats,
    Server,
)
from bt_raider.errors import CommunicationError, require
from bt_raider.fleet.signing import (
    EVERYONE,
    MAX_HEADER_CHARS,
    FleetSecurity,
    Refused,
    warn_unsigned,
)
from bt_raider.fleet.zenoh_config import (
    DEFAULT_PREFIX,
    DEFAULT_TEAM,
    LOOPBACK_LISTEN,
    Fault,
    check_prefix,
    check_segment,
    make_config,
)

log = logging.getLogger("bt_raider.fleet.zenoh_bus")

#: Longest topic payload (the fleet memory's records), in characters.
MAX_TOPIC_CHARS = 4000
#: Seconds a request waits, beyond its timeout, for Zenoh to hand over the final reply.
GRACE = 0.5


class ZenohBus:
    """One robot's connection to its team over Zenoh (implements :class:`MessageBus`).

    Args:
        name: this robot's name (a key segment).
        team: the team's name (a key segment); robots only hear their own team.
        prefix: the first segment(s) of every key.
        mode: Zenoh session mode (``peer`` by default).
        listen: endpoints to listen on (None: loopback, any free port).
        connect: endpoints of the other robots (or of a router).
        multicast: enable multicast scouting.
        options: further Zenoh settings (``path -> value``).
        session: an open ``zenoh.Session`` to use instead (not closed by :meth:`close`).
        max_chars: the frame bound (:data:`~bt_raider.cooperation.messaging.MAX_FRAME_CHARS`).
        max_topic_chars: the topic payload bound.
        grace: seconds a request waits beyond its timeout for Zenoh's final word.
        keep_log: keep the frames this robot sends and receives in :attr:`log`.
        security: this robot's key and the team's keyring
            (:class:`~bt_raider.fleet.signing.FleetSecurity`): every frame sent is signed, every
            frame received must be signed by the robot it claims to come from (others are
            dropped and counted). None: an unsigned bus (any process on it can speak for any
            robot; a warning is logged once).

    Attributes:
        faults: fault kind -> count (see :data:`FAULTS`).
        fault_log: the latest faults, oldest first.
        rtts: round-trip times (s) of answered requests.
        log: frames sent and received (when ``keep_log``).

    Raises:
        CommunicationError: a bad name, prefix or endpoint, or the session could not open.
    """

    def __init__(
        self,
        name: str,
        *,
        team: str = DEFAULT_TEAM,
        prefix: str = DEFAULT_PREFIX,
        mode: str = "peer",
        listen: Sequence[str] | None = None,
        connect: Sequence[str] = (),
        multicast: bool = False,
        options: Mapping[str, Any] | None = None,
        session: Any = None,
        max_chars: int = MAX_FRAME_CHARS,
        max_topic_chars: int = MAX_TOPIC_CHARS,
        grace: float = GRACE,
        keep_log: bool = False,
        security: FleetSecurity | None = None,
    ) -> None:
        zenoh = require("zenoh", "fleet", needed_by="ZenohBus")
        self.name = check_segment("robot name", name)
        if security is not None and security.name != name:
            raise CommunicationError(
                f"robot {name!r} cannot use {security.name!r}'s key: load the key of {name!r}"
            )
        if security is None:
            warn_unsigned(log, name)
        self.security = security
        self.team = check_segment("team name", team)
        self.prefix = check_prefix(prefix)
        if max_chars <= 0 or max_topic_chars <= 0:
            raise CommunicationError(
                f"max_chars and max_topic_chars must be > 0, got {max_chars!r}, {max_topic_chars!r}"
            )
        self.max_chars = max_chars
        self.max_topic_chars = max_topic_chars
        self.grace = float(grace)
        self.base = f"{self.prefix}/{self.team}"
        self._zenoh = zenoh
        self._lock = threading.RLock()
        self._alive_changed = threading.Condition(self._lock)
        self._inbox: list[tuple[float, int, Message]] = []
        self._arrivals = 0
        #: Logical time stamped on publications (a Zenoh attachment, outside the frame); see
        #: :meth:`poll`. None: no stamp.
        self.logical_time: int | None = None
        self._handlers: list[Handler] = []
        self._server: Server | None = None
        self._closed = False
        self._stats = MessageStats()
        self._received = MessageStats()
        self._broadcasts_sent = 0
        self._broadcasts_from: Counter[str] = Counter()
        self._seen_ids: deque[str] = deque(maxlen=4096)
        self._seen_set: set[str] = set()
        self._alive: set[str] = set()
        self.faults: Counter[str] = Counter()
        self.fault_log: deque[Fault] = deque(maxlen=1000)
        self.rtts: deque[float] = deque(maxlen=10_000)
        self.keep_log = keep_log
        self.log: list[Message] = []
        self._entities: list[Any] = []
        self._topic_subs: list[Any] = []
        self._publishers: dict[str, Any] = {}
        self._queries: queue.Queue[Any] = queue.Queue()
        self._owns_session = session is None
        if session is None:
            config = make_config(
                mode=mode, listen=listen, connect=connect, multicast=multicast, options=options
            )
            try:
                session = zenoh.open(config)
            except Exception as exc:
                raise CommunicationError(
                    f"robot {name!r} could not open a zenoh session (listen {listen or list(LOOPBACK_LISTEN)}, "
                    f"connect {list(connect)}): {exc}"
                ) from exc
        self.session = session
        try:
            self._entities.append(
                session.declare_subscriber(f"{self.base}/*/out/**", self._on_publication)
            )
            self._entities.append(
                session.declare_subscriber(
                    f"{self.base}/{self.name}/direct/*", self._on_publication
                )
            )
            self._entities.append(
                session.declare_queryable(
                    f"{self.base}/{self.name}/inbox", direct_callback(zenoh, self._queries.put)
                )
            )
            self._server_thread = threading.Thread(
                target=self._serve_loop, name=f"zenoh_bus:{self.name}:serve", daemon=True
            )
            self._server_thread.start()
            self._entities.append(
                session.liveliness().declare_subscriber(
                    f"{self.base}/*/alive", self._on_liveliness, history=True
                )
            )
            # Declared last: a peer that sees this token can count on the subscribers above.
            self._entities.append(
                session.liveliness().declare_token(f"{self.base}/{self.name}/alive")
            )
        except Exception:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"ZenohBus({self.name!r}, team={self.team!r})"

    def __enter__(self) -> ZenohBus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- figures

    @property
    def stats(self) -> MessageStats:
        """Frames this robot has sent (publications, requests and answers) and their characters."""
        with self._lock:
            return self._stats

    @property
    def received(self) -> MessageStats:
        """Valid frames this robot has received (publications and answers)."""
        with self._lock:
            return self._received

    @property
    def broadcasts_sent(self) -> int:
        """Broadcast publications sent so far."""
        with self._lock:
            return self._broadcasts_sent

    def broadcasts_from(self) -> dict[str, int]:
        """Sender -> broadcasts received from it."""
        with self._lock:
            return dict(self._broadcasts_from)

    def wait_broadcasts(self, expected: Mapping[str, int], timeout: float) -> bool:
        """Wait until at least ``expected[sender]`` broadcasts of each sender have arrived.

        A lock-step simulation calls this before a robot's turn so that what a collaborator
        published in its own turn is heard, as on an in-process bus. Returns False on timeout.
        """
        deadline = time.monotonic() + timeout
        with self._alive_changed:
            while True:
                missing = {
                    s: n
                    for s, n in expected.items()
                    if s != self.name and self._broadcasts_from.get(s, 0) < n
                }
                if not missing:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._alive_changed.wait(left)

    @property
    def fault_count(self) -> int:
        with self._lock:
            return sum(self.faults.values())

    def fault_summary(self) -> dict[str, int]:
        """Fault kind -> count, only the kinds that happened."""
        with self._lock:
            return {k: v for k, v in sorted(self.faults.items()) if v}

    def _fault(self, kind: str, peer: str | None, detail: str) -> None:
        with self._lock:
            self.faults[kind] += 1
            self.fault_log.append(Fault(time.time(), kind, peer, detail))
        log.warning("%s: %s fault with %s: %s", self.name, kind, peer or "?", detail)

    def _sent(self, msg: Message, frame: str) -> None:
        with self._lock:
            self._stats = self._stats + MessageStats(1, len(frame))
            if self.keep_log:
                self.log.append(msg)

    # -- signatures

    def _seal(self, body: str, channel: str, recipient: str = EVERYONE) -> bytes:
        """The bytes sent for ``body``: signed in an envelope when the bus has a key."""
        if self.security is not None:
            body = self.security.seal(body, scope=self.base, channel=channel, recipient=recipient)
        return body.encode("utf-8")

    def _receive_text(self, payload: Any, limit: int, peer: str | None, *how: str) -> str | None:
        """A received payload's frame, its envelope checked; None when dropped (fault counted).

        ``how``: what it is, its channel and, unless :data:`EVERYONE`, its recipient.
        """
        got = self._receive(payload, limit, peer, *how)
        return None if got is None else got[1]

    def _receive(
        self,
        payload: Any,
        limit: int,
        peer: str | None,
        what: str,
        channel: str,
        recipient: str = EVERYONE,
    ) -> tuple[str | None, str] | None:
        """``(signer, frame)`` of a received payload (signer None on an unsigned bus)."""
        signed = self.security is not None
        text = self._decode(payload, limit + (MAX_HEADER_CHARS if signed else 0), peer, what)
        if text is None or self.security is None:
            return None if text is None else (None, text)
        try:
            signer, body = self.security.open(
                text, scope=self.base, channel=channel, recipient=recipient, sender=peer
            )
        except Refused as exc:
            self._fault(exc.kind, peer, f"{what} refused: {exc.detail}")
            return None
        if len(body) > limit:
            self._fault(
                "oversized", peer, f"{what} of {len(body)} characters: the bound is {limit}"
            )
            return None
        return signer, body

    # -- presence

    def _on_liveliness(self, sample: Any) -> None:
        parts = str(sample.key_expr).split("/")
        if len(parts) < 2:
            return
        robot = parts[-2]
        with self._alive_changed:
            if sample.kind == self._zenoh.SampleKind.DELETE:
                self._alive.discard(robot)
            else:
                self._alive.add(robot)
            self._alive_changed.notify_all()

    def peers(self) -> set[str]:
        """Robots of the team whose session is up (this one included)."""
        with self._lock:
            return set(self._alive)

    def alive(self, name: str) -> bool:
        with self._lock:
            return name in self._alive

    def wait_for_peers(self, names: Iterable[str], timeout: float) -> bool:
        """Wait until every robot in ``names`` is present; False if one is missing at the end."""
        wanted = set(names) - {self.name}
        deadline = time.monotonic() + timeout
        with self._alive_changed:
            while not wanted <= self._alive:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._alive_changed.wait(left)
            return True

    # -- publications

    def _check_open(self) -> None:
        if self._closed:
            raise CommunicationError(f"bus endpoint {self.name!r} is closed")

    def _publisher(self, key: str) -> Any:
        with self._lock:
            pub = self._publishers.get(key)
            if pub is None:
                pub = self.session.declare_publisher(key)
                self._publishers[key] = pub
            return pub

    def publish(self, msg: Message) -> None:
        """Publish ``msg``: to every collaborator, or to ``msg.to`` only.

        Raises:
            CommunicationError: the bus is closed, ``msg`` is not signed by this robot, or its
                frame is too long.
        """
        self._check_open()
        if not isinstance(msg, Message):
            raise CommunicationError(f"publish needs a Message, got {type(msg).__name__}")
        if msg.sender != self.name:
            raise CommunicationError(
                f"{self.name!r} cannot send a message signed by {msg.sender!r}"
            )
        frame = msg.to_json(max_chars=self.max_chars)
        if msg.to is None:
            key = f"{self.base}/{self.name}/out/{msg.kind.value}"
        else:
            key = f"{self.base}/{check_segment('addressee', msg.to)}/direct/{self.name}"
        stamp = self.logical_time
        wire = self._seal(frame, "out") if msg.to is None else self._seal(frame, "direct", msg.to)
        self._publisher(key).put(
            wire, attachment=None if stamp is None else str(int(stamp)).encode()
        )
        with self._lock:
            if msg.to is None:
                self._broadcasts_sent += 1
        self._sent(msg, frame)

    def _decode(self, payload: Any, limit: int, peer: str | None, what: str) -> str | None:
        """The payload as text within ``limit`` characters, or None (fault counted)."""
        raw = payload.to_bytes() if payload is not None else b""
        if len(raw) > 4 * limit:  # over the bound whatever the characters: do not decode it
            self._fault(
                "oversized", peer, f"{what} of {len(raw)} bytes: the bound is {limit} characters"
            )
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._fault("malformed", peer, f"{what} is not UTF-8: {exc}")
            return None
        if len(text) > limit:
            self._fault(
                "oversized", peer, f"{what} of {len(text)} characters: the bound is {limit}"
            )
            return None
        return text

    def _on_publication(self, sample: Any) -> None:
        parts = str(sample.key_expr).split("/")
        base_len = len(self.base.split("/"))
        if len(parts) < base_len + 3:
            return
        owner, channel = parts[base_len], parts[base_len + 1]
        sender = owner if channel == "out" else parts[base_len + 2]
        if channel == "out" and owner == self.name:
            return  # my own broadcast
        if channel == "out":
            text = self._receive_text(sample.payload, self.max_chars, sender, "publication", "out")
        else:
            text = self._receive_text(
                sample.payload, self.max_chars, sender, "publication", "direct", self.name
            )
        if text is None:
            return
        try:
            msg = Message.from_json(text, max_chars=self.max_chars)
        except CommunicationError as exc:
            self._fault("malformed", sender, f"publication {text[:60]!r}: {exc}")
            return
        if msg.sender != sender:
            self._fault(
                "mismatched", sender, f"publication on {sender!r}'s key signed by {msg.sender!r}"
            )
            return
        with self._alive_changed:
            if msg.id in self._seen_set:
                duplicate = True
            else:
                duplicate = False
                if len(self._seen_ids) == self._seen_ids.maxlen:
                    self._seen_set.discard(self._seen_ids[0])
                self._seen_ids.append(msg.id)
                self._seen_set.add(msg.id)
                self._arrivals += 1
                self._inbox.append((_stamp(sample), self._arrivals, msg))
                self._received = self._received + MessageStats(1, len(text))
                if msg.to is None:
                    self._broadcasts_from[sender] += 1
                if self.keep_log:
                    self.log.append(msg)
                handlers = list(self._handlers)
                self._alive_changed.notify_all()
        if duplicate:
            self._fault("duplicate", sender, f"frame {msg.id} delivered again")
            return
        for handler in handlers:
            try:
                handler(msg)
            except Exception as exc:  # a handler of ours; the bus goes on
                self._fault("handler_error", sender, f"subscriber {handler!r} raised {exc!r}")

    def subscribe(self, handler: Handler) -> None:
        self._check_open()
        with self._lock:
            self._handlers.append(handler)

    def poll(self) -> list[Message]:
        """Messages received since the last poll, oldest first.

        Zenoh keeps each sender's publications in order, not the order between senders. When
        the senders stamp a shared logical time (:attr:`logical_time`, e.g. the turn of a
        lock-step simulation), messages are returned by that time, then by arrival -- the order
        they were sent in, as on an in-process bus.
        """
        with self._lock:
            out = sorted(self._inbox, key=lambda e: (e[0], e[1]))
            self._inbox.clear()
        return [m for _, _, m in out]

    # -- topics (payloads other than REVECA messages: the fleet memory's records)

    def publish_topic(self, topic: str, text: str) -> None:
        """Publish ``text`` on ``topic`` (every robot of the team subscribed to it hears it).

        Raises:
            CommunicationError: the bus is closed, a bad topic, or ``text`` is too long.
        """
        self._check_open()
        check_segment("topic", topic)
        if not isinstance(text, str):
            raise CommunicationError(f"topic payload must be text, got {type(text).__name__}")
        if len(text) > self.max_topic_chars:
            raise CommunicationError(
                f"{topic} payload is {len(text)} characters: a topic payload holds at most "
                f"{self.max_topic_chars}"
            )
        self._publisher(f"{self.base}/{self.name}/topic/{topic}").put(
            self._seal(text, f"topic/{topic}")
        )
        with self._lock:
            self._stats = self._stats + MessageStats(1, len(text))

    def subscribe_topic(self, topic: str, handler: Callable[[str, str], None]) -> None:
        """Call ``handler(sender, text)`` for every payload a collaborator publishes on ``topic``."""
        self._check_open()
        check_segment("topic", topic)
        base_len = len(self.base.split("/"))

        def on_sample(sample: Any) -> None:
            sender = str(sample.key_expr).split("/")[base_len]
            if sender == self.name:
                return
            text = self._receive_text(
                sample.payload, self.max_topic_chars, sender, f"{topic} payload", f"topic/{topic}"
            )
            if text is None:
                return
            try:
                handler(sender, text)
            except Exception as exc:
                self._fault("handler_error", sender, f"{topic} handler raised {exc!r}")

        sub = self.session.declare_subscriber(f"{self.base}/*/topic/{topic}", on_sample)
        with self._lock:
            self._topic_subs.append(sub)

    # -- requests

    def request(self, to: str, msg: Message, timeout: float) -> Message | None:
        """Query ``to``'s queryable with ``msg`` and wait up to ``timeout`` s for its answer.

        Returns:
            The answer, or ``None`` -- *unknown* -- when ``to`` is unreachable, does not
            answer in time, or answers with a frame that is malformed, oversized or not an
            answer to ``msg`` (each counted in :attr:`faults`).

        Raises:
            CommunicationError: our mistake -- the bus is closed, a bad timeout, ``msg`` is not
                ours, not addressed to ``to``, or too long.
        """
        self._check_open()
        if isinstance(timeout, bool) or not (
            isinstance(timeout, int | float) and math.isfinite(timeout) and timeout >= 0
        ):
            raise CommunicationError(
                f"request timeout must be a number of seconds >= 0, got {timeout!r}"
            )
        check_segment("addressee", to)
        if msg.sender != self.name:
            raise CommunicationError(
                f"{self.name!r} cannot send a message signed by {msg.sender!r}"
            )
        if msg.to != to:
            raise CommunicationError(
                f"request from {self.name!r} is addressed to {msg.to!r} but sent to {to!r}"
            )
        frame = msg.to_json(max_chars=self.max_chars)
        self._sent(msg, frame)
        replies: queue.Queue[Any] = queue.Queue()  # None: the query is finished
        handler = direct_callback(self._zenoh, replies.put, lambda: replies.put(None))
        started = time.monotonic()
        deadline = started + float(timeout) + self.grace
        # Zenoh's query timeout must be > 0; a zero timeout still gets a minimal wait. Every
        # queryable on the key is asked and each reply read as it comes: an impostor's reply
        # can neither hide the real robot's nor be merged with it, nor hold it back.
        self.session.get(
            f"{self.base}/{to}/inbox",
            handler,
            payload=self._seal(frame, "inbox", to),
            timeout=max(float(timeout), 1e-3),
            target=self._zenoh.QueryTarget.ALL,
            consolidation=self._zenoh.ConsolidationMode.NONE,
        )
        late = f"no answer to {msg.kind.value} {msg.id} within {timeout} s"
        errors: list[Any] = []
        answered, found = False, None
        while found is None:
            try:
                reply = replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._fault("timeout", to, late)
                return None
            if reply is None:
                break
            if reply.ok is None:
                errors.append(reply.err)
                continue
            answered = True  # the first answer signed by ``to`` that answers ``msg`` wins
            found = self._read_answer(reply.ok.payload, to, msg)
        if found is None:
            if answered:
                return None  # each refused answer is counted already
            reason = _err_text(errors[0]) if errors else ""
            if reason.strip().lower() == "timeout":
                self._fault("timeout", to, late)
            elif errors:
                self._fault("error_reply", to, f"answered {msg.id} with an error: {reason[:120]}")
            else:
                self._fault("unreachable", to, f"nobody serves {self.base}/{to}/inbox")
            return None
        elapsed = time.monotonic() - started
        answer, text = found
        with self._lock:
            self.rtts.append(elapsed)
            self._received = self._received + MessageStats(1, len(text))
            if self.keep_log:
                self.log.append(answer)
        return answer

    def _read_answer(self, payload: Any, to: str, msg: Message) -> tuple[Message, str] | None:
        text = self._receive_text(payload, self.max_chars, to, "answer", "answer", self.name)
        if text is None:
            return None
        try:
            answer = Message.from_json(text, max_chars=self.max_chars)
        except CommunicationError as exc:
            self._fault("malformed", to, f"answer {text[:60]!r}: {exc}")
            return None
        if answer.reply_to != msg.id or answer.to != self.name or answer.sender != to:
            self._fault(
                "mismatched",
                to,
                f"answer from {answer.sender!r} to {answer.to!r} replying to {answer.reply_to!r}, "
                f"expected {to!r} -> {self.name!r} replying to {msg.id!r}",
            )
            return None
        return answer, text

    def serve(self, handler: Server) -> None:
        """Answer requests addressed to this robot with ``handler`` (on the bus's own thread)."""
        self._check_open()
        with self._lock:
            self._server = handler

    def _serve_loop(self) -> None:
        while True:
            query = self._queries.get()
            if query is None:
                return
            try:
                self._answer(query)
            except Exception as exc:  # never let one query kill the server thread
                self._fault("handler_error", None, f"answering a query raised {exc!r}")
            finally:
                try:
                    query.drop()  # finalise now: the requester need not wait for its timeout
                except Exception:
                    pass

    def encode_answer(self, answer: Message) -> bytes:
        """The bytes sent for an answer (a hook for fault-injection harnesses)."""
        return self._seal(answer.to_json(max_chars=self.max_chars), "answer", answer.to or "")

    def _answer(self, query: Any) -> None:
        with self._lock:
            server = self._server
            closed = self._closed
        if server is None or closed:
            return  # nobody answers here: the requester reads "unknown"
        opened = self._receive(query.payload, self.max_chars, None, "request", "inbox", self.name)
        if opened is None:
            query.reply_err("request refused: unreadable, too long or not signed by its sender")
            return
        signer, text = opened
        try:
            request = Message.from_json(text, max_chars=self.max_chars)
        except CommunicationError as exc:
            self._fault("bad_request", None, f"request {text[:60]!r}: {exc}")
            query.reply_err(f"malformed request: {exc}")
            return
        if signer is not None and request.sender != signer:
            self._fault(
                "wrong_robot", signer, f"request signed by {signer!r} as {request.sender!r}"
            )
            query.reply_err("request refused: not signed by its sender")
            return
        if request.to != self.name:
            self._fault(
                "bad_request", request.sender, f"request for {request.to!r} reached {self.name!r}"
            )
            query.reply_err(f"request for {request.to!r} reached {self.name!r}")
            return
        with self._lock:
            self._received = self._received + MessageStats(1, len(text))
            if self.keep_log:
                self.log.append(request)
        try:
            answer = server(request)
        except Exception as exc:
            self._fault("handler_error", request.sender, f"server raised {exc!r} on {request.id}")
            query.reply_err(f"{self.name} could not answer: {exc}")
            return
        if answer is None:
            return
        if (
            not isinstance(answer, Message)
            or answer.sender != self.name
            or answer.reply_to != request.id
        ):
            self._fault(
                "handler_error", request.sender, f"server returned {answer!r} for {request.id}"
            )
            query.reply_err(f"{self.name} could not answer {request.id}")
            return
        payload = self.encode_answer(answer)
        sent = payload.decode("utf-8", errors="replace")  # its frame: an envelope's header aside
        # Counted first: the requester may act on the answer before this thread runs again.
        self._sent(answer, sent.partition("\n")[2] if self.security is not None else sent)
        query.reply(query.key_expr, payload)

    # -- life cycle

    def close(self) -> None:
        """Leave the team: undeclare everything, stop the server thread, close the session."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._server = None
            entities = (
                list(reversed(self._entities)) + self._topic_subs + list(self._publishers.values())
            )
            self._entities, self._topic_subs, self._publishers = [], [], {}
        for e in entities:
            try:
                e.undeclare()
            except Exception:
                pass
        self._queries.put(None)
        thread = getattr(self, "_server_thread", None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
        if self._owns_session and getattr(self, "session", None) is not None:
            try:
                self.session.close()
            except Exception:
                pass


def direct_callback(
    zenoh: Any, callback: Callable[[Any], Any], drop: Callable[[], Any] | None = None
) -> Any:
    """A callback run on Zenoh's own thread: only for callbacks that never block (an append,
    a queue put, an event set). Python-thread dispatch costs ~3 ms a round trip."""
    try:
        return zenoh.handlers.Callback(callback, drop, indirect=False)
    except TypeError:  # a zenoh without the (unstable) option
        return zenoh.handlers.Callback(callback, drop)


def _stamp(sample: Any) -> float:
    """The logical time a publication was stamped with (``inf``: none, or unreadable)."""
    try:
        att = sample.attachment
        return float(int(att.to_bytes().decode("ascii"))) if att is not None else math.inf
    except (ValueError, UnicodeDecodeError):
        return math.inf


def _err_text(err: Any) -> str:
    try:
        return err.payload.to_string()
    except Exception:
        return repr(err)
