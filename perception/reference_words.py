"""The words of the one reader (:mod:`bt_raider.perception.reference`): what it ignores, what
opens a reply, what excludes, quantifies, selects and names a frame, and how text becomes words.

Plain tables and one tokenizer, so that the grammar's module stays readable; docs/reader.md
lists them for people.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, NamedTuple

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
LEADING = IGNORED - {"one", "ones", "of"}
#: Ignored words that are no glue of a phrase ("sorry", "please"): dropped from a core.
NOISE = IGNORED - set(
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
#: What ends a preamble: only the words after the last of these are the answer ("Well, you know,
#: since you ask, I would say the red one").
SAYING = (("i", "would", "say"), ("i'd", "say"), ("i", "say"), ("i", "would", "go", "with"))
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
NOT_BEFORE = frozenset("that which who is are was were do does did i it".split())
NOT_AFTER = frozenset("want mean need like say".split())
#: Any member will do.
ANY_WORDS = frozenset("any either whichever whatever some anyone anything".split())
ANY_PHRASES = (
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
ALL_WORDS = frozenset("both all every each".split())
#: A clause that makes the reference conditional: unread with everything up to its clause end.
CONDITIONS = frozenset("if unless when whenever while until because provided as".split())
#: Words that designate by what the scene cannot show: unread.
POSSESSIVES = frozenset("my your his her their our its".split())
DESIGNATORS = frozenset("other another else same different previous next".split())
#: Side words: "on the left" is the one object on that side (attributes.on_side), never the
#: leftmost of two on it.
SIDE_WORDS = {"left": "left", "right": "right", "left-hand": "left", "right-hand": "right"}
#: Words after "right" that may make it an adverb of time or emphasis, not a side ("right now",
#: "right away", "right here", "right next to the bowl", "right behind it").
RIGHT_ADVERB_AFTER = frozenset(
    "now away here there next behind by after before ahead back in on at above below under "
    "beneath underneath beside near over into inside".split()
)
#: The time words of "right now", "right away": read with the "right" they follow, either way.
TIME_WORDS = frozenset({"now", "away"})
#: Words before "right" that make it a side (or a direction) whatever follows: an article or a
#: frame ("the right", "your right now", "to the right now") and the verbs of a turn ("turn
#: right now", "take a right").
SIDE_BEFORE = frozenset(
    "the my your our his her their a turn turning go move head veer step bear keep face".split()
)
#: Prepositions that, bare before "right now", leave both readings open ("the cup to right now").
BARE_BEFORE = frozenset({"on", "to", "at", "from"})
#: Extremes: "the leftmost" is the one clearly furthest to the left of them all.
EXTREMES = {
    "leftmost": "leftmost",
    "left-most": "leftmost",
    "rightmost": "rightmost",
    "right-most": "rightmost",
    "middle": "middle",
    "center": "middle",
    "centre": "middle",
}
NEAR_WORDS = frozenset("nearest closest nearer closer near".split())
FAR_WORDS = frozenset("farthest furthest farther further far".split())
BIG_WORDS = frozenset("big bigger biggest large larger largest huge".split())
SMALL_WORDS = frozenset("small smaller smallest little tiny".split())
ORDINAL_WORDS = {
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
NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
#: Words a relation may start with: a core that starts with one names "one" that relates
#: ("not in the sink", "the one under the table" after "the one" is read).
RELATION_STARTS = frozenset(
    "in inside into on onto under below beneath underneath above over near next beside by "
    "from within atop upon left right to closest nearest behind".split()
)
#: Who a frame word names: the speaker, or the robot.
SPEAKER_FRAME = frozenset({"me", "myself", "us", "my", "our"})
ROBOT_FRAME = frozenset({"you", "yourself", "your", "robot", "robot's"})


#: Pointing ("that one over there", "this one here"): the robot cannot see where a hand points.
POINTING = re.compile(r"\b(?:there|here)\b", re.IGNORECASE)
#: A bare demonstrative ("that one", "this"): pointing too, whatever was offered.
DEMONSTRATIVE = re.compile(r"\s*(?:that|this)(?:\s+one)?\s*[.!]*\s*", re.IGNORECASE)


def points(text: str) -> bool:
    """Whether a reply points ("that one over there", "this one here", a bare "that one"): it
    then designates nothing, even the only candidate offered, and the robot asks again.

    An instruction's "there" and "here" are ignored words instead (people's step descriptions
    say "pick up the knife there"), and "that", "this" its articles (docs/reader.md).
    """
    return POINTING.search(text) is not None or DEMONSTRATIVE.fullmatch(text) is not None


_CONTRACTIONS = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"\bcan'?t\b|\bcannot\b", "can not"),
        (r"\bwon'?t\b", "will not"),
        (r"(\w)n't\b", r"\1 not"),
        (r"\b(is|are|was|were|does|do|did|has|have)nt\b", r"\1 not"),
        (r"\b(it|that|there|what)'s\b", r"\1 is"),
        # "over there", "up here": pointing, which the robot cannot see; never "above" something.
        (r"\b(?:over|up|down|out|back)\s+(there|here)\b", r"\1"),
    )
)
_TOKEN = re.compile(r"[,;:!?]|[^\s,;:!?()\"\[\]{}]+")


def tokens(text: str) -> list[tuple[str, str]]:
    """``(word, as written)`` pairs; "," marks a clause; "n't" becomes "not"."""
    t = str(text).replace("\u2019", "'").replace("\u2018", "'")
    for pattern, replacement in _CONTRACTIONS:
        t = pattern.sub(replacement, t)
    out: list[tuple[str, str]] = []
    for raw in _TOKEN.findall(t):
        if raw in ",;:!?":
            out.append((",", ","))
            continue
        word = raw if "|" in raw else raw.strip(".'\"`*")
        if not word:
            continue
        out.append((word if "|" in word else word.lower(), word))
    return out


def at(words: list[str], k: int, phrase: Sequence[str]) -> bool:
    """Whether ``phrase`` stands in ``words`` at position ``k``."""
    return tuple(words[k : k + len(phrase)]) == tuple(phrase)


def by_head(phrases: Iterable[Sequence[str]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Phrases by their first word, each word's in the given order (for :func:`first_at`)."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        out.setdefault(phrase[0], []).append(tuple(phrase))
    return {head: tuple(found) for head, found in out.items()}


def first_at(
    words: list[str], k: int, heads: dict[str, tuple[tuple[str, ...], ...]]
) -> tuple[str, ...] | None:
    """The first phrase of :func:`by_head`'s ``heads`` standing in ``words`` at ``k``, or None:
    what ``next((p for p in phrases if at(words, k, p)), None)`` finds, trying only the phrases
    that start with ``words[k]`` (a reply is read word by word against each list)."""
    if k >= len(words):
        return None
    for phrase in heads.get(words[k], ()):
        if tuple(words[k : k + len(phrase)]) == phrase:
            return phrase
    return None


# --------------------------------------------------------------------------- a core's words
#: Words a core phrase may hold that its parse reads (determiners, fillers of a clause).
CORE_WORDS = frozenset(
    IGNORED
    | ROOM_WORDS
    | {"to", "the", "of", "it", "its", "them", "their", "some", "any", "located", "placed"}
    | {"sitting", "lying", "standing", "currently", "resting", "kept", "hanging", "directly"}
    | {"immediately", "slightly", "sits", "sit", "sat", "stands", "lies"}
)
#: The words each relation of a phrase is said with ("on top of", "to the left hand side of").
RELATION_SAID = {
    "left of": {"on", "to", "at", "left", "side", "hand"},
    "right of": {"on", "to", "at", "right", "side", "hand"},
    "on top of": {"on", "top", "onto", "upon", "atop"},
    "inside": {"in", "inside", "into", "within"},
    "above": {"above", "over"},
    "below": {"below", "under", "underneath", "beneath"},
    "near": {"near", "close", "by", "nearby"},
    "next to": {"next", "beside", "besides", "alongside", "adjacent"},
    "closest to": {"closest", "nearest"},
    "from": {"from", "off", "out", "in", "on", "inside"},
}
#: Words of a post-modifier that says what is at the object ("with the pen in it").
DETAIL_WORDS = frozenset(
    "with containing contains holding holds having has where that which is are on in".split()
)
NAME_WORD = re.compile(r"^[a-z]+_\d+$")
#: Words that shade a colour ("dark blue"): read with it.
COLOUR_SHADES = frozenset({"dark", "light", "pale", "bright"})


# --------------------------------------------------------------------------- selections
class Select(NamedTuple):
    """One selection applied to a part's objects, in order.

    Attributes:
        kind: ``side`` (left, right, front, behind), ``side?`` (a side or no side: "to right
            now", see :func:`right_reading`), ``distance`` (near, far), ``extreme``
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


def axis_ordinals(selects: list[Select], unread: list[str]) -> list[Select]:
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


RightReading = Literal["side", "adverb", "both"]


def right_reading(words: Sequence[str], i: int) -> RightReading:
    """How the "right" at ``words[i]`` reads (docs/reader.md, "right now").

    ``side`` after an article, a frame or a turn ("your right now", "to the right now", "turn
    right now"), whatever follows, and wherever no adverb's word follows ("the cup on the
    right"); ``adverb`` (time or emphasis: "the cup right now", "right next to the bowl") when
    one of :data:`RIGHT_ADVERB_AFTER` follows otherwise; ``both`` when a bare preposition
    stands before it ("the cup to right now"): the reader then asks when the two readings
    designate different objects, never guesses.
    """
    prev = words[i - 1] if i > 0 else ""
    nxt = words[i + 1] if i + 1 < len(words) else ""
    if prev in SIDE_BEFORE or nxt not in RIGHT_ADVERB_AFTER:
        return "side"
    return "both" if prev in BARE_BEFORE else "adverb"


def without_time_words(words: Sequence[str]) -> list[str]:
    """``words`` less what :func:`right_reading` says cannot change the referent: an adverb
    "right" with its time word ("pick the cup right now" -> "pick the cup", "right here" ->
    "here") and the time word after a side ("to your right now" -> "to your right"). Where
    both readings are open the words stay, for the reader to weigh. The check's parse calls
    it before it strips trailing politeness, so "now" never takes a side's "right" along."""
    out: list[str] = []
    i, n = 0, len(words)
    while i < n:
        if words[i] != "right" or i + 1 >= n or words[i + 1] not in RIGHT_ADVERB_AFTER:
            out.append(words[i])
            i += 1
            continue
        reading = right_reading(words, i)
        if reading == "both":
            out.extend(words[i : i + 2])
        elif reading == "side":
            out.append("right")
            if words[i + 1] not in TIME_WORDS:
                out.append(words[i + 1])
        elif words[i + 1] not in TIME_WORDS:
            out.append(words[i + 1])  # "right here": "here" is read as it always is
        i += 2
    return out


def _frame_word(words: list[str], k: int) -> str | None:
    """``speaker`` or ``robot`` for the frame word at ``k`` ("me", "you", "the robot")."""
    if k < len(words) and words[k] in SPEAKER_FRAME:
        return "speaker"
    if k < len(words) and words[k] in ROBOT_FRAME:
        return "robot"
    return None


def _time_after(words: list[str], k: int, side: str) -> int:
    """1 when a time word read with a side's "right" stands at ``k`` ("your right now")."""
    return int(side == "right" and k < len(words) and words[k] in TIME_WORDS)


def select_at(words: list[str], i: int) -> tuple[Select | None, int] | None:
    """A selection starting at ``i``: ``(select, words used)``; ``(None, n)`` for words that
    select in a way that cannot be read (an ordinal from the end); None: no selection here."""
    w = words[i]
    n = len(words)
    nxt = words[i + 1] if i + 1 < n else ""
    # "right now", "right here", "right next to": no side (right_reading says when).
    if w == "right" and right_reading(words, i) == "adverb":
        return Select("skip", 0), 2 if nxt in TIME_WORDS else 1  # dropped below
    # on/to/at [the] [my|your] left|right [hand] [side] -- not "... of <object>".
    if w in ("on", "to", "at", "from"):
        k = i + 1
        while k < n and words[k] == "the":
            k += 1
        frame = "robot"
        if k < n and words[k] in ("my", "your", "our"):
            frame = "speaker" if words[k] in ("my", "our") else "robot"
            k += 1
        if k < n and words[k] == "right" and right_reading(words, k) == "both":
            # "the cup to right now": on the right, or at once; asked when they differ.
            used = k + 1 - i + (1 if words[k + 1] in TIME_WORDS else 0)
            return Select("side?", "right", frame, " ".join(words[i : i + used])), used
        if k < n and words[k] in SIDE_WORDS:
            side = SIDE_WORDS[words[k]]
            k += 1
            while k < n and words[k] in ("hand", "side"):
                k += 1
            if k >= n or words[k] != "of":
                k += _time_after(words, k, side)
                return Select("side", side, frame, " ".join(words[i:k])), k - i
            if words[k] == "of":
                f = _frame_word(words, k + 1)
                if f is not None:  # "to the left of me"
                    return Select("side", side, f, " ".join(words[i : k + 2])), k + 2 - i
                if words[k + 1 : k + 3] == ["the", "robot"]:
                    return Select("side", side, "robot", " ".join(words[i : k + 3])), k + 3 - i
    if w in ("my", "your") and nxt in SIDE_WORDS and (i + 2 >= n or words[i + 2] != "of"):
        frame = "speaker" if w == "my" else "robot"
        k = i + 2
        while k < n and words[k] in ("hand", "side"):
            k += 1
        k += _time_after(words, k, SIDE_WORDS[nxt])
        return Select("side", SIDE_WORDS[nxt], frame, " ".join(words[i:k])), k - i
    if w == "right" and right_reading(words, i) == "both":
        used = 2 if nxt in TIME_WORDS else 1
        return Select("side?", "right", "robot", " ".join(words[i : i + used])), used
    if w in SIDE_WORDS and nxt not in ("of", "side", "hand", "half", "end", "corner", "edge"):
        used = 1 + _time_after(words, i + 1, SIDE_WORDS[w])
        return Select("side", SIDE_WORDS[w], "robot", " ".join(words[i : i + used])), used
    if w in ("in", "at") and (
        nxt in EXTREMES or (nxt == "the" and i + 2 < n and words[i + 2] in EXTREMES)
    ):
        lead = 2 if nxt == "the" else 1  # "in the middle": the extreme, not a relation
        found = select_at(words, i + lead)
        if found is not None and found[0] is not None:
            return found[0], found[1] + lead
    if w in EXTREMES:
        k = i + 1
        frame = "robot"
        if k < n and words[k] == "one":
            k += 1
        if at(words, k, ("from",)) or at(words, k, ("to",)):
            f = _frame_word(words, k + 1)
            if f is not None:
                frame, k = f, k + 2
        start = i - 1 if i > 0 and words[i - 1] in ("in", "at") else i
        return Select("extreme", EXTREMES[w], frame, " ".join(words[start:k])), k - i
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
    if w in NEAR_WORDS or w in FAR_WORDS:
        value = "near" if w in NEAR_WORDS else "far"
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
    if w in BIG_WORDS or w in SMALL_WORDS:
        return Select("size", "big" if w in BIG_WORDS else "small", "robot", w), 1
    if w in ("penultimate", "zeroth", "0th") or at(words, i, ("second", "to", "last")):
        used = 3 if w == "second" else 1
        return None, used  # "second to last", "zeroth": unread
    if w in ORDINAL_WORDS or (w.isdigit() and i > 0 and words[i - 1] in ("number", "option", "no")):
        place = ORDINAL_WORDS[w] if w in ORDINAL_WORDS else int(w)
        k = i + 1
        if k < n and words[k] == "one":
            k += 1
        if k < n and words[k] == "from":
            m = k + 1
            while m < n and words[m] in ("the", "my", "your"):
                m += 1
            frame = "speaker" if "my" in words[k:m] else "robot"
            if m < n and words[m] in SIDE_WORDS:
                return Select("ordinal", place, f"{SIDE_WORDS[words[m]]}:{frame}", " ".join(
                    words[i : m + 1]
                )), m + 1 - i  # fmt: skip
            return None, m + 1 - i  # "third from the end", "second from the top"
        return Select("ordinal", place, "list", " ".join(words[i:k])), k - i
    if w in ("number", "option", "no", "choice") and (
        nxt in NUMBER_WORDS or nxt == "one" or nxt.isdigit()
    ):
        number = NUMBER_WORDS.get(nxt) or (1 if nxt == "one" else int(nxt))
        return Select("ordinal", number, "list", f"{w} {nxt}"), 2
    return None
