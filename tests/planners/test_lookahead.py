"""Look-ahead in PDDL plans: the steps left pushed through UP's sequential simulator.

The domains are the project's own (``tests/data/pddl/two_rooms``) and the medicine-delivery
example's; the plans run on a PddlWorld behind a robot whose actions take two ticks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import py_trees
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.errors import ActionFailed, PlanningError
from bt_raider.planners import pddl
from bt_raider.planners.lookahead import Forecast, PddlForecaster, forecast_pddl
from bt_raider.planners.preconditions import PddlChecker
from bt_raider.planners.replan import Replanner
from bt_raider.planners.tree import plan_to_tree, raider_guards, robot_actions
from bt_raider.planners.world import PddlWorld
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.runtime.guards import RaiderGuard
from bt_raider.runtime.lookahead import LAST_FORECAST, LookAhead, forecast_key
from tests.shared_data import OWN_PDDL, ROOT

Status = py_trees.common.Status
R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
MEDICINE = ROOT / "examples" / "medicine_delivery"
#: The two-rooms reference plan (9 steps, both hands): 3 is (drop ball1 roomb left), 6 is
#: (pick ball3 rooma left).
REFERENCE = OWN_PDDL / "two_rooms" / "reference_plan_fast_downward.txt"


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


@pytest.fixture
def plan():
    return pddl.read_plan(REFERENCE)


@pytest.fixture
def medicine():
    return pddl.load(MEDICINE / "domain.pddl", MEDICINE / "problem.pddl")


MEDICINE_PLAN = [
    "(approach tiago home medicine_counter)",
    "(pick tiago adrianas_medicine medicine_counter)",
    "(approach_person tiago medicine_counter adriana)",
    "(handover tiago adrianas_medicine adriana)",
]


def run_to(world: PddlWorld, steps, upto: int) -> None:
    """Execute steps ``0 .. upto - 1`` (what the robot has done so far)."""
    for step in steps[:upto]:
        world.execute(step.name, step.args)


def test_a_failure_three_steps_ahead_is_flagged(gripper, plan):
    world = PddlWorld(gripper)
    run_to(world, plan, 3)  # both balls carried to roomb; dropping ball1 is next
    world.set("(at ball3 rooma)", False)  # someone took ball3 away
    f = forecast_pddl(gripper, plan, world, start=3)
    assert isinstance(f, Forecast)
    assert (f.step, f.of, f.ahead) == (6, 9, 3)
    assert f.action == "pick(ball3, rooma, left)"
    assert f.failed == ("(at ball3 rooma)",)
    assert f.category == "wrong_state"
    assert (
        f.explanation
        == "step 7 of 9, pick(ball3, rooma, left), will fail: (at ball3 rooma) is false"
    )
    # Depth 2 does not see that far.
    assert forecast_pddl(gripper, plan, world, start=3, depth=2) is None
    assert forecast_pddl(gripper, plan, world, start=3, depth=3) == f
    # Once the failing step is the current one, it is its guard's business: the rest is
    # judged as if its issue gets resolved.
    for step in plan[3:6]:
        world.execute(step.name, step.args)
    assert forecast_pddl(gripper, plan, world, start=6) is None


def test_the_current_steps_effects_count_whether_or_not_the_world_shows_them(gripper, plan):
    # A robot that executes at once (the state shows step 3 done) and one still at it: same.
    world = PddlWorld(gripper)
    run_to(world, plan, 3)
    world.set("(at ball3 rooma)", False)
    before = forecast_pddl(gripper, plan, world.state, start=3)
    world.execute(plan[3].name, plan[3].args)
    after = forecast_pddl(gripper, plan, world.state, start=3)
    assert before == after and before is not None and before.step == 6


def test_medicine_delivery_from_facts_of_the_current_state(medicine):
    assert forecast_pddl(medicine, MEDICINE_PLAN, start=0) is None  # the plan is fine
    # The medicine is not on the counter any more: the pick, one step ahead, will fail.
    f = forecast_pddl(medicine, MEDICINE_PLAN, ["(robot_at tiago home)", "(hand_free tiago)"])
    assert f is not None and (f.step, f.ahead, f.category) == (1, 1, "wrong_state")
    assert f.failed == ("(item_at adrianas_medicine medicine_counter)",)
    assert f.action == "pick(tiago, adrianas_medicine, medicine_counter)"
    # The robot's hand is full: the same pick fails for that reason instead.
    f = forecast_pddl(
        medicine,
        MEDICINE_PLAN,
        ["(robot_at tiago home)", "(item_at adrianas_medicine medicine_counter)"],
    )
    assert f is not None and f.failed == ("(hand_free tiago)",)
    # Looking from the pick (the robot at the counter), the rest of the plan is fine.
    at_counter = ["(robot_at tiago medicine_counter)", "(hand_free tiago)",
                  "(item_at adrianas_medicine medicine_counter)"]  # fmt: skip
    assert forecast_pddl(medicine, MEDICINE_PLAN, at_counter, start=1) is None


def test_no_false_alarm_along_a_plan_that_runs(gripper, plan):
    world = PddlWorld(gripper)
    forecaster = PddlForecaster(world, plan)
    for start, step in enumerate(plan):
        assert forecaster.forecast(start) is None
        assert forecaster.forecast(start, depth=1) is None
        world.execute(step.name, step.args)
    assert world.goal_reached()


def test_categories_map_fluents_and_unknown_objects_are_not_present(gripper, plan):
    world = PddlWorld(gripper)
    world.set("(free right)", False)
    f = PddlForecaster(world, plan, categories={"free": "robot_state"}).forecast(0)
    assert f is not None and (f.step, f.category) == (1, "robot_state")
    assert f.verdict is not None and f.as_verdict().explanation == f.explanation
    steps = [*plan[:2], pddl.Step("move", ["rooma", "roomz"])]
    f = forecast_pddl(gripper, steps, start=0)
    assert f is not None and (f.step, f.category) == (2, "not_present") and "roomz" in f.explanation


def test_fails_closed_when_the_state_cannot_be_reasoned_about(gripper, plan):
    f = forecast_pddl(gripper, plan, state=["(at-robby roomq)"], start=0)
    assert f is not None and f.unknown and f.step == 1 and "roomq" in f.explanation

    def broken():
        raise OSError("the state server is down")

    f = forecast_pddl(gripper, plan, state=broken, start=2)
    assert f is not None and f.unknown and f.step == 3 and "state server" in f.explanation
    steps = [*plan[:2], pddl.Step("fly", ["rooma", "roomb"])]
    f = forecast_pddl(gripper, steps, start=0)
    assert f is not None and f.unknown and f.step == 2 and "fly" in f.explanation
    f = forecast_pddl(gripper, plan, state=42, start=0)
    assert f is not None and f.unknown and "state must be" in f.explanation


def test_facts_read_off_the_scene_by_a_users_function(gripper, plan):
    seen = []

    def facts(scene):
        seen.append(scene)
        held = {"(at ball1 rooma)", "(at ball2 rooma)"}  # ball3 is not in the scene
        static = ["(room rooma)", "(room roomb)", "(gripper left)", "(gripper right)"]
        balls = ["(ball ball1)", "(ball ball2)", "(ball ball3)"]
        return [*static, *balls, "(at-robby rooma)", "(free left)", "(free right)", *held]

    scene = {"agent": {"position": {"x": 0, "y": 0.9, "z": 0}}, "objects": []}
    f = PddlForecaster(gripper, plan, scene=lambda: scene, facts=facts).forecast(0)
    assert f is not None and (f.step, f.failed) == (6, ("(at ball3 rooma)",))
    assert len(seen) == 1
    with pytest.raises(ValueError, match="scene="):
        PddlForecaster(gripper, plan, facts=facts)


def test_a_problem_the_simulator_cannot_run_is_an_error(load_problem):
    durative = load_problem("lamp_durative")
    with pytest.raises(PlanningError, match="durative"):
        PddlForecaster(durative, [])


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_the_forecast_is_where_executing_the_plan_would_fail(gripper, plan, data):
    """Against PddlWorld.execute: the first step after ``start`` that raises ActionFailed."""
    world = PddlWorld(gripper)
    start = data.draw(st.integers(0, len(plan) - 1), label="start")
    run_to(world, plan, start)
    facts = world.facts()
    for fact in data.draw(st.lists(st.sampled_from(facts), max_size=2, unique=True), label="gone"):
        world.set(fact, False)
    depth = data.draw(st.one_of(st.none(), st.integers(1, 8)), label="depth")
    f = forecast_pddl(gripper, plan, world.state, start=start, depth=depth)
    # The oracle: apply the current step however it stands, then execute the rest.
    act, objects = pddl.resolve(gripper, plan[start])
    oracle = PddlWorld(gripper, state=world.simulator.apply_unsafe(world.state, act, objects))
    last = len(plan) - 1 if depth is None else min(len(plan) - 1, start + depth)
    expected = None
    for i in range(start + 1, last + 1):
        try:
            oracle.execute(plan[i].name, plan[i].args)
        except ActionFailed:
            expected = i
            break
    assert (f.step if f is not None else None) == expected
    assert f is None or (not f.unknown and f.ahead == f.step - start and f.failed)


# --------------------------------------------------------------------------- in a tree
def guarded(world: PddlWorld, robot_class, steps):
    actions = robot_actions(robot_class(world))
    guard = raider_guards(PddlChecker(world), scene=None, preconditions=world, deadline=30)
    return actions, guard, plan_to_tree(steps, actions, guard=guard)


def tick_until_done(root, max_ticks: int = 2000):
    seen = []
    for _ in range(max_ticks):
        root.tick_once()
        seen.append(root.status)
        if root.status is not R:
            return seen
        time.sleep(0.002)
    raise AssertionError(f"still running: {root.feedback_message}")


def test_warn_in_a_plan_tree_posts_on_the_blackboard_and_to_the_guard(
    gripper, plan, two_tick_robot
):
    world = PddlWorld(gripper)
    _, _, tree = guarded(world, two_tick_robot, plan)
    la = LookAhead(tree, PddlForecaster(world, plan), policy="warn")
    la.tick_once()
    world.set("(at ball3 rooma)", False)  # while the first step runs
    for _ in range(200):  # the forecast from step 1 saw the ball; the next one will not
        la.tick_once()
        if la.forecast is not None:
            break
        # A robot's action takes a while: forecasts run then, not while a guard checks.
        time.sleep(0.02)
    f = la.forecast
    assert f is not None and f.step == 6 and not f.unknown
    guard = tree.children[6]
    assert isinstance(guard, RaiderGuard) and guard.forecast == f
    board = py_trees.blackboard.Blackboard
    assert board.get(forecast_key(guard))["action"] == "pick(ball3, rooma, left)"
    assert board.get(LAST_FORECAST)["explanation"] == f.explanation
    seen = tick_until_done(la)
    assert all(s is R for s in seen[:-1]) and seen[-1] is F  # warn: the guard fails at its turn
    why = [(c.name, c.status, c.feedback_message) for c in tree.children]
    assert guard.status is F and "(at ball3 rooma)" in guard.feedback_message, why
    assert [c.status for c in tree.children[:6]] == [S] * 6


def test_every_change_looks_again_when_the_world_state_changes(gripper, plan, two_tick_robot):
    world = PddlWorld(gripper)
    _, _, tree = guarded(world, two_tick_robot, plan)
    la = LookAhead(tree, PddlForecaster(world, plan), every="change")
    la.tick_once()
    assert la.pending is not None and la.pending.wait(10)
    la.tick_once()
    assert la.forecast is None and la.status is R
    world.set("(at ball3 rooma)", False)
    la.tick_once()  # the state object changed: a new forecast goes out
    assert la.pending is not None and la.pending.wait(10)
    la.tick_once()
    assert la.status is R
    assert la.forecast is not None and la.forecast.step == 6


def waiting_for(looked: list[LookAhead], base: type, seen: Callable[[LookAhead], bool]) -> type:
    """A robot class that finishes an action only once ``seen(looked[0])``, or after 30 s (then
    the test's assertions say what failed). Under load the plan's own checks can keep the
    polite forecast waiting until a guard finds the change by itself: no replan is tried."""
    until = time.monotonic() + 30

    class SteadyRobot(base):  # type: ignore[misc, valid-type]
        def poll(self, handle: Any) -> Progress:
            if not seen(looked[0]) and time.monotonic() < until:
                return Progress(ActionState.RUNNING, "waiting for the look-ahead")
            return super().poll(handle)

    return SteadyRobot


def test_replan_swaps_in_a_plan_from_the_current_state_and_the_tree_completes(
    gripper, plan, two_tick_robot
):
    looked: list[LookAhead] = []
    world = PddlWorld(gripper)
    # A robot's action lasts at least as long as a forecast in flight: the look-ahead sees
    # each step's world before the plan moves on.
    robot = waiting_for(looked, two_tick_robot, lambda la: la.pending is None or la.pending.done())
    actions, guard, tree = guarded(world, robot, plan)
    replanner = Replanner(world, actions, engine="pyperplan", guard=guard)
    forecaster = PddlForecaster(world, plan)
    la = LookAhead(tree, forecaster, policy="replan", replanner=replanner)
    looked.append(la)
    la.tick_once()
    # Someone carries ball3 to roomb: (pick ball3 rooma left) will fail; the rest is moot.
    world.set("(at ball3 rooma)", False)
    world.set("(at ball3 roomb)", True)
    seen = tick_until_done(la)
    assert seen[-1] is S and all(s is R for s in seen[:-1]), la.feedback_message
    assert world.goal_reached() and la.replans == 1
    assert la.decorated is not tree and tree.parent is None and la.decorated.parent is la
    done = [s.text for s in world.history]
    assert not any(t.startswith("(pick ball3") for t in done)
    assert len(forecaster) == len(la.decorated.children)  # it follows the new plan


def test_replan_that_finds_no_plan_fails_with_the_reason(gripper, plan, two_tick_robot):
    looked: list[LookAhead] = []
    robot = waiting_for(looked, two_tick_robot, lambda la: "will fail" in la.feedback_message)
    world = PddlWorld(gripper)
    actions, guard, tree = guarded(world, robot, plan)
    replanner = Replanner(world, actions, engine="pyperplan", guard=guard)
    la = LookAhead(tree, PddlForecaster(world, plan), policy="replan", replanner=replanner)
    looked.append(la)
    world.set("(at ball3 rooma)", False)  # ball3 is gone for good: no plan reaches the goal
    seen = tick_until_done(la)
    assert seen[-1] is F
    assert "will fail" in la.feedback_message and "replanning failed" in la.feedback_message
    assert not any(s.text.startswith("(pick ball3") for s in world.history)


def test_repeated_facts_give_the_state_of_the_distinct_ones(medicine):
    from unified_planning.model.fluent import get_all_fluent_exp

    from bt_raider.planners.lookahead import state_from_facts

    facts = ["(robot_at tiago home)", "(hand_free tiago)"]
    once, many = state_from_facts(medicine, facts), state_from_facts(medicine, facts * 20_000)
    for fluent in medicine.fluents:
        for fe in get_all_fluent_exp(medicine, fluent):
            assert once.get_value(fe) == many.get_value(fe)
    f = forecast_pddl(medicine, MEDICINE_PLAN, facts * 20_000)
    assert f is not None and (f.step, f.category) == (1, "wrong_state")


def test_a_plan_that_fails_before_any_warning_says_where_and_why(gripper, plan, two_tick_robot):
    class JammedRobot(two_tick_robot):  # type: ignore[misc, valid-type]
        """Its gripper jams on the second action, which no forecast of the PDDL can see."""

        def poll(self, handle):
            if handle == 2:
                return Progress(ActionState.FAILED, "the gripper jammed")
            return super().poll(handle)

    world = PddlWorld(gripper)
    _, _, tree = guarded(world, JammedRobot, plan)
    la = LookAhead(tree, PddlForecaster(world, plan), policy="warn")
    seen = tick_until_done(la)
    assert seen[-1] is F and all(s is R for s in seen[:-1])
    assert la.feedback_message.startswith(f"the plan failed at step 2 ({tree.children[1].name})")
    assert "the gripper jammed" in la.feedback_message
