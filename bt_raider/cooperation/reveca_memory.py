"""REVECA's memory module for one robot: the goal, what it observed, what it knows of its
collaborators, and retrieval of the information that matters for a sub-goal.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from bt_raider.cooperation.messaging import Message, MessageKind
from bt_raider.cooperation.observations import (
    CollaboratorInfo,
    CollaboratorMemory,
    Goal,
    Heard,
    InformationError,
    ObjectInfo,
    ObservationMemory,
    Position,
    Sighting,
    SubGoal,
    TaskHistory,
    WorldMap,
)
from bt_raider.cooperation.proximity import Proximity, relative_proximity, retrieve
from bt_raider.cooperation.relevance import RelevanceEstimator
from bt_raider.errors import BtRaiderError


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
