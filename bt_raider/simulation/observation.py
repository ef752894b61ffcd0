"""What a robot perceives of the household: the views
:meth:`~bt_raider.simulation.multirobot.MultiRobotSim.observe` returns.

Partial observation: an :class:`Observation` shows the robot's own room only, as a
:class:`ThingView` per visible thing (not the inside of closed containers) and a
:class:`RobotView` per other robot there.
"""

from __future__ import annotations

from dataclasses import dataclass

from bt_raider.simulation.house import Point


@dataclass(frozen=True)
class ThingView:
    """What a robot perceives of a thing (REVECA's object information)."""

    id: str
    name: str
    kind: str
    category: str
    room: str
    position: Point
    states: tuple[str, ...]
    actions: tuple[str, ...]
    holds: tuple[str, ...]
    parent: str | None


@dataclass(frozen=True)
class RobotView:
    """A robot seen in the same room."""

    name: str
    room: str
    position: Point
    held: tuple[tuple[str, str], ...]  # (id, name)


@dataclass(frozen=True)
class Observation:
    """What ``robot`` perceives at ``step``: its room only, not inside closed containers."""

    step: int
    robot: str
    room: str
    position: Point
    held: tuple[tuple[str, str], ...]
    things: tuple[ThingView, ...]
    robots: tuple[RobotView, ...]
