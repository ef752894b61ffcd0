"""The scene: an AI2-THOR ``event.metadata`` dict plus bt_raider's optional extensions.

See ``docs/scene-format.md`` section 1. :class:`Scene` validates the dict, gives every object a
stable display name, resolves names (display names, objectIds, near-misses) and answers the
geometric questions the tools build on. The raw dicts are kept, so a scene round-trips to JSON
unchanged and :class:`~bt_raider.simulation.simworld.SimWorld` can change it in place.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bt_raider.errors import SceneError, ToolError

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
#: Below this rapidfuzz WRatio score a name is not a near-miss of anything.
FUZZY_CUTOFF = 80.0


def _vec(value: Any, where: str) -> np.ndarray:
    """A ``{x, y, z}`` dict (y optional) as a float array, or a SceneError naming ``where``."""
    if not isinstance(value, dict):
        raise SceneError(f"{where}: expected an object with x, y, z, got {value!r}")
    try:
        return np.array(
            [float(value["x"]), float(value.get("y", 0.0)), float(value["z"])], dtype=float
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SceneError(f"{where}: expected numbers x, y, z, got {value!r}") from exc


def _squash(text: str) -> str:
    return text.lower().replace(" ", "").replace("_", "").replace("-", "")


@dataclass
class SceneObject:
    """One AI2-THOR object, with its display name.

    The underlying dict is :attr:`raw`; properties read it live, so changes made by a
    simulated world are seen at once.
    """

    raw: dict[str, Any]
    name: str

    @property
    def id(self) -> str:
        return self.raw["objectId"]

    @property
    def type(self) -> str:
        return self.raw["objectType"]

    @property
    def position(self) -> np.ndarray:
        return _vec(self.raw["position"], self.id)

    @property
    def visible(self) -> bool:
        return bool(self.raw.get("visible", True))

    def flag(self, key: str) -> bool:
        """A capability or state flag (missing flags are False)."""
        return bool(self.raw.get(key, False))

    @property
    def parents(self) -> list[str]:
        return list(self.raw.get("parentReceptacles") or [])

    @property
    def children(self) -> list[str]:
        return list(self.raw.get("receptacleObjectIds") or [])

    def bbox(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(min_corner, max_corner)`` of the axis-aligned box, or None when absent."""
        box = self.raw.get("axisAlignedBoundingBox")
        if not box:
            return None
        if box.get("center") is not None and box.get("size") is not None:
            center = _vec(box["center"], f"{self.id}.axisAlignedBoundingBox.center")
            size = _vec(box["size"], f"{self.id}.axisAlignedBoundingBox.size")
            return center - size / 2, center + size / 2
        corners = box.get("cornerPoints")
        if corners:
            pts = np.asarray(corners, dtype=float)
            return pts.min(axis=0), pts.max(axis=0)
        return None

    def __repr__(self) -> str:
        return f"SceneObject({self.name!r}, {self.id!r})"


@dataclass
class Human:
    """A person from the ``humans`` extension."""

    raw: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def name(self) -> str | None:
        return self.raw.get("name")

    @property
    def position(self) -> np.ndarray:
        return _vec(self.raw["position"], f"human {self.id}")

    @property
    def looking_at_robot(self) -> bool:
        return bool(self.raw.get("looking_at_robot", False))

    @property
    def hands_free(self) -> bool:
        return bool(self.raw.get("hands_free", True))


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
    def load(cls, path: str | Path) -> Scene:
        """Read a scene JSON file (errors name the file)."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise SceneError(f"{p}: cannot read scene file ({exc.strerror or exc})") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SceneError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from exc
        return cls(data, source=str(p))

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> Scene:
        return cls(data, source=source)

    def copy(self) -> Scene:
        """A deep copy: changing it leaves this scene alone."""
        return Scene(copy.deepcopy(self.data), source=self.source)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.data)

    def reindex(self) -> None:
        """Recompute display names and lookups after objects were added or removed."""
        raws = self.data["objects"]
        by_type: dict[str, list[dict[str, Any]]] = {}
        for raw in raws:
            by_type.setdefault(raw["objectType"], []).append(raw)
        names: dict[str, str] = {}
        for otype, group in by_type.items():
            if len(group) == 1:
                names[group[0]["objectId"]] = otype
            else:
                for i, raw in enumerate(sorted(group, key=lambda r: r["objectId"]), start=1):
                    names[raw["objectId"]] = f"{otype}_{i}"
        self._objects = [SceneObject(raw, names[raw["objectId"]]) for raw in raws]
        self._by_id = {o.id: o for o in self._objects}
        self._by_name = {o.name.lower(): o for o in self._objects}
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
        return _vec(self.data["agent"]["position"], "agent.position")

    @property
    def agent_yaw(self) -> float:
        """Heading in degrees (``agent.rotation.y``; 0 faces +z)."""
        return float((self.data["agent"].get("rotation") or {}).get("y", 0.0))

    def heading(self) -> np.ndarray:
        """Unit heading ``(sin yaw, cos yaw)`` in the (x, z) plane."""
        yaw = math.radians(self.agent_yaw)
        return np.array([math.sin(yaw), math.cos(yaw)])

    def right_vector(self) -> np.ndarray:
        """Unit right vector ``(cos yaw, -sin yaw)`` in the (x, z) plane."""
        yaw = math.radians(self.agent_yaw)
        return np.array([math.cos(yaw), -math.sin(yaw)])

    @property
    def robot(self) -> dict[str, float]:
        """``reach``, ``handover_distance`` and ``arms``, with the format doc's defaults."""
        return {**ROBOT_DEFAULTS, **(self.data.get("robot") or {})}

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
    def locations(self) -> dict[str, np.ndarray]:
        return {k: _vec(v, f"locations.{k}") for k, v in (self.data.get("locations") or {}).items()}

    # ------------------------------------------------------------------ geometry
    def position_of(self, ref: str) -> np.ndarray:
        """Position of an object, a person or a named location."""
        locs = self.data.get("locations") or {}
        if ref in locs:
            return _vec(locs[ref], f"locations.{ref}")
        try:
            return self.resolve(ref).position
        except ToolError:
            try:
                return self.human(ref).position
            except ToolError:
                pass
            raise

    def horizontal_distance(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(math.hypot(a[0] - b[0], a[2] - b[2]))

    def distance_to_robot(self, ref: str) -> float:
        """Horizontal distance (m) from the robot to an object, person or location."""
        return self.horizontal_distance(self.agent_position, self.position_of(ref))


def validate_scene(data: Any, source: str = "<dict>") -> None:
    """Raise :class:`SceneError` naming the source, object index and field of the first fault."""
    if not isinstance(data, dict):
        raise SceneError(f"{source}: a scene must be a JSON object, got {type(data).__name__}")
    objects = data.get("objects")
    if objects is None:
        raise SceneError(f"{source}: missing key 'objects'")
    if not isinstance(objects, list):
        raise SceneError(f"{source}: 'objects' must be a list, got {type(objects).__name__}")
    seen: set[str] = set()
    for i, obj in enumerate(objects):
        where = f"{source}: objects[{i}]"
        if not isinstance(obj, dict):
            raise SceneError(f"{where}: must be an object, got {type(obj).__name__}")
        for key in ("objectId", "objectType"):
            if not isinstance(obj.get(key), str) or not obj.get(key):
                raise SceneError(f"{where}.{key}: must be a non-empty string, got {obj.get(key)!r}")
        if obj["objectId"] in seen:
            raise SceneError(f"{where}.objectId: duplicate id {obj['objectId']!r}")
        seen.add(obj["objectId"])
        if "position" not in obj:
            raise SceneError(f"{where}.position: missing")
        _vec(obj["position"], f"{where}.position")
        for key in CAPABILITIES + STATES + ("visible",):
            if key in obj and not isinstance(obj[key], bool):
                raise SceneError(f"{where}.{key}: must be true or false, got {obj[key]!r}")
        for key in ("parentReceptacles", "receptacleObjectIds"):
            val = obj.get(key)
            if val is not None and not (
                isinstance(val, list) and all(isinstance(x, str) for x in val)
            ):
                raise SceneError(f"{where}.{key}: must be a list of objectIds or null, got {val!r}")
    agent = data.get("agent", DEFAULT_AGENT)
    if not isinstance(agent, dict) or "position" not in agent:
        raise SceneError(f"{source}: agent: must be an object with a position")
    _vec(agent["position"], f"{source}: agent.position")
    yaw = (agent.get("rotation") or {}).get("y", 0.0)
    if isinstance(yaw, bool) or not isinstance(yaw, (int, float)):
        raise SceneError(f"{source}: agent.rotation.y: must be a number (degrees), got {yaw!r}")
    for i, item in enumerate(data.get("inventoryObjects") or []):
        if not isinstance(item, dict) or not isinstance(item.get("objectId"), str):
            raise SceneError(f"{source}: inventoryObjects[{i}].objectId: must be a string")
    robot = data.get("robot")
    if robot is not None:
        if not isinstance(robot, dict):
            raise SceneError(f"{source}: robot: must be an object, got {robot!r}")
        for key, val in robot.items():
            if key in ROBOT_DEFAULTS and (
                isinstance(val, bool) or not isinstance(val, (int, float))
            ):
                raise SceneError(f"{source}: robot.{key}: must be a number, got {val!r}")
    for i, h in enumerate(data.get("humans") or []):
        if not isinstance(h, dict) or "id" not in h:
            raise SceneError(f"{source}: humans[{i}].id: missing")
        _vec(h.get("position"), f"{source}: humans[{i}].position")
        if h.get("name") is not None and not isinstance(h["name"], str):
            raise SceneError(
                f"{source}: humans[{i}].name: must be a string or null, got {h['name']!r}"
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
                f"{source}: blocked.{key}: {', '.join(map(repr, unknown))} is not an objectId "
                "in 'objects' (list the obstacle as an object, e.g. objectType 'Obstacle')"
            )
    info = data.get("user_info")
    if info is not None and not (isinstance(info, list) and all(isinstance(s, str) for s in info)):
        raise SceneError(f"{source}: user_info: must be a list of strings")
    locations = data.get("locations")
    if locations is not None and not isinstance(locations, dict):
        raise SceneError(f"{source}: locations: must map names to {{x, z}}, got {locations!r}")
    for key, val in (locations or {}).items():
        _vec(val, f"{source}: locations.{key}")
