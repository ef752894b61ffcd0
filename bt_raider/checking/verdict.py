"""The result of one check: :class:`Verdict`, its response and category.

This is the ``check`` output contract of ``docs/scene-format.md`` section 4. Every backend
(symbolic, LLM, local model) returns a :class:`Verdict`.

:class:`Verdict` and :class:`ToolCall` are plain classes, not dataclasses: ``bt-raider check``
loads them at every start, and the dataclasses module (with ``inspect``, which it imports) and
the making of each class cost more than a tenth of the command's 150 ms. They keep what the
dataclasses gave: keyword construction, a readable ``repr``, equality by fields, and
``replace(**changes)`` (also ``copy.replace`` from Python 3.13).
"""

from __future__ import annotations

import copy
import json
from enum import Enum
from typing import Any


class _Word(str, Enum):
    """A str Enum that prints as its value: ``str(Category.ROBOT_STATE) == "robot_state"``."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Response(_Word):
    """RAIDER's ``final_response``."""

    NONE = "none"
    AMBIGUITY = "ambiguity"
    UNFEASIBILITY = "unfeasibility"


class Category(_Word):
    """Issue categories of the format doc, with RAIDER's labels in :data:`RAIDER_LABELS`."""

    NONE = "none"
    AMBIGUITY = "ambiguity"
    NOT_PRESENT = "not_present"
    OUT_OF_REACH = "out_of_reach"
    OBSTRUCTED = "obstructed"
    WRONG_STATE = "wrong_state"
    WRONG_PROPERTY = "wrong_property"
    ROBOT_STATE = "robot_state"
    UNKNOWN = "unknown"

    @property
    def response(self) -> Response:
        """The ``final_response`` this category implies (unknown fails closed)."""
        if self is Category.NONE:
            return Response.NONE
        if self is Category.AMBIGUITY:
            return Response.AMBIGUITY
        return Response.UNFEASIBILITY


RAIDER_LABELS: dict[Category, str] = {
    Category.AMBIGUITY: "IA",
    Category.NOT_PRESENT: "IU3",
    Category.OUT_OF_REACH: "IU1",
    Category.OBSTRUCTED: "IU2",
    Category.WRONG_STATE: "IU4",
    Category.WRONG_PROPERTY: "IU5",
    Category.ROBOT_STATE: "IU6",
    Category.NONE: "IN",
}

#: When several issues hold, the first in this order is reported.
PRIORITY: tuple[Category, ...] = (
    Category.AMBIGUITY,
    Category.NOT_PRESENT,
    Category.ROBOT_STATE,
    Category.WRONG_PROPERTY,
    Category.WRONG_STATE,
    Category.OBSTRUCTED,
    Category.OUT_OF_REACH,
)


def parse_category(value: str | Category) -> Category:
    """Return the :class:`Category` named by ``value`` (its value or a RAIDER label)."""
    if isinstance(value, Category):
        return value
    text = str(value).strip().lower()
    for cat in Category:
        if cat.value == text or RAIDER_LABELS.get(cat, "").lower() == text:
            return cat
    valid = ", ".join(c.value for c in Category)
    raise ValueError(f"unknown issue category {value!r}: expected one of {valid}")


class ToolCall:
    """One tool call made while checking: what was asked and what came back.

    Attributes:
        tool: the tool's name.
        args: the arguments it was called with.
        result: what it returned (None after an error).
        error: the error it raised, as text, or None.
    """

    __slots__ = ("tool", "args", "result", "error")
    __hash__ = None  # type: ignore[assignment]  # mutable and equal by value

    def __init__(
        self, tool: str, args: list[Any], result: Any = None, error: str | None = None
    ) -> None:
        self.tool = tool
        self.args = args
        self.result = result
        self.error = error

    def _values(self) -> tuple[Any, ...]:
        return (self.tool, self.args, self.result, self.error)

    def __eq__(self, other: object) -> bool:
        if type(other) is not ToolCall:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        return (
            f"ToolCall(tool={self.tool!r}, args={self.args!r}, result={self.result!r}, "
            f"error={self.error!r})"
        )

    def replace(self, **changes: Any) -> ToolCall:
        """A copy with ``changes`` (field name -> new value); the fields not named are shared."""
        return ToolCall(**{**_fields(self, self.__slots__), **changes})

    __replace__ = replace

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "args": list(self.args), "result": self.result}
        if self.error is not None:
            out["error"] = self.error
        return out


class Verdict:
    """The verdict on one action.

    Attributes:
        category: the issue category; ``final_response`` derives from it.
        explanation: short human-readable reason naming objects by display name.
        grounding: each argument phrase of the query -> the objectIds it grounded to.
        objects: objectIds involved in the decision.
        tool_calls: the tool calls made, in order.
        questions: the precondition questions asked (the *Ask* step).
        trace: the whole conversation / reasoning, as ``{"role", "content"}`` dicts.
        action: the grounded action name (``pick``), when known.
        elapsed_s: wall time of the check.
        steps: for a compound instruction ("open the fridge, take the egg and close it"), one
            ``{"query", "verdict"}`` dict per step, in order (``"resolved"`` too when a pronoun
            was replaced: "close it" -> "close Fridge"); ``verdict`` is that step's
            :meth:`to_json`, checked on the state the earlier steps lead to. The verdict itself
            is then the first step with an issue, else ``none``. Empty for one action.
    """

    #: The fields, in order (as the constructor takes them positionally).
    FIELDS = (
        "category",
        "explanation",
        "grounding",
        "objects",
        "tool_calls",
        "questions",
        "trace",
        "action",
        "elapsed_s",
        "steps",
    )
    __hash__ = None  # type: ignore[assignment]  # mutable and equal by value

    def __init__(
        self,
        category: Category | str,
        explanation: str,
        grounding: dict[str, list[str]] | None = None,
        objects: list[str] | None = None,
        tool_calls: list[ToolCall] | None = None,
        questions: list[str] | None = None,
        trace: list[dict[str, Any]] | None = None,
        action: str | None = None,
        elapsed_s: float = 0.0,
        steps: list[dict[str, Any]] | None = None,
    ) -> None:
        self.category: Category = parse_category(category)
        self.explanation = explanation
        # None means a fresh empty container: one verdict's lists are never another's.
        self.grounding: dict[str, list[str]] = {} if grounding is None else grounding
        self.objects: list[str] = [] if objects is None else objects
        self.tool_calls: list[ToolCall] = [] if tool_calls is None else tool_calls
        self.questions: list[str] = [] if questions is None else questions
        self.trace: list[dict[str, Any]] = [] if trace is None else trace
        self.action = action
        self.elapsed_s = elapsed_s
        self.steps: list[dict[str, Any]] = [] if steps is None else steps

    def __eq__(self, other: object) -> bool:
        if type(other) is not Verdict:
            return NotImplemented
        return tuple(getattr(self, f) for f in self.FIELDS) == tuple(
            getattr(other, f) for f in self.FIELDS
        )

    def __repr__(self) -> str:
        body = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"Verdict({body})"

    def replace(self, **changes: Any) -> Verdict:
        """A copy with ``changes`` (field name -> new value); the fields not named are shared.

        Raises:
            TypeError: for a name that is not a field.
        """
        return Verdict(**{**_fields(self, self.FIELDS), **changes})

    __replace__ = replace

    @property
    def final_response(self) -> Response:
        return self.category.response

    @property
    def ok(self) -> bool:
        """True when no issue was found and the action may run."""
        return self.category is Category.NONE

    @classmethod
    def unknown(cls, reason: str, **kwargs: Any) -> Verdict:
        """A check that could not finish: fails closed as ``unfeasibility``/``unknown``."""
        return cls(Category.UNKNOWN, f"The check did not finish: {reason}", **kwargs)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the format doc (section 4), with ``steps`` for a compound."""
        out: dict[str, Any] = {
            "final_response": self.final_response.value,
            "category": self.category.value,
            "explanation": self.explanation,
            "grounding": {k: list(v) for k, v in self.grounding.items()},
            "objects": list(self.objects),
            "tool_calls": [tc.to_json() for tc in self.tool_calls],
        }
        if self.steps:
            out["steps"] = [dict(s) for s in self.steps]
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), default=str)

    def as_dict(self) -> dict[str, Any]:
        """Everything, including questions and trace (for logs and the blackboard)."""
        out = {f: copy.deepcopy(getattr(self, f)) for f in self.FIELDS}
        out["tool_calls"] = [
            {f: copy.deepcopy(getattr(tc, f)) for f in tc.__slots__} for tc in self.tool_calls
        ]
        out["category"] = self.category.value
        out["final_response"] = self.final_response.value
        return out


def _fields(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(record, name) for name in names}
