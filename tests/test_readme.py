"""The README's recipes, run for real: a guard dropped into an existing tree."""

from __future__ import annotations

import time

import py_trees
import pytest

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.runtime.actions import ActionBehaviour, SyncRobot
from bt_raider.runtime.guards import RaiderGuard, guard_tree
from bt_raider.simulation.simworld import SimWorld

S = py_trees.common.Status


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def tick_until_done(root, limit=5.0):
    deadline = time.monotonic() + limit
    while True:
        root.tick_once()
        if root.status != S.RUNNING or time.monotonic() > deadline:
            return root.status
        time.sleep(0.001)


def test_guard_dropped_into_an_existing_tree_stops_a_doomed_action(kitchen):
    world = SimWorld(kitchen)
    robot = SyncRobot(world)
    node = ActionBehaviour("open", ["Fridge"], robot)  # the team's existing action node
    guarded = RaiderGuard(
        node, query="open(Fridge)", checker=SymbolicReasoner(), scene=robot.observe
    )
    root = py_trees.composites.Sequence("fetch milk", memory=True, children=[guarded])
    assert tick_until_done(root) is S.FAILURE
    # The check stopped it before the robot tried (the Fridge is 3.1 m away): the child never
    # ran, the world is unchanged, and the reason is the guard's feedback.
    assert node.status is S.INVALID
    assert world.executed == [] and world.failures == []
    assert "Fridge" in guarded.feedback_message and "reach" in guarded.feedback_message
    unguarded = ActionBehaviour("open", ["Fridge"], robot)
    assert tick_until_done(unguarded) is S.FAILURE  # without the guard the robot really fails
    assert world.failures


def test_guard_tree_wraps_selected_nodes_and_the_plan_runs(kitchen):
    world = SimWorld(kitchen)
    robot = SyncRobot(world)
    world.set_agent(position={"x": -0.5, "y": 0.9, "z": 0.0})  # next to the apple
    pick = ActionBehaviour("pick", ["Apple"], robot, name="pick apple")
    root = py_trees.composites.Sequence("task", memory=True, children=[pick])
    root = guard_tree(
        root,
        SymbolicReasoner(),
        select=lambda node: "pick(Apple)" if node.name == "pick apple" else None,
        scene=robot.observe,
    )
    assert isinstance(root.children[0], RaiderGuard)
    assert tick_until_done(root) is S.SUCCESS
    assert [o.name for o in world.observe().holding] == ["Apple"]
