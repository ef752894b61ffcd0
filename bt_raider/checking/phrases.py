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
    """

    text: str
    head: str
    states: tuple[str, ...] = ()
    relation: str | None = None
    anchor: ArgPhrase | None = None
    role: str = "object"
    detail: ArgPhrase | None = None

    @property
    def generic(self) -> bool:
        """True when the head means "any object" ("the item to the left of the plate")."""
        return self.head in GENERIC_HEADS

    def describe(self) -> str:
        """A short readable form: ``clean mug [left of: bowl]``."""
        parts = [*self.states, self.head or "object"]
        out = " ".join(p for p in parts if p)
        if self.relation and self.anchor is not None:
            out += f" [{self.relation}: {self.anchor.describe()}]"
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
    return _parse_words(raw, words, vocab or state_vocab(None))


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


def _parse_words(text: str, words: list[str], vocab: Vocab, depth: int = 0) -> ArgPhrase:
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
    words, detail_words = _drop_modifiers(words)
    detail = None
    if detail_words:
        detail = _parse_words(" ".join(detail_words), detail_words, vocab, depth + 1)
    spans = relation_spans(words)
    # "on"/"off" at the end are states ("the stove that is on"), not relations.
    spans = [s for s in spans if not (s[2] == "on top of" and s[1] == 1 and s[0] == len(words) - 1)]
    relation = anchor = None
    for start, n, rel in spans:
        if start == 0:
            continue
        if start + n >= len(words):
            continue
        relation = rel
        anchor_words = words[start + n :]
        anchor = _parse_words(" ".join(anchor_words), anchor_words, vocab, depth + 1)
        words = words[:start]
        break
    states, head_words = _split_states(words, vocab)
    head = " ".join(w for w in head_words if w not in DETERMINERS and w not in FILLERS)
    return ArgPhrase(text, head, tuple(states), relation, anchor, detail=detail)


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
