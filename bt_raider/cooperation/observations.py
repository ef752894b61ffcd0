"""REVECA's data model: observed information, goals and sub-goals, observation and collaborator
memory.

Seo et al. (REVECA) keep two memories beside the common goal:

* **observation memory** -- one :class:`ObjectInfo` per object seen (id, name, position, room,
  available actions, states, the step it was acquired), each rated *at observation time*
  Strong / Medium / Low / None for the goal (:class:`Relevance`), by an LLM
  (:mod:`bt_raider.cooperation.relevance`: an LLM with prompt ``reveca_relevance.j2``, or
  rules);
* **collaborator memory** -- per collaborator: held objects, last known position (exact when
  seen, the centre of the room a message names otherwise), messages with their step, and
  completed sub-goals (:class:`CollaboratorInfo`).

At planning time the information is ranked by relevance and, for ties, by **relative
proximity** -- my distance against each collaborator's, phrased "I'm closer than Bob" for a
model (:mod:`bt_raider.cooperation.proximity`: the paper's Algorithm 1).

:class:`~bt_raider.cooperation.reveca_memory.RevecaMemory` bundles them with the agent's own
state and task history (what it has grabbed, put, opened, visited), which answers
collaborators' validation requests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol, runtime_checkable

from bt_raider.errors import BtRaiderError


class InformationError(BtRaiderError, ValueError):
    """Malformed object information, goal or sub-goal (names the field, value, valid options)."""


class Relevance(IntEnum):
    """How much a piece of information matters for the goal (REVECA's four levels)."""

    NONE = 0
    LOW = 1
    MEDIUM = 2
    STRONG = 3

    @property
    def label(self) -> str:
        return self.name.capitalize()

    @classmethod
    def parse(cls, value: Any) -> Relevance:
        """``"Strong"``/``"strong"``/``3`` -> :attr:`STRONG`, etc.

        Raises:
            InformationError: the value is not one of the four levels.
        """
        if isinstance(value, Relevance):
            return value
        if isinstance(value, str) and value.strip().upper() in cls.__members__:
            return cls[value.strip().upper()]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
            return cls(value)
        raise InformationError(f"relevance {value!r} is not one of Strong, Medium, Low, None")


Position = tuple[float, ...]


@runtime_checkable
class WorldMap(Protocol):
    """What the agent knows of the layout: rooms, their centres and walking distances.

    :class:`bt_raider.simulation.multirobot.House` implements it.
    """

    @property
    def rooms(self) -> tuple[str, ...]: ...

    def centre(self, room: str) -> tuple[float, float]: ...

    def distance(
        self, room_a: str, a: Sequence[float], room_b: str, b: Sequence[float]
    ) -> float: ...

    def steps(self, metres: float) -> int: ...


@dataclass
class ObjectInfo:
    """One piece of object information (REVECA's I_o).

    Attributes:
        id: the object's id.
        name: its name, e.g. ``"apple"``.
        room: the room it was seen in.
        position: where it was seen.
        step: the simulation step it was acquired (the paper's alpha for validation).
        kind: ``"object"``, ``"container"`` or ``"surface"``.
        category: what kind of thing it is (``"food"``...), when known.
        actions: actions it affords now (``grab``, ``open``, ``put``).
        states: its states (``CLOSED``, ``INSIDE``...).
        holds: for furniture, the categories it can hold (``"*"``: anything).
        parent: the surface or container it is on/in.
        relevance: the score given when it was acquired.
        source: ``"seen"`` or the collaborator who reported it.
    """

    id: str
    name: str
    room: str
    position: Position
    step: int
    kind: str = "object"
    category: str = ""
    actions: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    holds: tuple[str, ...] = ()
    parent: str | None = None
    relevance: Relevance = Relevance.NONE
    source: str = "seen"

    def __post_init__(self) -> None:
        for name in ("id", "name", "room"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise InformationError(
                    f"object information field {name!r} must be a non-empty string, got {value!r}"
                )
        if self.kind not in ("object", "container", "surface"):
            raise InformationError(
                f"object {self.name} ({self.id}): kind {self.kind!r} is not one of object, "
                "container, surface"
            )
        try:
            self.position = tuple(float(v) for v in self.position)
        except (TypeError, ValueError):
            raise InformationError(
                f"object {self.name} ({self.id}): position must be numbers, got {self.position!r}"
            ) from None
        self.actions = tuple(self.actions)
        self.states = tuple(self.states)
        self.holds = tuple(self.holds)
        self.relevance = Relevance.parse(self.relevance)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id})"

    @property
    def closed(self) -> bool:
        return "CLOSED" in self.states

    def brief(self) -> dict[str, Any]:
        """A compact dict for messages (the receiver rebuilds an ObjectInfo from it)."""
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "room": self.room,
            "pos": [round(v, 1) for v in self.position],
            "kind": self.kind,
        }
        if self.parent:
            out["in"] = self.parent
        if self.closed:
            out["closed"] = True
        return out


@dataclass(frozen=True)
class SubGoal:
    """One step towards the shared goal that a collaborator might already have done.

    ``put`` sub-goals are the goal's own ("put apple on coffeetable"); ``open`` (check a
    container) and ``explore`` (a room) are the other plans REVECA's agents make.

    Attributes:
        action: ``"put"``, ``"open"`` or ``"explore"``.
        target: the object name, the container name, or the room.
        location: where a ``put`` puts it.
        relation: ``"on"`` or ``"in"``.
        object_id: the instance a plan uses (not part of :attr:`key`, except for ``open``).
    """

    action: str
    target: str
    location: str = ""
    relation: str = "on"
    object_id: str | None = None

    ACTIONS = ("put", "open", "explore")

    def __post_init__(self) -> None:
        if self.action not in self.ACTIONS:
            raise InformationError(
                f"sub-goal action {self.action!r} is not one of {', '.join(self.ACTIONS)}"
            )
        if not isinstance(self.target, str) or not self.target:
            raise InformationError(
                f"sub-goal target must be a non-empty string, got {self.target!r}"
            )
        if self.action == "put" and not self.location:
            raise InformationError(f"put sub-goal for {self.target!r} needs a location")

    @property
    def key(self) -> str:
        """Blackboard-safe identifier, e.g. ``put-apple-on-coffeetable``."""
        if self.action == "put":
            parts = ["put", self.target, self.relation, self.location]
        elif self.action == "open":
            parts = ["open", self.target, self.object_id or ""]
        else:
            parts = ["explore", self.target]
        return re.sub(r"[^a-z0-9_-]+", "_", "-".join(p for p in parts if p).lower())

    @property
    def text(self) -> str:
        if self.action == "put":
            return f"put {self.target} {self.relation} {self.location}"
        if self.action == "open":
            what = f"{self.target} ({self.object_id})" if self.object_id else self.target
            return f"open {what}"
        return f"explore the {self.target}"

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "target": self.target}
        if self.location:
            out["location"] = self.location
            out["relation"] = self.relation
        if self.object_id:
            out["object_id"] = self.object_id
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> SubGoal:
        try:
            return cls(
                action=str(raw["action"]),
                target=str(raw["target"]),
                location=str(raw.get("location") or ""),
                relation=str(raw.get("relation") or "on"),
                object_id=(str(raw["object_id"]) if raw.get("object_id") else None),
            )
        except KeyError as exc:
            raise InformationError(f"sub-goal {dict(raw)!r} lacks {exc.args[0]!r}") from None


@dataclass(frozen=True)
class Goal:
    """The common goal G: put every object of ``objects`` ``relation`` ``location``.

    Attributes:
        objects: the goal objects' names.
        location: the goal location's name.
        relation: ``"on"`` or ``"in"``.
        location_id: the goal location's id, when known.
        location_room: the room it is in, when known.
        location_position: where it is, when known.
    """

    objects: tuple[str, ...]
    location: str
    relation: str = "on"
    location_id: str | None = None
    location_room: str | None = None
    location_position: Position | None = None

    def __post_init__(self) -> None:
        if not self.objects or not all(isinstance(o, str) and o for o in self.objects):
            raise InformationError(f"a goal needs object names, got {self.objects!r}")
        object.__setattr__(self, "objects", tuple(self.objects))

    @property
    def text(self) -> str:
        loc = f"<{self.location}>" + (f" ({self.location_id})" if self.location_id else "")
        return f"put {', '.join(self.objects)} {self.relation} the {loc}"

    @property
    def subgoals(self) -> tuple[SubGoal, ...]:
        return tuple(SubGoal("put", o, self.location, self.relation) for o in self.objects)

    def subgoal(self, name: str, object_id: str | None = None) -> SubGoal:
        if name not in self.objects:
            raise InformationError(
                f"{name!r} is not a goal object: expected one of {', '.join(self.objects)}"
            )
        return SubGoal("put", name, self.location, self.relation, object_id)


# --------------------------------------------------------------------------- memories


class ObservationMemory:
    """Object information by id (REVECA's M_o)."""

    def __init__(self) -> None:
        self._items: dict[str, ObjectInfo] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[ObjectInfo]:
        return iter(list(self._items.values()))

    def __contains__(self, object_id: object) -> bool:
        return object_id in self._items

    def get(self, object_id: str) -> ObjectInfo | None:
        return self._items.get(object_id)

    def put(self, info: ObjectInfo) -> None:
        self._items[info.id] = info

    def remove(self, object_id: str) -> ObjectInfo | None:
        """Forget an object (stale information); returns what was forgotten."""
        return self._items.pop(object_id, None)

    def named(self, name: str) -> list[ObjectInfo]:
        return [i for i in self._items.values() if i.name == name]

    def in_room(self, room: str) -> list[ObjectInfo]:
        return [i for i in self._items.values() if i.room == room]


@dataclass(frozen=True)
class Sighting:
    """Where a collaborator was known to be at a step."""

    step: int
    room: str
    position: Position
    exact: bool  # seen directly; otherwise the centre of the room a message named
    source: str = "seen"


@dataclass(frozen=True)
class Heard:
    """A message from a collaborator, with its step (REVECA keeps the conversation log)."""

    step: int
    kind: str
    text: str
    room: str | None = None


@dataclass
class CollaboratorInfo:
    """What I know of one collaborator (REVECA's I_c)."""

    name: str
    trail: list[Sighting] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)  # id -> name
    held_step: int = -1
    messages: list[Heard] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)  # sub-goal keys

    @property
    def last(self) -> Sighting | None:
        return self.trail[-1] if self.trail else None

    def rooms_since(self, step: int) -> set[str]:
        return {s.room for s in self.trail if s.step >= step}

    def note(self, sighting: Sighting) -> None:
        # Keep the trail in step order (an answer can arrive after a later sighting).
        self.trail.append(sighting)
        self.trail.sort(key=lambda s: s.step)


class CollaboratorMemory:
    """Collaborator information by name (REVECA's M_c)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._items: dict[str, CollaboratorInfo] = {n: CollaboratorInfo(n) for n in names}

    def __iter__(self) -> Iterator[CollaboratorInfo]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    @property
    def names(self) -> list[str]:
        return list(self._items)

    def __getitem__(self, name: str) -> CollaboratorInfo:
        if name not in self._items:
            self._items[name] = CollaboratorInfo(name)
        return self._items[name]


@dataclass
class TaskHistory:
    """What I have done (answers validation requests, REVECA's "task history")."""

    grabbed: dict[str, str] = field(default_factory=dict)  # id -> name
    placed: dict[str, str] = field(default_factory=dict)  # id -> name
    opened: set[str] = field(default_factory=set)
    visited: set[str] = field(default_factory=set)
    completed: list[str] = field(default_factory=list)  # plan texts, oldest first


# --------------------------------------------------------------------------- relevance


# --------------------------------------------------------------------------- proximity


# --------------------------------------------------------------------------- the module
