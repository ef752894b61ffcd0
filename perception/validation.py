"""What a scene may hold: its flags, defaults and limits, and :func:`validate_scene`.

:func:`validate_scene` checks the structure of ``docs/scene-format.md`` section 1 and that
every number is one the reasoners can use: finite, geometry within
:data:`~bt_raider.perception.values.MAX_MAGNITUDE` (10 km, or degrees for angles), sizes and
distances not negative, ``robot.reach`` and ``robot.handover_distance`` more than 0
(:func:`check_robot`). The readers of one value (:mod:`bt_raider.perception.values`) apply the
same rules where a value is read; reading a scene file defensively is
:mod:`bt_raider.perception.scene_file`.

No numpy here: ``bt-raider check`` reads and checks a scene in plain Python (numpy's import
alone costs more than a whole check). A numpy scalar in a user's dict is a number like any
other.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from typing import Any

from bt_raider.errors import SceneError
from bt_raider.perception.scene_keys import check_scene_keys
from bt_raider.perception.values import (
    _FLOAT_MAX,
    MAX_MAGNITUDE,
    _cut,
    _is_integer,
    as_number,
    as_xyz,
    is_number,
    show_value,
)

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
#: Pose assumed when a scene has no ``agent`` (perception output without a robot pose). No
#: ``rotation``: yaw 0 serves distances, but which way the robot faces stays unknown, so a
#: robot-relative reference ("the box on the left") is unclear.
DEFAULT_AGENT: dict[str, Any] = {"position": {"x": 0.0, "y": 0.9, "z": 0.0}}

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
#: Most characters of a name in a scene (an objectId, objectType, colour, receptacle id or a
#: person's name; AI2-THOR's longest ids are under 60) and of one ``user_info`` line: longer
#: strings are refused, so that no check spends its time on megabytes of one word.
MAX_NAME_CHARS = 256
MAX_INFO_CHARS = 4096
#: Deepest nesting of objects and lists a scene may hold (AI2-THOR metadata is 5 deep); deeper
#: data is refused before anything recurses into it.
MAX_DEPTH = 64
#: A robot's ``arms``: a whole number in this range.
MAX_ARMS = 64


def _check_length(text: str, most: int, where: str) -> None:
    if len(text) > most:
        raise SceneError(
            f"{where}: {len(text):,} characters, over the limit of {most} ({_cut(text)!r})"
        )


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


def check_robot(robot: dict[str, Any], where: str) -> None:
    """Refuse a ``robot`` block whose ``reach``, ``handover_distance`` or ``arms`` is unusable.

    Raises:
        SceneError: naming ``where``, the key, its value and what is valid.
    """
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
    if len(oid) > MAX_NAME_CHARS or len(otype) > MAX_NAME_CHARS:
        return False
    if len(obj.get("color") or "") > MAX_NAME_CHARS:
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
    if type(obj.get("color", "")) is not str and obj["color"] is not None:
        return False
    for key in ("parentReceptacles", "receptacleObjectIds"):
        ids = obj.get(key)
        if ids is not None and not (type(ids) is list and _STRINGS.issuperset(map(type, ids))):
            return False
        if ids and max(map(len, ids)) > MAX_NAME_CHARS:
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
            _check_length(obj[key], MAX_NAME_CHARS, f"{where}.{key}")
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
            for j, item in enumerate(val or []):
                _check_length(item, MAX_NAME_CHARS, f"{where}.{key}[{j}]")
        colour = obj.get("color")
        if colour is not None and not isinstance(colour, str):
            raise SceneError(
                f'{where}.color: must be a colour word such as "red", or null, got '
                f"{show_value(colour)}"
            )
        _check_length(colour or "", MAX_NAME_CHARS, f"{where}.color")
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
        _check_length(h.get("name") or "", MAX_NAME_CHARS, f"{source}: humans[{i}].name")
        _check_length(h["id"] if isinstance(h["id"], str) else "", MAX_NAME_CHARS,
                      f"{source}: humans[{i}].id")  # fmt: skip
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
    for i, line in enumerate(info or []):
        _check_length(line, MAX_INFO_CHARS, f"{source}: user_info[{i}]")
    locations = data.get("locations")
    if locations is not None and not isinstance(locations, dict):
        raise SceneError(
            f"{source}: locations: must map names to {{x, z}}, got {show_value(locations)}"
        )
    for key, val in (locations or {}).items():
        as_xyz(val, f"{source}: locations.{key}")
    _check_numbers(data, source)
    check_scene_keys(data, source, _FLAGS)  # a typo that would remove a hazard is refused
