"""REVECA's memory module: observation memory rated by relevance, collaborator memory, proximity.

Seo et al. (REVECA) keep two memories beside the common goal:

* **observation memory** -- one :class:`ObjectInfo` per object seen (id, name, position, room,
  available actions, states, the step it was acquired), each rated *at observation time*
  Strong / Medium / Low / None for the goal (:class:`Relevance`), by an LLM
  (:class:`LLMRelevance`, prompt ``reveca_relevance.j2``) or by rules
  (:class:`SymbolicRelevance`);
* **collaborator memory** -- per collaborator: held objects, last known position (exact when
  seen, the centre of the room a message names otherwise), messages with their step, and
  completed sub-goals (:class:`CollaboratorInfo`).

At planning time the information is ranked by relevance and, for ties, by **relative
proximity** -- my distance against each collaborator's, phrased "I'm closer than Bob" for a
model (:func:`relative_proximity`, :func:`retrieve`: the paper's Algorithm 1).

:class:`RevecaMemory` bundles them with the agent's own state and task history (what it has
grabbed, put, opened, visited), which answers collaborators' validation requests.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.errors import BackendError, BtRaiderError
from bt_raider.llm.prompts import render
from bt_raider.llm.replies import parse_json_reply

if TYPE_CHECKING:
    from bt_raider.cooperation.messaging import Message
    from bt_raider.llm.chat import ChatModel


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

    def __iter__(self):
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

    def __iter__(self):
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


@runtime_checkable
class RelevanceEstimator(Protocol):
    """Rates newly acquired information for the goal (REVECA's observation time)."""

    def estimate(self, infos: Sequence[ObjectInfo], goal: Goal) -> list[Relevance]: ...


class SymbolicRelevance:
    """REVECA's relevance levels as rules.

    * Strong: the goal names the object;
    * Medium: the goal location, or a container that can hold goal objects;
    * Low: an object of the same category as a goal object;
    * None: anything else.

    Args:
        categories: what kind of thing each object name is (e.g.
            :data:`bt_raider.simulation.multirobot.CATALOGUE`), to know the goal objects'
            categories.
    """

    def __init__(self, categories: Mapping[str, str]) -> None:
        self.categories = dict(categories)

    def goal_categories(self, goal: Goal) -> set[str]:
        return {self.categories[o] for o in goal.objects if o in self.categories}

    def rate(self, info: ObjectInfo, goal: Goal) -> Relevance:
        if info.kind == "object" and info.name in goal.objects:
            return Relevance.STRONG
        if info.name == goal.location or (goal.location_id and info.id == goal.location_id):
            return Relevance.MEDIUM
        wanted = self.goal_categories(goal)
        if info.kind == "container" and ("*" in info.holds or wanted & set(info.holds)):
            return Relevance.MEDIUM
        category = info.category or self.categories.get(info.name, "")
        if info.kind == "object" and category in wanted:
            return Relevance.LOW
        return Relevance.NONE

    def estimate(self, infos: Sequence[ObjectInfo], goal: Goal) -> list[Relevance]:
        return [self.rate(i, goal) for i in infos]


def ask_json(
    chat: ChatModel,
    prompt: str,
    read: Callable[[dict[str, Any]], Any],
    *,
    retries: int = 1,
    timeout: float | None = None,
) -> Any:
    """Ask ``chat`` for a JSON answer and read it with ``read``.

    A reply that cannot be read (``read`` raises ValueError) is fed back to the model with the
    reason, up to ``retries`` more times (smolagents style: the model's mistakes go back to the
    model; our own bugs raise).

    Raises:
        BackendError: the backend failed, or no usable reply came after the retries.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    problem = ""
    for _ in range(retries + 1):
        reply = chat.complete(messages, timeout=timeout)
        content = reply.content
        try:
            return read(parse_json_reply(content))
        except (ValueError, KeyError, TypeError) as exc:
            problem = str(exc) if not isinstance(exc, KeyError) else f"missing field {exc}"
        messages = [
            *messages,
            {"role": "assistant", "content": content},
            {"role": "user", "content": render("reveca_retry", problem=problem)},
        ]
    raise BackendError(f"the model gave no usable JSON after {retries + 1} tries: {problem}")


class LLMRelevance:
    """REVECA's relevance estimation by a chat model (prompt ``reveca_relevance.j2``).

    All objects acquired at one observation go in one call; the reply is
    ``{"reasoning": ..., "relevance": {"<id>": "Strong|Medium|Low|None", ...}}``.

    Args:
        chat: the model.
        agent: my name (for the prompt).
        fallback: used when the model fails or stays unreadable (``None``: raise BackendError).
        retries: how often an unreadable reply is fed back.
        timeout: seconds per model call.
    """

    def __init__(
        self,
        chat: ChatModel,
        *,
        agent: str = "robot",
        fallback: RelevanceEstimator | None = None,
        retries: int = 1,
        timeout: float | None = 30.0,
    ) -> None:
        self.chat = chat
        self.agent = agent
        self.fallback = fallback
        self.retries = retries
        self.timeout = timeout
        self.failures: list[str] = []

    def prompt(self, infos: Sequence[ObjectInfo], goal: Goal) -> str:
        return render(
            "reveca_relevance",
            agent=self.agent,
            goal=goal.text,
            objects=[
                {
                    "id": i.id,
                    "name": i.name,
                    "kind": i.kind,
                    "category": i.category,
                    "room": i.room,
                    "actions": list(i.actions),
                    "states": list(i.states),
                    "holds": list(i.holds),
                }
                for i in infos
            ],
        )

    def estimate(self, infos: Sequence[ObjectInfo], goal: Goal) -> list[Relevance]:
        if not infos:
            return []
        ids = [i.id for i in infos]

        def read(reply: dict[str, Any]) -> list[Relevance]:
            scores = reply.get("relevance")
            if not isinstance(scores, dict):
                raise ValueError('"relevance" must be an object mapping each id to a level')
            missing = [i for i in ids if str(i) not in scores]
            if missing:
                raise ValueError(f"no relevance for id(s) {', '.join(missing)}")
            try:
                return [Relevance.parse(scores[str(i)]) for i in ids]
            except InformationError as exc:
                raise ValueError(str(exc)) from None

        try:
            return ask_json(
                self.chat,
                self.prompt(infos, goal),
                read,
                retries=self.retries,
                timeout=self.timeout,
            )
        except BackendError as exc:
            if self.fallback is None:
                raise
            self.failures.append(str(exc))
            return self.fallback.estimate(infos, goal)


# --------------------------------------------------------------------------- proximity


@dataclass(frozen=True)
class Proximity:
    """My distance to a place against each collaborator's (REVECA's relative proximity P).

    Attributes:
        mine: my walking distance (m).
        others: collaborator -> their distance from their last known position.
    """

    mine: float
    others: Mapping[str, float] = field(default_factory=dict)

    @property
    def closer_than(self) -> list[str]:
        return sorted(n for n, d in self.others.items() if self.mine < d)

    @property
    def farther_than(self) -> list[str]:
        return sorted(n for n, d in self.others.items() if self.mine > d)

    @property
    def rank(self) -> tuple[int, float]:
        """Sort key, larger is better: how many I beat, then how near I am."""
        return (len(self.closer_than) - len(self.farther_than), -self.mine)

    @property
    def phrase(self) -> str:
        """Natural language for a model: ``"I'm closer than Bob"``."""
        if not self.others:
            return "no collaborator's position is known"
        parts = []
        if self.closer_than:
            parts.append("closer than " + ", ".join(n.capitalize() for n in self.closer_than))
        if self.farther_than:
            parts.append("farther than " + ", ".join(n.capitalize() for n in self.farther_than))
        level = sorted(set(self.others) - set(self.closer_than) - set(self.farther_than))
        if level:
            parts.append("as close as " + ", ".join(n.capitalize() for n in level))
        return "I'm " + " and ".join(parts)


def collaborator_place(info: CollaboratorInfo, world: WorldMap) -> tuple[str, Position] | None:
    """A collaborator's last known place (exact, or the centre of the room last named)."""
    last = info.last
    if last is None:
        return None
    return last.room, (last.position if last.exact else tuple(world.centre(last.room)))


def relative_proximity(
    room: str,
    position: Sequence[float],
    me: tuple[str, Sequence[float]],
    collaborators: Iterable[CollaboratorInfo],
    world: WorldMap,
) -> Proximity:
    """My distance to ``(room, position)`` against each collaborator's last known place."""
    mine = world.distance(me[0], me[1], room, position)
    others = {}
    for c in collaborators:
        place = collaborator_place(c, world)
        if place is not None:
            others[c.name] = world.distance(place[0], place[1], room, position)
    return Proximity(mine, others)


@dataclass(frozen=True)
class Ranked:
    """One retrieved piece of information with its relative proximity."""

    info: ObjectInfo
    proximity: Proximity


def retrieve(
    infos: Iterable[ObjectInfo],
    me: tuple[str, Sequence[float]],
    collaborators: Iterable[CollaboratorInfo],
    world: WorldMap,
    *,
    k: int | None = 3,
    use_relevance: bool = True,
) -> list[Ranked]:
    """REVECA's Algorithm 1: the top ``k`` by relevance, ties broken by relative proximity.

    With ``use_relevance=False`` (the "w/o relevance" ablation) only proximity orders them, a
    distance-based greedy retrieval. ``k=None`` returns everything in order.
    """
    collaborators = list(collaborators)
    ranked = [
        Ranked(i, relative_proximity(i.room, i.position, me, collaborators, world)) for i in infos
    ]
    ranked.sort(
        key=lambda r: (
            int(r.info.relevance) if use_relevance else 0,
            r.proximity.rank,
            # A fixed last key keeps the order reproducible.
            r.info.id,
        ),
        reverse=True,
    )
    return ranked if k is None else ranked[:k]


# --------------------------------------------------------------------------- the module


@dataclass(frozen=True)
class Seen:
    """A collaborator in view."""

    name: str
    room: str
    position: Position
    held: tuple[tuple[str, str], ...] = ()  # (id, name)


class RevecaMemory:
    """REVECA's memory module for one agent: goal, observation and collaborator memory, self.

    All updates happen under :attr:`lock` (a validation runs on a worker while the agent keeps
    perceiving; a collaborator's request is answered on the bus's thread).

    Args:
        me: my name.
        goal: the common goal.
        world: the layout (rooms, centres, distances).
        collaborators: the collaborators' names.
        estimator: rates new information; ``None`` leaves everything at None (the "w/o
            relevance" ablation).
    """

    def __init__(
        self,
        me: str,
        goal: Goal,
        world: WorldMap,
        collaborators: Iterable[str] = (),
        *,
        estimator: RelevanceEstimator | None = None,
    ) -> None:
        self.me = me
        self.goal = goal
        self.world = world
        self.estimator = estimator
        self.observations = ObservationMemory()
        self.collaborators = CollaboratorMemory(c for c in collaborators if c != me)
        self.history = TaskHistory()
        self.lock = threading.RLock()
        self.step = 0
        self.room = ""
        self.position: Position = (0.0, 0.0)
        self.held: dict[str, str] = {}  # id -> name
        #: goal object -> who put it in place (me, a collaborator, or "seen").
        self.done: dict[str, str] = {}
        #: goal object -> collaborator known to hold it.
        self.taken: dict[str, str] = {}
        #: rooms someone has looked at.
        self.explored: set[str] = set()

    # -- state

    @property
    def place(self) -> tuple[str, Position]:
        return self.room, self.position

    def remaining(self) -> list[str]:
        """Goal objects nobody is known to have done or to be doing."""
        with self.lock:
            return [
                o
                for o in self.goal.objects
                if o not in self.done and o not in self.taken and o not in self.held.values()
            ]

    def proximity(self, room: str, position: Sequence[float]) -> Proximity:
        with self.lock:
            return relative_proximity(
                room, position, self.place, list(self.collaborators), self.world
            )

    def info_for(self, subgoal: SubGoal) -> ObjectInfo | None:
        """The information a plan for ``subgoal`` relies on (None for exploring)."""
        with self.lock:
            if subgoal.object_id and subgoal.object_id in self.observations:
                return self.observations.get(subgoal.object_id)
            if subgoal.action == "explore":
                return None
            ranked = retrieve(
                self.observations.named(subgoal.target),
                self.place,
                list(self.collaborators),
                self.world,
                k=1,
            )
            return ranked[0].info if ranked else None

    def _rate(self, infos: list[ObjectInfo]) -> None:
        if self.estimator is None or not infos:
            return
        for info, score in zip(infos, self.estimator.estimate(infos, self.goal), strict=True):
            info.relevance = score

    def _learn(self, infos: Iterable[ObjectInfo]) -> list[ObjectInfo]:
        """Store information; rate only what is new (relevance is assessed at acquisition)."""
        new: list[ObjectInfo] = []
        for info in infos:
            old = self.observations.get(info.id)
            if old is None:
                new.append(info)
                self.observations.put(info)
            elif info.step >= old.step:
                self.observations.put(replace(info, relevance=old.relevance))
        self._rate(new)
        return new

    def _expected_visible(self, info: ObjectInfo) -> bool:
        if info.parent is None:
            return True
        parent = self.observations.get(info.parent)
        return parent is None or not parent.closed

    def _delivered(self, info: ObjectInfo) -> bool:
        return (
            info.kind == "object"
            and info.name in self.goal.objects
            and self.goal.location_id is not None
            and info.parent == self.goal.location_id
        )

    # -- observation time

    def observe(
        self,
        step: int,
        room: str,
        position: Sequence[float],
        objects: Sequence[ObjectInfo],
        seen: Sequence[Seen] = (),
        held: Mapping[str, str] | None = None,
    ) -> list[ObjectInfo]:
        """Take in what I perceive now (my room only); returns the newly acquired information.

        Information about my room that I no longer see (and should, as it is not inside a
        closed container) is stale and forgotten; collaborators in view are placed exactly;
        objects they hold leave my observation memory.
        """
        with self.lock:
            self.step = step
            self.room = room
            self.position = tuple(float(v) for v in position)
            if held is not None:
                self.held = dict(held)
                for oid, name in self.held.items():
                    # What I hold, I have grabbed (however the grab was reported).
                    self.history.grabbed.setdefault(oid, name)
                    self.observations.remove(oid)
            self.history.visited.add(room)
            self.explored.add(room)
            new = self._learn(o for o in objects if o.id not in self.held)
            # After learning (a container seen open now shows its inside), forget what should
            # be in view and is not.
            visible = {o.id for o in objects}
            for info in self.observations.in_room(room):
                if info.id not in visible and self._expected_visible(info):
                    self.observations.remove(info.id)
            for obj in objects:
                if self._delivered(obj):
                    self.done.setdefault(obj.name, "seen")
            for s in seen:
                c = self.collaborators[s.name]
                c.note(Sighting(step, s.room, tuple(s.position), True, "seen"))
                c.held = dict(s.held)
                c.held_step = step
                for oid, name in s.held:
                    self.observations.remove(oid)
                    if name in self.goal.objects:
                        self.taken[name] = s.name
            return new

    def hear(self, msg: Message) -> list[ObjectInfo]:
        """Take in a collaborator's message; returns the newly acquired information.

        The sender is placed at the centre of the room the message names; objects it lists
        are stored with the message's step as acquisition step; an achieved sub-goal is
        recorded and its object forgotten.
        """
        from bt_raider.cooperation.messaging import MessageKind

        with self.lock:
            if msg.sender == self.me:
                return []
            c = self.collaborators[msg.sender]
            c.messages.append(Heard(msg.step, msg.kind.value, msg.text, msg.room))
            if msg.room:
                c.note(
                    Sighting(
                        msg.step, msg.room, tuple(self.world.centre(msg.room)), False, "message"
                    )
                )
                if msg.kind in (MessageKind.HELLO, MessageKind.STATUS):
                    self.explored.add(msg.room)
            held = msg.data.get("held")
            if isinstance(held, list):
                c.held = {str(h.get("id")): str(h.get("name")) for h in held if isinstance(h, dict)}
                c.held_step = msg.step
                for oid, name in c.held.items():
                    self.observations.remove(oid)
                    if name in self.goal.objects:
                        self.taken[name] = msg.sender
            new = self._learn(self._infos_from(msg))
            if msg.kind is MessageKind.SUBGOAL_ACHIEVED:
                sub = SubGoal.from_dict(msg.data["subgoal"])
                c.completed.append(sub.key)
                if sub.action == "put":
                    self.done[sub.target] = msg.sender
                    self.taken.pop(sub.target, None)
                    if sub.object_id:
                        self.observations.remove(sub.object_id)
                        c.held.pop(sub.object_id, None)
            return new

    def _infos_from(self, msg: Message) -> list[ObjectInfo]:
        out = []
        for o in msg.data.get("objects") or []:
            if o["id"] in self.held:
                continue
            try:
                kind = str(o.get("kind", "object"))
                info = ObjectInfo(
                    id=o["id"],
                    name=o["name"],
                    room=str(o.get("room") or msg.room or ""),
                    position=tuple(
                        o.get("pos") or self.world.centre(str(o.get("room") or msg.room))
                    ),
                    step=msg.step,
                    kind=kind,
                    actions=(("open",) if o.get("closed") else ("put",))
                    if kind == "container"
                    else (("grab",) if kind == "object" else ("put",)),
                    states=("CLOSED",) if o.get("closed") else (),
                    parent=o.get("in"),
                    source=msg.sender,
                )
            except (InformationError, TypeError, ValueError, BtRaiderError):
                continue  # one malformed entry does not spoil the message
            if self._delivered(info):
                self.done.setdefault(info.name, msg.sender)
            out.append(info)
        return out

    # -- my own actions

    def record(self, action: str, args: Sequence[str], names: Mapping[str, str]) -> None:
        """Note an action I completed (for the task history and my own state)."""
        with self.lock:
            if action == "grab":
                oid = args[0]
                self.history.grabbed[oid] = names.get(oid, oid)
                self.held[oid] = names.get(oid, oid)
                self.observations.remove(oid)
            elif action == "put":
                oid, dest = args[0], args[1]
                name = self.held.pop(oid, names.get(oid, oid))
                self.history.placed[oid] = name
                if dest == self.goal.location_id and name in self.goal.objects:
                    self.done[name] = self.me
            elif action == "open":
                self.history.opened.add(args[0])
                info = self.observations.get(args[0])
                if info is not None:
                    self.observations.put(
                        replace(info, states=("OPEN",), actions=("put",), step=self.step)
                    )

    def snapshot_collaborators(self) -> list[CollaboratorInfo]:
        with self.lock:
            return [
                replace(
                    c,
                    trail=list(c.trail),
                    held=dict(c.held),
                    messages=list(c.messages),
                    completed=list(c.completed),
                )
                for c in self.collaborators
            ]
