"""Hypothesis strategies for people's replies: candidate sets to ask "which one?" about.

The replies themselves come from :func:`bt_raider.recovery.reply_forms.reply_forms` (the reply
grammar, in the package so that the explorer can use it too).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from bt_raider.perception.scene import Scene

_TYPES = ("Cup", "Mug", "Apple", "Box", "Bowl", "Knife", "ButterKnife", "TissueBox")
_COLOURS = (None, "red", "blue", "green", "white")


@st.composite
def candidate_scenes(draw: Any) -> tuple[Scene, list[str], str]:
    """A scene with 2-4 objects of one or two types (colours, states, places), one to choose."""
    kind = draw(st.sampled_from(_TYPES))
    # Mostly one type (an ambiguity), sometimes two (a place or an object asked for).
    kinds = [kind, draw(st.sampled_from([kind, kind, *_TYPES]))]
    n = draw(st.integers(2, 4))
    xs = draw(st.lists(st.integers(-12, 12), min_size=n, max_size=n, unique=True))
    objects = []
    for i, x in enumerate(xs):
        this = kinds[i % 2]
        obj = {
            "objectId": f"{this}|{i:+03d}|+00.90|+00.60",
            "objectType": this,
            "position": {"x": x / 10, "y": 0.9, "z": 0.6 + draw(st.integers(0, 3)) / 10},
            "pickupable": True,
        }
        colour = draw(st.sampled_from(_COLOURS))
        if colour:
            obj["color"] = colour
        for flag in draw(st.sets(st.sampled_from(["isDirty", "isOpen", "isSliced"]))):
            obj[flag] = draw(st.booleans())
        objects.append(obj)
    objects.append(
        {"objectId": "HousePlant|+01.50|+00.90|+00.60", "objectType": "HousePlant",
         "position": {"x": 1.5, "y": 0.9, "z": 0.6}}
    )  # fmt: skip
    yaw = draw(st.sampled_from([0.0, 90.0, 180.0, 270.0]))
    scene = Scene(
        {
            "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": yaw}},
            "objects": objects,
        }
    )
    ids = [o["objectId"] for o in objects[:-1]]
    return scene, ids, draw(st.sampled_from(ids))
