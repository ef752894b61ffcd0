"""The category lexicon: query nouns and adjectives -> AI2-THOR object types and state flags.

Grounding "pick a fruit", "the electronic device", "the clean mug" or "the knife" needs world
knowledge that is *data*, not code: ``perception/data/categories.json`` holds

- ``categories`` {category: [objectTypes]} (fruit, vegetable, utensil, electronics, ...),
- ``category_aliases`` {noun: category} ("electronic device" -> electronics),
- ``synonyms`` {noun phrase: [objectTypes]} ("refrigerator" -> Fridge; "knife" -> Knife and
  ButterKnife, since both slice in AI2-THOR),
- ``states`` {adjective: {flag: bool}} ("clean" -> isDirty false),
- ``not_types`` [words]: words that name no type of their own, never read as a plural or a
  head noun ("glasses", the eyewear, is not two of "glass"); a synonym may still give one,

and a user merges a file of their own over it with :meth:`CategoryLexicon.load`. Custom object types
(the medicine demo's ``Medicine`` and ``PillBottle``) are just more strings.

How :meth:`CategoryLexicon.types_for` reads a noun, first hit wins:

1. an exact type name ("CoffeeMachine", "Knife") means that type only;
2. otherwise, lower-cased and without articles, and then in singular form ("apples",
   "knives"): a synonym, then a category, then a type spelled out ("coffee machine"), then a
   head noun ("shaker" -> SaltShaker and PepperShaker).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from bt_raider import files
from bt_raider.errors import BtRaiderError, InputFileError
from bt_raider.perception.scene import STATES
from bt_raider.words import plural, singulars

DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "categories.json"
#: State flags an adjective may constrain (the AI2-THOR state flags of the scene format).
STATE_FLAGS = frozenset(STATES)
SECTIONS = ("object_types", "categories", "category_aliases", "synonyms", "states", "not_types")
_DETERMINERS = frozenset(
    "the a an some any all my your his her their our this that these those one".split()
)


#: Nouns of "A of B" that measure or divide B, so the phrase names B ("a head of lettuce").
MEASURE_WORDS = frozenset(
    "head loaf set bunch piece pieces slice slices pair pack stack pile couple lot bit chunk "
    "wedge half quarter sheet stick leaf roll top bottom side edge back front middle center "
    "centre corner end part surface rest".split()
)


#: Parts of an object that name it when they follow its name ("the fridge door").
PART_WORDS = frozenset("door doors handle handles lid tank knob knobs".split())
#: Readings a :meth:`CategoryLexicon.phrase_memo` keeps, and memos (sets of types) a lexicon
#: keeps, at most: a scene's readings repeat while it is read, not across scenes.
MEMO_SIZE, MEMOS = 4096, 8


class LexiconError(BtRaiderError, ValueError):
    """A lexicon file or dict is malformed (the message names the source and the entry)."""


class LexiconFileError(InputFileError, LexiconError):
    """A lexicon file cannot be read (:mod:`bt_raider.files`: not a regular file, too big, not
    UTF-8 JSON within bounds): an :class:`~bt_raider.errors.InputFileError` and a
    :class:`LexiconError`."""


class _Blanks(dict[int, str | None]):
    """The ``str.translate`` table of :func:`clean_phrase`: a-z and 0-9 kept, ``'`` dropped,
    any other character a space (not stored: a stream of distinct characters cannot grow it)."""

    def __missing__(self, char: int) -> str:
        return " "


_KEPT = "abcdefghijklmnopqrstuvwxyz0123456789"
_CLEAN = _Blanks({c: chr(c) if chr(c) in _KEPT else " " for c in range(128)} | {ord("'"): None})


def clean_phrase(text: str) -> str:
    """Lower case, single spaces, no punctuation or leading articles: ``"The Apples!"`` -> ``"apples"``."""
    # One C pass (no regex to compile at start-up): the words are the runs of a-z and 0-9.
    words = str(text).lower().translate(_CLEAN).split()
    while len(words) > 1 and words[0] in _DETERMINERS:
        words = words[1:]
    return " ".join(words)


def split_type(object_type: str) -> str:
    """An objectType spelled as words: ``"CoffeeMachine"`` -> ``"coffee machine"``, ``"TVStand"`` -> ``"tv stand"``."""
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", object_type)
    return " ".join(p.lower() for p in parts) or object_type.lower()


def _merge_entry(old: Any, new: Any, where: str) -> Any:
    """A list replaces an entry; ``{"add": [...], "remove": [...]}`` edits it."""
    if isinstance(new, Mapping) and set(new) <= {"add", "remove"} and new:
        base = list(old or [])
        for item in new.get("add", []):
            if item not in base:
                base.append(item)
        return [t for t in base if t not in set(new.get("remove", []))]
    if isinstance(new, Mapping) and where.startswith("categories."):
        raise LexiconError(f"{where}: expected a list of objectTypes or {{add, remove}}")
    return new


class CategoryLexicon:
    """Nouns, categories and state adjectives, validated.

    Args:
        data: a dict with the sections ``object_types``, ``categories``, ``category_aliases``,
            ``synonyms``, ``states`` (all optional; ``_``-prefixed keys are comments).
        source: where it came from, for error messages.

    Raises:
        LexiconError: for an unknown section or a malformed entry; the message names the
            source, the section and the entry.
    """

    def __init__(self, data: Mapping[str, Any], source: str = "<dict>") -> None:
        self._build(data, source, owned=False)

    @classmethod
    def _of_own_data(cls, data: dict[str, Any], source: str) -> CategoryLexicon:
        """A lexicon of ``data`` that nobody else holds (just read from a file): kept, not copied."""
        lex = cls.__new__(cls)
        lex._build(data, source, owned=True)
        return lex

    def _build(self, data: Mapping[str, Any], source: str, *, owned: bool) -> None:
        self.source = source
        if not isinstance(data, Mapping):
            raise LexiconError(
                f"{source}: a lexicon must be a JSON object, got {type(data).__name__}"
            )
        for key in data:
            if not str(key).startswith("_") and key not in SECTIONS:
                raise LexiconError(
                    f"{source}: unknown section {key!r}: expected one of {', '.join(SECTIONS)}"
                )
        self._object_types = tuple(self._strings(data.get("object_types", []), "object_types"))
        self._not_types = frozenset(
            clean_phrase(w) for w in self._strings(data.get("not_types", []), "not_types")
        )
        self._categories: dict[str, tuple[str, ...]] = {}
        for name, types in self._section(data, "categories").items():
            self._categories[clean_phrase(name)] = tuple(self._strings(types, f"categories.{name}"))
        self._aliases: dict[str, str] = {}
        for alias, target in self._section(data, "category_aliases").items():
            cat = clean_phrase(str(target))
            if not isinstance(target, str) or cat not in self._categories:
                raise LexiconError(
                    f"{source}: category_aliases.{alias}: {target!r} is not a category; "
                    f"categories are: {', '.join(sorted(self._categories))}"
                )
            self._aliases[clean_phrase(alias)] = cat
        self._synonyms: dict[str, tuple[str, ...]] = {}
        for noun, types in self._section(data, "synonyms").items():
            if isinstance(types, str):
                types = [types]
            self._synonyms[clean_phrase(noun)] = tuple(self._strings(types, f"synonyms.{noun}"))
        self._states: dict[str, dict[str, bool]] = {}
        for adj, flags in self._section(data, "states").items():
            where = f"{source}: states.{adj}"
            if not isinstance(flags, Mapping) or not flags:
                raise LexiconError(f"{where}: expected {{flag: true|false}}, got {flags!r}")
            for flag, val in flags.items():
                if flag not in STATE_FLAGS:
                    raise LexiconError(
                        f"{where}: unknown state flag {flag!r}: expected one of "
                        + ", ".join(sorted(STATE_FLAGS))
                    )
                if not isinstance(val, bool):
                    raise LexiconError(f"{where}.{flag}: must be true or false, got {val!r}")
            self._states[clean_phrase(adj)] = dict(flags)
        # A caller's dict may change later: keep a copy (to_dict copies again on the way out).
        keep: Callable[[Any], Any] = (lambda v: v) if owned else copy.deepcopy
        self._data = {k: keep(data[k]) for k in SECTIONS if k in data}
        known = set(self._object_types)
        for group in (*self._categories.values(), *self._synonyms.values()):
            known.update(group)
        self._known = frozenset(known)
        self._squashed = {t.lower(): t for t in sorted(known)}
        self._type_words: dict[str, list[str]] | None = None
        self._type_heads: dict[tuple[str, ...], frozenset[str]] | None = None
        self._memos: dict[frozenset[str], dict[str, Any]] = {}

    @property
    def _words(self) -> dict[str, list[str]]:
        """Each known type spelled as words (``"coffee machine"``), for head nouns: made when a
        noun first misses the synonyms and categories, not at start-up."""
        words = self._type_words
        if words is None:
            words = {t: split_type(t).split() for t in sorted(self._known)}
            self._type_words = words
        return words

    @property
    def _heads(self) -> dict[tuple[str, ...], frozenset[str]]:
        """The types each head phrase heads: a type's last words, shorter than its whole name
        (``("machine",)`` -> CoffeeMachine...), so a head noun is one look-up, not a scan."""
        heads = self._type_heads
        if heads is None:
            found: dict[tuple[str, ...], set[str]] = {}
            for t, tw in self._words.items():
                for n in range(1, len(tw)):
                    found.setdefault(tuple(tw[-n:]), set()).add(t)
            heads = {k: frozenset(v) for k, v in found.items()}
            self._type_heads = heads
        return heads

    def phrase_memo(self, among: Iterable[str]) -> dict[str, Any]:
        """A memo, phrase -> its reading among the object types ``among``, for a reader whose
        reading depends on nothing but the phrase, this lexicon and those types (the
        grounder's: a long reply repeats its sub-phrases and is read again at each question).
        Bounded; threads may share it (at worst a reading is made twice)."""
        key = frozenset(among)
        memo = self._memos.get(key)
        if memo is None or len(memo) > MEMO_SIZE:
            if len(self._memos) >= MEMOS:
                self._memos.clear()
            memo = self._memos[key] = {}
        return memo

    # ------------------------------------------------------------------ construction
    def _section(self, data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        section = data.get(key, {})
        if not isinstance(section, Mapping):
            raise LexiconError(f"{self.source}: {key}: must be an object, got {section!r}")
        return section

    def _strings(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise LexiconError(
                f"{self.source}: {where}: must be a list of objectType strings, got {value!r}"
            )
        return list(value)

    @classmethod
    def default(cls) -> CategoryLexicon:
        """The bundled lexicon (``perception/data/categories.json``), loaded once."""
        return _default()

    @classmethod
    def load(
        cls,
        path_or_dict: str | Path | Mapping[str, Any],
        base: CategoryLexicon | None | str = "default",
    ) -> CategoryLexicon:
        """A user's lexicon merged over ``base`` (the bundled one unless told otherwise).

        In each section a user's entry replaces the base entry of the same name; an entry
        ``{"add": [...], "remove": [...]}`` edits the base list instead; new entries are added.

        Args:
            path_or_dict: a JSON file or a dict in the format of ``categories.json``.
            base: the lexicon to merge over; ``None`` for none.

        Raises:
            LexiconError: for an unreadable file, bad JSON or a malformed entry.
        """
        # A file's data is ours alone (kept as read); a caller's dict may change later (copied).
        from_file = not isinstance(path_or_dict, Mapping)
        own = from_file and cls.__init__ is CategoryLexicon.__init__  # a subclass's __init__ runs
        make = cls._of_own_data if own else cls
        if isinstance(path_or_dict, Mapping):
            data, source = dict(path_or_dict), "<dict>"
        else:
            p = Path(path_or_dict)
            source = str(p)
            try:
                data = files.read_json(p, what="lexicon", max_bytes=files.MAX_CONFIG_BYTES)
            except InputFileError as exc:
                error = LexiconFileError(str(exc))
                error.path, error.what = exc.path, exc.what
                raise error from None
            if not isinstance(data, dict):
                raise LexiconError(f"{p}: a lexicon must be a JSON object")
        base_lex = cls.default() if base == "default" else base
        if base_lex is None:
            return make(data, source)
        if not isinstance(base_lex, CategoryLexicon):
            raise LexiconError(f"base must be a CategoryLexicon, None or 'default', got {base!r}")
        merged = base_lex.to_dict()
        for key, value in data.items():
            if str(key).startswith("_"):
                continue
            if key not in SECTIONS:
                raise LexiconError(
                    f"{source}: unknown section {key!r}: expected one of {', '.join(SECTIONS)}"
                )
            if key in ("object_types", "not_types"):
                extra = value if isinstance(value, list) else [value]
                merged[key] = list(dict.fromkeys([*merged.get(key, []), *extra]))
                continue
            if not isinstance(value, Mapping):
                raise LexiconError(f"{source}: {key}: must be an object, got {value!r}")
            section = dict(merged.get(key, {}))
            index = {clean_phrase(k): k for k in section}
            for entry, new in value.items():
                old_key = index.get(clean_phrase(entry), entry)
                section[old_key] = _merge_entry(section.get(old_key), new, f"{key}.{entry}")
            merged[key] = section
        return make(merged, source)  # the base's part of it is a copy (to_dict)

    def to_dict(self) -> dict[str, Any]:
        """The lexicon's data (a copy), in the file format."""
        return copy.deepcopy(self._data)

    # ------------------------------------------------------------------ queries
    @property
    def object_types(self) -> frozenset[str]:
        """Every objectType the lexicon mentions."""
        return self._known

    @property
    def categories(self) -> dict[str, tuple[str, ...]]:
        return dict(self._categories)

    def types_for(self, noun: str) -> set[str]:
        """The objectTypes a noun can mean (empty when unknown).

        Args:
            noun: "apple", "Apples", "the coffee machine", "CoffeeMachine", "fruit",
                "electronic device", "knives", "refrigerator"...
        """
        if not isinstance(noun, str):
            return set()
        raw = noun.strip()
        if raw in self._known:  # an exact type name means just that type
            return {raw}
        key = clean_phrase(raw)
        if not key:
            return set()
        if key in self._not_types:  # "glasses": the eyewear, unless a synonym says a type
            return set(self._synonyms.get(key, ()))
        for form in (key, *singulars(key)):
            hit = self._lookup(form)
            if hit:
                return hit
        return self._of_phrase(key) or self._part_phrase(key)

    def names_a_thing(self, words: set[str]) -> bool:
        """Whether a word of ``words`` is a noun of a thing ("ana_door" holds a door): such an
        argument is grounded among objects only, never to a person named in it."""
        return any(self.types_for(w) for w in words)

    def own_word(self, noun: str) -> frozenset[str] | None:
        """What the lexicon says ``noun`` itself means, before any plural is read: its
        synonym's types, an empty set for a word that is no type (``not_types``), else None."""
        key = clean_phrase(noun)
        if key in self._synonyms:
            return frozenset(self._synonyms[key])
        if key in self._not_types:
            return frozenset()
        return None

    def _part_phrase(self, key: str) -> set[str]:
        """ "X door", "X handle", "X lid" name X ("the microwave door", "the toilet tank")
        when X is an object the lexicon knows and the whole phrase is no type of its own."""
        words = key.split()
        if len(words) > 1 and words[-1] in PART_WORDS:
            return self.types_for(" ".join(words[:-1]))
        return set()

    def _of_phrase(self, key: str) -> set[str]:
        """ "A of B" read as English does: a compound "B A" ("box of tissues" -> tissue box,
        "bar of soap" -> soap bar), else B when A is a measure or a part ("head of lettuce",
        "set of keys", "the top of the counter"), else the container A ("glass of water")."""
        # The first " of " splits it (a clean key: single spaces, none at either end).
        outer, of, rest = key.partition(" of ")
        if not (of and outer and rest):
            return set()
        inner = clean_phrase(rest)
        compound = self.types_for(f"{inner} {outer}")
        if compound:
            return compound
        if outer.split()[-1] in MEASURE_WORDS:
            return self.types_for(inner)
        return self.types_for(outer) or self.types_for(inner)

    def _lookup(self, form: str) -> set[str]:
        if form in self._synonyms:
            return set(self._synonyms[form])
        cat = self._category_name(form)
        if cat is not None:
            return set(self._categories[cat])
        # Head noun: "shaker" -> SaltShaker, PepperShaker; "towel roll" -> PaperTowelRoll. A
        # type's own name also names the types it heads: a hand towel is a towel too.
        headed = set(self._heads.get(tuple(form.split()), ()))
        squashed = form.replace(" ", "")
        if squashed in self._squashed:
            return {self._squashed[squashed], *headed}
        return headed

    def _category_name(self, form: str) -> str | None:
        if form in self._categories:
            return form
        return self._aliases.get(form)

    def is_category(self, noun: str) -> bool:
        """Whether a noun names a category ("fruit", "electronic devices"), not an object type."""
        if not isinstance(noun, str) or noun.strip() in self._known:
            return False
        key = clean_phrase(noun)
        return any(self._category_name(f) is not None for f in (key, *singulars(key)) if f)

    def category(self, noun: str) -> str | None:
        """The canonical category a noun names ("electronic device" -> "electronics"), or None."""
        if not self.is_category(noun):
            return None
        key = clean_phrase(noun)
        for f in (key, *singulars(key)):
            cat = self._category_name(f)
            if cat is not None:
                return cat
        return None  # pragma: no cover - is_category said yes

    def categories_of(self, object_type: str) -> set[str]:
        """The categories an objectType belongs to (case-insensitive): Apple -> {fruit, food}."""
        low = str(object_type).lower()
        return {c for c, types in self._categories.items() if any(t.lower() == low for t in types)}

    def state_filter(self, adjective: str) -> dict[str, bool] | None:
        """The state flags an adjective requires ("clean" -> {"isDirty": False}), or None.

        ``"not <adjective>"`` inverts a one-flag state ("not sliced" -> {"isSliced": False}).
        """
        if not isinstance(adjective, str):
            return None
        key = " ".join(adjective.lower().replace("_", " ").replace("-", " ").split())
        if key in self._states:
            return dict(self._states[key])
        for neg in ("not ", "non ", "un"):
            if key.startswith(neg):
                inner = self._states.get(key[len(neg) :].strip())
                if inner is not None and len(inner) == 1:
                    return {k: not v for k, v in inner.items()}
        return None

    def adjectives(self) -> list[str]:
        """Every state adjective, longest first."""
        return sorted(self._states, key=lambda a: (-len(a), a))

    def object_nouns(self) -> list[str]:
        """Every noun or phrase the lexicon knows, with plurals, longest first (for parsers)."""
        return list(_nouns(self))

    def __repr__(self) -> str:
        return (
            f"CategoryLexicon({self.source!r}: {len(self._categories)} categories, "
            f"{len(self._synonyms)} synonyms, {len(self._states)} states)"
        )


@lru_cache(maxsize=1)
def _default() -> CategoryLexicon:
    return CategoryLexicon.load(DEFAULT_PATH, base=None)


@lru_cache(maxsize=32)
def _nouns(lex: CategoryLexicon) -> tuple[str, ...]:
    nouns: set[str] = set(lex._synonyms) | set(lex._categories) | set(lex._aliases)
    nouns.update(split_type(t) for t in lex._known)
    nouns.update(
        plural(n)
        for n in list(nouns)
        if not re.search(r"\b(?:of|to|on|for)\b", n) and not re.search(r"[^s]s$", n)
    )
    return tuple(sorted(nouns, key=lambda n: (-len(n), n)))
