"""The one reader of referring expressions: what a person's words designate.

An instruction's argument ("the box that is not red", "the glass on my right") and a person's
reply to "which one?" ("not the one in the sink", "the golden one", "either") are read by the
same two functions, in the style of CLEVR-Ref+'s functional programs:

- :func:`read` turns the words into a :class:`Reference`, a small program: coordinated
  :class:`Part`\\ s ("the red box or the blue box"), each a *core* description (type, colour,
  state and relations to landmarks: "the drawer under the sink"), the selections applied to it
  (sides and distances in a named frame, ordinals, superlatives, sizes) and what it excludes
  ("not", "-n't", "except", "other than", "but not", "rather than", "instead of"), with a
  quantifier ("any", "either", "whichever", "you choose": any member; "both", "all": several);
- :func:`designate` runs the program over a domain (the scene's objects, or a question's
  candidates) and returns the :class:`Designation`: the objects the words allow, whether one,
  any or several are meant, and the words it could not read.

**Every word is accounted for.** A word is consumed by the program or is on
:data:`IGNORED` (words that cannot change the referent: "please", "the", "now" ...). Any
other word (a negator, quantifier, comparative, possessive, conditional or unknown modifier)
is *unread*: the designation is then unclear, never a choice (``Designation.unclear``).

**Frames.** "my left", "in front of me", "near me" are read from the speaker (``speaker``: a
:class:`~bt_raider.perception.attributes.Viewer`, a person's ``position`` and ``rotation``);
"your left", "behind you", "closest to you", "on the left" from the robot. A speaker frame
whose person or heading is unknown is unclear: never a guess.

The core of a part (its type, colours, states, relations) is grounded by the caller's ``core``
function, so the check grounds it through its perception tools and a reply through the same
grounder (:func:`bt_raider.checking.designation.designate` wires both); the grammar is here.
Public API: :func:`read`, :func:`designate`, :class:`Reference`, :class:`Part`,
:class:`Select`, :class:`Designation`, :class:`Core`, :func:`speaker_view`, :data:`IGNORED`,
:data:`LEAD_INS`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bt_raider.perception import attributes
from bt_raider.perception.attributes import Viewer

__all__ = [
    "IGNORED",
    "LEAD_INS",
    "ROOM_WORDS",
    "Core",
    "Designation",
    "Part",
    "Reference",
    "Select",
    "designate",
    "read",
    "speaker_view",
]

Mode = Literal["one", "any", "several"]

#: Words that cannot change which object is meant: politeness, articles, glue of a relative
#: clause, hedges. Read and dropped anywhere (docs/reader.md lists them).
IGNORED = frozenset(
    (
        "please kindly could would can will shall you the a an this that these those is are was "
        "were be being been which who whose now just then here there thanks thank ok okay so "
        "well yes yeah yep sure also again really i think guess believe maybe perhaps probably "
        "hmm um uh oh hey actually only exactly one ones of sorry oops whoops wait"
    ).split()
)
#: Ignored words that may be skipped before a lead-in ("yes, take ..."); "one" stays: it is
#: the head of "the one next to the plant".
_LEADING = IGNORED - {"one", "ones", "of"}
#: Ignored words that are no glue of a phrase ("sorry", "please"): dropped from a core.
_NOISE = IGNORED - set(
    "the a an of that which who whose is are was were be being been one ones this these those "
    "there here".split()
)
#: Rooms: a scene is one room (AI2-THOR's are), so "the kitchen sink" is its sink. A
#: multi-room scene would need them read; until then they are documented as ignored.
ROOM_WORDS = frozenset("kitchen bathroom bedroom living dining room office hallway".split())
#: Words and phrases that may open a reply or a phrase and say nothing of the referent
#: ("take the red one", "I want the blue one", "it is the left one").
LEAD_INS = (
    "i would like",
    "i'd like",
    "i want",
    "i need",
    "i mean",
    "i meant",
    "you should",
    "you can",
    "you could",
    "go for",
    "it should be",
    "it must be",
    "should be",
    "it is",
    "it's",
    "that is",
    "that's",
    "this is",
    "pick up",
    "take",
    "pick",
    "use",
    "get",
    "grab",
    "bring",
    "choose",
    "give me",
    "for me",
)
#: Markers of an exclusion; what follows, to the end of its clause, is excluded.
EXCLUDERS = (
    ("except", "for"),
    ("other", "than"),
    ("but", "not"),
    ("rather", "than"),
    ("instead", "of"),
    ("apart", "from"),
    ("anything", "but"),
    ("except",),
    ("excluding",),
    ("not",),
    ("never",),
)
#: Glue before and after a "not" that says nothing more ("that is not", "I do not want").
_NOT_BEFORE = frozenset("that which who is are was were do does did i it".split())
_NOT_AFTER = frozenset("want mean need like say".split())
#: Any member will do.
_ANY = frozenset("any either whichever whatever some anyone anything".split())
_ANY_PHRASES = (
    ("you", "choose"),
    ("you", "decide"),
    ("you", "pick"),
    ("your", "choice"),
    ("your", "call"),
    ("up", "to", "you"),
    ("i", "do", "not", "mind"),
    ("i", "do", "not", "care"),
    ("do", "not", "mind"),
    ("do", "not", "care"),
    ("it", "does", "not", "matter"),
    ("does", "not", "matter"),
    ("one", "or", "the", "other"),
)
#: Several are meant.
_ALL = frozenset("both all every each".split())
#: A clause that makes the reference conditional: unread with everything up to its clause end.
_CONDITIONS = frozenset("if unless when whenever while until because provided as".split())
#: Words that designate by what the scene cannot show: unread.
_POSSESSIVES = frozenset("my your his her their our its".split())
_DESIGNATORS = frozenset("other another else same different previous next".split())
#: Side words; "leftmost" is "on the left": the one object on that side, never the most of two
#: on it (the check and replies read sides alike: attributes.on_side).
_SIDES = {
    "left": "left",
    "right": "right",
    "left-hand": "left",
    "right-hand": "right",
    "leftmost": "left",
    "left-most": "left",
    "rightmost": "right",
    "right-most": "right",
}
_EXTREMES = {
    "middle": "middle",
    "center": "middle",
    "centre": "middle",
}
_NEAR = frozenset("nearest closest nearer closer near".split())
_FAR = frozenset("farthest furthest farther further far".split())
_BIG = frozenset("big bigger biggest large larger largest huge".split())
_SMALL = frozenset("small smaller smallest little tiny".split())
_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
    "5th": 5,
    "last": -1,
}
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
#: Who a frame word names: the speaker, or the robot.
_SPEAKER = frozenset({"me", "myself", "us", "my", "our"})
_ROBOT = frozenset({"you", "yourself", "your", "robot", "robot's"})
#: How much nearer (m) one object must be than the next for "the nearest" to mean it.
DISTANCE_MARGIN = 0.15
#: How much bigger (ratio of volumes) one object must be than the next for "the big one".
SIZE_RATIO = 1.25


# --------------------------------------------------------------------------- the program
@dataclass(frozen=True)
class Select:
    """One selection applied to a part's objects, in order.

    Attributes:
        kind: ``side`` (left, right, front, behind), ``distance`` (near, far), ``extreme``
            (leftmost, rightmost, middle), ``size`` (big, small) or ``ordinal``.
        value: the side, distance, extreme or size; for an ordinal, the 1-based position
            (-1: the last).
        frame: ``robot`` or ``speaker``: whose view a side or distance is taken from; for an
            ordinal, ``list`` (the question's order) or the side counted from ("left").
        words: the words it was read from.
    """

    kind: str
    value: str | int
    frame: str = "robot"
    words: str = ""


@dataclass(frozen=True)
class Part:
    """One description: a core, the selections on it and what it excludes.

    Attributes:
        core: the words the caller's ``core`` grounds (type, colour, state, relations); empty:
            every object of the domain.
        selects: selections applied after the core, in order.
        excluded: descriptions whose objects are removed.
        ids: objectIds said outright ("Cup|+00.20|..."): the part is one of them.
    """

    core: str
    selects: tuple[Select, ...] = ()
    excluded: tuple[Part, ...] = ()
    ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reference:
    """A phrase read as a program.

    Attributes:
        text: the phrase as given.
        parts: the coordinated descriptions ("A or B", "A and B": two); each a :class:`Part`.
        quantifier: ``one``, ``any`` (any member will do) or ``all`` (several are meant).
        unread: words that could change the referent and that the program does not read.
        other: "the other one": the caller knows other than what (a reply's correction).
    """

    text: str
    parts: tuple[Part, ...]
    quantifier: Literal["one", "any", "all"] = "one"
    unread: tuple[str, ...] = ()
    other: bool = False


@dataclass(frozen=True)
class Core:
    """What the caller's ``core`` function grounded a core description to.

    Attributes:
        objects: the objects it fits (any order; the domain's order is kept).
        unread: words of the core the caller could not read (an unknown modifier).
        reason: why nothing fits, for a person.
        certain: of ``objects``, those that fit for certain (an object whose colour the scene
            does not give may be red: it fits "red", but not for certain); None: all of them.
            An exclusion removes only what it excludes for certain ("not the blue one" keeps
            a cup of unknown colour, so two may be left: a question).
    """

    objects: Sequence[Any] = ()
    unread: tuple[str, ...] = ()
    reason: str = ""
    certain: Sequence[Any] | None = None


@dataclass(frozen=True)
class Designation:
    """What a phrase designates in a domain.

    Attributes:
        ids: the objects the words allow, in the domain's order.
        mode: ``one`` (exactly one is meant: several is a question), ``any`` (any member is
            acceptable) or ``several`` (several are meant, never one of them).
        unclear: why the words cannot be read for certain ("I did not understand 'unless it is
            cold'"); empty when they can.
        unread: the words left over (part of ``unclear``).
        reason: when ``ids`` is empty, why; when several fit, what could not tell them apart.
    """

    ids: tuple[str, ...]
    mode: Mode = "one"
    unclear: str = ""
    unread: tuple[str, ...] = ()
    reason: str = ""
    reference: Reference | None = field(default=None, compare=False, repr=False)

    @property
    def single(self) -> str | None:
        """The one object meant, when the words are clear and designate exactly one."""
        if self.unclear or self.mode == "several" or len(self.ids) != 1:
            return None
        return self.ids[0]


# --------------------------------------------------------------------------- tokens
def _tokens(text: str) -> list[tuple[str, str]]:
    """``(word, as written)`` pairs; "," marks a clause; "n't" becomes "not"."""
    t = str(text).replace("\u2019", "'").replace("\u2018", "'")
    t = re.sub(r"\bcan'?t\b|\bcannot\b", "can not", t, flags=re.IGNORECASE)
    t = re.sub(r"\bwon'?t\b", "will not", t, flags=re.IGNORECASE)
    t = re.sub(r"(\w)n't\b", r"\1 not", t, flags=re.IGNORECASE)
    t = re.sub(r"\b(is|are|was|were|does|do|did|has|have)nt\b", r"\1 not", t, flags=re.IGNORECASE)
    t = re.sub(r"\b(it|that|there|what)'s\b", r"\1 is", t, flags=re.IGNORECASE)
    out: list[tuple[str, str]] = []
    for raw in re.findall(r"[,;:!?]|[^\s,;:!?()\"\[\]{}]+", t):
        if raw in ",;:!?":
            out.append((",", ","))
            continue
        word = raw if "|" in raw else raw.strip(".'\"`*")
        if not word:
            continue
        out.append((word if "|" in word else word.lower(), word))
    return out


def _at(words: list[str], k: int, phrase: Sequence[str]) -> bool:
    return tuple(words[k : k + len(phrase)]) == tuple(phrase)


# --------------------------------------------------------------------------- read
def read(text: str) -> Reference:
    """Read a phrase or a reply into a :class:`Reference` (pure text: no scene).

    Never raises on text: what it cannot read is in :attr:`Reference.unread`.
    """
    toks = _tokens(text)
    words = [w for w, _ in toks]
    # Lead-ins at the start only ("take the red one"): a verb inside would be read.
    k = 0
    moved = True
    while moved:
        moved = False
        for lead in LEAD_INS:
            phrase = lead.split()
            if _at(words, k, phrase):
                k += len(phrase)
                moved = True
                break
        while k < len(words) and (words[k] in _LEADING or words[k] == ","):
            k += 1
    toks, words = toks[k:], words[k:]
    quantifier: Literal["one", "any", "all"] = "one"
    unread: list[str] = []
    # Quantifier phrases first: "it does not matter" holds a "not" that excludes nothing.
    keep: list[int] = []
    i = 0
    while i < len(words):
        phrase = next((p for p in _ANY_PHRASES if _at(words, i, p)), None)
        if phrase is not None:
            quantifier = "any"
            i += len(phrase)
            continue
        keep.append(i)
        i += 1
    toks = [toks[j] for j in keep]
    words = [words[j] for j in keep]
    # Clauses: a condition runs to its clause's end, and is unread.
    kept: list[tuple[str, str]] = []
    i = 0
    while i < len(toks):
        if words[i] in _CONDITIONS:
            end = next((j for j in range(i + 1, len(words)) if words[j] == ","), len(words))
            unread.append(" ".join(o for _, o in toks[i:end]))
            i = end
            continue
        kept.append(toks[i])
        i += 1
    parts_toks = _split(kept, ("or", "and", "nor", "plus", "&"))
    parts: list[Part] = []
    other = False
    for ptoks in parts_toks:
        part, q, left, is_other = _read_part(ptoks)
        other = other or is_other
        if q != "one":
            quantifier = "all" if "all" in (q, quantifier) else q
        unread += left
        if part is not None:
            parts.append(part)
    if not parts:
        parts.append(Part(""))
    return Reference(str(text), tuple(parts), quantifier, tuple(unread), other)


def _split(toks: list[tuple[str, str]], joints: Sequence[str]) -> list[list[tuple[str, str]]]:
    """``toks`` split at top-level coordination (not inside an exclusion's clause)."""
    out: list[list[tuple[str, str]]] = [[]]
    excluding = False
    for w, o in toks:
        if w == ",":
            excluding = False
        if any(w == e[0] for e in EXCLUDERS) and w not in ("other", "anything", "but"):
            excluding = True
        if w in joints and not excluding and out[-1]:
            out.append([])
            continue
        out[-1].append((w, o))
    return [p for p in out if any(w != "," for w, _ in p)]


def _read_part(
    toks: list[tuple[str, str]],
) -> tuple[Part | None, Literal["one", "any", "all"], list[str], bool]:
    """One description: its exclusions, then its selections, then the core left."""
    words = [w for w, _ in toks]
    quantifier: Literal["one", "any", "all"] = "one"
    # Exclusions: from a marker to the clause's end (a comma, or "but").
    base: list[tuple[str, str]] = []
    excluded: list[list[tuple[str, str]]] = []
    i = 0
    while i < len(toks):
        marker = next((m for m in EXCLUDERS if _at(words, i, m)), None)
        if marker is not None:
            # "that is not", "I do not want": glue before and after the marker.
            while base and base[-1][0] in _NOT_BEFORE:
                base.pop()
            j = i + len(marker)
            while j < len(words) and words[j] in _NOT_AFTER:
                j += 1
            end = next(
                (m for m in range(j, len(words)) if words[m] == "," or words[m] == "but"),
                len(words),
            )
            excluded.append(toks[j:end])
            i = end
            continue
        base.append(toks[i])
        i += 1
    unread: list[str] = []
    selects: list[Select] = []
    core: list[tuple[str, str]] = []
    ids = [o for w, o in base if "|" in w]
    if ids and len(ids) < len([w for w, _ in base if w not in IGNORED and w != ","]):
        # "Cup|1, next to the plant": that one, and it must be next to the plant.
        base = [("one", "one") if "|" in w else (w, o) for w, o in base]
    elif ids:
        ids = []  # an objectId alone is the core: the grounder finds it
    other = False
    bwords = [w for w, _ in base]
    n = len(base)
    i = 0
    while i < n:
        w = bwords[i]
        if w == ",":
            i += 1
            continue
        if w in _ANY:
            quantifier = "any"
            i += 1
            continue
        if w in _ALL:
            quantifier = "all"
            i += 2 if bwords[i + 1 : i + 2] == ["of"] else 1
            continue
        found = _select_at(bwords, i)
        if found is not None:
            sel, used = found
            if sel is None:
                unread.append(" ".join(o for _, o in base[i : i + used]))
            else:
                selects.append(sel)
            i += used
            continue
        if w in ("other", "another") and all(x in IGNORED or x == "," for x in bwords[:i]):
            rest = [x for x in bwords[i + 1 :] if x not in IGNORED]
            if len(rest) <= 1:
                other = True  # "the other one", "the other cup": the caller says which
                core.extend(base[i + 1 :])
                break
        if w == "next" and bwords[i + 1 : i + 2] == ["to"]:
            core.append(base[i])  # "next to the bowl": a relation, read in the core
            i += 1
            continue
        if w in _POSSESSIVES or w in _DESIGNATORS or (w.endswith("'s") and "|" not in w):
            unread.append(base[i][1])
            i += 1
            continue
        if w in _NUMBERS and i + 1 < n and bwords[i + 1] not in ("or", ","):
            unread.append(base[i][1])  # "the two cups": how many, not which
            i += 1
            continue
        core.append(base[i])
        i += 1
    ex_parts: list[Part] = []
    for etoks in excluded:
        part, _q, left, _o = _read_part(etoks)
        unread += left
        ex_parts.append(part if part is not None else Part(""))
    if excluded and not any(etoks for etoks in excluded):
        unread.append("not")  # "not" with nothing after it
    selects = _axis_ordinals(selects, unread)
    # The core keeps its glue ("on the left of the sink"); only-ignorable words are no core.
    core = [(w, o) for w, o in core if w != "," and w not in _NOISE]
    core_text = " ".join(o for _, o in core) if any(w not in IGNORED for w, _ in core) else ""
    if not (core_text or selects or ex_parts or ids or other) and quantifier == "one":
        return None, quantifier, unread, other
    return Part(core_text, tuple(selects), tuple(ex_parts), tuple(ids)), quantifier, unread, other


def _axis_ordinals(selects: list[Select], unread: list[str]) -> list[Select]:
    """ "the second drawer from the left": an ordinal counted along the side that follows."""
    out: list[Select] = []
    for sel in selects:
        if sel.kind == "side" and sel.words.startswith("from "):
            at = next(
                (k for k, s in enumerate(out) if s.kind == "ordinal" and s.frame == "list"), None
            )
            if at is None:
                unread.append(sel.words)  # "the cup from the left": counted from nothing
                continue
            ordinal = out[at]
            out[at] = Select(
                "ordinal",
                ordinal.value,
                f"{sel.value}:{sel.frame}",
                f"{ordinal.words} {sel.words}",
            )
            continue
        out.append(sel)
    return out


def _frame_word(words: list[str], k: int) -> str | None:
    """``speaker`` or ``robot`` for the frame word at ``k`` ("me", "you", "the robot")."""
    if k < len(words) and words[k] in _SPEAKER:
        return "speaker"
    if k < len(words) and words[k] in _ROBOT:
        return "robot"
    return None


def _select_at(words: list[str], i: int) -> tuple[Select | None, int] | None:
    """A selection starting at ``i``: ``(select, words used)``; ``(None, n)`` for words that
    select in a way that cannot be read (an ordinal from the end); None: no selection here."""
    w = words[i]
    n = len(words)
    nxt = words[i + 1] if i + 1 < n else ""
    # "right now", "right here", "right next to": no side.
    if w == "right" and nxt in ("now", "here", "there", "away", "next", "behind", "by"):
        return Select("skip", 0), 1  # dropped below
    # on/to/at [the] [my|your] left|right [hand] [side] -- not "... of <object>".
    if w in ("on", "to", "at", "from"):
        k = i + 1
        while k < n and words[k] == "the":
            k += 1
        frame = "robot"
        if k < n and words[k] in ("my", "your", "our"):
            frame = "speaker" if words[k] in ("my", "our") else "robot"
            k += 1
        if k < n and words[k] in _SIDES:
            side = _SIDES[words[k]]
            k += 1
            while k < n and words[k] in ("hand", "side"):
                k += 1
            if k >= n or words[k] != "of":
                return Select("side", side, frame, " ".join(words[i:k])), k - i
            if words[k] == "of":
                f = _frame_word(words, k + 1)
                if f is not None:  # "to the left of me"
                    return Select("side", side, f, " ".join(words[i : k + 2])), k + 2 - i
                if words[k + 1 : k + 3] == ["the", "robot"]:
                    return Select("side", side, "robot", " ".join(words[i : k + 3])), k + 3 - i
    if w in ("my", "your") and nxt in _SIDES and (i + 2 >= n or words[i + 2] != "of"):
        frame = "speaker" if w == "my" else "robot"
        k = i + 2
        while k < n and words[k] in ("hand", "side"):
            k += 1
        return Select("side", _SIDES[nxt], frame, " ".join(words[i:k])), k - i
    if w in _SIDES and nxt not in ("of", "side", "hand", "half", "end", "corner", "edge"):
        return Select("side", _SIDES[w], "robot", w), 1
    if w in ("in", "at") and (
        nxt in _EXTREMES or (nxt == "the" and i + 2 < n and words[i + 2] in _EXTREMES)
    ):
        lead = 2 if nxt == "the" else 1  # "in the middle": the extreme, not a relation
        found = _select_at(words, i + lead)
        if found is not None and found[0] is not None:
            return found[0], found[1] + lead
    if w in _EXTREMES:
        k = i + 1
        frame = "robot"
        if k < n and words[k] == "one":
            k += 1
        if _at(words, k, ("from",)) or _at(words, k, ("to",)):
            f = _frame_word(words, k + 1)
            if f is not None:
                frame, k = f, k + 2
        start = i - 1 if i > 0 and words[i - 1] in ("in", "at") else i
        return Select("extreme", _EXTREMES[w], frame, " ".join(words[start:k])), k - i
    if w == "in" and nxt == "front":
        if i + 2 >= n:
            return Select("side", "front", "robot", "in front"), 2
        if words[i + 2] == "of":
            f = _frame_word(words, i + 3)
            if f is None and words[i + 3 : i + 5] == ["the", "robot"]:
                return Select("side", "front", "robot", "in front of the robot"), 5
            if f is not None:
                return Select("side", "front", f, " ".join(words[i : i + 4])), 4
        return None
    if w == "behind":
        f = _frame_word(words, i + 1)
        if f is not None:
            return Select("side", "behind", f, " ".join(words[i : i + 2])), 2
        if words[i + 1 : i + 3] == ["the", "robot"]:
            return Select("side", "behind", "robot", "behind the robot"), 3
        if i + 1 >= n:
            return Select("side", "behind", "robot", "behind"), 1
        return None
    if w == "ahead" or (w == "straight" and nxt == "ahead"):
        used = 2 if w == "straight" else 1
        return Select("side", "front", "robot", " ".join(words[i : i + used])), used
    if w in _NEAR or w in _FAR:
        value = "near" if w in _NEAR else "far"
        k = i + 1
        if k < n and words[k] == "one":
            k += 1
        if k < n and words[k] in ("to", "from"):
            f = _frame_word(words, k + 1)
            if f is not None:
                return Select("distance", value, f, " ".join(words[i : k + 2])), k + 2 - i
            if words[k + 1 : k + 3] == ["the", "robot"]:
                return Select("distance", value, "robot", " ".join(words[i : k + 3])), k + 3 - i
            if w in ("near", "nearer", "closer", "far", "farther", "further"):
                return None  # "near to the sink": a relation, read in the core
            return None  # "closest to the sink": a relation
        if w == "near":
            f = _frame_word(words, k)
            if f is not None:  # "near me", "near you"
                return Select("distance", value, f, " ".join(words[i : k + 1])), k + 1 - i
            if k < n:
                return None  # "near the sink": a relation
        return Select("distance", value, "robot", " ".join(words[i:k])), k - i
    if w in ("next", "close") and nxt == "to":
        f = _frame_word(words, i + 2)
        if f is not None:  # "next to me"
            return Select("distance", "near", f, " ".join(words[i : i + 3])), 3
        return None
    if w in _BIG or w in _SMALL:
        return Select("size", "big" if w in _BIG else "small", "robot", w), 1
    if w in ("penultimate", "zeroth", "0th") or _at(words, i, ("second", "to", "last")):
        used = 3 if w == "second" else 1
        return None, used  # "second to last", "zeroth": unread
    if w in _ORDINALS or (w.isdigit() and i > 0 and words[i - 1] in ("number", "option", "no")):
        value = _ORDINALS[w] if w in _ORDINALS else int(w)
        k = i + 1
        if k < n and words[k] == "one":
            k += 1
        if k < n and words[k] == "from":
            m = k + 1
            while m < n and words[m] in ("the", "my", "your"):
                m += 1
            frame = "speaker" if "my" in words[k:m] else "robot"
            if m < n and words[m] in _SIDES:
                return Select("ordinal", value, f"{_SIDES[words[m]]}:{frame}", " ".join(
                    words[i : m + 1]
                )), m + 1 - i  # fmt: skip
            return None, m + 1 - i  # "third from the end", "second from the top"
        return Select("ordinal", value, "list", " ".join(words[i:k])), k - i
    if w in ("number", "option", "no", "choice") and (
        nxt in _NUMBERS or nxt == "one" or nxt.isdigit()
    ):
        value = _NUMBERS.get(nxt) or (1 if nxt == "one" else int(nxt))
        return Select("ordinal", value, "list", f"{w} {nxt}"), 2
    return None


# --------------------------------------------------------------------------- evaluate
CoreFn = Callable[[str], Core]


def designate(
    reference: Reference | str,
    domain: Sequence[Any],
    core: CoreFn,
    *,
    scene: Any = None,
    order: Sequence[str] | None = None,
    speaker: Viewer | None = None,
) -> Designation:
    """Run a reference over ``domain``.

    Args:
        reference: a :class:`Reference` or the words (read with :func:`read`).
        domain: the objects in scope (``id``, ``xyz``, ``raw``): the scene's, or a question's
            candidates.
        core: grounds a core description to objects (:class:`Core`); called once per part.
        scene: the scene (the robot's pose, for sides and distances); None: a side or distance
            in the robot's frame is unclear.
        order: the ids in the order a question listed them ("the first one" counts in it);
            None: an ordinal without an axis is unclear.
        speaker: the speaker's position and heading, for "my left", "near me"
            (:func:`speaker_view`); None: the speaker is unknown, and what is said from the
            speaker's view is unclear.

    Returns:
        The :class:`Designation` (never raises on words; a bad scene value is a
        :class:`~bt_raider.errors.SceneError` for the caller to fail closed on).
    """
    ref = read(reference) if isinstance(reference, str) else reference
    unread = list(ref.unread)
    unclear: list[str] = []
    reasons: list[str] = []
    chosen: list[Any] = []
    ev = _Eval(domain, core, scene, order, speaker)
    for part in ref.parts:
        got, why, left, unsure = ev.part(part)
        unread += left
        unclear += unsure
        if why:
            reasons.append(why)
        for obj in got:
            if all(obj.id != c.id for c in chosen):
                chosen.append(obj)
    rank = {o.id: k for k, o in enumerate(domain)}
    ids = tuple(o.id for o in sorted(chosen, key=lambda o: rank.get(o.id, len(rank))))
    mode: Mode = "one"
    if ref.quantifier == "any":
        mode = "any"
    elif ref.quantifier == "all" or len(ref.parts) > 1:
        mode = "several"
    said = ""
    if unread:
        said = "I did not understand " + " and ".join(f"'{u}'" for u in dict.fromkeys(unread))
    if ref.other:
        unclear.append("other than which one?")
    text = "; ".join(x for x in (said, *dict.fromkeys(unclear)) if x)
    reason = "; ".join(dict.fromkeys(reasons))
    return Designation(ids, mode, text, tuple(dict.fromkeys(unread)), reason, ref)


class _Eval:
    """One evaluation: the domain, the core grounder, the frames."""

    def __init__(
        self,
        domain: Sequence[Any],
        core: CoreFn,
        scene: Any,
        order: Sequence[str] | None,
        speaker: Viewer | None,
    ) -> None:
        self.domain = list(domain)
        self.core = core
        self.scene = scene
        self.order = list(order) if order is not None else None
        self.speaker = speaker

    def part(self, part: Part) -> tuple[list[Any], str, list[str], list[str]]:
        """``(objects, reason, unread, unclear)`` of one part."""
        pool, _sure, reason, unread, unclear = self._part(part)
        return pool, reason, unread, unclear

    def _part(self, part: Part) -> tuple[list[Any], set[str], str, list[str], list[str]]:
        """``(objects it may mean, ids it means for certain, reason, unread, unclear)``."""
        unread: list[str] = []
        unclear: list[str] = []
        if part.core:
            found = self.core(part.core)
            unread += found.unread
            ids = {o.id for o in found.objects}
            pool = [o for o in self.domain if o.id in ids]
            sure = ids if found.certain is None else {o.id for o in found.certain} & ids
            reason = found.reason
        else:
            pool, reason = list(self.domain), ""
            sure = {o.id for o in pool}
        if part.ids:
            pool = [o for o in pool if o.id in part.ids]
            if len(set(part.ids)) > 1:
                pool = []  # "Cup|1 Cup|2" is no one object
                reason = "two names for one object"
        for ex in part.excluded:
            maybe, certain, _why, left, unsure = self._part(ex)
            unread += left
            unclear += unsure
            # Only what is excluded for certain goes; what may be excluded is no longer sure.
            pool = [o for o in pool if o.id not in certain]
            sure -= {o.id for o in maybe}
        for sel in part.selects:
            if sel.kind == "skip":
                continue
            pool, why, unsure_sel = self.select(sel, pool)
            unclear += unsure_sel
            if why:
                reason = why
        if not pool and not reason:
            reason = "nothing fits"
        return pool, sure & {o.id for o in pool}, reason, unread, unclear

    def viewer(self, frame: str, words: str, *, facing: bool = True) -> tuple[Viewer | None, str]:
        """The viewer of a frame, or why it is unknown (``facing``: its heading is needed)."""
        if frame == "speaker":
            if self.speaker is None:
                return None, f"I do not know who is speaking, so I cannot tell what '{words}' means"
            if facing and not self.speaker.facing:
                return None, (
                    f"I do not know which way you face, so I cannot tell what '{words}' means"
                )
            return self.speaker, ""
        if self.scene is None:
            return None, f"I cannot see '{words}' from here"
        return None, ""

    def select(self, sel: Select, pool: list[Any]) -> tuple[list[Any], str, list[str]]:
        """``(kept, reason, unclear)``."""
        if sel.kind == "ordinal":
            return self.ordinal(sel, pool)
        if sel.kind == "size":
            return self.size(sel, pool)
        viewer, why = self.viewer(sel.frame, sel.words, facing=sel.kind != "distance")
        if why:
            return pool, "", [why]
        if sel.kind == "side":
            kept, reason = attributes.on_side(self.scene, pool, str(sel.value), viewer)
            if viewer is None and not attributes.heading_known(self.scene) and len(kept) > 1:
                return pool, "", [reason]  # which way the robot faces is unknown: never a guess
            return kept, reason, []
        if sel.kind == "distance":
            return self.distance(sel, pool, viewer)
        return self.extreme(sel, pool, viewer)

    def _origin(self, viewer: Viewer | None) -> tuple[float, float]:
        if viewer is not None:
            return viewer.x, viewer.z
        x, _, z = self.scene.agent_xyz
        return float(x), float(z)

    def _lateral(self, viewer: Viewer | None, obj: Any) -> float:
        ox, oz = self._origin(viewer)
        if viewer is not None:
            yaw = math.radians(viewer.yaw)
            rx, rz = math.cos(yaw), -math.sin(yaw)
        else:
            rx, rz = self.scene.right_xz()
        x, _, z = obj.xyz
        return (x - ox) * rx + (z - oz) * rz

    def distance(
        self, sel: Select, pool: list[Any], viewer: Viewer | None
    ) -> tuple[list[Any], str, list[str]]:
        if len(pool) <= 1:
            return pool, "", []
        ox, oz = self._origin(viewer)
        ranked = sorted((math.hypot(o.xyz[0] - ox, o.xyz[2] - oz), k) for k, o in enumerate(pool))
        if sel.value == "far":
            ranked.reverse()
        if abs(ranked[1][0] - ranked[0][0]) <= DISTANCE_MARGIN:
            return pool, f"'{sel.words}' cannot tell them apart: they are about as far", []
        return [pool[ranked[0][1]]], "", []

    def extreme(
        self, sel: Select, pool: list[Any], viewer: Viewer | None
    ) -> tuple[list[Any], str, list[str]]:
        if len(pool) <= 1:
            return pool, "", []
        if viewer is None and not attributes.heading_known(self.scene):
            return pool, "", [f"I do not know which way I face, so '{sel.words}' is unclear"]
        ranked = sorted((self._lateral(viewer, o), k) for k, o in enumerate(pool))
        margin = 0.05
        if sel.value == "middle":
            if len(ranked) % 2 == 0:
                return pool, f"no one of them is in the middle ({len(pool)} of them)", []
            mid = len(ranked) // 2
            ok = min(ranked[mid][0] - ranked[mid - 1][0], ranked[mid + 1][0] - ranked[mid][0])
            if ok <= margin:
                return pool, f"'{sel.words}' cannot tell them apart", []
            return [pool[ranked[mid][1]]], "", []
        if sel.value == "rightmost":
            ranked.reverse()
        if abs(ranked[1][0] - ranked[0][0]) <= margin:
            return pool, f"'{sel.words}' cannot tell them apart", []
        return [pool[ranked[0][1]]], "", []

    def size(self, sel: Select, pool: list[Any]) -> tuple[list[Any], str, list[str]]:
        if len(pool) <= 1:
            return pool, "", []
        volumes = [_volume(o) for o in pool]
        if any(v is None for v in volumes):
            return pool, "", [f"the scene does not give their sizes, so '{sel.words}' is unclear"]
        ranked = sorted(((v or 0.0), k) for k, v in enumerate(volumes))
        if sel.value == "big":
            ranked.reverse()
            ok = ranked[0][0] > ranked[1][0] * SIZE_RATIO
        else:
            ok = ranked[1][0] > ranked[0][0] * SIZE_RATIO
        if not ok:
            return pool, f"'{sel.words}' cannot tell them apart: they are about as big", []
        return [pool[ranked[0][1]]], "", []

    def ordinal(self, sel: Select, pool: list[Any]) -> tuple[list[Any], str, list[str]]:
        value = int(sel.value)
        if sel.frame == "list":
            if self.order is None:
                return pool, "", [f"I cannot count '{sel.words}': I listed nothing to count"]
            index = len(self.order) - 1 if value == -1 else value - 1
            if not 0 <= index < len(self.order):
                return [], f"there is no '{sel.words}' of {len(self.order)}", []
            picked = self.order[index]
            return [o for o in pool if o.id == picked], "", []
        side, _, frame = sel.frame.partition(":")
        viewer, why = self.viewer(frame, sel.words)
        if why:
            return pool, "", [why]
        if viewer is None and not attributes.heading_known(self.scene):
            return pool, "", [f"I do not know which way I face, so '{sel.words}' is unclear"]
        ranked = sorted((self._lateral(viewer, o), k) for k, o in enumerate(pool))
        if side == "right":
            ranked.reverse()
        index = len(ranked) - 1 if value == -1 else value - 1
        if not 0 <= index < len(ranked):
            return [], f"there is no '{sel.words}' of {len(ranked)}", []
        gaps = [abs(ranked[k + 1][0] - ranked[k][0]) for k in range(len(ranked) - 1)]
        if any(g <= 0.05 for g in gaps[max(0, index - 1) : index + 1]):
            return pool, f"'{sel.words}' cannot tell them apart", []
        return [pool[ranked[index][1]]], "", []


def _volume(obj: Any) -> float | None:
    """The volume of an object's ``axisAlignedBoundingBox.size`` (m³), or None."""
    box = obj.raw.get("axisAlignedBoundingBox") if isinstance(obj.raw, dict) else None
    size = box.get("size") if isinstance(box, dict) else None
    if not isinstance(size, dict):
        return None
    try:
        dims = [float(size[a]) for a in ("x", "y", "z")]
    except (KeyError, TypeError, ValueError):
        return None
    if not all(math.isfinite(d) and d >= 0 for d in dims):
        return None
    return dims[0] * dims[1] * dims[2]


def speaker_view(scene: Any, who: str | None = None) -> Viewer | None:
    """Who speaks, as a viewer: the person ``who`` (id or recognised name: the person the
    robot talks to), else the one marked ``"user": true``, else the only person in the scene;
    None when it cannot be known (nobody, or several and none marked).

    Raises:
        SceneError: the speaker's position or heading is not a finite number.
    """
    people = list(getattr(scene, "humans", []) or [])
    if who is not None:
        key = str(who).strip().lower()
        named = [h for h in people if h.id.lower() == key or str(h.name or "").lower() == key]
        return attributes.person_view(named[0]) if len(named) == 1 else None
    users = [h for h in people if h.raw.get("user") is True]
    if len(users) == 1:
        return attributes.person_view(users[0])
    if len(people) == 1 and not users:
        return attributes.person_view(people[0])
    return None
