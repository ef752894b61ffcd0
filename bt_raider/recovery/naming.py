"""One way to name an object to a person: explanations, traces and questions alike.

A question names ``Glass_2`` of several glasses by what tells it apart ("the full glass"); an
explanation or a trace that said only "Glass_2" left the person matching labels to words.
:func:`readable` adds the same description after each numbered display name of a text
("Glass_2 (the full glass)"), read back with the same reader the answers use, so a
description is given only when it picks out that one object.
"""

from __future__ import annotations

import re

from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace
from bt_raider.recovery.wording import MAX_DESCRIBED, description_of

_NUMBERED = re.compile(r"\b([A-Z][A-Za-z]*)_(\d+)\b(?! \()")


def describe(scene: Scene, name: str) -> str | None:
    """How a question names the object displayed as ``name`` ("the full glass"), or None."""
    try:
        obj = scene.resolve(name)
    except Exception:
        return None
    if obj.name != name:
        return None
    same = [x for x in scene.objects if x.type == obj.type]
    if not 1 < len(same) <= MAX_DESCRIBED:
        return None
    space = AnswerSpace.objects(scene, [x.id for x in same], describe=False)

    def fits(phrase: str) -> str | None:
        reading = space.read(phrase)
        return reading.value if reading.usable else None

    return description_of(scene, obj, same, fits)


def readable(scene: Scene, text: str) -> str:
    """``text`` with each numbered display name followed by its description, where one exists:
    "matches 2 objects: Glass_1 (the empty glass) and Glass_2 (the full glass)"."""
    if not isinstance(scene, Scene) or not text or "_" not in text:
        return text
    cache: dict[str, str | None] = {}

    def name(match: re.Match[str]) -> str:
        label = match.group(0)
        if label not in cache:
            cache[label] = describe(scene, label)
        said = cache[label]
        return f"{label} ({said})" if said else label

    return _NUMBERED.sub(name, text)
