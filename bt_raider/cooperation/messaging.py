"""Messages between collaborators and the bus that carries them (REVECA's communication module).

REVECA talks in four cases (Seo et al.): the **start-up exchange** (where I am, what I see), a
**validation request** ("have you already taken the apple?"), its **answer**, and the
**sub-goal achieved** announcement. A fifth kind, ``status``, is the perceived-information
broadcast of the "full communication" ablation. Every message is a JSON-serialisable
:class:`Message` with a human-readable ``text`` *and* a structured ``data`` payload, so the
receiver never parses free text. A frame is at most :data:`MAX_FRAME_CHARS` characters (C-WAH's
500 characters a frame); a longer or malformed one raises
:class:`~bt_raider.errors.CommunicationError`.

:class:`MessageBus` is the small interface the agent uses; :class:`InProcessHub` implements it for
simulations with every robot in one process. It maps onto a pub/sub + query transport such as
Zenoh: :meth:`~MessageBus.publish` is a publication, :meth:`~MessageBus.request` a query with a
timeout (no answer -> ``None``, read as *unknown*), :meth:`~MessageBus.serve` a queryable.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from bt_raider.errors import CommunicationError

#: Longest frame (the JSON text of one message), in characters.
MAX_FRAME_CHARS = 500
#: Answers a collaborator may give to a validation request.
ANSWERS = ("yes", "no", "unknown")


class MessageKind(str, Enum):
    """Why a message is sent (REVECA's four cases, plus the full-communication broadcast)."""

    HELLO = "hello"
    VALIDATION_REQUEST = "validation_request"
    VALIDATION_ANSWER = "validation_answer"
    SUBGOAL_ACHIEVED = "subgoal_achieved"
    STATUS = "status"


_KINDS = ", ".join(k.value for k in MessageKind)
_FIELDS = ("kind", "sender", "step", "text", "to", "room", "data", "id", "reply_to")


def _new_id() -> str:
    return uuid.uuid4().hex[:10]


def decode_object(text: str, what: str, max_chars: int, preview: int = 80) -> dict[str, Any]:
    """One JSON object from a bounded text frame (``what`` names it in the errors).

    Raises:
        CommunicationError: the text is longer than ``max_chars``, not JSON, or not an object.
    """
    unit = what.split()[-1]
    if len(text) > max_chars:
        raise CommunicationError(
            f"{what} is {len(text)} characters: a {unit} holds at most {max_chars}"
        )
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommunicationError(f"{what} is not JSON ({exc}): {text[:preview]!r}") from exc
    if not isinstance(raw, dict):
        raise CommunicationError(f"{what} must be a JSON object, got {text[:preview]!r}")
    return raw


@dataclass(frozen=True, eq=True)
class Message:
    """One frame from ``sender`` to ``to`` (``None``: every collaborator).

    Attributes:
        kind: why it is sent.
        sender: the sending agent's name.
        step: the simulation step (or the robot's clock) when it was sent.
        text: the natural-language version, for a person reading along.
        to: the addressee; ``None`` for a broadcast.
        room: the room the sender is in (REVECA places a collaborator at the room's centre).
        data: the structured payload (JSON values only). ``validation_request`` and
            ``subgoal_achieved`` need ``data["subgoal"]`` (a dict with ``action`` and
            ``target``); ``validation_answer`` also needs ``data["answer"]`` in
            :data:`ANSWERS` and ``reply_to``.
        id: unique frame id (answers name it in ``reply_to``).
        reply_to: the id of the request this frame answers.

    Raises:
        CommunicationError: a field has the wrong type or a kind lacks what it needs.
    """

    kind: MessageKind
    sender: str
    step: int
    text: str = ""
    to: str | None = None
    room: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)
    id: str = field(default_factory=_new_id)
    reply_to: str | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", MessageKind(self.kind))
        except ValueError:
            raise CommunicationError(
                f"message kind {self.kind!r} is unknown: expected one of {_KINDS}"
            ) from None
        for name in ("sender", "id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise CommunicationError(
                    f"{self.kind.value} message field {name!r} must be a non-empty string, "
                    f"got {value!r}"
                )
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < 0:
            raise CommunicationError(
                f"{self.kind.value} message from {self.sender!r}: step must be an integer >= 0, "
                f"got {self.step!r}"
            )
        if not isinstance(self.text, str):
            raise CommunicationError(
                f"{self.kind.value} message from {self.sender!r}: text must be a string, "
                f"got {type(self.text).__name__}"
            )
        for name in ("to", "room", "reply_to"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise CommunicationError(
                    f"{self.kind.value} message from {self.sender!r}: {name!r} must be a "
                    f"non-empty string or null, got {value!r}"
                )
        if not isinstance(self.data, Mapping):
            raise CommunicationError(
                f"{self.kind.value} message from {self.sender!r}: data must be an object, "
                f"got {type(self.data).__name__}"
            )
        object.__setattr__(self, "data", dict(self.data))
        self._check_kind()

    def _check_kind(self) -> None:
        where = f"{self.kind.value} message from {self.sender!r}"
        needs_subgoal = self.kind in (
            MessageKind.VALIDATION_REQUEST,
            MessageKind.VALIDATION_ANSWER,
            MessageKind.SUBGOAL_ACHIEVED,
        )
        if needs_subgoal:
            sub = self.data.get("subgoal")
            if not isinstance(sub, Mapping) or not all(
                isinstance(sub.get(k), str) and sub.get(k) for k in ("action", "target")
            ):
                raise CommunicationError(
                    f"{where}: data.subgoal must be an object with string 'action' and 'target', "
                    f"got {sub!r}"
                )
        if self.kind is MessageKind.VALIDATION_REQUEST and self.to is None:
            raise CommunicationError(f"{where}: a validation request needs an addressee ('to')")
        if self.kind is MessageKind.VALIDATION_ANSWER:
            if self.data.get("answer") not in ANSWERS:
                raise CommunicationError(
                    f"{where}: data.answer {self.data.get('answer')!r} is not one of "
                    f"{', '.join(ANSWERS)}"
                )
            if self.reply_to is None:
                raise CommunicationError(f"{where}: an answer needs 'reply_to' (the request id)")
        objects = self.data.get("objects")
        if objects is not None:
            if not isinstance(objects, list) or not all(
                isinstance(o, Mapping) and all(isinstance(o.get(k), str) for k in ("id", "name"))
                for o in objects
            ):
                raise CommunicationError(
                    f"{where}: data.objects must be a list of objects with string 'id' and 'name'"
                )

    @property
    def broadcast(self) -> bool:
        return self.to is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "sender": self.sender,
            "step": self.step,
            "text": self.text,
            "to": self.to,
            "room": self.room,
            "data": dict(self.data),
            "id": self.id,
            "reply_to": self.reply_to,
        }

    def to_json(self, *, max_chars: int = MAX_FRAME_CHARS) -> str:
        """The frame: compact JSON of at most ``max_chars`` characters.

        Raises:
            CommunicationError: ``data`` holds a non-JSON value, or the frame is too long.
        """
        try:
            frame = json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise CommunicationError(
                f"{self.kind.value} message from {self.sender!r} is not JSON-serialisable: {exc}"
            ) from exc
        if len(frame) > max_chars:
            raise CommunicationError(
                f"{self.kind.value} message from {self.sender!r} is {len(frame)} characters: "
                f"a frame holds at most {max_chars}"
            )
        return frame

    @classmethod
    def from_json(cls, frame: str | bytes, *, max_chars: int = MAX_FRAME_CHARS) -> Message:
        """Read a frame written by :meth:`to_json`.

        Raises:
            CommunicationError: the frame is too long, not JSON, not an object, has unknown or
                missing fields, or fails the field checks of :class:`Message`.
        """
        if isinstance(frame, bytes):
            try:
                frame = frame.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CommunicationError(f"message frame is not UTF-8: {exc}") from exc
        if not isinstance(frame, str):
            raise CommunicationError(f"message frame must be text, got {type(frame).__name__}")
        raw = decode_object(frame, "message frame", max_chars)
        unknown = sorted(set(raw) - set(_FIELDS))
        if unknown:
            raise CommunicationError(
                f"message frame has unknown field(s) {', '.join(unknown)}: expected "
                f"{', '.join(_FIELDS)}"
            )
        missing = [k for k in ("kind", "sender", "step") if k not in raw]
        if missing:
            raise CommunicationError(f"message frame lacks field(s) {', '.join(missing)}")
        try:
            return cls(**raw)
        except TypeError as exc:  # a None where a default was expected, etc.
            raise CommunicationError(f"message frame is malformed: {exc}") from exc

    def reply(self, sender: str, step: int, **fields: Any) -> Message:
        """A message answering this one (``to`` the sender, ``reply_to`` this id)."""
        return Message(sender=sender, step=step, to=self.sender, reply_to=self.id, **fields)


# --------------------------------------------------------------------------- the bus

Handler = Callable[[Message], None]
#: Answers a request addressed to this agent; ``None`` means "no answer".
Server = Callable[[Message], "Message | None"]


@dataclass(frozen=True)
class MessageStats:
    """What was sent: frames and their characters."""

    messages: int = 0
    characters: int = 0

    def __add__(self, other: MessageStats) -> MessageStats:
        return MessageStats(self.messages + other.messages, self.characters + other.characters)


@runtime_checkable
class MessageBus(Protocol):
    """One agent's connection to its collaborators.

    ``publish`` and ``request`` never block a behaviour tree tick for long: ``publish`` returns
    at once, ``request`` waits at most ``timeout`` seconds and is meant to run on a worker
    (:mod:`bt_raider.robot.worker`).
    """

    name: str

    def publish(self, msg: Message) -> None:
        """Send ``msg`` to ``msg.to`` (or to everyone when ``msg.to`` is None)."""
        ...

    def subscribe(self, handler: Handler) -> None:
        """Call ``handler`` for every message that reaches this agent (besides :meth:`poll`)."""
        ...

    def poll(self) -> list[Message]:
        """Messages received since the last poll, oldest first."""
        ...

    def request(self, to: str, msg: Message, timeout: float) -> Message | None:
        """Ask ``to`` and wait up to ``timeout`` s for its answer; ``None`` if none came."""
        ...

    def serve(self, handler: Server) -> None:
        """Answer requests addressed to this agent with ``handler``."""
        ...

    def close(self) -> None:
        """Leave the bus."""
        ...


class InProcessHub:
    """The shared medium of an in-process simulation: robots ``connect`` to it by name.

    Every frame goes through :meth:`Message.to_json` / :meth:`Message.from_json`, so the length
    bound and the field checks apply exactly as on a wire, and every frame is counted.

    Args:
        max_chars: the frame bound.
        log: keep every frame sent in :attr:`log` (the demo prints it).
    """

    def __init__(self, *, max_chars: int = MAX_FRAME_CHARS, log: bool = True) -> None:
        if max_chars <= 0:
            raise CommunicationError(f"max_chars must be > 0, got {max_chars!r}")
        self.max_chars = max_chars
        self._endpoints: dict[str, InProcessBus] = {}
        self._stats: dict[str, MessageStats] = {}
        self._lock = threading.RLock()
        self._keep_log = log
        self.log: list[Message] = []
        # Requests run the served handler on a thread of their own, so a slow handler cannot
        # hold the requester past its timeout (like a query against a remote queryable).
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bt_raider_bus")

    def connect(self, name: str) -> InProcessBus:
        """A new endpoint for agent ``name`` (names are unique on a hub)."""
        if not isinstance(name, str) or not name.strip():
            raise CommunicationError(f"an agent name must be a non-empty string, got {name!r}")
        with self._lock:
            if name in self._endpoints:
                raise CommunicationError(
                    f"agent {name!r} is already connected: connected are "
                    f"{', '.join(sorted(self._endpoints))}"
                )
            endpoint = InProcessBus(self, name)
            self._endpoints[name] = endpoint
            self._stats.setdefault(name, MessageStats())
            return endpoint

    @property
    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._endpoints)

    @property
    def stats(self) -> MessageStats:
        """Everything sent on this hub."""
        with self._lock:
            total = MessageStats()
            for s in self._stats.values():
                total = total + s
            return total

    def stats_of(self, name: str) -> MessageStats:
        """What ``name`` has sent."""
        with self._lock:
            return self._stats.get(name, MessageStats())

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- used by the endpoints

    def _endpoint(self, name: str) -> InProcessBus:
        with self._lock:
            try:
                return self._endpoints[name]
            except KeyError:
                raise CommunicationError(
                    f"no agent {name!r} on the bus: connected are "
                    f"{', '.join(sorted(self._endpoints)) or 'none'}"
                ) from None

    def _transmit(self, msg: Message, sender: str) -> Message:
        """Check, count and copy a frame, as a wire would."""
        if msg.sender != sender:
            raise CommunicationError(f"{sender!r} cannot send a message signed by {msg.sender!r}")
        frame = msg.to_json(max_chars=self.max_chars)
        copy = Message.from_json(frame, max_chars=self.max_chars)
        with self._lock:
            self._stats[sender] = self._stats.get(sender, MessageStats()) + MessageStats(
                1, len(frame)
            )
            if self._keep_log:
                self.log.append(copy)
        return copy

    def _deliver(self, msg: Message) -> None:
        with self._lock:
            targets = (
                [e for n, e in self._endpoints.items() if n != msg.sender]
                if msg.to is None
                else [self._endpoint(msg.to)]
            )
        for endpoint in targets:
            endpoint._receive(msg)


class InProcessBus:
    """One agent's endpoint on an :class:`InProcessHub` (implements :class:`MessageBus`)."""

    def __init__(self, hub: InProcessHub, name: str) -> None:
        self.hub = hub
        self.name = name
        self._inbox: deque[Message] = deque()
        self._handlers: list[Handler] = []
        self._server: Server | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"InProcessBus({self.name!r})"

    @property
    def stats(self) -> MessageStats:
        """What this agent has sent (answers to requests included)."""
        return self.hub.stats_of(self.name)

    def _check_open(self) -> None:
        if self._closed:
            raise CommunicationError(f"bus endpoint {self.name!r} is closed")

    def publish(self, msg: Message) -> None:
        self._check_open()
        if msg.to is not None:
            self.hub._endpoint(msg.to)  # an unknown addressee is our bug: say so before counting
        self.hub._deliver(self.hub._transmit(msg, self.name))

    def subscribe(self, handler: Handler) -> None:
        self._check_open()
        with self._lock:
            self._handlers.append(handler)

    def poll(self) -> list[Message]:
        with self._lock:
            out = list(self._inbox)
            self._inbox.clear()
        return out

    def request(self, to: str, msg: Message, timeout: float) -> Message | None:
        self._check_open()
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout >= 0):
            raise CommunicationError(
                f"request timeout must be a number of seconds >= 0, got {timeout!r}"
            )
        target = self.hub._endpoint(to)
        if msg.to != to:
            raise CommunicationError(
                f"request from {self.name!r} is addressed to {msg.to!r} but sent to {to!r}"
            )
        sent = self.hub._transmit(msg, self.name)
        server = target._server
        if server is None or target._closed:
            return None  # nobody answers: the caller reads it as "unknown"
        future = self.hub._pool.submit(server, sent)
        try:
            answer = future.result(timeout=timeout)
        except FutureTimeout:
            future.cancel()
            return None
        if answer is None:
            return None
        if not isinstance(answer, Message):
            raise CommunicationError(
                f"{to!r} answered {msg.kind.value} with {type(answer).__name__}, not a Message"
            )
        if answer.reply_to != sent.id or answer.to != self.name:
            raise CommunicationError(
                f"{to!r} answered request {sent.id} with a frame for {answer.to!r} replying to "
                f"{answer.reply_to!r}"
            )
        return self.hub._transmit(answer, to)

    def serve(self, handler: Server) -> None:
        self._check_open()
        self._server = handler

    def close(self) -> None:
        self._closed = True
        self._server = None

    def _receive(self, msg: Message) -> None:
        if self._closed:
            return
        with self._lock:
            self._inbox.append(msg)
            handlers = list(self._handlers)
        for handler in handlers:
            handler(msg)


def fit(
    build: Callable[[int], Message], count: int, *, max_chars: int = MAX_FRAME_CHARS
) -> Message:
    """The message ``build(n)`` with the largest ``n <= count`` whose frame fits ``max_chars``.

    Builders that list objects use it to send as many as one frame holds (most relevant first).

    Raises:
        CommunicationError: even ``build(0)`` does not fit.
    """
    for n in range(count, -1, -1):
        msg = build(n)
        try:
            msg.to_json(max_chars=max_chars)
        except CommunicationError:
            if n == 0:
                raise
            continue
        return msg
    raise CommunicationError("fit() needs count >= 0")  # pragma: no cover
