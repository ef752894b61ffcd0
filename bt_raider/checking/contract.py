"""The query contract: what a check is asked (:class:`Query`) and who answers it (:class:`Checker`).

This module imports no reasoner, so a reasoner (ours or a third party's) imports it without a
cycle. Building a checker by name lives in :mod:`bt_raider.checking.registry`. Any object with a
matching ``check`` method is a :class:`Checker`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.errors import QueryError

if TYPE_CHECKING:
    from bt_raider.checking.verdict import Verdict
    from bt_raider.perception.scene import Scene


#: Longest query, in characters, any checker is given. A command names one action: the
#: longest benchmark query has under 100 characters, a PDDL instance with its arguments a few
#: hundred. Refusing longer text up front bounds the cost of parsing and grounding.
MAX_QUERY_CHARS = 2000


def check_query_text(text: object) -> str:
    """``text`` when it is a usable query: a non-empty string of at most :data:`MAX_QUERY_CHARS`.

    Every way into a check goes through here (:class:`Query` and
    :func:`~bt_raider.checking.parse.parse_query`), so a long query is refused in microseconds,
    before any backend spends time on it.

    Raises:
        QueryError: naming what was wrong (the length and the cap for a long query).
    """
    if not isinstance(text, str) or not text.strip():
        shown = repr(text) if len(repr(text)) <= 60 else repr(text)[:57] + "..."
        raise QueryError(f"a query must be a non-empty string, got {shown}")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the query is {len(text):,} characters long, over the limit of "
            f"{MAX_QUERY_CHARS:,}: a query names one action ({text[:40]!r}...)"
        )
    return text


class Query:
    """One action to check (immutable; :meth:`replace` makes a changed copy).

    Attributes:
        text: the query as given: ``pick(Apple)``, ``(pick tiago medicine counter)`` or
            natural language ("Can you please open the microwave?").
        preconditions: the action's PDDL preconditions when it comes from a plan, as
            human-readable strings (``"(at tiago counter)"``), with those already known to be
            unsatisfied in the planner's state listed in ``unsatisfied``.
        unsatisfied: preconditions unified-planning's simulator found false in the current state.
        bindings: for a PDDL action, parameter name -> scene name the user mapped it to. Not
            part of equality or the hash: two queries of one text and preconditions are equal.

    A plain class, not a frozen dataclass: ``bt-raider check`` loads it at every start (see
    :mod:`bt_raider.checking.verdict`).

    Raises:
        QueryError: an empty query, or one over :data:`MAX_QUERY_CHARS` characters.
    """

    __slots__ = ("text", "preconditions", "unsatisfied", "bindings")

    text: str
    preconditions: tuple[str, ...]
    unsatisfied: tuple[str, ...]
    bindings: dict[str, str]

    def __init__(
        self,
        text: str,
        preconditions: tuple[str, ...] = (),
        unsatisfied: tuple[str, ...] = (),
        bindings: Mapping[str, str] | None = None,
    ) -> None:
        check_query_text(text)
        # Set past the refusal of __setattr__ below: a query never changes once made.
        init = object.__setattr__
        init(self, "text", text)
        init(self, "preconditions", preconditions)
        init(self, "unsatisfied", unsatisfied)
        init(self, "bindings", {} if bindings is None else bindings)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Query cannot change: cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Query cannot change: cannot delete field {name!r}")

    def _key(self) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        return (self.text, self.preconditions, self.unsatisfied)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if type(other) is Query else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Query(text={self.text!r}, preconditions={self.preconditions!r}, "
            f"unsatisfied={self.unsatisfied!r}, bindings={self.bindings!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by its constructor: the default would set fields through __setattr__.
        return (Query, (self.text, self.preconditions, self.unsatisfied, self.bindings))

    def replace(self, **changes: Any) -> Query:
        """A copy with ``changes`` (field name -> new value), checked as a new query."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        return Query(**{**fields, **changes})

    __replace__ = replace

    def __str__(self) -> str:
        return self.text


def as_query(query: str | Query) -> Query:
    """``query`` as a :class:`Query`: a string is wrapped (and checked), a Query passes through."""
    return query if isinstance(query, Query) else Query(query)


@runtime_checkable
class Checker(Protocol):
    """Anything that decides whether an action can run in a scene."""

    def check(
        self, scene: Scene, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """Return the verdict for ``query`` in ``scene``; stop early when ``cancel`` is set."""
        ...
