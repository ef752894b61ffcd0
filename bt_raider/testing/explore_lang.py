"""The explorer's language: what people say, as small programs, and English for each.

An instruction or a reply is a :class:`Say`: a filter (:class:`Pick`: colour, state, a side in
the robot's or the speaker's frame, a landmark relation, or a word the grammar gives no
meaning), an exclusion ("not the red one", "except", "other than", "but not", "rather than",
"instead of", "the other one"), a selection (nearest, farthest, leftmost, rightmost, middle,
"the second from the left"), a quantifier ("any", "either", "whichever", "you choose";
"both", "all") and a coordination ("the red box or the blue box"). :func:`render` writes it in
varied English, as an instruction (``noun`` is the kind: "pick the box that isn't red") or as
a reply (``noun`` "one": "not the red one").

What the words designate is computed by :mod:`bt_raider.testing.explore_judge`, the oracle's
own small evaluator. Neither module imports anything of bt_raider's reader (checking,
recovery, perception): an oracle that asked the reader would prove nothing (a test holds it).
The vocabulary is data (:data:`LANDMARKS`, :data:`COLOUR_WORDS`, :data:`ODD_WORDS`), so
another domain can bring its own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

#: Landmark kinds a thing may be at, and the relation word for each.
LANDMARKS: dict[str, str] = {"Sink": "in", "Plate": "on", "Kettle": "next to"}
#: A scene colour -> the words people use for it (the first is its own name).
COLOUR_WORDS: dict[str, tuple[str, ...]] = {
    "gold": ("gold", "golden"),
    "grey": ("grey", "gray"),
    "light blue": ("light blue",),
}
#: Modifiers the grammar gives no meaning: a reader must ask about them, never drop them.
ODD_WORDS = ("wobbly", "lucky", "chipped", "my sister's", "unless it is cold", "from yesterday")
#: Selections over what the filter keeps ("biggest", "smallest": by the scene's
#: ``axisAlignedBoundingBox.size``, which a scene may leave out).
SELECTS = ("", "nearest", "farthest", "leftmost", "rightmost", "middle", "second")
SIZES = ("biggest", "smallest")
#: The colours of the two bowls a compound instruction may put things in ("... put it in the
#: bowl, not the red one"); the first is the user's own default destination.
BOWL_COLOURS = ("white", "red")
#: Quantifiers: ``any`` (any member will do), ``all`` (several: the robot must ask).
QUANTS = ("", "any", "all")
#: Frames of a side or a distance: the robot's by default, ``your`` (the robot's, said), ``my``
#: (the speaker's: needs the speaker's heading in the scene).
FRAMES = ("", "your", "my")
_SIDE_WORDS = {"left": "left", "right": "right", "front": "in front of"}


@dataclass(frozen=True)
class Pick:
    """A filter: every field set must hold of an object (empty fields say nothing).

    Attributes:
        colour: a scene ``color`` value.
        state: ``clean`` or ``dirty``.
        side: ``left``, ``right`` or ``front``.
        frame: whose side (:data:`FRAMES`).
        at: a landmark kind of :data:`LANDMARKS`.
        odd: a modifier of :data:`ODD_WORDS` (what no reader can place).
    """

    colour: str = ""
    state: str = ""
    side: str = ""
    frame: str = ""
    at: str = ""
    odd: str = ""

    @property
    def empty(self) -> bool:
        """Nothing set."""
        return not (self.colour or self.state or self.side or self.at or self.odd)


@dataclass(frozen=True)
class Say:
    """A referring expression, as a program.

    Attributes:
        base: what the object is (kept).
        exclude: what it is not (``None``: no exclusion).
        select: a selection of :data:`SELECTS` among what is kept.
        near: whose distance a ``nearest``/``farthest`` is (:data:`FRAMES`).
        quant: a quantifier of :data:`QUANTS`.
        alt: a second filter in coordination ("the red one or the blue one").
        style: which of the phrasings of this program (any integer).
        into: where to put it afterwards, as a program about a bowl ("... and put it in the
            bowl, not the red one"); None: no second step.
    """

    base: Pick = Pick()
    exclude: Pick | None = None
    select: str = ""
    near: str = ""
    quant: str = ""
    alt: Pick | None = None
    style: int = 0
    into: Say | None = None

    def frames(self) -> set[str]:
        """The frames the program's sides and distances are in."""
        out = {p.frame for p in (self.base, self.exclude, self.alt) if p is not None and p.side}
        if self.select in ("nearest", "farthest"):
            out.add(self.near)
        return out | (self.into.frames() if self.into is not None else set())

    def odd(self) -> list[str]:
        """The words no reader can place."""
        mine = [p.odd for p in (self.base, self.exclude, self.alt) if p is not None and p.odd]
        return mine + (self.into.odd() if self.into is not None else [])


def colour_word(colour: str, style: int) -> str:
    """One of the words for a scene colour (synonyms by ``style``)."""
    words = COLOUR_WORDS.get(colour, (colour,))
    return words[style % len(words)]


def _side(side: str, frame: str, style: int) -> str:
    who = {"": "", "your": "your ", "my": "my "}[frame]
    if side == "front":
        if frame == "my":
            return "in front of me"
        return "in front of you"
    if not who:
        return ("on the ", "to the ")[style % 2] + side
    return ("on ", "to ")[style % 2] + who + side


def _adjectives(p: Pick, style: int) -> list[str]:
    out = []
    if p.odd and " " not in p.odd:
        out.append(p.odd)
    if p.state:
        out.append(p.state)
    if p.colour:
        out.append(colour_word(p.colour, style))
    return out


def _posts(p: Pick, style: int) -> list[str]:
    out = []
    if p.at:
        out.append(f"{LANDMARKS[p.at]} the {p.at.lower()}")
    if p.side:
        out.append(_side(p.side, p.frame, style))
    if p.odd.startswith("my "):
        out.append(f"that is {p.odd}")
    elif " " in p.odd:
        out.append(p.odd)
    return out


def phrase_of(p: Pick, noun: str, style: int, *, article: str = "the") -> str:
    """``the <adjectives> <noun> <post-modifiers>`` for a filter."""
    words = [article, *_adjectives(p, style), noun, *_posts(p, style)]
    return " ".join(w for w in words if w)


def _predicate(p: Pick, style: int) -> str:
    """What ``p`` says, after "that is": "red", "in the sink", "on my left"."""
    parts = [w for w in (p.state, colour_word(p.colour, style) if p.colour else "") if w]
    parts += _posts(p, style)
    if p.odd and " " not in p.odd:
        parts.insert(0, p.odd)
    if len(parts) > 1:
        # "that is not dirty and light blue" may be "that is light blue and not dirty": people
        # say "that is not the dirty light blue one" for what the program means.
        return phrase_of(p, "one", style)
    return parts[0] if parts else "it"


_SELECT_WORDS = {
    "nearest": ("nearest", "closest"),
    "farthest": ("farthest", "furthest"),
    "leftmost": ("leftmost",),
    "rightmost": ("rightmost",),
    "middle": ("middle",),
    "biggest": ("biggest", "big", "largest"),
    "smallest": ("smallest", "small"),
}


def _selected(say: Say, noun: str, style: int) -> str:
    """The base phrase with its selection: "the nearest red cup", "the second cup from the left"."""
    base = say.base
    if say.select == "second":
        inner = phrase_of(base, noun, style)
        return inner.replace("the ", "the second ", 1) + " from the left"
    if say.select in ("nearest", "farthest"):
        word = _SELECT_WORDS[say.select][style % 2]
        if say.near == "my":
            to = "me"
        elif say.near == "your" or style % 3 == 2:
            to = "you"
        else:
            to = ""
        if to:
            short = word.replace("nearest", "closest").replace("farthest", "farthest")
            return f"{phrase_of(base, noun, style)} {short} to {to}"
        return phrase_of(base, noun, style).replace("the ", f"the {word} ", 1)
    if say.select in SIZES:
        word = _SELECT_WORDS[say.select][style % len(_SELECT_WORDS[say.select])]
        return phrase_of(base, noun, style).replace("the ", f"the {word} ", 1)
    if say.select:
        word = _SELECT_WORDS[say.select][0]
        return phrase_of(base, noun, style).replace("the ", f"the {word} ", 1)
    return phrase_of(base, noun, style)


def noun_phrase(say: Say, noun: str) -> str:
    """The program as a noun phrase ("the box that isn't red"; ``noun`` "one" for a reply)."""
    style = say.style
    if say.alt is not None:
        first = phrase_of(say.base, noun, style)
        second = phrase_of(say.alt, noun, style + 1)
        return f"{first} or {second}"
    head = _selected(say, noun, style)
    if say.quant == "any":
        head = _quantified(say, noun, style)
    elif say.quant == "all":
        plural = "ones" if noun == "one" else f"{noun}s"
        head = ("both ", "all the ", "all ")[style % 3] + phrase_of(say.base, plural, style)[4:]
    if say.exclude is None:
        return head
    ex = say.exclude
    one = phrase_of(ex, "one", style)
    forms: tuple[str, ...] = (
        f"{head} that is not {_predicate(ex, style)}",
        f"{head} that isn't {_predicate(ex, style)}",
        f"{head}, not {one}",
        f"{head} except {one}",
        f"{head} other than {one}",
        f"{head} but not {one}",
        f"{head} rather than {one}",
        f"{head} instead of {one}",
    )
    if noun == "one" and say.base.empty and not say.select and not say.quant:
        forms += (f"not {one}", f"not {one}, the other one", f"not {one}")
    return forms[style % len(forms)]


def _quantified(say: Say, noun: str, style: int) -> str:
    inner = phrase_of(say.base, noun, style)[4:]
    if noun == "one":
        return ("any of them", "either one", "whichever you like", "you choose")[style % 4]
    forms: tuple[str, ...] = (f"any {inner}", f"whichever {inner}", f"any {inner}, you choose")
    if say.exclude is not None:
        forms = forms[:2]  # "any cup, you choose, except ..." is no English
    return forms[style % len(forms)]


#: Instruction frames: ``{np}`` is the noun phrase.
INSTRUCTIONS = (
    "pick {np}",
    "please pick up {np}",
    "could you pick up {np}",
    "grab {np}",
    "grab {np}, please",  # not "the cup, please": that alone asks to be handed the cup
    "pick up {np} now",
)


#: Compound instructions: ``{np}`` is the object, ``{dest}`` the bowl's noun phrase.
COMPOUNDS = (
    "pick {np} and put it in {dest}",
    "please pick up {np} and put it in {dest}",
    "grab {np} and place it in {dest}",
)


def render(say: Say, noun: str, *, reply: bool = False) -> str:
    """The program in English: an instruction about ``noun`` (a kind, lowercase) or a reply."""
    if reply:
        return noun_phrase(say, "one")
    np = noun_phrase(say, noun)
    if say.into is not None:
        frame = COMPOUNDS[(say.style // 3) % len(COMPOUNDS)]
        return frame.format(np=np, dest=noun_phrase(say.into, "bowl"))
    frame = INSTRUCTIONS[(say.style // 3) % len(INSTRUCTIONS)]
    return frame.format(np=np)


def says(
    colours: list[str],
    *,
    ats: tuple[str, ...] = tuple(LANDMARKS),
    reply: bool = False,
    shape: str | None = None,
) -> Any:
    """A Hypothesis strategy of :class:`Say` programs about objects of these colours.

    Args:
        colours: colours worth naming (mostly the objects' own, so the words can fit).
        ats: the landmark kinds the objects may be at.
        reply: draw replies (no noun; exclusions and frames as people answer).
        shape: draw programs of this shape only (``exclude``, ``frame``, ``odd``, ``alt``,
            ``select``, ``size``, ``quant``, ``into``, ``pick``); None: any.
    """
    # Built once per set of options: a case draws one per episode, and building a composite
    # strategy reads its function's source (the same strategy, so the same draws).
    return _says(tuple(colours), tuple(ats), reply, shape)


@functools.lru_cache(maxsize=1024)
def _says(colours_: tuple[str, ...], ats: tuple[str, ...], reply: bool, shape: str | None) -> Any:
    """:func:`says`, for hashable options."""
    from hypothesis import strategies as st

    colours = list(colours_)

    def maybe(options: Any, p_none: int = 2) -> Any:
        """One of ``options``, or "" ``p_none`` times in ``p_none + 1`` (sampled_from, so the
        weights hold: Hypothesis merges a one_of's equal branches)."""
        return st.sampled_from([""] * p_none * len(options) + list(options))

    def colour_only() -> Any:
        return st.builds(Pick, colour=st.sampled_from(colours))

    picks = st.builds(
        Pick,
        colour=maybe(colours),
        state=maybe(("clean", "dirty"), 4),
        side=maybe(("left", "right", "front"), 4),
        frame=st.sampled_from(FRAMES),
        at=maybe(ats, 4) if ats else st.just(""),
        odd=maybe(ODD_WORDS, 10),
    )
    states = st.builds(Pick, state=st.sampled_from(("clean", "dirty")))
    # What an exclusion's base keeps: everything, or one attribute (most exclusions are short).
    plain = st.one_of(st.just(Pick()), colour_only(), states)
    small = st.builds(
        Pick,
        colour=maybe(colours, 1),
        state=maybe(("clean", "dirty"), 3),
        at=maybe(ats, 3) if ats else st.just(""),
    )

    forced = shape

    def some(p: Pick) -> Pick:
        return p if not p.empty else Pick(colour=colours[0])

    def draw(draw: Any) -> Say:
        shapes: tuple[str, ...] = (
            "pick",
            "select",
            "size",
            "quant",
            "odd",
            "into",
            *("exclude", "alt", "frame") * 3,
        )
        if reply:
            shapes = tuple(x for x in shapes if x != "into")
        shape = forced or draw(st.sampled_from(shapes))
        base = draw(picks)
        exclude = alt = None
        select = near = quant = ""
        if shape == "exclude":
            # What it leaves out: mostly a colour (the form the old reader dropped).
            exclude = some(draw(st.one_of(colour_only(), small)))
            base = Pick() if reply or draw(st.booleans()) else draw(plain)
        elif shape == "odd":
            base = Pick(colour=draw(maybe(colours, 1)), odd=draw(st.sampled_from(ODD_WORDS)))
        elif shape == "select":
            select = draw(st.sampled_from(SELECTS[1:]))
            near = draw(st.sampled_from(FRAMES))
        elif shape == "size":
            base = draw(plain)
            select = draw(st.sampled_from(SIZES))
        elif shape == "into" and not reply:
            # Mostly an exclusion of a bowl (the form the old reader dropped), by a colour.
            base = draw(plain)
            bowl = draw(st.sampled_from((*BOWL_COLOURS, "blue")))
            into = draw(
                st.sampled_from(
                    (
                        Say(exclude=Pick(colour=bowl)),
                        Say(exclude=Pick(colour=bowl)),
                        Say(Pick(colour=bowl)),
                        Say(),
                    )
                )
            )
            into = replace(into, style=draw(st.integers(0, 47)))
            return Say(base, style=draw(st.integers(0, 47)), into=into)
        elif shape == "quant":
            quant = draw(st.sampled_from(QUANTS[1:]))
            if draw(st.booleans()):
                exclude = some(draw(small))
        elif shape == "alt":
            base = some(draw(st.one_of(colour_only(), small)))
            alt = some(draw(st.one_of(colour_only(), states, small)))
            if alt == base:  # "the red one or the red one" is one description
                alt = Pick(state="dirty" if base.state != "dirty" else "clean")
        elif shape == "frame":
            base = Pick(
                side=draw(st.sampled_from(("left", "right", "front"))),
                frame=draw(st.sampled_from(("my", "my", "your"))),
            )
        return Say(base, exclude, select, near, quant, alt, draw(st.integers(0, 47)))

    return _composite()(draw)


@functools.cache
def _composite() -> Any:
    """``st.composite`` made once: making one reads its function's source (milliseconds)."""
    from hypothesis import strategies as st

    @st.composite
    def run(draw: Any, body: Any) -> Any:
        return body(draw)

    return run


__all__ = [
    "BOWL_COLOURS",
    "COLOUR_WORDS",
    "COMPOUNDS",
    "FRAMES",
    "INSTRUCTIONS",
    "LANDMARKS",
    "ODD_WORDS",
    "QUANTS",
    "SELECTS",
    "SIZES",
    "Pick",
    "Say",
    "colour_word",
    "noun_phrase",
    "phrase_of",
    "render",
    "says",
]
