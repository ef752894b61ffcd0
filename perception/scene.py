"""The scene: an AI2-THOR ``event.metadata`` dict plus bt_raider's optional extensions.

See ``docs/scene-format.md`` section 1. :class:`Scene` validates the dict, gives every object a
stable display name, resolves names (display names, objectIds, near-misses) and answers the
geometric questions the tools build on. The raw dicts are kept, so a scene round-trips to JSON
unchanged and :class:`~bt_raider.simulation.simworld.SimWorld` can change it in place.

Geometry comes two ways: as plain float tuples (``xyz``, ``agent_xyz``, ``heading_xz()``,
``box_corners()``, ...), which the checks use and which need no numpy, and as numpy arrays
(``position``, ``agent_position``, ``heading()``, ``bbox()``, ...) for vector arithmetic, the
same numbers, numpy imported on first use.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bt_raider.errors import SceneError, ToolError
from bt_raider.perception.scene_file import MAX_INT_DIGITS, MAX_SCENE_BYTES, read_scene_json
from bt_raider.perception.validation import (
    CAPABILITIES,
    DEFAULT_AGENT,
    MAX_DEPTH,
    ROBOT_DEFAULTS,
    STATES,
    check_robot,
    validate_scene,
)
from bt_raider.perception.values import (
    MAX_MAGNITUDE,
    XYZ,
    as_box,
    as_flag,
    as_number,
    as_vector,
    as_xyz,
    box_corners,
    show_value,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CAPABILITIES",
    "DEFAULT_AGENT",
    "FUZZY_CUTOFF",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_MAGNITUDE",
    "MAX_SCENE_BYTES",
    "ROBOT_DEFAULTS",
    "STATES",
    "Human",
    "Scene",
    "SceneObject",
    "validate_scene",
]

#: Below this rapidfuzz WRatio score a name is not a near-miss of anything.
FUZZY_CUTOFF = 80.0


def _squash(text: str) -> str:
    return text.lower().replace(" ", "").replace("_", "").replace("-", "")


class _Points(Mapping[str, "np.ndarray"]):
    """Read-only name -> point mapping whose values are float arrays, made on access."""

    def __init__(self, points: dict[str, XYZ]) -> None:
        self._points = points

    def __getitem__(self, key: str) -> np.ndarray:
        import numpy as np

        return np.array(self._points[key], dtype=float)

    def __contains__(self, key: object) -> bool:
        return key in self._points  # Mapping's own would build the array

    def __iter__(self) -> Iterator[str]:
        return iter(self._points)

    def __len__(self) -> int:
        return len(self._points)

    def __repr__(self) -> str:
        return f"{{{', '.join(f'{k!r}: {v}' for k, v in self._points.items())}}}"


class SceneObject:
    """One AI2-THOR object, with its display name.

    The underlying dict is :attr:`raw`; properties read it live, so changes made by a
    simulated world are seen at once. Two objects are equal when their dicts and names are.
    (A plain class, not a dataclass: ``bt-raider check`` imports it at every start, and
    making a dataclass costs about a millisecond.)
    """

    __slots__ = ("raw", "name")
    __hash__ = None  # type: ignore[assignment]  # equal by value, and the dict may change

    def __init__(self, raw: dict[str, Any], name: str) -> None:
        self.raw = raw
        self.name = name

    def __eq__(self, other: object) -> bool:
        if type(other) is not SceneObject:
            return NotImplemented
        return self.name == other.name and self.raw == other.raw

    @property
    def id(self) -> str:
        return self.raw["objectId"]

    @property
    def type(self) -> str:
        return self.raw["objectType"]

    @property
    def position(self) -> np.ndarray:
        return as_vector(self.raw["position"], f"{self.id}.position")

    @property
    def xyz(self) -> XYZ:
        """:attr:`position` as plain floats ``(x, y, z)``."""
        return as_xyz(self.raw["position"], f"{self.id}.position")

    @property
    def visible(self) -> bool:
        return as_flag(self.raw, "visible", True, self.id)

    def flag(self, key: str) -> bool:
        """A capability or state flag (missing flags are False; a non-boolean is a SceneError)."""
        return as_flag(self.raw, key, False, self.id)

    @property
    def parents(self) -> list[str]:
        return list(self.raw.get("parentReceptacles") or [])

    @property
    def children(self) -> list[str]:
        return list(self.raw.get("receptacleObjectIds") or [])

    def bbox(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(min_corner, max_corner)`` of the axis-aligned box, or None when absent."""
        return as_box(self.raw.get("axisAlignedBoundingBox"), f"{self.id}.axisAlignedBoundingBox")

    def box_corners(self) -> tuple[XYZ, XYZ] | None:
        """:meth:`bbox` as plain float triples."""
        return box_corners(
            self.raw.get("axisAlignedBoundingBox"), f"{self.id}.axisAlignedBoundingBox"
        )

    def __repr__(self) -> str:
        return f"SceneObject({self.name!r}, {self.id!r})"


class Human:
    """A person from the ``humans`` extension (equal to another when their dicts are)."""

    __slots__ = ("raw",)
    __hash__ = None  # type: ignore[assignment]  # equal by value, and the dict may change

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def __eq__(self, other: object) -> bool:
        return self.raw == other.raw if type(other) is Human else NotImplemented

    def __repr__(self) -> str:
        return f"Human(raw={self.raw!r})"

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def name(self) -> str | None:
        return self.raw.get("name")

    @property
    def position(self) -> np.ndarray:
        return as_vector(self.raw["position"], f"human {self.id}.position")

    @property
    def xyz(self) -> XYZ:
        """:attr:`position` as plain floats ``(x, y, z)``."""
        return as_xyz(self.raw["position"], f"human {self.id}.position")

    @property
    def looking_at_robot(self) -> bool:
        return as_flag(self.raw, "looking_at_robot", False, f"human {self.id}")

    @property
    def hands_free(self) -> bool:
        return as_flag(self.raw, "hands_free", True, f"human {self.id}")

    @property
    def is_user(self) -> bool:
        """Whether this person is the robot's user: the speaker a query's "me" means.

        The optional ``"user": true`` key of a ``humans[]`` entry (false when absent). With
        nobody marked, "me" is the nearest person in sight (see
        :meth:`bt_raider.checking.grounding.Grounder.ground_speaker`).
        """
        return as_flag(self.raw, "user", False, f"human {self.id}")


def copy_data(data: Any) -> Any:
    """A deep copy of scene data, five times faster than :func:`copy.deepcopy`.

    A world copies its scene at every observation (200 KB of JSON for the kitchen). A
    :mod:`pickle` round trip copies through the same ``__reduce_ex__`` protocol as
    :func:`copy.deepcopy` (types and shared references kept) in C; what does not pickle (a
    lambda) is deep-copied as before.
    """
    import pickle  # ~8 ms to import: not on the path of a one-off check, which copies nothing

    try:
        return pickle.loads(pickle.dumps(data, pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - anything pickle refuses: deepcopy copies it or says why
        return copy.deepcopy(data)


class Scene:
    """A validated scene.

    Args:
        data: the scene dict (kept by reference; use :meth:`copy` for an independent scene).
        source: where it came from, for error messages (a file path or ``"<dict>"``).

    Raises:
        SceneError: when ``objects`` is missing or an object is malformed; the message names
            the source, the object index and the field.
    """

    def __init__(self, data: dict[str, Any], source: str = "<dict>") -> None:
        self.source = source
        validate_scene(data, source)
        if "agent" not in data:
            # The Scene owns its dict (by reference, so a SimWorld can change it in place).
            data["agent"] = copy.deepcopy(DEFAULT_AGENT)
        self.data = data
        self.reindex()

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, path: str | Path, *, max_bytes: int = MAX_SCENE_BYTES) -> Scene:
        """Read a scene JSON file (UTF-8); every refusal is a SceneError naming the file.

        Only a regular file is opened (a FIFO, device or directory is refused before it could
        block or stream forever), at most ``max_bytes`` of it are read, and JSON nested deeper
        than :data:`MAX_DEPTH` or holding an integer of more than :data:`MAX_INT_DIGITS` digits
        is refused (see :func:`~bt_raider.perception.scene_file.read_scene_json`).

        Args:
            path: the scene file.
            max_bytes: the largest file read (default :data:`MAX_SCENE_BYTES`, 64 MiB).
        """
        return cls(read_scene_json(path, max_bytes=max_bytes), source=str(Path(path)))

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> Scene:
        return cls(data, source=source)

    def copy(self, *, validate: bool = True) -> Scene:
        """A deep copy: changing it leaves this scene alone.

        Args:
            validate: check the copy again, as a new scene (False: the caller vouches that the
                data changed only through checked edits since it was validated, as a
                :class:`~bt_raider.simulation.simworld.SimWorld`'s does; what reads a number
                still refuses a NaN put in by hand).
        """
        data = copy_data(self.data)
        if validate:
            return Scene(data, source=self.source)
        scene = Scene.__new__(Scene)
        scene.source = self.source
        scene.data = data
        scene.reindex()
        return scene

    def to_dict(self) -> dict[str, Any]:
        return copy_data(self.data)

    def reindex(self) -> None:
        """Recompute display names and lookups after objects were added or removed."""
        raws = self.data["objects"]
        # Rows of each type, in scene order: display names number them, of_types reads them.
        by_type: dict[str, list[int]] = {}
        for row, raw in enumerate(raws):
            by_type.setdefault(raw["objectType"], []).append(row)
        names: dict[str, str] = {}
        for otype, rows in by_type.items():
            if len(rows) == 1:
                names[raws[rows[0]]["objectId"]] = otype
            else:
                ids = sorted(raws[row]["objectId"] for row in rows)
                for i, object_id in enumerate(ids, start=1):
                    names[object_id] = f"{otype}_{i}"
        self._type_rows = by_type
        self._names = [names[raw["objectId"]] for raw in raws]
        self._objects = list(map(SceneObject, raws, self._names))
        self._by_id = {o.id: o for o in self._objects}
        self._by_name = {o.name.lower(): o for o in self._objects}
        # A part extends its whole's objectId with "|": Sink|x|y|z|SinkBasin is the Sink's basin.
        self._parts: dict[str, list[SceneObject]] = {}
        self._whole: dict[str, SceneObject] = {}
        for o in self._objects:
            head, sep, _ = o.id.rpartition("|")
            while sep and head not in self._by_id:
                head, sep, _ = head.rpartition("|")
            if sep and head in self._by_id:
                self._whole[o.id] = self._by_id[head]
                self._parts.setdefault(head, []).append(o)
        self._humans = [Human(h) for h in self.data.get("humans") or []]

    # ------------------------------------------------------------------ objects
    @property
    def objects(self) -> list[SceneObject]:
        return list(self._objects)

    def __iter__(self) -> Iterator[SceneObject]:
        return iter(self._objects)

    def __len__(self) -> int:
        return len(self._objects)

    def by_id(self, object_id: str) -> SceneObject:
        try:
            return self._by_id[object_id]
        except KeyError:
            raise ToolError(f"no object with objectId {object_id!r} in {self.source}") from None

    def has(self, name_or_id: str) -> bool:
        try:
            self.resolve(name_or_id)
        except ToolError:
            return False
        return True

    def of_type(self, object_type: str) -> list[SceneObject]:
        """Objects of one AI2-THOR type (case-insensitive)."""
        t = object_type.lower()
        return [o for o in self._objects if o.type.lower() == t]

    def display_names(self) -> list[str]:
        """Every object's display name, in scene order (a new list)."""
        return list(self._names)

    def of_types(self, types: Iterable[str]) -> list[SceneObject]:
        """Objects whose type is one of ``types`` (exact AI2-THOR names), in scene order.

        Read from the rows :meth:`reindex` groups by type, as display names are: an object's
        objectId and objectType are fixed between two reindexes (change them, then reindex).
        """
        groups = [self._type_rows[t] for t in set(types) if t in self._type_rows]
        rows = groups[0] if len(groups) == 1 else sorted(chain.from_iterable(groups))
        return [self._objects[row] for row in rows]

    def object_types(self) -> set[str]:
        """The types of the scene's objects (a new set)."""
        return set(self._type_rows)

    def find(self, ref: str) -> SceneObject | None:
        """The first object, in scene order, whose objectId is ``ref`` or whose display name is
        ``ref`` in any case; None when there is none (types and near-misses: :meth:`resolve`)."""
        by_id, by_name = self._by_id.get(ref), self._by_name.get(ref.lower())
        if len(self._by_id) != len(self._objects) or len(self._by_name) != len(self._objects):
            # Ids or names alike (objects added since validation): the first one counts.
            low = ref.lower()
            return next((o for o in self._objects if o.id == ref or o.name.lower() == low), None)
        if by_id is None or by_name is None or by_id is by_name:
            return by_id or by_name
        return next(o for o in self._objects if o is by_id or o is by_name)

    def whole_of(self, obj: SceneObject) -> SceneObject | None:
        """The object ``obj`` is a part of (its objectId extends the whole's with ``|``), or None."""
        return self._whole.get(obj.id)

    def parts_of(self, obj: SceneObject) -> list[SceneObject]:
        """The parts of ``obj`` (``SinkBasin`` of a ``Sink``), in scene order."""
        return list(self._parts.get(obj.id, ()))

    def name_of(self, object_id: str) -> str:
        """Display name for an objectId (the id itself when unknown)."""
        obj = self._by_id.get(object_id)
        return obj.name if obj else object_id

    def resolve(self, ref: str) -> SceneObject:
        """The one object ``ref`` names: a display name, an objectId, a unique type, or a near-miss.

        Raises:
            ToolError: when nothing matches, or a type matches several objects; the message
                lists the candidates.
        """
        if not isinstance(ref, str) or not ref.strip():
            raise ToolError(f"object name must be a non-empty string, got {ref!r}")
        key = ref.strip()
        if key in self._by_id:
            return self._by_id[key]
        low = key.lower()
        if low in self._by_name:
            return self._by_name[low]
        squashed = _squash(key)
        typed = [o for o in self._objects if o.type.lower() == squashed]
        if len(typed) == 1:
            return typed[0]
        if len(typed) > 1:
            names = ", ".join(sorted(o.name for o in typed))
            raise ToolError(f"{ref!r} is ambiguous: it matches {names}")
        # rapidfuzz only for a near miss, off the common path of every check.
        from rapidfuzz import fuzz, process

        # Compare squashed forms so "coffee machine" and "CoffeeMachine" agree.
        choices = {_squash(o.name): o for o in self._objects}
        hits = process.extract(
            squashed, list(choices), scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None
        )
        if hits:
            best = sorted(choices[h[0]].name for h in hits if h[1] == hits[0][1])
            if len(best) > 1:
                raise ToolError(f"{ref!r} is ambiguous: it is as close to {', '.join(best)}")
            return choices[hits[0][0]]
        raise ToolError(
            f"no object {ref!r} in the scene; objects are: "
            + ", ".join(sorted(o.name for o in self._objects))
        )

    def resolve_many(self, refs: Iterable[str]) -> list[SceneObject]:
        return [self.resolve(r) for r in refs]

    # ------------------------------------------------------------------ robot
    @property
    def agent_position(self) -> np.ndarray:
        return as_vector(self.data["agent"]["position"], "agent.position")

    @property
    def agent_xyz(self) -> XYZ:
        """:attr:`agent_position` as plain floats ``(x, y, z)``."""
        return as_xyz(self.data["agent"]["position"], "agent.position")

    @property
    def agent_yaw(self) -> float:
        """Heading in degrees (``agent.rotation.y``; 0 faces +z)."""
        rotation = self.data["agent"].get("rotation") or {}
        if not isinstance(rotation, dict):
            raise SceneError(
                f"agent.rotation: expected an object with y, got {show_value(rotation)}"
            )
        return as_number(rotation.get("y", 0.0), "agent.rotation.y")

    def heading_xz(self) -> tuple[float, float]:
        """Unit heading ``(sin yaw, cos yaw)`` in the (x, z) plane."""
        yaw = math.radians(self.agent_yaw)
        return math.sin(yaw), math.cos(yaw)

    def right_xz(self) -> tuple[float, float]:
        """Unit right vector ``(cos yaw, -sin yaw)`` in the (x, z) plane."""
        yaw = math.radians(self.agent_yaw)
        return math.cos(yaw), -math.sin(yaw)

    def heading(self) -> np.ndarray:
        """:meth:`heading_xz` as a float array."""
        import numpy as np

        return np.array(self.heading_xz())

    def right_vector(self) -> np.ndarray:
        """:meth:`right_xz` as a float array."""
        import numpy as np

        return np.array(self.right_xz())

    @property
    def robot(self) -> dict[str, float]:
        """``reach``, ``handover_distance`` and ``arms``, with the format doc's defaults.

        Raises:
            SceneError: a value is not a positive finite number (``arms``: a whole number from 1
                to ``MAX_ARMS``), also when it was changed after the scene was loaded.
        """
        merged = {**ROBOT_DEFAULTS, **(self.data.get("robot") or {})}
        check_robot(merged, "robot")
        return merged

    @property
    def holding(self) -> list[SceneObject]:
        """Objects in the robot's hand (``inventoryObjects``)."""
        out = []
        for item in self.data.get("inventoryObjects") or []:
            obj = self._by_id.get(item.get("objectId", ""))
            if obj is not None:
                out.append(obj)
        return out

    # ------------------------------------------------------------------ extensions
    @property
    def humans(self) -> list[Human]:
        return list(self._humans)

    def human(self, ref: str) -> Human:
        """A person by id or recognised name (case-insensitive)."""
        low = str(ref).strip().lower()
        for h in self._humans:
            if h.id.lower() == low or (h.name or "").lower() == low:
                return h
        known = ", ".join(f"{h.id} ({h.name or 'unrecognised'})" for h in self._humans) or "none"
        raise ToolError(f"no person {ref!r} in the scene; people are: {known}")

    @property
    def blocked(self) -> dict[str, list[str]]:
        return dict(self.data.get("blocked") or {})

    @property
    def user_info(self) -> list[str]:
        return list(self.data.get("user_info") or [])

    @property
    def locations(self) -> Mapping[str, np.ndarray]:
        """Named places (the ``locations`` extension): name -> float array.

        Every place is checked when this is read; numpy is imported only when a value is (a
        name looked up, or listed, costs no numpy).
        """
        return _Points(self.location_points)

    @property
    def location_points(self) -> dict[str, XYZ]:
        """:attr:`locations` as plain floats ``(x, y, z)``."""
        return {
            k: as_xyz(v, f"locations.{k}") for k, v in (self.data.get("locations") or {}).items()
        }

    # ------------------------------------------------------------------ geometry
    def xyz_of(self, ref: str) -> XYZ:
        """Position ``(x, y, z)`` of an object, a person or a named location."""
        locs = self.data.get("locations") or {}
        if ref in locs:
            return as_xyz(locs[ref], f"locations.{ref}")
        try:
            return self.resolve(ref).xyz
        except ToolError:
            try:
                return self.human(ref).xyz
            except ToolError:
                pass
            raise

    def position_of(self, ref: str) -> np.ndarray:
        """:meth:`xyz_of` as a float array."""
        import numpy as np

        return np.array(self.xyz_of(ref), dtype=float)

    def horizontal_distance(self, a: Any, b: Any) -> float:
        """Horizontal (x, z) distance (m) of two points, tuples or arrays; a SceneError if not finite."""
        dist = float(math.hypot(a[0] - b[0], a[2] - b[2]))
        if not math.isfinite(dist):
            raise SceneError(f"the distance between {a} and {b} is not a finite number")
        return dist

    def distance_to_robot(self, ref: str) -> float:
        """Horizontal distance (m) from the robot to an object, person or location."""
        return self.horizontal_distance(self.agent_xyz, self.xyz_of(ref))
