"""REVECA's relative proximity: where a collaborator is with respect to me and to an object,
phrased for the model, and retrieval by relevance then proximity (the paper's Algorithm 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bt_raider.cooperation.observations import CollaboratorInfo, ObjectInfo, Position, WorldMap


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
