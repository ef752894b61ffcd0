"""Reading one value of a scene without trusting it: numbers, points, boxes and flags.

Every number a check reads goes through :func:`as_number`: finite, and within
:data:`MAX_MAGNITUDE` (10 km, or degrees for angles) unless told other bounds. The readers
(:func:`as_number`, :func:`as_vector`, :func:`as_flag`, :func:`as_box`) apply where a value is
read the rules :func:`~bt_raider.perception.validation.validate_scene` applies to a whole scene,
so a scene changed after it was validated (a simulated world, a user's dict) still never yields
a NaN distance. :func:`show_value` writes a bad value into a message, cut short.

No numpy here: ``bt-raider check`` reads and checks a scene in plain Python (numpy's import
alone costs more than a whole check). :func:`as_xyz` and :func:`box_corners` give tuples;
:func:`as_vector` and :func:`as_box` give the same numbers as numpy arrays, importing numpy
when first called. A numpy scalar in a user's dict is a number like any other.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any

from bt_raider.errors import SceneError

if TYPE_CHECKING:
    import numpy as np

#: A point ``(x, y, z)`` in metres.
XYZ = tuple[float, float, float]

#: Largest magnitude of a coordinate, box size or distance (metres) or an angle (degrees) in a
#: scene: 10 km is far beyond any room a robot acts in, so a larger value is a corrupt reading,
#: not a place. Within it every distance the tools compute stays finite and exact to the mm.
MAX_MAGNITUDE = 1e4
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
