"""Replanning from the current state when the world changed under the plan."""

from __future__ import annotations

import re

import py_trees
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# ---------------------------------------------------------------- replanning from observed facts
# A fetch domain of the test's own: the robot carries a thing home. The robot is a set of facts
# and its actions are plain py_trees behaviours written here (no bt_raider action or world).
FETCH_DOMAIN = """
(define (domain fetch)
  (:requirements :strips :typing)
  (:types place thing)
  (:predicates (at ?p - place) (thing_at ?t - thing ?p - place) (carrying ?t - thing))
  (:action go :parameters (?from - place ?to - place)
    :precondition (at ?from) :effect (and (at ?to) (not (at ?from))))
  (:action take :parameters (?t - thing ?p - place)
    :precondition (and (at ?p) (thing_at ?t ?p))
    :effect (and (carrying ?t) (not (thing_at ?t ?p))))
  (:action drop :parameters (?t - thing ?p - place)
    :precondition (and (at ?p) (carrying ?t))
    :effect (and (thing_at ?t ?p) (not (carrying ?t)))))
"""
FETCH_PROBLEM = """
(define (problem fetch-cup) (:domain fetch)
  (:objects home table - place cup - thing)
  (:init (at home) (thing_at cup table))
  (:goal (thing_at cup home)))
"""
FETCH_EFFECTS = {
    "go": (["(at {0})"], ["(at {1})"], ["(at {0})"]),
    "take": (["(at {1})", "(thing_at {0} {1})"], ["(carrying {0})"], ["(thing_at {0} {1})"]),
    "drop": (["(at {1})", "(carrying {0})"], ["(thing_at {0} {1})"], ["(carrying {0})"]),
}


class FactRobot:
    """The test's robot: the facts that hold, and things its own behaviours cannot do."""

    def __init__(self, facts):
        self.facts = set(facts)
        self.stuck: set[str] = set()  # step texts that fail for a reason no fact models
        self.done: list[str] = []


class Act(py_trees.behaviour.Behaviour):
    """A plain py_trees behaviour: RUNNING for one tick, then its effects or FAILURE."""

    def __init__(self, step, robot):
        super().__init__(name=step.text)
        self.step, self.robot, self.ticks = step, robot, 0

    def initialise(self):
        self.ticks = 0

    def update(self):
        self.ticks += 1
        if self.ticks < 2:
            return Status.RUNNING
        pre, add, delete = FETCH_EFFECTS[self.step.name]
        missing = [f.format(*self.step.args) for f in pre]
        missing = [f for f in missing if f not in self.robot.facts]
        if missing or self.step.text in self.robot.stuck:
            self.feedback_message = f"cannot: {', '.join(missing) or 'stuck'}"
            return Status.FAILURE
        self.robot.facts -= {f.format(*self.step.args) for f in delete}
        self.robot.facts |= {f.format(*self.step.args) for f in add}
        self.robot.done.append(self.step.text)
        return Status.SUCCESS


def _fetch(robot, extra=None):
    from bt_raider.planners.replan import ObservedState
    from bt_raider.planners.tree import ActionRegistry

    registry = ActionRegistry()
    for name in FETCH_EFFECTS:
        registry.register(name, lambda step: Act(step, robot))
    state = ObservedState(
        FETCH_DOMAIN, FETCH_PROBLEM, lambda: sorted(robot.facts), objects=extra or {}
    )
    return state, registry


def _fetch_plan():
    return [
        pddl.parse_step(s)
        for s in ("(go home table)", "(take cup table)", "(go table home)", "(drop cup home)")
    ]


def _run(root, robot, when_first_done=None, limit_s=120.0):
    """Tick until done; ``when_first_done`` runs after the first step succeeded. Returns the
    status and whether some tick found the decorator waiting on its planner."""
    import time

    waited = False
    deadline = time.monotonic() + limit_s  # a "does not hang" bound, not a timing
    while time.monotonic() < deadline:
        root.tick_once()
        # The decorator's status and its child's, on every tick: while the planner works the
        # failed plan is not ticked; a new plan starts INVALID; the end is the plan's end.
        child = root.decorated.status
        if root.pending is not None:
            assert root.status is Status.RUNNING and child is Status.FAILURE
        elif root.status is Status.RUNNING:
            assert child in (Status.RUNNING, Status.INVALID)
        elif root.status is Status.SUCCESS:
            assert child is Status.SUCCESS
        else:
            assert root.status is Status.FAILURE and child is Status.FAILURE
        waited = waited or root.pending is not None
        if when_first_done is not None and robot.done:
            when_first_done()
            when_first_done = None
        if root.status is not Status.RUNNING:
            return root.status, waited
        time.sleep(0.005)
    raise AssertionError("the tree did not finish")


def test_observed_replan_swaps_the_subtree_of_plain_behaviours_and_the_tree_completes():
    robot = FactRobot({"(at home)", "(thing_at cup table)"})
    state, registry = _fetch(robot, {"shelf": "place"})
    old = plan_to_tree(_fetch_plan(), registry)
    root = Replanning(
        old, Replanner(state, registry, engine="pyperplan", timeout=30), steps=_fetch_plan()
    )

    def someone_moves_the_cup():  # after (go home table): the cup is on the shelf now
        robot.facts -= {"(thing_at cup table)"}
        robot.facts |= {"(thing_at cup shelf)"}

    status, waited = _run(root, robot, someone_moves_the_cup)
    assert status is Status.SUCCESS and waited  # ticks went on while the planner searched
    assert "(thing_at cup home)" in robot.facts
    assert robot.done == [
        "(go home table)",
        "(go table shelf)",
        "(take cup shelf)",
        "(go shelf home)",
        "(drop cup home)",
    ]
    # The old subtree was swapped out; the new one is the decorator's child and ran to the end.
    assert root.decorated is not old and old.parent is None and root.decorated.parent is root
    assert [c.name for c in root.decorated.children] == robot.done[1:]
    assert all(c.status is Status.SUCCESS for c in root.decorated.children)
    (record,) = root.history
    assert "cannot: (thing_at cup table)" in record["reason"]
    assert record["facts"] == ["(at table)", "(thing_at cup shelf)"]
    assert record["steps"] == robot.done[1:]
    assert root.replans == 1 and root.steps[0].text == "(go table shelf)"


def test_observed_replan_with_no_plan_fails_and_says_what_is_missing():
    from bt_raider.planners.replan import NoPlan

    robot = FactRobot({"(at home)", "(thing_at cup table)"})
    state, registry = _fetch(robot)
    root = Replanning(plan_to_tree(_fetch_plan(), registry), Replanner(state, registry))

    def the_cup_breaks():
        robot.facts -= {"(thing_at cup table)"}

    status, _ = _run(root, robot, the_cup_breaks)
    assert status is Status.FAILURE
    assert isinstance(root.error, NoPlan)
    assert root.error.unreachable == {"(thing_at cup home)": ["cup"]}
    assert root.reason.startswith("replanning failed: no plan reaches the goal")
    assert "cup appears in no fact" in root.feedback_message
    assert root.history[0]["facts"] == ["(at table)"] and "steps" not in root.history[0]


def test_a_new_plan_that_repeats_the_failed_steps_is_refused():
    robot = FactRobot({"(at home)", "(thing_at cup table)"})
    robot.stuck.add("(take cup table)")  # the cup is glued down: no fact says so
    state, registry = _fetch(robot)
    root = Replanning(
        plan_to_tree(_fetch_plan(), registry),
        Replanner(state, registry),
        steps=_fetch_plan(),
        max_replans=5,
    )
    status, _ = _run(root, robot)
    assert status is Status.FAILURE
    assert "replanning found only the plan that just failed ((take cup table) first)" in (
        root.reason
    )
    assert root.replans == 0 and len(root.history) == 1  # one search, then it stopped


class Fixed:
    """A checker of the test's own: the same verdict for every action."""

    def __init__(self, category, explanation):
        from bt_raider.checking.verdict import Category

        self.category, self.explanation = Category(category), explanation

    def check(self, scene, query, *, cancel=None):
        from bt_raider.checking.verdict import Verdict

        return Verdict(self.category, self.explanation)


@pytest.mark.parametrize(
    ("category", "replanned"),
    [("not_present", True), ("ambiguity", False), ("unknown", False), ("obstructed", False)],
)
def test_cannot_be_fixed_replans_only_what_is_gone(category, replanned):
    """The trigger's rule: a guard's final FAILURE with an unfeasibility of a GONE category."""
    from bt_raider.planners.replan import GONE, cannot_be_fixed, failed_guard
    from bt_raider.runtime.guards import RaiderGuard

    robot = FactRobot({"(at home)", "(thing_at cup table)"})
    state, registry = _fetch(robot)
    checker = Fixed(category, "the cup is not there")

    def guard(child, step):
        if step.name != "take":
            return child
        return RaiderGuard(child, step.text, checker, deadline=10)

    plan = plan_to_tree(_fetch_plan(), registry, guard=guard)
    root = Replanning(
        plan, Replanner(state, registry, guard=guard), when=cannot_be_fixed, max_replans=1
    )
    status, _ = _run(root, robot)
    assert status is Status.FAILURE  # the checker never lets a take run
    failed = failed_guard(root.decorated)
    assert isinstance(failed, RaiderGuard) and failed.verdict.category.value == category
    # The guard's own status and its child's: the guard failed closed, the take never ran.
    assert failed.status is Status.FAILURE and failed.decorated.status is Status.INVALID
    assert robot.done == ["(go home table)"]
    if replanned:
        assert category in GONE
        (record,) = root.history
        assert record["reason"].startswith("(take cup table) cannot be fixed (not_present)")
        # From the table the new plan starts with the take, whose new guard fails again.
        assert record["steps"] == ["(take cup table)", "(go table home)", "(drop cup home)"]
        assert root.replans == 1 and "after 1 replans" in root.reason
    else:
        assert root.history == []
        assert root.reason.endswith("not a failure replanning can fix")


class SaysWhy:
    """A recovery planner of the test's own: it can only say why the action is impossible."""

    def propose(self, request, *, cancel=None):
        return "say('The cup is glued to the table.')"


def test_cannot_be_fixed_replans_what_verified_recovery_declares_unrecoverable():
    from bt_raider.planners.replan import cannot_be_fixed, failed_guard
    from bt_raider.recovery.pipeline import Recovery
    from bt_raider.recovery.verify import Unrecoverable
    from bt_raider.robot.human import ScriptedHuman
    from bt_raider.runtime.guards import RaiderGuard

    robot = FactRobot({"(at home)", "(thing_at cup table)"})
    state, registry = _fetch(robot)
    checker = Fixed("wrong_state", "the cup does not come off the table")  # not GONE
    recovery = Recovery(SaysWhy(), None, ScriptedHuman([]))

    def guard(child, step):
        if step.name != "take":
            return child
        return RaiderGuard(child, step.text, checker, recovery=recovery, deadline=10)

    root = Replanning(
        plan_to_tree(_fetch_plan(), registry, guard=guard),
        Replanner(state, registry, guard=guard),
        when=cannot_be_fixed,
        steps=_fetch_plan(),
    )
    status, _ = _run(root, robot)
    assert status is Status.FAILURE
    failed = failed_guard(root.decorated)
    assert "told the person: The cup is glued to the table." in failed.feedback_message
    assert isinstance(recovery.unrecoverable, Unrecoverable)
    assert recovery.unrecoverable.action == str(failed.query) == "(take cup table)"
    (record,) = root.history
    assert record["reason"] == (
        "(take cup table) cannot be recovered: The cup is glued to the table."
    )
    # From where the robot stands the planner can only take the same cup: refused at once.
    assert record["steps"][0] == "(take cup table)"
    assert "replanning found only the plan that just failed" in root.reason
    # The same signal about another guard's action does not count for this one.
    recovery.unrecoverable = Unrecoverable("x", reason="other", action="(go home table)")
    assert cannot_be_fixed(root.decorated) is None


def test_observed_state_refuses_facts_the_domain_cannot_hold():
    robot = FactRobot(set())
    state, _ = _fetch(robot, {"shelf": "place"})
    assert state.check_fact("(THING_AT cup  shelf)") == "(thing_at cup shelf)"
    for fact, words in [
        ("(at kitchen)", "no object 'kitchen'; the objects are cup, home, shelf, table"),
        ("(at home table)", "at takes 1 argument(s)"),
        ("(fly cup)", "unknown predicate 'fly'"),
        ("(at cup)", "cup is a thing, not a place"),
        ("(and (at home))", "expected one atom, not a formula"),
        ("at home", "expected one atom"),
        ("(at home", "'(' left open"),
    ]:
        with pytest.raises(PlanningError, match=re.escape(words)):
            state.check_fact(fact)
    with pytest.raises(PlanningError, match="unknown type 'room'"):
        _fetch(robot, {"attic": "room"})


def test_observed_state_writes_the_current_problem():
    robot = FactRobot({"(at home)", "(thing_at cup table)"})
    state, _ = _fetch(robot, {"shelf": "place"})
    domain, problem = state.current_pddl()
    assert domain == FETCH_DOMAIN
    assert problem == (
        "(define (problem fetch-cup) (:domain fetch) "
        "(:objects home - place table - place cup - thing shelf - place) "
        "(:init (at home) (thing_at cup table)) (:goal (thing_at cup home)))"
    )
    assert state.goal == ["(thing_at cup home)"]
    assert state.unreachable() == {}  # everything the goal needs can be reached


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="() atcuphomeshlf_-;\n", max_size=40))
def test_any_text_is_a_checked_fact_or_a_planning_error(text):
    state, _ = _fetch(FactRobot(set()), {"shelf": "place"})
    try:
        fact = state.check_fact(text)
    except PlanningError:
        return
    assert state.check_fact(fact) == fact  # normalised facts read back as themselves


_NAMES = st.text(alphabet="abcxyz_-?0", min_size=1, max_size=6)
_SEXP = st.recursive(_NAMES, lambda inner: st.lists(inner, max_size=4), max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(st.lists(_SEXP, min_size=1, max_size=3))
def test_pddl_lists_read_back_as_written(nodes):
    from bt_raider.planners.replan import read_sexp, write_sexp

    text = " ".join(write_sexp(n) for n in nodes)
    assert read_sexp(text) == nodes
    assert read_sexp(f"; a comment\n{text.upper()} ; another") == nodes  # case, comments


def test_a_disjunctive_goal_has_no_atom_to_blame():
    from bt_raider.planners.replan import ObservedState

    problem = FETCH_PROBLEM.replace(
        "(:goal (thing_at cup home))", "(:goal (or (thing_at cup home) (carrying cup)))"
    )
    state = ObservedState(FETCH_DOMAIN, problem, lambda: ["(at home)"])
    assert state.goal == ["(or (thing_at cup home) (carrying cup))"]
    assert state.unreachable() is None


def test_pddl_guards_replan_a_gone_ball_through_unified_planning(gripper, two_tick_robot):
    """The PDDL-only stack: PddlChecker guards (a missing ``at`` is not_present), a PddlWorld
    (the state unified-planning solves from), and the rule."""
    from bt_raider.planners.preconditions import PddlChecker
    from bt_raider.planners.replan import cannot_be_fixed, failed_guard
    from bt_raider.planners.tree import raider_guards

    world, actions, plan = _setup(gripper, two_tick_robot)
    steps = pddl.plan_steps(plan)
    checker = PddlChecker(world, categories={"at": "not_present"})
    guard = raider_guards(checker, scene=None, preconditions=world, deadline=30)
    old = plan_to_tree(plan, actions, guard=guard)
    replanner = Replanner(world, actions, engine="pyperplan", guard=guard, name="new plan")
    root = Replanning(old, replanner, when=cannot_be_fixed, steps=steps)
    later = next(s for s in steps[1:] if s.name == "pick")
    ball = later.args[0]
    root.tick_once()
    _someone_moves(world, ball)  # the ball a later pick needs is in roomb now
    status, _ = _run(root, FactRobot(set()))
    assert status is Status.SUCCESS and world.goal_reached()
    (record,) = root.history
    assert record["reason"].startswith(f"{later.text} cannot be fixed (not_present)")
    assert f"unsatisfied (at {ball} rooma)" in record["reason"]
    failed = failed_guard(old)
    assert failed.status is Status.FAILURE and failed.decorated.status is Status.INVALID
    assert root.decorated.name == "new plan" and root.replans == 1
    assert not any(s.text.startswith(f"(pick {ball} rooma") for s in world.history)


def test_a_users_observe_that_raises_is_a_planning_error_naming_it():
    from bt_raider.planners.replan import ObservedState, plan_observed

    def observe():
        yield "(at home)"
        raise OSError("camera unplugged")

    state = ObservedState(FETCH_DOMAIN, FETCH_PROBLEM, observe)
    with pytest.raises(PlanningError, match=r"observe\(\) raised OSError: camera unplugged"):
        plan_observed(state, engine="pyperplan", timeout=30)


def test_repeated_facts_are_read_once_and_the_state_is_the_same():
    calls = []
    state, _ = _fetch(FactRobot(set()))
    check = state.check_fact

    def counting(fact):
        calls.append(fact)
        return check(fact)

    state.check_fact = counting
    state.observe = lambda: ["(at home)", "(thing_at cup table)"] * 50_000
    assert state.observe_facts() == ["(at home)", "(thing_at cup table)"]
    assert sorted(calls) == ["(at home)", "(thing_at cup table)"]
