"""The noun phrases of a command, read by :class:`~bt_raider.memory.extract.SymbolicExtractor`.

Where a noun phrase starts and ends (*the green wash rag*, *a slice of bread*, *one of the
apple slices*), which preposition opens a place phrase and whether it names a destination or a
source (*on*, *to the left of*, *from inside*), and what a pronoun or a part (*it*, *the door*)
stands for. Part of the symbolic extractor, mixed into it; finding the verbs and assembling the
actions is :mod:`bt_raider.memory.extract`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bt_raider.memory.actions import Action
from bt_raider.memory.verbs import VerbLexicon
from bt_raider.words import singular


@dataclass
class _Phrase:
    """A noun phrase: its tokens and where it ends."""

    tokens: list[str]
    end: int


class _NounPhrases:
    """The noun phrases of :class:`~bt_raider.memory.extract.SymbolicExtractor` (a mixin of it)."""

    # What this mixin uses of its host, declared for the type checker (this module may not
    # import ``extract``). The annotation makes no class attribute; SymbolicExtractor.__init__
    # sets it. The method stub exists only for the type checker; SymbolicExtractor defines it.
    lex: VerbLexicon

    if TYPE_CHECKING:

        def _is_verb(self, toks: list[str], i: int) -> bool: ...

    def _noun_phrase(self, toks: list[str], i: int, end: int) -> _Phrase:
        """Tokens of the noun phrase starting at ``i`` (determiners dropped)."""
        lex = self.lex
        words: list[str] = []
        skipped: str | None = None
        j = i
        while j < end:
            t = toks[j]
            if t in lex.determiners and not words:
                skipped = t
                j += 1
                continue
            nxt = toks[j + 1] if j + 1 < end else None
            if (
                not words
                and skipped is not None
                and skipped not in lex.pronouns
                and (t in lex.prepositions or t in lex.adverbs)
                and nxt is not None
                and nxt not in lex.boundaries
                and nxt not in lex.prepositions
                and nxt not in lex.determiners
            ):
                # After an article a preposition or an adverb can only modify the noun:
                # "the near pillow", "the sharp knife", "the inside drawer".
                words.append(t)
                j += 1
                continue
            ends_phrase = (
                nxt is None
                or nxt in lex.prepositions
                or nxt in lex.determiners
                or nxt in lex.boundaries
                or nxt in lex.adverbs
                or nxt in lex.stop_words
                or (nxt is not None and len(nxt) > 5 and nxt.endswith("ly"))  # "lying flat"
                or (nxt is not None and self._preposition(toks, j + 1, end)[0] is not None)
            )
            if words and (
                t in lex.determiners  # "the pan containing the spatula": a new phrase
                # "put the knife back on the shelf", "the bottle sitting on the counter",
                # "the cd nearest the edge" -- but "the top left tomato", "washing machine"
                or (
                    (
                        t in {"back", "left", "right", "top", "closer", "nearer", "further"}
                        or t.endswith(("ing", "est", "ed"))
                    )
                    and ends_phrase
                )
            ):
                break
            if (
                t in lex.prepositions
                or t in lex.boundaries
                or t in lex.stop_words
                or t in lex.negations
                or (t in lex.adverbs and t not in {"back", "left", "right", "top"})
                or (words and len(t) > 5 and t.endswith("ly"))  # "the box vertically"
                or self._preposition(toks, j, end)[0] is not None
                or (words and self._is_verb(toks, j))
                # "bring me my aspirin it is in the drawer": a personal pronoun is no modifier.
                or (words and t in {"it", "them", "itself"})
            ):
                break
            if t in lex.pronouns and not words:
                return _Phrase([t], j + 1)
            words.append(t)
            j += 1
        if (
            len(words) == 1
            and words[0] in lex.relational
            and j < end
            and toks[j] in lex.determiners
        ):
            inner = self._noun_phrase(toks, j, end)  # "cut half the tomato"
            if inner.tokens:
                return inner
        if (
            not words
            and skipped in lex.pronouns | {"some", "each", "any", "all", "both"}
            and j + 1 < end
            and toks[j] == "of"
        ):
            inner = self._noun_phrase(toks, j + 1, end)  # "one of the apple slices"
            if inner.tokens and inner.tokens[0] not in lex.pronouns:
                return inner
        if not words and skipped in lex.pronouns | {"some"}:
            return _Phrase([skipped], j)  # "can you get me some", "bring me one"
        # "the left side of the counter", "a slice of bread", "a slice from the tomato":
        # the head is after "of" (or "from", for a part).
        part_from = (
            j < end
            and toks[j] == "from"
            and bool(words)
            and words[-1] in lex.part_nouns
            # "a center slice from the tomato", but "the apple slices from the counter",
            # "the empty roll from the holder"
            and all(w in lex.relational for w in words[:-1])
        )
        # "a box of tissues", "a bar of soap": a compound spelled with "of".
        if words and j + 1 < end and toks[j] == "of":
            nxt_word = toks[j + 1]
            for triple in (
                (singular(words[-1]), "of", nxt_word),
                (singular(words[-1]), "of", singular(nxt_word)),
            ):
                if triple in lex.compounds:
                    return _Phrase([*words, "of", nxt_word], j + 2)
        if (
            words
            and singular(words[-1]) in lex.relational
            and j + 1 < end
            and (toks[j] == "of" or part_from)
        ):
            inner = self._noun_phrase(toks, j + 1, end)
            if inner.tokens:
                return inner
        return _Phrase(words, j)

    def _preposition(self, toks: list[str], i: int, end: int) -> tuple[str | None, int]:
        """``(kind, length)`` of a preposition at ``i``: kind is ``goal``/``source``/None."""
        if i >= min(end, len(toks)):  # the sentence ends on the preposition ("take it from")
            return None, 0
        lex = self.lex
        for n in (4, 3, 2):
            key = tuple(toks[i : i + n])
            if len(key) == n and i + n <= end and key in lex.multi_preps:
                mapped = lex.multi_preps[key]
                return ("source" if mapped in lex.source_preps else "goal"), n
        t = toks[i]
        if t in lex.source_preps:
            return "source", 1
        if t in lex.goal_preps:
            return "goal", 1
        return None, 0

    def _resolve(
        self,
        tokens: list[str],
        op: str | None,
        done: list[Action],
        nouns: list[str],
        prefer_object: bool = False,
    ) -> str | None:
        """Canonical noun of ``tokens``; a pronoun becomes the noun it stands for."""
        if not tokens:
            return None
        if (
            len(tokens) == 1
            and tokens[0] in self.lex.receptacle_parts
            and op in {"open", "close"}
            and not prefer_object
        ):
            # "put the apple in the fridge and close the door": the fridge's door.
            for earlier in reversed(done):
                if earlier.operation in {"open", "close"} and earlier.object:
                    return earlier.object
            for earlier in reversed(done):
                if earlier.location:
                    return earlier.location
        if tokens[0] in self.lex.pronouns:
            if not done and not nouns:
                return None  # unresolved: the object is unknown, not a thing called "it"
            prev = done[-1] if done else None
            if not prefer_object and op in {"open", "close", "turn_on", "turn_off"}:
                # "open the microwave, put the cup in, close it": what was opened is closed;
                # "put the apple in the fridge and close it": devices are where things went.
                for earlier in reversed(done):
                    if earlier.operation in {"open", "close"} and earlier.object:
                        return earlier.object
                if prev is not None and prev.location:
                    return prev.location
            if prev is not None and prev.object and prev.object not in self.lex.pronouns:
                return prev.object
            return nouns[-1] if nouns else tokens[0]
        noun = self.lex.canonical(tokens)
        if prefer_object and noun in self.lex.relational:
            return None  # "in the center", "on the left": a place, but no thing to compare
        return noun
