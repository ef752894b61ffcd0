"""LLM recovery: RAIDER's few-shot recovery prompt (Fig. 7) on any chat model; its answer is code,
parsed by the safe-code parser and fed back with the reason when rejected.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bt_raider.errors import RecoveryCodeError
from bt_raider.llm.prompts import render
from bt_raider.recovery.contract import (
    FREE_SPOT,
    ExamplesProvider,
    RecoveryRequest,
)
from bt_raider.recovery.fewshot import builtin_examples
from bt_raider.recovery.safecode import (
    Vocabulary,
)

if TYPE_CHECKING:
    pass


#: RAIDER's contextual notes (Fig. 7), worded for code output.
DEFAULT_NOTES = (
    f"There is always a free table '{FREE_SPOT}' to move to and place objects momentarily or "
    "that are not needed for the instruction.",
    "The robot is initially at the query location.",
    "The robot has a single arm and cannot perform actions while holding an object, except for "
    "placing the held object or slicing if holding a knife.",
    "End with the query action itself on the resolved objects (e.g. pick(item)), unless the "
    "action is impossible: then only say() why.",
)


class LLMRecovery:
    """RAIDER's recovery LLM: the few-shot prompt of Fig. 7 on any chat model.

    Args:
        chat: a :class:`bt_raider.llm.chat.ChatModel` (``complete(messages, *, tools, timeout)``).
        examples: an :data:`ExamplesProvider` (e.g. the CDR memory's ``memory.examples``);
            the built-in examples (:func:`builtin_examples`) when None.
        k: how many examples the provider is asked for.
        vocabulary: the actions offered to the model.
        notes: the prompt's contextual notes (:data:`DEFAULT_NOTES`).
        timeout: seconds per model call.
    """

    def __init__(
        self,
        chat: Any,
        *,
        examples: ExamplesProvider | None = None,
        k: int = 4,
        vocabulary: Vocabulary | None = None,
        notes: Sequence[str] = DEFAULT_NOTES,
        timeout: float | None = None,
    ) -> None:
        self.chat = chat
        self.examples = examples or builtin_examples
        self.k = k
        self.vocabulary = vocabulary or Vocabulary()
        self.notes = list(notes)
        self.timeout = timeout

    def prompt(self, request: RecoveryRequest) -> str:
        """The rendered prompt for ``request``."""
        information = request.information()
        shots = list(request.examples)
        for ex in self.examples(information, self.k):
            pair = (str(ex[0]), str(ex[1]))
            if pair not in shots:
                shots.append(pair)
        return render(
            "recovery",
            actions=self.vocabulary.usage(),
            notes=self.notes,
            examples=shots,
            query=information,
            feedback=request.feedback,
        )

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        if cancel is not None and cancel.is_set():
            raise RecoveryCodeError("recovery planning was cancelled")
        messages = [{"role": "user", "content": self.prompt(request)}]
        reply = self.chat.complete(messages, timeout=self.timeout)
        return str(getattr(reply, "content", "") or "")
