"""Ground a person's answer to the question's candidates, before any robot action uses it.

A recovery asks ``choice = ask("Which medicine should I pick up: Medicine_1 or Medicine_2?")``
and later acts on ``choice``. People answer like people: "the one next to the plant", "the
blue one", "it is Medicine_1, next to the plant", "I don't know", "why?", "leave it". An
:class:`AnswerSpace` holds what the question may be answered with (the ambiguity's objects,
the scene's places, the people expected) and :meth:`AnswerSpace.read` turns a reply into a
:class:`Reading`:

* ``chosen``: it names exactly one candidate — by objectId, display name or a person's name,
  or by description: its type ("the medicine"), a colour word (matched against the type, name
  and any ``color`` field), a state ("the clean one", "the open one"), a relation to another
  object ("next to the plant", "closest to the bowl", "in the fridge"), an ordinal in the order
  the question listed them ("the first one") or a side from the robot's view ("the left one").
  The variable then gets the candidate's value: an objectId, a location name, a person's name;
* ``unclear``: it fits none or several; the reason says so (the question is asked again);
* ``dont_know``, ``why``, ``refusal``: understood as such, never as an object's name;
* ``passed``: only for a space with no scene (nothing to check against), whose answer only
  feeds the guard's re-check of the action: the checker then grounds it.

:class:`~bt_raider.robot.human.GroundedAsk` asks, reads, explains and re-asks.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bt_raider.checking.phrases import parse_phrase
from bt_raider.checking.vocabulary import GENERIC_HEADS
from bt_raider.errors import BtRaiderError
from bt_raider.perception import relations
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.robot.human import clean_answer

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene, SceneObject


class Intent(str, enum.Enum):
    """What a reply does."""

    CHOSEN = "chosen"
    UNCLEAR = "unclear"
    DONT_KNOW = "dont_know"
    WHY = "why"
    REFUSAL = "refusal"
    PASSED = "passed"
    ABSENT = "absent"  # "we don't have any": there is none to find


@dataclass(frozen=True)
class Reading:
    """A reply, read against the question's candidates.

    Attributes:
        intent: what the reply does.
        answer: the reply as given.
        value: what the variable gets (only when ``usable``).
        reason: why it is not usable, in words for the person.
    """

    intent: Intent
    answer: str
    value: str | None = None
    reason: str = ""

    @property
    def usable(self) -> bool:
        """True when the reply gives the variable a value."""
        return self.intent in (Intent.CHOSEN, Intent.PASSED) and self.value is not None

    @property
    def final(self) -> bool:
        """True when asking again is pointless (the person does not know, or refuses)."""
        return self.intent in (Intent.DONT_KNOW, Intent.REFUSAL, Intent.ABSENT)


@dataclass(frozen=True)
class Candidate:
    """One possible answer.

    Attributes:
        value: what the variable gets: an objectId, a location name, a person's name.
        label: how the robot names it to a person (a display name).
        names: what a person may call it exactly (display name, objectId, person's name).
        obj: the scene object, for descriptions (type, states, relations, colour).
    """

    value: str
    label: str
    names: tuple[str, ...] = ()
    obj: SceneObject | None = field(default=None, compare=False)


# --------------------------------------------------------------------------- words
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


def _norm(text: str) -> str:
    """Lower case, ``_``/``-`` as spaces, punctuation dropped (``|`` and digits kept)."""
    text = re.sub(r"[_\-]+", " ", str(text).lower())
    text = re.sub(r"[^a-z0-9|+.' ]+", " ", text.replace("\u2019", "'"))
    text = re.sub(r"\.(?!\d)", " ", text)  # full stops, not decimal points of objectIds
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
#: Who a person introducing herself says she is: "I'm Adriana", "it's Bob", "Adriana".
_INTRODUCTION = re.compile(
    r"^(?i:(?:hi|hello|hey|oh|sorry|well|yes)[\s,.!-]*)*"
    r"(?i:i['\u2019]?m|i\s+am|it['\u2019]?s|it\s+is|this\s+is|my\s+name\s+is|call\s+me)?\s*"
    r"([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)[\s.!]*$",
)
#: Words a reply wraps its content in (dropped before the description is read).
_LEAD_INS = re.compile(
    r"\b(?:yes|yeah|yep|ok|okay|sure|well|hmm+|uh+|um+|oh|so|please|thanks?|thank\s+you|"
    r"sorry|oops|actually|wait|i\s+meant|"
    r"i\s+think|i\s+guess|i\s+believe|probably|maybe|perhaps|i\s+mean|"
    r"i\s+want|i'?d\s+like|i\s+would\s+like|i\s+need|you\s+should|you\s+can|you\s+could|"
    r"it\s+is|it'?s|its|that\s+is|that'?s|this\s+is|it\s+should\s+be|should\s+be|it\s+must\s+be|"
    r"i'?m|i\s+am|my\s+name\s+is|call\s+me|me|"
    r"take|pick(?:\s+up)?|use|get|grab|bring|go\s+to|try|choose)\b"
)
_COLOURS = (
    "red green blue yellow orange purple violet pink brown black white grey gray silver gold "
    "golden beige cyan magenta turquoise"
).split()
_ORDINALS = {
    "first": 0,
    "1st": 0,
    "second": 1,
    "2nd": 1,
    "third": 2,
    "3rd": 2,
    "fourth": 3,
    "4th": 3,
    "fifth": 4,
    "5th": 4,
    "last": -1,
}
# An ordinal names a candidate as "the second (one)", "second one" or alone ("second"), not
# in passing ("the football last night").
_ORDINAL = re.compile(
    r"(?:^|\bthe\s+)(first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last)\b(?:\s+one)?"
    r"(?=\s*(?:$|one\b|on\b|in\b|of\b|you\b|please\b))"
    r"|\b(first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last)\s+one\b"
    r"|\b(?:number|option|no)\s+(\d)\b"
)
_SIDE = re.compile(
    r"\b(?:(?:on|to|at)\s+(?:the\s+)?(?:your\s+|my\s+)?)?(left|right)(?:most|\s+most)?"
    r"(?:\s+(?:one|side|hand\s+side))?\b(?!\s+(?:of|side\s+of|hand\s+side\s+of)\b)"
)
_PLACE_PREPOSITION = re.compile(r"^(?:in|on|at|inside|into|onto|on\s+top\s+of|by|over)\s+")
_RELATION_START = re.compile(
    r"^(?:next\s+to|near|beside|by|close\s+to|closest\s+to|nearest\s+(?:to\s+)?|"
    r"in|inside|on|on\s+top\s+of|under|below|above|behind|in\s+front\s+of|"
    r"to\s+the\s+(?:left|right)\s+of|left\s+of|right\s+of)\b"
)
_NEGATION = re.compile(r"\b(?:not|isn't|never|except|other\s+than|instead\s+of)\s+(?:the\s+)?$")
_STOP = frozenset(
    "the a an one ones it this that these those of is are was there here and or but with "
    "just only then now you your i my me".split()
)


def intent_of(answer: str) -> Intent | None:
    """``dont_know``, ``why`` or ``refusal`` when the reply is one of those, else None."""
    text = _norm(answer)
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


# --------------------------------------------------------------------------- the space
class AnswerSpace:
    """What a question may be answered with, and how a reply is read against it.

    Args:
        candidates: the possible answers, in the order the question listed them.
        scene: the scene the question is about (for descriptions); None: names only.
        what: what is asked for, in words ("medicine", "place", "person"), for reasons.
        open: with no scene, a reply that names no candidate is passed on as said (for an
            answer that only feeds the guard's re-check, which grounds it); never with a scene.
        lexicon: nouns and state adjectives (the bundled one by default).
    """

    def __init__(
        self,
        candidates: Iterable[Candidate],
        *,
        scene: Scene | None = None,
        what: str = "one",
        open: bool = False,
        lexicon: CategoryLexicon | None = None,
        introductions: bool = False,
    ) -> None:
        self.candidates = list(dict((c.value, c) for c in candidates).values())
        self.scene = scene
        self.what = what
        self.open = bool(open) and scene is None
        self.introductions = bool(introductions)
        self._lexicon = lexicon

    # ------------------------------------------------------------------ constructors
    @classmethod
    def objects(cls, scene: Scene, ids: Iterable[str], *, what: str = "one") -> AnswerSpace:
        """The scene objects ``ids`` (an ambiguity's candidates), by display name."""
        out = []
        for i in ids:
            obj = _obj(scene, i)
            if obj is not None:
                out.append(Candidate(obj.id, obj.name, (obj.name, obj.id), obj))
        # In the order a question lists them (by name), which "the first one" counts in.
        out.sort(key=lambda c: _natural(c.label))
        return cls(out, scene=scene, what=what)

    @classmethod
    def places(
        cls, scene: Scene, *, people: Iterable[str] = (), what: str = "place"
    ) -> AnswerSpace:
        """Named locations, every object of the scene, and the people named in ``people``."""
        out = [Candidate(name, name, (name,)) for name in scene.locations]
        out += [Candidate(o.id, o.name, (o.name, o.id), o) for o in scene.objects]
        return cls([*out, *_people(scene, people)], scene=scene, what=what)

    @classmethod
    def people(
        cls, scene: Scene | None, names: Iterable[str] = (), *, introductions: bool = False
    ) -> AnswerSpace:
        """The people expected by name (the action's person) and everyone recognised.

        With ``introductions`` (the action names a role, "the user", not a name), a reply
        that introduces someone by a name ("I'm Adriana", "It's Bob") gives that name; the
        guard's re-check then decides whether that person can be served.
        """
        return cls(_people(scene, names), scene=scene, what="person", introductions=introductions)

    @classmethod
    def unverified(cls, ids: Iterable[str], *, what: str = "one") -> AnswerSpace:
        """No scene: the candidates are bare objectIds; other replies are passed on."""
        return cls([Candidate(i, i, (i,)) for i in ids], what=what, open=True)

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.candidates]

    @property
    def lexicon(self) -> CategoryLexicon:
        if self._lexicon is None:
            self._lexicon = CategoryLexicon.default()
        return self._lexicon

    # ------------------------------------------------------------------ reading
    def read(self, answer: str) -> Reading:
        """Read one reply (never raises on text; see the module docstring)."""
        answer = str(answer)
        intent = intent_of(answer)
        if intent is not None:
            return Reading(intent, answer)
        if self.introductions:
            found = _INTRODUCTION.match(" ".join(answer.split()))
            if found and found.group(1).lower() not in _STOP:
                return Reading(Intent.CHOSEN, answer, value=found.group(1))
        try:
            return self._read(answer)
        except (BtRaiderError, ValueError, IndexError, KeyError) as exc:
            # A description we cannot evaluate is not an answer: ask again.
            return Reading(Intent.UNCLEAR, answer, reason=f"I could not follow that ({exc}).")

    def _read(self, answer: str) -> Reading:
        text = _norm(answer)
        if not text:
            return self._unclear(answer, "I did not hear an answer.")
        pool = list(self.candidates)
        mentioned, negated, text = self._mentions(text)
        recognised = bool(mentioned or negated)
        if not recognised and str(answer).strip().endswith("?"):
            # A question back ("did you see the match?") names nothing: not an answer.
            return self._unclear(answer, f"{_quote(answer)} does not answer my question.")
        if mentioned:
            pool = mentioned
        pool = [c for c in pool if c.value not in negated]
        text = " ".join(_LEAD_INS.sub(" ", text).split())
        said: list[str] = []  # what the description asked for, for reasons
        unknown: list[str] = []
        # Colour words.
        for colour in _COLOURS:
            if re.search(rf"\b{colour}\b", text):
                recognised = True
                said.append(colour)
                pool = [c for c in pool if colour in _colour_text(c)]
                text = re.sub(rf"\b{colour}\b", " ", text)
        # Ordinals, in the order the question listed the candidates.
        match = _ORDINAL.search(text)
        if match:
            recognised = True
            word = match.group(1) or match.group(2)
            index = _ORDINALS[word] if word else int(match.group(3)) - 1
            order = self.candidates
            picked = order[index] if -len(order) <= index < len(order) else None
            said.append(f"the {strip_article(match.group(0))}")
            pool = [c for c in pool if picked is not None and c.value == picked.value]
            text = text[: match.start()] + " " + text[match.end() :]
        # A side from the robot's view ("the left one"), not "left of X".
        match = _SIDE.search(text)
        if match and self.scene is not None:
            recognised = True
            said.append(f"on the {match.group(1)}")
            pool = self._side(pool, match.group(1))
            text = text[: match.start()] + " " + text[match.end() :]
        text = " ".join(text.split())
        if text and self.scene is not None:
            rest = _PLACE_PREPOSITION.sub("", text) if self.what == "place" else text
            if _RELATION_START.match(rest):
                rest = "one " + rest
            found, pool, words = self._describe(rest, pool)
            recognised = recognised or found
            said += [w for w in words if w]
            if not found:
                unknown = [w for w in re.findall(r"[a-z]+", rest) if w not in _STOP]
        elif text:
            unknown = [w for w in re.findall(r"[a-z]+", text) if w not in _STOP]
        if unknown and not recognised:
            if self.open:
                return Reading(Intent.PASSED, answer, value=clean_answer(answer))
            return self._unclear(answer, self._not_understood(answer))
        if not recognised:
            return self._unclear(answer, self._not_understood(answer))
        if len(pool) == 1:
            return Reading(Intent.CHOSEN, answer, value=pool[0].value)
        if not pool:
            detail = " and ".join(said) or _quote(answer)
            if mentioned:
                who = choices([c.label for c in mentioned])
                return self._unclear(answer, f"the {who} is not {detail}.")
            return self._unclear(answer, f"none of {choices(self.labels)} is {detail}.")
        return self._unclear(
            answer,
            f"{_quote(answer)} fits more than one: {_and([c.label for c in pool])}.",
        )

    def _not_understood(self, answer: str) -> str:
        if self.what == "person":
            return f"I could not tell who you mean by {_quote(answer)}."
        return f"I could not tell which {self.what} you mean by {_quote(answer)}."

    def _unclear(self, answer: str, reason: str) -> Reading:
        return Reading(Intent.UNCLEAR, answer, reason=reason)

    def _mentions(self, text: str) -> tuple[list[Candidate], set[str], str]:
        """Candidates named in the reply (longest names first), those named after "not", and
        the reply without them."""
        forms = sorted(
            ((_norm(n), c) for c in self.candidates for n in c.names if n and _norm(n)),
            key=lambda pair: -len(pair[0]),
        )
        found: dict[str, Candidate] = {}
        negated: set[str] = set()
        for form, cand in forms:
            pattern = rf"(?<![a-z0-9|]){re.escape(form)}(?![a-z0-9|])"
            for match in re.finditer(pattern, text):
                if _NEGATION.search(text[: match.start()]):
                    negated.add(cand.value)
                else:
                    found.setdefault(cand.value, cand)
            text = re.sub(pattern, " ", text)
        kept = [c for c in found.values() if c.value not in negated]
        return kept, negated, " ".join(text.split())

    def _side(self, pool: list[Candidate], side: str) -> list[Candidate]:
        placed = [c for c in pool if c.obj is not None]
        if len(placed) < 2 or self.scene is None:
            return placed if len(placed) == 1 else []
        scene = self.scene
        right = scene.right_vector()
        offsets = sorted(
            (float(c.obj.position[0] * right[0] + c.obj.position[2] * right[1]), i)  # type: ignore[union-attr]
            for i, c in enumerate(placed)
        )
        (low, i_low), (high, i_high) = offsets[0], offsets[-1]
        if side == "left":
            ok = offsets[1][0] - low > relations.SIDE_MARGIN
            return [placed[i_low]] if ok else []
        ok = high - offsets[-2][0] > relations.SIDE_MARGIN
        return [placed[i_high]] if ok else []

    def _describe(
        self, text: str, pool: list[Candidate]
    ) -> tuple[bool, list[Candidate], list[str]]:
        """Filter by the head noun, states and relation of ``text``; (understood?, pool, words)."""
        assert self.scene is not None
        phrase = parse_phrase(text)
        words: list[str] = []
        understood = False
        head = phrase.head.strip()
        if head and head not in GENERIC_HEADS and head not in ("one", "ones"):
            types = self._types(head)
            if not types:
                return False, pool, words
            understood = True
            words.append(f"{'an' if head[:1] in 'aeiou' else 'a'} {head}")
            pool = [c for c in pool if c.obj is not None and c.obj.type in types]
        for adjective in phrase.states:
            flags = self.lexicon.state_filter(adjective)
            if not flags:
                return False, pool, words
            understood = True
            words.append(adjective)
            pool = [c for c in pool if c.obj is not None and _has_flags(c.obj, flags)]
        if phrase.relation and phrase.anchor is not None:
            anchors = self._anchors(phrase.anchor.text, phrase.anchor.head)
            if not anchors:
                return False, pool, words
            understood = True
            words.append(f"{phrase.relation} the {anchors[0].name}")
            pool = self._related(pool, phrase.relation, anchors)
        return understood, pool, words

    def _types(self, head: str) -> set[str]:
        assert self.scene is not None
        scene_types = {o.type for o in self.scene.objects}
        key = re.sub(r"[\s_\-]+", "", head.lower())
        exact = {t for t in scene_types if t.lower() == key or t.lower() == key.rstrip("s")}
        return exact or set(self.lexicon.types_for(head))

    def _anchors(self, text: str, head: str) -> list[SceneObject]:
        assert self.scene is not None
        bare = strip_article(text)
        obj = _obj(self.scene, bare)
        if obj is not None and (obj.name.lower() == bare.lower() or obj.id == bare):
            return [obj]
        types = self._types(head) if head else set()
        return [o for o in self.scene.objects if o.type in types]

    def _related(
        self, pool: list[Candidate], relation: str, anchors: list[SceneObject]
    ) -> list[Candidate]:
        assert self.scene is not None  # called by _describe only, which needs a scene
        scene = self.scene
        placed = [c for c in pool if c.obj is not None]
        if relation == "closest to":
            nearest: dict[str, Candidate] = {}
            for anchor in anchors:
                others = [c for c in placed if c.obj.id != anchor.id]  # type: ignore[union-attr]
                if not others:
                    continue
                best = relations.closest(scene, [c.obj for c in others], anchor)
                nearest.update({c.value: c for c in others if c.obj is best})
            return list(nearest.values())
        if relation == "from":
            return [c for c in placed if any(relations.rests_on(c.obj, a) for a in anchors)]
        rel = relations.normalize_relation(relation)
        kept = [c for c in placed if any(relations.holds(scene, rel, c.obj, a) for a in anchors)]
        if len(kept) > 1 and rel in ("near", "next_to"):
            # "the one next to the pan", of three cabinets near it: the one clearly nearest.
            kept = _clearly_nearest(scene, kept, anchors)
        return kept


# --------------------------------------------------------------------------- helpers
def _and(labels: list[str]) -> str:
    return (
        choices(labels).rsplit(" or ", 1)[0] + " and " + labels[-1]
        if len(labels) > 1
        else choices(labels)
    )


#: How much nearer (m) one candidate must be than the next for "next to X" to mean it.
NEAREST_MARGIN = 0.15


def _clearly_nearest(
    scene: Scene, pool: list[Candidate], anchors: list[SceneObject]
) -> list[Candidate]:
    """The candidate nearest to an anchor when it is clearly nearer than the rest, else all."""
    ranked = sorted(
        (
            min(relations.horizontal_distance(c.obj, a) for a in anchors),
            i,
        )
        for i, c in enumerate(pool)
    )
    if ranked[1][0] - ranked[0][0] > NEAREST_MARGIN:
        return [pool[ranked[0][1]]]
    return pool


def read_request_reply(answer: str) -> Reading:
    """Read the reply to a request (``ask("Could you move the chair, please?")``).

    Whatever the person says goes, except "I don't know" and a refusal ("no, do it
    yourself"), which end the recovery (the re-check cannot go better), "why?", which is
    explained, and silence or a question back, which is asked again.
    """
    answer = str(answer)
    intent = intent_of(answer)
    if intent is not None:
        return Reading(intent, answer)
    text = clean_answer(answer)
    if not text:
        return Reading(Intent.UNCLEAR, answer, reason="I did not hear an answer.")
    if text.endswith("?"):
        return Reading(Intent.UNCLEAR, answer, reason=f"{_quote(answer)} does not answer me.")
    return Reading(Intent.CHOSEN, answer, value=text)


def _obj(scene: Scene, ref: str) -> SceneObject | None:
    try:
        return scene.resolve(ref)
    except BtRaiderError:
        return None


def _people(scene: Scene | None, names: Iterable[str]) -> list[Candidate]:
    out = [Candidate(n, n, (n,)) for n in names if n]
    for h in scene.humans if scene is not None else []:
        if h.name:
            out.append(Candidate(h.name, h.name, (h.name, h.id)))
    return out


def _natural(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.*?)_?(\d+)", name)
    return (match.group(1), int(match.group(2))) if match else (name, 0)


def _has_flags(obj: SceneObject, flags: dict[str, bool]) -> bool:
    return all(obj.flag(flag) == value for flag, value in flags.items())


def _colour_text(c: Candidate) -> str:
    parts = [c.label, *c.names]
    if c.obj is not None:
        raw = c.obj.raw
        parts += [c.obj.type, str(raw.get("name", "")), str(raw.get("color", ""))]
        parts += [str(x) for x in raw.get("colors", []) or []]
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", " ".join(parts)).lower()


def _quote(text: str, *, plain: bool = False) -> str:
    text = " ".join(str(text).split())
    if len(text) > 80:
        text = text[:77] + "..."
    return text if plain else f"'{text}'"


#: How a compiled ask reads a reply (``AnswerSpace.read``).
Reader = Callable[[str], Reading]
