"""Reading, solving and validating the real PDDL domains of ../shared/pddl."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from unified_planning.io import PDDLReader
from unified_planning.plans import SequentialPlan

from bt_raider.errors import BtRaiderError, PlanningError, QueryError
from bt_raider.planners import pddl
from tests.shared_data import OWN_PDDL, PDDL, classical_domains, needs_shared, require

#: Our own gripper-style domain, then the shared ones (when ../shared is there).
CLASSICAL = ["two_rooms", *classical_domains()]
DURATIVE = OWN_PDDL / "lamp_durative"
HAS_FD = importlib.util.find_spec("up_fast_downward") is not None
needs_fd = pytest.mark.skipif(not HAS_FD, reason="up-fast-downward is not installed")


@needs_shared
def test_the_shared_domains_are_all_seen():
    assert len(CLASSICAL) >= 4
    assert "ipc1998_gripper" in CLASSICAL


@pytest.mark.parametrize("name", CLASSICAL)
def test_classical_domain_plans_with_pyperplan_and_validates(name, load_problem):
    problem = load_problem(name)
    plan = pddl.solve(problem, engine="pyperplan")
    assert len(plan.actions) > 0
    assert pddl.validate(problem, plan)
    # Dropping the first step must break it: validate really simulates.
    assert not pddl.validate(problem, SequentialPlan(plan.actions[1:]))


@needs_fd
@pytest.mark.parametrize("name", CLASSICAL)
def test_classical_domain_plans_with_fast_downward(name, load_problem):
    problem = load_problem(name)
    plan = pddl.solve(problem, engine="fast-downward", timeout=30)
    assert pddl.validate(problem, plan)


@pytest.mark.parametrize("name", CLASSICAL)
def test_reference_plan_validates_and_wrong_order_does_not(name, load_problem):
    problem = load_problem(name)
    folder = OWN_PDDL / name if (OWN_PDDL / name).is_dir() else PDDL / name
    steps = pddl.read_plan(folder / "reference_plan_fast_downward.txt")
    assert pddl.validate(problem, pddl.to_plan(problem, steps))
    assert not pddl.validate(problem, pddl.to_plan(problem, list(reversed(steps))))


def test_auto_prefers_fast_downward_when_installed(gripper, alfred):
    expected = "fast-downward" if HAS_FD else "pyperplan"
    assert pddl.installed_engines()[0] == expected
    assert pddl.choose_engine(gripper) == expected
    if HAS_FD:  # pyperplan lacks forall / conditional effects: ALFRED goes to Fast Downward
        assert pddl.choose_engine(alfred) == "fast-downward"


def test_auto_solves_with_the_engine_it_chose(gripper):
    plan = pddl.solve(gripper)
    assert pddl.validate(gripper, plan)


def test_unknown_engine_names_the_choices(gripper):
    with pytest.raises(PlanningError, match="'lama'.*auto, fast-downward, pyperplan"):
        pddl.solve(gripper, engine="lama")


def test_steps_and_their_pddl_text(gripper):
    plan = pddl.solve(gripper, engine="pyperplan")
    steps = pddl.plan_steps(plan)
    assert [s.instance for s in steps] == list(plan.actions)
    first = steps[0]
    assert first.name == plan.actions[0].action.name
    assert first.args == [str(p) for p in plan.actions[0].actual_parameters]
    assert pddl.pddl_text(first) == "(" + " ".join([first.name, *first.args]) + ")"
    assert pddl.pddl_text(plan.actions[0]) == first.text
    assert pddl.parse_step(first.text) == first


def test_parse_step_forms():
    assert pddl.parse_step("(pick tiago medicine counter)") == pddl.Step(
        "pick", ["tiago", "medicine", "counter"]
    )
    assert pddl.parse_step("pick('knife', counter)") == pddl.Step("pick", ["knife", "counter"])
    assert pddl.parse_step("(handempty)") == pddl.Step("handempty", [])
    with pytest.raises(QueryError, match="cannot read action"):
        pddl.parse_step("grab the knife")


def test_goal_already_true_gives_an_empty_plan(tmp_path, pddl_files):
    domain, _ = pddl_files("ipc1998_gripper")
    problem = tmp_path / "p.pddl"
    problem.write_text(
        "(define (problem done) (:domain gripper-strips) (:objects rooma ball1)"
        " (:init (room rooma) (ball ball1) (at ball1 rooma)) (:goal (at ball1 rooma)))"
    )
    plan = pddl.solve(pddl.load(domain, problem), engine="pyperplan")
    assert plan.actions == []


def test_unreachable_goal_is_a_planning_error(tmp_path, pddl_files):
    domain, _ = pddl_files("ipc1998_gripper")
    problem = tmp_path / "p.pddl"
    # Balls are only ever dropped in rooms, never "at" a gripper.
    problem.write_text(
        "(define (problem never) (:domain gripper-strips) (:objects rooma ball1 left)"
        " (:init (room rooma) (ball ball1) (gripper left) (free left) (at-robby rooma)"
        " (at ball1 rooma)) (:goal (at ball1 left)))"
    )
    with pytest.raises(PlanningError, match="'never' has no plan"):
        pddl.solve(pddl.load(domain, problem), engine="pyperplan")


# ---------------------------------------------------------------------------- bad input
def test_missing_file_names_it(tmp_path, pddl_files):
    domain, _ = pddl_files("ipc1998_gripper")
    missing = tmp_path / "nope.pddl"
    with pytest.raises(PlanningError, match=r"nope\.pddl: cannot read PDDL problem file"):
        pddl.load(domain, missing)


def test_syntax_error_names_the_file_and_line(tmp_path, pddl_files):
    domain, problem = pddl_files("ipc1998_gripper")
    broken = tmp_path / "broken_domain.pddl"
    broken.write_text(domain.read_text().replace("(:action move", "(:action move (", 1))
    with pytest.raises(PlanningError) as exc:
        pddl.load(broken, problem)
    msg = str(exc.value)
    assert msg.startswith(str(broken)) and "line" in msg


def test_error_in_the_problem_names_the_problem(tmp_path, pddl_files):
    domain, problem = pddl_files("ipc1998_gripper")
    bad = tmp_path / "bad_problem.pddl"
    bad.write_text(problem.read_text().replace("(free left)", "(flying left)"))
    with pytest.raises(PlanningError) as exc:
        pddl.load(domain, bad)
    assert str(exc.value).startswith(str(bad))
    assert "flying" in str(exc.value)


# ---------------------------------------------------------------------------- durative
def test_empty_functions_block_is_accepted():
    domain = DURATIVE / "domain.pddl"
    # UP's own reader rejects an empty (:functions) block (PlanSys2 writes them)...
    with pytest.raises(Exception):  # noqa: B017 - pyparsing's exception type
        PDDLReader().parse_problem(str(domain))
    # ...load blanks it out and reads the durative domain.
    problem = pddl.load(domain, domain.parent / "problem.pddl")
    assert "CONTINUOUS_TIME" in problem.kind.features
    assert {a.name for a in problem.actions} == {"switch_on"}


@pytest.mark.parametrize("engine", ["auto", "pyperplan"])
def test_durative_problem_is_reported_unsupported(engine):
    d = DURATIVE
    problem = pddl.load(d / "domain.pddl", d / "problem.pddl")
    with pytest.raises(PlanningError) as exc:
        pddl.solve(problem, engine=engine)
    msg = str(exc.value)
    assert "durative actions" in msg and "CONTINUOUS_TIME" in msg
    assert "Installed engines: " + ", ".join(pddl.installed_engines()) in msg
    assert "temporal planner" in msg


def test_durative_problem_cannot_be_simulated():
    d = DURATIVE
    problem = pddl.load(d / "domain.pddl", d / "problem.pddl")
    with pytest.raises(PlanningError, match="cannot simulate.*durative"):
        pddl.simulator(problem)


# ---------------------------------------------------------------------------- ALFRED
ALFRED = PDDL / "alfred_puttask_extended" / "domain.pddl"
ALFRED_PROBLEM = Path(pddl.__file__).parent / "data" / "alfred_puttask_problem.pddl"


def test_alfred_domain_as_stored_is_rejected_with_the_undeclared_name():
    require(ALFRED)
    with pytest.raises(PlanningError) as exc:
        pddl.load(ALFRED, ALFRED_PROBLEM)
    msg = str(exc.value)
    assert msg.startswith(str(ALFRED)) and "sinkbasintype" in msg and ":constants" in msg


def test_alfred_with_totalcost_is_numeric_and_unsupported(tmp_path, alfred_text):
    domain = tmp_path / "d.pddl"
    domain.write_text(alfred_text(total_cost=False))
    problem = tmp_path / "p.pddl"
    problem.write_text(ALFRED_PROBLEM.read_text().replace("total-cost", "totalCost"))
    loaded = pddl.load(domain, problem)
    with pytest.raises(PlanningError, match="no installed engine.*numeric fluents"):
        pddl.solve(loaded)


def test_alfred_needs_adl_pyperplan_lacks(alfred):
    with pytest.raises(PlanningError) as exc:
        pddl.solve(alfred, engine="pyperplan")
    msg = str(exc.value)
    assert msg.startswith("pyperplan does not support")
    assert "forall preconditions" in msg and "conditional effects" in msg


@needs_fd
def test_alfred_plans_with_fast_downward_and_validates(alfred):
    assert pddl.choose_engine(alfred) == "fast-downward"
    plan = pddl.solve(alfred, timeout=30)
    steps = pddl.plan_steps(plan)
    names = [s.name for s in steps]
    assert "sliceobject" in names
    assert pddl.validate(alfred, plan)
    assert not pddl.validate(alfred, SequentialPlan(plan.actions[:-1]))


def test_fact_text_prints_pddl(alfred):
    goto = alfred.action("gotolocation")
    texts = [pddl.fact_text(c) for pre in goto.preconditions for c in pddl.conjuncts(pre)]
    assert texts == [
        "(atlocation ?a ?lstart)",
        "(forall (?re - receptacle) (not (opened ?re)))",
    ]


def test_every_error_is_a_bt_raider_error():
    assert issubclass(PlanningError, BtRaiderError)
