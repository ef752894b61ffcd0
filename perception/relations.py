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
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np

from bt_raider.errors import SceneNumberError, ToolError
from bt_raider.perception.validation import MAX_MAGNITUDE, plain_xyz

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


#: Appliances that hold one item at a time: occupied as soon as anything is in or on them.
SINGLE_SLOT_TYPES = frozenset({"CoffeeMachine", "Toaster"})


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
def _xz(pos: np.ndarray) -> np.ndarray:
    return np.array([pos[0], pos[2]], dtype=float)


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
    pa, pb = a.position, b.position
    return _finite(float(math.hypot(pa[0] - pb[0], pa[2] - pb[2])), "distance", a, b)


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


def _overlap_xz(bx: tuple[np.ndarray, np.ndarray], by: tuple[np.ndarray, np.ndarray]) -> bool:
    (xmin, xmax), (ymin, ymax) = bx, by
    return all(xmin[i] < ymax[i] and ymin[i] < xmax[i] for i in (0, 2))


def _above(x: Any, y: Any) -> bool:
    bx = x.bbox() if hasattr(x, "bbox") else None
    by = y.bbox() if hasattr(y, "bbox") else None
    if bx is None or by is None:
        return False
    if not (np.isfinite(bx).all() and np.isfinite(by).all()):
        _finite(math.nan, "bounding boxes", x, y)
    return bool(bx[0][1] >= by[1][1] - STACK_TOLERANCE) and _overlap_xz(bx, by)


def side_offset(scene: Any, x: Any, y: Any) -> float:
    """``(X - Y)·r`` in metres: positive when X is to the robot's right of Y."""
    offset = float((_xz(x.position) - _xz(y.position)) @ scene.right_vector())
    return _finite(offset, "side offset", x, y)


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
                if i not in out:
                    out.append(str(i))
    return out


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


def related(scene: Any, relation: str, y: Any) -> list[Any]:
    """All objects X (other than Y) such that "X <relation> Y", in scene order.

    ``closest_to`` gives the single nearest object (or none in an empty scene); ``blocking``
    gives the blockers ``blocked`` lists for Y first, then what sits on or in Y.

    The answer is :func:`holds` over every object, but read from a :class:`SpatialIndex`: only
    the objects within range of Y are compared, so a scene of thousands of objects costs what
    Y's neighbourhood costs. Inside :func:`indexed` the index is built once for many calls.

    Args:
        scene: the scene.
        relation: a canonical name or phrase.
        y: the reference object (or a person, for distance relations and ``blocking``).

    Raises:
        ToolError: for an unknown relation.
    """
    return index_of(scene).related(normalize_relation(relation), y)


def related_brute_force(scene: Any, relation: str, y: Any) -> list[Any]:
    """:func:`related` by the definition: :func:`holds` for every other object (for tests)."""
    rel = normalize_relation(relation)
    others = _others(scene, y)
    if rel == "closest_to":
        return [closest(scene, others, y)] if others else []
    if rel == "blocking":
        return _blockers(scene, y, [o for o in others if rests_on(o, y)])
    return [o for o in others if _holds(scene, rel, o, y)]


def _blockers(scene: Any, y: Any, resting: list[Any]) -> list[Any]:
    """What ``blocked`` lists for Y (objects only), then ``resting`` (what sits on or in Y)."""
    out: list[Any] = []
    for oid in blocker_ids(scene, keys_for(y)):
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


# ---------------------------------------------------------------------- the index
#: A radius query returns a superset this much wider (m), then the exact rule decides: a KD-tree
#: and :func:`horizontal_distance` may round a distance on the boundary differently.
_SLACK = 1e-9
#: Radius queries answer by one vectorised pass until this many were asked of one index; then a
#: KD-tree is built (worth it only when many anchors share the index).
_TREE_AFTER = 2


def _fast_xyz(obj: Any) -> tuple[float, float, float]:
    """An object's position as floats; the common case without building an array."""
    raw = getattr(obj, "raw", None)
    plain = plain_xyz(raw.get("position")) if type(raw) is dict else None
    if plain is not None:
        return plain
    pos = obj.position  # validates, and names the object when malformed
    return float(pos[0]), float(pos[1]), float(pos[2])


def _read_positions(objects: Sequence[Any]) -> np.ndarray:
    """``(n, 3)`` positions: one pass over the raw dicts, checked at once; else one by one.

    The batch holds only when every coordinate is a float within :data:`MAX_MAGNITUDE` (what
    ``SceneObject.position`` accepts without a word); anything else is read object by object,
    so a malformed position fails with the object's own error.
    """
    try:
        ps = [o.raw["position"] for o in objects]
        xs = [p["x"] for p in ps]
        ys = [p.get("y", 0.0) for p in ps]
        zs = [p["z"] for p in ps]
        if {*map(type, xs), *map(type, ys), *map(type, zs)} <= {float}:
            xyz = np.array([xs, ys, zs], dtype=float).T.reshape(-1, 3)
            if (np.abs(xyz) <= MAX_MAGNITUDE).all():
                return xyz
    except (AttributeError, KeyError, TypeError):
        pass
    return np.array([_fast_xyz(o) for o in objects], dtype=float).reshape(-1, 3)


class SpatialIndex:
    """One scene's positions, boxes and receptacle links, read once, for :func:`related`.

    Each part is read on first use (positions for left/right/near/closest, boxes for
    above/below, links for on/inside/blocking). The scene must not change while the index is
    used: :func:`related` builds one per call unless inside :func:`indexed`.

    Args:
        scene: the scene.
    """

    def __init__(self, scene: Any) -> None:
        self.scene = scene
        self.objects: list[Any] = list(scene.objects)
        self._lock = threading.Lock()
        self._xz: np.ndarray | None = None
        self._tree: Any = None
        self._queries = 0
        self._boxes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._links: dict[str, list[int]] | None = None
        self._by_id: dict[str, list[int]] | None = None

    # ------------------------------------------------------------------ parts
    def _positions(self) -> np.ndarray:
        if self._xz is None:
            xyz = _read_positions(self.objects)
            self._xz = np.ascontiguousarray(xyz[:, [0, 2]])
        return self._xz

    def _within(self, center: np.ndarray, radius: float) -> list[int]:
        """Indices of objects at most ``radius`` (plus slack) from ``center``, in scene order."""
        xz = self._positions()
        if not len(xz):
            return []
        r = radius + _SLACK
        with self._lock:
            self._queries += 1
            if self._tree is None and self._queries > _TREE_AFTER:
                from scipy.spatial import cKDTree  # scipy comes with unified-planning

                self._tree = cKDTree(xz)
            tree = self._tree
        if tree is not None:
            return sorted(tree.query_ball_point(center, r))
        d2 = ((xz - center) ** 2).sum(axis=1)
        return np.flatnonzero(d2 <= r * r).tolist()

    def _box_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(has_box, lo, hi)`` arrays; None when a box is not finite (the rule then refuses)."""
        if self._boxes is None:
            n = len(self.objects)
            has = np.zeros(n, dtype=bool)
            lo = np.zeros((n, 3))
            hi = np.zeros((n, 3))
            for i, o in enumerate(self.objects):
                box = o.bbox()
                if box is not None:
                    has[i] = True
                    lo[i], hi[i] = box
            self._boxes = (has, lo, hi)
        has, lo, hi = self._boxes
        if not (np.isfinite(lo[has]).all() and np.isfinite(hi[has]).all()):
            return None
        return self._boxes

    def _resting_on(self, y: Any) -> list[int]:
        """Indices of objects X with ``rests_on(X, Y)``, in scene order."""
        if not hasattr(y, "children"):
            return []
        if self._links is None or self._by_id is None:
            links: dict[str, list[int]] = {}
            by_id: dict[str, list[int]] = {}
            for i, o in enumerate(self.objects):
                by_id.setdefault(o.id, []).append(i)
                for parent in o.parents:
                    links.setdefault(parent, []).append(i)
            self._links, self._by_id = links, by_id
        found = set(self._links.get(y.id, ()))
        for child in y.children:
            found.update(self._by_id.get(child, ()))
        return sorted(found)

    # ------------------------------------------------------------------ answers
    def _pick(self, indices: Iterable[int], y: Any) -> list[Any]:
        return [self.objects[i] for i in indices if not _same(self.objects[i], y)]

    def related(self, rel: str, y: Any) -> list[Any]:
        """:func:`related` for a canonical relation name (see :data:`RELATIONS`)."""
        scene = self.scene
        if rel in ("left_of", "right_of", "near", "next_to"):
            return self._beside(rel, y)
        if rel == "closest_to":
            return self._closest(y)
        if rel in ("on_top_of", "inside"):
            resting = self._pick(self._resting_on(y), y)
            if not resting or is_container(y) != (rel == "inside"):
                return []
            return resting
        if rel in ("above", "below"):
            return self._stacked(rel, y)
        if rel == "blocking":
            return _blockers(scene, y, self._pick(self._resting_on(y), y))
        raise ToolError(f"unknown spatial relation {rel!r}: expected one of {', '.join(RELATIONS)}")

    def _beside(self, rel: str, y: Any) -> list[Any]:
        """left/right/near from the indexed positions, with the rule's own arithmetic.

        ``horizontal_distance`` and ``side_offset`` on the same float64 values: the index
        rows hold exactly what ``position`` reads, so the answer is the rule's to the bit.
        """
        side = rel in ("left_of", "right_of")
        pb = y.position
        yxz = _xz(pb)
        xz = self._positions()
        r = self.scene.right_vector() if side else None
        out = []
        for i in self._within(yxz, SIDE_RANGE if side else NEAR_DISTANCE):
            x = self.objects[i]
            if _same(x, y):
                continue
            pa = xz[i]
            dist = math.hypot(pa[0] - pb[0], pa[1] - pb[2])
            if not math.isfinite(dist):
                return [o for o in _others(self.scene, y) if _holds(self.scene, rel, o, y)]
            if not side:
                if dist <= NEAR_DISTANCE:
                    out.append(x)
                continue
            if dist > SIDE_RANGE:
                continue
            s = _finite(float((pa - yxz) @ r), "side offset", x, y)
            if (s > SIDE_MARGIN) if rel == "right_of" else (s < -SIDE_MARGIN):
                out.append(x)
        return out

    def _stacked(self, rel: str, y: Any) -> list[Any]:
        by = y.bbox() if hasattr(y, "bbox") else None
        if by is None:
            return []
        boxes = self._box_arrays()
        if boxes is None or not np.isfinite(by).all():
            # A box that is not finite: the rule, pair by pair, says which and refuses.
            return [o for o in _others(self.scene, y) if _holds(self.scene, rel, o, y)]
        has, lo, hi = boxes
        ylo, yhi = by
        overlap = has.copy()
        for i in (0, 2):
            overlap &= (lo[:, i] < yhi[i]) & (ylo[i] < hi[:, i])
        if rel == "above":  # X's bottom at or over Y's top (the same float sums as _above)
            level = lo[:, 1] >= yhi[1] - STACK_TOLERANCE
        else:  # Y's bottom at or over X's top
            level = ylo[1] >= hi[:, 1] - STACK_TOLERANCE
        return self._pick(np.flatnonzero(overlap & level).tolist(), y)

    def _closest(self, y: Any) -> list[Any]:
        xz = self._positions()
        center = _xz(y.position)
        keep = [i for i in range(len(self.objects)) if not _same(self.objects[i], y)]
        if not keep:
            return []
        d2 = ((xz[keep] - center) ** 2).sum(axis=1)
        # The vectorised distances only shortlist; the rule's own distance breaks near-ties.
        bound = float(np.sqrt(d2.min())) + _SLACK
        shortlist = [keep[j] for j in np.flatnonzero(np.sqrt(d2) <= bound)]
        return [closest(self.scene, [self.objects[i] for i in shortlist], y)]


_SCOPES: dict[int, list[Any]] = {}
_SCOPES_LOCK = threading.Lock()


@contextmanager
def indexed(scene: Any) -> Iterator[SpatialIndex]:
    """Share one :class:`SpatialIndex` of ``scene`` among every :func:`related` call inside.

    A check grounding "the apple left of the bowl" asks the relation once per bowl; inside this
    block the scene is read and indexed once for all of them. The scene must not change inside
    the block (a check reads one scene); blocks nest and may overlap across threads.

    Args:
        scene: the scene the relations are asked about.
    """
    key = id(scene)
    with _SCOPES_LOCK:
        entry = _SCOPES.get(key)
        if entry is None or entry[0] is not scene:
            entry = [scene, 0, SpatialIndex(scene)]
            _SCOPES[key] = entry
        entry[1] += 1
    try:
        yield entry[2]
    finally:
        with _SCOPES_LOCK:
            entry[1] -= 1
            if entry[1] == 0 and _SCOPES.get(key) is entry:
                del _SCOPES[key]


def index_of(scene: Any) -> SpatialIndex:
    """The index :func:`indexed` shares for ``scene``, else a fresh one."""
    entry = _SCOPES.get(id(scene))
    if entry is not None and entry[0] is scene:
        return entry[2]
    return SpatialIndex(scene)


def closest(scene: Any, candidates: Sequence[Any], y: Any) -> Any:
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
