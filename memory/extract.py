"""CDR predicates, part one: reading the actions of a sentence, :class:`SymbolicExtractor`.

A natural-language sentence ``s`` is a set of actions ``s[phi_i] = (s[o_i], s[p_i])`` (Ma et
al., section 3). :class:`SymbolicExtractor` finds them with a small lexicon
(``data/lexicon.json``): verbs with their particles (*turn on/off*, *pick up*, *put down*),
objects by their head noun, destinations and sources by their prepositional phrase, negation
(*don't*), and pronouns resolved to the noun they stand for. The LLM extractor of the paper
lives in :mod:`bt_raider.memory.llm` and returns the same
:class:`~bt_raider.memory.actions.Action` records; how noun phrases are read is
:mod:`bt_raider.memory.phrases`.

Example:
    >>> from bt_raider.memory.extract import SymbolicExtractor
    >>> [a.key for a in SymbolicExtractor().extract("turn off the hall light")]
    [('turn_off', 'lamp')]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bt_raider.errors import MemoryStoreError
from bt_raider.memory.actions import UNKNOWN_OPERATION, Action, Extractor
from bt_raider.memory.frames import FrameLexicon, FrameReader, Located
from bt_raider.memory.phrases import _NounPhrases
from bt_raider.memory.verbs import VerbLexicon, VerbMapper
from bt_raider.words import singular

# --------------------------------------------------------------------------- extractor

_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*|[,.;!?]")
_CONTRACTIONS = (
    (re.compile(r"\b(do|does|did|is|are|was|were|could|would|should)n'?t\b"), r"\1 not"),
    (re.compile(r"\bcan'?t\b|\bcannot\b"), "can not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"\blet'?s\b"), "lets"),
    # "it's on the table" keeps its verb; "the chef's knife" is a knife.
    (re.compile(r"\b(it|that|there|here|what|where|who|he|she)'s\b"), r"\1 s"),
    (re.compile(r"'s\b"), ""),
    (re.compile(r"[’`]"), "'"),
)


def tokenize(sentence: str) -> list[str]:
    """Lower-case word tokens and clause punctuation; contractions expanded."""
    text = sentence.lower().replace("’", "'")
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return [
        t.replace("-", "") if t.count("-") == 1 and len(t) > 6 else t for t in _TOKEN.findall(text)
    ]


class SymbolicExtractor(_NounPhrases):
    """Deterministic action extraction with a lexicon; no model, microseconds per sentence.

    A word the lexicon does not know, where a command's verb stands (first in its clause,
    before an article or a pronoun: *yank the plate*), is a verb all the same: ``verb_mapper``
    maps it to the nearest lexical unit, and without one (or with nothing near) its action's
    operation is :data:`UNKNOWN_OPERATION`, so the rules cannot call the pair consistent.

    Args:
        lexicon: a :class:`VerbLexicon`, a path to a lexicon JSON, or None for the shipped one.
        verb_mapper: maps unknown verbs by embedding similarity (see
            :class:`~bt_raider.memory.verbs.VerbMapper`); None to leave them unknown.
        open_vocabulary: read unknown verbs at all (False: a word outside the lexicon is no
            verb, the behaviour before open vocabulary).
        frames: the frame lexicon (device classes, graded words, degrees, places; see
            :mod:`bt_raider.memory.frames`): a :class:`~bt_raider.memory.frames.FrameLexicon`,
            a path, None for the shipped one, or False to read verbs only.
    """

    name = "symbolic"

    def __init__(
        self,
        lexicon: VerbLexicon | str | Path | None = None,
        *,
        verb_mapper: VerbMapper | None = None,
        open_vocabulary: bool = True,
        frames: FrameLexicon | str | Path | bool | None = None,
    ) -> None:
        self.lex = lexicon if isinstance(lexicon, VerbLexicon) else VerbLexicon.load(lexicon)
        self.frames: FrameReader | None = None
        if frames is not False:
            table = frames if isinstance(frames, FrameLexicon) else None
            if isinstance(frames, (str, Path)):
                table = FrameLexicon.load(frames)
            self.frames = FrameReader(table, self.lex)
        self.verb_mapper = verb_mapper
        self.open_vocabulary = open_vocabulary
        self._known_words = self._closed_words()
        # Particles after an unknown verb ("yank up the rug"); not "in"/"on", which start the
        # place phrase of a noun ("the bowl and spoon in the cabinet").
        self._particles = frozenset(
            p for entry in self.lex.verbs.values() for p in entry.get("particles", {})
        ) - {"in", "on", "into", "onto", "to", "from", "at"}

    def _closed_words(self) -> frozenset[str]:
        """The function words of the lexicon: none of them is ever an unknown verb."""
        lex = self.lex
        words: set[str] = set()
        for group in (
            lex.clause_starters,
            lex.boundaries,
            lex.negations,
            lex.determiners,
            lex.pronouns,
            lex.beneficiaries,
            lex.goal_preps,
            lex.source_preps,
            lex.bringing_preps,
            lex.adverbs,
            lex.stop_words,
            lex.determiner_typos,
            lex.non_actions,
        ):
            words |= group
        for key in lex.multi_preps:
            words.update(key)
        # Nouns and adjectives stay open: before an article at the head of a clause, "open"
        # or "slice" is a verb ("open the fridge"), whatever else the lexicon files it as.
        return frozenset(words)

    def _unknown_verb_at(self, toks: list[str], i: int) -> tuple[str, str | None, int] | None:
        """``(lu, fixed_op, 1)`` for a word outside the lexicon that stands where a verb does."""
        t = toks[i]
        if not self.open_vocabulary or not t.isalpha() or len(t) < 3 or t in self._known_words:
            return None
        prev = toks[i - 1] if i > 0 else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        lex = self.lex
        if not (prev is None or prev in lex.boundaries or prev in lex.clause_starters):
            return None
        if prev == "to":
            return None  # "use it to water the plant": a purpose, not the command's action
        if nxt is None or not (
            nxt in lex.determiners
            or nxt in lex.pronouns
            or nxt in lex.beneficiaries
            or nxt in self._particles
        ):
            # "yank the plate", "yank it", "yank up the rug"; not "and watch from the desk"
            return None
        if nxt in self._particles and prev in {"and", "or"}:
            return None  # "place the plate and spoon down on the table": a noun
        if self.verb_mapper is not None:
            base = self.verb_mapper.map(t)
            if base is not None and base in lex.verbs:
                return base, None, 1
        return t, UNKNOWN_OPERATION, 1

    # -- verbs --------------------------------------------------------------

    def _verb_at(self, toks: list[str], i: int) -> tuple[str, str | None, int] | None:
        """``(lu, fixed_op, length)`` when a verb starts at ``i`` (fixed_op for phrases)."""
        lex = self.lex
        for n in (3, 2):
            key = tuple(toks[i : i + n])
            if len(key) == n and key in lex.phrases:
                return " ".join(key), lex.phrases[key], n
        base = lex.forms.get(toks[i])
        if base is None:
            return self._unknown_verb_at(toks, i)
        prev = toks[i - 1] if i > 0 else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        at_start = prev is None or prev in lex.boundaries or prev in lex.clause_starters
        infinitive = (
            prev == "to"
            and toks[i] == base
            and (
                nxt in lex.determiners
                or nxt in lex.pronouns
                or nxt in lex.verbs[base].get("particles", {})
                or i < 2
                or toks[i - 2] in lex.clause_starters
            )
        )
        if (
            prev is not None
            and (prev in lex.determiners or prev in lex.prepositions)
            and not infinitive
        ):
            return None  # "the open drawer", "a slice of bread", but "turn to face the sink"
        at_start = at_start or infinitive
        if lex.verbs[base].get("clause_initial") and not at_start:
            return None  # "the apple slice", "the tv stand"
        if not at_start and not (
            nxt is None
            # "take the rag go to the hall": a bare motion verb before "to" is a verb.
            or (lex.verbs[base].get("motion") and toks[i] == base and nxt == "to")
            or nxt in lex.determiners
            or nxt in lex.pronouns
            or nxt in lex.beneficiaries
            or nxt in lex.verbs[base].get("particles", {})
        ):
            return None  # "the green wash rag", "the remote control to ...": not a verb
        if base in {"close", "open"} and nxt in {"to", "by"}:
            return None  # "close to the sink"
        if base == "go" and prev == "let":
            return None
        return base, None, 1

    def _is_verb(self, toks: list[str], i: int) -> bool:
        return self._verb_at(toks, i) is not None

    # -- one action ---------------------------------------------------------

    def extract(self, sentence: str) -> list[Action]:
        """The actions of ``sentence`` in the order they are mentioned."""
        toks = tokenize(sentence)
        degrees: dict[int, str] = {}
        if self.frames is not None:
            toks, degrees = self.frames.strip_degrees(toks)
        starts: list[tuple[int, str, str | None, int]] = []
        i = 0
        while i < len(toks):
            hit = self._verb_at(toks, i)
            if hit is None:
                i += 1
                continue
            lu, fixed, n = hit
            starts.append((i, lu, fixed, n))
            i += n
        actions: list[Action] = []
        located: list[Located] = []
        last_nouns: list[str] = []  # canonical nouns in order of mention, for pronouns
        for k, (i, lu, fixed, n) in enumerate(starts):
            stop = starts[k + 1][0] if k + 1 < len(starts) else len(toks)
            action = self._action(toks, i, lu, fixed, n, stop, actions, last_nouns)
            if action is not None:
                actions.append(action)
                located.append(Located(action, i, stop))
        if self.frames is None:
            return actions
        return self.frames.refine(toks, located, degrees)

    def _action(
        self,
        toks: list[str],
        i: int,
        lu: str,
        fixed: str | None,
        n: int,
        stop: int,
        done: list[Action],
        nouns: list[str],
    ) -> Action | None:
        lex = self.lex
        entry: dict[str, Any] = (
            lex.verbs.get(lu, {}) if fixed is None else {"op": fixed, "transitive": True}
        )
        if fixed == UNKNOWN_OPERATION:  # "yank up the rug": the particle is the verb's
            entry["particles"] = dict.fromkeys(self._particles, UNKNOWN_OPERATION)
        particles: dict[str, str] = entry.get("particles", {})
        negated = any(t in lex.negations for t in toks[max(0, i - 3) : i]) and not any(
            t in lex.boundaries for t in toks[max(0, i - 3) : i]
        )
        j = i + n
        op = entry.get("op")
        particle: str | None = None
        if j < stop and toks[j] in particles and self._particle_ok(toks, j, stop, False):
            op = particles[toks[j]]
            particle = toks[j]
            lu = f"{lu} {toks[j]}"
            j += 1
        # The action's words run to the next verb, or to a clause boundary; a motion verb
        # with no destination yet reads on ("walk ahead and slightly left to the dresser").
        end = j
        while end < stop and (toks[end] not in lex.boundaries or self._joins_object(toks, end)):
            end += 1
        beneficiary = None
        if (
            j < end
            and toks[j] in lex.beneficiaries
            and (entry.get("with_beneficiary") or entry.get("op") == "bring")
        ):
            beneficiary = toks[j]
            j += 1
        obj_tokens: list[str] = []
        while j < end and toks[j] in lex.adverbs and toks[j] not in lex.prepositions:
            j += 1
        if (
            j + 1 < end
            and toks[j] in lex.determiner_typos
            and toks[j + 1] not in lex.stop_words
            and not self._is_verb(toks, j + 1)
        ):
            j += 1  # "put he pan on the stove": no subject pronoun is a verb's object
        if j < end and toks[j] not in lex.prepositions:
            phrase = self._noun_phrase(toks, j, end)
            obj_tokens, j = phrase.tokens, phrase.end
        # A particle after the object: "turn it on", "pick the apple up".
        if j < end and toks[j] in particles and op == entry.get("op"):
            if self._particle_ok(toks, j, end, True):
                op = particles[toks[j]]
                particle = toks[j]
                lu = f"{lu} {toks[j]}"
                j += 1
        # A particle that only ends the clause: "put the tv on" (but "put the cup on the table").
        end_particles: dict[str, str] = entry.get("end_particles", {})
        if j < end and toks[j] in end_particles and op == entry.get("op"):
            if j + 1 == end or all(t in lex.adverbs for t in toks[j + 1 : end]):
                op = end_particles[toks[j]]
                lu = f"{lu} {toks[j]}"
                j += 1
        if op == entry.get("op") and particles:
            last = end - 1
            while last > j and toks[last] in lex.adverbs and toks[last] not in particles:
                last -= 1
            if last >= j and toks[last] in particles and toks[last - 1] not in lex.prepositions:
                op = particles[toks[last]]  # "turn the taps in the shower on"
                lu = f"{lu} {toks[last]}"
                end = last
        goal_tokens: list[str] | None = None
        goal_prep: str | None = None
        source_tokens: list[str] | None = None
        first_pp: list[str] | None = None
        places = 0  # place phrases after the object: "on the table", "near the cup"
        while j < end:
            kind, m = self._preposition(toks, j, end)
            if kind is None:
                j += 1
                continue
            # "from inside the fridge", "from on top of the shelf": the place after "from"
            # is where the object comes from, whatever preposition names it.
            inner, k = self._preposition(toks, j + m, end) if kind == "source" else (None, 0)
            phrase = self._noun_phrase(toks, j + m + k, end)
            if phrase.tokens:
                first_pp = first_pp or phrase.tokens
                places += kind == "goal"
                if kind == "source" and source_tokens is None:
                    source_tokens = phrase.tokens
                elif kind == "goal" and goal_tokens is None:
                    # A multi-word preposition means what it maps to: "to the left of the cup"
                    # is a place (near), not a direction (to).
                    key = tuple(toks[j : j + m])
                    goal_prep = lex.multi_preps.get(key, toks[j]) if m > 1 else toks[j]
                    if any(t in {"left", "right"} for t in toks[j + m : phrase.end]):
                        goal_prep = "near"  # "to your left", "to the bottom right of the tv"
                    goal_tokens = phrase.tokens
            j = max(phrase.end, j + m + k)
        if entry.get("pp_object") and not obj_tokens:
            # "disconnect from the router", "connect to the web": the first phrase names it.
            obj_tokens = first_pp or []
            goal_tokens = source_tokens = None
        if entry.get("motion") and goal_tokens is None and not obj_tokens:
            goal_tokens = self._read_on_destination(toks, end, stop)
        if op is None:
            return None  # "turn left": a direction, not an action on an object
        obj_tokens = [t for t in obj_tokens if t not in lex.non_objects] if obj_tokens else []
        if entry.get("motion"):
            if obj_tokens and entry.get("with_object") and obj_tokens[0] not in lex.pronouns:
                op = entry["with_object"]  # "move the bin to the studio"
            elif not obj_tokens:
                obj_tokens, goal_tokens = goal_tokens or [], None
        if beneficiary and entry.get("with_beneficiary"):
            op = entry["with_beneficiary"]
        location = self._resolve(goal_tokens or [], op, done, nouns, prefer_object=True)
        if (
            goal_prep in lex.bringing_preps
            and entry.get("with_goal")
            and obj_tokens
            and location is not None  # "to the left": a side, not a destination
        ):
            op = entry["with_goal"]
        head = singular(obj_tokens[-1]) if obj_tokens else None
        obj = self._resolve(obj_tokens, op, done, nouns)
        source = self._resolve(source_tokens or [], op, done, nouns, prefer_object=True)
        if (
            entry.get("cuts_whole")
            and source
            and obj_tokens
            and (obj_tokens[-1] in lex.part_nouns or obj_tokens[-1] in lex.relational)
        ):
            obj, source = source, None  # "slice the top off the tomato" slices the tomato
        if not obj_tokens and entry.get("transitive") and location is None and source is None:
            return None  # "leave the drawer open": an adjective, not an action
        for noun in (obj, location, source):
            if noun:
                nouns.append(noun)
        alternatives: tuple[str, ...] = ()
        stacked = entry.get("stacked_goal")
        other = entry.get("particle_alternatives", {}).get(particle)
        if stacked and op == entry.get("op") and obj and places >= 2 and source is None:
            # "take the box on the table on the couch": the last place may say where the box
            # goes. Neither reading is safe to assume, so the rules judge both.
            alternatives = (stacked,)
        elif other and other != op and obj and source is None and location is None:
            alternatives = (other,)  # "take out the garbage": out of a container, or outside
        return Action(
            operation=op,
            object=obj,
            location=location,
            source=source,
            negated=negated,
            lu=lu,
            head=head,
            alternatives=alternatives,
        )

    def _joins_object(self, toks: list[str], i: int) -> bool:
        """Whether the boundary at ``i`` joins a second object to the action rather than
        starting a new clause: "take the laptop and the book on the table"."""
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        return (
            toks[i] == "and"
            and nxt is not None
            and nxt in self.lex.determiners
            and nxt not in self.lex.pronouns
        )

    def _particle_ok(self, toks: list[str], j: int, end: int, after_object: bool) -> bool:
        """Whether ``toks[j]`` is the verb's particle rather than a preposition.

        Right after the verb it is (*turn on the light*, *pick up the cup*) unless a
        prepositional phrase starts there (*take out of the fridge*); after the object only at
        the end of the clause (*turn it on*, *pick the cup up from the shelf*), not before a
        noun phrase (*put the cup on the table*).
        """
        nxt = toks[j + 1] if j + 1 < end else None
        if not after_object:
            return nxt != "of" and tuple(toks[j : j + 2]) not in self.lex.multi_preps
        lex = self.lex
        return (
            nxt is None
            or nxt in lex.boundaries
            or nxt in lex.adverbs
            or nxt in lex.prepositions
            or nxt in {"that", "which"}  # "turn the light on that is on the table"
        )

    def _read_on_destination(self, toks: list[str], end: int, stop: int) -> list[str] | None:
        """For a motion verb: the first destination after the clause boundary, if no verb."""
        j = end
        while j < stop:
            kind, m = self._preposition(toks, j, stop)
            if kind == "goal" and toks[j] not in {"up", "down", "around"}:
                phrase = self._noun_phrase(toks, j + m, stop)
                if phrase.tokens:
                    return phrase.tokens
            j += 1
        return None


def extractor_from_spec(spec: Extractor | str | Path | None) -> Extractor:
    """An extractor from an object, a lexicon path, or None (the shipped lexicon)."""
    if spec is None:
        return SymbolicExtractor()
    if isinstance(spec, (str, Path)):
        return SymbolicExtractor(spec)
    if not callable(getattr(spec, "extract", None)):
        raise MemoryStoreError(
            f"extractor {spec!r} has no extract(sentence) method: expected a "
            "SymbolicExtractor, an LLMExtractor or a lexicon path"
        )
    return spec
