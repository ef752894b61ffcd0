"""The recovery contract: what a recovery planner is asked (RecoveryRequest), what it answers
(RecoveryPlan) and the RecoveryPlanner protocol, with the helpers that name an action.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from bt_raider.checking.parse import parse_query
from bt_raider.checking.verdict import Verdict
from bt_raider.errors import QueryError
from bt_raider.recovery.safecode import (
    CodeStep,
    Program,
)

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene


#: An examples provider: ``(information, k) -> [(information, goal), ...]``. The CDR memory's
#: ``memory.examples(query, k)`` has this shape.
ExamplesProvider = Callable[[str, int], Sequence[tuple[str, str]]]


#: Where RAIDER's prompt says objects can always be put down for a while.
FREE_SPOT = "free_table"


@dataclass
class RecoveryRequest:
    """What the recovery planner is asked (RAIDER Fig. 7's query).

    Attributes:
        action: the checked action as written (structured, PDDL instance or natural language).
        verdict: the issue found, with its explanation.
        holding: display names of what the robot holds.
        examples: extra ``(information, goal)`` examples, e.g. from the CDR memory.
        feedback: why the planner's previous code was rejected (None on the first try).
        scene: the scene the check saw, for planners that look things up (optional).
        bindings: PDDL object -> scene name, for a PDDL action instance.
    """

    action: str
    verdict: Verdict
    holding: list[str] = field(default_factory=list)
    examples: list[tuple[str, str]] = field(default_factory=list)
    feedback: str | None = None
    scene: Scene | None = None
    bindings: dict[str, str] = field(default_factory=dict)

    @property
    def action_name(self) -> str | None:
        """The action's name (``pick``), from the verdict or the query text."""
        return action_name(self.verdict.action, self.action, self.bindings)

    def information(self) -> str:
        """The query line of the prompt, and the *information* half of a memory example."""
        issue = self.verdict.final_response.value
        if self.verdict.category.value != issue:
            issue = f"{issue} ({self.verdict.category.value})"
        held = ", ".join(self.holding) if self.holding else "none"
        explanation = " ".join(self.verdict.explanation.split())
        return (
            f"query: {self.action}, issue: {issue}, explanation: {explanation} "
            f"robot holding: {held}"
        )


def squash_name(name: str) -> str:
    """An action or object name compared loosely: lower case, no spaces, ``_`` or ``-``."""
    return re.sub(r"[\s_\-]+", "", name.lower())


def split_action(text: str, bindings: dict[str, str] | None = None) -> tuple[str | None, list[str]]:
    """``pick(Apple)`` / ``(pick robot apple table)`` / "grab the apple" -> name and arguments.

    Uses :func:`bt_raider.checking.parse.parse_query` when it understands the text (PDDL arguments then
    come back as scene names through ``bindings``); else a purely syntactic split.
    """
    try:
        parsed = parse_query(text, bindings or None)
        return parsed.action, [a.text for a in parsed.args]
    except QueryError:
        pass
    match = re.fullmatch(r"\s*([A-Za-z][\w\-]*)\s*\((.*)\)\s*[.!?]?\s*", text, re.DOTALL)
    if match:
        args = [a.strip().strip("'\"") for a in match.group(2).split(",")]
        return match.group(1).lower(), [a for a in args if a]
    match = re.fullmatch(r"\s*\(\s*([\w\-]+)((?:\s+[^\s()]+)*)\s*\)\s*", text)
    if match:
        return match.group(1).lower(), match.group(2).split()
    return None, []


def action_name(
    verdict_action: str | None, text: str, bindings: dict[str, str] | None = None
) -> str | None:
    """The action's name: the verdict's grounded action, else the one parsed from ``text``."""
    if verdict_action:
        return verdict_action
    return split_action(text, bindings)[0]


def same_action(a: str | None, b: str | None) -> bool:
    """``pick`` and ``Pick`` and ``pick-up``... compare case and separator blind."""
    return bool(a) and bool(b) and squash_name(a) == squash_name(b)  # type: ignore[arg-type]


@runtime_checkable
class RecoveryPlanner(Protocol):
    """Anything that writes recovery code for a request."""

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        """Return recovery code (one statement per line); stop early when ``cancel`` is set."""
        ...


@dataclass
class RecoveryPlan:
    """An accepted recovery: the code, its program, what runs and where the guard resumes.

    Attributes:
        request: the request it answers.
        code: the accepted code, canonical (one statement per line).
        program: the whole program.
        run: the steps that run in the subtree (the program without the resume step).
        resume: the last step when it is the recovered action itself, else None.
        proposals: how many times the planner was asked.
        rejected: the reasons earlier proposals were rejected.
    """

    request: RecoveryRequest
    code: str
    program: Program
    run: Program
    resume: CodeStep | None
    proposals: int = 1
    rejected: list[str] = field(default_factory=list)

    @property
    def gives_up(self) -> bool:
        """True when the plan only says why the action cannot be done (RAIDER's unfeasible case)."""
        return self.program.only_says

    @property
    def variables(self) -> tuple[str, ...]:
        return self.program.variables
