"""The household's layout: rooms, the doors between them, and how far a robot walks.

A :class:`House` is rectangular rooms joined by doors; walking follows the shortest path
through the doors and takes ``ceil(distance / speed)`` steps. :func:`default_house` is the
four-room C-WAH-like apartment of :class:`~bt_raider.simulation.multirobot.MultiRobotSim`'s
episodes. :class:`SimulationError` is the simulation's configuration error (an unknown room
here; an unknown goal, robot or thing in the simulator).

This module imports nothing of bt_raider but its errors.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

from bt_raider.errors import BtRaiderError


class SimulationError(BtRaiderError, ValueError):
    """The simulation was configured wrongly (unknown room, goal, too few robots...)."""


Point = tuple[float, float]

#: Metres a robot walks in one step.
SPEED = 1.0


@dataclass(frozen=True)
class Room:
    """An axis-aligned rectangle ``[x0, x1] x [y0, y1]``."""

    name: str
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def centre(self) -> Point:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def contains(self, p: Point, margin: float = 0.0) -> bool:
        return (
            self.x0 + margin - 1e-9 <= p[0] <= self.x1 - margin + 1e-9
            and self.y0 + margin - 1e-9 <= p[1] <= self.y1 - margin + 1e-9
        )


@dataclass(frozen=True)
class Door:
    a: str
    b: str
    at: Point


def _dist(p: Point, q: Point) -> float:
    return math.hypot(p[0] - q[0], p[1] - q[1])


class House:
    """Rooms, doors and the distances between places.

    A *place* is a room and a point in it. The distance between two places in the same room is
    the straight line; otherwise the shortest path through the doors.

    Args:
        rooms: the rooms.
        doors: the doors, each joining two rooms at a point.
        speed: metres walked per step.
    """

    def __init__(self, rooms: Sequence[Room], doors: Sequence[Door], speed: float = SPEED) -> None:
        if speed <= 0:
            raise SimulationError(f"speed must be > 0 m/step, got {speed!r}")
        self._rooms = {r.name: r for r in rooms}
        if len(self._rooms) != len(rooms):
            raise SimulationError("room names must be unique")
        for d in doors:
            for r in (d.a, d.b):
                self.room(r)
        self.doors = tuple(doors)
        self.speed = speed

    @property
    def rooms(self) -> tuple[str, ...]:
        return tuple(self._rooms)

    def room(self, name: str) -> Room:
        try:
            return self._rooms[name]
        except KeyError:
            raise SimulationError(
                f"unknown room {name!r}: expected one of {', '.join(self._rooms)}"
            ) from None

    def centre(self, room: str) -> Point:
        """The centre of ``room`` (REVECA places a collaborator there when a message names it)."""
        return self.room(room).centre

    def steps(self, metres: float) -> int:
        """Steps needed to walk ``metres``."""
        return max(0, math.ceil(metres / self.speed - 1e-9))

    def path(self, room_a: str, a: Point, room_b: str, b: Point) -> list[tuple[str, Point]]:
        """Waypoints from ``a`` to ``b``: ``[(room walked through to reach it, point), ...]``.

        The first entry is the start ``(room_a, a)``.
        """
        self.room(room_a)
        self.room(room_b)
        if room_a == room_b:
            return [(room_a, a), (room_b, b)]
        # Dijkstra over the doors; nodes: -1 start, -2 end, i door index.
        doors = self.doors
        best: dict[int, float] = {-1: 0.0}
        prev: dict[int, tuple[int, str]] = {}
        heap: list[tuple[float, int, str]] = [(0.0, -1, room_a)]  # (cost, node, room it is in)
        done: set[int] = set()
        while heap:
            cost, node, _ = heapq.heappop(heap)
            if node in done:
                continue
            done.add(node)
            if node == -2:
                break
            here = a if node == -1 else doors[node].at
            rooms_here = {room_a} if node == -1 else {doors[node].a, doors[node].b}
            steps: list[tuple[int, Point, str]] = []
            for i, d in enumerate(doors):
                if i in done:
                    continue
                shared = rooms_here & {d.a, d.b}
                if shared:
                    steps.append((i, d.at, sorted(shared)[0]))
            if room_b in rooms_here:
                steps.append((-2, b, room_b))
            for nxt, point, through in steps:
                c = cost + _dist(here, point)
                if c < best.get(nxt, math.inf) - 1e-12:
                    best[nxt] = c
                    prev[nxt] = (node, through)
                    heapq.heappush(heap, (c, nxt, through))
        if -2 not in prev:
            raise SimulationError(f"no path from {room_a} to {room_b}: the doors do not join them")
        out: list[tuple[str, Point]] = []
        node = -2
        while node != -1:
            before, through = prev[node]
            out.append((through, b if node == -2 else doors[node].at))
            node = before
        out.append((room_a, a))
        out.reverse()
        return out

    def distance(self, room_a: str, a: Sequence[float], room_b: str, b: Sequence[float]) -> float:
        """Walking distance in metres between two places."""
        pa, pb = (float(a[0]), float(a[1])), (float(b[0]), float(b[1]))
        pts = self.path(room_a, pa, room_b, pb)
        return sum(_dist(p[1], q[1]) for p, q in zip(pts, pts[1:], strict=False))


def default_house(speed: float = SPEED) -> House:
    """Four rooms like a C-WAH apartment: living room, kitchen, bedroom, bathroom."""
    rooms = [
        Room("livingroom", 0, 0, 8, 6),
        Room("kitchen", 8, 0, 14, 6),
        Room("bedroom", 0, 6, 6, 12),
        Room("bathroom", 6, 6, 11, 11),
    ]
    doors = [
        Door("livingroom", "kitchen", (8.0, 3.0)),
        Door("livingroom", "bedroom", (3.0, 6.0)),
        Door("bedroom", "bathroom", (6.0, 9.0)),
    ]
    return House(rooms, doors, speed)
