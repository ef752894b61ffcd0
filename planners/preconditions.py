"""Symbolic precondition checks of plan steps against the current PDDL state.

:class:`Preconditions` grounds a step (``(pick ball1 rooma left)``) in a UP problem, asks UP's
``SequentialSimulator`` whether it is applicable in the current state and lists the
preconditions that do not hold. The result becomes a :class:`~bt_raider.checking.contract.Query` that
carries the action's preconditions and the unsatisfied ones to a reasoner (RAIDER's *Ask* step
starts from them), or a :class:`~bt_raider.checking.verdict.Verdict` through :class:`PddlChecker`, a
Checker for plain PDDL domains that have no scene.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.checking.contract import Query, as_query
from bt_raider.checking.verdict import PRIORITY, Category, ToolCall, Verdict, parse_category
from bt_raider.errors import need
from bt_raider.planners.pddl import (
    GroundingError,
    Step,
    conjuncts,
    fact_text,
    parse_step,
    pddl_text,
    resolve,
    simulator,
)

if TYPE_CHECKING:
    from unified_planning.model import Action, FNode, Object, Problem, State

    from bt_raider.perception.scene import Scene

# Everything here runs on UP's model (and world, lookahead and PDDL recovery import this):
# without it, one line naming the extra on import.
need("pddl", "bt_raider.planners.preconditions", modules=("unified_planning",))


@runtime_checkable
class PreconditionSource(Protocol):
    """Anything that turns a plan step into a :class:`Query` with its preconditions *now*."""

    def query(self, step: Step) -> Query:
        """The query for ``step`` in the current state."""
        ...


@dataclass
class PreconditionReport:
    """The preconditions of one grounded step in one state.

    Attributes:
        step: the step checked.
        bindings: action parameter name -> object name (mapped through ``names`` if given).
        preconditions: every precondition conjunct, as PDDL text.
        unsatisfied: those false in the state (a subset of ``preconditions``, or the
            simulator's own reason when the conjuncts all hold but the action still cannot
            apply, e.g. conflicting effects).
        facts: the fluent names each unsatisfied precondition mentions (for category maps).
    """

    step: Step
    bindings: dict[str, str]
    preconditions: list[str]
    unsatisfied: list[str]
    facts: list[list[str]] = field(default_factory=list)

    @property
    def applicable(self) -> bool:
        return not self.unsatisfied

    def query(self) -> Query:
        return Query(
            text=pddl_text(self.step),
            preconditions=tuple(self.preconditions),
            unsatisfied=tuple(self.unsatisfied),
            bindings=dict(self.bindings),
        )


def ground_preconditions(problem: Problem, action: Action, objects: list[Object]) -> list[FNode]:
    """The conjuncts of ``action``'s preconditions with its parameters bound to ``objects``."""
    env = problem.environment
    em = env.expression_manager
    subst = {
        em.ParameterExp(p): em.ObjectExp(o) for p, o in zip(action.parameters, objects, strict=True)
    }
    return [
        part
        for pre in action.preconditions
        for part in conjuncts(env.substituter.substitute(pre, subst))
    ]


def _fluent_names(node: FNode) -> list[str]:
    fluents = node.environment.free_vars_extractor.get(node)
    return sorted({f.fluent().name for f in fluents})


class Preconditions:
    """Check steps of a problem against a state.

    Args:
        problem: the UP problem whose actions and objects steps name.
        state: the state to check in: a UP state, a callable returning the current one (e.g.
            ``lambda: world.state``), or None for the initial state.
        names: PDDL object name -> the name the rest of the system uses (a scene's display
            name), for :attr:`PreconditionReport.bindings`.
        sim: a UP sequential simulator for ``problem`` to reuse.
    """

    def __init__(
        self,
        problem: Problem,
        state: State | Callable[[], State] | None = None,
        *,
        names: Mapping[str, str] | None = None,
        sim: Any | None = None,
    ) -> None:
        self.problem = problem
        self.simulator = sim if sim is not None else simulator(problem)
        self._state = state
        self.names = dict(names or {})
        from unified_planning.model.walkers import StateEvaluator

        self._evaluator = StateEvaluator(problem)
        # UP's evaluators memoise and the simulator shares one: checks on workers and the
        # world's execute() on the tick thread take turns (PddlWorld uses this lock too).
        self.lock = threading.RLock()

    @property
    def state(self) -> State:
        """The state checks run in now."""
        if self._state is None:
            return self.simulator.get_initial_state()
        if callable(self._state):
            return self._state()
        return self._state

    def holds(self, node: FNode, state: State | None = None) -> bool:
        """True when the (ground) expression ``node`` holds in the state."""
        state = self.state if state is None else state
        with self.lock:
            return self._holds(node, state)

    def _holds(self, node: FNode, state: State) -> bool:
        value = self._evaluator.evaluate(node, state)
        return value.is_bool_constant() and value.bool_constant_value()

    def report(self, step: Step | str, state: State | None = None) -> PreconditionReport:
        """Ground ``step`` and list its preconditions and the unsatisfied ones.

        Raises:
            QueryError: unknown action or wrong arity; GroundingError: unknown or mistyped
                object (see :func:`resolve`).
        """
        if isinstance(step, str):
            step = parse_step(step)
        action, objects = resolve(self.problem, step)
        state = self.state if state is None else state
        bindings = {
            p.name: self.names.get(o.name, o.name)
            for p, o in zip(action.parameters, objects, strict=True)
        }
        with self.lock:
            # Under the lock too: UP's substituter belongs to the environment, shared by threads.
            parts = ground_preconditions(self.problem, action, objects)
            false_parts = [p for p in parts if not self._holds(p, state)]
            reasons: list[str] = []
            if not false_parts:
                # The simulator has the last word: grounding, conflicting effects, invariants.
                try:
                    failed, reason = self.simulator.get_unsatisfied_conditions(
                        state, action, objects, full_check=True
                    )
                except Exception as exc:  # UPInvalidActionError: grounds to an invalid action
                    reasons = [f"grounding {pddl_text(step)} gives no valid action ({exc})"]
                else:
                    if reason is not None:
                        reasons = [fact_text(f) for f in failed] or [reason.name.lower()]
        return PreconditionReport(
            step=Step(action.name, [o.name for o in objects], step.instance),
            bindings=bindings,
            preconditions=[fact_text(p) for p in parts],
            unsatisfied=[fact_text(p) for p in false_parts] + reasons,
            facts=[_fluent_names(p) for p in false_parts] + [[] for _ in reasons],
        )

    def query(self, step: Step | str, state: State | None = None) -> Query:
        """The :class:`Query` for ``step``: its PDDL text, preconditions and unsatisfied ones."""
        return self.report(step, state).query()

    def is_applicable(self, step: Step | str, state: State | None = None) -> bool:
        """True when ``step`` can run in the state (UP's ``is_applicable``)."""
        if isinstance(step, str):
            step = parse_step(step)
        action, objects = resolve(self.problem, step)
        state = self.state if state is None else state
        with self.lock:
            return bool(self.simulator.is_applicable(state, action, objects))


def precondition_query(
    problem: Problem, step: Step | str, state: State | None = None, **options: Any
) -> Query:
    """One-shot :meth:`Preconditions.query` (``state`` None: the initial state)."""
    return Preconditions(problem, state, **options).query(step)


class PddlChecker:
    """A Checker for plain PDDL domains: the verdict comes from the symbolic state, not a scene.

    An unsatisfied precondition is an issue of category ``default`` (``wrong_state``: the
    world needs another state first), unless ``categories`` maps a fluent it mentions to
    another category, e.g. ``{"free": "robot_state", "at-robby": "out_of_reach"}``; with
    several unsatisfied preconditions the first category in RAIDER's priority order wins. An
    object the problem lacks is ``not_present``, one of the wrong type ``wrong_property``.

    Args:
        source: a :class:`Preconditions`, anything with a ``preconditions`` attribute holding
            one (a :class:`~bt_raider.planners.world.PddlWorld`: checks see its live state),
            or a UP problem (checks run in its initial state).
        categories: fluent name -> category (a :class:`Category` or its name/RAIDER label).
        default: the category of an unsatisfied precondition no mapping covers.
    """

    def __init__(
        self,
        source: Any,
        *,
        categories: Mapping[str, str | Category] | None = None,
        default: str | Category = Category.WRONG_STATE,
    ) -> None:
        if isinstance(source, Preconditions):
            self.preconditions = source
        elif isinstance(getattr(source, "preconditions", None), Preconditions):
            self.preconditions = source.preconditions
        else:
            self.preconditions = Preconditions(source)
        self.categories = {k.lower(): parse_category(v) for k, v in (categories or {}).items()}
        self.default = parse_category(default)

    def _category(self, facts: list[list[str]]) -> Category:
        found = set()
        for names in facts:
            mapped = [self.categories[n.lower()] for n in names if n.lower() in self.categories]
            found.update(mapped or [self.default])
        return next((c for c in PRIORITY if c in found), self.default)

    def check(
        self, scene: Scene | None, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """The verdict on ``query`` (``(pick a b)`` or ``pick(a, b)``); ``scene`` is unused.

        Raises:
            QueryError: the query is not an action of the domain or has the wrong arity.
        """
        start = time.monotonic()
        query = as_query(query)
        if cancel is not None and cancel.is_set():
            return Verdict.unknown("cancelled before it started")
        step = parse_step(query.text)
        text = pddl_text(step)
        try:
            rep = self.preconditions.report(step)
        except GroundingError as exc:
            return Verdict(
                exc.category,
                str(exc),
                action=step.name,
                objects=list(step.args),
                elapsed_s=time.monotonic() - start,
            )
        if rep.applicable:
            category = Category.NONE
            explanation = f"{rep.step.text}: all {len(rep.preconditions)} preconditions hold."
        else:
            category = self._category(rep.facts)
            explanation = f"{rep.step.text} cannot run: unsatisfied {', '.join(rep.unsatisfied)}."
        return Verdict(
            category,
            explanation,
            grounding={
                arg: [rep.bindings[p]] for p, arg in zip(rep.bindings, step.args, strict=True)
            },
            objects=list(rep.bindings.values()),
            tool_calls=[
                ToolCall("get_unsatisfied_conditions", [text], result=list(rep.unsatisfied))
            ],
            questions=[f"Does {p} hold?" for p in rep.preconditions],
            action=rep.step.name,
            elapsed_s=time.monotonic() - start,
        )
