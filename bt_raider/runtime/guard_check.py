"""A guard's check: the phases of its run, the check's job on a worker, and what the verdict does.

Part of :class:`~bt_raider.runtime.guards.RaiderGuard`, mixed into it (the guard's tick, its
pacing of checks and the sending are in :mod:`bt_raider.runtime.guards`). On the worker, the
check builds the query, reads the scene and asks the checker; back on the tick, its verdict
goes on the blackboard (:data:`LAST_VERDICT`, :func:`verdict_key`), then decides the run: no
issue -- the child learns what the check resolved its action to (``child.retarget``, see
:mod:`bt_raider.robot.retarget`) and acts; an issue -- a recovery is planned
(:mod:`bt_raider.runtime.guard_recovery`); a checker that raised, a check past its deadline,
an ``unknown`` verdict, no recovery or none left -- the run fails closed.

A compound instruction ("pick the cup and put it in the bowl") is checked here step by step
(:func:`~bt_raider.checking.steps.check_steps`); its first step with an issue is what the
recovery gets, and a passing check resolves every step
(:func:`~bt_raider.robot.retarget.resolve_steps`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import py_trees
from py_trees.common import Status

from bt_raider.checking.contract import Checker, Query, as_query
from bt_raider.checking.steps import check_steps
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.perception.scene import Scene
from bt_raider.recovery.contract import RecoveryPlan, RecoveryRequest
from bt_raider.recovery.naming import readable
from bt_raider.recovery.pipeline import Recovery
from bt_raider.robot import worker
from bt_raider.robot.designation import (
    Designated,
    GuardIntent,
    other_action,
    outside,
    unclear_candidates,
)
from bt_raider.robot.retarget import (
    ResolvedAction,
    argument_phrases,
    compound_steps,
    resolve_action,
    resolve_steps,
)
from bt_raider.runtime.scenes import read_scene

#: Blackboard key of the most recent verdict of any guard.
LAST_VERDICT = "/bt_raider/last_verdict"
#: Namespace of each guard's latest verdict: ``/bt_raider/verdicts/<guard id>``.
VERDICTS_NAMESPACE = "/bt_raider/verdicts"


class Phase(str, enum.Enum):
    """Where a guard is in one run."""

    IDLE = "idle"
    CHECKING = "checking"
    PLANNING = "planning"
    RECOVERING = "recovering"
    ACTING = "acting"
    DONE = "done"


# Enum member lookups cost more than the rest of a cached tick: the hot path uses these.
_IDLE = Phase.IDLE
_ACTING = Phase.ACTING
_CHECKING = Phase.CHECKING
_PLANNING = Phase.PLANNING
_RECOVERING = Phase.RECOVERING
_RUNNING = Status.RUNNING


#: Words that name an earlier step's object: only a step-by-step check can tell which.
_PRONOUNS = frozenset({"it", "them", "this", "that", "there", "one"})


def verdict_key(guard_id: str) -> str:
    """The blackboard key of a guard's verdict (``guard.key``), from its unique id
    (:func:`~bt_raider.robot.retarget.new_guard_id`): ``/`` and ``.`` become ``_``.

    (A ``/`` would nest namespaces; py_trees reads a ``.`` as an attribute of the value, so a
    guard named "check The cup, please." could not write its key.)
    """
    return f"{VERDICTS_NAMESPACE}/{guard_id.replace('/', '_').replace('.', '_')}"


_READER: list[Checker] = []


def _words_reader() -> Checker:
    """The symbolic reasoner that reads an instruction's words on a scene (made once)."""
    if not _READER:
        from bt_raider.checking.symbolic import SymbolicReasoner

        _READER.append(SymbolicReasoner())
    return _READER[0]


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class _Checked:
    """What a check's job brings back to the tick."""

    verdict: Any
    scene: Any
    data: dict[str, Any] | None
    query: Query
    steps: tuple[str, ...] = ()
    step_verdicts: list[tuple[str, Verdict]] | None = None
    #: A compound's step to recover now: its index, query and verdict in the current scene.
    step_issue: tuple[int, str, Verdict] | None = None
    step_reason: str = ""
    #: Per recovered action with an open designation: what its original words ground to now.
    reread: dict[int, dict[str, list[str]]] | None = None


class _QueryBuildError(Exception):
    """The user's query callable raised (reported as the guard's failure, not a check's)."""


class _Checking(py_trees.decorators.Decorator):
    """The check's side of :class:`~bt_raider.runtime.guards.RaiderGuard` (a mixin of it)."""

    # What this mixin uses of its host, declared for the type checker (this module may not
    # import ``guards``). The annotations make no class attributes; RaiderGuard.__init__ sets
    # them. The method stub exists only for the type checker; RaiderGuard defines it.
    checker: Checker
    scene: Any
    recovery: Recovery | None
    max_attempts: int
    executor: Executor | None
    deadline: float | None
    key: str
    resolved_key: str
    blackboard: py_trees.blackboard.Client
    phase: Phase
    query: Query | None
    verdict: Verdict | None
    attempts: int
    plan: RecoveryPlan | None
    resolved: ResolvedAction | None
    designation: GuardIntent | None
    refusal: str | None
    node_action: str | None
    _original_steps: list[str]
    _pending: worker.Pending[Any] | None
    _cancel_kw: bool
    _plain_key: bool
    _scene_seen: Any
    _recovery_error: str | None
    _asked: Query | None
    _retargeted: bool
    steps: list[str]
    step_verdicts: list[tuple[str, Verdict]]
    _recovering_step: int | None
    _recovered_steps: set[int]
    _early: tuple[Verdict, Callable[[Any], bool] | None] | None

    if TYPE_CHECKING:

        def _fail(self, reason: str) -> None: ...

    # ------------------------------------------------------------------ checking
    def _check_job(
        self,
        query: Query | None,
        build: Callable[[], Any] | None,
        steps: tuple[str, ...] = (),
        *,
        cancel: Any,
        reread: tuple[tuple[int, str], ...] = (),
    ) -> _Checked:
        """On the worker: build the query, observe the scene, check, serialise the verdict.

        A compound instruction (``steps``) is checked step by step here, each step on the state
        the earlier ones lead to (:func:`~bt_raider.checking.steps.check_steps`), so that each
        step's verdict -- and the scene its first issue is in -- is known for its recovery.
        """
        if build is not None:
            try:
                query = as_query(build())
            except Exception as exc:
                raise _QueryBuildError(_describe(exc)) from exc
            assert query is not None
            steps = compound_steps(query)
        assert query is not None
        argument_phrases(query)  # parsed here, off the tick, for the child's ResolvedAction
        scene = read_scene(self.scene)  # a dict from a callable becomes a Scene here
        if cancel.is_set():
            return _Checked(None, scene, None, query, steps)
        early, self._early = self._early, None
        if early is not None and (early[1] is None or early[1](scene)):
            # A look-ahead's forecast stands for this check (then re-checked as always).
            return _Checked(early[0], scene, early[0].as_dict(), query, steps)
        if steps and isinstance(scene, Scene):
            out = self._check_steps(scene, query, steps, cancel)
        else:
            verdict = self._check_one(scene, query, cancel)
            if (
                isinstance(verdict, Verdict)
                and verdict.category is Category.AMBIGUITY
                and isinstance(scene, Scene)
            ):
                # Named as a question names it: "Glass_2 (the full glass)", in feedback and trace.
                verdict.explanation = readable(scene, verdict.explanation)
            data = verdict.as_dict() if isinstance(verdict, Verdict) else None
            out = _Checked(verdict, scene, data, query, steps)
        if reread and isinstance(out.verdict, Verdict) and out.verdict.ok:
            out.reread = self._reread(scene, reread, cancel)
        return out

    def _reread(
        self, scene: Any, reread: tuple[tuple[int, str], ...], cancel: Any
    ) -> dict[int, dict[str, list[str]]]:
        """What the original words of each recovered action ground to in ``scene`` (the one a
        passing re-check saw): the designation of a phrase that grounded to nothing at first.

        Read by the symbolic reasoner's grounding, whatever the guard's checker: the words are
        read from the scene's facts, and a model checker is not asked twice.
        """
        if not isinstance(scene, Scene):
            return {}  # nothing to read the words on: the phrase stays open (refused)
        out: dict[int, dict[str, list[str]]] = {}
        reader = _words_reader()
        for index, text in reread:
            if cancel.is_set():
                break
            try:
                verdict = reader.check(scene, text)
            except Exception:  # noqa: BLE001 - nothing re-read: the phrase stays open (refused)
                continue
            if isinstance(verdict, Verdict):
                out[index] = {str(k): [str(i) for i in v] for k, v in verdict.grounding.items()}
        return out

    def _check_one(self, scene: Any, query: Query | str, cancel: Any) -> Any:
        if self._cancel_kw:
            return self.checker.check(scene, query, cancel=cancel)
        return self.checker.check(scene, query)

    def _check_steps(
        self, scene: Scene, query: Query, steps: tuple[str, ...], cancel: Any
    ) -> _Checked:
        checked: list[tuple[str, Verdict]] = []

        def one(work: Scene, text: str) -> Verdict:
            verdict = self._check_one(work, text, cancel)
            if not isinstance(verdict, Verdict):
                raise TypeError(f"the checker returned {verdict!r} for {text!r}, not a Verdict")
            checked.append((text, verdict))
            return verdict

        verdict = check_steps(one, scene, list(steps))
        out = _Checked(verdict, scene, verdict.as_dict(), query, steps, checked)
        index = next((i for i, (_, v) in enumerate(checked) if not v.ok), None)
        if index is None:
            return out
        text, issue = checked[index]
        if index > 0:
            # A recovery runs now, before the earlier steps: it can fix only an issue the step
            # has in the scene as it is (an ambiguity, a missing or far object), not one the
            # earlier steps would cause (a hand the first step fills).
            now = self._check_one(scene, text, cancel)
            if not isinstance(now, Verdict) or now.category is not issue.category:
                out.step_reason = (
                    f"no recovery: step {index + 1} of {len(steps)} ('{text}') has this issue "
                    "only after the earlier steps, so it cannot be fixed before the instruction "
                    "starts; give the steps one at a time"
                )
                return out
            issue = now
        out.step_issue = (index, text, issue)
        return out

    def _on_overdue(self, pending: worker.Pending[Any]) -> None:
        """Fail closed: the work passed its deadline, or could not start before it (every
        worker busy); a running job's thread gets replaced."""
        self._pending = None
        pending.abandon()
        if self.phase is Phase.PLANNING:
            explanation = self.verdict.explanation if self.verdict else ""
            self._fail(
                f"{explanation} (no recovery: planning passed its deadline of {self.deadline:g} s)"
            )
            return
        late = "could not start within" if pending.started_at is None else "passed"
        reason = (
            f"the check of {self.query or 'the query'} {late} its deadline of "
            f"{self.deadline:g} s: failing closed"
        )
        self._record(Verdict.unknown(reason))
        self._fail(reason)

    def _on_verdict(self, pending: worker.Pending[Any]) -> None:
        exc = pending.exception()
        if isinstance(exc, _QueryBuildError):  # a user callable: fail closed, say why
            self._fail(f"cannot build the query to check: {exc}")
            return
        if exc is not None:
            reason = f"the check of {self.query} failed: {_describe(exc)}"
            self._record(Verdict.unknown(reason))
            self._fail(reason)
            return
        checked: _Checked = pending.result()
        verdict, self._scene_seen, data, self.query = (
            checked.verdict,
            checked.scene,
            checked.data,
            checked.query,
        )
        if checked.steps and not self.steps:  # a query built on the worker: its steps
            self.steps = list(checked.steps)
            self._original_steps = list(checked.steps)
        self.step_verdicts = checked.step_verdicts or []
        if not isinstance(verdict, Verdict):
            reason = f"the checker returned {verdict!r} for {self.query}, not a Verdict"
            self._record(Verdict.unknown(reason))
            self._fail(reason)
            return
        self.verdict = verdict
        self._record(verdict, data)
        self._designate(verdict, checked)
        if self._refuse_other_action():
            return
        if verdict.ok:
            if self.plan is not None and self.recovery is not None:
                self.recovery.succeeded(self.plan)
            self.phase = _ACTING
            self.feedback_message = f"no issue: {verdict.explanation}"
            self._apply_retarget(verdict)  # last: a child whose retarget raises fails the run
            return
        explanation = verdict.explanation
        if verdict.category is Category.UNKNOWN:
            self._fail(explanation)
        elif self.recovery is None:
            self._fail(explanation)
        elif self.attempts >= self.max_attempts:
            extra = (
                f"; the last recovery failed: {self._recovery_error}"
                if self._recovery_error
                else ""
            )
            self._fail(f"{explanation} (gave up after {self.attempts} recovery attempt(s){extra})")
        elif self.steps and checked.step_issue is None:
            # A compound instruction whose failing step cannot be recovered on its own (or
            # whose steps could not be checked one by one, without a scene): recovering the
            # whole sentence as one action would pass unparsed text on.
            reason = (
                checked.step_reason or f"no recovery: the steps of {self.query} were not checked"
            )
            self._fail(f"{explanation} ({reason})")
        else:
            self.attempts += 1
            self.phase = Phase.PLANNING
            self.feedback_message = explanation
            request = self._recovery_request(verdict, checked)
            self._pending = worker.submit(
                self.recovery.plan, request, executor=self.executor, deadline=self.deadline
            )

    def _recovery_request(self, verdict: Verdict, checked: _Checked) -> RecoveryRequest:
        """The recovery's request: the action, or a compound's first step with an issue.

        A step is recovered on its own: its query (pronouns replaced) and its verdict in the
        scene as it is (what the recovery's actions will run in).
        """
        self._recovering_step = None
        scene = self._scene_seen
        holding = [o.name for o in getattr(scene, "holding", None) or []]
        designation = self.designation
        if self.steps and checked.step_issue is not None:
            index, text, step_verdict = checked.step_issue
            self._recovering_step = index
            if designation is not None and index < len(designation.actions):
                one = designation.actions[index]
                designation = GuardIntent(designation.query, (one,))
            return RecoveryRequest(
                action=text,
                verdict=step_verdict,
                holding=holding,
                scene=scene,
                designation=designation,
            )
        return RecoveryRequest(
            action=str(self.query),
            verdict=verdict,
            holding=holding,
            scene=scene,
            bindings=dict(self.query.bindings) if self.query is not None else {},
            designation=designation,
        )

    def _record(self, verdict: Verdict, data: dict[str, Any] | None = None) -> None:
        if data is None:
            data = verdict.as_dict()
        if self._plain_key and py_trees.blackboard.Blackboard.activity_stream is None:
            # Both keys are this guard's own (registered for writing, not remapped): store them
            # directly; the client's set() re-checks access on every call (~20 us each).
            storage = py_trees.blackboard.Blackboard.storage
            storage[self.key] = data
            storage[LAST_VERDICT] = data
            return
        self.blackboard.set(self.key, data)
        self.blackboard.set(LAST_VERDICT, data)

    # ------------------------------------------------------------------ the designation
    def _designate(self, verdict: Verdict, checked: _Checked) -> None:
        """Keep what the instruction's words designate (see :mod:`bt_raider.robot.designation`).

        An action (a compound's step) no recovery has changed yet is read from this check's
        grounding of its own words; once a recovery has replaced its arguments, its
        designation is the one read before (narrowed by the person's answers in
        ``_refine_query``), and only a phrase that grounded to nothing then is filled from
        what its original words ground to now (``checked.reread``).
        """
        assert self.query is not None
        if self.steps:
            texts = self.step_verdicts or [
                (text, Verdict(Category.NONE, "", grounding=verdict.grounding))
                for text in self.steps
            ]
            fresh = [
                (
                    v.action or argument_phrases(Query(t))[0],
                    argument_phrases(Query(t))[1],
                    self._candidates(v),
                )
                for t, v in texts
            ]
            recovered = self._recovered_steps
        else:
            name, phrases = argument_phrases(self.query)
            fresh = [(verdict.action or name, phrases, self._candidates(verdict))]
            recovered = {0} if self._asked is not None else set()
        now = GuardIntent.read(str(self._asked or self.query), fresh)
        old = self.designation
        if old is None or len(old.actions) != len(now.actions):
            self.designation = now
        else:
            keep: list[Designated] = [
                old.actions[i] if i in recovered else now.actions[i]
                for i in range(len(now.actions))
            ]
            self.designation = GuardIntent(old.query, tuple(keep))
        for index, grounding in (checked.reread or {}).items():
            self.designation = self.designation.reread(index, grounding)

    def _refuse_other_action(self) -> bool:
        """Fail the run, before any recovery moves the robot, when the child says it does
        another kind of action than the words ask (:func:`~bt_raider.robot.designation.
        other_action`: "The cup, please." asks for a handover, the child picks)."""
        if self.designation is None:
            return False
        actions = self.recovery.actions if self.recovery is not None else None
        own = actions.verb_of if actions is not None else None
        why = other_action(self.designation, self.decorated, own, declared=self.node_action)
        if why is None:
            return False
        self.refusal = f"refused to run {self.decorated.name}: {why}"
        self._fail(self.refusal)
        return True

    def _candidates(self, verdict: Verdict) -> dict[str, list[str]]:
        """The verdict's grounding, a phrase with words left over widened to what the person
        may mean (:func:`~bt_raider.robot.designation.unclear_candidates`)."""
        return unclear_candidates(
            verdict.grounding,
            ambiguity=verdict.category is Category.AMBIGUITY,
            explanation=verdict.explanation,
            scene=self._scene_seen if isinstance(self._scene_seen, Scene) else None,
        )

    def _reread_texts(self) -> tuple[tuple[int, str], ...]:
        """The recovered actions whose designation is open, with their original words."""
        designation = self.designation
        if designation is None or not designation.open:
            return ()
        out: list[tuple[int, str]] = []
        for index, one in enumerate(designation.actions):
            if not one.open:
                continue
            if self.steps and index in self._recovered_steps and index < len(self._original_steps):
                out.append((index, self._original_steps[index]))
            elif not self.steps and index == 0 and self._asked is not None:
                out.append((0, self._asked.text))
        return tuple(out)

    # ------------------------------------------------------------------ retargeting
    def _apply_retarget(self, verdict: Verdict) -> None:
        """Tell the child what the passing check resolved its action to (before its tick).

        On the blackboard at :attr:`resolved_key`, and through ``child.retarget(resolved)``
        when the child is :class:`~bt_raider.robot.retarget.Retargetable`. A retarget that
        raises fails the run (the child would act on the wrong thing).
        """
        assert self.query is not None
        if self.steps:
            # Step by step, never the whole sentence; a checker that saw the sentence whole (no
            # scene to check the steps on) lends each step its grounding.
            steps = self.step_verdicts or [
                (text, Verdict(Category.NONE, verdict.explanation, grounding=verdict.grounding))
                for text in self.steps
            ]
            resolved = resolve_steps(verdict, self.query, steps, self._recovered_steps)
            vague = [a for step in resolved.steps for a in step.args if a.lower() in _PRONOUNS]
            if vague:  # "put it in the bowl" with no scene to tell what "it" is: never guess
                self._fail(
                    f"cannot tell what {vague[0]!r} means in {self.query}: its steps were not "
                    "checked one by one (no scene); give the object by name"
                )
                return
        else:
            resolved = resolve_action(verdict, self.query, asked=self._asked)
        # The release invariant, checked here whatever the planner and the verifier proved:
        # the child acts only on what the instruction's words (and the person's answers) allow.
        seen = self._scene_seen if isinstance(self._scene_seen, Scene) else None
        problems = outside(self.designation, resolved, seen) if self.designation else []
        if problems:
            self.refusal = (
                f"refused to run {self.decorated.name}: {'; '.join(problems)}; a recovery may "
                "move, open, clear a blocker or fetch a tool, never act on something else in "
                "place of what was asked"
            )
            self._fail(self.refusal)
            return
        self.resolved = resolved
        self.blackboard.set(self.resolved_key, resolved.as_dict())
        child = self.decorated
        # Retargetable's duck test, without isinstance's cost on a protocol (100s of us a tick).
        retarget = getattr(child, "retarget", None)
        if not callable(retarget):
            return
        try:
            retarget(resolved)
        except Exception as exc:
            self._fail(f"{child.name}.retarget({', '.join(resolved.args)}) raised {_describe(exc)}")
            return
        self._retargeted = True

    def _restore_child(self) -> str | None:
        """A new run: forget the last resolution; the child acts on its own arguments again.

        Returns:
            why the run cannot start (the child's ``retarget(None)`` raised), else None.
        """
        if self.resolved is not None:
            self.resolved = None
            self.blackboard.unset(self.resolved_key)
        if not self._retargeted:
            return None
        self._retargeted = False
        child = self.decorated
        try:
            child.retarget(None)  # type: ignore[attr-defined]
        except Exception as exc:
            return f"{child.name}.retarget(None) raised {_describe(exc)}"
        return None
