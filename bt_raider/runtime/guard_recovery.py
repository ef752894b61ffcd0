"""A guard's recovery: from an issue to a re-check of the action.

Part of :class:`~bt_raider.runtime.guards.RaiderGuard`, mixed into it. When a check finds an
issue and attempts are left, the recovery is planned on a worker (PLANNING); its plan is
compiled to a subtree the guard ticks from inside (RECOVERING); when the subtree succeeds the
action is checked again, on the arguments the plan resolved (e.g. the cup the person named).
A plan that cannot be made, a recovery that gives up or fails for good, ends the run in
FAILURE with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import py_trees
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.verdict import Verdict
from bt_raider.errors import BtRaiderError
from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace
from bt_raider.recovery.contract import RecoveryPlan
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.safecode import Ref
from bt_raider.robot import worker
from bt_raider.robot.actions import Var, clear_vars
from bt_raider.robot.designation import GuardIntent
from bt_raider.runtime.guard_check import Phase, _describe
from bt_raider.runtime.scenes import read_scene


class _Recovering(py_trees.decorators.Decorator):
    """The recovery's side of :class:`~bt_raider.runtime.guards.RaiderGuard` (a mixin of it)."""

    # What this mixin uses of its host, declared for the type checker (this module may not
    # import ``guards``). The annotations make no class attributes; RaiderGuard.__init__ sets
    # them. The method stubs exist only for the type checker; RaiderGuard defines them.
    recovery: Recovery | None
    scene: Any  # the guard's scene source (a Scene, or a callable returning one)
    phase: Phase
    query: Query | None
    verdict: Verdict | None
    plan: RecoveryPlan | None
    recovery_tree: py_trees.behaviour.Behaviour | None
    vars_id: str
    vars_scope: str
    _recovery_runs: int
    _vars_live: bool
    _recovery_error: str | None
    _asked: Query | None
    _scene_seen: Any
    designation: GuardIntent | None
    steps: list[str]
    _recovering_step: int | None
    _recovered_steps: set[int]

    if TYPE_CHECKING:

        def _fail(self, reason: str) -> None: ...
        def _submit_check(self, build: Callable[[], Any] | None = None) -> None: ...

    # ------------------------------------------------------------------ recovering
    def _on_plan(self, pending: worker.Pending[Any]) -> None:
        exc = pending.exception()
        explanation = self.verdict.explanation if self.verdict else ""
        if exc is not None:
            self._fail(f"{explanation} (no recovery: {_describe(exc)})")
            return
        assert self.recovery is not None  # PLANNING only happens with a recovery
        self.plan = pending.result()
        self._drop_recovery_tree()
        # Each recovery run writes its variables in its own scope: another guard's (or an
        # earlier run's) `choice = ask(...)` never lands in this run's `choice`.
        self._recovery_runs += 1
        self.vars_scope = f"{self.vars_id}/{self._recovery_runs}"
        self._vars_live = True
        # With a live scene source a reply is read from where the robot stands as it asks.
        observe = partial(read_scene, self.scene) if callable(self.scene) else None
        tree = self.recovery.compile(
            self.plan, name=f"Recovery {self.name}", scope=self.vars_scope, observe=observe
        )
        tree.parent = self
        self.recovery_tree = tree
        self.phase = Phase.RECOVERING
        code = "; ".join(self.plan.code.splitlines())
        self.feedback_message = f"recovering from: {explanation} -> {code}"

    def _after_recovery_tick(self) -> None:
        tree = self.recovery_tree
        assert tree is not None and self.plan is not None
        if tree.status == Status.RUNNING:
            tip = tree.tip()
            if tip is not None and tip.feedback_message:
                self.feedback_message = f"recovering: {tip.feedback_message}"
            return
        explanation = self.verdict.explanation if self.verdict else ""
        if tree.status == Status.SUCCESS:
            self._recovery_error = None
            if self.plan.gives_up:
                said = "; ".join(str(s.args[0]) for s in self.plan.program.steps)
                self._fail(f"{explanation} (told the person: {said})")
                return
            self._refine_query()
            self._clear_vars()  # read into the query: the run's variables are done with
        else:
            failed = next(
                (n for n in tree.iterate() if n.status == Status.FAILURE and n is not tree), tree
            )
            self._recovery_error = f"{failed.name}: {failed.feedback_message or 'failed'}"
            self._clear_vars()
            if getattr(failed, "final", False):  # the person does not know or refused: stop
                self._fail(f"{explanation} (recovery stopped: {self._recovery_error})")
                return
        self._submit_check()

    def _narrow_by_answers(self) -> None:
        """Every answer of this recovery run that named one of the designated objects narrows
        the designation to it, whether the plan's resume step uses the answer or not: a plan
        that asks "which cup?" and then names the other cup is refused at release."""
        if self.designation is None or self.plan is None:
            return
        scene = self._scene_seen if isinstance(self._scene_seen, Scene) else None
        for var in self.plan.program.variables:
            try:
                value = py_trees.blackboard.Blackboard.get(Var(var, self.vars_scope).key)
            except KeyError:
                continue
            self.designation = self.designation.chosen_as(self._answer_ref(scene, str(value)))

    def _answer_ref(self, scene: Scene | None, value: str) -> str:
        """The objectId an answer names: itself, the scene's object of that name, or, for a
        reply no step read (the plan asked and did not use it), the designated candidate the
        reply names, read as the person's reply to "which one?" (else the reply as said)."""
        if scene is None:
            return value
        if scene.has(value):
            return scene.resolve(value).id
        assert self.designation is not None
        for one in self.designation.actions:
            for allowed in one.allowed:
                if allowed is None or len(allowed) < 2:
                    continue
                try:
                    reading = AnswerSpace.objects(scene, sorted(allowed)).read(value)
                except BtRaiderError:
                    continue
                if reading.usable and str(reading.value) in allowed:
                    return str(reading.value)
        return value

    def _refine_query(self) -> None:
        """Re-check the action on the resume step's arguments (e.g. the person's answer)."""
        self._narrow_by_answers()
        resume = self.plan.resume if self.plan is not None else None
        if resume is None or self.query is None:
            return
        values: list[Any] = []
        answered: list[tuple[int, Any]] = []  # (argument index, the person's answer)
        for index, arg in enumerate(resume.args):
            if isinstance(arg, Ref):
                try:
                    key = Var(arg.name, self.vars_scope).key
                    values.append(py_trees.blackboard.Blackboard.get(key))
                except KeyError:
                    return  # nothing to refine with: re-check the query as it was
                answered.append((index, values[-1]))
            else:
                values.append(arg)
        text = f"{resume.action}({', '.join(str(v) for v in values)})"
        step = self._recovering_step
        if self.designation is not None:
            # The person's answer narrows what the instruction designates: a later recovery
            # of this action may not release it on another of the candidates she was offered.
            for index, value in answered:
                self.designation = self.designation.narrowed(step or 0, index, str(value))
        if self.steps and step is not None and step < len(self.steps):
            # A compound instruction: only the recovered step changes; the others are checked
            # again as they were written (their pronouns resolved anew).
            self.steps[step] = text
            self._recovered_steps.add(step)
            self.query = Query(", then ".join(self.steps))
            return
        if self._asked is None:
            self._asked = self.query  # its PDDL bindings still name the parameters
        self.query = Query(text, preconditions=self.query.preconditions, bindings={})

    def _clear_vars(self) -> None:
        """Forget the current recovery run's variables (``/bt_raider/vars/<scope>/...``)."""
        if self._vars_live:  # once per run: clearing reads every key of the blackboard
            self._vars_live = False
            clear_vars(self.vars_scope)

    def _drop_recovery_tree(self) -> None:
        self._clear_vars()
        tree = self.recovery_tree
        if tree is None:
            return
        if tree.status == Status.RUNNING:
            tree.stop(Status.INVALID)
        # Recovery nodes are throwaway: release their blackboard clients.
        for node in tree.iterate():
            for client in node.blackboards:
                try:
                    client.unregister(clear=False)
                except KeyError:
                    pass
        self.recovery_tree = None
