"""The CDR extractor's verb lexicon: verbs with their particles and inflections, the operations
they mean, and the word lists of a command (data/lexicon.json), validated at load.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from bt_raider.errors import InputFileError, MemoryStoreError
from bt_raider.files import MAX_CONFIG_BYTES, read_json
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


def read_data_file(path: str | Path, what: str) -> Any:
    """A lexicon's JSON file, read under the input discipline of :mod:`bt_raider.files`.

    Raises:
        MemoryStoreError: the file cannot be read or is not bounded, finite JSON.
    """
    try:
        return read_json(path, what=what, max_bytes=MAX_CONFIG_BYTES)
    except InputFileError as exc:
        raise MemoryStoreError(f"cannot read {what} {str(path)!r}: {exc}") from exc


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
    #: Words that stand where a verb does but ask for no action of their own ("i need some
    #: cups", "use the knife to slice"): never read as an unknown verb.
    non_actions: frozenset[str] = field(default=frozenset())

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
                non_actions=frozenset(data.get("non_actions", [])),
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
        return cls.from_dict(read_data_file(path, "lexicon"), source=str(path))

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


# --------------------------------------------------------------------------- open vocabulary
#: A verb outside the lexicon maps to its nearest lexical unit only at this cosine similarity
#: or above: :func:`calibrate_verb_threshold` on the shipped lexicon with the bundled MiniLM
#: (``"to <verb>"``, each of the 104 verbs with an operation left out in turn, a wrong mapping
#: costing three right ones) gives 0.7816 (16 right, 2 wrong nearest verbs above it; antonyms
#: such as brighten/darken embed close together, so few mappings are safe).
DEFAULT_VERB_THRESHOLD = 0.7816
#: How a verb is written for the embedder: a bare word is often read as a noun ("hand", "face").
VERB_TEMPLATE = "to {}"


def without_verbs(lexicon: VerbLexicon, verbs: Sequence[str]) -> VerbLexicon:
    """A copy of ``lexicon`` that does not know ``verbs`` (base forms), for held-out studies."""
    drop = {v.lower() for v in verbs}
    unknown = drop - set(lexicon.verbs)
    if unknown:
        raise MemoryStoreError(
            f"cannot hold out {sorted(unknown)[0]!r}: not a verb of the lexicon {lexicon.source}"
        )
    return replace(
        lexicon,
        verbs={k: v for k, v in lexicon.verbs.items() if k not in drop},
        forms={f: b for f, b in lexicon.forms.items() if b not in drop},
        source=f"{lexicon.source} without {len(drop)} verbs",
    )


def _unit(vectors: Any, rows: int) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != rows or not np.isfinite(arr).all():
        raise MemoryStoreError(
            f"the embedder returned {getattr(arr, 'shape', '?')} (or values that are not finite) "
            f"for {rows} verbs: expected a finite ({rows}, d) array"
        )
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return arr / np.where(norms == 0, 1.0, norms)


class VerbMapper:
    """Maps a verb the lexicon does not know to its nearest lexical unit, or to nothing.

    The lexicon's base verbs are embedded once (``"to grab"``...); an unknown verb is embedded
    the same way and takes the nearest one's meaning when the cosine similarity reaches
    ``threshold``. Below it the verb stays unknown, and the rules judge its pairs "cannot
    tell" (:data:`~bt_raider.memory.actions.UNKNOWN_OPERATION`).

    Args:
        lexicon: the extractor's lexicon.
        embedder: anything with ``embed(texts) -> (n, d) array`` (the memory's embedder).
        threshold: the least cosine similarity that maps (default
            :data:`DEFAULT_VERB_THRESHOLD`).
    """

    def __init__(
        self, lexicon: VerbLexicon, embedder: Any, threshold: float = DEFAULT_VERB_THRESHOLD
    ) -> None:
        if not isinstance(threshold, (int, float)) or not -1.0 <= float(threshold) <= 1.0:
            raise MemoryStoreError(
                f"verb threshold is {threshold!r}: expected a cosine similarity from -1 to 1"
            )
        self.lexicon = lexicon
        self.embedder = embedder
        self.threshold = float(threshold)
        self.units = sorted(lexicon.verbs)
        texts = [VERB_TEMPLATE.format(u) for u in self.units]
        self._vectors = _unit(embedder.embed(texts), len(texts)) if texts else np.zeros((0, 1))
        self._cache: dict[str, tuple[str | None, float]] = {}

    def nearest(self, word: str) -> tuple[str | None, float]:
        """``(base verb, cosine similarity)`` of the nearest lexical unit (None when none)."""
        word = word.lower()
        hit = self._cache.get(word)
        if hit is None:
            if not self.units:
                hit = (None, -1.0)
            else:
                v = _unit(self.embedder.embed([VERB_TEMPLATE.format(word)]), 1)[0]
                sims = self._vectors @ v
                best = int(np.argmax(sims))
                hit = (self.units[best], float(sims[best]))
            if len(self._cache) < 10_000:
                self._cache[word] = hit
        return hit

    def map(self, word: str) -> str | None:
        """The base verb ``word`` means, or None when nothing is near enough."""
        base, sim = self.nearest(word)
        return base if base is not None and sim >= self.threshold else None


#: What a wrong mapping costs against a right one when the threshold is calibrated. A wrong
#: mapping reads a command as another ("open" as "close": antonyms embed close together), so an
#: opposite example may be kept; "cannot tell" only drops examples.
WRONG_MAPPING_COST = 3.0


def calibrate_verb_threshold(
    lexicon: VerbLexicon, embedder: Any, wrong_cost: float = WRONG_MAPPING_COST
) -> tuple[float, dict[str, Any]]:
    """The mapping threshold that best separates right from wrong nearest verbs.

    Each verb of the lexicon is left out in turn and mapped to its nearest other verb; the
    mapping is right when both mean the same operation (``op``; verbs whose meaning depends on
    a particle are left out of the count). The threshold maximises right mappings above it
    minus ``wrong_cost`` times the wrong ones (no threshold that maps at least as much wrong
    as right: then 1.0, nothing maps).

    Returns:
        ``(threshold, {"right": n, "wrong": n, "verbs": n})`` at the chosen threshold.
    """
    units = [u for u in sorted(lexicon.verbs) if lexicon.verbs[u].get("op")]
    vectors = _unit(embedder.embed([VERB_TEMPLATE.format(u) for u in units]), len(units))
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    scored = []
    for i, u in enumerate(units):
        j = int(np.argmax(sims[i]))
        right = lexicon.verbs[u]["op"] == lexicon.verbs[units[j]]["op"]
        scored.append((float(sims[i, j]), right))
    best = (0.0, 1.0, 0, 0)
    for t, _ in sorted(scored):
        right = sum(1 for s, ok in scored if s >= t and ok)
        wrong = sum(1 for s, ok in scored if s >= t and not ok)
        if right - wrong_cost * wrong > best[0]:
            best = (right - wrong_cost * wrong, t, right, wrong)
    return best[1], {"right": best[2], "wrong": best[3], "verbs": len(units)}
