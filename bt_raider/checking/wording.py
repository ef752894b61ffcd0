"""How the check words things: names in explanations and tool calls, lists, states, verbs.

The text helpers grounding and the symbolic reasoner share: what an argument can refer to
(``Referent``) and how it is named (:func:`display` in explanations, :func:`tool_name` to the
tools), ``A, B and C`` lists (:func:`listing`), "There is no ..." sentences
(:func:`there_is_no`), ``get_obj_state`` words and how a state reads (``FLAG_WORDS``,
``STATE_TEXT``, :func:`describe_state`), articles, distances, and how each action is said
(``VERBS``, :func:`verb_it`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bt_raider.checking.phrases import ArgPhrase
from bt_raider.errors import ToolError
from bt_raider.perception import relations
from bt_raider.perception.attributes import side_text
from bt_raider.perception.scene import Human, Scene, SceneObject
from bt_raider.perception.tools import Place
from bt_raider.words import singular

#: ``get_obj_state`` answers with these words; lexicon filters use the AI2-THOR flags.
FLAG_WORDS = {
    "isOpen": "open",
    "isToggled": "on",
    "isSliced": "sliced",
    "isDirty": "dirty",
    "isFilledWithLiquid": "filled",
    "isCooked": "cooked",
    "isBroken": "broken",
}

#: How explanations say each action.
VERBS = {
    "pick": ("pick", "picked"),
    "place": ("place", "placed"),
    "open": ("open", "opened"),
    "close": ("close", "closed"),
    "turnon": ("turn on", "turned on"),
    "turnoff": ("turn off", "turned off"),
    "slice": ("slice", "sliced"),
    "approach": ("approach", "approached"),
    "handover": ("hand over", "handed over"),
}


def verb_it(verb: str) -> str:
    """The verb with "it" as its object: "open it", "turn it on" (a particle goes after "it")."""
    head, _, particle = verb.partition(" ")
    return f"{head} it {particle}" if particle else f"{verb} it"


Referent = SceneObject | Human | Place


def display(ref: Referent) -> str:
    """How an explanation names something: display name, person's name (or id), place name."""
    if isinstance(ref, Human):
        return ref.name or ref.id
    return ref.name


def tool_name(ref: Referent) -> str:
    """How tools are told about something: display names, a person's name or id."""
    if isinstance(ref, Human):
        return ref.name or ref.id
    return ref.name


def listing(names: list[str], limit: int = 10) -> str:
    """``A``, ``A and B``, ``A, B and C`` (at most ``limit`` names, then "and N more")."""
    if len(names) > limit:
        rest = len(names) - limit + 1
        names = [*names[: limit - 1], f"{rest} more"]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


_LEADING = re.compile(r"^(?:the|a|an|any|some|this|that|my|your)\s+", re.IGNORECASE)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _noun(phrase: ArgPhrase, *, with_relation: bool = True) -> str:
    """A phrase in words without its determiner: "clean mug left of bowl"."""
    if not (phrase.states or phrase.relation or phrase.generic or phrase.colours or phrase.side):
        return _LEADING.sub("", phrase.text.strip())
    words = [*phrase.states, *phrase.colours, phrase.head if not phrase.generic else "object"]
    out = " ".join(w for w in words if w)
    if with_relation and phrase.relation and phrase.anchor is not None:
        rel = "in or on" if phrase.relation == "from" else phrase.relation
        out += f" {rel} the {_noun(phrase.anchor)}"
    if phrase.side:
        out += f" {side_text(phrase.side)}"
    return out


def is_plural(head: str) -> bool:
    """Whether a head noun is plural ("glasses", "knives"), by its last word."""
    last = head.split()[-1] if head.split() else ""
    return last.endswith("s") and singular(last) != last


def there_is_no(phrase: ArgPhrase, *, with_relation: bool = True) -> str:
    """ "There is no mug" / "There are no glasses": the verb agrees with the phrase's head."""
    noun = _noun(phrase, with_relation=with_relation)
    if not phrase.generic and is_plural(phrase.head):
        return f"There are no {noun}"
    return f"There is no {noun}"


def describe_state(state: dict[str, bool], wanted: dict[str, bool]) -> str:
    """The actual state for the flags a phrase asked about ("dirty", "not sliced")."""
    parts = []
    for flag in wanted:
        word = FLAG_WORDS.get(flag)
        if word is None:
            continue
        if word not in state:
            parts.append(f"never {word}")
            continue
        parts.append(STATE_TEXT[word][bool(state[word])])
    return " and ".join(parts) or "in another state"


#: get_obj_state word -> (text when False, text when True).
STATE_TEXT = {
    "open": ("closed", "open"),
    "on": ("off", "on"),
    "sliced": ("not sliced", "sliced"),
    "dirty": ("clean", "dirty"),
    "filled": ("empty", "filled"),
    "cooked": ("raw", "cooked"),
    "broken": ("intact", "broken"),
}


def _where_is(scene: Scene, objs: Sequence[Referent]) -> str:
    parts = []
    for o in objs[:3]:
        if isinstance(o, SceneObject) and o.parents:
            try:
                holder = scene.by_id(o.parents[0])
            except ToolError:  # a receptacle perception does not list
                parts.append(f"the {o.name} is on or in the {o.parents[0]}")
                continue
            where = "in" if relations.is_container(holder) else "on"
            parts.append(f"the {o.name} is {where} the {holder.name}")
    return (_cap(listing(parts)) + ".") if parts else ""


def article(name: str) -> str:
    """``an Apple``, ``a Mug``, ``the Cabinet_2`` (numbered names are specific)."""
    if re.search(r"_\d+$", name):
        return f"the {name}"
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def metres(value: float) -> str:
    """A distance for an explanation, to the centimetre: ``"0.85 m"``."""
    return f"{value:.2f} m"


def reach_text(value: float) -> str:
    """The robot's reach as the scene gives it, no trailing zeros: ``"0.9 m"``."""
    return f"{value:g} m"


def natural_key(name: str) -> tuple[str, int]:
    """Sort key that puts ``Cup_2`` before ``Cup_10``: the name and its number suffix."""
    m = re.match(r"^(.*?)_(\d+)$", name)
    return (m.group(1), int(m.group(2))) if m else (name, 0)
