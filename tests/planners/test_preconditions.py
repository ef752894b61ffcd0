"""Symbolic precondition checks: Query for the reasoner, PddlChecker verdicts."""

from __future__ import annotations

import threading

import pytest

from bt_raider.checking.contract import Checker, Query
from bt_raider.checking.verdict import Category, Response
from bt_raider.errors import QueryError
from bt_raider.planners.preconditions import (
    PddlChecker,
    Preconditions,
    PreconditionSource,
    precondition_query,
)
from bt_raider.planners.world import PddlWorld

PICK_PRECONDITIONS = (
    "(ball ball1)",
    "(room rooma)",
    "(gripper left)",
    "(at ball1 rooma)",
    "(at-robby rooma)",
    "(free left)",
)


def test_query_in_the_initial_state_has_all_preconditions_satisfied(gripper):
    q = precondition_query(gripper, "(pick ball1 rooma left)")
    assert isinstance(q, Query)
    assert q.text == "(pick ball1 rooma left)"
    assert q.preconditions == PICK_PRECONDITIONS
    assert q.unsatisfied == ()
    assert q.bindings == {"obj": "ball1", "room": "rooma", "gripper": "left"}


def test_query_on_a_modified_state_lists_what_is_unsatisfied(gripper):
    world = PddlWorld(gripper)
    world.execute("move", ["rooma", "roomb"])  # the robot left
    world.set("(free left)", False)  # and its left gripper is busy
    q = world.query("(pick ball1 rooma left)")
    assert q.preconditions == PICK_PRECONDITIONS
    assert q.unsatisfied == ("(at-robby rooma)", "(free left)")
    assert set(q.unsatisfied) <= set(q.preconditions)
    assert not world.is_applicable("(pick ball1 rooma left)")
    assert world.is_applicable("(move roomb rooma)")


def test_static_precondition_that_is_false_is_reported(gripper):
    # The grounder drops (ball rooma) as static-false: UP calls this an invalid action.
    rep = Preconditions(gripper).report("(pick rooma rooma left)")
    assert "(ball rooma)" in rep.unsatisfied
    assert "(at rooma rooma)" in rep.unsatisfied
    assert not rep.applicable


def test_names_map_objects_to_scene_names(gripper):
    q = Preconditions(gripper, names={"ball1": "Apple_1"}).query("pick(ball1, rooma, left)")
    assert q.bindings["obj"] == "Apple_1"
    assert q.text == "(pick ball1 rooma left)"


def test_live_state_callable(gripper):
    world = PddlWorld(gripper)
    pre = Preconditions(gripper, lambda: world.state)
    assert pre.query("(drop ball1 roomb left)").unsatisfied == (
        "(carry ball1 left)",
        "(at-robby roomb)",
    )
    world.execute("pick", ["ball1", "rooma", "left"])
    world.execute("move", ["rooma", "roomb"])
    assert pre.query("(drop ball1 roomb left)").unsatisfied == ()


def test_forall_precondition_in_alfred(alfred):
    world = PddlWorld(alfred)
    world.execute("gotolocation", ["robot", "loc_start", "loc_fridge"])
    world.execute("openobject", ["robot", "loc_fridge", "fridge"])
    q = world.query("(gotolocation robot loc_fridge loc_counter)")
    assert q.unsatisfied == ("(forall (?re - receptacle) (not (opened ?re)))",)
    world.execute("closeobject", ["robot", "loc_fridge", "fridge"])
    assert world.query("(gotolocation robot loc_fridge loc_counter)").unsatisfied == ()


def test_world_is_a_precondition_source(gripper):
    assert isinstance(PddlWorld(gripper), PreconditionSource)
    assert isinstance(Preconditions(gripper), PreconditionSource)


# ---------------------------------------------------------------------------- PddlChecker
def test_checker_protocol(gripper):
    assert isinstance(PddlChecker(gripper), Checker)


def test_verdict_none_when_preconditions_hold(gripper):
    v = PddlChecker(gripper).check(None, "(pick ball1 rooma left)")
    assert v.ok and v.category is Category.NONE and v.final_response is Response.NONE
    assert v.action == "pick"
    assert v.objects == ["ball1", "rooma", "left"]
    assert len(v.questions) == len(PICK_PRECONDITIONS)


def test_verdict_wrong_state_lists_unsatisfied_facts(gripper):
    v = PddlChecker(gripper).check(None, Query("(drop ball1 rooma left)"))
    assert v.category is Category.WRONG_STATE
    assert v.final_response is Response.UNFEASIBILITY
    assert "(carry ball1 left)" in v.explanation
    assert v.tool_calls[0].result == ["(carry ball1 left)"]
    assert v.to_json()["category"] == "wrong_state"


def test_category_mapping_follows_raider_priority(gripper):
    world = PddlWorld(gripper)
    world.execute("move", ["rooma", "roomb"])
    world.set("(free left)", False)
    checker = PddlChecker(world, categories={"at-robby": "out_of_reach", "free": "IU6"})
    v = checker.check(None, "(pick ball1 rooma left)")
    # robot_state (free) outranks out_of_reach (at-robby).
    assert v.category is Category.ROBOT_STATE
    world.set("(free left)", True)
    assert checker.check(None, "(pick ball1 rooma left)").category is Category.OUT_OF_REACH


def test_checker_sees_the_live_world(gripper):
    world = PddlWorld(gripper)
    checker = PddlChecker(world)
    assert checker.check(None, "(move rooma roomb)").ok
    world.execute("move", ["rooma", "roomb"])
    assert not checker.check(None, "(move rooma roomb)").ok


def test_unknown_object_is_not_present(gripper):
    v = PddlChecker(gripper).check(None, "(pick ball9 rooma left)")
    assert v.category is Category.NOT_PRESENT and "ball9" in v.explanation


def test_wrong_type_is_wrong_property(load_problem):
    logistics = load_problem("ipc2000_logistics_typed")
    v = PddlChecker(logistics).check(None, "(load-truck tru1 obj11 pos1)")
    assert v.category is Category.WRONG_PROPERTY
    assert "tru1 is of type truck" in v.explanation and "package" in v.explanation


def test_bad_queries_raise_query_error(gripper):
    checker = PddlChecker(gripper)
    with pytest.raises(QueryError, match="unknown action 'grab'.*drop, move, pick"):
        checker.check(None, "(grab ball1)")
    with pytest.raises(QueryError, match="takes 2 argument"):
        checker.check(None, "(move rooma)")
    with pytest.raises(QueryError, match="cannot read action"):
        checker.check(None, "please pick up the ball")


def test_cancelled_check_is_unknown(gripper):
    cancel = threading.Event()
    cancel.set()
    v = PddlChecker(gripper).check(None, "(pick ball1 rooma left)", cancel=cancel)
    assert v.category is Category.UNKNOWN and v.final_response is Response.UNFEASIBILITY


def test_dash_and_underscore_names_match(load_problem):
    blocks = load_problem("ipc2000_blocks_typed")
    v = PddlChecker(blocks).check(None, "pick_up(b)")
    assert v.action == "pick-up"
