"""LLM recovery: RAIDER's few-shot recovery prompt (Fig. 7) on any chat model; its answer is code,
parsed by the safe-code parser and fed back with the reason when rejected.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bt_raider.errors import RecoveryCodeError, renamed
from bt_raider.llm.grammar import Grammar, recovery_code
from bt_raider.llm.prompts import render
from bt_raider.recovery.contract import (
    FREE_SPOT,
    ExamplesProvider,
    RecoveryRequest,
    free_surface,
)
from bt_raider.recovery.fewshot import builtin_examples
from bt_raider.recovery.robot_actions import RobotActions
from bt_raider.recovery.safecode import (
    INTERACTION_ACTIONS,
    Vocabulary,
)

if TYPE_CHECKING:
    pass


#: RAIDER's contextual notes (Fig. 7), worded for code output. RAIDER's "there is always a free
#: table" becomes a real surface of the scene, added per request (:meth:`LLMRecoveryPlanner.notes_for`).
DEFAULT_NOTES = (
    "The robot is initially at the query location.",
    "The robot has a single arm and cannot perform actions while holding an object, except for "
    "placing the held object or slicing if holding a knife.",
    "End with the query action itself on the resolved objects (e.g. pick(item)), unless the "
    "action is impossible: then only say() why.",
    "Name only objects, places and people that exist in the scene, as the query and the "
    "explanation name them; never invent a place.",
)


def _in_robot_words(shot: tuple[str, str], actions: RobotActions) -> tuple[str, str] | None:
    """A few-shot example with RAIDER's verbs written as the robot's names; None when it uses
    an action the robot does not have (it would teach the model to call it)."""
    info, goal = shot
    out = []
    for line in goal.splitlines():
        match = re.match(r"\s*(?:\w+\s*=\s*)?(\w+)\s*\(", line)
        if match and match.group(1) not in INTERACTION_ACTIONS:
            verb = match.group(1)
            name = actions.name_for(verb) or (verb if verb in actions else None)
            if name is None:
                return None
            line = line[: match.start(1)] + name + line[match.end(1) :]
        out.append(line)
    return info, "\n".join(out)


class LLMRecoveryPlanner:
    """RAIDER's recovery LLM: the few-shot prompt of Fig. 7 on any chat model.

    Args:
        chat: a :class:`bt_raider.llm.chat.ChatModel` (``complete(messages, *, tools, timeout)``).
        examples: an :data:`ExamplesProvider` (e.g. the CDR memory's ``memory.examples``);
            the built-in examples (:func:`builtin_examples`) when None.
        k: how many examples the provider is asked for.
        vocabulary: the actions offered to the model when the request does not say which
            actions the robot has (``request.actions``, set by
            :class:`~bt_raider.recovery.pipeline.Recovery`).
        notes: the prompt's contextual notes (:data:`DEFAULT_NOTES`).
        timeout: seconds per model call.
        constrain: give a model that decodes under a grammar (``supports_grammar``) the grammar
            of recovery code (:func:`bt_raider.llm.grammar.recovery_code`); the answer is parsed
            and verified all the same.
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
        constrain: bool = True,
    ) -> None:
        self.chat = chat
        self.constrain = constrain
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
        # RAIDER's examples put things on a 'free_table': the scene's real surface, or none.
        spot = free_surface(request.scene)
        shots = [
            (info, goal.replace(FREE_SPOT, spot.name)) if spot is not None else (info, goal)
            for info, goal in shots
            if spot is not None or FREE_SPOT not in goal
        ]
        actions = self.vocabulary.usage()
        if request.actions is not None:
            actions = request.actions.usage()
            shots = [s for s in (_in_robot_words(s, request.actions) for s in shots) if s]
        return render(
            "recovery",
            actions=actions,
            notes=self.notes_for(request),
            examples=shots,
            query=information,
            feedback=request.feedback,
        )

    def notes_for(self, request: RecoveryRequest) -> list[str]:
        """The contextual notes for ``request``: :attr:`notes` and a real free surface."""
        notes = list(self.notes)
        spot = free_surface(request.scene)
        if spot is not None:
            notes.insert(
                0,
                f"To put an object down for a while, use the {spot.name}: a free surface near "
                "the robot. There is no other free table.",
            )
        return notes

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        if cancel is not None and cancel.is_set():
            raise RecoveryCodeError("recovery planning was cancelled")
        messages = [{"role": "user", "content": self.prompt(request)}]
        extra: dict[str, Any] = {}
        if self.constrain and getattr(self.chat, "supports_grammar", False) is True:
            extra["grammar"] = self.grammar(request)
        reply = self.chat.complete(messages, timeout=self.timeout, **extra)
        return str(getattr(reply, "content", "") or "")

    def grammar(self, request: RecoveryRequest) -> Grammar:
        """The grammar of an answer to ``request``: the robot's actions, the scene's names."""
        vocab = request.actions.vocabulary() if request.actions is not None else self.vocabulary
        scene = request.scene
        names: list[str] = []
        if scene is not None:
            names = [o.name for o in scene] + [h.name for h in scene.humans if h.name]
        spot = free_surface(scene)
        if spot is not None:
            names.append(spot.name)
        return recovery_code(
            {name: vocab.arities(name) for name in vocab.names},
            list(dict.fromkeys(names)) or ["robot"],
        )


#: The name before 0.2 (a recovery *planner*, passed into ``Recovery``), for one release.
__getattr__ = renamed(
    __name__, {"LLMRecovery": ("bt_raider.recovery.llm.LLMRecoveryPlanner", LLMRecoveryPlanner)}
)
