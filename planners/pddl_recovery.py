"""A PDDL recovery planner: make the failed action's preconditions true, by planning.

:class:`PddlRecoveryPlanner` implements :class:`bt_raider.recovery.pipeline.RecoveryPlanner`. Given a request
for a PDDL action whose preconditions do not hold, it plans from the world's *current* state
to a state where they all hold and writes the plan as RAIDER recovery code, ending with the
action itself (the guard's resume step)::

    move('roomb', 'rooma')
    pick('ball1', 'rooma', 'left')

PDDL names that are not Python identifiers (``pick-up``) are written with ``_``
(``pick_up``); :func:`vocabulary` lists the domain's actions for the code whitelist, and the
world matches ``pick_up`` back to ``pick-up``. When no plan exists, the code only ``say``\\ s
why, so the guard fails with that explanation.

:class:`PddlVerifier` proves a recovery plan with the domain before it runs (the
:class:`bt_raider.recovery.verify.Verifier` protocol): each robot step must be applicable in the
state the earlier ones lead to (unified-planning's ``SequentialSimulator``, from the world's
state when the plan was made) and the recovered action applicable after the last one.
``PddlRecoveryPlanner.verifier`` is one for its world, so ``Recovery(PddlRecoveryPlanner(world), ...)``
verifies in the domain without being told; give it to ``Recovery(verifier=...)`` to verify
plans of another planner (an LLM's) against the domain. A refuted plan never starts; when every
proposal is refuted, ``Recovery.plan`` raises ``bt_raider.recovery.verify.Unrecoverable`` and
``Recovery.unrecoverable`` says why (what :mod:`bt_raider.planners.replan` reacts to).
"""

from __future__ import annotations

import re
import threading
import weakref
from typing import TYPE_CHECKING, Any

from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import PlanningError, QueryError, renamed
from bt_raider.planners.pddl import Step, parse_step, plan_steps, resolve, solve
from bt_raider.planners.preconditions import ground_preconditions
from bt_raider.planners.world import PddlWorld
from bt_raider.recovery.contract import Proof, RecoveryPlan, RecoveryRequest
from bt_raider.recovery.robot_actions import RobotActions
from bt_raider.recovery.safecode import INTERACTION_ACTIONS, CodeStep, Vocabulary
from bt_raider.recovery.verify import (
    resume_values,
    step_label,
    value_of,
    walk_robot_steps,
)

if TYPE_CHECKING:
    from unified_planning.model import Problem, State


def code_name(name: str) -> str:
    """A PDDL name as a Python identifier: ``pick-up`` -> ``pick_up``."""
    out = re.sub(r"\W", "_", name)
    return out if out[:1].isalpha() else f"a_{out}"


def code_line(step: Step) -> str:
    """``pick('ball1', 'rooma', 'left')``."""
    return f"{code_name(step.name)}({', '.join(repr(str(a)) for a in step.args)})"


def vocabulary(problem: Problem, base: Vocabulary | None = None) -> Vocabulary:
    """RAIDER's vocabulary plus every action of ``problem`` with its PDDL arity.

    Raises:
        PlanningError: a domain action is named like an interaction action (ask, say, wait_for).
    """
    vocab = base.copy() if base is not None else Vocabulary()
    for action in problem.actions:
        name = code_name(action.name)
        if name in INTERACTION_ACTIONS:
            raise PlanningError(
                f"domain action {action.name!r} clashes with the interaction action {name!r}"
            )
        params = " ".join(p.name for p in action.parameters)
        vocab.register(name, len(action.parameters), usage=f"{name}({params})")
    return vocab


def domain_actions(problem: Problem, mapping: dict[str, str] | None = None) -> RobotActions:
    """The domain's operators as the actions a recovery may use (``Recovery(actions=...)``).

    Each operator is matched to RAIDER's verb it means (``drive`` -> ``move_to``, ``pick-up``
    -> ``pick``); one that means none keeps its PDDL arity. ``mapping`` gives pairs explicitly.
    """
    names = [code_name(a.name) for a in problem.actions]
    arities = {code_name(a.name): len(a.parameters) for a in problem.actions}
    return RobotActions.from_names(names, arities=arities, mapping=mapping)


class PddlRecoveryPlanner:
    """Recovery code from a PDDL plan to the failed action's preconditions.

    Args:
        world: the world whose current state plans start from; a UP problem is wrapped in a
            fresh :class:`~bt_raider.planners.world.PddlWorld` (its initial state).
        engine: planning engine (``auto``: see :func:`~bt_raider.planners.pddl.choose_engine`).
        timeout: planning time limit in seconds.
    """

    def __init__(
        self, world: PddlWorld | Problem, *, engine: str = "auto", timeout: float | None = 30.0
    ) -> None:
        self.world = world if isinstance(world, PddlWorld) else PddlWorld(world)
        self.engine = engine
        self.timeout = timeout
        self.verifier = PddlVerifier(self.world)

    def steps_for(self, step: Step) -> list[Step]:
        """The steps that make ``step``'s preconditions hold, from the current state.

        Raises:
            QueryError: ``step`` is not an action of the domain (or has bad arguments).
            PlanningError: no plan reaches its preconditions.
        """
        problem = self.world.problem
        action, objects = resolve(problem, step)
        goals = ground_preconditions(problem, action, objects)
        target = self.world.current_problem(goals)
        target.name = f"{problem.name}_recover_{code_name(action.name)}"
        return plan_steps(solve(target, self.engine, self.timeout))

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        """Recovery code for ``request`` (see the module docstring)."""
        if cancel is not None and cancel.is_set():
            return _say("Recovery planning was cancelled.")
        try:
            step = parse_step(request.action)
            action, objects = resolve(self.world.problem, step)
        except QueryError as exc:
            return _say(f"I cannot plan a recovery for {request.action}: {exc}")
        step = Step(action.name, [o.name for o in objects])
        try:
            steps = self.steps_for(step)
        except PlanningError as exc:
            return _say(f"I cannot make {step.text} possible: {exc}")
        if not steps:
            # Symbolically nothing is missing: the issue is one the plan's model cannot see.
            reason = " ".join(request.verdict.explanation.split())
            return _say(f"My plan sees nothing to fix for {step.text}, yet: {reason}")
        return "\n".join([*(code_line(s) for s in steps), code_line(step)])


class PddlVerifier:
    """Prove a recovery plan in the PDDL domain before it runs (see the module docstring).

    Args:
        world: the world whose state plans start from; a UP problem is wrapped in a fresh
            :class:`~bt_raider.planners.world.PddlWorld` (its initial state).

    The state a plan is verified from is the world's state the first time the verifier sees
    the plan (when ``Recovery.plan`` proves it), so the verification after an answer replays
    the whole plan from where it started, not from where its first steps have led since.
    """

    def __init__(self, world: PddlWorld | Problem) -> None:
        self.world = world if isinstance(world, PddlWorld) else PddlWorld(world)
        self._starts: dict[int, State] = {}
        self._lock = threading.Lock()

    def _start(self, plan: RecoveryPlan) -> State:
        key = id(plan)
        with self._lock:
            state = self._starts.get(key)
            if state is None:
                state = self.world.state
                self._starts[key] = state
                weakref.finalize(plan, self._starts.pop, key, None)
        return state

    def verify(
        self,
        plan: RecoveryPlan,
        request: RecoveryRequest,
        answers: dict[str, str] | None = None,
    ) -> Proof:
        """Simulate ``plan``'s robot steps, then check the recovered action is applicable."""
        if plan.gives_up:
            return Proof(True, "the plan only says why the action cannot be done")
        answers = dict(answers or {})
        state = self._start(plan)

        def act(code_step: CodeStep) -> str | None:
            nonlocal state
            step = Step(code_step.action, [str(value_of(a, answers)) for a in code_step.args])
            failure, state = self._apply(step, state)
            return None if failure is None else f"{step_label(plan, code_step)}: {failure}"

        walked = walk_robot_steps(plan, answers, act)
        if isinstance(walked, Proof):
            return walked
        checked = walked
        if plan.resume is not None:
            values = resume_values(plan, answers, checked)
            if isinstance(values, Proof):
                return values
            final = Step(plan.resume.action, values)
        else:
            try:
                final = parse_step(request.action)
            except QueryError as exc:
                return Proof(False, f"cannot read the recovered action: {exc}", checked)
        try:
            report = self.world.preconditions.report(final, state)
        except QueryError as exc:
            return Proof(False, f"after the plan, {final.text} cannot be checked: {exc}", checked)
        if report.applicable:
            return Proof(
                True, f"after {checked} step(s), {report.step.text} is applicable", checked
            )
        return Proof(
            False,
            f"after the plan, {report.step.text} would still fail: unsatisfied preconditions "
            f"{', '.join(report.unsatisfied)}",
            checked,
        )

    def _apply(self, step: Step, state: State) -> tuple[str | None, State]:
        """``(why step cannot run, state)``, or ``(None, the state after it)``."""
        try:
            action, objects = resolve(self.world.problem, step)
            report = self.world.preconditions.report(step, state)
        except QueryError as exc:
            return str(exc), state
        if not report.applicable:
            return f"unsatisfied preconditions {', '.join(report.unsatisfied)}", state
        with self.world.preconditions.lock:
            new = self.world.simulator.apply(state, action, objects)
        if new is None:
            return "the simulator cannot apply it", state
        return None, new


def _say(text: str) -> str:
    return f"say({text[:300]!r})"


def propose_for(world: PddlWorld, action: str, **options: Any) -> str:
    """One-shot: the recovery code for ``action`` (``(pick ball1 rooma left)``) in ``world``."""
    request = RecoveryRequest(action, Verdict(Category.WRONG_STATE, "preconditions do not hold"))
    return PddlRecoveryPlanner(world, **options).propose(request)


#: The name before 0.2 (a recovery *planner*, passed into ``Recovery``), for one release.
__getattr__ = renamed(
    __name__,
    {"PddlRecovery": ("bt_raider.planners.pddl_recovery.PddlRecoveryPlanner", PddlRecoveryPlanner)},
)
