"""Name a question's candidates the way a person tells them apart, never by internal labels.

"Which cup should I pick up: Cup_1 or Cup_2?" means nothing to a person. :func:`descriptions`
names each candidate by what sets it apart in the scene: its type (when the types differ), a
colour, a state ("the clean cup"), where it is ("the cup in the fridge") or its side from the
robot ("the cup on the left", "the cup in the middle", "the nearer cup"). Every phrase is read back through the
question's own reader before it is used: a phrase the reader would not ground to exactly that
candidate is never offered, so a person who repeats the question's words is understood.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene, SceneObject

#: State flags a person tells objects apart by, with the words for True and False.
STATE_WORDS = {
    "isDirty": ("dirty", "clean"),
    "isOpen": ("open", "closed"),
    "isToggled": ("switched on", "switched off"),
    "isSliced": ("sliced", "whole"),
    "isCooked": ("cooked", "raw"),
    "isFilledWithLiquid": ("full", "empty"),
}
#: Objects a question describes at most (each phrase is read back, so this bounds the work).
MAX_DESCRIBED = 8
#: Receptacles things are "in" rather than "on" when the scene does not say.
_CONTAINERS = frozenset(
    "Fridge Microwave Cabinet Drawer Box Bowl Pot Pan Sink SinkBasin Bathtub BathtubBasin "
    "GarbageCan Cup Mug Safe Toaster Dresser".split()
)


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_DASHES = re.compile(r"[_\-]+")


def spoken(name: str) -> str:
    """A name as a person says it: ``medicine_counter`` -> "medicine counter", ``CounterTop``
    -> "counter top"."""
    text = _CAMEL.sub(" ", str(name).split("|", 1)[0])
    return " ".join(_DASHES.sub(" ", text).split()).lower()


def _adjectives(obj: SceneObject, among: Sequence[SceneObject]) -> list[str]:
    """Colour and state words of ``obj`` whose value is not the same for all of ``among``."""
    out = []
    colour = " ".join(str(obj.raw.get("color") or "").lower().split())
    # A shade is words too ("light blue", "dark-green"): never dropped for its space.
    said = colour.replace("-", " ").split()
    if said and all(w.isalpha() for w in said):
        if len({str(o.raw.get("color") or "").lower() for o in among}) > 1:
            out.append(colour)
    for flag, (yes, no) in STATE_WORDS.items():
        value = obj.raw.get(flag)
        if isinstance(value, bool) and len({o.raw.get(flag) for o in among}) > 1:
            out.append(yes if value else no)
    return out


def _places(scene: Scene, obj: SceneObject, noun: str) -> list[str]:
    out = []
    for ref in obj.parents:
        try:
            parent = scene.by_id(ref)
        except Exception:  # noqa: BLE001 - a parent the scene lacks is no description
            continue
        inside = parent.flag("openable") or parent.type in _CONTAINERS
        out.append(f"the {noun} {'in' if inside else 'on'} the {spoken(parent.type)}")
    return out


def phrases_for(scene: Scene, obj: SceneObject, among: Sequence[SceneObject]) -> list[str]:
    """Ways to name ``obj`` among the candidates ``among``, most natural first (each still has
    to single it out).

    Args:
        scene: the scene.
        obj: the object.
        among: all the candidates (``obj`` too): only what differs between them is offered.
    """
    noun = spoken(obj.type) or "one"
    adjectives = _adjectives(obj, among)
    out = [f"the {noun}"] if len({o.type for o in among}) > 1 else []
    out += [f"the {a} {noun}" for a in adjectives]
    out += _places(scene, obj, noun)
    out += [f"the {noun} on the left", f"the {noun} on the right"]
    out += [f"the leftmost {noun}", f"the rightmost {noun}"]
    if len(among) == 3:
        out.append(f"the {noun} in the middle")
    if len(among) == 2:
        out += [f"the nearer {noun}", f"the further {noun}"]
    else:
        out += [f"the nearest {noun}", f"the furthest {noun}"]
    out += [f"the {a} {b} {noun}" for i, a in enumerate(adjectives) for b in adjectives[i + 1 :]]
    return out


def descriptions(
    scene: Scene, objs: Sequence[SceneObject], fits: Callable[[str], str | None]
) -> list[str] | None:
    """A phrase per object (in order) that picks out only it, or None when one has none.

    Args:
        scene: the scene.
        objs: the candidates, in the order the question lists them.
        fits: the question's reader: a phrase -> the objectId it grounds to, or None.
    """
    if not 2 <= len(objs) <= MAX_DESCRIBED:
        return None
    out = []
    for obj in objs:
        phrase = description_of(scene, obj, objs, fits)
        if phrase is None:
            return None
        out.append(phrase)
    return out if len(set(out)) == len(out) else None


def description_of(
    scene: Scene,
    obj: SceneObject,
    among: Sequence[SceneObject],
    fits: Callable[[str], str | None],
) -> str | None:
    """The first phrase that picks out ``obj`` among ``among`` (checked with ``fits``), or None.

    Args:
        scene: the scene.
        obj: the object to name.
        among: the objects it must be told apart from (``obj`` too).
        fits: the reader: a phrase -> the objectId it grounds to, or None.
    """
    return next((p for p in phrases_for(scene, obj, among) if fits(p) == obj.id), None)
