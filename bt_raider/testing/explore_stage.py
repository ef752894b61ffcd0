"""The explorer's stage: who speaks and where she faces, the landmarks things are at, the
decoys and hostile plans, the guards' names: what issue 32's episodes add to a room.

Plain data and scene edits (no bt_raider reader): :mod:`bt_raider.testing.explore_world`
builds a case's scene with them.
"""

from __future__ import annotations

import math
from typing import Any

from bt_raider.testing.explore_lang import LANDMARKS

#: The person who speaks (the one the robot works for).
USER = "person_explore"
#: Where the person who speaks stands, and whether the scene gives her heading: ``none`` (no
#: person in the scene), ``facing`` the robot, ``behind`` it facing its way, at its ``side``
#: facing across, or ``unknown`` (a person without ``rotation``: "my left" cannot be read).
SPEAKERS = ("none", "facing", "behind", "side", "unknown")
#: Instruction forms that ask to hand something to the person (she stands in the scene):
#: "bring me the cup", "The cup, please." (over the user's node that hands it over, or, in
#: ``wrong_node``, over one that picks it: the user's mistake the guard must refuse).
HANDING = ("me", "verbless", "wrong_node")
#: The guards' display names in a two-guard tree: ``distinct``, the ``same`` name, or names
#: that differ only by ``/`` and ``.`` (``fetch/cup``, ``fetch.cup``).
NAMES = ("distinct", "same", "dotted")
#: Recovery planners: bt_raider's ``symbolic`` one, a ``scripted`` model-style plan, and
#: hostile plans: act on another type (``swap_type``), on an object the words exclude
#: (``swap_excluded``), or pick other things until the hand is full, then the target
#: (``full_hand``).
PLANNERS = ("symbolic", "scripted", "swap_type", "swap_excluded", "full_hand")
HOSTILE = frozenset(PLANNERS[2:])
#: objectIds of the decoys a hostile plan acts on (another type: ``DECOY_KIND``).
DECOYS = ("Knife|explore|decoy0", "Knife|explore|decoy1")
DECOY_KIND = "Knife"


def _frame(yaw: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """The robot's heading and right vectors in (x, z): the scene contract's (yaw 0 faces +z)."""
    rad = math.radians(yaw)
    heading = (math.sin(rad), math.cos(rad))
    return heading, (heading[1], -heading[0])


def _object(
    object_id: str, kind: str, x: float, y: float, z: float, **extra: Any
) -> dict[str, Any]:
    return {
        "objectId": object_id,
        "objectType": kind,
        "position": {"x": round(x, 4), "y": y, "z": round(z, 4)},
        "visible": True,
        **extra,
    }


def _heading(speaker: str, yaw: float) -> dict[str, Any]:
    """The speaker's ``rotation`` key for her pose (none when the scene does not give it)."""
    turn = {"facing": 180.0, "behind": 0.0, "side": -90.0}.get(speaker)
    return {} if turn is None else {"rotation": {"y": (yaw + turn) % 360.0}}


def _speaker(
    data: dict[str, Any], speaker: str, form: str, robot: tuple[float, float, float]
) -> str | None:
    """Put the person who speaks in the scene (:data:`SPEAKERS`); her id, else None."""
    if speaker == "none" and form not in HANDING:
        return None
    if form in HANDING:
        return USER  # the person to hand to speaks: her heading is set with her
    ax, az, yaw = robot
    (hx, hz), (rx, rz) = _frame(yaw)
    ahead, aside = {"facing": (1.0, 0.0), "behind": (-0.6, 0.0), "side": (0.8, 1.2)}.get(
        speaker, (1.0, 0.0)
    )
    x, z = ax + hx * ahead + rx * aside, az + hz * ahead + rz * aside
    data["humans"] = [_person(x, z, speaker, yaw)]
    return USER


def _person(x: float, z: float, speaker: str, yaw: float) -> dict[str, Any]:
    """The person the robot works for, at ``(x, z)``, facing as ``speaker`` says."""
    return {
        "id": USER,
        "name": "Alex",
        "position": {"x": round(x, 4), "y": 0.0, "z": round(z, 4)},
        "looking_at_robot": True,
        "hands_free": True,
        "user": True,
        **_heading(speaker, yaw),
    }


def _landmarks(
    data: dict[str, Any],
    kind_of_things: str,
    things: tuple[Any, ...],
    y: float,
    made: list[dict[str, Any]],
    heading: tuple[float, float],
) -> None:
    """The landmarks things are in, on or next to: one of each kind, by the first such thing."""
    by_id = {o["objectId"]: o for o in made}
    for kind, word in LANDMARKS.items():
        at = [f"{kind_of_things}|explore|{i}" for i, t in enumerate(things) if t.at == kind]
        at = [i for i in at if i in by_id]
        if not at:
            continue
        first = by_id[at[0]]["position"]
        mark = f"{kind}|explore|mark"
        if word == "next to":  # just beyond the first one, away from the robot's others
            x, z = first["x"] + heading[0] * 0.12, first["z"] + heading[1] * 0.12
            data["objects"].append(_object(mark, kind, x, y, z, pickupable=True, color="white"))
            continue
        data["objects"].append(
            _object(
                mark,
                kind,
                first["x"],
                y - 0.05,
                first["z"],
                receptacle=True,
                receptacleObjectIds=list(at),
            )
        )
        for i in at:
            by_id[i]["parentReceptacles"] = [mark]


def two_cups() -> dict[str, Any]:
    """A user's own scene: the README's two cups (clean and dirty) on an otherwise empty floor."""

    def cup(object_id: str, x: float, dirty: bool) -> dict[str, Any]:
        return {
            "objectId": object_id,
            "objectType": "Cup",
            "position": {"x": x, "y": 0.9, "z": 0.5},
            "pickupable": True,
            "dirtyable": True,
            "isDirty": dirty,
        }

    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": [
            cup("Cup|+00.20|+00.90|+00.50", 0.2, False),
            cup("Cup|-00.20|+00.90|+00.50", -0.2, True),
        ],
    }


__all__ = [
    "DECOYS",
    "DECOY_KIND",
    "HANDING",
    "HOSTILE",
    "NAMES",
    "PLANNERS",
    "SPEAKERS",
    "USER",
    "two_cups",
]
