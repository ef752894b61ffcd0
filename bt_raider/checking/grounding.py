"""RAIDER's *Ground* step: link argument phrases to objects, people or places in a scene.

A phrase is grounded at the four abstraction levels of ``docs/scene-format.md`` section 2:

- **AS** (specific): an objectId, a display name (``Cabinet_2``) or a type ("apple", "cup");
- **AN** (by name/category): a lexicon category or synonym ("fruit", "electronic device");
- **AR** (by spatial relation): the anchor is grounded recursively, then the relation is asked
  with ``check_obj_relationship`` ("the fruit on the left of the bowl");
- **AC** (by conditioned state): candidates are filtered by ``get_obj_state`` ("the clean mug").

Every fact is asked through the :class:`~bt_raider.perception.toolset.ToolSet` (via
:class:`~bt_raider.checking.tool_runner.ToolRunner`, which records each call), so a verdict
shows the tool calls that justify its grounding. People are grounded through
``recognize_humans``; a person must be recognised (have a name) to count as present. How a
grounding is worded in an explanation (names, lists, "There is no ...") lives in
:mod:`~bt_raider.checking.wording`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from bt_raider.checking.phrases import ArgPhrase, parse_phrase
from bt_raider.checking.tool_runner import ToolFailure, ToolRunner
from bt_raider.checking.vocabulary import GENERIC_HEADS, SPEAKER_WORDS, Vocab, state_vocab
from bt_raider.checking.wording import (
    _LEADING,
    FLAG_WORDS,
    Referent,
    _cap,
    _where_is,
    describe_state,
    display,
    listing,
    there_is_no,
    tool_name,
)
from bt_raider.errors import ToolError
from bt_raider.perception import attributes, reference, reference_words, relations
from bt_raider.perception.lexicon import CategoryLexicon, split_type
from bt_raider.perception.scene import Human, SceneObject
from bt_raider.perception.tools import Place, relation_among
from bt_raider.words import singulars

#: Words that refer to a person without naming them.
PERSON_WORDS = frozenset(
    "user person patient human someone somebody man woman lady guy people me him her them "
    "client resident elder owner".split()
)
#: Words a head's sub-phrase may have beyond the longest known noun (modifiers the lexicon
#: drops, such as a leading "one" or punctuation); longer sub-phrases are not looked up.
SPAN_SLACK = 2
#: Relations of :mod:`bt_raider.checking.parse` -> the phrase given to ``check_obj_relationship``.
RELATION_ARG = {
    "left of": "on the left of",
    "right of": "on the right of",
    "on top of": "on top of",
    "inside": "inside",
    "above": "above",
    "below": "below",
    "near": "near",
    "next to": "next to",
    "closest to": "closest to",
}


# --------------------------------------------------------------------------- results
class Grounded(NamedTuple):
    """What one phrase grounded to (immutable).

    Attributes:
        phrase: the phrase.
        kind: ``object``, ``person`` or ``place``.
        candidates: the objects (people, places) that match every constraint.
        level: ``AS``, ``AN``, ``AR`` or ``AC`` (the most abstract constraint used).
        reason: when nothing matches, why (a sentence naming objects by display name); when
            several match a description meant to tell them apart ("the box on the left"),
            why it cannot.
        unrecognised: people in sight who might be meant but have no recognised name.
        designation: what the reader (:mod:`bt_raider.perception.reference`) made of the
            phrase: one, any or several meant, and the words it could not read.
    """

    phrase: ArgPhrase
    kind: str
    candidates: Sequence[Referent] = ()
    level: str = "AS"
    reason: str = ""
    unrecognised: Sequence[Human] = ()
    designation: reference.Designation | None = None

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.candidates]

    @property
    def names(self) -> list[str]:
        return [display(c) for c in self.candidates]

    @property
    def unique(self) -> Referent | None:
        return self.candidates[0] if len(self.candidates) == 1 else None


def _squash(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(text)).lower()


# --------------------------------------------------------------------------- grounder
class Grounder:
    """Grounds phrases in one scene through a :class:`ToolRunner`.

    Args:
        runner: the tool runner of the current check.
        lexicon: nouns, categories and state adjectives.
    """

    def __init__(
        self,
        runner: ToolRunner,
        lexicon: CategoryLexicon,
        *,
        speaker: attributes.Viewer | None = None,
        literal: bool = False,
    ) -> None:
        #: Who "my left", "near me" are seen from (None: unknown, so those are unclear).
        self.speaker = speaker
        #: Phrases are names (a PDDL instance's arguments), not descriptions to read.
        self.literal = literal
        self._unread: list[str] = []  # words of anchors left over, see _core
        self._colours_asked = False  # the last core asked for a colour
        self._unclear: list[str] = []
        self.runner = runner
        self.scene = runner.scene
        self.lexicon = lexicon
        self._present: list[SceneObject] | None = None
        # present() is every object of the scene, in its order: the scene's own tables answer.
        self._whole_scene = False
        self._longest: tuple[set[str], int] | None = None  # see _longest_name
        self._index: tuple[Any, ...] | None = None  # see _lookup
        self._spans: dict[str, tuple[str, ...]] = {}  # head -> the words its types came from

    # ------------------------------------------------------------------ what is there
    def present(self) -> list[SceneObject]:
        """Objects perception reports (``object_detection``) plus what the robot holds."""
        if self._present is None:
            names = self.runner.call("object_detection") or []
            objects = self.scene.objects
            if names == self.scene.display_names():
                # Perception reports every object, in scene order (the usual tool): that is
                # the list, and what the robot holds is in it (asked all the same, for the trace).
                self.held()
                self._present = objects
                self._whole_scene = True
                return objects
            found: dict[str, SceneObject] = {}
            by_name = {o.name: o for o in objects}
            for n in names:
                obj = by_name.get(n)
                if obj is None:
                    try:
                        obj = self.scene.resolve(n)
                    except ToolError:
                        continue
                found[obj.id] = obj
            for obj in self.held():
                found.setdefault(obj.id, obj)
            self._present = list(found.values())
        return self._present

    def held(self) -> list[SceneObject]:
        """What the robot holds (``robot_holding``)."""
        out = []
        for n in self.runner.call("robot_holding") or []:
            try:
                out.append(self.scene.resolve(n))
            except ToolError:
                continue
        return out

    # ------------------------------------------------------------------ entry point
    def ground(self, phrase: ArgPhrase, kind: str = "object") -> Grounded:
        """Ground one phrase.

        Args:
            phrase: the argument phrase.
            kind: ``object`` (objects only), ``person`` (people only), ``source`` (a named
                location or an object: where ``pick`` takes from) or ``target`` (a named
                location, a person or an object, in that order — for ``approach``).
        """
        self.runner.checkpoint()
        if kind == "person":
            return self.ground_person(phrase)
        if kind == "source":
            # Where something is taken from: a named location, else an object.
            place = self._place(phrase)
            if place is not None:
                return Grounded(phrase, "place", [place], "AS")
            return self.ground_object(phrase)
        if kind == "target":
            place = self._place(phrase)
            if place is not None:
                return Grounded(phrase, "place", [place], "AS")
            if self._mentions_person(phrase):
                return self.ground_person(phrase)
            found = self.ground_object(phrase)
            thing = bool(self.lexicon.types_for(phrase.head or phrase.text))  # "box": no person
            if not found.candidates and self.scene.humans and not phrase.relation and not thing:
                # "approach adriana" with nobody of that name: say so about people.
                person = self.ground_person(phrase)
                if person.unrecognised:
                    return person
            return found
        return self.ground_object(phrase)

    # ------------------------------------------------------------------ places and people
    def _place(self, phrase: ArgPhrase) -> Place | None:
        locations = self.scene.location_points
        if not locations:
            return None
        keys = {_squash(phrase.text), _squash(_LEADING.sub("", phrase.text)), _squash(phrase.head)}
        for name, pos in locations.items():
            if _squash(name) in keys:
                return Place(name, pos)
        return None

    def _mentions_person(self, phrase: ArgPhrase) -> bool:
        words = set(re.split(r"[\s_\-]+", phrase.text.lower()))
        if words & PERSON_WORDS:
            return True
        if self.lexicon.names_a_thing(words - PERSON_WORDS):  # "ana_door": a door
            return False
        for h in self.scene.humans:
            if h.id.lower() in words or _squash(h.id) == _squash(phrase.text):
                return True
            if h.name and h.name.lower() in words:
                return True
        return False

    def ground_person(self, phrase: ArgPhrase) -> Grounded:
        """A person by recognised name or id; generic words ("the user") match anyone recognised."""
        words = [w for w in re.split(r"[\s_\-]+", phrase.text.lower()) if w]
        words = [w for w in words if w not in ("the", "a", "an", "to", "mr", "mrs", "ms")]
        if words and all(w in SPEAKER_WORDS for w in words):
            return self.ground_speaker(phrase)
        people = self.runner.call("recognize_humans") or []
        humans = {h.id: h for h in self.scene.humans}
        named = [w for w in words if w not in PERSON_WORDS]
        recognised: list[Human] = []
        unrecognised: list[Human] = []
        for entry in people:
            h = humans.get(str(entry.get("id"))) if isinstance(entry, dict) else None
            if h is None:
                continue
            name = entry.get("name")
            (recognised if name else unrecognised).append(h)
        matched: list[Human] = []
        thing = self.lexicon.names_a_thing(set(words) - PERSON_WORDS)
        for h in recognised:
            name = (h.name or "").lower()
            if thing and _squash(name) != _squash(phrase.text):
                continue  # a door named after Ana is no person
            if name and (name in words or _squash(name) == _squash(phrase.text)):
                matched.append(h)
            elif h.id.lower() in words or _squash(h.id) == _squash(phrase.text):
                matched.append(h)
        if not matched and not named:
            matched = list(recognised)
        if matched:
            return Grounded(phrase, "person", matched, "AS")
        by_id = [
            h
            for h in unrecognised
            if h.id.lower() in words or _squash(h.id) == _squash(phrase.text)
        ]
        who = phrase.text if named else "the person"
        if unrecognised:
            seen = by_id or unrecognised
            reason = f"{_cap(who)} is not recognised: " + (
                f"the person in sight ({seen[0].id}) has no recognised name."
                if len(seen) == 1
                else f"the people in sight ({listing([h.id for h in seen])}) have no "
                "recognised name."
            )
        elif recognised:
            reason = (
                f"{_cap(who)} is not in sight: the robot recognises only "
                f"{listing([h.name or h.id for h in recognised])}."
            )
        else:
            reason = f"{_cap(who)} is not in sight: the robot sees nobody."
        return Grounded(phrase, "person", [], "AS", reason, unrecognised=by_id or unrecognised)

    def ground_speaker(self, phrase: ArgPhrase) -> Grounded:
        """ "me": the person in sight marked ``"user": true``, else the nearest one, else nobody."""
        people = self.runner.call("recognize_humans") or []
        humans = {h.id: h for h in self.scene.humans}
        seen = [
            humans[str(e.get("id"))]
            for e in people
            if isinstance(e, dict) and str(e.get("id")) in humans
        ]
        users = [h for h in seen if h.is_user]
        if users:
            return Grounded(phrase, "person", users, "AS")
        if seen:
            dists = [
                (float(self.runner.call("dist_robot_to_human", tool_name(h))), i)
                for i, h in enumerate(seen)
            ]
            if not all(math.isfinite(d) for d, _ in dists):
                # Nearest of a NaN is no answer: fail closed.
                raise ToolFailure("a distance to a person in sight is not a finite number")
            return Grounded(phrase, "person", [seen[min(dists)[1]]], "AS")
        return Grounded(
            phrase,
            "person",
            [],
            "AS",
            f"Nobody in sight can be the speaker ('{phrase.text}'): the robot sees nobody.",
        )

    # ------------------------------------------------------------------ objects
    def ground_object(
        self,
        phrase: ArgPhrase,
        among: Sequence[SceneObject] | None = None,
        order: Sequence[str] | None = None,
    ) -> Grounded:
        """The objects a phrase designates, read by the one reader.

        :func:`bt_raider.perception.reference.designate` reads the operators (exclusion,
        coordination, quantifiers, ordinals, superlatives, frames) and every word; each core
        description is grounded here (:meth:`_core`). ``among`` limits the domain (a
        question's candidates, ``order`` the ids as the question listed them); by default it is
        every object perception reports.
        """
        domain = list(among) if among is not None else self.present()
        ref = reference.read(phrase.text)
        plain = ref.quantifier == "one" and not ref.unread and not ref.other and len(ref.parts) == 1
        plain = plain and not (ref.parts[0].selects or ref.parts[0].excluded or ref.parts[0].ids)
        if (
            self.literal
            or plain
            and phrase.relation is None
            and self._exact(phrase, self.present())
        ):
            # A name ("Cup_1", an objectId, a PDDL argument): what it names, nothing to read.
            found = self._ground_core(phrase)
            inside = {o.id for o in domain}
            kept = [c for c in found.candidates if c.id in inside or among is None]
            return found._replace(
                candidates=kept, designation=reference.Designation(tuple(c.id for c in kept))
            )
        cores: dict[str, Grounded] = {}

        def core(text: str) -> reference.Core:
            found, unread = self._core(text)
            cores[text] = found
            certain = None
            if self._colours_asked:
                # An object whose colour the scene does not give fits "red", but not for sure.
                certain = [c for c in found.candidates if attributes.colours_of(c) is not None]
            return reference.Core(found.candidates, tuple(unread), found.reason, certain)

        before = len(self._unclear)
        got = reference.designate(
            ref, domain, core, scene=self.scene, order=order, speaker=self.speaker
        )
        if len(self._unclear) > before:
            got = replace_designation(got, self._unclear[before:])
            del self._unclear[before:]
        by_id = {o.id: o for o in domain}
        candidates = [by_id[i] for i in got.ids if i in by_id]
        levels = [g.level for g in cores.values()]
        level = max(levels, key=_LEVELS.index) if levels else "AS"
        if any(p.selects for p in ref.parts):
            level = "AR" if level != "AR" else level
        reason = got.reason
        first = cores.get(ref.parts[0].core) if len(ref.parts) == 1 else None
        if not candidates and first is not None and not first.candidates and first.reason:
            reason = first.reason  # the core's own words for nothing ("There is no cup ...")
        elif not candidates:
            what = _LEADING.sub("", phrase.text.strip())
            why = f": {reason}." if reason and reason != "nothing fits" else "."
            reason = f"There is no {what} in the scene{why}"
        return Grounded(phrase, "object", candidates, level, reason, designation=got)

    def _core(self, text: str) -> tuple[Grounded, list[str]]:
        """A core description grounded, and the words of it nothing read."""
        phrase = parse_phrase(text, vocab=_vocab(self.lexicon))
        self._colours_asked = bool(phrase.colours)
        before = len(self._unread)
        found = self._ground_core(phrase)
        unread = self._unread[before:]
        del self._unread[before:]
        return found, [*self._left_over(phrase, text), *unread]

    def _left_over(self, phrase: ArgPhrase, text: str) -> list[str]:
        """Words of ``text`` its parsed phrase does not account for (docs/reader.md)."""
        covered = set(reference_words.CORE_WORDS)
        covered.update(self._used_words(phrase.head))
        if phrase.relation is not None:
            covered.update(reference_words.RELATION_SAID.get(phrase.relation, ()))
        if phrase.detail is not None:
            covered.update(reference_words.DETAIL_WORDS)
        for state in phrase.states:
            covered.update(state.split())
        covered.update(
            w for w in attributes.COLOUR_WORDS if attributes.colour_word(w) in phrase.colours
        )
        covered.update(phrase.colours)  # a shade read with its colour ("light blue")
        for sub in (phrase.anchor, phrase.detail):
            if sub is not None:
                covered.update(_plain_words(sub.text))  # read on their own (the anchor's own)
        # An objectId or display name ("Cup|+00.20|...", "cup_1") is a name, read whole.
        out = [
            w
            for w in _plain_words(text)
            if w not in covered and "|" not in w and not reference_words.NAME_WORD.match(w)
        ]
        if phrase.side:
            out.append(phrase.side)
        return list(dict.fromkeys(out))

    def _used_words(self, head: str) -> set[str]:
        """The words of a head its type lookup used ("top drawer": drawer)."""
        if not head or head in GENERIC_HEADS:
            return set(head.split())
        words = head.split()
        span = self._head_span(head)
        if (
            tuple(span) == tuple(words)
            and words[-1] in GENERIC_HEADS
            and not self._spans.get(re.sub(r"[ _]?\d+$", "", head.strip()) or head)
        ):
            return {words[-1]}  # "the shiny one": one, and "shiny" nobody read
        return set(span)

    def _ground_core(self, phrase: ArgPhrase) -> Grounded:
        """Objects matching a phrase's head, states and relation."""
        present = self.present()
        exact = self._exact(phrase, present)
        if exact is not None:
            return Grounded(phrase, "object", [exact], "AS")
        types, level = self.types_for(phrase.head, present)
        if phrase.generic:
            base = list(present)
            level = "AS"
        else:
            base = self._of_types(present, types) if types else []
        if not base:
            return Grounded(phrase, "object", [], level, f"{there_is_no(phrase)} in the scene.")
        # "the tub" names the Bathtub and its BathtubBasin: one thing, the whole.
        wholes = {o.id for o in base}
        base = [o for o in base if (w := self.scene.whole_of(o)) is None or w.id not in wholes]
        candidates = base
        if phrase.states:
            candidates, why_not = self._filter_states(phrase, candidates)
            level = "AC"
            if not candidates:
                return Grounded(phrase, "object", [], level, why_not)
        if phrase.colours:
            # The scene's optional ``color``: an object of unknown colour may be any colour.
            candidates, why_not = attributes.with_colours(candidates, phrase.colours)
            level = "AC"
            if not candidates:
                return Grounded(phrase, "object", [], level, self._none_because(phrase, why_not))
        if phrase.relation and phrase.anchor is not None:
            candidates, why_not = self._filter_relation(phrase, candidates)
            level = "AR"
            if not candidates:
                return Grounded(phrase, "object", [], level, why_not)
        # A side ("on the left") is the reader's (a frame of its own), never read here.
        return Grounded(phrase, "object", candidates, level)

    @staticmethod
    def _none_because(phrase: ArgPhrase, why: str) -> str:
        """ "There is no green box in the scene: the Box_1 is red."."""
        return f"{there_is_no(phrase)} in the scene" + (f": {why}." if why else ".")

    def _exact(self, phrase: ArgPhrase, present: list[SceneObject]) -> SceneObject | None:
        if phrase.relation or phrase.states or phrase.colours or phrase.side:
            return None
        text = _LEADING.sub("", phrase.text.strip())
        if self._whole_scene and present is self._present:
            return self.scene.find(text)
        ids, names = self._lookup(present)[:2]
        # The first object of ``present`` whose id or name matches, as a scan would find it.
        hits = [h for h in (_row(ids, text), _row(names, text.lower())) if h is not None]
        return present[min(hits)] if hits else None

    def _lookup(self, present: list[SceneObject]) -> tuple[list[str], list[str], list[str]]:
        """For ``present`` (read once per check): ids, lower-case names and types, row by row.

        When perception reports only some objects (else the scene's own tables answer), every
        phrase of a query looks them up here instead of reading the scene again.
        """
        if self._index is None or self._index[0] is not present:
            if all(type(o) is SceneObject for o in present):
                # The scene's own objects: their dicts read directly (a property call per
                # object and field is most of this table's cost in a scene of thousands).
                ids = [o.raw["objectId"] for o in present]
                types_of = [o.raw["objectType"] for o in present]
            else:  # duck-typed objects of a user's perception
                ids = [o.id for o in present]
                types_of = [o.type for o in present]
            names = [o.name.lower() for o in present]
            self._index = (present, ids, names, types_of)
        return self._index[1], self._index[2], self._index[3]

    def _of_types(self, present: list[SceneObject], types: set[str]) -> list[SceneObject]:
        """The objects of ``present`` whose type is one of ``types``, in ``present``'s order."""
        if self._whole_scene and present is self._present:
            return self.scene.of_types(types)
        types_of = self._lookup(present)[2]
        return [present[i] for i, t in enumerate(types_of) if t in types]

    def types_for(self, head: str, present: list[SceneObject]) -> tuple[set[str], str]:
        """The object types a head noun means, and the level (AS for types, AN for categories).

        Scene types spelled out ("coffee machine", "knife") come first, then the lexicon
        (synonyms and categories). A head with modifiers or parts ("adrianas medicine", "red
        apple", "microwave door") is read through its sub-phrases, longest first, preferring
        one whose types are in the scene; a near-miss of a scene type comes last.
        """
        if not head or head in GENERIC_HEADS:
            return set(), "AS"
        scene_types = self.scene.object_types()
        head = re.sub(r"[ _]?\d+$", "", head.strip()) or head
        words = head.split()
        # Spans no longer than the longest name known: linear in the query's length, not cubic.
        longest = self._longest_name(scene_types)
        # Longest first, then rightmost: compounds end in their head ("the bread knife": a knife).
        spans = sorted(
            ((i, j) for i in range(len(words)) for j in range(min(len(words), i + longest), i, -1)),
            key=lambda span: (-(span[1] - span[0]), -span[0]),
        )
        first: tuple[set[str], str] | None = None
        first_span: tuple[int, int] = (0, 0)
        read = self.lexicon.phrase_memo(scene_types)  # a long reply repeats its sub-phrases
        for i, j in spans:
            if (hit := read.get(phrase := " ".join(words[i:j]), read)) is read:
                hit = read[phrase] = self._types_of_phrase(phrase, scene_types)
            if hit is None:
                continue
            if hit[0] & scene_types:
                self._spans[head] = tuple(words[i:j])
                return set(hit[0]), hit[1]
            if first is None:
                first, first_span = hit, (i, j)
        if first is not None:
            self._spans[head] = tuple(words[first_span[0] : first_span[1]])
            return set(first[0]), first[1]
        # rapidfuzz only for a near miss, off the common path of every check.
        from rapidfuzz import fuzz, process

        best = process.extractOne(
            _squash(head), {t: t.lower() for t in scene_types}, scorer=fuzz.ratio, score_cutoff=85
        )
        if best is not None:
            self._spans[head] = tuple(words)
            return {best[2]}, "AS"
        return set(), "AS"

    def _head_span(self, head: str) -> tuple[str, ...]:
        """The words of ``head`` its last type lookup named a type with (all when unknown: an
        unknown noun is a reason of its own, "There is no ...")."""
        key = re.sub(r"[ _]?\d+$", "", head.strip()) or head
        if key not in self._spans:
            self.types_for(head, self.present())
            self._spans.setdefault(key, ())  # no type: the head is its own reason
        return self._spans[key] or tuple(key.split())

    def _longest_name(self, scene_types: set[str]) -> int:
        """Words in the longest noun the lexicon or a scene type spells, plus slack for filler."""
        if self._longest is None or self._longest[0] != scene_types:
            longest = max(map(_type_words, scene_types), default=1)
            self._longest = scene_types, max(_longest_noun(self.lexicon), longest) + SPAN_SLACK
        return self._longest[1]

    def _types_of_phrase(self, phrase: str, scene_types: set[str]) -> tuple[set[str], str] | None:
        forms = singulars(phrase)
        for n, form in enumerate((phrase, *forms)):
            own = self.lexicon.own_word(phrase) if n == 1 else None  # "glasses": no plural
            if own is not None:
                return (set(own), "AS") if own else None
            key = _squash(form)
            hit = {t for t in scene_types if t.lower() == key}
            if hit:
                return hit, "AS"
        types = self.lexicon.types_for(phrase)
        if types:
            # A type's own name ("cup") means it: none in sight, a Mug would be a guess.
            named = {t for t in types if t.lower() in {_squash(phrase), *map(_squash, forms)}}
            if named and not named & scene_types:
                return named, "AS"
            return set(types), ("AN" if self.lexicon.is_category(phrase) else "AS")
        return None

    def states_of(self, obj: SceneObject) -> dict[str, bool]:
        """``get_obj_state`` of an object, as tool words (``{"open": False}``)."""
        result = self.runner.call("get_obj_state", obj.name)
        return dict(result) if isinstance(result, dict) else {}

    def _filter_states(
        self, phrase: ArgPhrase, candidates: list[SceneObject]
    ) -> tuple[list[SceneObject], str]:
        wanted: dict[str, bool] = {}
        for adj in phrase.states:
            flt = self.lexicon.state_filter(adj)
            if flt:
                wanted.update(flt)
        if not wanted:
            return candidates, ""
        held = {o.id for o in self.held()} if "isPickedUp" in wanted else set()
        kept = []
        seen: list[str] = []
        for obj in candidates:
            state = self.states_of(obj)
            ok = True
            for flag, value in wanted.items():
                if flag == "isPickedUp":
                    actual = obj.id in held
                else:
                    actual = bool(state.get(FLAG_WORDS.get(flag, flag), False))
                if actual != value:
                    ok = False
            if ok:
                kept.append(obj)
            elif len(seen) < 4:
                seen.append(f"the {obj.name} is {describe_state(state, wanted)}")
        why = f"{there_is_no(phrase)} in the scene"
        why += (": " + listing(seen) + ".") if seen else "."
        return kept, why

    def _filter_relation(
        self, phrase: ArgPhrase, candidates: list[SceneObject]
    ) -> tuple[list[SceneObject], str]:
        assert phrase.anchor is not None and phrase.relation is not None
        anchor = self.ground_object(phrase.anchor)
        if anchor.designation is not None:
            # What the anchor left unread is unread in the phrase ("in the bowl unless ...").
            self._unread.extend(anchor.designation.unread)
            if anchor.designation.unclear and not anchor.designation.unread:
                self._unclear.append(anchor.designation.unclear)
        if not anchor.candidates:
            return [], anchor.reason or f"{there_is_no(phrase.anchor)} in the scene."
        anchors = [a for a in anchor.candidates if isinstance(a, SceneObject)]
        pool = {o.id for o in candidates}
        kept: dict[str, SceneObject] = {}
        if phrase.relation == "closest to":
            for a in anchors:
                others = [o for o in candidates if o.id != a.id]
                if not others:
                    continue
                best = self._closest(others, a)
                kept[best.id] = best
        else:
            # Asked among the candidates' types: only their positions and links are read.
            among, among_objects = relation_among(self.runner.tools, self.scene, candidates)
            # One spatial index for every anchor: 39 bowls must not read the scene 39 times.
            with relations.indexed(self.scene):
                if phrase.relation in RELATION_ARG:  # every anchor's neighbourhood at once
                    relations.expect(
                        self.scene, RELATION_ARG[phrase.relation], anchors, among_objects
                    )
                for a in anchors:
                    for obj in self.related(phrase.relation, a, among):
                        oid = obj.id
                        if oid in pool and oid != a.id:
                            kept[oid] = obj
        ordered = [o for o in candidates if o.id in kept]
        anchor_names = listing([a.name for a in anchors], limit=4)
        rel = "in or on" if phrase.relation == "from" else phrase.relation
        why = f"{there_is_no(phrase, with_relation=False)} {rel} the {anchor_names}."
        return ordered, why

    def related(self, relation: str, anchor: SceneObject, among: str = "") -> list[SceneObject]:
        """Objects X with "X <relation> anchor", asked through ``check_obj_relationship``.

        ``from`` means resting in or on the anchor (inside a container, on top otherwise).
        What rests in or on a part of the anchor rests in or on the anchor: "the mug in the
        sink" is in its ``SinkBasin``. With ``among`` (types), X is of those types only.
        """
        asked = relation
        if relation == "from":
            relation = "inside" if relations.is_container(anchor) else "on top of"
        args = [RELATION_ARG[relation], anchor.name]
        if among:
            args.append(among)
        names = self.runner.call("check_obj_relationship", *args)
        out = []
        for n in names or []:
            try:
                out.append(self.scene.resolve(n))
            except ToolError:
                continue
        if asked in ("from", "inside", "on top of"):
            for part in self.scene.parts_of(anchor):
                # In or on a part both count: a sink's basin holds what is "in the sink".
                out.extend(o for o in self.related("from", part, among) if o not in out)
        return out

    def receptacle_part(self, found: Grounded) -> Grounded:
        """A destination that is no receptacle but has one as a part: that part ("the sink")."""
        whole = found.unique
        if not isinstance(whole, SceneObject) or not self.scene.parts_of(whole):
            return found
        props = self.runner.call("get_obj_properties", whole.name) or {}
        if props.get("receptacle", False):
            return found
        parts = [
            p
            for p in self.scene.parts_of(whole)
            if (self.runner.call("get_obj_properties", p.name) or {}).get("receptacle", False)
        ]
        if len(parts) != 1:
            return found
        return Grounded(found.phrase, found.kind, parts, found.level)

    def _closest(self, candidates: list[SceneObject], anchor: SceneObject) -> SceneObject:
        if self.runner.has("dist_between_objs"):
            dists = [
                (float(self.runner.call("dist_between_objs", anchor.name, c.name)), i)
                for i, c in enumerate(candidates)
            ]
            return candidates[min(dists)[1]]
        return relations.closest(self.scene, candidates, anchor)

    def restrict_to_source(self, obj: Grounded, source: Grounded) -> tuple[Grounded, Grounded]:
        """``pick X from Y``: keep the X resting in or on some Y, and the Y that hold them."""
        holders = [s for s in source.candidates if isinstance(s, SceneObject)]
        if not holders:
            # Nothing to check against (no such source, or a named location).
            return obj, source
        inside: dict[str, set[str]] = {}
        among = relation_among(self.runner.tools, self.scene, obj.candidates)[0]
        with relations.indexed(self.scene):  # one index for every holder
            for s in holders:
                inside[s.id] = {o.id for o in self.related("from", s, among)}
        kept = [o for o in obj.candidates if any(o.id in ids for ids in inside.values())]
        used = [s for s in holders if inside[s.id] & {o.id for o in kept}]
        if not kept:
            where = listing([s.name for s in holders], limit=4)
            reason = f"{there_is_no(obj.phrase)} in or on the {where}."
            if obj.candidates:
                reason += " " + _where_is(self.scene, obj.candidates)
            return (
                Grounded(obj.phrase, obj.kind, [], obj.level, reason),
                source,
            )
        return (
            Grounded(obj.phrase, obj.kind, kept, obj.level),
            Grounded(source.phrase, source.kind, used, source.level),
        )


#: Abstraction levels, least to most specific in what they read.
_LEVELS = ("AS", "AN", "AC", "AR")


def _plain_words(text: str) -> list[str]:
    """The lower-case words of a phrase (an objectId whole)."""
    return [w for w, _ in reference_words.tokens(text) if w != ","]


def _vocab(lexicon: CategoryLexicon) -> Vocab:
    return state_vocab(lexicon)


def replace_designation(got: reference.Designation, unclear: list[str]) -> reference.Designation:
    """``got`` with more reasons it is unclear (an anchor's frame nobody can read)."""
    text = "; ".join(x for x in (got.unclear, *dict.fromkeys(unclear)) if x)
    return got._replace(unclear=text)


def _row(values: list[str], value: str) -> int | None:
    """The first row of ``value`` in ``values``, or None."""
    try:
        return values.index(value)
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def _type_words(object_type: str) -> int:
    """Words in a type spelled out (``CoffeeMachine``: 2); a scene's types recur check after
    check."""
    return len(split_type(object_type).split())


@lru_cache(maxsize=32)
def _longest_noun(lexicon: CategoryLexicon) -> int:
    """Words in the longest noun phrase the lexicon knows ("something to sit on": 4)."""
    return max((len(n.split()) for n in lexicon.object_nouns()), default=1)
