"""``SharedGoalGuard``: validate a shared sub-goal (REVECA) before committing the child.

When several robots -- or a robot and a person -- share a goal, a plan made from old
observations goes stale: a collaborator may already have taken the apple. The guard wraps the
behaviour that achieves one sub-goal and, before its first tick, runs the
:class:`~bt_raider.cooperation.validator.Validator` on a worker:

* first tick: submit ``validator.validate(subgoal)``; RUNNING (the child is not ticked);
* while it runs (it may be waiting for a collaborator's answer): RUNNING, never blocking;
* *commit* -> the child is ticked from then on and the guard reflects its status;
* *achieved by a collaborator* -> SUCCESS without running the child, and
  ``<namespace>/<subgoal.key>`` on the blackboard records who did it, so the plan moves on;
* the validation raised, or the sub-goal function raised or returned no sub-goal -> FAILURE
  with the reason (fail closed).

A sub-goal already recorded as achieved on the blackboard ends as SUCCESS at once.
``terminate()`` cancels a validation still running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import py_trees
from py_trees.common import Access, Status

from bt_raider.cooperation.observations import SubGoal
from bt_raider.cooperation.validator import ValidationResult
from bt_raider.robot.retarget import new_guard_id
from bt_raider.robot.worker import Pending, submit

#: Blackboard namespace of sub-goals collaborators have achieved.
SHARED_GOALS_NAMESPACE = "/bt_raider/shared_goals"


class SupportsValidate(Protocol):
    """What :class:`SharedGoalGuard` needs of a validator (REVECA's :class:`~bt_raider.cooperation.validator.Validator` has it)."""

    def validate(
        self, subgoal: SubGoal, *, cancel: threading.Event | None = None
    ) -> ValidationResult:
        """Whether to commit ``subgoal``; stop early when ``cancel`` is set."""
        ...


class SharedGoalGuard(py_trees.decorators.Decorator):
    """Consult a REVECA validator before committing ``child`` to a shared sub-goal.

    Args:
        child: the behaviour (or subtree) that achieves the sub-goal.
        subgoal: the sub-goal, or a function returning it when the guard starts (for a branch
            whose target is chosen at planning time; None, or anything but a SubGoal, fails).
        validator: anything with ``validate(subgoal, *, cancel) -> ValidationResult``.
        name: the node's name (default ``"Shared: <subgoal>"``).
        namespace: blackboard namespace for achieved sub-goals; robots simulated in one
            process give each robot its own.

    Attributes:
        result: the last validation's result (None before it finishes).
        guard_id: this guard's id, unique whatever its name
            (:func:`~bt_raider.robot.retarget.new_guard_id`). Its only blackboard key is the
            sub-goal's record, ``<namespace>/<subgoal.key>``: shared on purpose, by every guard
            of that sub-goal (what a collaborator achieved is achieved for all of them).
    """

    def __init__(
        self,
        child: py_trees.behaviour.Behaviour,
        subgoal: SubGoal | Callable[[], SubGoal | None],
        validator: SupportsValidate,
        *,
        name: str | None = None,
        namespace: str = SHARED_GOALS_NAMESPACE,
    ) -> None:
        label = subgoal.text if isinstance(subgoal, SubGoal) else "planned sub-goal"
        super().__init__(name=name or f"Shared: {label}", child=child)
        self.guard_id = new_guard_id(self.name)
        self._subgoal_source = subgoal
        self.validator = validator
        self.namespace = namespace.rstrip("/")
        self.blackboard = self.attach_blackboard_client(name=self.name)
        self.subgoal: SubGoal | None = subgoal if isinstance(subgoal, SubGoal) else None
        if self.subgoal is not None:
            self._register(self.subgoal)
        self.result: ValidationResult | None = None
        self._pending: Pending[ValidationResult] | None = None
        self._phase = "idle"  # idle | validating | committed | achieved | failed
        self._error = ""

    def _key(self, subgoal: SubGoal) -> str:
        return f"{self.namespace}/{subgoal.key}"

    def _register(self, subgoal: SubGoal) -> None:
        self.blackboard.register_key(key=self._key(subgoal), access=Access.WRITE)

    @property
    def validating(self) -> bool:
        """Whether a validation is under way (a driver may wait for it before stepping)."""
        return self._phase == "validating"

    @property
    def phase(self) -> str:
        return self._phase

    def _recorded(self, subgoal: SubGoal) -> Any:
        try:
            return self.blackboard.get(self._key(subgoal))
        except KeyError:
            return None

    def initialise(self) -> None:
        self.result = None
        self._error = ""
        self._pending = None
        subgoal = self._subgoal_source
        if not isinstance(subgoal, SubGoal):
            try:
                made = subgoal()
            except Exception as exc:  # fail closed, say why (as RaiderGuard does)
                text = str(exc).strip()
                self._phase = "failed"
                self._error = f"the sub-goal function raised {type(exc).__name__}" + (
                    f": {text}" if text else ""
                )
                self.feedback_message = self._error
                return
            if not isinstance(made, SubGoal):
                self._phase = "failed"
                self._error = f"the sub-goal function returned {made!r}, not a SubGoal"
                return
            subgoal = made
            self._register(subgoal)
        self.subgoal = subgoal
        record = self._recorded(subgoal)
        if record is not None:
            self._phase = "achieved"
            self.feedback_message = f"{subgoal.text}: already achieved ({record})"
            return
        self._phase = "validating"
        self.feedback_message = f"validating {subgoal.text}"
        self._pending = submit(self.validator.validate, subgoal)

    def _poll(self) -> None:
        pending = self._pending
        if pending is None or not pending.done():
            return
        self._pending = None
        error = pending.exception()
        if error is not None:
            self._phase = "failed"
            self._error = f"validation of {self.subgoal} failed: {error}"
            return
        result = pending.result()
        self.result = result
        assert self.subgoal is not None
        if result.achieved:
            self._phase = "achieved"
            self.blackboard.set(
                self._key(self.subgoal),
                {"achieved_by": result.achieved_by, "step": result.step, "reason": result.reason},
            )
            self.feedback_message = (
                f"{self.subgoal.text}: done by {result.achieved_by} ({result.reason})"
            )
        else:
            self._phase = "committed"
            self.feedback_message = f"committed to {self.subgoal.text}: {result.reason}"

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        """Validate before the child's first tick; then reflect the child."""
        self.logger.debug(f"{self.__class__.__name__}.tick()")
        if self.status != Status.RUNNING:
            self.initialise()
        if self._phase == "validating":
            self._poll()
        if self._phase == "committed":
            yield from self.decorated.tick()
        new_status = self.update()
        if new_status != Status.RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

    def update(self) -> Status:
        if self._phase == "validating":
            return Status.RUNNING
        if self._phase == "achieved":
            return Status.SUCCESS
        if self._phase == "failed":
            self.feedback_message = self._error
            return Status.FAILURE
        status = self.decorated.status
        if self.decorated.feedback_message:
            self.feedback_message = f"{self.subgoal}: {self.decorated.feedback_message}"
        return status if status != Status.INVALID else Status.RUNNING

    def terminate(self, new_status: Status) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
            self.feedback_message = f"validation of {self.subgoal} cancelled"
        if new_status == Status.INVALID:
            self._phase = "idle"
