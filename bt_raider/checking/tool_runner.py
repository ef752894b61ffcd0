"""The tool runner: how a check calls the perception tools, through one :class:`ToolRunner`.

The symbolic reasoner (its grounding included) and the Precond baseline ask every fact through
the :class:`~bt_raider.perception.toolset.ToolSet` via a :class:`ToolRunner` bound to one scene.
It records each call once (so a verdict shows the calls that justify it), caches the answers,
stops at the check's cancel event or deadline (:class:`~bt_raider.errors.Cancelled`), and turns
a failed or missing tool the check needs into :class:`ToolFailure` (the check ends as
``unknown``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from bt_raider.checking.verdict import ToolCall
from bt_raider.errors import BtRaiderError, Cancelled, ToolError
from bt_raider.perception.scene import Scene
from bt_raider.perception.toolset import ToolSet


class ToolFailure(BtRaiderError):
    """A tool the check needed failed or is missing; the check ends as ``unknown``."""


class ToolRunner:
    """Calls tools on one scene, records every call once, and caches answers.

    Args:
        scene: the scene the tools look at.
        tools: the tool set.
        cancel: checked before every call; when set, :class:`Cancelled` is raised.
        deadline: ``time.monotonic()`` value after which :class:`Cancelled` is raised.
        on_call: called with each new :class:`ToolCall` (for traces).
    """

    def __init__(
        self,
        scene: Scene,
        tools: ToolSet,
        *,
        cancel: threading.Event | None = None,
        deadline: float | None = None,
        on_call: Callable[[ToolCall], None] | None = None,
    ) -> None:
        self.scene = scene
        self.tools = tools
        self.cancel = cancel
        self.deadline = deadline
        self.calls: list[ToolCall] = []
        self._cache: dict[tuple[Any, ...], ToolCall] = {}
        self._on_call = on_call

    def checkpoint(self) -> None:
        """Raise :class:`Cancelled` when the check was cancelled or is out of time."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("the check was cancelled")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Cancelled("the time limit was reached")

    def has(self, name: str) -> bool:
        return name in self.tools

    def attempt(self, name: str, *args: Any) -> ToolCall:
        """Call a tool and return the recorded :class:`ToolCall` (``error`` set on failure)."""
        key = (name, *args)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        self.checkpoint()
        call = ToolCall(name, list(args))
        try:
            call.result = self.tools.call(self.scene, name, list(args))
        except ToolError as exc:
            call.error = " ".join(str(exc).split())
        self._cache[key] = call
        self.calls.append(call)
        if self._on_call is not None:
            self._on_call(call)
        return call

    def call(self, name: str, *args: Any) -> Any:
        """The tool's answer; :class:`ToolFailure` when it fails (a check cannot go on)."""
        call = self.attempt(name, *args)
        if call.error is not None:
            raise ToolFailure(f"tool {name}({', '.join(map(str, args))}) failed: {call.error}")
        return call.result
