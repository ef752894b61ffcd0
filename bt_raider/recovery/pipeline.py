"""The recovery pipeline: from an issue and its explanation to a py_trees subtree that fixes it.

RAIDER (section 3.5, Fig. 7) hands the checked action, the issue, its explanation and what the
robot holds to a recovery planner, which writes the corrective actions as Python-like code with
the interaction actions ``ask``/``say``. Here:

* a :class:`~bt_raider.recovery.contract.RecoveryRequest` carries that query;
* a :class:`~bt_raider.recovery.contract.RecoveryPlanner` (tiny protocol:
  ``propose(request) -> code``) writes the code:
  :class:`~bt_raider.recovery.symbolic.SymbolicRecovery` (deterministic templates per issue
  category, offline) and :class:`~bt_raider.recovery.llm.LLMRecovery` (RAIDER's few-shot prompt,
  ``llm/templates/recovery.j2``, on any chat model);
  ``bt_raider.planners.pddl_recovery.PddlRecovery`` is a PDDL-based one;
* :class:`Recovery` asks the planner, checks the code with :mod:`bt_raider.recovery.safecode` (never
  executing it), feeds a rejected snippet's reason back to the planner a bounded number of
  times, and compiles the accepted program into a subtree.

Plans end with the recovered action itself on the resolved arguments (``pick(item)`` after
``item = ask(...)``), as RAIDER's examples do. That last call is the plan's *resume step*: it is
not run inside the subtree; the guard re-checks the action with those arguments and then runs
its own child (see :class:`~bt_raider.runtime.guards.RaiderGuard`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import py_trees

from bt_raider.errors import RecoveryCodeError
from bt_raider.llm.replies import clean_code
from bt_raider.recovery.compiler import compile_program
from bt_raider.recovery.contract import (
    RecoveryPlan,
    RecoveryPlanner,
    RecoveryRequest,
    same_action,
)
from bt_raider.recovery.safecode import (
    DEFAULT_LIMITS,
    INTERACTION_ACTIONS,
    CodeStep,
    Limits,
    Program,
    Ref,
    Vocabulary,
    parse_recovery,
)

if TYPE_CHECKING:
    from bt_raider.runtime.actions import Robot
    from bt_raider.runtime.human import HumanInterface


# ---------------------------------------------------------------------------- the request


# ---------------------------------------------------------------------------- planners


# -- built-in examples


# -- symbolic


# -- LLM


# ---------------------------------------------------------------------------- Recovery


class Recovery:
    """Ask a planner for recovery code, accept it only through the whitelist, compile it.

    Args:
        planner: a :class:`RecoveryPlanner`.
        robot: runs the robot actions of the plan.
        human: answers ``ask`` and hears ``say``.
        vocabulary: the allowed actions (RAIDER's by default).
        max_retries: how many times rejected code goes back to the planner with the reason.
        limits: size limits for the code.
        on_success: called with ``(information, code)`` when a plan led to the action running
            (the guard's re-check found no issue). It is called on the tick, so it must return
            at once: use :meth:`bt_raider.recovery.fewshot.MemoryLink.record`, which queues the write.
    """

    def __init__(
        self,
        planner: RecoveryPlanner,
        robot: Robot,
        human: HumanInterface,
        *,
        vocabulary: Vocabulary | None = None,
        max_retries: int = 2,
        limits: Limits = DEFAULT_LIMITS,
        on_success: Callable[[str, str], None] | None = None,
    ) -> None:
        if not callable(getattr(planner, "propose", None)):
            raise TypeError(f"planner must have propose(request, *, cancel), got {planner!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        self.planner = planner
        self.robot = robot
        self.human = human
        self.vocabulary = vocabulary or Vocabulary()
        self.max_retries = max_retries
        self.limits = limits
        self.on_success = on_success

    def plan(
        self, request: RecoveryRequest, *, cancel: threading.Event | None = None
    ) -> RecoveryPlan:
        """Get accepted code for ``request`` (thread-safe: nothing touches the tree).

        Raises:
            RecoveryCodeError: every proposal was rejected (the message has the last reason),
                or planning was cancelled.
        """
        rejected: list[str] = []
        current = request
        for attempt in range(1, self.max_retries + 2):
            if cancel is not None and cancel.is_set():
                raise RecoveryCodeError("recovery planning was cancelled")
            code = self.planner.propose(current, cancel=cancel)
            try:
                program = parse_recovery(clean_code(code), self.vocabulary, limits=self.limits)
            except RecoveryCodeError as exc:
                rejected.append(str(exc))
                current = replace(current, feedback=str(exc))
                continue
            return self._split(request, program, attempt, rejected)
        raise RecoveryCodeError(
            f"no acceptable recovery for {request.action!r} after {len(rejected)} proposal(s); "
            f"last rejection: {rejected[-1]}"
        )

    def _split(
        self, request: RecoveryRequest, program: Program, proposals: int, rejected: list[str]
    ) -> RecoveryPlan:
        last = program.steps[-1]
        resume = None
        if last.action not in INTERACTION_ACTIONS and same_action(last.action, request.action_name):
            resume = last
        run = Program(program.steps[:-1] if resume else program.steps, program.source)
        return RecoveryPlan(
            request, program.to_code(), program, run, resume, proposals, list(rejected)
        )

    def compile(
        self, plan: RecoveryPlan, *, name: str | None = None
    ) -> py_trees.behaviour.Behaviour:
        """The subtree of ``plan`` (call on the tree's thread: it registers blackboard clients)."""
        return compile_program(
            plan.run, self.robot, self.human, name=name or f"Recovery {plan.request.action}"
        )

    def build(
        self, request: RecoveryRequest, *, cancel: threading.Event | None = None
    ) -> py_trees.behaviour.Behaviour:
        """:meth:`plan` then :meth:`compile`: the subtree for ``request``."""
        return self.compile(self.plan(request, cancel=cancel))

    def succeeded(self, plan: RecoveryPlan) -> None:
        """Report that ``plan`` worked (the guard calls this); feeds ``on_success``."""
        if self.on_success is not None:
            self.on_success(plan.request.information(), plan.code)


def resolve_resume(step: CodeStep, values: dict[str, Any]) -> list[Any]:
    """The resume step's arguments with variables replaced by their values."""
    return [values[a.name] if isinstance(a, Ref) else a for a in step.args]
