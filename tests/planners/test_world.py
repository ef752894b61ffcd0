"""PddlWorld: plans run as real py_trees trees to the goal in simulation."""

from __future__ import annotations

import py_trees
import pytest

from bt_raider.errors import ActionFailed, QueryError
from bt_raider.planners import pddl
from bt_raider.planners.tree import plan_to_tree, robot_actions
from bt_raider.planners.world import PddlWorld, problem_at, run_plan
from bt_raider.robot.actions import SyncRobot
from tests.shared_data import classical_domains

#: Our own gripper-style domain, then the shared ones (when ../shared is there).
CLASSICAL = ["two_rooms", *classical_domains()]


@pytest.mark.parametrize("name", CLASSICAL)
def test_plan_tree_runs_to_the_goal(name, load_problem, tick_until_done):
    problem = load_problem(name)
    plan = pddl.solve(problem, engine="pyperplan")
    world = PddlWorld(problem)
    assert not world.goal_reached()
    root = plan_to_tree(plan, robot_actions(SyncRobot(world)))
    tree = py_trees.trees.BehaviourTree(root)
    assert tick_until_done(tree) is py_trees.common.Status.SUCCESS
    assert world.goal_reached()
    assert world.unsatisfied_goals() == []
    assert [s.text for s in world.history] == [s.text for s in pddl.plan_steps(plan)]


def test_alfred_plan_runs_to_the_goal(alfred, tick_until_done):
    pytest.importorskip("up_fast_downward")
    world = PddlWorld(alfred)
    root = plan_to_tree(pddl.solve(alfred), robot_actions(SyncRobot(world)))
    assert tick_until_done(root) is py_trees.common.Status.SUCCESS
    assert world.goal_reached()
    assert world.holds("(isSliced apple)") and world.holds("(inReceptacle mug cabinet)")


def test_inapplicable_action_fails_naming_preconditions(gripper):
    world = PddlWorld(gripper)
    before = world.facts()
    with pytest.raises(ActionFailed) as exc:
        world.execute("pick", ["ball1", "roomb", "left"])
    msg = str(exc.value)
    assert "(pick ball1 roomb left) failed" in msg
    assert "(at ball1 roomb)" in msg and "(at-robby roomb)" in msg
    assert "(free left)" not in msg  # it holds
    assert world.facts() == before and world.history == []


def test_execute_changes_the_state(gripper):
    world = PddlWorld(gripper)
    assert world.execute("pick", ["ball1", "rooma", "left"]) == "(pick ball1 rooma left) done"
    assert world.holds("(carry ball1 left)")
    assert not world.holds("(at ball1 rooma)") and not world.holds("(free left)")
    assert world.observe() is None


def test_unknown_action_or_object_fails(gripper):
    world = PddlWorld(gripper)
    with pytest.raises(ActionFailed, match="unknown action 'grab'.*drop, move, pick"):
        world.execute("grab", ["ball1"])
    with pytest.raises(ActionFailed, match="no object 'ball9'"):
        world.execute("pick", ["ball9", "rooma", "left"])


def test_failed_step_fails_the_tree(gripper, tick_until_done):
    plan = pddl.solve(gripper, engine="pyperplan")
    world = PddlWorld(gripper)
    first = pddl.plan_steps(plan)[0]
    ball = first.args[0]
    world.set(f"(at {ball} rooma)", False)  # someone took the ball
    root = plan_to_tree(plan, robot_actions(SyncRobot(world)))
    assert tick_until_done(root) is py_trees.common.Status.FAILURE
    assert world.history == []
    assert f"(at {ball} rooma)" in root.children[0].feedback_message
    assert not world.goal_reached()


def test_set_holds_and_facts(gripper):
    world = PddlWorld(gripper)
    assert world.holds("(at ball1 rooma)")
    world.set("(at ball1 rooma)", False)
    world.set("at(ball1, roomb)")
    assert not world.holds("(at ball1 rooma)") and world.holds("(at ball1 roomb)")
    assert "(at ball1 roomb)" in world.facts() and "(at ball1 rooma)" not in world.facts()
    with pytest.raises(QueryError, match="unknown predicate 'on'"):
        world.set("(on ball1 rooma)")
    with pytest.raises(QueryError, match="no object 'ball7'"):
        world.holds("(at ball7 rooma)")


def test_current_problem_starts_where_the_world_is(gripper):
    world = PddlWorld(gripper)
    plan = pddl.solve(gripper, engine="pyperplan")
    steps = pddl.plan_steps(plan)
    run_plan(world, steps[:3])
    current = world.current_problem()
    # The rest of the old plan is valid from the new initial state; the whole plan is not.
    assert pddl.validate(current, pddl.to_plan(current, steps[3:]))
    assert not pddl.validate(current, pddl.to_plan(current, steps))
    # The original problem is untouched.
    assert pddl.validate(gripper, plan)


def test_problem_at_with_new_goals(gripper):
    world = PddlWorld(gripper)
    goal = pddl.parse_step("(carry ball2 right)")
    from bt_raider.planners.world import parse_fact

    sub = problem_at(gripper, world.state, [parse_fact(gripper, goal.text)])
    plan = pddl.solve(sub, engine="pyperplan")
    assert [s.text for s in pddl.plan_steps(plan)] == ["(pick ball2 rooma right)"]
