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
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from bt_raider.checking.designation import FROM_SCENE, designate
from bt_raider.errors import BtRaiderError
from bt_raider.perception.attributes import Viewer
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.perception.reference import Designation
from bt_raider.perception.reference_words import IGNORED, points
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
#: Words a reply naming a place may hold around its name ("on the counter").
_PLACE_WORDS = frozenset("in on at inside into onto top by over near".split())
_PLACE_PREPOSITION = re.compile(r"^(?:in|on|at|inside|into|onto|on\s+top\s+of|by|over)\s+")
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
        speaker: who answers, for "my left" and "near me" (see :attr:`speaker`).
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
        speaker: Viewer | str | None = FROM_SCENE,
    ) -> None:
        self.candidates = list(dict((c.value, c) for c in candidates).values())
        #: The names of the person designated by name: anyone else introducing herself is not
        #: a substitute (the reading is ``absent``, final).
        self.expect = tuple(e for e in expect if e)
        #: Who answers ("my left" is seen from there): a person's id or name (the one asked),
        #: ``FROM_SCENE`` (the person marked user, else the only one) or None (unknown).
        self.speaker = speaker
        self.scene = scene
        self.what = what
        self.open = bool(open) and scene is None
        self.introductions = bool(introductions)
        self._lexicon = lexicon
        #: The order "the first one" counts in; None: the question did not list them all.
        self.order: list[Candidate] | None = self.candidates
        #: Whether the question offered exactly the candidates: an exclusion ("the one that is
        #: not red") then selects among them; else (it offered none, or others too) over the
        #: scene's objects of their types (:meth:`for_question` says which).
        self.exact = True
        #: :meth:`_forms` of the candidates it was worked out for, by ``labels``.
        self._forms_memo: dict[bool, tuple[tuple[Candidate, ...], list[tuple[str, Candidate]]]] = {}

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
            pattern = _said(form)
            for match in pattern.finditer(text):
                at.setdefault(cand.value, match.start())
            # Blank it out (same length): "knife" is not found again inside "butter knife".
            text = pattern.sub(lambda m: " " * len(m.group(0)), text)
        out = copy.copy(self)
        listed = len(at) == len(self.candidates) and len(set(at.values())) == len(at)
        offered = _options(question)
        # More options than candidates ("... the green cup or the red cup or the blue cup?"
        # of two): the person counts and excludes among what was offered, not among ours.
        out.exact = listed and offered == len(self.candidates)
        more = offered is not None and offered > len(self.candidates)
        out.order = (
            sorted(self.candidates, key=lambda c: at[c.value]) if listed and not more else None
        )
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
        if points(answer):  # the one reader's rule (reference_words.points)
            return self._unclear(answer, f"I cannot see where you point.{self._please()}")
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
        if noun != "one" and others[0].obj is not None and self.scene is not None:
            of_noun = designate(self.scene, f"the {noun}", among=[others[0].value])
            if others[0].value not in of_noun.ids or of_noun.unclear:
                return self._unclear(answer, f"the other one is not a {noun}.")
        return Reading(Intent.CHOSEN, answer, value=others[0].value)

    def _clause(self, answer: str, raw: str) -> Reading:
        """One clause. Scene objects are read by the one reader
        (:func:`~bt_raider.checking.designation.designate`), as the check reads an instruction;
        places and people without an object, and a space without a scene, by name."""
        text = _norm(raw)
        if not text:
            return self._unclear(answer, "I did not hear an answer.")
        objects = [c for c in self.candidates if c.obj is not None]
        if self.scene is None or not objects or self._names_other(text):
            return self._by_name(answer, raw)
        said = self._with_ids(raw)
        if self.what == "place":
            said = _PLACE_PREPOSITION.sub("", said.strip())
        found = designate(
            self.scene,
            said,
            among=[c.value for c in objects],
            order=[c.value for c in self.order] if self.order is not None else None,
            speaker=self.speaker,
            lexicon=self._lexicon,
        )
        if not self.exact and found.reference is not None:
            if any(part.excluded for part in found.reference.parts):
                # Not offered exactly these: "not the red one" of everything of their type.
                wider = self._of_their_types(objects)
                found = designate(
                    self.scene, said, among=wider, speaker=self.speaker, lexicon=self._lexicon
                )
                if not found.unclear and len(found.ids) > 1:
                    return self._unclear(
                        answer,
                        f"{_quote(answer)} fits more than one {self.what} I see.{self._please()}",
                    )
        reading = self._reading(answer, found)
        if reading.intent is Intent.CHOSEN and self._fits_another(said, objects, reading.value):
            kinds = {c.obj.type for c in objects if c.obj is not None}
            what = (
                self.what if self.what != "one" or len(kinds) != 1 else wording.spoken(kinds.pop())
            )
            return self._unclear(
                answer,
                f"{_quote(answer)} fits a {what} I did not ask about better than "
                f"{self._them(self.candidates)}.{self._please()}",
            )
        return reading

    def _of_their_types(self, objects: list[Candidate]) -> list[str]:
        """Every scene object of the candidates' types (what a reply may mean beyond them)."""
        assert self.scene is not None
        kinds = {c.obj.type for c in objects if c.obj is not None}
        return [o.id for o in self.scene.objects if o.type in kinds]

    def _fits_another(self, said: str, objects: list[Candidate], chosen: str | None) -> bool:
        """Whether ``said``, read over everything of the candidates' types, designates others
        and not ``chosen``: "the one in front of you" of two cups on the left is the third cup,
        in front, which the question did not offer; reading it among the two would guess."""
        assert self.scene is not None
        wider = self._of_their_types(objects)
        if len(wider) <= len(objects):
            return False
        overall = designate(
            self.scene, said, among=wider, speaker=self.speaker, lexicon=self._lexicon
        )
        return not overall.unclear and bool(overall.ids) and chosen not in overall.ids

    def _reading(self, answer: str, found: Designation) -> Reading:
        """A designation as a reading: one candidate, or unclear and why."""
        if found.unclear:
            return self._unclear(answer, f"{self._not_understood(answer)[:-1]}: {found.unclear}.")
        pool = [c for c in self.candidates if c.value in found.ids]
        if found.mode == "any" and found.ids:
            # "either", "whichever": any would do, but the question needs the person's one.
            return self._unclear(answer, f"I need you to name just one.{self._please()}")
        if found.mode == "several" and len(pool) == 1:
            # "the red one or the blue one" with no blue one: still two things said.
            return self._unclear(answer, f"{_quote(answer)} names more than one.{self._please()}")
        if len(pool) == 1:
            return Reading(Intent.CHOSEN, answer, value=pool[0].value)
        if not pool:
            why = found.reason if found.reason and found.reason != "nothing fits" else ""
            return self._unclear(
                answer,
                f"none of {self._them(self.candidates)} is {_quote(answer)}"
                + (f" ({why.rstrip('.')})." if why else "."),
            )
        return self._unclear(
            answer, f"{_quote(answer)} fits more than one: {self._them(pool, 'and')}."
        )

    def _names_other(self, text: str) -> bool:
        """Whether the reply names a candidate that is no scene object (a place, a person)."""
        mentioned, negated, _rest = self._mentions(text)
        return any(c.obj is None for c in mentioned) or any(
            c.obj is None for c in self.candidates if c.value in negated
        )

    def _with_ids(self, raw: str) -> str:
        """The reply with each object candidate's name ("Cup_1", "the butter knife" as a
        name) replaced by its objectId, which the reader reads as said outright."""
        text = _norm(raw)
        for form, cand in self._forms():
            if cand.obj is None or "|" not in cand.value:
                continue
            # Replaced literally (an objectId's characters are no regex template).
            text = _said(form).sub(" " + cand.value.replace("\\", "\\\\") + " ", text)
        return " ".join(text.split())

    def _by_name(self, answer: str, raw: str) -> Reading:
        """A reply read against the candidates' names only (places, people, no scene)."""
        text = _norm(raw)
        if replies.names_several(text):
            return self._unclear(answer, f"I need you to name just one.{self._please()}")
        if len(replies.alternatives(raw)) > 1:
            return self._unclear(answer, f"{_quote(answer)} names more than one.{self._please()}")
        mentioned, negated, rest = self._mentions(text)
        rest = " ".join(_LEAD_INS.sub(" ", rest).split())
        unknown = [
            w for w in re.findall(r"[a-z]+", rest) if w not in _STOP | _PLACE_WORDS | IGNORED
        ]
        pool = mentioned or [c for c in self.candidates if negated and c.value not in negated]
        if not (mentioned or negated):
            if self.open:
                return Reading(Intent.PASSED, answer, value=clean_answer(answer))
            return self._unclear(answer, self._not_understood(answer))
        if unknown or len(pool) != 1:
            # A word nobody read could change what is meant; several left: ask again.
            return self._unclear(answer, self._not_understood(answer))
        return Reading(Intent.CHOSEN, answer, value=pool[0].value)

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

    def _not_understood(self, answer: str) -> str:
        if self.what == "person":
            return f"I could not tell who you mean by {_quote(answer)}."
        return f"I could not tell which {self.what} you mean by {_quote(answer)}."

    def _unclear(self, answer: str, reason: str) -> Reading:
        return Reading(Intent.UNCLEAR, answer, reason=reason)

    def _forms(self, *, labels: bool = False) -> list[tuple[str, Candidate]]:
        """Every way a reply names a candidate exactly, longest first (with its label too)."""
        # Worked out once per list of candidates: every reading and question asks again.
        memo = self._forms_memo.get(labels)
        if (
            memo is not None
            and len(memo[0]) == len(self.candidates)
            and all(a is b for a, b in zip(memo[0], self.candidates, strict=True))
        ):
            return list(memo[1])
        forms = self._make_forms(labels=labels)
        self._forms_memo[labels] = (tuple(self.candidates), forms)
        return list(forms)

    def _make_forms(self, *, labels: bool) -> list[tuple[str, Candidate]]:
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
            pattern = _said(form)
            for match in pattern.finditer(text):
                if _NEGATION.search(text[: match.start()]):
                    negated.add(cand.value)
                else:
                    found.setdefault(cand.value, cand)
            text = pattern.sub(" ", text)
        kept = [c for c in found.values() if c.value not in negated]
        return kept, negated, " ".join(text.split())


# --------------------------------------------------------------------------- helpers
#: The options a question offers: what follows "Which ...:" up to its question mark.
_OFFERED = re.compile(r"\bwhich\b[^:?]*:\s*([^?]*)\?", re.IGNORECASE)


def _options(question: str) -> int | None:
    """How many options a question lists after "Which ...:" (None: it lists none so)."""
    found = _OFFERED.findall(str(question))
    if not found:
        return None
    return len([o for o in re.split(r",\s*|\s+or\s+", found[-1].strip()) if o.strip()])


def _and(labels: list[str]) -> str:
    return (
        choices(labels).rsplit(" or ", 1)[0] + " and " + labels[-1]
        if len(labels) > 1
        else choices(labels)
    )


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


@functools.lru_cache(maxsize=4096)
def _said(form: str) -> re.Pattern[str]:
    """``form`` said as words of its own (not inside a longer name or objectId), compiled once."""
    return re.compile(rf"(?<![a-z0-9|]){re.escape(form)}(?![a-z0-9|])")


def _natural(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.*?)_?(\d+)", name)
    return (match.group(1), int(match.group(2))) if match else (name, 0)


def _quote(text: str, *, plain: bool = False) -> str:
    text = " ".join(str(text).split())
    if len(text) > 80:
        text = text[:77] + "..."
    return text if plain else f"'{text}'"


#: How a compiled ask reads a reply (``AnswerSpace.read``).
Reader = Callable[[str], Reading]
