"""PddlRecoveryPlanner: recovery code planned from the current state, run by a real RaiderGuard."""

from __future__ import annotations

import threading

import py_trees
import pytest

from bt_raider.checking.verdict import Category, Verdict
from bt_raider.planners import pddl
from bt_raider.planners.pddl_recovery import (
    PddlRecoveryPlanner,
    code_line,
    code_name,
    domain_actions,
    vocabulary,
)
from bt_raider.planners.preconditions import PddlChecker
from bt_raider.planners.tree import plan_to_tree, raider_guards, robot_actions
from bt_raider.planners.world import PddlWorld
from bt_raider.recovery.contract import RecoveryPlanner, RecoveryRequest
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.safecode import parse_recovery
from bt_raider.robot.actions import SyncRobot
from bt_raider.robot.human import ScriptedHuman

Status = py_trees.common.Status


def _request(world, action: str) -> RecoveryRequest:
    verdict = PddlChecker(world).check(None, action)
    return RecoveryRequest(action=action, verdict=verdict)


def test_is_a_recovery_planner(gripper):
    assert isinstance(PddlRecoveryPlanner(gripper), RecoveryPlanner)


def test_plans_to_the_preconditions_and_ends_with_the_action(gripper):
    world = PddlWorld(gripper)
    world.execute("move", ["rooma", "roomb"])
    code = PddlRecoveryPlanner(world, engine="pyperplan").propose(
        _request(world, "(drop ball1 rooma left)")
    )
    lines = code.splitlines()
    assert lines[-1] == "drop('ball1', 'rooma', 'left')"
    assert "pick('ball1', 'rooma', 'left')" in lines
    assert lines.index("move('roomb', 'rooma')") < lines.index("pick('ball1', 'rooma', 'left')")
    # The code passes the whitelist with the domain's vocabulary, and it really works:
    program = parse_recovery(code, vocabulary(gripper))
    for step in program.steps:
        world.execute(step.action, list(step.args))
    assert world.holds("(at ball1 rooma)") and world.holds("(free left)")


def test_no_plan_says_why(gripper):
    world = PddlWorld(gripper)
    world.set("(at ball1 rooma)", False)  # the ball is nowhere
    code = PddlRecoveryPlanner(world, engine="pyperplan").propose(
        _request(world, "(pick ball1 rooma left)")
    )
    program = parse_recovery(code, vocabulary(gripper))
    assert program.only_says
    assert "cannot make (pick ball1 rooma left) possible" in code and "no plan" in code


def test_unknown_action_says_why(gripper):
    request = RecoveryRequest("grab the ball", Verdict(Category.NOT_PRESENT, "no such action"))
    code = PddlRecoveryPlanner(gripper).propose(request)
    assert parse_recovery(code, vocabulary(gripper)).only_says
    assert "cannot plan a recovery" in code


def test_nothing_missing_symbolically_says_so(gripper):
    request = RecoveryRequest(
        "(pick ball1 rooma left)", Verdict(Category.OBSTRUCTED, "A box is on the ball.")
    )
    code = PddlRecoveryPlanner(gripper).propose(request)
    assert "sees nothing to fix" in code and "A box is on the ball." in code


def test_cancelled_before_planning(gripper):
    cancel = threading.Event()
    cancel.set()
    code = PddlRecoveryPlanner(gripper).propose(
        _request(PddlWorld(gripper), "(move roomb rooma)"), cancel=cancel
    )
    assert code.startswith("say(") and "cancelled" in code


def test_dashed_names_become_identifiers(load_problem):
    blocks = load_problem("ipc2000_blocks_typed")
    assert code_name("pick-up") == "pick_up"
    assert code_line(pddl.Step("pick-up", ["b"])) == "pick_up('b')"
    vocab = vocabulary(blocks)
    assert "pick_up" in vocab and vocab.arities("stack") == (2,)
    world = PddlWorld(blocks)
    code = PddlRecoveryPlanner(world, engine="pyperplan").propose(_request(world, "(stack b a)"))
    program = parse_recovery(code, vocab)
    for step in program.steps:  # the world maps pick_up back to pick-up
        world.execute(step.action, list(step.args))
    assert world.holds("(on b a)")


def test_guarded_plan_recovers_and_reaches_the_goal(gripper, tick_until_done):
    """The whole loop: RaiderGuard -> PddlChecker issue -> PddlRecoveryPlanner code -> re-check -> act."""
    pytest.importorskip("bt_raider.runtime.guards")
    world = PddlWorld(gripper)
    robot = SyncRobot(world)
    plan = pddl.solve(gripper, engine="pyperplan")
    recovery = Recovery(
        PddlRecoveryPlanner(world, engine="pyperplan"),
        robot,
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
    )
    guard = raider_guards(PddlChecker(world), scene=None, recovery=recovery, preconditions=world)
    root = plan_to_tree(plan, robot_actions(robot), guard=guard)
    world.execute("move", ["rooma", "roomb"])  # the robot was sent away before the plan starts
    assert tick_until_done(root) is Status.SUCCESS
    assert world.goal_reached()
    first = root.children[0]
    assert first.attempts == 1
    assert first.plan is not None and "move('roomb', 'rooma')" in first.plan.code
    history = [s.text for s in world.history]
    assert history[:2] == ["(move rooma roomb)", "(move roomb rooma)"]
    assert history[2:] == [s.text for s in pddl.plan_steps(plan)]


def test_domain_actions_are_the_operators_under_their_own_names(gripper):
    actions = domain_actions(gripper)
    # move -> move_to, pick -> pick, drop -> place: recovery code uses the domain's names.
    assert actions.name_for("move_to") == "move"
    assert actions.name_for("pick") == "pick" and actions.name_for("place") == "drop"
    assert not actions.has("open") and "open" not in actions.vocabulary()
    explicit = domain_actions(gripper, mapping={"move_to": "move"})
    assert explicit.verb_of("move") == "move_to"
