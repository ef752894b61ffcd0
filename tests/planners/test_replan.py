"""Replanning from the current state when the world changed under the plan."""

from __future__ import annotations

import py_trees
import pytest

from bt_raider.errors import PlanningError
from bt_raider.planners import pddl
from bt_raider.planners.replan import Replanner, Replanning
from bt_raider.planners.tree import plan_to_tree, robot_actions
from bt_raider.planners.world import PddlWorld

Status = py_trees.common.Status


def _setup(problem, robot_class):
    world = PddlWorld(problem)
    actions = robot_actions(robot_class(world))
    plan = pddl.solve(problem, engine="pyperplan")
    return world, actions, plan


def _someone_moves(world, ball, frm="rooma", to="roomb"):
    world.set(f"(at {ball} {frm})", False)
    world.set(f"(at {ball} {to})", True)


def test_replanning_decorator_reaches_the_goal_after_the_world_changed(
    gripper, two_tick_robot, tick_until_done
):
    world, actions, plan = _setup(gripper, two_tick_robot)
    steps = pddl.plan_steps(plan)
    old = plan_to_tree(plan, actions)
    root = Replanning(old, Replanner(world, actions, engine="pyperplan"))
    tree = py_trees.trees.BehaviourTree(root)
    tree.tick()  # the first step is under way
    assert root.status is Status.RUNNING
    # A person carries a ball the plan picks later to roomb: that pick will fail.
    later = next(s for s in steps[1:] if s.name == "pick")
    ball = later.args[0]
    _someone_moves(world, ball)
    assert tick_until_done(tree) is Status.SUCCESS
    assert world.goal_reached()
    assert root.replans == 1 and root.replanner.replans == 1
    done = [s.text for s in world.history]
    assert later.text not in done
    assert not any(s.startswith(f"(pick {ball} ") for s in done)
    # The old plan subtree was swapped out for the new one, which ran to the end.
    assert root.decorated is not old and old.parent is None
    assert root.decorated.parent is root
    assert all(c.status is Status.SUCCESS for c in root.decorated.children)


def test_replanning_gives_up_after_max_replans(gripper, two_tick_robot, tick_until_done):
    world, actions, plan = _setup(gripper, two_tick_robot)
    root = Replanning(plan_to_tree(plan, actions), Replanner(world, actions), max_replans=0)
    root.tick_once()
    later = next(s for s in pddl.plan_steps(plan)[1:] if s.name == "pick")
    _someone_moves(world, later.args[0])
    assert tick_until_done(root) is Status.FAILURE
    assert "after 0 replans" in root.feedback_message
    assert "(at " in root.feedback_message  # the failed step's reason is kept


def test_replanning_fails_when_no_plan_exists(gripper, two_tick_robot, tick_until_done):
    world, actions, plan = _setup(gripper, two_tick_robot)
    root = Replanning(plan_to_tree(plan, actions), Replanner(world, actions, engine="pyperplan"))
    root.tick_once()
    # The ball vanishes from every room: the goal (at ball roomb) is unreachable now.
    later = next(s for s in pddl.plan_steps(plan)[1:] if s.name == "pick")
    world.set(f"(at {later.args[0]} rooma)", False)
    assert tick_until_done(root) is Status.FAILURE
    assert root.feedback_message.startswith("replanning failed:")
    assert "has no plan" in root.feedback_message


def test_replanner_swaps_a_subtree_in_a_behaviour_tree(gripper, two_tick_robot, tick_until_done):
    world, actions, plan = _setup(gripper, two_tick_robot)
    replanner = Replanner(world, actions, engine="pyperplan")
    old = plan_to_tree(plan, actions)
    root = py_trees.composites.Sequence("mission", memory=True, children=[old])
    tree = py_trees.trees.BehaviourTree(root)
    tree.tick()
    later = next(s for s in pddl.plan_steps(plan)[1:] if s.name == "pick")
    _someone_moves(world, later.args[0])
    assert tick_until_done(tree) is Status.FAILURE
    new = replanner.replan_subtree(old, tree)
    assert root.children == [new] and new.parent is root and old.parent is None
    assert tick_until_done(tree) is Status.SUCCESS
    assert world.goal_reached()


def test_post_tick_handler_replans_between_ticks(gripper, two_tick_robot, tick_until_done):
    world, actions, plan = _setup(gripper, two_tick_robot)
    replanner = Replanner(world, actions, engine="pyperplan")
    old = plan_to_tree(plan, actions)
    root = py_trees.composites.Selector(
        "mission", memory=False, children=[old, py_trees.behaviours.Running("wait")]
    )
    tree = py_trees.trees.BehaviourTree(root)
    tree.add_post_tick_handler(replanner.post_tick_handler(old))
    tree.tick()
    later = next(s for s in pddl.plan_steps(plan)[1:] if s.name == "pick")
    _someone_moves(world, later.args[0])
    for _ in range(200):
        tree.tick()
        if world.goal_reached():
            break
    assert world.goal_reached()
    assert replanner.replans == 1
    assert root.children[0] is not old and root.children[0].status is Status.SUCCESS


def test_swapping_a_root_is_refused(gripper, two_tick_robot):
    world, actions, plan = _setup(gripper, two_tick_robot)
    replanner = Replanner(world, actions)
    lonely = plan_to_tree(plan, actions)
    with pytest.raises(PlanningError, match="it is a root"):
        replanner.swap(lonely, plan_to_tree(plan, actions))


def test_replan_from_goal_state_is_empty_and_succeeds(gripper, two_tick_robot):
    world, actions, plan = _setup(gripper, two_tick_robot)
    for step in pddl.plan_steps(plan):
        world.execute(step.name, step.args)
    new = Replanner(world, actions, engine="pyperplan").build(
        Replanner(world, actions, engine="pyperplan").replan()
    )
    assert new.children == []
    new.tick_once()
    assert new.status is Status.SUCCESS
