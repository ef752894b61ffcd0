"""Noun phrases of a query: head, state adjectives, relation and anchor, what a modifier says.

``parse_phrase("the clean mug to the left of the bowl")`` gives head ``mug``, states
``("clean",)``, relation ``left of`` and anchor ``bowl``. People's phrasings are read as English
is: a post-modifier ("the mug with the pen in it") or a relative clause ("the counter the apple
is sitting on") leaves the head and says what is there (:attr:`ArgPhrase.detail`); a distance
adjective ("the closest pillow") names no anchor. Purely syntactic: it never sees a scene.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from bt_raider.checking.routes import relation_spans
from bt_raider.checking.vocabulary import (
    AMBIGUOUS_STATES,
    DETERMINERS,
    FILLERS,
    GENERIC_HEADS,
    POST_MODIFIERS,
    RELATIONS_BY_FIRST_WORD,
    SUPERLATIVES,
    Vocab,
    state_vocab,
)
from bt_raider.errors import QueryError
from bt_raider.perception.attributes import COLOUR_WORDS, colour_word
from bt_raider.perception.reference_words import COLOUR_SHADES, RIGHT_ADVERB_AFTER


class ArgPhrase(NamedTuple):
    """One argument of a query, as written (immutable; ``_replace`` makes a changed copy).

    Attributes:
        text: the phrase as given ("the fruit on the left of the bowl", ``Apple``); it is the
            key of :attr:`~bt_raider.checking.verdict.Verdict.grounding`.
        head: the head noun, lowercase, words separated by spaces ("fruit", "coffee machine");
            empty for "the one on the left of ...". For an objectId it is the id itself.
        states: state adjectives ("clean", "not sliced").
        relation: a canonical relation of :data:`RELATIONS`, or None.
        anchor: the phrase the relation is relative to.
        role: ``object``, ``source``, ``destination``, ``person`` or ``target``.
        detail: what a "with" modifier or a clause says is there ("the table with the lamp on
            it", "the table where the lamp is", "the table the lamp is on": the lamp); it
            narrows nothing in grounding, but says where a thing is.
        colours: colour words ("the red box": ``("red",)``), matched against the scene's
            ``color`` key.
        side: a side from the robot's view (``left``, ``right``, ``front``, ``behind``: "the
            box on the left", "the left box", "the cup in front of you"), or None.
    """

    text: str
    head: str
    states: tuple[str, ...] = ()
    relation: str | None = None
    anchor: ArgPhrase | None = None
    role: str = "object"
    detail: ArgPhrase | None = None
    colours: tuple[str, ...] = ()
    side: str | None = None

    @property
    def generic(self) -> bool:
        """True when the head means "any object" ("the item to the left of the plate")."""
        return self.head in GENERIC_HEADS

    def describe(self) -> str:
        """A short readable form: ``clean red mug [left of: bowl] [robot's left]``."""
        parts = [*self.states, *self.colours, self.head or "object"]
        out = " ".join(p for p in parts if p)
        if self.relation and self.anchor is not None:
            out += f" [{self.relation}: {self.anchor.describe()}]"
        if self.side:
            out += f" [robot's {self.side}]"
        return out


# --------------------------------------------------------------------------- noun phrases
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_DISPLAY_NAME = re.compile(r"^[A-Za-z]+_\d+$")


def parse_phrase(text: str, *, pddl: bool = False, vocab: Vocab | None = None) -> ArgPhrase:
    """Parse one argument phrase: determiners, state adjectives, head, relation and anchor.

    ``parse_phrase("the clean mug to the left of the bowl")`` gives head ``mug``, states
    ``("clean",)``, relation ``left of`` and anchor ``bowl``. Object ids (``Bowl|+00.27|...``)
    and display names (``Cabinet_2``) are kept whole.
    """
    raw = text.strip()
    if "|" in raw or _DISPLAY_NAME.match(raw):
        return ArgPhrase(raw, raw.lower() if "|" not in raw else raw)
    words = _words(raw, pddl=pddl)
    # A PDDL argument is a name ("left_cabinet"), not a description of where or what colour.
    return _parse_words(raw, words, vocab or state_vocab(None), describes=not pddl)


def _words(text: str, *, pddl: bool) -> list[str]:
    out: list[str] = []
    for tok in re.sub(r"[?!.;,()\"]+", " ", text).split():
        if "_" in tok and not _DISPLAY_NAME.match(tok):
            tok = tok.replace("_", " ")
        elif pddl and "-" in tok:
            tok = tok.replace("-", " ")
        tok = _CAMEL.sub(" ", tok) if any(c.isupper() for c in tok[1:]) else tok
        out.extend(tok.lower().split())
    if out and out[0].endswith("'s"):
        # "adriana's medicine" -> possessive modifier, handled like any modifier.
        out[0] = out[0][:-2]
    return [re.sub(r"'s$", "", w) for w in out]


#: Most spatial relations one phrase may chain ("the cup on the plate on the table left of the
#: sink" chains 3): parsing and grounding recurse once per relation, so the chain is bounded.
MAX_RELATION_DEPTH = 10


def _parse_words(
    text: str, words: list[str], vocab: Vocab, depth: int = 0, *, describes: bool = True
) -> ArgPhrase:
    if depth > MAX_RELATION_DEPTH:
        raise QueryError(
            f"the phrase chains more than {MAX_RELATION_DEPTH} spatial relations "
            f"(... {text[:40]!r}...): name the object with at most {MAX_RELATION_DEPTH}"
        )
    # A conditional clause adds nothing we can check ("the bowl if it is empty" -> bowl, empty).
    if "if" in words:
        i = words.index("if")
        tail = [w for w in words[i + 1 :] if w in vocab.single and w not in AMBIGUOUS_STATES]
        words = words[:i] + tail
    side = None
    if describes:
        # Before modifiers and relations: "behind you" is no post-modifier, "in front of you"
        # no "inside" of a front.
        words, side = robot_side(words)
    words, detail_words = _drop_modifiers(words)
    detail = None
    if detail_words:
        detail = _parse_words(" ".join(detail_words), detail_words, vocab, depth + 1)
    spans = relation_spans(words)
    # "on"/"off" at the end are states ("the stove that is on"), not relations.
    spans = [s for s in spans if not (s[2] == "on top of" and s[1] == 1 and s[0] == len(words) - 1)]
    # Nor after a participle: "the switched on lamp" is a state, not a lamp on top of something.
    spans = [s for s in spans if not (s[1] == 1 and s[0] > 0 and words[s[0] - 1] in _PARTICIPLES)]
    relation = anchor = None
    for start, n, rel in spans:
        if start == 0:
            continue
        if start + n >= len(words):
            continue
        relation = rel
        anchor_words = words[start + n :]
        anchor = _parse_words(
            " ".join(anchor_words), anchor_words, vocab, depth + 1, describes=describes
        )
        words = words[:start]
        break
    states, head_words = _split_states(words, vocab)
    head_words = [w for w in head_words if w not in DETERMINERS and w not in FILLERS]
    colours: list[str] = []
    if describes:
        head_words, colours = _split_colours(head_words, vocab)
    head = " ".join(head_words)
    return ArgPhrase(
        text,
        head,
        tuple(states),
        relation,
        anchor,
        detail=detail,
        colours=tuple(colours),
        side=side,
    )


def _split_colours(words: list[str], vocab: Vocab) -> tuple[list[str], list[str]]:
    """Colour words out of a head ("red box" -> "box", red; "the red one": any red object),
    unless the colour is the noun itself ("the orange", "the orange one": the fruit)."""
    # Only before "of": in "the drawer of the black cabinet" black is the cabinet's colour.
    cut = words.index("of") if "of" in words else len(words)
    colours = [w for w in words[:cut] if w in COLOUR_WORDS]
    if not colours:
        return words, []
    # A shade just before a colour is part of it ("light blue": both words must fit), never
    # the head ("light" alone may be a lamp) nor a word dropped.
    shades = {
        k
        for k, w in enumerate(words[:cut])
        if w in COLOUR_SHADES and k + 1 < cut and words[k + 1] in COLOUR_WORDS
    }
    rest = [w for k, w in enumerate(words[:cut]) if w not in COLOUR_WORDS and k not in shades]
    rest += words[cut:]
    if all(w in GENERIC_HEADS for w in rest):
        lexicon = vocab.lexicon if vocab.lexicon is not None else state_vocab(None).lexicon
        if any(lexicon is not None and lexicon.types_for(c) for c in colours):
            return words, []
    said = [
        colour_word(w) if w in COLOUR_WORDS else w
        for k, w in enumerate(words[:cut])
        if w in COLOUR_WORDS or k in shades
    ]
    return rest, said


#: Words that name a side from the robot's view, before a noun ("the left box") or after
#: "on the" ("the box on the left").
_SIDE_WORDS = {
    "left": "left",
    "leftmost": "left",
    "left-most": "left",
    "left-hand": "left",
    "right": "right",
    "rightmost": "right",
    "right-most": "right",
    "right-hand": "right",
}
#: Words after a side that make it part of something ("the left side of the table").
_PART_WORDS = frozenset("side hand end half corner edge part of".split())
#: Who "in front of ..." / "behind ..." may be said of to mean the robot's view.
_VIEWERS = frozenset({"you", "me", "us", "yourself", "myself", "robot"})


def robot_side(words: list[str]) -> tuple[list[str], str | None]:
    """A side from the robot's view out of a phrase's words, and the words without it.

    "the box on the left", "the box to your right", "the left box", "the cup in front of you",
    "the cup ahead", "the mug behind you" (:data:`~bt_raider.perception.attributes.SIDES`).
    "left of the bowl", "the left side of the table" and "behind the bowl" name another
    object, not the robot's view: they are left as they are. A side after a relation ("the
    cup on the box on the left") is the relation's anchor's, read when the anchor is.
    """
    n = len(words)
    relation_at = next((start for start, _n, _rel in relation_spans(words) if start > 0), n)
    for k, w in enumerate(words):
        after = words[k + 1 : k + 2]
        side = _SIDE_WORDS.get(w)
        if side is not None and k > 0 and words[k - 1] in ("on", "to", "at", "the", "your", "my"):
            # "on the left", "to your right", "on the left hand side" (not "... of the sink").
            start = k - 1
            while start > 0 and words[start] in ("the", "your", "my"):
                start -= 1
            if words[start] not in ("on", "to", "at"):
                start = -1
            end = k + 1
            while end < n and words[end] in ("side", "hand"):
                end += 1
            # It ends the phrase or a relation follows: "on the right burner" is a burner.
            ends = end >= n or words[end] in _STOPS or words[end] in RELATIONS_BY_FIRST_WORD
            if start > 0 and ends and start <= relation_at:
                return words[:start] + words[end:], side
        if side is not None and k + 1 < n and not (set(words[k + 1 : k + 3]) & _PART_WORDS):
            # "the left box", "the leftmost one" (not "left of", "the left side of", nor the
            # "right" of "right next to", "right here").
            after_side = words[k + 1]
            if after_side in RELATIONS_BY_FIRST_WORD or after_side in RIGHT_ADVERB_AFTER | _STOPS:
                continue
            if k < relation_at and (k == 0 or words[k - 1] not in ("on", "to", "at", "turn")):
                return words[:k] + words[k + 1 :], side
        if w == "in" and words[k + 1 : k + 2] == ["front"] and k > 0:
            stop = _viewer_end(words, k + 2, need_of=True)
            if stop is not None and k <= relation_at:
                return words[:k] + words[stop:], "front"
        if w == "ahead" and k > 0:
            stop = _viewer_end(words, k + 1, need_of=True)
            if stop is not None:
                first = k - 1 if words[k - 1] == "straight" else k
                return words[:first] + words[stop:], "front"
        if w == "behind" and k > 0 and (not after or after[0] in _VIEWERS | {"the"}):
            stop = _viewer_end(words, k + 1, need_of=False)
            if stop is not None:
                return words[:k] + words[stop:], "behind"
    return words, None


def _viewer_end(words: list[str], at: int, *, need_of: bool) -> int | None:
    """Where "[of] you" / "[of] the robot" ends from ``at``; ``at`` when nothing follows; None
    when another object follows ("in front of the sink")."""
    if at >= len(words):
        return at
    k = at
    if need_of:
        if words[k] != "of":
            return at if words[k] in _STOPS else None
        k += 1
    if k < len(words) and words[k] == "the" and words[k + 1 : k + 2] == ["robot"]:
        return k + 2
    if k < len(words) and words[k] in _VIEWERS:
        return k + 1
    return None


#: Words after "in front" / "ahead" that start something else ("the cup in front on the table").
_STOPS = frozenset(
    "on in at near next by beside under above below inside with and or that which".split()
)


#: Participles that make "on"/"off" a state ("switched on", "turned off").
_PARTICIPLES = frozenset({"switched", "turned", "powered", "toggled"})

#: Post-modifiers that say what is at or in the head ("the table with the lamp").
_WITH_WORDS = frozenset({"with", "containing", "contains", "holding", "holds", "having", "has"})

#: Who a distance may be measured from without naming an object.
_LISTENERS = frozenset({"you", "me", "us", "yourself", "myself"})


def _drop_modifiers(words: list[str]) -> tuple[list[str], list[str]]:
    """Words of a phrase without what names no object or relation: a distance adjective
    before the head ("the closest pillow" -> "the pillow") and a post-modifier after it up to
    the next relation that has an anchor of its own ("the mug with the pen in it on the table"
    -> "the mug on the table"; :data:`POST_MODIFIERS`). Also returns the words of a "with"
    modifier ("the pen in it"), the phrase's :attr:`ArgPhrase.detail`."""
    lead = 0
    while lead < len(words) and words[lead] in DETERMINERS:
        lead += 1
    if lead < len(words) - 1 and words[lead] in SUPERLATIVES and words[lead + 1] != "to":
        words = words[:lead] + words[lead + 1 :]
    for k in range(lead + 1, len(words) - 2):
        # "the bowl closest to you on the table": closest to the speaker, no anchor object.
        if words[k] in SUPERLATIVES and words[k + 1] == "to" and words[k + 2] in _LISTENERS:
            words = words[:k] + words[k + 3 :]
            break
    clause: list[str] = []
    found = _relative_clause(words, lead)
    if found is not None:
        # "the counter the apple is sitting on": the counter, where the apple is.
        start, verb = found
        clause = words[start:verb]
        words = words[: start - 1 if words[start - 1] in ("that", "which") else start]
    spans = relation_spans(words)
    first = spans[0][0] if spans else len(words)
    cut = next(
        (k for k in range(lead + 1, first) if words[k] in POST_MODIFIERS and words[k - 1] != "to"),
        None,
    )
    if cut is None:
        return words, clause
    end = len(words)
    for start, n, _rel in spans:
        after = words[start + n : start + n + 1]
        if start > cut and after and after[0] not in ("it", "them", "its", "their"):
            end = start  # "... to the left of the stove" still applies
            break
    detail = words[cut + 1 : end] if words[cut] in _WITH_WORDS else clause
    if words[cut] == "where":
        # "the table where the apple is", "where there is an apple": the apple is there.
        said = [w for w in words[cut + 1 : end] if w not in ("there", "here")]
        at = next((j for j, w in enumerate(said) if w in _CLAUSE_VERBS), None)
        detail = said[at + 1 :] if at == 0 else said[:at]
    return words[:cut] + words[end:], detail


#: Verbs of a relative clause that says where something is ("the apple is sitting on").
_CLAUSE_VERBS = frozenset("is are was were sits sit sat sitting stands standing lies lying".split())
#: Prepositions a relative clause without a pronoun ends with ("the shelf the vase was on").
_STRANDED = frozenset("on in inside at by under onto into near beside behind upon".split())
#: Words that cannot end a head noun, so a determiner after them starts no clause.
_NOT_HEAD = frozenset(
    DETERMINERS | FILLERS | POST_MODIFIERS | _STRANDED | {"of", "to", "and", "or", "from", "off"}
)


def _relative_clause(words: list[str], lead: int) -> tuple[int, int] | None:
    """A relative clause with no pronoun that ends the phrase ("the cabinet [that] the
    microwave is on"): where its subject starts and where its verb is, or None."""
    for k in range(lead + 1, len(words) - 2):
        if words[k] not in ("the", "a", "an", "your", "my"):
            continue
        prev = k - 2 if words[k - 1] in ("that", "which") else k - 1
        if prev < lead or words[prev] in _NOT_HEAD or words[prev] in RELATIONS_BY_FIRST_WORD:
            continue
        verb = next((j for j in range(k + 2, len(words)) if words[j] in _CLAUSE_VERBS), None)
        if verb is None or any(w in _NOT_HEAD for w in words[k + 1 : verb]):
            continue
        tail = words[verb + 1 :]
        if tail and tail[-1] in _STRANDED and all(w in _CLAUSE_VERBS | FILLERS for w in tail[:-1]):
            return k, verb
    return None


def _split_states(words: list[str], vocab: Vocab) -> tuple[list[str], list[str]]:
    states: list[str] = []
    rest: list[str] = []
    i = 0
    negate = False
    while i < len(words):
        w = words[i]
        if w in ("not", "isn't", "isnt", "non"):
            negate = True
            i += 1
            continue
        multi = next((m for m in vocab.multi if tuple(words[i : i + len(m)]) == m), None)
        if multi:
            states.append(("not " if negate else "") + " ".join(multi))
            i += len(multi)
            negate = False
            continue
        is_last = i == len(words) - 1
        if w in vocab.single and (w not in AMBIGUOUS_STATES or (is_last and i > 0)):
            # "cut" is a state only after the head ("the tomato that is cut").
            if w == "cut" and not is_last:
                rest.append(w)
            else:
                states.append(("not " if negate else "") + w)
            i += 1
            negate = False
            continue
        negate = False
        rest.append(w)
        i += 1
    return states, rest
