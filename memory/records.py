"""What the CDR memory stores and returns: a Record, an Example with its score, a Context of
retrieved examples and the Resolution of their conflicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bt_raider.memory.actions import (
    Action,
)
from bt_raider.memory.rules import Judgement


@dataclass(frozen=True)
class Example:
    """One few-shot example for the recovery/checker prompts.

    Attributes:
        information: the stored command / situation.
        goal: what achieved it.
        score: cosine similarity to the query.
        id: the record's id.
    """

    information: str
    goal: str
    score: float
    id: str


@dataclass(frozen=True)
class Context:
    """A retrieved record and what the rules said about it.

    Attributes:
        status: ``kept`` (consistent, returned), ``conflict`` (a rule fired against the
            query), ``cut`` (consistent, but its link to a kept context was cut earlier),
            ``surplus`` (consistent, beyond k), ``undecided`` (the rules cannot tell: the
            pair hinges on a verb the extractor cannot read; dropped, never cut).
    """

    id: str
    label: int
    information: str
    goal: str
    outcome: str
    score: float
    actions: tuple[Action, ...]
    judgement: Judgement
    status: str
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    def example(self) -> Example:
        return Example(self.information, self.goal, float(self.score), self.id)


@dataclass
class Resolution:
    """Algorithm 1 for one query: what was retrieved, kept, dropped and cut.

    Attributes:
        query: the query text.
        actions: the query's extracted actions.
        theta: the VecSim threshold used.
        contexts: every judged context, in rank order.
        cuts_added: links newly cut by this query.
    """

    query: str
    actions: list[Action]
    theta: float
    contexts: list[Context]
    cuts_added: int = 0

    @property
    def kept(self) -> list[Context]:
        return [c for c in self.contexts if c.status == "kept"]

    @property
    def conflicts(self) -> list[Context]:
        return [c for c in self.contexts if c.status == "conflict"]

    @property
    def cut(self) -> list[Context]:
        return [c for c in self.contexts if c.status == "cut"]

    def examples(self) -> list[Example]:
        return [c.example() for c in self.kept]


@dataclass(frozen=True)
class Record:
    """A stored record as the history sees it (deleted ones included)."""

    id: str
    information: str
    goal: str
    outcome: str
    metadata: dict[str, Any]
    actions: tuple[Action, ...]
    extractor: str
    created_at: float
    deleted_at: float | None
    deleted_reason: str | None

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None
