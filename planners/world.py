"""A simulated world over a PDDL state: run plans, change facts under them, replan from it.

:class:`PddlWorld` executes grounded actions with UP's ``SequentialSimulator``: an action whose
preconditions do not hold raises :class:`~bt_raider.errors.ActionFailed` naming them, exactly
where a real robot's action would fail. Wrapped in :class:`bt_raider.robot.actions.SyncRobot` it is
the Robot a plan tree runs on, so every classical domain runs to its goal in simulation::

    world = PddlWorld(problem)
    tree = plan_to_tree(solve(problem), robot_actions(SyncRobot(world)))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from bt_raider.checking.contract import Query
from bt_raider.errors import ActionFailed, QueryError
from bt_raider.planners.pddl import (
    Step,
    conjuncts,
    fact_text,
    parse_step,
    pddl_text,
    resolve,
    simulator,
)
from bt_raider.planners.preconditions import PreconditionReport, Preconditions

if TYPE_CHECKING:
    from unified_planning.model import FNode, Problem, State


def parse_fact(problem: Problem, fact: str) -> FNode:
    """The UP fluent expression of ``(at ball1 rooma)`` or ``at(ball1, rooma)``.

    Raises:
        QueryError: unknown predicate or object, or wrong arity (names the valid options).
    """
    step = parse_step(fact)
    names = {f.name.lower(): f for f in problem.fluents}
    fluent = names.get(step.name.lower())
    if fluent is None:
        raise QueryError(
            f"unknown predicate {step.name!r} in {fact!r}: expected one of "
            f"{', '.join(sorted(f.name for f in problem.fluents))}"
        )
    if fluent.arity != len(step.args):
        raise QueryError(f"{fact!r}: {fluent.name} takes {fluent.arity} argument(s)")
    objects = {o.name.lower(): o for o in problem.all_objects}
    args = []
    for arg in step.args:
        obj = objects.get(arg.lower())
        if obj is None:
            raise QueryError(f"{fact!r}: no object {arg!r} in problem {problem.name!r}")
        args.append(obj)
    return fluent(*args)


def problem_at(problem: Problem, state: State, goals: Iterable[FNode] | None = None) -> Problem:
    """A copy of ``problem`` whose initial state is ``state`` (and goals ``goals`` if given).

    Every boolean fluent instance and every explicitly initialised numeric one takes its value
    in ``state``, so a planner starts from where the world is now.
    """
    from unified_planning.model.fluent import get_all_fluent_exp

    new = problem.clone()
    for fluent in problem.fluents:
        if fluent.type.is_bool_type():
            for fe in get_all_fluent_exp(problem, fluent):
                new.set_initial_value(fe, state.get_value(fe))
    for fe in problem.explicit_initial_values:
        if not fe.fluent().type.is_bool_type():
            new.set_initial_value(fe, state.get_value(fe))
    if goals is not None:
        new.clear_goals()
        for goal in goals:
            new.add_goal(goal)
    return new


class PddlWorld:
    """A PDDL state that actions change: the simulated executor of a plan.

    Implements :class:`bt_raider.robot.actions.Executor` (``execute``, ``observe``) and
    :class:`~bt_raider.planners.preconditions.PreconditionSource` (``query``), so the same
    world runs the actions and answers what their preconditions are *now*.

    Args:
        problem: the UP problem (its initial state is the world's first state).
        state: start from this state instead.
        names: PDDL object name -> scene name, for the bindings of queries.

    Attributes:
        state: the current UP state (replaced, never mutated, by each change).
        history: the steps executed so far, in order.
    """

    def __init__(
        self,
        problem: Problem,
        *,
        state: State | None = None,
        names: dict[str, str] | None = None,
    ) -> None:
        self.problem = problem
        self.simulator = simulator(problem)
        self.state: State = state if state is not None else self.simulator.get_initial_state()
        self.history: list[Step] = []
        self.preconditions = Preconditions(
            problem, lambda: self.state, names=names, sim=self.simulator
        )
        self._lock = self.preconditions.lock  # ticks execute while checks on workers read

    # ---------------------------------------------------------------- Executor
    def execute(self, action: str, args: Sequence[Any]) -> str:
        """Apply ``action(*args)`` to the state.

        Returns:
            ``"(pick ball1 rooma left) done"``.

        Raises:
            ActionFailed: unknown action or object, or preconditions that do not hold (the
                message lists them); the state is left unchanged.
        """
        step = Step(str(action), [str(a) for a in args])
        with self._lock:
            try:
                act, objects = resolve(self.problem, step)
                rep = self.preconditions.report(step)
            except QueryError as exc:
                raise ActionFailed(f"{pddl_text(step)} failed: {exc}") from exc
            if not rep.applicable:
                raise ActionFailed(
                    f"{rep.step.text} failed: unsatisfied preconditions "
                    f"{', '.join(rep.unsatisfied)}"
                )
            new = self.simulator.apply(self.state, act, objects)
            if new is None:  # conflicting effects or a violated invariant
                raise ActionFailed(f"{rep.step.text} failed: the simulator cannot apply it")
            self.state = new
            self.history.append(rep.step)
        return f"{rep.step.text} done"

    def observe(self) -> None:
        """A PDDL world has no scene; checks use the symbolic state (see PddlChecker)."""
        return None

    # ---------------------------------------------------------------- state
    def goal_reached(self) -> bool:
        with self._lock:
            return bool(self.simulator.is_goal(self.state))

    def unsatisfied_goals(self) -> list[str]:
        """The goal conjuncts that do not hold yet, as PDDL text."""
        with self._lock:
            state = self.state
            goals = self.simulator.get_unsatisfied_goals(state)
        parts = [part for goal in goals for part in conjuncts(goal)]
        return [fact_text(p) for p in parts if not self.preconditions.holds(p, state)]

    def holds(self, fact: str) -> bool:
        """True when the fact ``(at ball1 rooma)`` holds now."""
        fe = parse_fact(self.problem, fact)
        return self.state.get_value(fe).bool_constant_value()

    def set(self, fact: str, value: bool = True) -> None:
        """Change a fact under the plan (what the world does while the robot is not looking)."""
        fe = parse_fact(self.problem, fact)
        em = self.problem.environment.expression_manager
        with self._lock:
            self.state = self.state.make_child({fe: em.Bool(value)})

    def facts(self) -> list[str]:
        """Every boolean fact that holds now, sorted, as PDDL text."""
        from unified_planning.model.fluent import get_all_fluent_exp

        out = []
        with self._lock:
            state = self.state
        for fluent in self.problem.fluents:
            if fluent.type.is_bool_type():
                for fe in get_all_fluent_exp(self.problem, fluent):
                    if state.get_value(fe).bool_constant_value():
                        out.append(fact_text(fe))
        return sorted(out)

    def current_problem(self, goals: Iterable[FNode] | None = None) -> Problem:
        """The problem with the current state as initial state (for replanning)."""
        with self._lock:
            state = self.state
        return problem_at(self.problem, state, goals)

    # ---------------------------------------------------------------- checks
    def report(self, step: Step | str) -> PreconditionReport:
        return self.preconditions.report(step)

    def query(self, step: Step | str) -> Query:
        """The query of ``step`` with its preconditions in the current state."""
        return self.preconditions.query(step)

    def is_applicable(self, step: Step | str) -> bool:
        return self.preconditions.is_applicable(step)

    def __repr__(self) -> str:
        return f"PddlWorld({self.problem.name!r}, {len(self.history)} steps executed)"


def run_plan(world: PddlWorld, steps: Iterable[Step]) -> None:
    """Execute ``steps`` in ``world`` directly (no tree); raises ActionFailed at the first failure."""
    for step in steps:
        world.execute(step.name, step.args)
