"""Replanning: plan again from where the world is now and swap in the new steps.

When a step fails (a guard gave up, a recovery changed the world, the world changed under the
plan), the steps left in the old plan no longer fit. :class:`Replanner` builds a problem whose
initial state is the world's *current* state (same goals), solves it, and replaces the plan
subtree: through ``BehaviourTree.replace_subtree`` or the parent's ``replace_child``.

:class:`Replanning` does it inside the tree, without blocking a tick::

    replanner = Replanner(world, actions)
    root = Replanning(plan_to_tree(plan, actions), replanner, max_replans=2)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import py_trees
from py_trees.common import Status

from bt_raider.errors import BtRaiderError, PlanningError
from bt_raider.planners.pddl import solve
from bt_raider.planners.tree import ActionRegistry, Guard, plan_to_tree
from bt_raider.runtime.worker import Pending, submit

if TYPE_CHECKING:
    from unified_planning.plans import SequentialPlan

    from bt_raider.planners.world import PddlWorld


class Replanner:
    """Plans from a :class:`~bt_raider.planners.world.PddlWorld`'s current state.

    Args:
        world: the world whose state (and original goals) define the new problem.
        actions: builds the behaviours of the new steps.
        engine: planning engine (see :func:`~bt_raider.planners.pddl.solve`).
        timeout: planning time limit in seconds.
        guard: wraps each new step, as in :func:`~bt_raider.planners.tree.plan_to_tree`.
        name: the name of the new plan sequences.
    """

    def __init__(
        self,
        world: PddlWorld,
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

    def replan(self, *, cancel: threading.Event | None = None) -> SequentialPlan:
        """A plan from the current state to the original goals.

        Raises:
            PlanningError: no plan (the message says why), or ``cancel`` was set first.
        """
        if cancel is not None and cancel.is_set():
            raise PlanningError("replanning was cancelled")
        plan = solve(self.world.current_problem(), self.engine, self.timeout)
        self.replans += 1
        return plan

    def build(self, plan: SequentialPlan) -> py_trees.composites.Sequence:
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
        current = {"plan": plan, "left": max_replans}

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

    Planning runs on a worker (``bt_raider.runtime.worker``), so ticks never block: the decorator is
    RUNNING while the planner works. After ``max_replans`` new plans, or when planning fails,
    it fails with the reason in ``feedback_message``.

    Args:
        child: the plan subtree (e.g. from :func:`~bt_raider.planners.tree.plan_to_tree`).
        replanner: builds the new plans and subtrees.
        max_replans: how many times to replan before giving up.
        name: the node's name.
    """

    def __init__(
        self,
        child: py_trees.behaviour.Behaviour,
        replanner: Replanner,
        *,
        max_replans: int = 2,
        name: str = "replanning",
    ) -> None:
        super().__init__(name=name, child=child)
        self.replanner = replanner
        self.max_replans = max_replans
        self.replans = 0
        self._pending: Pending[Any] | None = None

    def initialise(self) -> None:
        self.replans = 0
        self._pending = None

    def _failure_reason(self) -> str:
        tip = self.decorated.tip() or self.decorated
        return tip.feedback_message or f"{tip.name} failed"

    def _settle(self) -> Status:
        """Swap in the plan the worker found, or fail with why it found none."""
        assert self._pending is not None
        pending, self._pending = self._pending, None
        error = pending.exception()
        if error is not None:
            if not isinstance(error, BtRaiderError):
                raise error  # a bug, not a planning outcome
            self.feedback_message = f"replanning failed: {error}"
            return Status.FAILURE
        new = self.replanner.build(pending.result())
        self.replanner.swap(self.decorated, new)
        self.replans += 1
        self.feedback_message = (
            f"replanned ({self.replans}/{self.max_replans}): {len(new.children)} steps"
        )
        return Status.RUNNING

    def tick(self):  # noqa: D401 - py_trees signature
        """Tick the plan, or wait for the planner while it works."""
        self.logger.debug(f"{self.__class__.__name__}.tick()")
        if self.status != Status.RUNNING:
            self.initialise()
        if self._pending is None:
            yield from self.decorated.tick()
            status = self.decorated.status
            if status is Status.FAILURE:
                reason = self._failure_reason()
                if self.replans < self.max_replans:
                    self._pending = submit(self.replanner.replan)
                    self.feedback_message = f"plan failed ({reason}); replanning"
                    status = Status.RUNNING
                else:
                    self.feedback_message = f"plan failed ({reason}) after {self.replans} replans"
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
