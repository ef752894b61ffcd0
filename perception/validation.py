"""What a scene may hold, and reading a scene file without trusting it.

:func:`validate_scene` checks the structure of ``docs/scene-format.md`` section 1 and that
every number is one the reasoners can use: finite, geometry within :data:`MAX_MAGNITUDE`
(10 km, or degrees for angles), sizes and distances not negative, ``robot.reach`` and
``robot.handover_distance`` more than 0. The readers (:func:`as_number`, :func:`as_vector`,
:func:`as_flag`, :func:`as_box`) apply the same rules where a value is read, so a scene changed
after it was validated (a simulated world, a user's dict) still never yields a NaN distance.
:func:`read_scene_json` reads a file defensively: regular files only, a size cap, UTF-8, a
depth and a digit limit.

No numpy here: ``bt-raider check`` reads and checks a scene in plain Python (numpy's import
alone costs more than a whole check). :func:`as_xyz` and :func:`box_corners` give tuples;
:func:`as_vector` and :func:`as_box` give the same numbers as numpy arrays, importing numpy
when first called. A numpy scalar in a user's dict is a number like any other.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bt_raider.errors import SceneError

if TYPE_CHECKING:
    import numpy as np

#: A point ``(x, y, z)`` in metres.
XYZ = tuple[float, float, float]

#: Capability flags of AI2-THOR objects (absent means False).
CAPABILITIES = (
    "pickupable",
    "openable",
    "toggleable",
    "sliceable",
    "receptacle",
    "dirtyable",
    "canFillWithLiquid",
    "cookable",
    "breakable",
    "moveable",
)
#: State flags of AI2-THOR objects (absent means False).
STATES = (
    "isOpen",
    "isToggled",
    "isSliced",
    "isDirty",
    "isFilledWithLiquid",
    "isCooked",
    "isBroken",
    "isPickedUp",
)
ROBOT_DEFAULTS: dict[str, float] = {"reach": 1.1, "handover_distance": 0.5, "arms": 1}
#: Pose assumed when a scene has no ``agent`` (perception output without a robot pose).
DEFAULT_AGENT: dict[str, Any] = {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}}

#: Largest magnitude of a coordinate, box size or distance (metres) or an angle (degrees) in a
#: scene: 10 km is far beyond any room a robot acts in, so a larger value is a corrupt reading,
#: not a place. Within it every distance the tools compute stays finite and exact to the mm.
MAX_MAGNITUDE = 1e4
#: Keys whose numbers (at any depth below them) are geometry, held to :data:`MAX_MAGNITUDE`.
GEOMETRY_KEYS = frozenset(
    {
        "position",
        "rotation",
        "axisAlignedBoundingBox",
        "objectOrientedBoundingBox",
        "distance",
        "cameraHorizon",
        "locations",
    }
)
#: Keys whose numbers cannot be negative: box sizes and distances.
NON_NEGATIVE_KEYS = frozenset({"size", "distance"})
#: Deepest nesting of objects and lists a scene may hold (AI2-THOR metadata is 5 deep); deeper
#: data is refused before anything recurses into it.
MAX_DEPTH = 64
#: Most bytes :meth:`Scene.load` reads unless told otherwise (the FloorPlan1 kitchen: 0.2 MiB).
MAX_SCENE_BYTES = 64 * 1024 * 1024
#: Most digits of an integer in a scene file: past 308 no float holds it, and parsing longer
#: digit strings costs quadratic time (Python refuses 4,300 and more anyway).
MAX_INT_DIGITS = 308
#: A robot's ``arms``: a whole number in this range.
MAX_ARMS = 64
_FLOAT_MAX = sys.float_info.max


def show_value(value: Any, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters (a 5,000-digit number stays one short line)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**limit:
        # str() of an integer over 4,300 digits raises: count the digits from its bits.
        digits = len(str(abs(value))) if abs(value).bit_length() < 10_000 else None
        return f"an integer of {digits or f'about {int(value.bit_length() * 0.30103)}'} digits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _numpy_kinds(*names: str) -> tuple[type, ...]:
    """numpy's scalar types ``names``, when numpy is loaded (else no value can be one)."""
    np = sys.modules.get("numpy")
    try:
        return tuple(getattr(np, name) for name in names) if np is not None else ()
    except AttributeError:  # numpy half-imported on another thread: none of its values yet
        return ()


def is_number(value: Any) -> bool:
    """Whether ``value`` is an int or float (numpy's too), not a bool."""
    kind = type(value)
    if kind is float or kind is int:
        return True
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float)) or isinstance(value, _numpy_kinds("integer", "floating"))


def _is_integer(value: Any) -> bool:
    """Whether ``value`` is an int (numpy's too): compared exactly, never through a float."""
    return isinstance(value, int) or isinstance(value, _numpy_kinds("integer"))


def as_number(
    value: Any, where: str, *, low: float = -MAX_MAGNITUDE, high: float = MAX_MAGNITUDE
) -> float:
    """``value`` as a float when it is a finite number in ``[low, high]``; else a SceneError.

    Every number a check reads goes through here, so NaN, infinity or a value out of range is
    refused where it is read (a scene changed after loading included), never reasoned with.
    """
    kind = type(value)
    if (kind is float or kind is int) and low <= value <= high:
        return float(value)  # the common case, fast (NaN fails the comparison)
    if not is_number(value):
        raise SceneError(f"{where}: must be a number, got {show_value(value)}")
    if _is_integer(value) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
        x = math.inf
    else:
        x = float(value)
    if not (math.isfinite(x) and low <= x <= high):
        raise SceneError(
            f"{where}: must be a finite number from {low:g} to {high:g}, got {show_value(value)}"
        )
    return x


def plain_xyz(value: Any) -> tuple[float, float, float] | None:
    """``(x, y, z)`` of a dict of in-range floats (y optional), else None: the common case.

    Checked with plain comparisons, no numpy: hot loops over every object of a scene take this
    path and fall back to :func:`as_vector` (which names the bad field) for anything else.
    """
    if type(value) is not dict:
        return None
    x, y, z = value.get("x"), value.get("y", 0.0), value.get("z")
    if (
        type(x) is float
        and type(y) is float
        and type(z) is float
        and -MAX_MAGNITUDE <= x <= MAX_MAGNITUDE
        and -MAX_MAGNITUDE <= y <= MAX_MAGNITUDE
        and -MAX_MAGNITUDE <= z <= MAX_MAGNITUDE
    ):
        return x, y, z
    return None


def as_xyz(value: Any, where: str) -> XYZ:
    """A ``{x, y, z}`` dict (y optional) as ``(x, y, z)`` floats, or a SceneError naming ``where``.

    Each coordinate must be a finite number within :data:`MAX_MAGNITUDE` metres.
    """
    plain = plain_xyz(value)
    if plain is not None:
        return plain  # the common case, fast
    if not isinstance(value, dict):
        raise SceneError(f"{where}: expected an object with x, y, z, got {show_value(value)}")
    for key in ("x", "z"):
        if key not in value:
            raise SceneError(f"{where}.{key}: missing (expected numbers x, y, z)")
    return (
        as_number(value["x"], f"{where}.x"),
        as_number(value.get("y", 0.0), f"{where}.y"),
        as_number(value["z"], f"{where}.z"),
    )


def as_vector(value: Any, where: str) -> np.ndarray:
    """:func:`as_xyz` as a float array (numpy is imported on first use)."""
    import numpy as np

    return np.array(as_xyz(value, where), dtype=float)


def _check_xyz(value: Any, where: str) -> None:
    """The shape of a ``{x, y, z}`` dict (y optional) of numbers; their range is checked apart."""
    if not isinstance(value, dict):
        raise SceneError(f"{where}: expected an object with x, y, z, got {show_value(value)}")
    for key in ("x", "y", "z"):
        if key in value:
            if not is_number(value[key]):
                raise SceneError(f"{where}.{key}: must be a number, got {show_value(value[key])}")
        elif key != "y":
            raise SceneError(f"{where}.{key}: missing (expected numbers x, y, z)")


def _check_box(box: Any, where: str) -> None:
    """The shape of an ``axisAlignedBoundingBox``: center and size, or cornerPoints."""
    if not box:
        return
    if not isinstance(box, dict):
        raise SceneError(f"{where}: expected an object with center and size, got {show_value(box)}")
    if box.get("center") is not None and box.get("size") is not None:
        _check_xyz(box["center"], f"{where}.center")
        _check_xyz(box["size"], f"{where}.size")
        return
    corners = box.get("cornerPoints")
    if not corners:
        return
    if not isinstance(corners, list):
        raise SceneError(f"{where}.cornerPoints: expected a list of [x, y, z] points")
    for i, point in enumerate(corners):
        if not (isinstance(point, list) and len(point) == 3 and all(is_number(c) for c in point)):
            raise SceneError(
                f"{where}.cornerPoints[{i}]: expected [x, y, z], got {show_value(point)}"
            )


def _points(value: Any, where: str) -> list[XYZ]:
    """A non-empty list of ``[x, y, z]`` points (``cornerPoints``) as float triples."""
    if not isinstance(value, list) or not value:
        raise SceneError(f"{where}: expected a list of [x, y, z] points, got {show_value(value)}")
    rows: list[XYZ] = []
    for i, point in enumerate(value):
        if not isinstance(point, (list, tuple)) or len(point) != 3:
            raise SceneError(f"{where}[{i}]: expected [x, y, z], got {show_value(point)}")
        x, y, z = (as_number(c, f"{where}[{i}][{j}]") for j, c in enumerate(point))
        rows.append((x, y, z))
    return rows


def as_flag(raw: dict[str, Any], key: str, default: bool, where: str) -> bool:
    """A true/false field; anything else (a NaN, 1, "yes") is refused, not read as truthy."""
    value = raw.get(key, default)
    if isinstance(value, bool) or isinstance(value, _numpy_kinds("bool_")):
        return bool(value)
    raise SceneError(f"{where}.{key}: must be true or false, got {show_value(value)}")


def box_corners(box: Any, where: str) -> tuple[XYZ, XYZ] | None:
    """``(min_corner, max_corner)`` of an ``axisAlignedBoundingBox`` (None when it has none)."""
    if not box:
        return None
    if not isinstance(box, dict):
        raise SceneError(f"{where}: expected an object with center and size, got {show_value(box)}")
    if box.get("center") is not None and box.get("size") is not None:
        cx, cy, cz = as_xyz(box["center"], f"{where}.center")
        sx, sy, sz = as_xyz(box["size"], f"{where}.size")
        if sx < 0 or sy < 0 or sz < 0:
            raise SceneError(f"{where}.size: sizes cannot be negative, got {box['size']!r}")
        # Halved as numpy would (size / 2, then center -/+ it): the same floats either way.
        hx, hy, hz = sx / 2, sy / 2, sz / 2
        return (cx - hx, cy - hy, cz - hz), (cx + hx, cy + hy, cz + hz)
    corners = box.get("cornerPoints")
    if corners:
        pts = _points(corners, f"{where}.cornerPoints")
        xs, ys, zs = zip(*pts, strict=True)
        return (min(xs), min(ys), min(zs)), (max(xs), max(ys), max(zs))
    return None


def as_box(box: Any, where: str) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`box_corners` as two float arrays (numpy is imported on first use)."""
    corners = box_corners(box, where)
    if corners is None:
        return None
    import numpy as np

    return np.array(corners[0], dtype=float), np.array(corners[1], dtype=float)


def check_robot(robot: dict[str, Any], where: str) -> None:
    for key in ("reach", "handover_distance"):
        if key in robot:
            value = as_number(robot[key], f"{where}.{key}", low=0.0)
            if value <= 0:
                raise SceneError(
                    f"{where}.{key}: must be more than 0 m (at most {MAX_MAGNITUDE:g}), got "
                    f"{show_value(robot[key])}"
                )
    if "arms" in robot:
        arms = robot["arms"]
        if not (
            is_number(arms) and as_number(arms, f"{where}.arms", low=1, high=MAX_ARMS) % 1 == 0
        ):
            raise SceneError(
                f"{where}.arms: must be a whole number from 1 to {MAX_ARMS}, got {show_value(arms)}"
            )


def _check_numbers(data: Any, source: str) -> None:
    """Every number in ``data`` finite; geometry within :data:`MAX_MAGNITUDE`; not too deep.

    Walks the whole document without recursion (a hostile file cannot overflow the stack), so
    a NaN is refused even in a field no tool reads today. The message gives the key path.
    A document :func:`_numbers_fine` clears in bulk is not walked one value at a time.
    """
    if _numbers_fine(data):
        return
    stack: list[tuple[Any, tuple[Any, ...], bool]] = [(data, (), False)]
    while stack:
        node, path, geometry = stack.pop()
        if len(path) > MAX_DEPTH:
            raise SceneError(
                f"{source}: {_path_text(path[:8])}...: nested deeper than {MAX_DEPTH} levels"
            )
        # A location may be called "size"; an object's size or distance is not negative.
        in_sizes = bool(path) and path[-1] in NON_NEGATIVE_KEYS and path[0] != "locations"
        low = 0.0 if in_sizes else (-MAX_MAGNITUDE if geometry else -_FLOAT_MAX)
        high = MAX_MAGNITUDE if geometry else _FLOAT_MAX
        is_dict = isinstance(node, dict)
        for key, value in node.items() if is_dict else enumerate(node):
            kind = type(value)
            if kind is float or kind is int:
                # The common cases first and fast (NaN fails every comparison).
                if 0 <= value <= MAX_MAGNITUDE or (
                    low <= value <= high
                    and not (is_dict and (key in GEOMETRY_KEYS or key in NON_NEGATIVE_KEYS))
                ):
                    continue
            elif kind is dict or kind is list:
                stack.append((value, (*path, key), geometry or key in GEOMETRY_KEYS))
                continue
            elif kind is bool or kind is str or value is None:
                continue
            elif isinstance(value, (dict, list)):
                stack.append((value, (*path, key), geometry or key in GEOMETRY_KEYS))
                continue
            elif not is_number(value):
                continue
            _check_number(data, source, (*path, key), value, geometry)


_PLAIN_NUMBERS = frozenset({float, int})
_CONTAINERS = frozenset({dict, list})
_KNOWN_TYPES = frozenset({float, int, str, bool, type(None), dict, list})
#: Most keys :func:`_numbers_fine` reads as columns of one group of dicts.
_MAX_COLUMNS = 256


def _numbers_fine(data: Any) -> bool:
    """Whether :func:`_check_numbers` would refuse nothing in ``data``, told column by column.

    True only when that is certain; False means "walk it" (a fault, or just something unusual:
    a numpy number, a subclass, deep nesting, a sum that overflows, many or sparse keys). The
    values at one key path (every object's ``position.x``, all the rows of every
    ``cornerPoints``) share what the walk knows of them (geometry, sizes, the first key, the
    depth), so they are checked together, in C: their types by ``set(map(type, ...))``, a NaN
    or an infinity by the ``sum`` (not finite then), the range by ``min`` and ``max``. A scene
    of a hundred objects is a hundred such columns instead of two thousand containers.
    """
    if type(data) is not dict:
        return False
    # A column: its values, their depth, geometry, not negative, last key a size key, first key.
    columns: list[tuple[Sequence[Any], int, bool, bool, bool, Any]] = [
        ([data], 0, False, False, False, None)
    ]
    while columns:
        values, depth, geometry, non_negative, sized, top = columns.pop()
        kinds = set(map(type, values))
        if not kinds <= _KNOWN_TYPES:
            return False  # a numpy number, a tuple, a subclass: the walk judges it
        if not kinds.isdisjoint(_PLAIN_NUMBERS):
            numbers = (
                values
                if kinds <= _PLAIN_NUMBERS
                else [v for v in values if type(v) is float or type(v) is int]
            )
            low = 0.0 if non_negative else (-MAX_MAGNITUDE if geometry else -_FLOAT_MAX)
            high = MAX_MAGNITUDE if geometry else _FLOAT_MAX
            try:
                if not (
                    math.isfinite(sum(numbers)) and low <= min(numbers) and max(numbers) <= high
                ):
                    return False
            except OverflowError:  # an integer past the float range: the walk names it
                return False
        if kinds.isdisjoint(_CONTAINERS):
            continue
        if depth + 2 > MAX_DEPTH:
            return False  # the walk says how deep is too deep
        if dict in kinds:
            dicts = values if len(kinds) == 1 else [v for v in values if type(v) is dict]
            if len(dicts[0]) > _MAX_COLUMNS:
                return False  # the columns would cost more than the walk
            if len(set(map(tuple, dicts))) == 1:
                # The same keys in the same order (the objects of a scene): read as a table.
                by_key: Iterable[tuple[Any, Sequence[Any]]] = zip(
                    dicts[0], zip(*map(dict.values, dicts), strict=True), strict=True
                )
            else:
                keys = set(chain.from_iterable(dicts))
                if (
                    len(keys) > _MAX_COLUMNS
                    or len(keys) * len(dicts) > 2 * sum(map(len, dicts)) + 64
                ):
                    return False  # keys so many or sparse the columns cost more than the walk
                # None where a dict lacks the key: no number there.
                by_key = ((k, list(map(dict.get, dicts, repeat(k)))) for k in keys)
            for key, column in by_key:
                head = key if depth == 0 else top
                columns.append(
                    (
                        column,
                        depth + 1,
                        geometry or key in GEOMETRY_KEYS,
                        head != "locations" and (key in NON_NEGATIVE_KEYS or sized),
                        key in NON_NEGATIVE_KEYS,
                        head,
                    )
                )
        if list in kinds:
            lists = values if len(kinds) == 1 else [v for v in values if type(v) is list]
            # Items are keyed by an index: only the list's own key can make them sizes.
            columns.append(
                (
                    list(chain.from_iterable(lists)),
                    depth + 1,
                    geometry,
                    top != "locations" and sized,
                    False,
                    top,
                )
            )
    return True


def _check_number(
    data: Any, source: str, path: tuple[Any, ...], value: Any, geometry: bool
) -> None:
    """The slow path of :func:`_check_numbers` for one number: its bounds, or a SceneError."""
    key = path[-1]
    geo = geometry or key in GEOMETRY_KEYS
    non_negative = path[0] != "locations" and (
        key in NON_NEGATIVE_KEYS or (len(path) > 1 and path[-2] in NON_NEGATIVE_KEYS)
    )
    low = 0.0 if non_negative else (-MAX_MAGNITUDE if geo else -_FLOAT_MAX)
    high = MAX_MAGNITUDE if geo else _FLOAT_MAX
    if _finite_in(value, low, high):
        return
    where = f"{source}: {_path_text(path, data)}"
    if geo or non_negative:
        as_number(value, where, low=low, high=high)
    raise SceneError(f"{where}: must be a finite number, got {show_value(value)}")


def _finite_in(value: Any, low: float, high: float) -> bool:
    if _is_integer(value):
        return low <= value <= high  # exact, even for an integer of 400 digits
    x = float(value)
    return math.isfinite(x) and low <= x <= high


def _path_text(path: tuple[Any, ...], data: Any = None) -> str:
    """``objects[3].position.x``, after the objectId (or person id) it belongs to, if any."""
    out = ""
    owner = None
    node = data
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else ("." if out else "") + str(key)
        if node is not None:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                node = None
            if owner is None and isinstance(key, int) and isinstance(node, dict):
                ident = node.get("objectId", node.get("id"))
                owner = ident if isinstance(ident, str) else None
    return out if owner is None else f"objectId {_cut(owner)!r} at {out}"


_FLAGS = CAPABILITIES + STATES + ("visible",)
_BOOLS = frozenset({bool})
_STRINGS = frozenset({str})
_LISTS = frozenset({list})
_THREE = frozenset({3})


def _object_fine(obj: dict[str, Any]) -> bool:
    """Whether :func:`validate_scene`'s checks of one object's shape would pass (True only when
    certain: exact types, no subclass): ids, position, box, flags, receptacle lists."""
    oid, otype = obj.get("objectId"), obj.get("objectType")
    if not (type(oid) is str and oid and type(otype) is str and otype):
        return False
    if not _plain_xyz(obj.get("position")):
        return False
    box = obj.get("axisAlignedBoundingBox")
    if box:
        if type(box) is not dict:
            return False
        if box.get("center") is not None and box.get("size") is not None:
            if not (_plain_xyz(box["center"]) and _plain_xyz(box["size"])):
                return False
        else:
            corners = box.get("cornerPoints")
            if corners and not (
                type(corners) is list
                and set(map(type, corners)) <= _LISTS
                and set(map(len, corners)) <= _THREE
                and _PLAIN_NUMBERS.issuperset(map(type, chain.from_iterable(corners)))
            ):
                return False
    if not _BOOLS.issuperset(map(type, map(obj.get, _FLAGS, repeat(False)))):
        return False
    for key in ("parentReceptacles", "receptacleObjectIds"):
        ids = obj.get(key)
        if ids is not None and not (type(ids) is list and _STRINGS.issuperset(map(type, ids))):
            return False
    return True


def _plain_xyz(value: Any) -> bool:
    """Whether ``value`` is a dict with numbers x and z and, if any, y (their range apart)."""
    return (
        type(value) is dict
        and type(value.get("x")) in _PLAIN_NUMBERS
        and type(value.get("z")) in _PLAIN_NUMBERS
        and type(value.get("y", 0.0)) in _PLAIN_NUMBERS
    )


def validate_scene(data: Any, source: str = "<dict>") -> None:
    """Raise :class:`SceneError` naming the source, object index and field of the first fault.

    Besides the structure of ``docs/scene-format.md``, every number must be finite; positions,
    rotations, bounding boxes, distances and locations within :data:`MAX_MAGNITUDE` (metres or
    degrees); sizes and distances not negative; ``robot.reach`` and ``robot.handover_distance``
    more than 0; ``robot.arms`` a whole number from 1 to :data:`MAX_ARMS`; and the document at
    most :data:`MAX_DEPTH` levels deep.
    """
    if not isinstance(data, dict):
        raise SceneError(f"{source}: a scene must be a JSON object, got {type(data).__name__}")
    objects = data.get("objects")
    if objects is None:
        raise SceneError(f"{source}: missing key 'objects'")
    if not isinstance(objects, list):
        raise SceneError(f"{source}: 'objects' must be a list, got {type(objects).__name__}")
    seen: set[str] = set()
    for i, obj in enumerate(objects):
        if type(obj) is dict and _object_fine(obj) and obj["objectId"] not in seen:
            seen.add(obj["objectId"])
            continue  # the common case, told fast; any doubt takes the checks below
        where = f"{source}: objects[{i}]"
        if not isinstance(obj, dict):
            raise SceneError(f"{where}: must be an object, got {type(obj).__name__}")
        for key in ("objectId", "objectType"):
            if not isinstance(obj.get(key), str) or not obj.get(key):
                raise SceneError(
                    f"{where}.{key}: must be a non-empty string, got {show_value(obj.get(key))}"
                )
        if obj["objectId"] in seen:
            raise SceneError(f"{where}.objectId: duplicate id {show_value(obj['objectId'])}")
        seen.add(obj["objectId"])
        where = f"{source}: objectId {_cut(obj['objectId'])!r} at objects[{i}]"
        if "position" not in obj:
            raise SceneError(f"{where}.position: missing")
        # Shapes here; the range of every number is checked by _check_numbers below.
        _check_xyz(obj["position"], f"{where}.position")
        _check_box(obj.get("axisAlignedBoundingBox"), f"{where}.axisAlignedBoundingBox")
        for key in CAPABILITIES + STATES + ("visible",):
            if key in obj and not isinstance(obj[key], bool):
                raise SceneError(
                    f"{where}.{key}: must be true or false, got {show_value(obj[key])}"
                )
        for key in ("parentReceptacles", "receptacleObjectIds"):
            val = obj.get(key)
            if val is not None and not (
                isinstance(val, list) and all(isinstance(x, str) for x in val)
            ):
                raise SceneError(
                    f"{where}.{key}: must be a list of objectIds or null, got {show_value(val)}"
                )
    agent = data.get("agent", DEFAULT_AGENT)
    if not isinstance(agent, dict) or "position" not in agent:
        raise SceneError(f"{source}: agent: must be an object with a position")
    as_xyz(agent["position"], f"{source}: agent.position")
    rotation = agent.get("rotation") or {}
    if not isinstance(rotation, dict):
        raise SceneError(f"{source}: agent.rotation: must be an object with y (degrees)")
    yaw = rotation.get("y", 0.0)
    if not is_number(yaw):
        raise SceneError(
            f"{source}: agent.rotation.y: must be a number (degrees), got {show_value(yaw)}"
        )
    inventory = data.get("inventoryObjects")
    inventory = [] if inventory is None else inventory
    if not isinstance(inventory, list):
        raise SceneError(f"{source}: inventoryObjects: must be a list, got {show_value(inventory)}")
    for i, item in enumerate(inventory):
        if not isinstance(item, dict) or not isinstance(item.get("objectId"), str):
            raise SceneError(f"{source}: inventoryObjects[{i}].objectId: must be a string")
    robot = data.get("robot")
    if robot is not None:
        if not isinstance(robot, dict):
            raise SceneError(f"{source}: robot: must be an object, got {show_value(robot)}")
        for key, val in robot.items():
            if key in ROBOT_DEFAULTS and not is_number(val):
                raise SceneError(f"{source}: robot.{key}: must be a number, got {show_value(val)}")
        check_robot(robot, f"{source}: robot")
    humans = data.get("humans")
    humans = [] if humans is None else humans
    if not isinstance(humans, list):
        raise SceneError(f"{source}: humans: must be a list, got {show_value(humans)}")
    for i, h in enumerate(humans):
        if not isinstance(h, dict) or "id" not in h:
            raise SceneError(f"{source}: humans[{i}].id: missing")
        if isinstance(h["id"], bool) or not isinstance(h["id"], (str, int)):
            raise SceneError(
                f"{source}: humans[{i}].id: must be a string or integer, got {show_value(h['id'])}"
            )
        as_xyz(h.get("position"), f"{source}: humans[{i}].position")
        if h.get("name") is not None and not isinstance(h["name"], str):
            raise SceneError(
                f"{source}: humans[{i}].name: must be a string or null, got {show_value(h['name'])}"
            )
        for key in ("looking_at_robot", "hands_free"):
            if key in h and not isinstance(h[key], bool):
                raise SceneError(
                    f"{source}: humans[{i}].{key}: must be true or false, got {show_value(h[key])}"
                )
    blocked = data.get("blocked")
    if blocked is not None and not (
        isinstance(blocked, dict)
        and all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in blocked.values()
        )
    ):
        raise SceneError(f"{source}: blocked: must map ids to lists of objectIds")
    for key, blockers in (blocked or {}).items():
        # A blocker nobody can name would silently let a check pass: refuse it here.
        unknown = [b for b in blockers if b not in seen]
        if unknown:
            raise SceneError(
                f"{source}: blocked.{key}: {', '.join(map(show_value, unknown))} is not an objectId "
                "in 'objects' (list the obstacle as an object, e.g. objectType 'Obstacle')"
            )
    info = data.get("user_info")
    if info is not None and not (isinstance(info, list) and all(isinstance(s, str) for s in info)):
        raise SceneError(f"{source}: user_info: must be a list of strings")
    locations = data.get("locations")
    if locations is not None and not isinstance(locations, dict):
        raise SceneError(
            f"{source}: locations: must map names to {{x, z}}, got {show_value(locations)}"
        )
    for key, val in (locations or {}).items():
        as_xyz(val, f"{source}: locations.{key}")
    _check_numbers(data, source)


# ---------------------------------------------------------------------- reading files
def read_scene_json(path: str | Path, *, max_bytes: int = MAX_SCENE_BYTES) -> Any:
    """The JSON document of a scene file, read defensively (see :meth:`Scene.load`).

    Raises:
        SceneError: naming the file: not a regular file, over ``max_bytes``, not UTF-8, not
            JSON, nested deeper than the interpreter can parse, an integer of too many digits.
    """
    p = Path(path)
    raw = _read_regular_file(p, max_bytes)
    if _wide_encoding(raw):
        # UTF-16 or UTF-32 JSON (NUL bytes among the first four) is valid UTF-8 to a decoder.
        raise SceneError(f"{p}: not UTF-8 text (it looks like UTF-16 or UTF-32; save it as UTF-8)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SceneError(
            f"{p}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start} is not "
            "UTF-8; a scene is UTF-8 JSON)"
        ) from None
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise SceneError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except _HugeInteger as exc:
        line = text.count("\n", 0, text.find(exc.digits)) + 1
        raise SceneError(
            f"{p}: line {line}: an integer of {len(exc.digits)} digits is out of range "
            f"(at most {MAX_INT_DIGITS} digits; coordinates at most {MAX_MAGNITUDE:g} m)"
        ) from None
    except RecursionError:
        raise SceneError(
            f"{p}: JSON nested too deeply to read (a scene is at most {MAX_DEPTH} levels deep)"
        ) from None
    except MemoryError:
        raise SceneError(f"{p}: too large to parse in the memory available") from None
    return data


class _HugeInteger(Exception):
    def __init__(self, digits: str) -> None:
        super().__init__(digits[:20])
        self.digits = digits


def _parse_int(text: str) -> int:
    """``json``'s integer parser, refusing digit strings no scene needs (see MAX_INT_DIGITS)."""
    if len(text) > MAX_INT_DIGITS + 1:
        raise _HugeInteger(text)
    return int(text)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def _read_regular_file(p: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; a SceneError for anything else."""
    try:
        info = os.stat(p)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise SceneError(f"{p}: cannot read scene file ({reason})") from None
    if not stat.S_ISREG(info.st_mode):
        raise SceneError(f"{p}: cannot read scene file: it is {_kind(info.st_mode)}, not a file")
    if info.st_size > max_bytes:
        raise SceneError(_too_big(p, info.st_size, max_bytes))
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO after the stat, open() still returns.
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SceneError(f"{p}: cannot read scene file ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SceneError(f"{p}: cannot read scene file: it is not a regular file")
        try:
            data = f.read(max_bytes + 1)
        except OSError as exc:
            raise SceneError(f"{p}: cannot read scene file ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise SceneError(_too_big(p, len(data), max_bytes))
    return data


def _too_big(p: Path, size: int, limit: int) -> str:
    return (
        f"{p}: the scene file is {_mib(size)}, over the limit of {_mib(limit)} "
        f"(raise it with --max-scene-bytes, or Scene.load(path, max_bytes=...))"
    )


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


def _wide_encoding(raw: bytes) -> bool:
    """Whether ``raw`` starts like UTF-16 or UTF-32 text: a byte-order mark or NUL bytes."""
    return raw[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in raw[:4]
