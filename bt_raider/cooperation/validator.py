"""REVECA's trajectory-based validation of a shared sub-goal (:class:`Validator`).

Before committing a shared sub-goal, estimate for each collaborator -- from what I know of them
between the step the information was acquired (alpha) and now (beta) -- whether they have
probably done it already: could they have reached the object in the elapsed steps from their
last known place, was it relevant to them, did their reported rooms include its room, did they
announce it (:mod:`bt_raider.cooperation.trajectory`). If somebody likely did, ask the most
likely collaborator; *confirmed* -> the plan and its stale information are dropped and the agent
replans; *denied* or no answer -> ask the next; nobody left -> commit. Answers are structured
(``data["answer"]`` is ``yes``/``no``/``unknown``), never parsed from free text.

:class:`ReobservingValidator` adds the policy for *unknown* answers (a collaborator that timed
out or left): look again when possible, else commit and say so.

Planning lives in :mod:`bt_raider.cooperation.planning`, the messages in
:mod:`bt_raider.cooperation.messages`.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from bt_raider.cooperation.messages import request_message
from bt_raider.cooperation.messaging import Message, MessageBus
from bt_raider.cooperation.observations import (
    InformationError,
    ObjectInfo,
    SubGoal,
)
from bt_raider.cooperation.reveca_memory import RevecaMemory
from bt_raider.cooperation.trajectory import (
    Likelihood,
    SymbolicTrajectory,
    TrajectoryEstimator,
    ValidationContext,
)
from bt_raider.errors import Cancelled, CommunicationError

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

#: Validation modes: REVECA's, and the two ablations ("always ask before acting", "w/o
#: validation").
MODES = ("trajectory", "always", "never")

# --------------------------------------------------------------------------- planning


# --------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class ValidationResult:
    """The outcome of validating one sub-goal.

    Attributes:
        subgoal: what was validated.
        achieved_by: the collaborator who has done it (the plan is false), or None: commit.
        asked: who was asked, in order.
        answers: collaborator -> ``yes``/``no``/``unknown``.
        assessments: the trajectory estimates.
        reason: a one-line explanation.
        step: when it was validated.
    """

    subgoal: SubGoal
    achieved_by: str | None
    asked: tuple[str, ...] = ()
    answers: Mapping[str, str] = field(default_factory=dict)
    assessments: tuple[Likelihood, ...] = ()
    reason: str = ""
    step: int = 0

    @property
    def achieved(self) -> bool:
        return self.achieved_by is not None

    @property
    def commit(self) -> bool:
        return self.achieved_by is None


class Validator:
    """REVECA's validation module for one agent.

    Args:
        memory: the agent's memory (read, and updated with the answers).
        bus: the agent's connection to its collaborators.
        mode: ``"trajectory"`` (REVECA), ``"always"`` (ask every collaborator before every
            plan), ``"never"`` (commit at once).
        estimator: the trajectory estimator (default :class:`SymbolicTrajectory`).
        timeout: seconds to wait for each answer.
        validated: sub-goal actions the ``trajectory`` mode validates; by default only the
            goal's own ``put`` sub-goals (REVECA validates whether a collaborator completed a
            task goal); other plans are committed at once. ``always`` asks before every plan.

    Attributes:
        results: every validation's result, oldest first.
    """

    def __init__(
        self,
        memory: RevecaMemory,
        bus: MessageBus,
        *,
        mode: str = "trajectory",
        estimator: TrajectoryEstimator | None = None,
        timeout: float = 2.0,
        validated: Sequence[str] = ("put",),
    ) -> None:
        bad = [a for a in validated if a not in SubGoal.ACTIONS]
        if bad:
            raise InformationError(
                f"validated action(s) {', '.join(map(repr, bad))} not among {', '.join(SubGoal.ACTIONS)}"
            )
        self.validated = tuple(validated)
        if mode not in MODES:
            raise InformationError(f"validation mode {mode!r} is not one of {', '.join(MODES)}")
        self.memory = memory
        self.bus = bus
        self.mode = mode
        self.estimator = estimator if estimator is not None else SymbolicTrajectory()
        self.timeout = timeout
        self.results: list[ValidationResult] = []
        self._lock = threading.Lock()

    @property
    def me(self) -> str:
        return self.memory.me

    def context(self, subgoal: SubGoal) -> ValidationContext:
        m = self.memory
        with m.lock:
            return ValidationContext(
                subgoal=subgoal,
                info=m.info_for(subgoal),
                step=m.step,
                me=m.me,
                room=m.room,
                position=tuple(m.position),
                collaborators=tuple(m.snapshot_collaborators()),
                world=m.world,
                goal_text=m.goal.text,
            )

    def assess(self, subgoal: SubGoal) -> list[Likelihood]:
        """The trajectory estimates for ``subgoal`` (no message is sent)."""
        return self.estimator.estimate(self.context(subgoal))

    def validate(
        self, subgoal: SubGoal, *, cancel: threading.Event | None = None
    ) -> ValidationResult:
        """Validate ``subgoal``: estimate, ask the likely collaborators in turn, decide.

        Meant to run on a worker (:func:`bt_raider.robot.worker.submit` passes ``cancel``): it may
        wait for answers. Confirmation updates the memory (stale information dropped).

        Raises:
            Cancelled: ``cancel`` was set while it ran (the guard that started it has gone).
        """
        ctx = self.context(subgoal)
        if self.mode == "never":
            return self._done(
                ValidationResult(subgoal, None, reason="validation off", step=ctx.step)
            )
        if self.mode == "trajectory" and subgoal.action not in self.validated:
            return self._done(
                ValidationResult(
                    subgoal, None, reason=f"{subgoal.action} plans are not validated", step=ctx.step
                )
            )
        assessments = tuple(self.estimator.estimate(ctx))
        for a in assessments:
            if a.known and a.likely:
                self._confirmed(subgoal, ctx.info, a.collaborator, None)
                return self._done(
                    ValidationResult(
                        subgoal, a.collaborator, (), {}, assessments, a.reason, ctx.step
                    )
                )
        if self.mode == "always":
            order = [a.collaborator for a in assessments]
            order += [c.name for c in ctx.collaborators if c.name not in order]
        else:
            order = [a.collaborator for a in assessments if a.likely]
        if not order:
            best = assessments[0].reason if assessments else "no collaborator to consider"
            return self._done(
                ValidationResult(
                    subgoal, None, (), {}, assessments, f"nobody likely: {best}", ctx.step
                )
            )
        asked: list[str] = []
        answers: dict[str, str] = {}
        faults: list[str] = []
        for name in order:
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"the validation of {subgoal.text!r} was cancelled")
            asked.append(name)
            request = request_message(self.memory, name, subgoal, ctx.info)
            try:
                reply = self.bus.request(name, request, self.timeout)
            except CommunicationError as exc:
                # An unreachable collaborator is an unknown answer, as a query timeout is; the
                # fault is kept in the reason.
                answers[name] = "unknown"
                faults.append(f"{name}: {exc}")
                continue
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"the validation of {subgoal.text!r} was cancelled")
            if reply is None:
                answers[name] = "unknown"
                continue
            self.memory.hear(reply)
            answers[name] = str(reply.data.get("answer"))
            if answers[name] == "yes":
                self._confirmed(subgoal, ctx.info, name, reply)
                return self._done(
                    ValidationResult(
                        subgoal,
                        name,
                        tuple(asked),
                        answers,
                        assessments,
                        f"{name} confirmed: {reply.text}",
                        ctx.step,
                    )
                )
        return self._done(
            ValidationResult(
                subgoal,
                None,
                tuple(asked),
                answers,
                assessments,
                "nobody has done it: "
                + ", ".join(f"{n} said {a}" for n, a in answers.items())
                + (f" (faults: {'; '.join(faults)})" if faults else ""),
                ctx.step,
            )
        )

    def _done(self, result: ValidationResult) -> ValidationResult:
        with self._lock:
            self.results.append(result)
        return result

    def _confirmed(
        self, subgoal: SubGoal, info: ObjectInfo | None, who: str, reply: Message | None
    ) -> None:
        """A collaborator has done it: drop the stale information (the plan goes with it)."""
        m = self.memory
        with m.lock:
            c = m.collaborators[who]
            if subgoal.action == "put":
                if info is not None:
                    m.observations.remove(info.id)
                    c.held.setdefault(info.id, subgoal.target)
                if reply is not None and reply.data.get("placed"):
                    m.done[subgoal.target] = who
                    m.taken.pop(subgoal.target, None)
                elif subgoal.target not in m.done:
                    m.taken[subgoal.target] = who
            elif subgoal.action == "open":
                target = m.observations.get(subgoal.object_id or "")
                if target is not None:
                    m.observations.put(
                        replace(target, states=("OPEN",), actions=("put",), step=m.step)
                    )
            else:
                m.explored.add(subgoal.target)


# --------------------------------------------------------------------------- messages


class ReobservingValidator:
    """The policy for *unknown* answers, around a REVECA :class:`~bt_raider.cooperation.validator.Validator`.

    REVECA's validator asks the likely collaborators in turn and commits when nobody confirms.
    Over a network some answers are *unknown* -- the collaborator timed out, left, or answered
    garbage -- and committing on silence alone could repeat a collaborator's work. The policy:

    * every unknown answer is counted (``counts["unknown"]``) and logged;
    * if the sub-goal's object is **reachable** -- ``reobserve(subgoal)`` can look at it now
      (it is in my room) -- look again: still there -> commit (``reobserved_present``); gone ->
      the plan is stale, it counts as done by the silent collaborator (``reobserved_gone``);
    * otherwise **commit and say so** (``committed_blind``): the result's reason names the
      collaborators that did not answer.

    Args:
        validator: anything with ``validate(subgoal, *, cancel) -> ValidationResult``.
        reobserve: ``subgoal -> True`` (seen now), ``False`` (should be seen, is gone) or
            ``None`` (cannot look from here).

    Attributes:
        counts: what the policy did.
    """

    def __init__(self, validator: Any, reobserve: Callable[[Any], bool | None]) -> None:
        self.validator = validator
        self.reobserve = reobserve
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.validator, attr)

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counts[key] += n

    def validate(self, subgoal: Any, *, cancel: threading.Event | None = None) -> Any:
        result = self.validator.validate(subgoal, cancel=cancel)
        silent = [name for name, answer in result.answers.items() if answer == "unknown"]
        if not silent or result.achieved:
            return result
        self._count("unknown", len(silent))
        who = ", ".join(silent)
        try:
            seen = self.reobserve(subgoal)
        except Exception as exc:  # looking again failed: the same as not reachable
            log.warning("re-observing %s failed: %s", subgoal, exc)
            seen = None
        if seen is False:
            self._count("reobserved_gone")
            reason = f"no answer from {who}; re-observed: {subgoal} is gone, taken as done"
            log.warning("%s", reason)
            return replace(result, achieved_by=silent[0], reason=reason)
        if seen is True:
            self._count("reobserved_present")
            reason = f"no answer from {who}; re-observed: still there, committing"
        else:
            self._count("committed_blind")
            reason = f"no answer from {who}; cannot re-observe from here, committing anyway"
        log.warning("%s: %s", subgoal, reason)
        return replace(result, reason=reason)
