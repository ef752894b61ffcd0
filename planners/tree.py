"""Plan -> py_trees tree: an action registry, and guards around every step.

Users say which behaviour runs each PDDL action, py_trees style::

    from bt_raider.planners.tree import action

    @action("pick")
    class Pick(py_trees.behaviour.Behaviour):
        def __init__(self, step):            # a Step: step.name, step.args
            super().__init__(step.text)

    @action("move")
    def move(step):                          # or a factory returning a behaviour
        return MoveBase(target=step.args[1])

Steps no one registered can fall back to :class:`bt_raider.robot.actions.ActionBehaviour` on a robot
(:func:`robot_actions`). :func:`plan_to_tree` turns a plan into a ``Sequence(memory=True)``,
optionally wrapping each step (``guard``), e.g. in a RAIDER guard that checks the step's
preconditions in the current state before it runs (:func:`raider_guards`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import py_trees

from bt_raider.checking.action_contract import ActionContracts
from bt_raider.checking.contract import Query
from bt_raider.errors import PlanningError
from bt_raider.planners.pddl import Step, pddl_text, plan_steps
from bt_raider.recovery.robot_actions import RobotActions
from bt_raider.robot.actions import ActionBehaviour
from bt_raider.runtime.guards import RaiderGuard

if TYPE_CHECKING:
    from unified_planning.plans import SequentialPlan

    from bt_raider.planners.preconditions import PreconditionSource
    from bt_raider.robot.actions import Robot

#: What builds the behaviour of one step: a Behaviour class (called as ``cls(step)``) or a
#: factory ``(step) -> Behaviour``.
BehaviourFactory = Callable[[Step], py_trees.behaviour.Behaviour]
#: Wraps a step's behaviour: ``(child, step) -> Behaviour``.
Guard = Callable[[py_trees.behaviour.Behaviour, Step], py_trees.behaviour.Behaviour]
F = TypeVar("F", bound=Callable[..., Any])


class ActionRegistry:
    """PDDL action name -> what builds its behaviour.

    Names match case-insensitively (unified-planning lowercases PDDL names).

    Args:
        fallback: builds the behaviour of a step whose action is not registered; None makes
            such a step an error.
    """

    def __init__(self, fallback: BehaviourFactory | None = None) -> None:
        self._factories: dict[str, BehaviourFactory] = {}
        self.fallback = fallback
        #: The action contract declared next to the actions (``action(name, kind=, role=type)``).
        self.contracts = ActionContracts()

    def register(self, name: str, factory: BehaviourFactory) -> None:
        """Register a Behaviour class or factory for the action ``name`` (replacing any)."""
        if not callable(factory):
            raise TypeError(f"action {name!r}: expected a Behaviour class or a factory")
        self._factories[name.lower()] = factory

    def action(self, name: str, *, kind: str | None = None, **roles: str) -> Callable[[F], F]:
        """Decorator form of :meth:`register`; returns the class or function unchanged.

        With ``kind`` the action's contract is declared here too, each argument in order as
        ``role=type``: ``@registry.action("HandTo", kind="handover", object="item",
        recipient="person")`` (:class:`~bt_raider.checking.action_contract.ActionContracts`).
        """
        if kind is not None:
            self.contracts.declare(name, kind, **roles)

        def decorate(factory: F) -> F:
            self.register(name, factory)
            return factory

        return decorate

    def unregister(self, name: str) -> None:
        """Forget the registration of ``name`` (no-op when absent)."""
        self._factories.pop(name.lower(), None)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._factories

    def names(self) -> list[str]:
        return sorted(self._factories)

    def recovery_actions(self, mapping: Mapping[str, str] | None = None) -> RobotActions:
        """The registered actions as the ones a recovery may use, under these names.

        ``Recovery(planner, robot, human, actions=registry.recovery_actions())``: each name is
        matched to RAIDER's verb it means (``navigate`` -> ``move_to``, ``grasp`` -> ``pick``,
        ``put`` -> ``place``; ``mapping`` gives pairs explicitly, e.g. ``{"move_to": "drive"}``),
        and recovery code calls only these names, on the Recovery's robot
        (``robot.start(name, args)`` with objectIds). See
        :class:`~bt_raider.recovery.robot_actions.RobotActions`.
        """
        return RobotActions.from_names(self.names(), mapping=mapping)

    def copy(self, fallback: BehaviourFactory | None = None) -> ActionRegistry:
        """A copy with the same registrations (and ``fallback`` if given, else this one's)."""
        new = ActionRegistry(fallback if fallback is not None else self.fallback)
        new._factories.update(self._factories)
        for contract in self.contracts:
            new.contracts.add(contract)
        return new

    def build(self, step: Step) -> py_trees.behaviour.Behaviour:
        """The behaviour for ``step``.

        Raises:
            PlanningError: the action is not registered and there is no fallback (names the
                registered actions).
            TypeError: the registered class or factory did not return a Behaviour.
        """
        factory = self._factories.get(step.name.lower(), self.fallback)
        if factory is None:
            known = ", ".join(self.names()) or "none"
            raise PlanningError(
                f"no behaviour registered for action {step.name!r} of step {pddl_text(step)}: "
                f"registered actions are {known} (register one with @action({step.name!r}) "
                "or use robot_actions(robot))"
            )
        behaviour = factory(step)
        if not isinstance(behaviour, py_trees.behaviour.Behaviour):
            raise TypeError(
                f"the behaviour registered for {step.name!r} returned {behaviour!r}, "
                "not a py_trees Behaviour"
            )
        return behaviour


#: The registry ``@action`` fills.
default_registry = ActionRegistry()
action = default_registry.action


def robot_actions(robot: Robot, base: ActionRegistry | None = None) -> ActionRegistry:
    """A registry running every step as ``ActionBehaviour(step.name, step.args, robot)``.

    Args:
        robot: the robot (e.g. ``SyncRobot(PddlWorld(problem))``).
        base: registrations that take precedence (e.g. :data:`default_registry`).
    """

    def run_on_robot(step: Step) -> py_trees.behaviour.Behaviour:
        return ActionBehaviour(step.name, list(step.args), robot, name=pddl_text(step))

    return (base or ActionRegistry()).copy(fallback=run_on_robot)


def plan_to_tree(
    plan: SequentialPlan | Iterable[Step],
    actions: ActionRegistry,
    *,
    guard: Guard | None = None,
    name: str = "plan",
) -> py_trees.composites.Sequence:
    """A ``Sequence(memory=True)`` with one child per step, each wrapped by ``guard`` if given.

    Args:
        plan: a UP sequential plan or a list of :class:`Step`.
        actions: builds each step's behaviour.
        guard: ``(child, step) -> Behaviour`` wrapping each step (see :func:`raider_guards`).
        name: the sequence's name.
    """
    steps = list(plan) if not hasattr(plan, "actions") else plan_steps(plan)
    children = []
    for step in steps:
        if not isinstance(step, Step):
            raise TypeError(f"expected a plan or Steps, got {step!r}")
        child = actions.build(step)
        children.append(guard(child, step) if guard is not None else child)
    return py_trees.composites.Sequence(name=name, memory=True, children=children)


def raider_guards(
    checker: Any,
    *,
    scene: Any,
    recovery: Any = None,
    preconditions: PreconditionSource | None = None,
    contracts: ActionContracts | None = None,
    **kw: Any,
) -> Guard:
    """A ``guard`` for :func:`plan_to_tree` wrapping each step in a ``RaiderGuard``.

    Args:
        checker: the Checker the guards ask (symbolic, LLM, or a PddlChecker).
        scene: the Scene, a callable returning the current one, or None.
        recovery: the recovery planner handed to each guard.
        preconditions: when given (e.g. a PddlWorld), each guard's query is built at check
            time, so its preconditions and unsatisfied ones come from the *current* state;
            otherwise the query is the step's PDDL text.
        contracts: the domain's action contract
            (:func:`~bt_raider.planners.contracts.derive_contracts`): each step is checked on
            the arguments its kind acts on, by role (``(navigate-to r corridor lounge door)``
            is checked as ``navigate-to(lounge)``), never by position.
        **kw: more RaiderGuard options (``max_attempts``, ...).
    """

    def wrap(child: py_trees.behaviour.Behaviour, step: Step) -> py_trees.behaviour.Behaviour:
        if preconditions is None:
            query: Any = pddl_text(step)
            if contracts is not None and step.name in contracts:
                query = contracts.query(query)
        else:
            source = preconditions

            def query() -> Any:
                q = source.query(step)
                if contracts is None or step.name not in contracts:
                    return q
                contract = contracts.get(step.name)
                values = list(q.bindings.values())
                args = values if len(values) == len(step.args) else list(step.args)
                return Query(contract.query(args), q.preconditions, q.unsatisfied)  # type: ignore[union-attr]

        return RaiderGuard(child, query, checker, scene=scene, recovery=recovery, **kw)

    return wrap
