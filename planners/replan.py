"""Replanning: plan again from where the world is now and swap in the new steps.

When a step fails (a guard gave up, a recovery changed the world, the world changed under the
plan), the steps left in the old plan no longer fit. :class:`Replanner` builds a problem whose
initial state is the world's *current* state (same goals), solves it, and replaces the plan
subtree: through ``BehaviourTree.replace_subtree`` or the parent's ``replace_child``.

:class:`Replanning` does it inside the tree, without blocking a tick::

    replanner = Replanner(world, actions)
    root = Replanning(plan_to_tree(plan, actions), replanner, max_replans=2)

The current state comes from a :class:`~bt_raider.planners.world.PddlWorld` (unified-planning's
state; solved with :func:`~bt_raider.planners.pddl.solve`) or from an :class:`ObservedState`:
a function that says which facts hold now, e.g. read off the scene. An ObservedState writes
the problem as PDDL text and the engine plans it in its child process
(:mod:`bt_raider.planners.engines`, the search :func:`~bt_raider.planners.pddl.solve` runs), so
unified-planning is never imported for it.

**When nothing can be fixed.** ``Replanning(..., when=cannot_be_fixed)`` replans only the
failures no recovery can repair; the rule (:func:`cannot_be_fixed`):

1. the plan failed at a guard (a node with a ``verdict``, e.g. a
   :class:`~bt_raider.runtime.guards.RaiderGuard`) that ended FAILURE, and
2. either its recovery reported the action unrecoverable (``recovery.unrecoverable`` names
   the guard's action: verified recovery proved no plan restores the condition), or the
   guard's last verdict is an ``unfeasibility`` of a category in :data:`GONE`
   (``not_present``: the object or person is not there, and recovering did not bring it).

Any other failure (an ``unknown`` check that failed closed, an ambiguity left open, a person
who would not move the chair, a timeout) is not replanned: the decorator fails with the
guard's reason. A new plan that is the failed plan's remaining steps again (the planner's
model does not see what went wrong) is not run either: the decorator fails and says so.
Replans are bounded (``max_replans``) and each search by the planner's ``timeout``.

An ObservedState reads its PDDL as nested lists (:mod:`bt_raider.planners.sexp`, whose
:func:`~bt_raider.planners.sexp.read_sexp` and :func:`~bt_raider.planners.sexp.write_sexp`
can still be imported from here).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import py_trees
from py_trees.common import Status

from bt_raider.errors import BtRaiderError, PlanningError
from bt_raider.planners import engines
from bt_raider.planners.pddl import Step, parse_step, plan_steps, solve
from bt_raider.planners.sexp import SExp as SExp
from bt_raider.planners.sexp import _atoms, _define, _section, _text, _typed
from bt_raider.planners.sexp import read_sexp as read_sexp
from bt_raider.planners.sexp import write_sexp as write_sexp
from bt_raider.planners.tree import ActionRegistry, Guard, plan_to_tree
from bt_raider.robot.worker import Pending, submit

if TYPE_CHECKING:
    from unified_planning.plans import SequentialPlan

    from bt_raider.planners.world import PddlWorld

#: Verdict categories that mean the thing a step needs is not there (the trigger's rule 2).
GONE = frozenset({"not_present"})
#: Ground action instances the explanation of a missing plan may enumerate per pass.
MAX_EXPLAIN_INSTANCES = 200_000


class ObservedState:
    """A PDDL problem whose initial state is what a function observes *now*.

    The problem's objects and goal stay; its ``:init`` becomes the facts ``observe()`` returns
    (closed world: what it does not list is false). Facts are checked against the domain's
    predicates and the objects before any planner sees them.

    Args:
        domain: the domain file (a path) or its text.
        problem: the problem file or its text.
        observe: ``() -> facts that hold now``, as PDDL text (``"(robot_at tiago home)"``);
            called on the replanner's worker.
        objects: objects the facts may name beyond the problem's (name -> type), e.g. places
            the robot knows that the task did not mention.

    Attributes:
        facts: the facts of the last observation (sorted).
        goal: the goal's atoms as PDDL text (a conjunction's parts).

    Raises:
        PlanningError: a file cannot be read, or an extra object's type is not in the domain.
    """

    def __init__(
        self,
        domain: str | Path,
        problem: str | Path,
        observe: Callable[[], Iterable[str]],
        *,
        objects: Mapping[str, str] | None = None,
    ) -> None:
        self.domain_text = _text(domain, "domain")
        self.problem_text = _text(problem, "problem")
        self._domain = _define(self.domain_text, "domain")
        self._problem = _define(self.problem_text, "problem")
        types = _section(self._domain, ":types")
        self.parents = dict(_typed(types[1:])) if types else {}
        preds = _section(self._domain, ":predicates") or [":predicates"]
        self.predicates = {
            p[0]: [t for _, t in _typed(p[1:])] for p in preds[1:] if isinstance(p, list) and p
        }
        constants = _section(self._domain, ":constants")
        declared = _section(self._problem, ":objects")
        self.objects: dict[str, str] = dict(_typed(constants[1:])) if constants else {}
        self._constants = set(self.objects)  # the domain's own: not listed under :objects
        self.objects.update(_typed(declared[1:]) if declared else [])
        for name, kind in (objects or {}).items():
            name, kind = str(name).lower(), str(kind).lower()
            if kind != "object" and kind not in self.parents and kind not in self.objects.values():
                raise PlanningError(
                    f"object {name!r}: unknown type {kind!r}; the domain's types are "
                    f"{', '.join(sorted(set(self.parents) | set(self.parents.values()))) or 'none'}"
                )
            self.objects.setdefault(name, kind)
        goal = _section(self._problem, ":goal")
        if goal is None or len(goal) < 2:
            raise PlanningError("the problem has no (:goal ...)")
        self._goal = goal[1]
        atoms = _atoms(self._goal)
        self.goal = [write_sexp(a) for a in atoms] if atoms else [write_sexp(self._goal)]
        self.observe = observe
        self.facts: list[str] = []

    def is_a(self, kind: str, wanted: str) -> bool:
        """True when type ``kind`` is ``wanted`` or one of its subtypes."""
        seen = set()
        while kind not in seen:
            if kind == wanted or wanted == "object":
                return True
            seen.add(kind)
            kind = self.parents.get(kind, "object")
        return False

    def check_fact(self, fact: str) -> str:
        """``fact`` normalised (``(robot_at tiago home)``).

        Raises:
            PlanningError: not one atom, unknown predicate or object, wrong arity or type.
        """
        nodes = read_sexp(str(fact), "fact")
        if len(nodes) != 1 or not isinstance(nodes[0], list) or not nodes[0]:
            raise PlanningError(f"fact {fact!r}: expected one atom such as (robot_at tiago home)")
        atom = nodes[0]
        if any(isinstance(a, list) for a in atom):
            raise PlanningError(f"fact {fact!r}: expected one atom, not a formula")
        name, args = atom[0], atom[1:]
        params = self.predicates.get(name)
        if params is None:
            raise PlanningError(
                f"fact {fact!r}: unknown predicate {name!r}; the domain's predicates are "
                f"{', '.join(sorted(self.predicates))}"
            )
        if len(args) != len(params):
            raise PlanningError(f"fact {fact!r}: {name} takes {len(params)} argument(s)")
        for arg, wanted in zip(args, params, strict=True):
            kind = self.objects.get(arg)
            if kind is None:
                raise PlanningError(
                    f"fact {fact!r}: no object {arg!r}; the objects are "
                    f"{', '.join(sorted(self.objects))}"
                )
            if not self.is_a(kind, wanted):
                raise PlanningError(f"fact {fact!r}: {arg} is a {kind}, not a {wanted}")
        return write_sexp(atom)

    def observe_facts(self) -> list[str]:
        """Observe now: the facts that hold, checked, sorted (also kept in :attr:`facts`).

        Raises:
            PlanningError: a fact is not valid (see :meth:`check_fact`), or the user's
                ``observe`` raised (its error named, chained).
        """
        try:
            # Each distinct fact is read once: a sensor repeating a fact 200,000 times costs
            # one parse, not 200,000.
            observed = _distinct(self.observe())
        except Exception as exc:
            name = getattr(self.observe, "__qualname__", None) or repr(self.observe)
            text = str(exc).strip()
            raise PlanningError(
                f"observing the current state failed: {name}() raised "
                f"{type(exc).__name__}{': ' + text[:200] if text else ''}"
            ) from exc
        facts = sorted({self.check_fact(f) for f in observed})
        self.facts = facts
        return facts

    def current_pddl(self) -> tuple[str, str]:
        """(domain text, problem text) with the observed facts as the initial state."""
        facts = self.observe_facts()
        listed: SExp = [":objects"]
        for name, kind in self.objects.items():
            if name not in self._constants:
                listed += [name, "-", kind]
        init: SExp = [":init", *(read_sexp(f)[0] for f in facts)]
        problem: SExp = []
        for node in self._problem:
            key = node[0] if isinstance(node, list) and node else None
            if key in (":objects", ":init"):
                continue
            if key == ":goal":  # PDDL's order: objects, init, goal
                problem += [listed, init]
            problem.append(node)
        return self.domain_text, write_sexp(problem)

    def unreachable(self, facts: Sequence[str] | None = None) -> dict[str, list[str]] | None:
        """Why the goal is out of reach, from the domain alone (a delete relaxation).

        Returns:
            each goal atom that no sequence of actions (even ignoring what they delete) can
            make true from ``facts`` (default: the last observation) -> the objects it names
            that appear in no fact reachable that way (often: the thing is nowhere). None
            when the domain uses what the relaxation does not read (or, forall, ...) or is too
            large to enumerate.
        """
        if _atoms(self._goal) is None:
            return None  # a disjunctive (or quantified) goal: no atom to blame
        reached = {tuple(read_sexp(f)[0]) for f in (self.facts if facts is None else facts)}
        actions = []
        for node in self._domain:
            if not (isinstance(node, list) and node[:1] == [":action"]):
                continue
            fields = dict(zip(node[2::2], node[3::2], strict=False))
            pre = _atoms(fields.get(":precondition", []))
            eff = _atoms(fields.get(":effect", []))
            if pre is None or eff is None:
                return None
            params = _typed(fields.get(":parameters", []))
            actions.append((params, pre, eff))
        by_type = {
            kind: [o for o, k in self.objects.items() if self.is_a(k, kind)]
            for kind in {k for params, _, _ in actions for _, k in params}
        }
        grew = True
        while grew:
            grew = False
            budget = MAX_EXPLAIN_INSTANCES
            for params, pre, eff in actions:
                names = [p for p, _ in params]
                for values in itertools.product(*(by_type[k] for _, k in params)):
                    budget -= 1
                    if budget < 0:
                        return None
                    bind = dict(zip(names, values, strict=True))
                    if all(tuple(bind.get(a, a) for a in atom) in reached for atom in pre):
                        for atom in eff:
                            new = tuple(bind.get(a, a) for a in atom)
                            if new not in reached:
                                reached.add(new)
                                grew = True
        named = {a for atom in reached for a in atom[1:]}
        out: dict[str, list[str]] = {}
        for goal in self.goal:
            goal_atom = tuple(read_sexp(goal)[0])
            if goal_atom not in reached:
                out[goal] = [a for a in goal_atom[1:] if a not in named]
        return out


def _distinct(facts: Iterable[Any]) -> list[Any]:
    """``facts`` without repeats, in their order (unhashable ones kept, for a clear error)."""
    out: dict[Any, None] = {}
    odd: list[Any] = []
    for fact in facts:
        try:
            out[fact] = None
        except TypeError:
            odd.append(fact)
    return [*out, *odd]


class NoPlan(PlanningError):
    """No plan reaches the goal from the current state.

    Attributes:
        unreachable: goal atom -> the objects it names that nothing reachable mentions (see
            :meth:`ObservedState.unreachable`); empty when that could not be worked out.
    """

    def __init__(self, message: str, unreachable: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.unreachable = dict(unreachable or {})


def explain_unreachable(unreachable: Mapping[str, Sequence[str]]) -> str:
    """``(has adriana med) cannot become true: nothing known now mentions med (it is nowhere
    to be found)`` -- one clause per goal atom."""
    parts = []
    for goal, missing in unreachable.items():
        if missing:
            names = " or ".join(missing)
            parts.append(
                f"{goal} cannot become true: {names} appears in no fact that holds now or "
                "that any action can bring about (it is nowhere to be found)"
            )
        else:
            parts.append(f"{goal} cannot become true by any sequence of the domain's actions")
    return "; ".join(parts)


def plan_observed(
    state: ObservedState,
    engine: str = "auto",
    timeout: float | None = 60.0,
    *,
    cancel: threading.Event | None = None,
) -> list[Step]:
    """Plan from ``state``'s current facts with a real engine, in its child process.

    Raises:
        NoPlan: the engine proved the goal unreachable (the message says which goal atoms
            and why, as far as the domain tells).
        PlanningError: no engine, time ran out, the engine failed, or ``cancel`` was set.
    """
    if engine == "auto":
        found = engines.installed_engines()  # already in ``auto`` order
        if not found:
            raise PlanningError(
                "no planning engine installed: pip install 'bt_raider[pddl]' (pyperplan)"
            )
        engine = found[0]
    domain, problem = state.current_pddl()
    if cancel is not None and cancel.is_set():
        raise PlanningError("replanning was cancelled")
    answer = engines.run(engine, domain, problem, timeout=timeout)
    if answer.status == "solved":
        return [parse_step(s) for s in answer.plan]
    if answer.status == "unsolvable":
        unreachable = state.unreachable()
        why = explain_unreachable(unreachable) if unreachable else ""
        raise NoPlan(
            f"no plan reaches the goal {' and '.join(state.goal)} from the current state "
            f"({engine} proved it unreachable){': ' + why if why else ''}",
            unreachable,
        )
    if answer.status == "timeout":
        raise PlanningError(
            f"no plan from the current state within {timeout:g} s: {engine} was stopped at "
            "the time limit"
        )
    raise PlanningError(f"{engine} cannot plan from the current state: {answer.message}")


# ---------------------------------------------------------------------------- the trigger
def failed_guard(plan: py_trees.behaviour.Behaviour) -> py_trees.behaviour.Behaviour | None:
    """The guard (a node with a ``verdict`` attribute) whose FAILURE failed ``plan``, if any."""
    for node in plan.iterate():
        if node.status is Status.FAILURE and hasattr(node, "verdict") and node is not plan:
            return node
    if plan.status is Status.FAILURE and hasattr(plan, "verdict"):
        return plan
    return None


def cannot_be_fixed(plan: py_trees.behaviour.Behaviour) -> str | None:
    """The rule of ``Replanning(when=...)``: why ``plan`` should be replanned, or None.

    See the module docstring: a guard's final FAILURE that its recovery declared
    unrecoverable, or whose last verdict is an ``unfeasibility`` of a :data:`GONE` category.
    """
    guard = failed_guard(plan)
    if guard is None:
        return None
    action = str(getattr(guard, "query", None) or guard.name)
    gone = getattr(getattr(guard, "recovery", None), "unrecoverable", None)
    if gone is not None and str(getattr(gone, "action", action)) == action:
        return f"{action} cannot be recovered: {getattr(gone, 'reason', gone)}"
    verdict = getattr(guard, "verdict", None)
    if verdict is None:
        return None
    response = getattr(getattr(verdict, "final_response", None), "value", None)
    category = getattr(getattr(verdict, "category", None), "value", None)
    if response == "unfeasibility" and category in GONE:
        return f"{action} cannot be fixed ({category}): {verdict.explanation}"
    return None


class Replanner:
    """Plans from the current state of a PddlWorld or an :class:`ObservedState`.

    Args:
        world: what defines the new problem: a :class:`~bt_raider.planners.world.PddlWorld`
            (its state and original goals, solved through unified-planning) or an
            :class:`ObservedState` (the facts observed now; planned from PDDL text).
        actions: builds the behaviours of the new steps.
        engine: planning engine (see :func:`~bt_raider.planners.pddl.solve`).
        timeout: planning time limit in seconds.
        guard: wraps each new step, as in :func:`~bt_raider.planners.tree.plan_to_tree`.
        name: the name of the new plan sequences.
    """

    def __init__(
        self,
        world: PddlWorld | ObservedState,
        actions: ActionRegistry,
        *,
        engine: str = "auto",
        timeout: float | None = 60.0,
        guard: Guard | None = None,
        name: str = "plan",
    ) -> None:
        self.world = world
        self.actions = actions
        self.engine = engine
        self.timeout = timeout
        self.guard = guard
        self.name = name
        self.replans = 0

    def replan(self, *, cancel: threading.Event | None = None) -> SequentialPlan | list[Step]:
        """A plan from the current state to the original goals.

        Returns:
            a UP ``SequentialPlan`` (PddlWorld) or the steps (ObservedState).

        Raises:
            PlanningError: no plan (the message says why; :class:`NoPlan` for an
                ObservedState whose goal is proved unreachable), or ``cancel`` was set first.
        """
        if cancel is not None and cancel.is_set():
            raise PlanningError("replanning was cancelled")
        if isinstance(self.world, ObservedState):
            plan: Any = plan_observed(self.world, self.engine, self.timeout, cancel=cancel)
        else:
            plan = solve(self.world.current_problem(), self.engine, self.timeout)
        self.replans += 1
        return plan

    @staticmethod
    def steps_of(plan: SequentialPlan | Iterable[Step]) -> list[Step]:
        """The steps of a plan :meth:`replan` returned."""
        return plan_steps(plan) if hasattr(plan, "actions") else list(plan)

    def build(self, plan: SequentialPlan | Iterable[Step]) -> py_trees.composites.Sequence:
        """The plan subtree for ``plan``."""
        return plan_to_tree(plan, self.actions, guard=self.guard, name=self.name)

    def swap(
        self,
        old: py_trees.behaviour.Behaviour,
        new: py_trees.behaviour.Behaviour,
        tree: py_trees.trees.BehaviourTree | None = None,
    ) -> py_trees.behaviour.Behaviour:
        """Put ``new`` where ``old`` is (stopping ``old`` if it runs); returns ``new``.

        Raises:
            PlanningError: ``old`` is the root of ``tree`` or has no parent to swap it in.
        """
        if old.status is Status.RUNNING:
            old.stop(Status.INVALID)
        if tree is not None and tree.root is not old:
            if not tree.replace_subtree(old.id, new):
                raise PlanningError(f"{old.name!r} is not in the tree; cannot swap the new plan in")
            return new
        parent = old.parent
        if isinstance(parent, py_trees.composites.Composite):
            parent.replace_child(old, new)
        elif isinstance(parent, py_trees.decorators.Decorator):
            _replace_decorated(parent, new)
        else:
            raise PlanningError(
                f"cannot swap plan {old.name!r}: it is a root; wrap it in Replanning or a composite"
            )
        return new

    def replan_subtree(
        self,
        old: py_trees.behaviour.Behaviour,
        tree: py_trees.trees.BehaviourTree | None = None,
    ) -> py_trees.composites.Sequence:
        """Replan now (blocking) and swap the new plan subtree in for ``old``."""
        new = self.build(self.replan())
        self.swap(old, new, tree)
        return new

    def post_tick_handler(
        self, plan: py_trees.behaviour.Behaviour, *, max_replans: int = 2
    ) -> Callable[[py_trees.trees.BehaviourTree], None]:
        """A ``BehaviourTree`` post-tick handler: when ``plan`` failed, replan and swap.

        It plans between ticks (blocking, like any post-tick handler); inside a tree prefer
        :class:`Replanning`, which plans on a worker.
        """
        current: dict[str, Any] = {"plan": plan, "left": max_replans}

        def handler(tree: py_trees.trees.BehaviourTree) -> None:
            node = current["plan"]
            if node.status is Status.FAILURE and current["left"] > 0:
                current["left"] -= 1
                current["plan"] = self.replan_subtree(node, tree)

        return handler


def _replace_decorated(decorator: py_trees.decorators.Decorator, new: Any) -> None:
    old = decorator.decorated
    old.parent = None
    decorator.children[0] = new
    decorator.decorated = new
    new.parent = decorator


class Replanning(py_trees.decorators.Decorator):
    """Run a plan; when it fails, replan from the current state and run the new plan.

    Planning runs on a worker (``bt_raider.robot.worker``), so ticks never block: the decorator is
    RUNNING while the planner works. After ``max_replans`` new plans, when ``when`` says the
    failure is not one to replan, when planning fails, or when the new plan is the failed one
    again, it fails with the reason in ``feedback_message`` (and :attr:`reason`).

    Args:
        child: the plan subtree (e.g. from :func:`~bt_raider.planners.tree.plan_to_tree`).
        replanner: builds the new plans and subtrees.
        max_replans: how many times to replan before giving up.
        when: ``(plan subtree) -> why to replan, or None``, asked when the plan fails; None
            (the default) replans every failure. :func:`cannot_be_fixed` replans only what no
            recovery can fix.
        steps: the steps of ``child``, when known: a new plan that is only the failed plan's
            remaining steps again is then refused at once (each new plan's steps are known).
        name: the node's name.

    Attributes:
        replans: new plans swapped in during this run.
        history: one dict per replan attempt: ``reason`` (why it replanned), then ``steps``
            (the new plan's step texts) or ``error`` (why there is none), ``facts`` (the
            observed state, for an ObservedState).
        reason: why the decorator failed ("" while it has not).
        error: the exception of the last replanning that found no plan, if any.
    """

    def __init__(
        self,
        child: py_trees.behaviour.Behaviour,
        replanner: Replanner,
        *,
        max_replans: int = 2,
        when: Callable[[py_trees.behaviour.Behaviour], str | None] | None = None,
        steps: Iterable[Step] | None = None,
        name: str = "replanning",
    ) -> None:
        super().__init__(name=name, child=child)
        if not isinstance(max_replans, int) or isinstance(max_replans, bool) or max_replans < 0:
            raise ValueError(f"max_replans must be an integer >= 0, got {max_replans!r}")
        self.replanner = replanner
        self.max_replans = max_replans
        self.when = when
        self.steps = list(steps) if steps is not None else None
        self.replans = 0
        self.history: list[dict[str, Any]] = []
        self.reason = ""
        self.error: BaseException | None = None
        self._pending: Pending[Any] | None = None
        self._remaining: list[str] | None = None

    @property
    def pending(self) -> Pending[Any] | None:
        """The planning running on the worker, while there is one."""
        return self._pending

    def initialise(self) -> None:
        self.replans = 0
        self.history = []
        self.reason = ""
        self.error = None
        self._pending = None
        self._remaining = None

    def _failure_reason(self) -> str:
        tip = self.decorated.tip() or self.decorated
        return tip.feedback_message or f"{tip.name} failed"

    def _steps_left(self) -> list[str] | None:
        """The step texts of the failed plan from its first step that did not succeed."""
        if self.steps is None:
            return None
        children = getattr(self.decorated, "children", [])
        if len(children) != len(self.steps):
            return None
        done = 0
        while done < len(children) and children[done].status is Status.SUCCESS:
            done += 1
        return [s.text for s in self.steps[done:]]

    def _give_up(self, reason: str) -> Status:
        self.reason = reason
        self.feedback_message = reason
        return Status.FAILURE

    def _settle(self) -> Status:
        """Swap in the plan the worker found, or fail with why it found none."""
        assert self._pending is not None
        pending, self._pending = self._pending, None
        record = self.history[-1]
        facts = getattr(self.replanner.world, "facts", None)
        if isinstance(facts, list):
            record["facts"] = list(facts)
        error = pending.exception()
        if error is not None:
            if not isinstance(error, BtRaiderError):
                raise error  # a bug, not a planning outcome
            self.error = error
            record["error"] = str(error)
            return self._give_up(f"replanning failed: {error}")
        plan = pending.result()
        steps = self.replanner.steps_of(plan)
        record["steps"] = [s.text for s in steps]
        if steps and self._remaining is not None and record["steps"] == self._remaining:
            return self._give_up(
                f"replanning found only the plan that just failed ({steps[0].text} first): "
                "nothing else reaches the goal from here"
            )
        new = self.replanner.build(plan)
        self.replanner.swap(self.decorated, new)
        self.steps = steps
        self.replans += 1
        self.feedback_message = (
            f"replanned ({self.replans}/{self.max_replans}): {len(new.children)} steps"
        )
        return Status.RUNNING

    def _on_failure(self) -> Status:
        """The plan failed: replan (on the worker) when the rule and the budget allow."""
        reason = self._failure_reason()
        why = self.when(self.decorated) if self.when is not None else reason
        if why is None:
            return self._give_up(f"plan failed ({reason}); not a failure replanning can fix")
        if self.replans >= self.max_replans:
            return self._give_up(f"plan failed ({reason}) after {self.replans} replans")
        self._remaining = self._steps_left()
        self.history.append({"reason": why})
        self._pending = submit(self.replanner.replan)
        self.feedback_message = f"plan failed ({why}); replanning"
        return Status.RUNNING

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:  # noqa: D401 - py_trees signature
        """Tick the plan, or wait for the planner while it works."""
        self.logger.debug(f"{self.__class__.__name__}.tick()")
        if self.status != Status.RUNNING:
            self.initialise()
        if self._pending is None:
            yield from self.decorated.tick()
            status = self.decorated.status
            if status is Status.FAILURE:
                status = self._on_failure()
            elif status is Status.SUCCESS:
                self.feedback_message = "plan succeeded"
        else:
            status = Status.RUNNING
            self.feedback_message = "replanning from the current state"
        if self._pending is not None and self._pending.done():
            status = self._settle()
        if status != Status.RUNNING:
            self.stop(status)
        self.status = status
        yield self

    def update(self) -> Status:
        return self.status

    def terminate(self, new_status: Status) -> None:
        if new_status is Status.INVALID and self._pending is not None:
            self._pending.cancel()
            self._pending = None
