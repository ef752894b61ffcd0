"""Ground a person's answer to the question's candidates, before any robot action uses it.

A recovery asks ``choice = ask("Which medicine should I pick up: the blue medicine or the white
medicine?")``
and later acts on ``choice``. People answer like people: "the one next to the plant", "the
blue one", "it is Medicine_1, next to the plant", "I don't know", "why?", "leave it". An
:class:`AnswerSpace` holds what the question may be answered with (the ambiguity's objects,
the scene's places, the people expected) and :meth:`AnswerSpace.read` turns a reply into a
:class:`Reading`:

* ``chosen``: it names exactly one candidate — by objectId, display name or a person's name,
  or by description: its type ("the medicine"), a colour word (matched against the type, name
  and any ``color`` field), a state ("the clean one", "the open one"), a relation to another
  object ("next to the plant", "closest to the bowl", "in the fridge"), an ordinal in the order
  the question listed them ("the first one"), a side or distance from the robot's view ("the
  left one", "the nearer one"). The variable then gets the candidate's value: an objectId, a
  location name, a person's name. How the reply is built is read first
  (:mod:`bt_raider.recovery.replies`): a self-correction counts as its correction, "not X"
  excludes what X fits, a reply naming several or counting from an end is unclear;
* ``unclear``: it fits none or several; the reason says so (the question is asked again);
* ``dont_know``, ``why``, ``refusal``: understood as such, never as an object's name;
* ``passed``: only for a space with no scene (nothing to check against), whose answer only
  feeds the guard's re-check of the action: the checker then grounds it.

:class:`~bt_raider.robot.human.GroundedAsk` asks, reads, explains and re-asks.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from bt_raider.checking.phrases import parse_phrase
from bt_raider.checking.vocabulary import GENERIC_HEADS
from bt_raider.errors import BtRaiderError
from bt_raider.perception import relations
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.recovery import replies, wording

# Re-exported: these were answers' own names before replies.py was split out.
from bt_raider.recovery.replies import Intent as Intent
from bt_raider.recovery.replies import choices as choices
from bt_raider.recovery.replies import intent_of as intent_of
from bt_raider.recovery.replies import normalise as _norm
from bt_raider.recovery.replies import strip_article as strip_article
from bt_raider.robot.human import clean_answer

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene, SceneObject


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


@dataclass
class _Fit:
    """What a plain description fits, and how much of it was understood."""

    recognised: bool
    pool: list[Candidate]
    said: list[str]
    unknown: list[str]
    mentioned: list[Candidate]
    conflict: bool = False  # a designating word left unread, or two of one kind


# --------------------------------------------------------------------------- words
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
_SIDE = re.compile(
    r"\b(?:(?:on|to|at)\s+(?:the\s+)?(?:your\s+|my\s+)?)?(left|right)(?:most|\s+most)?"
    r"(?:\s+(?:one|side|hand\s+side))?\b(?!\s+(?:of|side\s+of|hand\s+side\s+of)\b)"
)
# "the nearer one", "the closest one to you" (the robot); "to/from me" is kept to refuse it, and
# "closest to the plant" is a relation, read by the phrase parser.
_DISTANCE = re.compile(
    r"\b(nearer|nearest|closer|closest|further|furthest|farther|farthest)\b(?:\s+one)?"
    r"(?:\s+(?:to|from)\s+(?:you|the\s+robot)\b|\s+(?:to|from)\s+(me|us)\b|(?!\s+(?:to|from)\b))"
)
_MIDDLE = re.compile(r"\b(?:(?:in|at)\s+(?:the\s+)?)?(?:middle|center|centre)(?:\s+one)?\b")
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
        expect: Iterable[str] = (),
    ) -> None:
        self.candidates = list(dict((c.value, c) for c in candidates).values())
        #: The names of the person designated by name: anyone else introducing herself is not
        #: a substitute (the reading is ``absent``, final).
        self.expect = tuple(e for e in expect if e)
        self.scene = scene
        self.what = what
        self.open = bool(open) and scene is None
        self.introductions = bool(introductions)
        self._lexicon = lexicon
        #: The order "the first one" counts in; None: the question did not list them all.
        self.order: list[Candidate] | None = self.candidates

    # ------------------------------------------------------------------ constructors
    @classmethod
    def objects(
        cls, scene: Scene, ids: Iterable[str], *, what: str = "one", describe: bool = True
    ) -> AnswerSpace:
        """The scene objects ``ids`` (an ambiguity's candidates).

        Labelled as a person tells them apart ("the clean cup", "the cup on the left",
        :func:`~bt_raider.recovery.wording.descriptions`), each label read back to its object;
        by display name when ``describe`` is off or some cannot be told apart.
        """
        out = []
        for i in ids:
            obj = _obj(scene, i)
            if obj is not None:
                out.append(Candidate(obj.id, obj.name, (obj.name, obj.id), obj))
        # In the order a question lists them (by name), which "the first one" counts in.
        out.sort(key=lambda c: _natural(c.label))
        space = cls(out, scene=scene, what=what)
        if describe and len(out) >= 2:

            def fits(phrase: str) -> str | None:
                reading = space.read(phrase)
                return reading.value if reading.intent is Intent.CHOSEN else None

            objs = [c.obj for c in out if c.obj is not None]
            labels = wording.descriptions(scene, objs, fits)
            if labels is not None:
                space.candidates = [
                    Candidate(c.value, label, c.names, c.obj)
                    for c, label in zip(out, labels, strict=True)
                ]
                space.order = space.candidates
        return space

    @classmethod
    def places(
        cls, scene: Scene, *, people: Iterable[str] = (), what: str = "place"
    ) -> AnswerSpace:
        """Named locations, every object of the scene, and the people named in ``people``.

        Only those people: "where can I find the box?" answered "I'm Ana" names no place,
        and the person answering never becomes where the robot goes.
        """
        out = [Candidate(name, name, (name,)) for name in scene.locations]
        out += [Candidate(o.id, o.name, (o.name, o.id), o) for o in scene.objects]
        named = {str(n).lower() for n in people}
        them = [
            Candidate(h.name, h.name, (h.name, h.id))
            for h in scene.humans
            if h.name and (h.name.lower() in named or h.id.lower() in named)
        ]
        return cls([*out, *them], scene=scene, what=what)

    @classmethod
    def people(
        cls,
        scene: Scene | None,
        names: Iterable[str] = (),
        *,
        introductions: bool = False,
        expect: Iterable[str] = (),
    ) -> AnswerSpace:
        """The people expected by name (the action's person) and everyone recognised.

        With ``introductions`` (the action names a role, "the user", not a name), a reply
        that introduces someone by a name ("I'm Adriana", "It's Bob") gives that name; the
        guard's re-check then decides whether that person can be served.

        With ``expect`` (the action designates a person by name), only those names are
        candidates: "I'm Ana" for Bernadette reads as ``absent`` ("Ana is not Bernadette"),
        final, never as a substitute.
        """
        expect = [e for e in expect if e]
        if expect:
            cands = [Candidate(n, n, (n,)) for n in expect]
            return cls(cands, scene=scene, what="person", introductions=True, expect=expect)
        return cls(_people(scene, names), scene=scene, what="person", introductions=introductions)

    @classmethod
    def unverified(cls, ids: Iterable[str], *, what: str = "one") -> AnswerSpace:
        """No scene: the candidates are bare objectIds; other replies are passed on."""
        return cls([Candidate(i, i, (i,)) for i in ids], what=what, open=True)

    def for_question(self, question: str) -> AnswerSpace:
        """This space as ``question`` lists it: "the first one" counts in the question's order,
        and is unclear when the question does not name every candidate (an LLM's "Which one?"
        lists nothing, or in its own order: counting in ours would be a guess)."""
        text = _norm(question)
        at: dict[str, int] = {}
        for form, cand in self._forms(labels=True):
            for match in re.finditer(rf"(?<![a-z0-9|]){re.escape(form)}(?![a-z0-9|])", text):
                at.setdefault(cand.value, match.start())
            # Blank it out (same length): "knife" is not found again inside "butter knife".
            text = re.sub(
                rf"(?<![a-z0-9|]){re.escape(form)}(?![a-z0-9|])",
                lambda m: " " * len(m.group(0)),
                text,
            )
        out = copy.copy(self)
        listed = len(at) == len(self.candidates) and len(set(at.values())) == len(at)
        out.order = sorted(self.candidates, key=lambda c: at[c.value]) if listed else None
        return out

    def seen_from(self, scene: Scene) -> AnswerSpace:
        """This space read from ``scene``: the robot as it stands there, each candidate where it
        is there (one not there keeps its place), for the sides and "nearest" of a reply."""
        if self.scene is None:
            return self
        now = {o.id: o for o in scene.objects}
        out = copy.copy(self)
        out.candidates = [replace(c, obj=now.get(c.value, c.obj)) for c in self.candidates]
        keep = {c.value: c for c in out.candidates}
        out.order = None if self.order is None else [keep[c.value] for c in self.order]
        out.scene = scene
        return out

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
                said = found.group(1)
                if self.expect and said.lower() not in {e.lower() for e in self.expect}:
                    whom = choices(list(self.expect))
                    return Reading(
                        Intent.ABSENT,
                        answer,
                        reason=f"{said} is not {whom}: {whom} is not here.",
                    )
                if self.expect:
                    said = next(e for e in self.expect if e.lower() == said.lower())
                return Reading(Intent.CHOSEN, answer, value=said)
        try:
            return self._read(answer)
        except (BtRaiderError, ValueError, IndexError, KeyError) as exc:
            # A description we cannot evaluate is not an answer: ask again.
            return Reading(Intent.UNCLEAR, answer, reason=f"I could not follow that ({exc}).")

    def _read(self, answer: str) -> Reading:
        if not _norm(answer):
            return self._unclear(answer, "I did not hear an answer.")
        if not self._words(answer) and str(answer).strip().endswith("?"):
            # A question back ("did you see the match?") names nothing: not an answer.
            return self._unclear(answer, f"{_quote(answer)} does not answer my question.")
        if replies.uncountable_ordinal(_norm(answer)):
            return self._unclear(answer, f"I cannot count {_quote(answer)}.{self._please()}")
        raw = " ".join(str(answer).lower().replace("\u2019", "'").split())
        return self._designate(answer, raw)

    def _designate(self, answer: str, raw: str) -> Reading:
        """A reply that may correct itself: only the correction counts."""
        corrected = replies.split_correction(raw)
        if corrected is None:
            if replies.is_other(self._words(raw)) is not None:
                # "the other one" with nothing said before: other than what?
                return self._unclear(answer, f"other than which one?{self._please()}")
            return self._clause(answer, raw)
        first, correction = corrected
        noun = replies.is_other(self._words(correction))
        if noun is None:
            return self._clause(answer, correction)
        # "the blue one, sorry, I meant the other one": the one that is not the first choice,
        # which only names one when there are two.
        before = self._designate(answer, first) if replies.has_content(first) else None
        if before is None or before.intent is not Intent.CHOSEN:
            return self._unclear(answer, f"other than which one?{self._please()}")
        others = [c for c in self.candidates if c.value != before.value]
        if len(self.candidates) != 2 or len(others) != 1:
            return self._unclear(
                answer, f"there is more than one other: {self._them(others, 'and')}."
            )
        if noun != "one" and others[0].obj is not None:
            types = self._types(noun) if self.scene is not None else set()
            if others[0].obj.type not in types:
                return self._unclear(answer, f"the other one is not a {noun}.")
        return Reading(Intent.CHOSEN, answer, value=others[0].value)

    def _clause(self, answer: str, raw: str) -> Reading:
        """One clause: "A or B" and "both" name several; "not X" excludes what X fits."""
        text = _norm(raw)
        if not text:
            return self._unclear(answer, "I did not hear an answer.")
        if replies.names_several(text):
            return self._unclear(answer, f"I need you to name just one.{self._please()}")
        options = replies.alternatives(raw)
        if len(options) > 1:
            readings = [self._clause(answer, o) for o in options]
            if all(r.intent is Intent.CHOSEN for r in readings):
                if len({r.value for r in readings}) == 1:
                    return readings[0]
            return self._unclear(answer, f"{_quote(answer)} names more than one.{self._please()}")
        asked, excluded = replies.split_negations(raw)
        fit = self._fit(_norm(asked))
        pool, said = fit.pool, list(fit.said)
        for part in excluded:
            out = self._fit(_norm(part))
            if not out.recognised or out.unknown:
                return self._unclear(
                    answer, f"I could not tell which one you do not want in {_quote(answer)}."
                )
            dropped = {c.value for c in out.pool}
            pool = [c for c in pool if c.value not in dropped]
            said.append("not " + (" and ".join(out.said) or _quote(part, plain=True)))
        recognised = fit.recognised or bool(excluded)
        if fit.conflict or (fit.unknown and not recognised):
            if self.open and not fit.conflict and not excluded:
                return Reading(Intent.PASSED, answer, value=clean_answer(answer))
            return self._unclear(answer, self._not_understood(answer))
        if not recognised:
            return self._unclear(answer, self._not_understood(answer))
        if len(pool) == 1:
            # "It is Medicine_1, next to the plant": each part alone must fit the same one.
            for part in replies.conjuncts(asked) if not excluded else []:
                alone = self._fit(_norm(part))
                if len(alone.pool) == 1 and alone.pool[0].value != pool[0].value:
                    if alone.recognised and not alone.unknown:
                        detail = " and ".join(alone.said) or _quote(part)
                        return self._unclear(
                            answer,
                            f"the {strip_article(pool[0].label)} is not {detail}.",
                        )
            return Reading(Intent.CHOSEN, answer, value=pool[0].value)
        if not pool:
            detail = " and ".join(said) or _quote(answer)
            if fit.mentioned:
                who = choices([c.label for c in fit.mentioned])
                return self._unclear(answer, f"the {strip_article(who)} is not {detail}.")
            return self._unclear(answer, f"none of {self._them(self.candidates)} is {detail}.")
        return self._unclear(
            answer,
            f"{_quote(answer)} fits more than one: {self._them(pool, 'and')}.",
        )

    def _words(self, text: str) -> str:
        """The reply without its lead-ins ("sorry, I meant ..."), normalised."""
        return " ".join(_LEAD_INS.sub(" ", _norm(text)).split())

    def _them(self, pool: Sequence[Candidate], joint: str = "or") -> str:
        """Candidates as a person is told: by label, or "them" when the labels are internal
        (``Cup_1``) or too many to say."""
        labels = [c.label for c in pool]
        if len(labels) > 6 or any(re.search(r"_\d+$|\|", label) for label in labels):
            return f"{len(labels)} of them" if joint == "and" else "them"
        return _and(labels) if joint == "and" else choices(labels)

    def _please(self) -> str:
        them = self._them(self.candidates)
        return " Please describe the one you mean." if them == "them" else f" Please say {them}."

    def _fit(self, text: str) -> _Fit:
        """The candidates a plain description fits (no negation, correction or "or")."""
        pool = list(self.candidates)
        mentioned, negated, text = self._mentions(text)
        recognised = bool(mentioned or negated)
        if mentioned:
            pool = mentioned
        pool = [c for c in pool if c.value not in negated]
        # Before "me" goes with the lead-ins: "nearest (to) me" is the person's view.
        my_view = bool(re.search(r"\b(?:to|from|near\w*|clos\w*|f[au]rth\w*)\s+(?:me|us)\b", text))
        text = " ".join(_LEAD_INS.sub(" ", text).split())
        said: list[str] = []  # what the description asked for, for reasons
        unknown: list[str] = []
        conflict = False
        # Colour words.
        for colour in _COLOURS:
            if re.search(rf"\b{colour}\b", text):
                recognised = True
                said.append(colour)
                pool = [c for c in pool if re.search(rf"\b{colour}\b", _colour_text(c))]
                text = re.sub(rf"\b{colour}\b", " ", text)
        # Ordinals, in the order the question listed the candidates.
        match = replies.ORDINAL.search(text)
        if match:
            recognised = True
            # Counted from 1 in the question's order; 0 or past the end names none, and only
            # "last" counts from the end (never int("0") - 1).
            place = replies.position(match.group(1) or match.group(2) or match.group(3))
            order = self.order or []  # not listed: "the first one" names none
            index = len(order) - 1 if place == -1 else place - 1
            picked = order[index] if 0 <= index < len(order) else None
            said.append(f"the {strip_article(match.group(0))}")
            pool = [c for c in pool if picked is not None and c.value == picked.value]
            text = text[: match.start()] + " " + text[match.end() :]
            # "the first one, the second one"; or the question listed no order to count in.
            conflict = bool(replies.ORDINAL.search(text)) or self.order is None
        # A side from the robot's view ("the left one"), not "left of X".
        match = _SIDE.search(text)
        if match and self.scene is not None:
            recognised = True
            said.append(f"on the {match.group(1)}")
            pool = self._side(pool, match.group(1))
            text = text[: match.start()] + " " + text[match.end() :]
            conflict = conflict or bool(_SIDE.search(text))
        match = _DISTANCE.search(text)
        if match and self.scene is not None:
            recognised = True
            said.append(match.group(1))
            # "nearest to me" is the person's view, which the robot cannot see: not a guess.
            conflict = conflict or bool(match.group(2)) or my_view
            pool = self._nearest(pool, match.group(1).startswith(("near", "clos")))
            text = text[: match.start()] + " " + text[match.end() :]
        match = _MIDDLE.search(text)
        if match and self.scene is not None:
            recognised = True
            said.append("in the middle")
            pool = self._middle(pool)
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
                # A word that would have designated something, left unread: not a guess.
                conflict = conflict or any(self._designator(w) for w in unknown)
        elif text:
            unknown = [w for w in re.findall(r"[a-z]+", text) if w not in _STOP]
        return _Fit(recognised, pool, said, unknown, mentioned, conflict)

    def _not_understood(self, answer: str) -> str:
        if self.what == "person":
            return f"I could not tell who you mean by {_quote(answer)}."
        return f"I could not tell which {self.what} you mean by {_quote(answer)}."

    def _unclear(self, answer: str, reason: str) -> Reading:
        return Reading(Intent.UNCLEAR, answer, reason=reason)

    def _forms(self, *, labels: bool = False) -> list[tuple[str, Candidate]]:
        """Every way a reply names a candidate exactly, longest first (with its label too)."""
        # Names as said too ("butter knife" for ButterKnife): longest first, so that "the butter
        # knife" never leaves "knife" to name the Knife.
        said: dict[tuple[str, str], Candidate] = {}
        for c in self.candidates:
            for n in (*c.names, strip_article(c.label)) if labels else c.names:
                for form in (_norm(n), "" if "|" in n else _norm(wording.spoken(n))):
                    if form:
                        said[(form, c.value)] = c
        return sorted(((f, c) for (f, _), c in said.items()), key=lambda pair: -len(pair[0]))

    def _mentions(self, text: str) -> tuple[list[Candidate], set[str], str]:
        """Candidates named in the reply (longest names first), those named after "not", and
        the reply without them."""
        forms = self._forms()
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

    def _offsets(self, placed: list[Candidate]) -> list[tuple[float, int]]:
        """Sideways offsets from the robot's view (m, to its right), sorted, with indexes."""
        assert self.scene is not None
        right = self.scene.right_xz()  # plain floats: no numpy on the light path
        return sorted(
            (c.obj.xyz[0] * right[0] + c.obj.xyz[2] * right[1], i)  # type: ignore[union-attr]
            for i, c in enumerate(placed)
        )

    def _nearest(self, pool: list[Candidate], near: bool) -> list[Candidate]:
        """Of all the candidates, the one clearly nearest to (or furthest from) the robot."""
        assert self.scene is not None
        placed = [c for c in self.candidates if c.obj is not None]
        if len(placed) < 2:
            return []
        ax, _, az = self.scene.agent_position
        ranked = sorted(
            (math.hypot(c.obj.xyz[0] - ax, c.obj.xyz[2] - az), i)  # type: ignore[union-attr]
            for i, c in enumerate(placed)
        )
        if not near:
            ranked.reverse()
        ok = abs(ranked[1][0] - ranked[0][0]) > NEAREST_MARGIN
        return [c for c in pool if ok and c.value == placed[ranked[0][1]].value]

    def _middle(self, pool: list[Candidate]) -> list[Candidate]:
        """Of three side by side, the one between the others (clearly), else none."""
        placed = [c for c in self.candidates if c.obj is not None]
        if len(placed) != 3 or self.scene is None:
            return []
        (low, _), (mid, i_mid), (high, _) = self._offsets(placed)
        ok = min(mid - low, high - mid) > relations.SIDE_MARGIN
        return [c for c in pool if ok and c.value == placed[i_mid].value]

    def _side(self, pool: list[Candidate], side: str) -> list[Candidate]:
        """The candidate clearly furthest to ``side`` of *all* the question's candidates, if it
        is in ``pool`` ("the red one on the left": the leftmost one, and red)."""
        placed = [c for c in self.candidates if c.obj is not None]
        if len(placed) < 2 or self.scene is None:
            return [c for c in pool if c in placed] if len(placed) == 1 else []
        offsets = self._offsets(placed)
        (low, i_low), (high, i_high) = offsets[0], offsets[-1]
        if side == "left":
            ok = offsets[1][0] - low > relations.SIDE_MARGIN
            picked = placed[i_low]
        else:
            ok = high - offsets[-2][0] > relations.SIDE_MARGIN
            picked = placed[i_high]
        return [c for c in pool if ok and c.value == picked.value]

    def _describe(
        self, text: str, pool: list[Candidate]
    ) -> tuple[bool, list[Candidate], list[str]]:
        """Filter by the head noun, states and relation of ``text``; (understood?, pool, words)."""
        assert self.scene is not None
        phrase = parse_phrase(text)
        words: list[str] = []
        understood = False
        parts = [phrase.head, *phrase.states, phrase.relation or ""]
        parts.append(phrase.anchor.text if phrase.anchor is not None else "")
        covered = set(re.findall(r"[a-z0-9]+", " ".join(parts).lower()))
        left_out = [w for w in re.findall(r"[a-z]+", text) if w not in covered | _STOP]
        if any(self._designator(w) for w in left_out):
            # "the clean one or the dirty one" parses as "clean": a word that names something
            # was dropped, so the phrase does not say what the person said.
            return False, pool, words
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
            words.append(f"{phrase.relation} the {wording.spoken(anchors[0].type)}")
            pool = self._related(pool, phrase.relation, anchors)
        return understood, pool, words

    def _designator(self, word: str) -> bool:
        """Whether ``word`` alone could pick out a candidate (a colour, state, type, order)."""
        if word in _COLOURS or word in replies.ORDINALS or word in ("left", "right", "other"):
            return True
        if self.lexicon.state_filter(word):
            return True
        return self.scene is not None and len(word) > 2 and bool(self._types(word))

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
