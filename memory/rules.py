"""Conflict Detection Rules as data: a small declarative language over extracted actions.

A CDR (Ma et al., section 3.1) has the form ``X -> C(s1, s2)`` where ``X`` is a conjunction of
predicates comparing the two sentences' actions slot by slot, plus ``VecSim(v1, v2) >= theta``.
Here a rule is JSON::

    {"name": "phi1",
     "description": "same object, different operation, similar vectors -> conflict",
     "when": {"object": "same", "operation": "different", "negated": "same"},
     "vecsim": true}

``when`` maps a slot of :class:`~bt_raider.memory.actions.Action` (``operation``, ``object``,
``location``, ``source``, ``negated``, ``lu``, ``head``) to a comparator:

* ``same`` -- both sentences name the slot and the values are equal;
* ``different`` -- both name it and the values differ;
* ``opposite`` -- both name it and the values are listed together in ``opposites``;
* ``present`` / ``absent`` -- both name it / neither does;
* ``any`` -- no constraint (documentation only).

``vecsim`` is ``true`` (the memory's calibrated theta), a number (this rule's own threshold) or
``false`` (no similarity predicate). A slot that one sentence does not name never satisfies
``same``/``different``: an unknown object is not evidence of a conflict.

Sentences hold several actions. Before the rules are checked, the actions of the two sentences
are paired one to one, best agreement first (same object counts twice, same operation once), so
"take the plate and bring it to the kitchen" against "take the plate" compares the two *take*
actions and leaves *bring* unpaired, instead of reading a conflict into it. A rule fires when
it holds for one aligned pair.

A sentence the extractor reads two ways (``Action.alternatives``: *take the box on the table
on the couch* is taking it, or carrying it to the couch) is judged under every reading, and
conflicts when any reading does: an example that may mean the opposite is not a safe example.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from bt_raider.errors import InputFileError, MemoryStoreError
from bt_raider.files import MAX_CONFIG_BYTES, loads_json, read_text
from bt_raider.memory.actions import SLOTS, UNKNOWN_OPERATION, Action

#: Comparators a rule may apply to a slot.
COMPARATORS = ("same", "different", "opposite", "present", "absent", "any")
#: Keys a rule may have.
RULE_KEYS = ("name", "description", "when", "vecsim")
#: The rule name of a "cannot tell" judgement: a rule could fire, but on a verb not read.
CANNOT_TELL = "cannot_tell"


@dataclass(frozen=True)
class Rule:
    """One conflict detection rule.

    Attributes:
        name: unique name, reported with every conflict it finds.
        when: slot -> comparator; all must hold for one aligned pair of actions.
        vecsim: True for the memory's theta, a float for this rule's own threshold, False for
            no similarity predicate.
        description: what the rule says, in words.
    """

    name: str
    when: tuple[tuple[str, str], ...]
    vecsim: bool | float = True
    description: str = ""

    def holds(
        self,
        a: Action,
        b: Action,
        opposites: dict[str, frozenset[str]],
        *,
        unread_matches: bool = False,
    ) -> bool:
        """Whether the symbolic part of the rule holds for the pair ``(a, b)``.

        An operation the extractor could not read (:data:`UNKNOWN_OPERATION`) is no evidence:
        a comparison on it fails, or, with ``unread_matches``, passes (the rule *could* hold).
        """
        for slot, comparator in self.when:
            x, y = getattr(a, slot), getattr(b, slot)
            if comparator == "any":
                continue
            if slot == "operation" and UNKNOWN_OPERATION in (x, y):
                if unread_matches:
                    continue
                return False
            if comparator == "absent":
                if x is not None or y is not None:
                    return False
                continue
            if x is None or y is None:
                return False
            if comparator == "same" and x != y:
                return False
            if comparator == "different" and x == y:
                return False
            if comparator == "opposite" and y not in opposites.get(x, ()):
                return False
        return True

    def similar_enough(self, sim: float, theta: float) -> bool:
        """The VecSim predicate of this rule."""
        if self.vecsim is False:
            return True
        threshold = theta if self.vecsim is True else float(self.vecsim)
        return sim >= threshold

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        out["when"] = dict(self.when)
        out["vecsim"] = self.vecsim
        return out


@dataclass(frozen=True)
class Judgement:
    """The rules' verdict on one pair of sentences.

    Attributes:
        conflict: whether some rule fired.
        rule: the first rule that fired.
        pair: the aligned actions it fired on.
        similarity: the VecSim value used.
        undecided: "cannot tell": no rule fired on what was read, but one could on a verb
            that was not (rule :data:`CANNOT_TELL`); the pair is neither consistent nor a
            conflict, and the context is not kept.
    """

    conflict: bool
    rule: str | None = None
    pair: tuple[Action, Action] | None = None
    similarity: float = math.nan
    undecided: bool = False

    def explain(self) -> str:
        """The judgement in words, for logs and for a model reading its context."""
        if self.undecided and self.pair is not None:
            a, b = self.pair
            unread = a.lu if a.operation == UNKNOWN_OPERATION else b.lu
            return (
                f"cannot tell: ({a.operation}, {a.object}) vs ({b.operation}, {b.object}) "
                f"hinges on a verb the extractor cannot read ({unread!r}), similarity "
                f"{self.similarity:.2f}"
            )
        if not self.conflict or self.pair is None:
            return "consistent"
        a, b = self.pair
        return (
            f"{self.rule}: ({a.operation}, {a.object}) vs ({b.operation}, {b.object}), "
            f"similarity {self.similarity:.2f}"
        )


def align(a: Sequence[Action], b: Sequence[Action]) -> list[tuple[Action, Action]]:
    """Pair actions one to one, best agreement first (same object 2, same operation 1).

    "take the plate and bring it to the kitchen" against "take the plate" pairs the two
    *take* actions and leaves *bring* unpaired. (An order-aware variant -- shared actions as
    anchors, the others paired only within the same stretch -- was measured on the conflict
    benchmark and found slightly worse; see benchmarks/memory_conflicts.py.)
    """
    scored = []
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            score = 2 * (x.object is not None and x.object == y.object) + (
                x.operation == y.operation
            )
            scored.append((-score, i, j))
    scored.sort()
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for _, i, j in scored:
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            pairs.append((a[i], b[j]))
    return pairs


#: At most this many readings of one sentence are judged (its first actions' alternatives
#: first); a sentence is rarely ambiguous in more than one or two places.
MAX_READINGS = 8


def readings(actions: Sequence[Action]) -> list[tuple[Action, ...]]:
    """Every reading of a sentence: each action as written or as one of its alternatives.

    >>> from bt_raider.memory.actions import Action
    >>> [[x.operation for x in r] for r in readings([Action("take", "box", alternatives=("bring",))])]
    [['take'], ['bring']]
    """
    if not any(action.alternatives for action in actions):
        return [tuple(actions)]  # the common case, on every judged pair
    out: list[tuple[Action, ...]] = [()]
    for action in actions:
        out = [(*r, x) for r in out for x in action.readings()][:MAX_READINGS]
    return out


@dataclass
class RuleSet:
    """An ordered set of rules plus the table of opposite values.

    Build one with :meth:`default`, :meth:`load` (a path, a JSON string, a dict or a list of
    rule dicts) or :meth:`from_json`; add rules with :meth:`extend`.
    """

    rules: list[Rule] = field(default_factory=list)
    opposites: dict[str, frozenset[str]] = field(default_factory=dict)
    source: str = "<rules>"

    # -- building -----------------------------------------------------------

    @classmethod
    def from_json(cls, data: Any, source: str = "<rules>") -> RuleSet:
        """Rules from parsed JSON: ``{"rules": [...], "opposites": [[a, b], ...]}`` or a list."""
        if isinstance(data, list):
            data = {"rules": data}
        if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
            raise MemoryStoreError(
                f"rules {source}: expected an object with a 'rules' list (or a list of rules), "
                f"got {type(data).__name__}"
            )
        unknown = set(data) - {"rules", "opposites", "version", "_doc", "description"}
        if unknown:
            raise MemoryStoreError(
                f"rules {source}: unknown key {sorted(unknown)[0]!r}: expected rules, "
                "opposites, version, description"
            )
        opposites: dict[str, set[str]] = {}
        for group in data.get("opposites", []):
            if not isinstance(group, list) or len(group) < 2:
                raise MemoryStoreError(
                    f"rules {source}: opposites entry {group!r}: expected a list of 2+ values"
                )
            for v in group:
                opposites.setdefault(v, set()).update(w for w in group if w != v)
        out = cls([], {k: frozenset(v) for k, v in opposites.items()}, source)
        out.extend(data["rules"])
        return out

    @classmethod
    def load(cls, spec: RuleSet | str | Path | dict[str, Any] | list[Any] | None = None) -> RuleSet:
        """A rule set from any of: None (the shipped rules), a RuleSet, a path
        to a JSON file, a JSON string, or parsed JSON."""
        if spec is None:
            return cls.default()
        if isinstance(spec, RuleSet):
            return spec
        if isinstance(spec, (dict, list)):
            return cls.from_json(spec)
        text = str(spec)
        if text.lstrip().startswith(("{", "[")):
            try:
                data = loads_json(text, what="rules", source="<string>")
            except InputFileError as exc:
                detail = str(exc).split(": ", 1)[-1]
                raise MemoryStoreError(f"rules string is not valid JSON: {detail}") from None
            return cls.from_json(data, source="<string>")
        path = Path(spec)
        # Through bt_raider.files: a FIFO, /dev/zero, 5,000-deep nesting or a file that is not
        # UTF-8 is one line, never a hang, a MemoryError or a RecursionError.
        try:
            raw = read_text(path, what="rules", max_bytes=MAX_CONFIG_BYTES, fix="a smaller file")
        except InputFileError as exc:  # "PATH: cannot read rules file: it is a FIFO..."
            raise MemoryStoreError(str(exc)) from None
        try:
            data = loads_json(raw, what="rules", source=path)
        except InputFileError as exc:
            detail = str(exc).split(": ", 1)[-1]
            raise MemoryStoreError(
                f"rules file {str(path)!r} is not valid JSON: {detail}"
            ) from None
        return cls.from_json(data, source=str(path))

    @classmethod
    def default(cls) -> RuleSet:
        """The shipped rules (``data/cdr_rules.json``): the paper's phi1 and phi2, phi1 on
        unnamed objects (*turn it up* / *turn it down*), and negation."""
        entry = resources.files("bt_raider.memory") / "data" / "cdr_rules.json"
        return cls.from_json(
            json.loads(entry.read_text("utf-8")), source="bt_raider/memory/data/cdr_rules.json"
        )

    def extend(self, rules: Iterable[dict[str, Any] | Rule]) -> RuleSet:
        """Add rules (validated); returns self."""
        for n, spec in enumerate(rules):
            rule = spec if isinstance(spec, Rule) else _parse_rule(spec, n, self.source)
            if any(r.name == rule.name for r in self.rules):
                raise MemoryStoreError(f"rules {self.source}: duplicate rule name {rule.name!r}")
            self.rules.append(rule)
        return self

    def to_json(self) -> dict[str, Any]:
        groups: list[list[str]] = []
        seen: set[str] = set()
        for v, others in self.opposites.items():
            if v not in seen:
                group = sorted({v, *others})
                seen.update(group)
                groups.append(group)
        return {"version": 1, "opposites": groups, "rules": [r.to_json() for r in self.rules]}

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rules]

    # -- judging ------------------------------------------------------------

    def judge(
        self, a: Sequence[Action], b: Sequence[Action], similarity: float, theta: float
    ) -> Judgement:
        """Apply the rules to two sentences' actions at vector similarity ``similarity``.

        A sentence with ambiguous actions (``Action.alternatives``) is judged under each of
        its readings, and the pair conflicts when some reading of ``a`` conflicts with some
        reading of ``b``: an example that may mean the opposite is not a safe example.
        """
        if not a or not b:
            # Nothing to compare. Not "cannot tell": the recovery memory stores notes, not
            # commands ("query: turnon(LightSwitch), issue: ..."), and relies on similarity.
            return Judgement(False, similarity=similarity)
        aligned = [align(x, y) for x in readings(a) for y in readings(b)]
        for rule in self.rules:
            if not rule.similar_enough(similarity, theta):
                continue
            for pairs in aligned:
                for x, y in pairs:
                    if rule.holds(x, y, self.opposites):
                        return Judgement(True, rule.name, (x, y), similarity)
        if any(x.operation == UNKNOWN_OPERATION for x in (*a, *b)):
            # Fail closed: a pair a rule would judge on an unread verb is not consistent.
            for rule in self.rules:
                if not rule.similar_enough(similarity, theta):
                    continue
                for pairs in aligned:
                    for x, y in pairs:
                        if UNKNOWN_OPERATION in (x.operation, y.operation) and rule.holds(
                            x, y, self.opposites, unread_matches=True
                        ):
                            return Judgement(False, CANNOT_TELL, (x, y), similarity, undecided=True)
        return Judgement(False, similarity=similarity)

    def agree(self, a: Sequence[Action], b: Sequence[Action]) -> bool:
        """Positive evidence that two sentences are consistent: they share an action (same
        operation, object and negation) and no rule fires between them at any similarity."""
        if not a or not b:
            return False
        shared = any(
            x.object is not None
            and x.operation != UNKNOWN_OPERATION
            and x.key == y.key
            and x.negated == y.negated
            for x, y in align(a, b)
        )
        return shared and not self.judge(a, b, 1.0, theta=-math.inf).conflict

    def calibration_score(
        self, a: Sequence[Action], b: Sequence[Action], similarity: float
    ) -> float:
        """The pair's score on the theta axis of the ROC curve.

        ``+inf`` when a rule without the memory's theta fires anyway, ``similarity`` when a
        theta rule's symbolic part holds (it fires iff ``similarity >= theta``), ``-inf`` when
        no rule can fire at any theta.
        """
        if self.judge(a, b, similarity, theta=math.inf).conflict:
            return math.inf
        if self.judge(a, b, similarity, theta=-math.inf).conflict:
            return similarity
        return -math.inf


def _parse_rule(spec: Any, n: int, source: str) -> Rule:
    where = f"rules {source}: rule {n + 1}"
    if not isinstance(spec, dict):
        raise MemoryStoreError(f"{where}: expected an object, got {spec!r}")
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise MemoryStoreError(f"{where}: missing 'name' (a non-empty string)")
    where = f"rules {source}: rule {name!r}"
    unknown = set(spec) - set(RULE_KEYS)
    if unknown:
        raise MemoryStoreError(
            f"{where}: unknown field {sorted(unknown)[0]!r}: expected {', '.join(RULE_KEYS)}"
        )
    when = spec.get("when")
    if not isinstance(when, dict) or not when:
        raise MemoryStoreError(f"{where}: 'when' must map slots to comparators, got {when!r}")
    for slot, comparator in when.items():
        if slot not in SLOTS:
            raise MemoryStoreError(
                f"{where}: unknown slot {slot!r}: expected one of {', '.join(SLOTS)}"
            )
        if comparator not in COMPARATORS:
            raise MemoryStoreError(
                f"{where}: slot {slot!r} has unknown comparator {comparator!r}: expected one "
                f"of {', '.join(COMPARATORS)}"
            )
    vecsim = spec.get("vecsim", True)
    if isinstance(vecsim, bool):
        pass
    elif isinstance(vecsim, (int, float)) and -1.0 <= float(vecsim) <= 1.0:
        vecsim = float(vecsim)
    else:
        raise MemoryStoreError(
            f"{where}: 'vecsim' is {vecsim!r}: expected true (the memory's theta), false, or a "
            "cosine threshold between -1 and 1"
        )
    return Rule(
        name=name,
        when=tuple(when.items()),
        vecsim=vecsim,
        description=str(spec.get("description", "")),
    )
