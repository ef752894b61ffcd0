"""The action record of the CDR predicates: :class:`Action`, :class:`Extractor` and their JSON.

A natural-language sentence ``s`` is a set of actions ``s[phi_i] = (s[o_i], s[p_i])`` (Ma et
al., section 3). An :class:`Action` is one of them, with the slots (:data:`SLOTS`) the conflict
rules compare. Anything with ``extract(sentence) -> list[Action]`` is an :class:`Extractor`:
the symbolic one (:class:`~bt_raider.memory.extract.SymbolicExtractor`) or the LLM one
(:class:`~bt_raider.memory.llm.LLMExtractor`). The store keeps a record's actions as JSON
(:func:`actions_to_json`, :func:`actions_from_json`).

Example:
    >>> from bt_raider.memory.actions import Action
    >>> Action("turn_off", "lamp").key
    ('turn_off', 'lamp')
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol, runtime_checkable

from bt_raider.errors import MemoryStoreError

#: The slots an :class:`Action` carries; rules may compare any of them.
SLOTS = (
    "operation",
    "object",
    "location",
    "source",
    "negated",
    "lu",
    "head",
    "place",
    "attribute",
    "degree",
)
#: The operation of a verb the extractor cannot read (outside the lexicon, and no lexical unit
#: near enough): the rules judge a pair that hinges on it "cannot tell", never consistent.
UNKNOWN_OPERATION = "?"


@dataclass(frozen=True)
class Action:
    """One action of a sentence.

    Attributes:
        operation: canonical operation (``turn_on``, ``take``, ``put``, ``go`` ...).
        object: canonical object: singular head noun after aliases (``"lamp"`` for *the hall
            lights*); None when the sentence names none.
        location: destination or placement (``"table"`` in *put the cup on the table*).
        source: where the object comes from (*from the shelf*).
        negated: the sentence says not to do it (*don't open the door*).
        lu: the lexical unit as written, lemmatised (``"pick up"``, ``"switch"``).
        head: the object's head noun as written (singular, before aliases and pronoun
            resolution); what HuRIC annotates as the Theme head.
        alternatives: other operations the words can equally be read as (*take the box on
            the table on the couch* may mean carrying it to the couch: ``("bring",)``). The
            rules judge every reading, so an ambiguous sentence is kept only when no reading
            conflicts.
        place: where the action happens, as a place class (``"kitchen"`` in *turn off the
            kitchen light* and *turn off the light in the kitchen*): a slot, never the object.
        attribute: the quality a graded operation changes (``"brightness"`` in *dim the
            lights*, ``"volume"`` in *make it louder*).
        degree: how much, as read (``"little"`` for *a bit*, ``"max"``, ``"to 40 percent"``).
    """

    operation: str
    object: str | None = None
    location: str | None = None
    source: str | None = None
    negated: bool = False
    lu: str | None = None
    head: str | None = None
    alternatives: tuple[str, ...] = ()
    place: str | None = None
    attribute: str | None = None
    degree: str | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        """``(operation, object)``, the tuple of the paper."""
        return (self.operation, self.object)

    def slot(self, name: str) -> Any:
        return getattr(self, name)

    def readings(self) -> list[Action]:
        """This action as written, then once per alternative operation."""
        return [self] + [replace(self, operation=op, alternatives=()) for op in self.alternatives]

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v not in (None, False, ())}
        if self.alternatives:
            out["alternatives"] = list(self.alternatives)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Action:
        unknown = set(data) - {*SLOTS, "alternatives"}
        alternatives = data.get("alternatives", [])
        if (
            unknown
            or "operation" not in data
            or not isinstance(alternatives, list)
            or not all(isinstance(a, str) for a in alternatives)
        ):
            raise MemoryStoreError(
                f"bad action record {data!r}: expected 'operation' and only the slots "
                f"{', '.join(SLOTS)}, plus 'alternatives' (a list of operations)"
            )
        return cls(**{**data, "alternatives": tuple(alternatives)})


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns a sentence into its actions."""

    name: str

    def extract(self, sentence: str) -> list[Action]: ...


def actions_to_json(actions: Iterable[Action]) -> str:
    """``actions`` as compact JSON, the form the store keeps (:func:`actions_from_json` reads it)."""
    return json.dumps([a.to_json() for a in actions], separators=(",", ":"))


def actions_from_json(text: str) -> list[Action]:
    """The actions :func:`actions_to_json` wrote (an empty text: none)."""
    return [Action.from_json(d) for d in json.loads(text or "[]")]
