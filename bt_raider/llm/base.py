"""The chat-model protocol and what a model turn is: the one interface every backend implements.

Backends (:mod:`bt_raider.llm.chat`, :mod:`bt_raider.llm.local`, or the user's own) implement
:class:`ChatModel`; callers read :class:`ChatReply`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class ToolCallRequest:
    """One tool call the model asked for.

    Attributes:
        name: the tool's name as the model wrote it (may be made up: PFM warning 2).
        args: the arguments: a list (text protocol), a dict (native function calling), or the
            raw string when the model's JSON could not be read.
        id: the native tool-call id, echoed back with the result; None for the text protocol.
    """

    name: str
    args: Any
    id: str | None = None


@dataclass
class ChatReply:
    """One assistant turn: its text and any native tool calls."""

    content: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)


@runtime_checkable
class ChatModel(Protocol):
    """Anything that continues a conversation.

    ``messages`` are OpenAI-style dicts (``role``: system/user/assistant/tool). ``tools`` are
    OpenAI function schemas, given only when the caller wants native tool calls; a backend
    without native tool calling ignores them. ``timeout`` bounds the call in seconds.
    """

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
    ) -> ChatReply: ...
