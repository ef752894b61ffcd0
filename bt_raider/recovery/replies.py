"""The shape of a person's reply, before its words are matched to candidates.

:class:`~bt_raider.recovery.answers.AnswerSpace` reads what a reply *designates*; this module
finds how the reply is *built*, on the text alone, so that no construction is read as a plain
description by accident:

* a self-correction ("the red one, no, the blue one", "the blue one, sorry, I meant the other
  one"): only the correction counts; "the other one" is relative to the first choice
  (:func:`split_correction`, :func:`is_other`);
* several candidates at once, for a space read by name ("both", "either", "Adriana or Bob"):
  never one of them (:func:`names_several`, :func:`alternatives`); negations, coordination,
  ordinals and the rest of what a reply designates are the one reader's
  (:mod:`bt_raider.perception.reference`), which reads instructions too;
* an ordinal the reader cannot count safely ("option 0", "the second to last", "the third
  from the left"): unclear, never an index from the end (:func:`uncountable_ordinal`).

Every function here is pure text in, text out: the reader decides what the parts designate.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence

# "no," / "nope" / "sorry" / "I meant" / "actually" ... followed by what the person means now.
_CORRECTION = re.compile(
    r"(?:^|(?<=[\s,;.!?-]))(?:"
    r"no\s*[,;.!-]+|no\s+wait\b|no\s+no\b|nope\b|nah\b|or\s+rather\b|"
    r"sorry\b|oops\b|whoops\b|wait\b|actually\b|rather\b(?!\s+than)|correction\b|"
    r"scratch\s+that\b|make\s+that\b|i\s+mean\b|i\s+meant\b|i\s+mean\s+to\s+say\b|"
    r"my\s+mistake\b|my\s+bad\b|let\s+me\s+correct\s+(?:myself|that)\b"
    r")[\s,;.!:-]*",
    re.IGNORECASE,
)
_CONTENT = re.compile(r"[a-z0-9|]", re.IGNORECASE)

#: "the other one", "the other", "other one", "the other cup".
_OTHER = re.compile(r"^(?:the\s+)?other(?:\s+([a-z]+))?$")

#: A reply that leaves the choice to the robot or names them all.
_SEVERAL = re.compile(
    r"\b(?:both|either|any|anyone|anything|all|whichever|whatever|each|every|"
    r"(?:it\s+)?does\s*n'?t\s+matter|does\s+not\s+matter|doesnt\s+matter|"
    r"you\s+(?:choose|decide|pick)|your\s+(?:choice|call)|up\s+to\s+you|"
    r"(?:i\s+)?do\s*n'?t\s+care|do\s+not\s+care|one\s+or\s+the\s+other|"
    r"them\s+all|all\s+of\s+them)\b",
    re.IGNORECASE,
)

#: Ordinals counted from somewhere else than the question's list, or not a list position.
_UNCOUNTABLE = re.compile(
    r"\b(?:zeroth|0th|penultimate|last\s+but\s+one|second\s+(?:to\s+)?last|"
    r"(?:first|second|third|fourth|fifth|\d+(?:st|nd|rd|th)?)\s+from\s+the\s+"
    r"(?:left|right|end|back|front|top|bottom|last)|from\s+the\s+end)\b",
    re.IGNORECASE,
)


def has_content(text: str) -> bool:
    """Whether ``text`` has any letter or digit (not only punctuation and spaces)."""
    return bool(_CONTENT.search(text))


def split_correction(text: str) -> tuple[str, str] | None:
    """``(first, correction)`` when the reply corrects itself, else None.

    The correction is what follows the last marker ("no,", "sorry", "I meant", "actually")
    that has words after it; ``first`` is everything before (maybe empty: "Sorry, I mean the
    blue one" corrects nothing said before).

    Args:
        text: the reply as given (punctuation matters: "no," marks a correction, "no 2" not).
    """
    last = None
    for match in _CORRECTION.finditer(text):
        if has_content(text[match.end() :]):
            last = match
    if last is None:
        return None
    return text[: last.start()], text[last.end() :]


def is_other(text: str) -> str | None:
    """The noun of "the other one" / "the other cup" ("one" when bare), else None.

    Args:
        text: a normalised clause (lower case, no punctuation).
    """
    match = _OTHER.match(" ".join(text.split()))
    if match is None:
        return None
    return match.group(1) or "one"


def names_several(text: str) -> bool:
    """Whether the reply leaves the choice open or names every candidate ("both", "either")."""
    return bool(_SEVERAL.search(text))


def alternatives(text: str) -> list[str]:
    """The parts of "A or B" (one part when there is no "or")."""
    parts = re.split(r"(?:,\s*|\s+)or\s+", text, flags=re.IGNORECASE)
    return [p for p in parts if has_content(p)]


def uncountable_ordinal(text: str) -> bool:
    """Whether the reply counts from an end or a side ("the second to last", "option 0")."""
    return bool(_UNCOUNTABLE.search(text))


# --------------------------------------------------------------------------- words
class Intent(str, enum.Enum):
    """What a reply does."""

    CHOSEN = "chosen"
    UNCLEAR = "unclear"
    DONT_KNOW = "dont_know"
    WHY = "why"
    REFUSAL = "refusal"
    PASSED = "passed"
    ABSENT = "absent"  # "we don't have any": there is none to find


_ARTICLE = re.compile(r"^\s*(?:the|a|an)\s+", re.IGNORECASE)


def strip_article(text: str) -> str:
    """``"the blue one"`` -> ``"blue one"``: so ``f"the {x}"`` never reads "the the"."""
    out = str(text).strip()
    while True:
        new = _ARTICLE.sub("", out)
        if new == out:
            return out
        out = new


def choices(labels: Sequence[str]) -> str:
    """``A``, ``A or B``, ``A, B or C``."""
    labels = list(labels)
    if not labels:
        return "nothing"
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]


_DASHES = re.compile(r"[_\-]+")
_PUNCTUATION = re.compile(r"[^a-z0-9|+.' ]+")
_FULL_STOP = re.compile(r"\.(?!\d)")  # full stops, not decimal points of objectIds


def normalise(text: str) -> str:
    """Lower case, ``_``/``-`` as spaces, punctuation dropped (``|`` and digits kept)."""
    text = _DASHES.sub(" ", str(text).lower())
    text = _PUNCTUATION.sub(" ", text.replace("\u2019", "'"))
    text = _FULL_STOP.sub(" ", text)
    return " ".join(text.split())


_DONT_KNOW = re.compile(
    r"\b(?:(?:i\s+)?(?:do\s*n[o']?t|do\s+not|dunno)\s+know|dunno|no\s+idea|not\s+sure|"
    r"no\s+clue|i\s+forgot|i\s+can'?t\s+(?:tell|remember|say)|i\s+cannot\s+(?:tell|remember|say)|"
    r"who\s+knows|i\s+have\s+no\s+idea)\b"
)
_WHY = re.compile(
    r"^(?:but\s+|and\s+|so\s+)?why\b|\bwhy\s+(?:do|would|are|did|should|is|does)\s+(?:you|it|that)\b"
    r"|\bwhat\s+(?:is\s+it\s+|do\s+you\s+need\s+(?:it|that|this)\s+|)for\b|\bhow\s+come\b"
)
_REFUSE_WHOLE = re.compile(
    r"^(?:no|nope|nah|no\s+way|no\s+thanks?|no\s+thank\s+you|not\s+now|never|stop|"
    r"none|neither|no\s+one|nothing)$"
)
_REFUSE_ANY = re.compile(
    r"\b(?:i\s+won'?t|i\s+will\s+not|i\s+refuse|i'?m\s+not\s+(?:going\s+to|telling)|"
    r"i\s+am\s+not\s+(?:going\s+to|telling)|i\s+don'?t\s+want\s+to|i\s+do\s+not\s+want\s+to|"
    r"leave\s+it|forget\s+it|never\s*mind|don'?t\s+(?:do|touch|pick|take|bother)|"
    r"do\s+not\s+(?:do|touch|pick|take|bother)|none\s+of\s+(?:them|those|these)|"
    r"neither\s+(?:one|of)|not\s+telling|mind\s+your\s+own|do\s+it\s+yourself|"
    r"not\s+my\s+(?:job|problem)|go\s+away|ask\s+someone\s+else|i'?m\s+busy|i\s+am\s+busy)\b"
)

_ABSENT = re.compile(
    r"\b(?:we\s+|i\s+)?(?:do\s*n[o']?t|do\s+not)\s+(?:have|own)\s+(?:any|one|that|it|those)\b"
    r"|\bthere\s+(?:is|are)\s+(?:no|none)\b|\bthere\s+(?:isn'?t|aren'?t)\s+(?:any|one)\b"
    r"|\bwe'?re\s+out\s+of\b|\bwe\s+are\s+out\s+of\b|\bwe\s+have\s+(?:none|no)\b"
    r"|\bno\s+such\b"
)


def intent_of(answer: str) -> Intent | None:
    """``dont_know``, ``why`` or ``refusal`` when the reply is one of those, else None."""
    text = normalise(answer)
    if not text:
        return None
    if _WHY.search(text):
        return Intent.WHY
    if _DONT_KNOW.search(text):
        return Intent.DONT_KNOW
    if _ABSENT.search(text):
        return Intent.ABSENT
    if _REFUSE_WHOLE.match(text) or _REFUSE_ANY.search(text):
        return Intent.REFUSAL
    return None
