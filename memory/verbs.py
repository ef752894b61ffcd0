"""The CDR extractor's verb lexicon: verbs with their particles and inflections, the operations
they mean, and the word lists of a command (data/lexicon.json), validated at load.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from bt_raider.errors import MemoryStoreError
from bt_raider.words import singular


def _inflections(base: str) -> set[str]:
    """Regular inflections of a verb: take -> takes, taking, taked (harmless), ..."""
    forms = {base, base + "s", base + "es"}
    stem = base[:-1] if base.endswith("e") else base
    forms |= {stem + "ing", stem + "ed", base + "d"}
    if base.endswith("y") and base[-2] not in "aeiou":
        forms |= {base[:-1] + "ies", base[:-1] + "ied"}
    if re.fullmatch(r".*[^aeiou][aeiou][bdgmnprt]", base):  # drop -> dropped, grab -> grabbing
        forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return forms


@dataclass
class VerbLexicon:
    """The extractor's vocabulary, loaded from JSON (see ``data/lexicon.json``)."""

    verbs: dict[str, dict[str, Any]]
    phrases: dict[tuple[str, ...], str]
    forms: dict[str, str]  # inflected form -> base verb
    clause_starters: frozenset[str]
    boundaries: frozenset[str]
    negations: frozenset[str]
    determiners: frozenset[str]
    pronouns: frozenset[str]
    beneficiaries: frozenset[str]
    goal_preps: frozenset[str]
    source_preps: frozenset[str]
    multi_preps: dict[tuple[str, ...], str]
    bringing_preps: frozenset[str]
    adverbs: frozenset[str]
    stop_words: frozenset[str]
    relational: frozenset[str]
    non_objects: frozenset[str]
    part_nouns: frozenset[str]
    receptacle_parts: frozenset[str]
    modifiers: frozenset[str]
    determiner_typos: frozenset[str]
    aliases: dict[str, str]
    compounds: dict[tuple[str, ...], str]
    source: str = field(default="")

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> VerbLexicon:
        try:
            verbs = {k.lower(): dict(v) for k, v in data["verbs"].items()}
            for base, entry in verbs.items():
                _check_verb_entry(base, entry, source)
            forms: dict[str, str] = {}
            for base, entry in verbs.items():
                for form in _inflections(base) | set(entry.get("forms", [])):
                    forms.setdefault(form, base)
            for base in verbs:  # a base form always names itself
                forms[base] = base
            preps = data["prepositions"]
            return cls(
                verbs=verbs,
                phrases={tuple(k.split()): v for k, v in data.get("phrases", {}).items()},
                forms=forms,
                clause_starters=frozenset(data.get("clause_starters", [])),
                boundaries=frozenset(data["boundaries"]),
                negations=frozenset(data.get("negations", [])),
                determiners=frozenset(data["determiners"]),
                pronouns=frozenset(data["pronouns"]),
                beneficiaries=frozenset(data.get("beneficiaries", [])),
                goal_preps=frozenset(preps["goal"]),
                source_preps=frozenset(preps["source"]),
                multi_preps={tuple(k.split()): v for k, v in preps.get("multi", {}).items()},
                bringing_preps=frozenset(preps.get("goal_for_bringing", ["to"])),
                adverbs=frozenset(data.get("adverbs", [])),
                stop_words=frozenset(data.get("stop_words", [])),
                relational=frozenset(data.get("relational_nouns", [])),
                non_objects=frozenset(data.get("non_objects", [])),
                part_nouns=frozenset(data.get("part_nouns", [])),
                receptacle_parts=frozenset(data.get("receptacle_parts", [])),
                modifiers=frozenset(data.get("modifiers", [])),
                determiner_typos=frozenset(data.get("determiner_typos", [])),
                aliases=dict(data.get("aliases", {})),
                compounds={tuple(k.split()): v for k, v in data.get("compounds", {}).items()},
                source=source,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise MemoryStoreError(
                f"malformed lexicon {source}: {exc!r}; expected the keys verbs, boundaries, "
                "determiners, pronouns, prepositions (see bt_raider/memory/data/lexicon.json)"
            ) from exc

    @classmethod
    def load(cls, path: str | Path | None = None) -> VerbLexicon:
        """The lexicon at ``path``, or the shipped one."""
        if path is None:
            return _default_lexicon()
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MemoryStoreError(f"cannot read lexicon {str(path)!r}: {exc}") from exc
        return cls.from_dict(data, source=str(path))

    @property
    def prepositions(self) -> frozenset[str]:
        return self.goal_preps | self.source_preps

    def canonical(self, tokens: Sequence[str]) -> str | None:
        """Canonical object of a noun phrase's tokens: compounds (``alarm clock``), parts
        (``the apple slice`` -> apple), aliases (``tv`` -> television), else the head noun."""
        tokens = [t for t in tokens if t not in self.determiners]
        words = [singular(t) for t in tokens]
        if not words:
            return None
        for n in (3, 2):
            if len(words) >= n:
                for key in (tuple(words[-n:]), tuple(tokens[-n:])):
                    if key in self.compounds:
                        return self.compounds[key]
        if (
            len(words) > 1
            and tokens[-1] in self.part_nouns
            and words[-2] not in self.modifiers
            and words[-2] not in self.relational
        ):
            return self.canonical(tokens[:-1])  # "the apple slice", "the fridge door"
        key = (words[-1],)
        if key in self.compounds:
            return self.compounds[key]
        return self.aliases.get(words[-1], self.aliases.get(tokens[-1], words[-1]))


def _check_verb_entry(base: str, entry: dict[str, Any], source: str) -> None:
    """Refuse verb-entry values that would only fail later, mid-extraction."""
    for key in ("particles", "end_particles", "particle_alternatives"):
        value = entry.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise MemoryStoreError(
                f"lexicon {source}: verb {base!r} has {key} {value!r}: expected an object "
                "mapping particles to operations"
            )
    for key in ("op", "with_goal", "with_beneficiary", "with_object", "stacked_goal"):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            raise MemoryStoreError(
                f"lexicon {source}: verb {base!r} has {key} {value!r}: expected an operation "
                "name (a string)"
            )


@functools.lru_cache(maxsize=1)
def _default_lexicon() -> VerbLexicon:
    text = (resources.files("bt_raider.memory") / "data" / "lexicon.json").read_text("utf-8")
    return VerbLexicon.from_dict(json.loads(text), source="bt_raider/memory/data/lexicon.json")
