"""The scene contract is strict where a typo could remove a hazard: :func:`check_scene_keys`.

A misspelt key or name of the hazard maps must never be silently ignored: ``"blocked":
{"coridor": [...]}`` would clear the obstruction on the way to the corridor, and the robot would
drive into the closed door. So:

- a key of ``blocked`` that names nothing of the scene (a display name, a type, a person's id
  or name, a location; an objectId, with ``|``, may be of an object out of view) is refused in one line naming the key and the nearest valid
  name: ``blocked: 'coridor' is not a place, object or person of the scene; did you mean
  'corridor'?``;
- a top-level key that is a misspelling or another word for a hazard map (``obstacles``,
  ``blockd``) is refused the same way;
- an unknown key close to one the contract reads (``colour`` for ``color``, ``people`` for
  ``humans``, ``locatoins``) is a :class:`~bt_raider.errors.SceneWarning` naming the nearest
  known key. Keys of AI2-THOR's metadata and keys close to nothing are left alone (section 1:
  keys the code does not read are kept and never judged).

No numpy, no rapidfuzz: :mod:`difflib` from the standard library, called only for a name that
matched nothing.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from bt_raider.errors import SceneError, SceneWarning

#: Top-level keys the scene contract reads (docs/scene-format.md sections 1.1 to 1.4).
TOP_KEYS = frozenset(
    {
        "objects",
        "agent",
        "inventoryObjects",
        "robot",
        "humans",
        "locations",
        "blocked",
        "user_info",
        "policy",
    }
)
#: Top-level keys that hold hazards: a key meant as one of these must not be lost.
HAZARD_KEYS = frozenset({"blocked"})
#: Keys of a person the contract reads.
HUMAN_KEYS = frozenset(
    {
        "id",
        "position",
        "name",
        "looking_at_robot",
        "hands_free",
        "user",
        "holding",
        "rotation",
        "role",
    }
)
#: Keys of an object the contract reads besides its flags (AI2-THOR's names; the capability and
#: state flags come from the validator, ``flags`` of :func:`check_scene_keys`).
OBJECT_KEYS = frozenset(
    {
        "objectId",
        "objectType",
        "position",
        "rotation",
        "axisAlignedBoundingBox",
        "objectOrientedBoundingBox",
        "parentReceptacles",
        "receptacleObjectIds",
        "color",
        "visible",
    }
)
#: Keys of AI2-THOR's metadata the contract does not read: known, so never taken for typos.
AI2THOR_KEYS = frozenset(
    {
        "sceneName",
        "lastAction",
        "lastActionSuccess",
        "errorMessage",
        "errorCode",
        "screenWidth",
        "screenHeight",
        "cameraPosition",
        "fov",
        "thirdPartyCameras",
        "actionReturn",
        "agentId",
        "sequenceId",
        "collided",
        "collidedObjects",
        "hand",
        "heldObjectPose",
        "isSceneAtRest",
        "sceneBounds",
        "arm",
        "currentTime",
        "assetId",
        "canBeUsedUp",
        "controlledObjects",
        "distance",
        "fillLiquid",
        "isColdSource",
        "isHeatSource",
        "isInteractable",
        "isMoving",
        "isUsedUp",
        "mass",
        "name",
        "openness",
        "salientMaterials",
        "temperature",
        "objectOrientedBoundingBox",
    }
)
#: Other words people use for a key of the contract (not misspellings, so difflib misses them).
SYNONYMS: dict[str, str] = {
    "people": "humans",
    "persons": "humans",
    "person": "humans",
    "residents": "humans",
    "obstacles": "blocked",
    "obstructions": "blocked",
    "blockers": "blocked",
    "blocks": "blocked",
    "places": "locations",
    "rooms": "locations",
    "colour": "color",
    "inventory": "inventoryObjects",
    "holding_objects": "inventoryObjects",
}
#: How close (difflib's ratio) an unknown key must be to a known one to be taken for a typo.
CLOSE = 0.75


_SEPARATORS = re.compile(r"[\s_\-]+")


def _squash(text: str) -> str:
    return _SEPARATORS.sub("", str(text).lower())


@lru_cache(maxsize=4096)
def _nearest_key(key: str, known: frozenset[str]) -> str | None:
    """The known key ``key`` stands for (a synonym or a near spelling), or None."""
    if key in known:
        return None
    meant = SYNONYMS.get(key) or SYNONYMS.get(key.lower())
    if meant in known:
        return meant
    folded = {k.lower(): k for k in known}
    if key.lower() in folded:
        return folded[key.lower()]
    hits = difflib.get_close_matches(key.lower(), list(folded), n=1, cutoff=CLOSE)
    return folded[hits[0]] if hits else None


def nearest(name: str, options: Iterable[str]) -> str | None:
    """The option nearest ``name`` (compared lower case, without spaces and ``_``), or None."""
    by_squash = {_squash(o): o for o in options}
    hits = difflib.get_close_matches(_squash(name), list(by_squash), n=1, cutoff=0.6)
    return by_squash[hits[0]] if hits else None


def _valid_names(data: dict[str, Any]) -> dict[str, str]:
    """Squashed form -> the name as written, of everything a ``blocked`` key may name."""
    out: dict[str, str] = {}
    objects = data.get("objects") or []
    by_type: dict[str, list[str]] = {}
    for obj in objects:
        out[_squash(obj["objectId"])] = obj["objectId"]
        by_type.setdefault(obj["objectType"], []).append(obj["objectId"])
    for otype, ids in by_type.items():
        out[_squash(otype)] = otype
        if len(ids) > 1:
            for i in range(1, len(ids) + 1):
                out[_squash(f"{otype}_{i}")] = f"{otype}_{i}"
    for h in data.get("humans") or []:
        out[_squash(str(h["id"]))] = str(h["id"])
        if isinstance(h.get("name"), str):
            out[_squash(h["name"])] = h["name"]
    for place in data.get("locations") or {}:
        out[_squash(place)] = place
    return out


def check_scene_keys(
    data: dict[str, Any], source: str = "<dict>", flags: Iterable[str] = ()
) -> None:
    """Refuse a hazard map that names nothing; warn about a key that looks like a known one.

    Called by :func:`~bt_raider.perception.validation.validate_scene` once the structure is
    known good (``objects`` a list of objects with ids and types, ``blocked`` a dict), with
    the capability and state ``flags`` an object may have.

    Raises:
        SceneError: one line naming the key and the nearest valid name.
    """
    for key in data:
        if key in TOP_KEYS or key in AI2THOR_KEYS or not isinstance(key, str):
            continue
        meant = _nearest_key(key, TOP_KEYS)
        if meant in HAZARD_KEYS:
            raise SceneError(
                f"{source}: {key!r} is not a key of the scene contract; did you mean {meant!r}? "
                "(a hazard under another key would be ignored)"
            )
        if meant is not None:
            _warn(f"{source}: {key!r} is not a key of the scene contract; did you mean {meant!r}?")
    blocked = data.get("blocked") or {}
    if blocked:
        valid = _valid_names(data)
        for key in blocked:
            # An objectId (perception's, never typed by hand) may name an object out of view.
            if _squash(key) not in valid and "|" not in key:
                near = nearest(key, valid.values())
                hint = f"; did you mean {near!r}?" if near else f"; valid names: {_some(valid)}"
                raise SceneError(
                    f"{source}: blocked: {key!r} is not a place, object or person of the scene"
                    + hint
                )
    if "policy" in data:
        # Imported here: the policy's dataclasses (and inspect) stay off bt-raider check's path.
        from bt_raider.perception.people import PeoplePolicy

        PeoplePolicy.from_data(data["policy"], f"{source}: policy")
    for i, h in enumerate(data.get("humans") or []):
        role = h.get("role")
        if role is not None and not (isinstance(role, str) and role.strip()):
            raise SceneError(f"{source}: humans[{i}].role: must be a word such as 'resident'")
        for key in h:
            meant = _nearest_key(key, HUMAN_KEYS) if isinstance(key, str) else None
            if meant is not None:
                _warn(f"{source}: humans[{i}]: {key!r} is not read; did you mean {meant!r}?")
    known = OBJECT_KEYS | frozenset(flags)
    for i, obj in enumerate(data.get("objects") or []):
        extra = obj.keys() - known - AI2THOR_KEYS
        for key in extra:
            meant = _nearest_key(key, known) if isinstance(key, str) else None
            if meant is not None:
                _warn(
                    f"{source}: objects[{i}] ({obj['objectId']}): {key!r} is not read; "
                    f"did you mean {meant!r}?"
                )


def _some(valid: dict[str, str], limit: int = 8) -> str:
    names = sorted(set(valid.values()))
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _warn(message: str) -> None:
    warnings.warn(message, SceneWarning, stacklevel=4)
