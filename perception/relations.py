"""Spatial relations between scene objects, judged from the robot's viewpoint.

The rules are the contract of ``docs/scene-format.md`` section 2:

- **left_of / right_of Y**: with the robot's right vector ``r`` (``Scene.right_vector()``), X is
  right of Y when ``(X - Y)·r > 0.05 m`` (left when ``< -0.05 m``) and X is within 1.0 m of Y,
  horizontally.
- **on_top_of / inside Y**: Y is one of X's ``parentReceptacles`` (or X is one of Y's
  ``receptacleObjectIds``); *inside* when Y is a container (openable, or a container-like type
  such as Fridge, Cabinet, Bowl, Mug, Sink), *on top* otherwise. See :func:`is_container`.
- **above / below Y**: X's bounding box lies higher / lower than Y's and the boxes overlap in
  (x, z). Objects without a bounding box are never above or below anything.
- **near / next_to Y**: horizontal distance at most 0.5 m. **closest_to Y**: the single nearest
  other object.
- **blocking Y**: the objects perception's ``blocked`` report lists for Y, then the objects
  sitting on or inside Y (they must be removed before Y can be picked).

Every relation reads "X <relation> Y"; :func:`related` answers "which X?" as the
``check_obj_relationship`` tool does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from bt_raider.errors import BtRaiderError, SceneNumberError, ToolError
from bt_raider.perception.spatial import (
    Box,
    SpatialIndex,
    corners,
    finite_box,
    index_of,
    indexed,
    shared_index,
    xyz,
)

__all__ = [
    "CONTAINER_TYPES",
    "NEAR_DISTANCE",
    "RELATIONS",
    "RUNNING_APPLIANCE_TYPES",
    "SIDE_MARGIN",
    "SIDE_RANGE",
    "SINGLE_SLOT_TYPES",
    "STACK_TOLERANCE",
    "SURFACE_OPENABLES",
    "SpatialIndex",
    "blocker_ids",
    "closest",
    "expect",
    "holds",
    "horizontal_distance",
    "index_of",
    "indexed",
    "is_container",
    "keys_for",
    "normalize_relation",
    "related",
    "related_brute_force",
    "rests_on",
    "side_offset",
]

#: Canonical relation names, in the order tools list them.
RELATIONS: tuple[str, ...] = (
    "left_of",
    "right_of",
    "on_top_of",
    "inside",
    "above",
    "below",
    "near",
    "next_to",
    "closest_to",
    "blocking",
)
#: X must be this far (m) to one side of Y along the robot's right vector to count as left/right.
SIDE_MARGIN = 0.05
#: Left/right only relate objects within this horizontal distance (m) of each other.
SIDE_RANGE = 1.0
#: "near" / "next to": horizontal distance at most this (m).
NEAR_DISTANCE = 0.5
#: Resting objects interpenetrate their support slightly in AI2-THOR physics; a box whose bottom
#: is at most this far (m) below the other's top still counts as above it.
STACK_TOLERANCE = 0.02

#: Receptacle types that hold things *inside* them even when not openable.
CONTAINER_TYPES: frozenset[str] = frozenset(
    {
        "Fridge",
        "Cabinet",
        "Drawer",
        "Microwave",
        "Bowl",
        "Cup",
        "Mug",
        "Pot",
        "Pan",
        "Sink",
        "SinkBasin",
        "Bathtub",
        "BathtubBasin",
        "GarbageCan",
        "GarbageBag",
        "Box",
        "Safe",
        "Toaster",
        "CoffeeMachine",
        "LaundryHamper",
        "Kettle",
        "Vase",
        "Bottle",
        "WineBottle",
        "PillBottle",
        "TissueBox",
    }
)
#: Openable types whose contents sit on them (a toilet's lid, a laptop's keyboard).
SURFACE_OPENABLES: frozenset[str] = frozenset({"Toilet", "Laptop", "Book"})

# Phrase -> canonical name. Keys are normalised by _clean (lower case, single spaces, no "_"/"-").
_PHRASES: dict[str, str] = {}


#: Appliances that hold one item at a time: occupied as soon as anything is in or on them (a
#: Microwave heats one dish).
SINGLE_SLOT_TYPES = frozenset({"CoffeeMachine", "Toaster", "Microwave"})
#: Appliances that must be turned off before they are opened, or anything is put in or taken
#: out: while running (``isToggled``) they heat, spin or pour.
RUNNING_APPLIANCE_TYPES = frozenset(
    {
        "Microwave",
        "Toaster",
        "CoffeeMachine",
        "Oven",
        "Dishwasher",
        "WashingMachine",
        "ClothesDryer",
    }
)


def _add(canonical: str, *phrases: str) -> None:
    for p in (canonical.replace("_", " "), *phrases):
        _PHRASES[p] = canonical


_add(
    "left_of",
    "left",
    "to the left of",
    "on the left of",
    "at the left of",
    "on the left side of",
    "to the left side of",
    "on the left hand side of",
    "leftof",
)
_add(
    "right_of",
    "right",
    "to the right of",
    "on the right of",
    "at the right of",
    "on the right side of",
    "to the right side of",
    "on the right hand side of",
    "rightof",
)
_add(
    "on_top_of",
    "on",
    "on top",
    "on top of",
    "ontop",
    "ontop of",
    "onto",
    "atop",
    "upon",
    "on the top of",
    "sitting on",
    "resting on",
    "lying on",
    "placed on",
)
_add(
    "inside",
    "in",
    "inside of",
    "into",
    "within",
    "in the",
    "contained in",
    "stored in",
    "inside the",
)
_add("above", "over", "higher than", "on top and above")
_add("below", "under", "underneath", "beneath", "lower than", "beneath of", "underneath of")
_add("near", "near to", "nearby", "close to", "close", "by", "around", "in the vicinity of")
_add(
    "next_to",
    "next",
    "beside",
    "besides",
    "alongside",
    "adjacent to",
    "adjacent",
    "by the side of",
    "at the side of",
)
_add(
    "closest_to",
    "closest",
    "nearest",
    "nearest to",
    "the closest to",
    "the nearest to",
    "closest from",
    "nearest from",
)
_add(
    "blocking",
    "block",
    "blocks",
    "blocked by",
    "blocking access to",
    "obstructing",
    "obstructs",
    "occluding",
    "occludes",
    "in the way of",
)


def _clean(text: str) -> str:
    text = re.sub(r"[_\-]+", " ", text.lower())
    text = re.sub(r"[^a-z ]+", " ", text)
    return " ".join(text.split())


def normalize_relation(text: str) -> str:
    """The canonical name of a relation phrase.

    Args:
        text: a canonical name (``"left_of"``) or a phrase (``"to the left of"``, ``"on"``,
            ``"under"``, ``"next to"``, ``"closest to"``...), any case.

    Returns:
        One of :data:`RELATIONS`.

    Raises:
        ToolError: when the phrase names no known relation; the message lists the valid ones.
    """
    if not isinstance(text, str):
        raise ToolError(
            f"relation must be a string, got {text!r}; expected one of {', '.join(RELATIONS)}"
        )
    return _normalize_text(text)


@lru_cache(maxsize=256)
def _normalize_text(text: str) -> str:
    """:func:`normalize_relation` of a string, cached: a check asks one phrase per anchor."""
    key = _clean(text)
    # "is on top of", "which is inside" -> drop leading copulas and relative pronouns.
    key = re.sub(r"^(?:(?:that|which|who) )?(?:is |are |sits |lies )?", "", key)
    if key in _PHRASES:
        return _PHRASES[key]
    if key.endswith(" the") and key[:-4] in _PHRASES:  # "on top of the"
        return _PHRASES[key[:-4]]
    raise ToolError(
        f"unknown spatial relation {text!r}: expected one of {', '.join(RELATIONS)} "
        "(or a phrase such as 'to the left of', 'on top of', 'inside', 'under', 'next to')"
    )


# ---------------------------------------------------------------------- geometry helpers
def _right_xz(scene: Any) -> tuple[float, float]:
    """The robot's unit right vector ``(x, z)`` as floats (``Scene.right_xz``)."""
    right = getattr(scene, "right_xz", None)
    r = right() if right is not None else scene.right_vector()
    return float(r[0]), float(r[1])


def _finite(value: float, what: str, a: Any, b: Any) -> float:
    """``value`` when finite; a SceneNumberError (a ToolError) otherwise: a NaN would make
    every comparison False."""
    if not math.isfinite(value):
        raise SceneNumberError(
            f"the {what} between {_label(a)} and {_label(b)} is {value} (a position is not a "
            "finite number): cannot judge the relation"
        )
    return value


def _label(x: Any) -> str:
    return str(getattr(x, "name", None) or getattr(x, "id", None) or x)


def horizontal_distance(a: Any, b: Any) -> float:
    """Horizontal (x, z) distance in metres between two objects or people (``.position``).

    Raises:
        ToolError: when a position is not finite (never a NaN distance that compares False).
    """
    pa, pb = xyz(a), xyz(b)
    return _finite(math.hypot(pa[0] - pb[0], pa[2] - pb[2]), "distance", a, b)


def is_container(obj: Any) -> bool:
    """Whether things resting in ``obj`` are *inside* it (else they are *on top of* it).

    True for openable receptacles (Fridge, Cabinet, Drawer, Microwave...) and container-like
    types (:data:`CONTAINER_TYPES`), except openables whose contents sit on them
    (:data:`SURFACE_OPENABLES`).
    """
    otype = getattr(obj, "type", "")
    if otype in SURFACE_OPENABLES:
        return False
    return otype in CONTAINER_TYPES or bool(obj.flag("openable"))


def rests_on(x: Any, y: Any) -> bool:
    """Whether Y is X's receptacle (either side of the AI2-THOR parent/child link says so)."""
    if not hasattr(x, "parents") or not hasattr(y, "children"):
        return False  # people are nobody's receptacle
    return y.id in x.parents or x.id in y.children


def _box_above(bx: Box, by: Box) -> bool:
    """Box X's bottom at or over box Y's top (resting contact allowed), overlapping in x, z."""
    (xmin, xmax), (ymin, ymax) = bx, by
    return (
        xmin[1] >= ymax[1] - STACK_TOLERANCE
        and xmin[0] < ymax[0]
        and ymin[0] < xmax[0]
        and xmin[2] < ymax[2]
        and ymin[2] < xmax[2]
    )


def _above(x: Any, y: Any) -> bool:
    bx, by = corners(x), corners(y)
    if bx is None or by is None:
        return False
    if not (finite_box(bx) and finite_box(by)):
        _finite(math.nan, "bounding boxes", x, y)
    return _box_above(bx, by)


def side_offset(scene: Any, x: Any, y: Any) -> float:
    """``(X - Y)·r`` in metres: positive when X is to the robot's right of Y."""
    rx, rz = _right_xz(scene)
    pa, pb = xyz(x), xyz(y)
    return _finite((pa[0] - pb[0]) * rx + (pa[2] - pb[2]) * rz, "side offset", x, y)


def _others(scene: Any, y: Any) -> list[Any]:
    return [o for o in scene.objects if o is not y and getattr(y, "id", None) != o.id]


# ---------------------------------------------------------------------- public API
def blocker_ids(scene: Any, keys: Iterable[str]) -> list[str]:
    """ObjectIds the scene's ``blocked`` report lists under any of ``keys`` (case-insensitive).

    Args:
        scene: the scene.
        keys: the names the target may be filed under: its objectId, display name, a human's
            id or name, a location name.

    Returns:
        The blocker ids in report order, without duplicates (ids of objects that are not in
        ``objects`` are kept: perception may report an obstacle it cannot otherwise describe).
    """
    wanted = {k.lower() for k in keys if k}
    out: list[str] = []
    for key, ids in scene.blocked.items():
        if str(key).lower() in wanted:
            for i in ids:
                if i not in out and not _open_door(scene, str(i)):
                    out.append(str(i))
    return out


def _open_door(scene: Any, object_id: str) -> bool:
    """A door (or gate) listed as an obstacle that is open now: the way through is free."""
    try:
        o = scene.by_id(object_id)
    except Exception:
        return False
    return bool(
        o.type.lower().endswith(("door", "gate")) and o.flag("openable") and o.flag("isOpen")
    )


def keys_for(target: Any) -> list[str]:
    """The names a target may be filed under in ``blocked``: id, display name, person's name."""
    keys = [str(getattr(target, "id", ""))]
    name = getattr(target, "name", None)
    if name:
        keys.append(str(name))
    return keys


def holds(scene: Any, relation: str, x: Any, y: Any) -> bool:
    """Whether "X <relation> Y" holds.

    Args:
        scene: the :class:`~bt_raider.perception.scene.Scene` (for the robot's viewpoint).
        relation: a canonical name or phrase (see :func:`normalize_relation`).
        x: the object the relation is about.
        y: the reference object (a person works for the distance relations).

    Returns:
        True when it holds; an object is never in a relation with itself.

    Raises:
        ToolError: for an unknown relation.
    """
    return _holds(scene, normalize_relation(relation), x, y)


def _same(x: Any, y: Any) -> bool:
    return x is y or (
        getattr(x, "id", None) is not None and getattr(x, "id", None) == getattr(y, "id", None)
    )


def _holds(scene: Any, rel: str, x: Any, y: Any) -> bool:
    """:func:`holds` for a canonical relation name: the definition, one pair at a time."""
    if _same(x, y):
        return False
    if rel in ("left_of", "right_of"):
        if horizontal_distance(x, y) > SIDE_RANGE:
            return False
        s = side_offset(scene, x, y)
        return s > SIDE_MARGIN if rel == "right_of" else s < -SIDE_MARGIN
    if rel in ("on_top_of", "inside"):
        if not rests_on(x, y):
            return False
        return is_container(y) == (rel == "inside")
    if rel == "above":
        return _above(x, y)
    if rel == "below":
        return _above(y, x)
    if rel in ("near", "next_to"):
        return horizontal_distance(x, y) <= NEAR_DISTANCE
    if rel == "closest_to":
        others = _others(scene, y)
        return bool(others) and closest(scene, others, y) is x
    # blocking
    return any(o is x for o in related(scene, "blocking", y))


def related(scene: Any, relation: str, y: Any, among: Sequence[Any] | None = None) -> list[Any]:
    """All objects X (other than Y) such that "X <relation> Y", in scene order.

    ``closest_to`` gives the single nearest object (or none in an empty scene); ``blocking``
    gives the blockers ``blocked`` lists for Y first, then what sits on or in Y.

    The answer is :func:`holds` over every object, but read from a :class:`SpatialIndex`: only
    the objects within range of Y are compared, so a scene of thousands of objects costs what
    Y's neighbourhood costs. Inside :func:`indexed` the index is built once for many calls.

    With ``among``, X is one of those objects only ("which apple is left of the bowl"): the
    answer is the whole scene's answer restricted to them (``closest_to``: the nearest of
    them), and nothing else of the scene is read. A number that the answer needs -- Y's
    position, any of ``among``'s -- that is not finite is refused as ever; one of an object
    outside ``among`` is not read, so it cannot change the answer and is not refused.

    Args:
        scene: the scene.
        relation: a canonical name or phrase.
        y: the reference object (or a person, for distance relations and ``blocking``).
        among: the objects X may be (of ``scene``, in scene order); every object when None.

    Raises:
        ToolError: for an unknown relation, or a number the answer needs that is not finite.
    """
    return _indexed_related(index_of(scene, among), normalize_relation(relation), y)


def expect(
    scene: Any, relation: str, anchors: Iterable[Any], among: Sequence[Any] | None = None
) -> None:
    """Say that :func:`related` is about to be asked of each anchor, inside :func:`indexed`.

    A large scene's index then finds the neighbourhoods of all the anchors in one pass (the
    same answers, asked one by one). A hint: outside :func:`indexed`, for a relation read
    from links or for anything it cannot read, it does nothing; the answers never change.

    Args:
        scene: the scene.
        relation: a canonical name or phrase.
        anchors: the reference objects that will be asked about.
        among: the ``among`` of the calls that will be made (see :func:`related`).
    """
    try:
        rel = normalize_relation(relation)
    except ToolError:
        return  # the call itself will say so
    index = shared_index(scene, among)
    if index is None or rel not in ("left_of", "right_of", "near", "next_to"):
        return
    points = []
    for y in anchors:
        try:
            x, _, z = xyz(y)
        except (BtRaiderError, AttributeError, TypeError, ValueError, KeyError, IndexError):
            continue  # asked one by one, the relation names what is wrong
        points.append((x, z))
    index.expect(points, SIDE_RANGE if rel in ("left_of", "right_of") else NEAR_DISTANCE)


def related_brute_force(scene: Any, relation: str, y: Any) -> list[Any]:
    """:func:`related` by the definition: :func:`holds` for every other object (for tests)."""
    rel = normalize_relation(relation)
    others = _others(scene, y)
    if rel == "closest_to":
        return [closest(scene, others, y)] if others else []
    if rel == "blocking":
        return _blockers(scene, y, [o for o in others if rests_on(o, y)])
    return [o for o in others if _holds(scene, rel, o, y)]


def _blockers(
    scene: Any, y: Any, resting: list[Any], among: Sequence[Any] | None = None
) -> list[Any]:
    """What ``blocked`` lists for Y (objects only; of ``among`` only, when given), then
    ``resting`` (what sits on or in Y)."""
    out: list[Any] = []
    listed = blocker_ids(scene, keys_for(y))
    if listed and among is not None:
        allowed = {getattr(o, "id", None) for o in among}
        listed = [oid for oid in listed if oid in allowed]
    for oid in listed:
        try:
            obj = scene.by_id(oid)
        except ToolError:  # an obstacle perception could not otherwise describe
            continue
        if obj is not y and obj not in out:
            out.append(obj)
    for o in resting:
        if o not in out:
            out.append(o)
    return out


# ---------------------------------------------------------------------- read from the index
def _pick(index: SpatialIndex, rows: Iterable[int], y: Any) -> list[Any]:
    """The objects of ``rows`` but Y (:func:`_same`, Y's id read once)."""
    objects = index.objects
    y_id = getattr(y, "id", None)
    if y_id is None:
        return [objects[i] for i in rows if objects[i] is not y]
    return [
        x for x in map(objects.__getitem__, rows) if x is not y and getattr(x, "id", None) != y_id
    ]


def _by_rule(index: SpatialIndex, rel: str, y: Any) -> list[Any]:
    """The pair-by-pair rule over the index's objects: for what the index cannot read (it then
    says which and why)."""
    return [o for o in index.objects if not _same(o, y) and _holds(index.scene, rel, o, y)]


def _indexed_related(index: SpatialIndex, rel: str, y: Any) -> list[Any]:
    """:func:`related` for a canonical relation name, the rules applied to the index's
    candidates."""
    if rel in ("left_of", "right_of", "near", "next_to"):
        return _beside(index, rel, y)
    if rel == "closest_to":
        keep = [i for i, o in enumerate(index.objects) if not _same(o, y)]
        if not keep:
            return []
        yx, _, yz = xyz(y)
        if math.isfinite(yx) and math.isfinite(yz):
            # The index only shortlists; the rule's own distance breaks near-ties.
            keep = index.nearest(keep, yx, yz)
        return [closest(index.scene, [index.objects[i] for i in keep], y)]
    if rel in ("on_top_of", "inside"):
        resting = _pick(index, index.resting_on(y), y)
        if not resting or is_container(y) != (rel == "inside"):
            return []
        return resting
    if rel in ("above", "below"):
        by = corners(y)
        if by is None:
            return []
        boxes = index.boxes()
        if boxes is None or not finite_box(by):
            return _by_rule(index, rel, y)  # a box that is not finite: the rule says which
        out = []
        for i in index.overlapping(by):
            x, bx = index.objects[i], boxes[i]
            if bx is not None and not _same(x, y):
                if _box_above(bx, by) if rel == "above" else _box_above(by, bx):
                    out.append(x)
        return out
    if rel == "blocking":
        among = index.objects if index.partial else None
        return _blockers(index.scene, y, _pick(index, index.resting_on(y), y), among)
    raise ToolError(f"unknown spatial relation {rel!r}: expected one of {', '.join(RELATIONS)}")


def _beside(index: SpatialIndex, rel: str, y: Any) -> list[Any]:
    """left/right/near from the indexed positions, with the rule's own arithmetic.

    The same float subtractions, ``math.hypot`` and side offset as ``horizontal_distance`` and
    ``side_offset``, on the same floats: the answer is the rule's to the bit.
    """
    side = rel in ("left_of", "right_of")
    limit = SIDE_RANGE if side else NEAR_DISTANCE
    yx, _, yz = xyz(y)
    if not (math.isfinite(yx) and math.isfinite(yz)):
        return _by_rule(index, rel, y)  # a duck-typed anchor's NaN: the rule refuses
    rx, rz = _right_xz(index.scene) if side else (0.0, 0.0)
    xs, zs = index.coords()
    objects = index.objects
    y_id = getattr(y, "id", None)  # _same, Y's side read once
    hypot, isfinite, right = math.hypot, math.isfinite, rel == "right_of"
    out = []
    for i in index.within(yx, yz, limit):
        x = objects[i]
        if x is y or (y_id is not None and getattr(x, "id", None) == y_id):
            continue
        dx, dz = xs[i] - yx, zs[i] - yz
        dist = hypot(dx, dz)
        if not dist <= limit:
            if not isfinite(dist):  # a duck-typed position: the rule names it
                return _by_rule(index, rel, y)
            continue
        if not side:
            out.append(x)
            continue
        s = dx * rx + dz * rz
        if not isfinite(s):
            _finite(s, "side offset", x, y)
        if (s > SIDE_MARGIN) if right else (s < -SIDE_MARGIN):
            out.append(x)
    return out


#: A candidate of :func:`closest`: it returns one of those it is given.
_T = TypeVar("_T")


def closest(scene: Any, candidates: Sequence[_T], y: Any) -> _T:
    """The candidate nearest to Y, horizontally (ties: the first in ``candidates``).

    Args:
        scene: the scene (unused by the rule; kept so every relation function reads alike).
        candidates: objects (or people) to choose from; Y itself is skipped.
        y: the reference object or person.

    Raises:
        ToolError: when there is no candidate other than Y.
    """
    pool = [c for c in candidates if c is not y]
    if not pool:
        raise ToolError(
            f"no candidate to compare with {getattr(y, 'name', y)!r}: the list is empty"
        )
    return min(pool, key=lambda c: horizontal_distance(c, y))
