"""Look ahead in a PDDL plan: push the steps left through UP's sequential simulator.

While step *k* of a plan runs, :class:`PddlForecaster` takes the state the world is in now (a
:class:`~bt_raider.planners.world.PddlWorld`'s, a UP state, or facts a user's function reads
off the scene), applies step *k*'s effects, and walks steps *k+1* ... *k+depth* through
unified-planning's ``SequentialSimulator`` (the ``sequential_simulator`` engine,
``UPSequentialSimulator``, built by :func:`~bt_raider.planners.pddl.simulator`): the first step
whose preconditions will not hold is a :class:`~bt_raider.runtime.lookahead.Forecast` naming
them::

    world = PddlWorld(problem)
    plan = solve(problem)
    tree = LookAhead(
        plan_to_tree(plan, robot_actions(SyncRobot(world)), guard=...),
        PddlForecaster(world, plan),
        policy="warn",
    )

Step *k*'s effects are applied without checking its preconditions (whether it can run is its
guard's business; the later steps are judged as if its issue gets resolved). Its boolean effects
are applied again even if a world that executes actions at once (a ``PddlWorld`` behind a
``SyncRobot``) already shows them, which changes nothing: setting a fact that holds is a no-op.

UP's expression walkers belong to its environment and are not thread-safe: on a ``PddlWorld``
the forecaster takes the world's lock for each step it simulates (never for the whole plan),
so the tick's ``execute`` waits at most for one step's check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from bt_raider.checking.contract import Query
from bt_raider.checking.verdict import Category
from bt_raider.planners.pddl import GroundingError, Step, parse_step, plan_steps, resolve, simulator
from bt_raider.planners.preconditions import PddlChecker, Preconditions
from bt_raider.planners.world import PddlWorld, parse_fact
from bt_raider.runtime.forecast import _describe
from bt_raider.runtime.lookahead import Forecast, explain, unknown_forecast, window
from bt_raider.runtime.scenes import SceneLike, read_scene, scene_source

if TYPE_CHECKING:
    from unified_planning.model import Problem, State

__all__ = ["Forecast", "PddlForecaster", "forecast_pddl", "state_from_facts"]


def action_text(step: Step) -> str:
    """``handover(robot, medicine_1, alice)``: a step as the forecasts name it."""
    return f"{step.name}({', '.join(step.args)})"


def _steps(plan: Any) -> list[Step]:
    if hasattr(plan, "actions"):
        return plan_steps(plan)
    out = []
    for item in plan:
        if isinstance(item, Step):
            out.append(item)
        elif isinstance(item, str):
            out.append(parse_step(item))
        elif hasattr(item, "actual_parameters"):  # a UP ActionInstance
            out.extend(plan_steps([item]))
        else:
            raise TypeError(
                f"a plan step must be a Step, its text or an ActionInstance, got {item!r}"
            )
    return out


def state_from_facts(problem: Problem, facts: Iterable[str], sim: Any = None) -> State:
    """The state in which exactly ``facts`` hold (closed world; numbers as initially).

    Raises:
        QueryError: a fact names an unknown predicate or object (see
            :func:`~bt_raider.planners.world.parse_fact`).
    """
    sim = sim if sim is not None else simulator(problem)
    em = problem.environment.expression_manager
    # Repeats are parsed once: 200,000 copies of a fact cost one parse, not 200,000.
    listed = list(facts)
    try:
        distinct: Iterable[str] = dict.fromkeys(listed)
    except TypeError:  # an unhashable "fact": parse_fact says what is wrong with it
        distinct = listed
    from unified_planning.model.fluent import get_all_fluent_exp

    true = {parse_fact(problem, f) for f in distinct}
    values = {}
    for fluent in problem.fluents:
        if fluent.type.is_bool_type():
            for fe in get_all_fluent_exp(problem, fluent):
                values[fe] = em.Bool(fe in true)
    return sim.get_initial_state().make_child(values)


def _is_false(condition: str) -> str:
    return f"{condition} is false" if condition.startswith("(") else condition


class PddlForecaster:
    """Looks ahead in a PDDL plan (a :class:`~bt_raider.runtime.lookahead.Forecaster`).

    Args:
        problem: the UP problem, or a :class:`~bt_raider.planners.world.PddlWorld` (then its
            problem, and its live state unless ``state`` says otherwise).
        plan: a UP ``SequentialPlan`` or the steps (:class:`Step`, their text, or UP action
            instances).
        state: where the world is now: None (the world's state, else the problem's initial
            state), a UP state, a ``PddlWorld``, or a callable returning a UP state or an
            iterable of facts (``["(robot_at tiago home)", ...]``); called on the worker.
        scene: with ``facts``: the scene source (``robot.observe``), read on the worker.
        facts: ``scene -> facts`` (PDDL text), a user's function reading the state off the
            scene; the closed-world state of those facts is the current state.
        categories: fluent name -> issue category, as for
            :class:`~bt_raider.planners.preconditions.PddlChecker` (default ``wrong_state``).
        default: the category no mapping covers.
    """

    def __init__(
        self,
        problem: Problem | PddlWorld,
        plan: Any,
        state: Any = None,
        *,
        scene: SceneLike = None,
        facts: Callable[[Any], Iterable[str]] | None = None,
        categories: dict[str, str | Category] | None = None,
        default: str | Category = Category.WRONG_STATE,
    ) -> None:
        world = problem if isinstance(problem, PddlWorld) else None
        if world is not None and state is None:
            state = world
        self.problem: Problem = world.problem if world is not None else problem
        if facts is not None and not callable(facts):
            raise TypeError(f"facts must be a function scene -> facts, got {facts!r}")
        if facts is not None and scene is None:
            raise ValueError("facts= reads the state off a scene: give scene= too")
        self.world = state if isinstance(state, PddlWorld) else world
        self.state_source = state
        self.scene = scene_source(scene)
        self.facts = facts
        if self.world is not None:
            # The world's simulator and lock: UP's walkers must not run on two threads at once.
            self.simulator = self.world.simulator
            self.lock = self.world.preconditions.lock
        else:
            self.simulator = simulator(self.problem)  # PlanningError: durative, ...
            self.lock = threading.RLock()
        self._cursor: list[Any] = [None]
        self.preconditions = Preconditions(
            self.problem, lambda: self._cursor[0], sim=self.simulator
        )
        self.preconditions.lock = self.lock
        self.checker = PddlChecker(self.preconditions, categories=categories, default=default)
        self.steps: list[Step] = []
        self.use_plan(plan)
        self._seen: Any = None

    # ---------------------------------------------------------------- plan
    def use_plan(self, plan: Any) -> None:
        """Look ahead in ``plan`` from now on (after a replan)."""
        self.steps = _steps(plan)  # may be empty: a replan from a state where the goal holds

    def __len__(self) -> int:
        return len(self.steps)

    def version(self) -> int:
        """Changes whenever the world's state does (for ``LookAhead(every="change")``).

        Raises:
            TypeError: the forecaster has no ``PddlWorld`` to watch.
        """
        if self.world is None:
            raise TypeError("version() watches a PddlWorld; this forecaster has none")
        self._seen = self.world.state  # held, so its id is not reused by a new state
        return id(self._seen)

    @property
    def versioned(self) -> bool:
        return self.world is not None

    # ---------------------------------------------------------------- state
    def current_state(self) -> State:
        """The state now, from the source given (on the worker: may read the scene).

        Raises:
            whatever the source raises; TypeError for a source of no known kind.
        """
        if self.facts is not None:
            return self._from_facts(self.facts(read_scene(self.scene)))
        source = self.state_source
        if source is None:
            with self.lock:
                return self.simulator.get_initial_state()
        if isinstance(source, PddlWorld):
            return source.state  # replaced, never mutated: a consistent snapshot
        if callable(source) and not hasattr(source, "get_value"):
            source = source()
        if hasattr(source, "get_value"):
            return source
        if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
            return self._from_facts(source)
        raise TypeError(
            f"state must be a UP state, a PddlWorld, facts, or a callable returning one, "
            f"got {type(source).__name__}"
        )

    def _from_facts(self, facts: Iterable[str]) -> State:
        if isinstance(facts, (str, bytes)) or not isinstance(facts, Iterable):
            raise TypeError(f"facts must be an iterable of PDDL facts, got {facts!r}")
        with self.lock:
            return state_from_facts(self.problem, list(facts), self.simulator)

    # ---------------------------------------------------------------- forecast
    def forecast(
        self, start: int, depth: int | None = None, *, cancel: threading.Event | None = None
    ) -> Forecast | None:
        """The first of steps ``start+1`` .. ``start+depth`` that will not be applicable.

        Returns:
            its :class:`Forecast` (category from the fluents of the preconditions that fail,
            ``not_present``/``wrong_property`` for an unknown or mistyped object, ``unknown``
            when the state cannot be read or a step cannot be simulated), or None.

        Raises:
            ValueError: ``start`` or ``depth`` out of range.
        """
        steps = self.steps
        n = len(steps)
        last = window(n, start, depth)
        if last == start:
            return None

        def unknown(i: int, reason: str) -> Forecast:
            return unknown_forecast(i, n, action_text(steps[i]), start, reason)

        try:
            state = self.current_state()
        except Exception as exc:  # fail closed: no state, no all-clear
            return unknown(start + 1, f"cannot read the current state ({_describe(exc)})")
        try:
            act, objects = resolve(self.problem, steps[start])
            with self.lock:
                state = self.simulator.apply_unsafe(state, act, objects)
        except Exception as exc:
            return unknown(
                start + 1,
                f"cannot simulate the current step {steps[start].text} ({_describe(exc)})",
            )
        for i in range(start + 1, last + 1):
            if cancel is not None and cancel.is_set():
                return unknown(i, "the look-ahead was cancelled")
            step = steps[i]
            try:
                with self.lock:  # one step at a time: the tick's execute waits one step at most
                    found = self._judge(step, state, i, n, start)
                if isinstance(found, Forecast):
                    return found
                state = found
            except Exception as exc:
                return unknown(i, f"cannot simulate {step.text} ({_describe(exc)})")
        return None

    def _judge(self, step: Step, state: State, i: int, n: int, start: int) -> Forecast | State:
        """The forecast for ``step`` in ``state`` if it fails, else the state after it.

        Called with ``self.lock`` held (the checker reads the state through the cursor).
        """
        try:
            act, objects = resolve(self.problem, step)
        except GroundingError:  # an object the problem lacks: the checker names the category
            failed: tuple[str, ...] = ()
            reasons: list[str] = []
        else:
            rep = self.preconditions.report(step, state)
            if rep.applicable:
                after = self.simulator.apply(state, act, objects)
                if after is not None:
                    return after
                failed = ("the simulator cannot apply it (conflicting effects or an invariant)",)
                reasons = list(failed)
            else:
                failed = tuple(rep.unsatisfied)
                reasons = [_is_false(f) for f in failed]
        self._cursor[0] = state
        verdict = self.checker.check(None, Query(step.text))
        failed = failed or (verdict.explanation,)
        reasons = reasons or list(failed)
        action = action_text(step)
        return Forecast(
            step=i,
            of=n,
            action=action,
            ahead=i - start,
            category=verdict.category.value,
            explanation=explain(i, n, action, reasons),
            failed=failed,
            verdict=verdict,
        )


def forecast_pddl(
    problem: Problem | PddlWorld,
    plan_actions: Any,
    state: Any = None,
    start: int = 0,
    depth: int | None = None,
    **options: Any,
) -> Forecast | None:
    """One look-ahead: :meth:`PddlForecaster.forecast` of a new forecaster.

    Args:
        problem: the UP problem (or a PddlWorld).
        plan_actions: the plan (a ``SequentialPlan`` or its steps).
        state: the state now (see :class:`PddlForecaster`; None: the initial state or the
            world's).
        start: index of the step being executed now.
        depth: how many steps ahead (None: all that are left).
        **options: more :class:`PddlForecaster` options (``categories``, ``facts``, ``scene``).
    """
    return PddlForecaster(problem, plan_actions, state, **options).forecast(start, depth)
