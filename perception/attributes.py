"""What people tell objects apart by that AI2-THOR does not model: colour and the robot's view.

Two kinds of description (``docs/scene-format.md`` section 2.1):

- **colour**: the optional object key ``color`` ("red", "dark blue"). :func:`colours_of` reads
  its colour words; :func:`with_colours` keeps the objects a description's colours fit. An
  object whose colour the scene does not give may be any colour, so it is kept (and a choice
  between it and a red one stays open); when no candidate has a colour the description
  cannot narrow anything.
- **robot-relative side**: "the box on the left", "the cup in front of you". From the robot's
  pose (heading ``h = (sin yaw, cos yaw)``, right ``r = (cos yaw, -sin yaw)``) each object
  has a bearing; :func:`on_side` keeps the one object on that side, or every object it cannot
  tell apart from it (then the choice is unclear), or none when nothing is on that side.

Plain Python and the leaves only: the check grounds queries with these functions and a
person's reply may be read with the same rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, TypeVar

from bt_raider.errors import SceneError
from bt_raider.perception.values import show_value

#: Colour words a description may use; the first spelling of each pair in :data:`_SAME` is kept.
COLOUR_WORDS = frozenset(
    (
        "red green blue yellow orange purple violet pink brown black white grey gray silver gold "
        "golden beige cyan magenta turquoise"
    ).split()
)
#: Spellings of one colour.
_SAME = {"gray": "grey", "golden": "gold"}

#: Robot-relative sides a phrase may name.
SIDES = ("left", "right", "front", "behind")

#: Degrees off the heading from which an object is on the robot's left (or right).
SIDE_ANGLE = 10.0
#: Degrees off the heading within which an object is straight ahead (or straight behind), on
#: neither side; between this and :data:`SIDE_ANGLE` it may be on a side: the choice is unclear.
STRAIGHT_AHEAD = 5.0
#: Degrees by which the object nearest the heading (or the back) must be nearer than every
#: other to be "the one in front" ("behind"); closer than this, two are at a similar angle.
ANGLE_MARGIN = 10.0
#: Degrees either side of the heading that count as in front (and of the back, as behind).
FRONT_CONE = 45.0
#: Metres within which an object stands where the robot is: its bearing means nothing.
MIN_DISTANCE = 0.05

_T = TypeVar("_T")


# --------------------------------------------------------------------------- colour
def colour_word(word: str) -> str:
    """One spelling per colour: ``gray`` -> ``grey``, ``golden`` -> ``gold``."""
    return _SAME.get(word, word)


def colours_of(obj: Any) -> frozenset[str] | None:
    """The colour words of an object's ``color`` key, or None when the scene does not say.

    Raises:
        SceneError: ``color`` is set to something else than a string (the scene changed after
            it was validated): what cannot be read is no colour.
    """
    raw = getattr(obj, "raw", None)
    value = raw.get("color") if isinstance(raw, dict) else None
    if value is None:
        return None
    if not isinstance(value, str):
        raise SceneError(
            f"{getattr(obj, 'id', obj)}.color: must be a colour word or null, got "
            f"{show_value(value)}"
        )
    words = frozenset(colour_word(w) for w in re.findall(r"[a-z]+", value.lower()))
    return words or None


def with_colours(objects: Sequence[_T], colours: Iterable[str]) -> tuple[list[_T], str]:
    """The objects a description's colours fit, and why none does.

    An object of unknown colour may be any colour: it is kept. When no object has a colour, the
    description cannot narrow them, and all are kept.

    Args:
        objects: the candidates (objects with ``raw`` and ``name``).
        colours: the colour words asked for ("red"); all must fit.

    Returns:
        ``(kept, reason)``; ``reason`` names each candidate's colour when ``kept`` is empty.

    Raises:
        SceneError: a ``color`` that is not a string.
    """
    wanted = {colour_word(c) for c in colours}
    known = [(o, colours_of(o)) for o in objects]
    if not wanted or all(c is None for _, c in known):
        return list(objects), ""
    kept = [o for o, c in known if c is None or wanted <= c]
    if kept:
        return kept, ""
    seen = [f"the {_name(o)} is {' and '.join(sorted(c or ()))}" for o, c in known[:4]]
    return [], _listing(seen)


# --------------------------------------------------------------------------- robot's view
class Viewer(NamedTuple):
    """Who a side is seen from when it is not the robot: a person's position and heading.

    Attributes:
        x: position (m).
        z: position (m).
        yaw: heading in degrees (0 faces +z, as the robot's ``agent.rotation.y``).
        who: how the viewer is named in reasons ("Adriana").
        facing: whether ``yaw`` is known (the person's ``rotation.y``); without it only
            distances from the person can be read, never a side.
    """

    x: float
    z: float
    yaw: float
    who: str = "the person"
    facing: bool = True


def person_view(human: Any) -> Viewer:
    """A person of the scene's ``humans`` as a viewer: position, and heading when the entry has
    ``rotation.y`` (degrees, yaw 0 faces +z, as the robot's).

    Raises:
        SceneError: the position or heading is not a finite number.
    """
    x, _, z = human.xyz
    rotation = human.raw.get("rotation")
    yaw = rotation.get("y") if isinstance(rotation, dict) else None
    who = str(human.name or human.id)
    if yaw is None:
        return Viewer(x, z, 0.0, who, facing=False)
    if isinstance(yaw, bool) or not isinstance(yaw, (int, float)) or not math.isfinite(yaw):
        raise SceneError(
            f"human {human.id}.rotation.y: must be a finite number, got {show_value(yaw)}"
        )
    return Viewer(x, z, float(yaw), who)


def heading_known(scene: Any) -> bool:
    """Whether the scene gives the robot's heading (``agent.rotation.y``).

    A scene without ``agent`` gets a default pose, and an ``agent`` without ``rotation`` yaw 0,
    for distances; which way the robot faces is then unknown, so "left" means nothing.
    """
    agent = getattr(scene, "data", {}).get("agent")
    rotation = agent.get("rotation") if isinstance(agent, dict) else None
    return isinstance(rotation, dict) and rotation.get("y") is not None


def bearing(scene: Any, obj: Any, viewer: Viewer | None = None) -> tuple[float, float] | None:
    """``(bearing, lateral)`` of an object from the robot (or ``viewer``), in degrees, or None
    when it stands where the viewer stands.

    ``bearing`` is the angle from the heading, in (-180, 180], negative to the left;
    ``lateral`` how far to a side, in [-90, 90], mirrored front to back (an object behind on
    the left is on the left).

    Raises:
        SceneError: a position or the heading is not a finite number.
    """
    if viewer is None:
        ax, _, az = scene.agent_xyz
        hx, hz = scene.heading_xz()
        rx, rz = scene.right_xz()
    else:
        yaw = math.radians(viewer.yaw)
        ax, az = viewer.x, viewer.z
        hx, hz, rx, rz = math.sin(yaw), math.cos(yaw), math.cos(yaw), -math.sin(yaw)
    ox, _, oz = obj.xyz
    dx, dz = ox - ax, oz - az
    ahead, aside = dx * hx + dz * hz, dx * rx + dz * rz
    if not (math.isfinite(ahead) and math.isfinite(aside)):
        raise SceneError(f"the bearing of the {_name(obj)} is not a finite number")
    if math.hypot(ahead, aside) < MIN_DISTANCE:
        return None
    return math.degrees(math.atan2(aside, ahead)), math.degrees(math.atan2(aside, abs(ahead)))


def where_from_robot(
    scene: Any, obj: Any, side: str = "front", viewer: Viewer | None = None
) -> str:
    """Where an object is for the robot, in the terms of ``side``'s question.

    For ``left``/``right``: "on the robot's left", "on the robot's right", or "straight
    ahead"/"straight behind" within :data:`SIDE_ANGLE`; for ``front``/``behind``: "in front
    of the robot", "behind the robot", or to a side.
    """
    found = bearing(scene, obj, viewer)
    who = "the robot" if viewer is None else viewer.who
    if found is None:
        return f"where {who} stands"
    angle, lateral = found
    if side in ("left", "right"):
        if abs(lateral) < SIDE_ANGLE:
            return f"straight ahead of {who}" if abs(angle) < 90.0 else "straight behind it"
    elif abs(angle) <= FRONT_CONE:
        return f"in front of {who}"
    elif abs(angle) >= 180.0 - FRONT_CONE:
        return f"behind {who}"
    return f"on {_possessive(who)} left" if lateral < 0 else f"on {_possessive(who)} right"


def _possessive(who: str) -> str:
    return "its" if not who else f"{who}'" if who.endswith("s") else f"{who}'s"


def side_text(side: str) -> str:
    """How a side is said after a noun: "on the left", "in front of the robot"."""
    if side == "front":
        return "in front of the robot"
    if side == "behind":
        return "behind the robot"
    return f"on the {side}"


def on_side(
    scene: Any, objects: Sequence[_T], side: str, viewer: Viewer | None = None
) -> tuple[list[_T], str]:
    """Which of ``objects`` "the one <side>" means, from the robot's view (or ``viewer``'s, a
    person with a known heading: "on my left").

    - **left / right**: the one object on that side (at least :data:`SIDE_ANGLE` degrees off
      the heading that way) when no other is on it, nor close to it (more than
      :data:`STRAIGHT_AHEAD` degrees that way): two on the left are two answers, not a choice
      of the leftmost.
    - **in front / behind**: the object nearest the heading (or the back) when it is within
      :data:`FRONT_CONE` degrees of it and :data:`ANGLE_MARGIN` degrees nearer than any other.

    Args:
        scene: the scene (the robot's pose).
        objects: the candidates (objects with ``xyz`` and ``name``).
        side: one of :data:`SIDES`.

    Returns:
        ``(kept, reason)``: one object when the side tells it apart; several when it does not
        (both on that side, at a similar angle, an object where the robot stands, or the
        robot's heading unknown), with why; none when nothing is on that side, with where
        each object is.

    Raises:
        SceneError: a position or the heading is not a finite number.
        ValueError: ``side`` is not one of :data:`SIDES` (a bug of the caller).
    """
    if side not in SIDES:
        raise ValueError(f"side: expected one of {', '.join(SIDES)}, got {side!r}")
    objects = list(objects)
    if viewer is None and not heading_known(scene):
        if len(objects) == 1:
            return objects, ""  # one candidate: the side cannot point at another
        return objects, (
            "the robot's heading is not known (the scene gives no agent.rotation.y), so "
            f"'{side_text(side)}' cannot tell them apart"
        )
    angles = [bearing(scene, o, viewer) for o in objects]
    unplaced = [i for i, a in enumerate(angles) if a is None]
    if side in ("left", "right"):
        sign = -1.0 if side == "left" else 1.0
        lateral = {i: sign * a[1] for i, a in enumerate(angles) if a is not None}
        found = [i for i, v in lateral.items() if v >= SIDE_ANGLE]
        maybe = [i for i, v in lateral.items() if STRAIGHT_AHEAD < v < SIDE_ANGLE]
        whose = _possessive("the robot" if viewer is None else viewer.who)
        why_found = f"{{}} on {whose} {side}"
        why_maybe = f"{{}} only a little to {whose} {side}"
    else:
        # Nearest the heading (in front) or the back (behind): the most central one.
        score = {
            i: (-abs(a[0]) if side == "front" else abs(a[0]))
            for i, a in enumerate(angles)
            if a is not None
        }
        edge = -FRONT_CONE if side == "front" else 180.0 - FRONT_CONE
        best = max(score.values(), default=edge - 1.0)
        found = [i for i, v in score.items() if v >= edge and best - v < ANGLE_MARGIN]
        maybe = [i for i, v in score.items() if i not in found and best - v < ANGLE_MARGIN]
        why_found = why_maybe = "{} at a similar angle from " + (
            "the robot" if viewer is None else viewer.who
        )
    if not found:
        where = [
            f"the {_name(o)} is {where_from_robot(scene, o, side, viewer)}" for o in objects[:4]
        ]
        return [], _listing(where)
    kept = sorted(found + maybe + unplaced)
    if len(kept) == 1:
        return [objects[kept[0]]], ""
    why = []
    if why_found == why_maybe and len(found + maybe) > 1:
        names = _listing([_name(objects[i]) for i in sorted(found + maybe)])
        why.append(why_found.format(f"the {names} are"))
    elif why_found != why_maybe:
        for group, text in ((found, why_found), (maybe, why_maybe)):
            if group and len(found + maybe) > 1:
                names = _listing([_name(objects[i]) for i in group])
                why.append(text.format(f"the {names} {'is' if len(group) == 1 else 'are'}"))
    if unplaced:
        names = _listing([_name(objects[i]) for i in unplaced])
        who = "the robot" if viewer is None else viewer.who
        why.append(f"the {names} {'is' if len(unplaced) == 1 else 'are'} where {who} stands")
    return [objects[i] for i in kept], _listing(why)


def _name(obj: Any) -> str:
    return str(getattr(obj, "name", None) or getattr(obj, "id", obj))


def _listing(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
