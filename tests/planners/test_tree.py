"""Plan -> tree: the action registry (classes and factories), guards around each step."""

from __future__ import annotations

import py_trees
import pytest

from bt_raider.errors import PlanningError
from bt_raider.planners import pddl
from bt_raider.planners.pddl import Step
from bt_raider.planners.tree import (
    ActionRegistry,
    action,
    default_registry,
    plan_to_tree,
    raider_guards,
    robot_actions,
)
from bt_raider.planners.world import PddlWorld
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionBehaviour, SyncRobot
from bt_raider.robot.human import ScriptedHuman

Status = py_trees.common.Status


class Record(py_trees.behaviour.Behaviour):
    """A behaviour class registered for an action: built as ``Record(step)``."""

    def __init__(self, step: Step) -> None:
        super().__init__(f"record {step.text}")
        self.step = step

    def update(self) -> Status:
        self.feedback_message = f"recorded {self.step.text}"
        return Status.SUCCESS


def test_registry_with_a_class_and_a_factory():
    registry = ActionRegistry()
    registry.action("pick")(Record)

    @registry.action("MOVE")
    def move(step: Step) -> py_trees.behaviour.Behaviour:
        return py_trees.behaviours.Running(name=f"moving to {step.args[1]}")

    assert "pick" in registry and "move" in registry and "drop" not in registry
    assert registry.names() == ["move", "pick"]
    pick = registry.build(Step("pick", ["ball1", "rooma", "left"]))
    assert isinstance(pick, Record) and pick.step.args == ["ball1", "rooma", "left"]
    moving = registry.build(Step("Move", ["rooma", "roomb"]))
    assert moving.name == "moving to roomb"
    assert move(Step("move", ["a", "b"])).name == "moving to b"  # the decorator returns it


def test_unregistered_action_without_fallback_is_an_error():
    registry = ActionRegistry()
    registry.register("pick", Record)
    with pytest.raises(PlanningError, match=r"'drop'.*registered actions are pick"):
        registry.build(Step("drop", ["ball1", "roomb", "left"]))


def test_factory_must_return_a_behaviour():
    registry = ActionRegistry()
    registry.register("pick", lambda step: "not a behaviour")
    with pytest.raises(TypeError, match="not a py_trees Behaviour"):
        registry.build(Step("pick", []))


def test_module_level_decorator_fills_the_default_registry():
    name = "bt_raider_test_wave"
    try:

        @action(name)
        class Wave(Record):
            pass

        assert name in default_registry
        assert isinstance(default_registry.build(Step(name, [])), Wave)
    finally:
        default_registry.unregister(name)
    assert name not in default_registry


def test_robot_actions_falls_back_to_action_behaviour(gripper):
    robot = SyncRobot(PddlWorld(gripper))
    base = ActionRegistry()
    base.register("move", Record)
    registry = robot_actions(robot, base=base)
    pick = registry.build(Step("pick", ["ball1", "rooma", "left"]))
    assert isinstance(pick, ActionBehaviour)
    assert (pick.action, pick.args, pick.robot) == ("pick", ["ball1", "rooma", "left"], robot)
    assert pick.name == "(pick ball1 rooma left)"
    assert isinstance(registry.build(Step("move", ["rooma", "roomb"])), Record)
    assert "move" not in robot_actions(robot)  # the base is copied, not shared


def test_plan_to_tree_is_a_memory_sequence_of_the_steps(gripper):
    plan = pddl.solve(gripper, engine="pyperplan")
    registry = ActionRegistry(fallback=Record)
    root = plan_to_tree(plan, registry, name="gripper plan")
    assert isinstance(root, py_trees.composites.Sequence) and root.memory
    assert root.name == "gripper plan"
    steps = pddl.plan_steps(plan)
    assert [c.step.text for c in root.children] == [s.text for s in steps]
    root.tick_once()
    assert root.status is Status.SUCCESS
    # The same from a list of steps.
    assert len(plan_to_tree(steps, registry).children) == len(steps)
    text = py_trees.display.unicode_tree(root)
    assert all(f"record {s.text}" in text for s in steps)


def test_guard_wraps_every_step_and_stops_an_inapplicable_one(gripper, tick_until_done):
    """An EternalGuard asking the PDDL world whether the step is applicable right now."""
    world = PddlWorld(gripper)
    plan = pddl.solve(gripper, engine="pyperplan")
    wrapped: list[Step] = []

    def guard(child, step):
        wrapped.append(step)
        return py_trees.decorators.EternalGuard(
            name=f"applicable? {step.text}",
            child=child,
            condition=lambda: world.is_applicable(step),
        )

    root = plan_to_tree(plan, robot_actions(SyncRobot(world)), guard=guard)
    assert len(wrapped) == len(plan.actions)
    assert all(isinstance(c, py_trees.decorators.EternalGuard) for c in root.children)
    steps = pddl.plan_steps(plan)
    # Someone takes away the ball of a later pick: that step must not reach the robot.
    target = next(s for s in steps[2:] if s.name == "pick")
    world.set(f"(at {target.args[0]} {target.args[1]})", False)
    assert tick_until_done(root) is Status.FAILURE
    failed = next(c for c in root.children if c.status is Status.FAILURE)
    assert failed.name == f"applicable? {target.text}"
    assert target.text not in [s.text for s in world.history]
    assert [s.text for s in world.history] == [s.text for s in steps[: steps.index(target)]]


def test_raider_guards_check_the_current_preconditions(gripper, tick_until_done):
    guards = pytest.importorskip("bt_raider.runtime.guards")
    from bt_raider.planners.preconditions import PddlChecker

    world = PddlWorld(gripper)
    plan = pddl.solve(gripper, engine="pyperplan")
    make_guard = raider_guards(PddlChecker(world), scene=None, preconditions=world)
    root = plan_to_tree(plan, robot_actions(SyncRobot(world)), guard=make_guard)
    assert all(isinstance(c, guards.RaiderGuard) for c in root.children)
    assert tick_until_done(root) is Status.SUCCESS
    assert world.goal_reached()
    # Each guard built its query at check time, with the preconditions of that moment.
    for child in root.children:
        assert child.query.unsatisfied == ()
        assert child.query.preconditions and child.verdict.ok


def test_raider_guards_fail_closed_without_recovery(gripper, tick_until_done):
    pytest.importorskip("bt_raider.runtime.guards")
    from bt_raider.planners.preconditions import PddlChecker

    world = PddlWorld(gripper)
    plan = pddl.solve(gripper, engine="pyperplan")
    make_guard = raider_guards(PddlChecker(world), scene=None, preconditions=world)
    root = plan_to_tree(plan, robot_actions(SyncRobot(world)), guard=make_guard)
    world.execute("move", ["rooma", "roomb"])  # the robot is not where the plan expects
    history = list(world.history)
    assert tick_until_done(root) is Status.FAILURE
    first = root.children[0]
    assert first.query.unsatisfied == ("(at-robby rooma)",)
    assert "(at-robby rooma)" in first.feedback_message
    assert world.history == history  # nothing ran


def test_raider_guards_without_preconditions_use_the_step_text(gripper):
    pytest.importorskip("bt_raider.runtime.guards")
    from bt_raider.planners.preconditions import PddlChecker

    step = Step("move", ["rooma", "roomb"])
    guard = raider_guards(PddlChecker(gripper), scene=None, max_attempts=0)(Record(step), step)
    assert guard.query_source == "(move rooma roomb)"
    assert guard.max_attempts == 0


def test_the_registered_actions_are_the_ones_recovery_may_use():
    registry = ActionRegistry()
    registry.register("navigate", Record)
    registry.register("grasp", Record)
    registry.register("put", Record)
    actions = registry.recovery_actions()
    assert actions.name_for("move_to") == "navigate"
    assert actions.name_for("pick") == "grasp" and actions.name_for("place") == "put"
    assert not actions.has("open")
    recovery = Recovery(SymbolicRecoveryPlanner(), None, ScriptedHuman([]), actions=registry)  # type: ignore[arg-type]
    assert recovery.actions is not None and recovery.actions.names == actions.names
    assert registry.recovery_actions({"move_to": "grasp"}).name_for("move_to") == "grasp"
