"""The oracle's own reading of what people say: a :class:`~bt_raider.testing.explore_lang.Say`
evaluated on a scene dict, as a :class:`Designation`.

It shares no code with bt_raider's reader (it imports nothing of bt_raider but the explorer's
language): its definitions are written here, from the scene's plain keys, and are
deliberately cautious. Every test of an object is three-valued (yes, no, or *maybe* near a
boundary: an angle of 4 to 12 degrees off the heading, a distance of 0.3 to 0.55 m from a
landmark, two objects within 0.1 m of each other in a selection), and a designation that
rests on a *maybe* is ``vague``: the oracle then lets the robot ask or act on any object the
words may mean. Only what is certain is judged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from bt_raider.testing.explore_lang import LANDMARKS, Pick, Say

YES, MAYBE, NO = 2, 1, 0
#: Degrees off the heading from which an object is surely on a side / surely not on it.
SIDE_SURE, SIDE_NOT = 12.0, 4.0
#: Degrees off the heading within which an object is surely in front / beyond which it is not.
FRONT_SURE, FRONT_NOT = 10.0, 60.0
#: Metres from a landmark within which a thing is surely next to it / beyond which it is not.
NEAR_SURE, NEAR_NOT = 0.3, 0.55
#: Metres two objects must differ by for a selection (nearest, leftmost...) to be sure.
GAP = 0.1
#: Metres two objects' distances must differ by for "the nearest" ("farthest") to be sure.
DISTANCE_GAP = 0.2
#: Degrees two objects' bearings must differ by for an order along a side to be sure.
ANGLE_GAP = 5.0
#: How many times bigger (by volume) the biggest must be than the next for "the big one" to be
#: sure; below :data:`SIZE_NOT` times, the two are about as big and the choice is unsure.
SIZE_SURE, SIZE_NOT = 1.6, 1.1


@dataclass(frozen=True)
class Designation:
    """What words designate among some objects.

    Attributes:
        mode: ``one`` (exactly one object, surely), ``any`` (any of ``possible`` will do),
            ``several`` (more than one: the robot must ask), ``unread`` (a word no reader can
            place, or a side in a frame the scene does not give: it must ask), ``none``
            (nothing fits), ``vague`` (near a boundary: asking and acting on ``possible``
            are both fine).
        sure: the objectIds the words surely fit.
        possible: the objectIds they may fit.
        why: what makes the mode (for messages).
    """

    mode: str
    sure: frozenset[str] = frozenset()
    possible: frozenset[str] = frozenset()
    why: str = ""

    @property
    def allowed(self) -> frozenset[str] | None:
        """The objects the robot may act on without asking (None: none, it must ask)."""
        if self.mode in ("one", "any", "vague"):
            return self.possible
        return None


def _pos(obj: dict[str, Any]) -> tuple[float, float] | None:
    p = obj.get("position") or {}
    try:
        x, z = float(p["x"]), float(p["z"])
    except (KeyError, TypeError, ValueError):
        return None
    return (x, z) if math.isfinite(x) and math.isfinite(z) else None


def _pose(who: dict[str, Any] | None) -> tuple[tuple[float, float], float | None] | None:
    """A position and a heading (degrees, None: not given) of the robot or a person."""
    if who is None:
        return None
    at = _pos(who)
    if at is None:
        return None
    rotation = who.get("rotation")
    yaw = rotation.get("y") if isinstance(rotation, dict) else None
    return at, (float(yaw) if isinstance(yaw, (int, float)) else None)


def _angles(
    pose: tuple[tuple[float, float], float], at: tuple[float, float]
) -> tuple[float, float]:
    """``(bearing, lateral)`` in degrees: off the heading, and to a side (mirrored behind)."""
    (px, pz), yaw = pose
    rad = math.radians(yaw)
    hx, hz = math.sin(rad), math.cos(rad)
    rx, rz = hz, -hx  # the scene contract's right vector
    dx, dz = at[0] - px, at[1] - pz
    ahead, aside = dx * hx + dz * hz, dx * rx + dz * rz
    return math.degrees(math.atan2(aside, ahead)), math.degrees(math.atan2(aside, abs(ahead)))


def _aside(pose: tuple[tuple[float, float], float], at: tuple[float, float]) -> float:
    (px, pz), yaw = pose
    rad = math.radians(yaw)
    return (at[0] - px) * math.cos(rad) - (at[1] - pz) * math.sin(rad)


def _volume(obj: dict[str, Any]) -> float | None:
    """The volume of the scene's ``axisAlignedBoundingBox.size`` (None: not given)."""
    box = obj.get("axisAlignedBoundingBox")
    size = box.get("size") if isinstance(box, dict) else None
    if not isinstance(size, dict):
        return None
    try:
        sides = [float(size[a]) for a in "xyz"]
    except (KeyError, TypeError, ValueError):
        return None
    if not all(math.isfinite(v) and v >= 0 for v in sides):
        return None
    return sides[0] * sides[1] * sides[2]


def _by_size(world: _World, kept: dict[str, int], ids: list[str], say: Say) -> dict[str, int]:
    """ "The biggest", "the small one": the one clearly bigger (smaller) than every other."""
    out = dict.fromkeys(kept, NO)
    if len(ids) == 1:
        out[ids[0]] = YES
        return out
    volumes = {i: _volume(world.objects[i]) for i in ids}
    if any(v is None for v in volumes.values()):
        world.unread.append("a size the scene does not give")
        return {i: (MAYBE if i in ids else NO) for i in kept}
    sign = -1.0 if say.select == "biggest" else 1.0
    order = sorted(ids, key=lambda i: sign * (volumes[i] or 0.0))
    first, second = volumes[order[0]] or 0.0, volumes[order[1]] or 0.0
    big, small = max(first, second), min(first, second)
    ratio = big / small if small > 0 else math.inf
    if ratio >= SIZE_SURE:
        out[order[0]] = YES
    elif ratio > SIZE_NOT:
        out[order[0]] = out[order[1]] = MAYBE
    else:
        for i in order:
            v = volumes[i] or 0.0
            if max(v, first) <= min(v, first) * SIZE_NOT:
                out[i] = YES  # about as big as the first: several fit, a question
    return out


def _colour(has: str, said: str) -> int:
    """Whether an object of colour ``has`` is ``said``: a shade of it ("blue" said of a light
    blue one) is a maybe."""
    if has == said:
        return YES
    return MAYBE if said in has.split() else NO


class _World:
    """The scene dict, read plainly: objects by id, the robot's and the speaker's poses."""

    def __init__(self, scene: dict[str, Any], speaker: str | None) -> None:
        self.objects = {o["objectId"]: o for o in scene.get("objects") or []}
        agent = scene.get("agent") or {}
        robot = _pose({"position": agent.get("position"), "rotation": agent.get("rotation")})
        self.robot = None if robot is None or robot[1] is None else (robot[0], robot[1])
        person = next(
            (
                h
                for h in scene.get("humans") or []
                if speaker is not None and h.get("id") == speaker
            ),
            None,
        )
        self.speaker = _pose(person)
        self.unread: list[str] = []

    def frame(self, frame: str, what: str) -> tuple[tuple[float, float], float] | None:
        if frame != "my":
            return self.robot
        if self.speaker is None or self.speaker[1] is None:
            why = f"{what} in the speaker's frame, whose heading is not given"
            if why not in self.unread:
                self.unread.append(why)
            return None
        return (self.speaker[0], self.speaker[1])

    def side(self, obj: dict[str, Any], side: str, frame: str) -> int:
        pose = self.frame(frame, f"'{side}'")
        at = _pos(obj)
        if pose is None or at is None:
            return MAYBE
        bearing, lateral = _angles(pose, at)
        if side == "front":
            off = abs(bearing)
            return YES if off <= FRONT_SURE else NO if off >= FRONT_NOT else MAYBE
        v = -lateral if side == "left" else lateral
        return YES if v >= SIDE_SURE else NO if v <= SIDE_NOT else MAYBE

    def at(self, obj: dict[str, Any], kind: str) -> int:
        marks = [o for o in self.objects.values() if o.get("objectType") == kind]
        if LANDMARKS.get(kind) in ("in", "on"):
            parents = set(obj.get("parentReceptacles") or [])
            inside = any(
                m["objectId"] in parents or obj["objectId"] in (m.get("receptacleObjectIds") or [])
                for m in marks
            )
            return YES if inside else NO
        here = _pos(obj)
        far = [math.dist(here, p) for p in (_pos(m) for m in marks) if p is not None and here]
        if not far:
            return NO if here is not None else MAYBE
        d = min(far)
        return YES if d <= NEAR_SURE else NO if d > NEAR_NOT else MAYBE

    def test(self, obj: dict[str, Any], p: Pick) -> int:
        value = YES
        if p.colour:
            value = min(value, _colour(str(obj.get("color", "")).lower(), p.colour))
        if p.state:
            dirty = bool(obj.get("isDirty"))
            value = min(value, YES if dirty == (p.state == "dirty") else NO)
        if p.at:
            value = min(value, self.at(obj, p.at))
        if p.side:
            value = min(value, self.side(obj, p.side, p.frame))
        if p.odd and f"'{p.odd}'" not in self.unread:
            self.unread.append(f"'{p.odd}'")
        return value


def _select(world: _World, kept: dict[str, int], say: Say) -> dict[str, int]:
    """A selection among what the filter kept (sure only when the filter and the gaps are).

    Orders along a side are taken two ways, by the offset along the robot's right vector (m)
    and by the angle off its heading (degrees): near and far objects can order differently,
    and then the choice is unsure.
    """
    ids = [i for i, v in kept.items() if v > NO]
    if not ids:
        return kept
    if any(kept[i] == MAYBE for i in ids):
        return {i: (MAYBE if kept[i] > NO else NO) for i in kept}
    if say.select in ("biggest", "smallest"):
        return _by_size(world, kept, ids, say)
    where = {i: _pos(world.objects[i]) or (math.nan, math.nan) for i in ids}
    keys: list[tuple[dict[str, float], float]] = []
    if say.select in ("nearest", "farthest"):
        who = world.speaker if say.near == "my" else world.robot
        if who is None:
            world.unread.append("a distance from the speaker, who is not in the scene")
            return {i: (MAYBE if i in ids else NO) for i in kept}
        sign = -1.0 if say.select == "farthest" else 1.0
        keys.append(({i: sign * math.dist(who[0], where[i]) for i in ids}, DISTANCE_GAP))
    else:
        robot = world.robot
        if robot is None:
            return {i: (MAYBE if i in ids else NO) for i in kept}
        sign = -1.0 if say.select == "rightmost" else 1.0
        keys.append(({i: sign * _aside(robot, where[i]) for i in ids}, GAP))
        keys.append(({i: sign * _angles(robot, where[i])[0] for i in ids}, ANGLE_GAP))
    out = dict.fromkeys(kept, NO)
    picks: set[str] = set()
    unsure = False
    for key, gap in keys:
        order = sorted(ids, key=lambda i: key[i])
        if say.select == "middle":
            if len(order) % 2 == 0:
                return dict.fromkeys(kept, NO)  # no middle one
            want = len(order) // 2
        elif say.select == "second":
            if len(order) < 2:
                return dict.fromkeys(kept, NO)
            want = 1
        else:
            want = 0
        pick = order[want]
        close = [i for i in order if i != pick and abs(key[i] - key[pick]) < gap]
        # Neighbours within the gap make the choice unsure, and so does any unplaceable one.
        unsure = unsure or bool(close) or not all(math.isfinite(key[i]) for i in order)
        picks.update([pick, *close])
    for i in picks:
        out[i] = MAYBE if unsure or len(picks) > 1 else YES
    return out


def _scoped(world: _World, values: dict[str, int], say: Say) -> dict[str, int]:
    """A selection read both ways: among what the filter keeps ("the nearest of the red
    cups"), and over all of the kind, then filtered ("the nearest cup, the red one"). Where the
    readings differ, the object is a maybe."""
    among = _select(world, values, say)
    if say.select in ("biggest", "smallest"):
        return among  # "the big red cup": the biggest of the red ones
    overall = _select(world, dict.fromkeys(values, YES), say)
    out = {}
    for i, v in values.items():
        a, b = among[i], min(overall[i], v)
        out[i] = a if a == b else (MAYBE if max(a, b) > NO else NO)
    return out


def designate(
    say: Say,
    kind: str,
    scene: dict[str, Any],
    *,
    among: frozenset[str] | set[str] | None = None,
    speaker: str | None = None,
) -> Designation:
    """What ``say`` designates among the scene's objects of ``kind`` (and of ``among``).

    Args:
        say: the program.
        kind: the objectType it is about.
        scene: the scene (an AI2-THOR dict).
        among: only these objectIds (a reply's candidates); None: every object of ``kind``.
        speaker: the person who speaks (an id of ``humans``), for "my left", "closest to me".
    """
    world = _World(scene, speaker)
    objects = [
        o
        for o in world.objects.values()
        if o.get("objectType") == kind and (among is None or o["objectId"] in among)
    ]

    def filtered(p: Pick) -> dict[str, int]:
        return {o["objectId"]: world.test(o, p) for o in objects}

    values = filtered(say.base)
    if say.exclude is not None:
        out = filtered(say.exclude)
        values = {i: min(v, YES - out[i]) for i, v in values.items()}
    if say.select:
        values = _scoped(world, values, say)
    coordinated = None
    if say.alt is not None:
        coordinated = filtered(say.alt)
        values = {i: max(v, coordinated[i]) for i, v in values.items()}
    sure = frozenset(i for i, v in values.items() if v == YES)
    possible = frozenset(i for i, v in values.items() if v > NO)
    if world.unread:
        return Designation("unread", sure, possible, "; ".join(world.unread))
    if say.quant == "any":
        return Designation("any" if possible else "none", sure, possible, "any of them")
    if say.quant == "all":
        return Designation("several", sure, possible, "all of them")
    if coordinated is not None:
        if len(possible) >= 2:
            return Designation("several", sure, possible, "one or the other")
        return Designation("vague" if possible else "none", sure, possible, "one or the other")
    if not possible:
        return Designation("none", sure, possible, "nothing fits")
    if len(sure) == 1 and sure == possible:
        return Designation("one", sure, possible)
    if len(sure) >= 2:
        return Designation("several", sure, possible, "several fit")
    return Designation("vague", sure, possible, "near a boundary")


#: The choice a question offers: what follows "which ...:" up to its question mark.
_OPTIONS = re.compile(r"\bwhich\b[^:?]*:\s*([^?]*)\?", re.IGNORECASE)
#: Words an offered option may hold besides its noun, colour and state.
_OPTION_GLUE = frozenset({"the", "a", "an", "one"})


def offered(question: str, kind: str, scene: dict[str, Any], ids: Any) -> frozenset[str] | None:
    """The objects of ``ids`` (of ``kind``) a question offers to choose from, read here.

    "Which cup should I pick up: the green cup or the red cup?" offers the green cup and the
    red cup: each option after the colon, told by its colour and state words alone, must fit
    exactly one object, a different one each. None when the question offers no options, or
    one this reading cannot place for certain (a side, a relation, a word it does not know):
    the caller then reads a reply as if nothing had been offered.
    """
    found = _OPTIONS.findall(question)
    if not found:
        return None
    objects = [o for o in scene.get("objects") or [] if o.get("objectId") in set(ids)]
    colours = sorted(
        {str(o.get("color", "")).lower() for o in objects if o.get("color")},
        key=len,
        reverse=True,
    )
    nouns = {kind.lower(), kind.lower() + "s"}
    chosen: list[str] = []
    for option in re.split(r",\s*|\s+or\s+", found[-1].strip().lower()):
        text = f" {option.strip()} "
        colour = next((c for c in colours if f" {c} " in text), None)
        if colour is not None:
            text = text.replace(f" {colour} ", " ", 1)
        words = text.split()
        states = {w for w in words if w in ("dirty", "clean")}
        if len(states) > 1 or any(
            w not in _OPTION_GLUE | nouns | states and w not in colours for w in words
        ):
            return None  # a word this reading does not place (a side, a relation)
        fits = [
            o["objectId"]
            for o in objects
            if (colour is None or str(o.get("color", "")).lower() == colour)
            and (not states or bool(o.get("isDirty")) == ("dirty" in states))
        ]
        if len(fits) != 1 or fits[0] in chosen or not (colour or states):
            return None
        chosen.append(fits[0])
    return frozenset(chosen) if len(chosen) >= 2 else None


__all__ = ["Designation", "designate", "offered"]
