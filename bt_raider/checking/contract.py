"""The query contract: what a check is asked (:class:`Query`) and who answers it (:class:`Checker`).

This module imports no reasoner, so a reasoner (ours or a third party's) imports it without a
cycle. Building a checker by name lives in :mod:`bt_raider.checking.registry`. Any object with a
matching ``check`` method is a :class:`Checker`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

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


@dataclass(frozen=True)
class Query:
    """One action to check.

    Attributes:
        text: the query as given: ``pick(Apple)``, ``(pick tiago medicine counter)`` or
            natural language ("Can you please open the microwave?").
        preconditions: the action's PDDL preconditions when it comes from a plan, as
            human-readable strings (``"(at tiago counter)"``), with those already known to be
            unsatisfied in the planner's state listed in ``unsatisfied``.
        unsatisfied: preconditions unified-planning's simulator found false in the current state.
        bindings: for a PDDL action, parameter name -> scene name the user mapped it to.
    """

    text: str
    preconditions: tuple[str, ...] = ()
    unsatisfied: tuple[str, ...] = ()
    bindings: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        check_query_text(self.text)

    def __str__(self) -> str:
        return self.text


def as_query(query: str | Query) -> Query:
    return query if isinstance(query, Query) else Query(query)


@runtime_checkable
class Checker(Protocol):
    """Anything that decides whether an action can run in a scene."""

    def check(
        self, scene: Scene, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """Return the verdict for ``query`` in ``scene``; stop early when ``cancel`` is set."""
        ...
