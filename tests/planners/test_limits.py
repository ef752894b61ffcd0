"""Resource limits of the planning child: only ever lowered, a hard ``ulimit -v`` obeyed, one
that is too small said in one line (exit 2); and the problem's size is the child's to bear."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bt_raider.errors import PlanningError
from bt_raider.planners import engines, pddl
from bt_raider.planners.writing import problem_writer
from tests.shared_data import OWN_PDDL

posix_only = pytest.mark.skipif(os.name != "posix", reason="ulimit and RLIMIT_AS are POSIX")
GRIPPER = [
    str(OWN_PDDL / "two_rooms" / "domain.pddl"),
    str(OWN_PDDL / "two_rooms" / "problem.pddl"),
]


def _under_ulimit(kib: int, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """``bt-raider ARGS`` under a hard (and soft) address-space limit of ``kib`` KiB."""
    command = shlex.join([sys.executable, "-m", "bt_raider.cli", *args])
    return subprocess.run(
        ["bash", "-c", f"ulimit -v {kib} && exec {command}"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )


@posix_only
def test_a_plan_works_within_a_hard_ulimit():
    # Before: the child set the hard limit to infinity and died with "ValueError: not allowed
    # to raise maximum limit" under any hard ulimit -v.
    proc = _under_ulimit(3_000_000, ["plan", *GRIPPER, "--run"])
    assert proc.returncode == 0, proc.stderr
    assert "valid: yes" in proc.stdout and "goal reached: yes" in proc.stdout
    assert "Traceback" not in proc.stderr and "not allowed" not in proc.stderr


@posix_only
def test_a_ulimit_too_small_to_plan_is_one_line_and_exit_2():
    proc = _under_ulimit(100_000, ["plan", *GRIPPER])
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bt-raider plan: error: the address-space limit of 97 MiB")
    assert "(ulimit -v) is too small for planning" in lines[0]


@posix_only
def test_a_child_that_runs_out_of_memory_names_the_limit_in_one_line():
    # The parent may start; the child, capped lower, cannot even import its engine (it plans
    # this problem in about 80 MiB: UP's ConfigSpace and networkx imports are deferred).
    proc = _under_ulimit(
        3_000_000,
        ["plan", *GRIPPER, "--engine", "fast-downward"],
        BT_RAIDER_PLANNER_MEMORY=str(32 * 2**20),
    )
    assert proc.returncode == 2, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == (
        "bt-raider plan: error: the address-space limit of 32 MiB (BT_RAIDER_PLANNER_MEMORY) "
        "is too small for planning this problem: raise it"
    )
    # Anything before it is progress, never a traceback.
    assert all(line.startswith("planning: ") for line in lines[:-1]), proc.stderr


@posix_only
@pytest.mark.parametrize(
    ("ulimit_kib", "wanted", "expected_soft"),
    [
        (None, "1000000000", 1_000_000_000),  # no ulimit: our cap
        (3_000_000, "0", 3_000_000 * 1024),  # no cap of ours: the ulimit stays
        (3_000_000, str(8 * 2**30), 3_000_000 * 1024),  # ours is larger: the ulimit stays
        (3_000_000, str(2**30), 2**30),  # ours is smaller: lowered to it
    ],
)
def test_the_child_only_ever_lowers_its_limit(ulimit_kib, wanted, expected_soft):
    code = (
        "import json, resource; from bt_raider.planners.child import memory_limit; "
        "before = resource.getrlimit(resource.RLIMIT_AS); memory_limit(); "
        "print(json.dumps([before, resource.getrlimit(resource.RLIMIT_AS)]))"
    )
    python = shlex.join([sys.executable, "-c", code])
    script = f"ulimit -v {ulimit_kib} && exec {python}" if ulimit_kib else f"exec {python}"
    env = {**os.environ, "BT_RAIDER_PLANNER_MEMORY": wanted}
    proc = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stderr
    (_, hard_before), (soft, hard) = json.loads(proc.stdout)
    assert hard == hard_before  # the hard limit is never touched
    assert soft == expected_soft


def test_memory_error_names_the_setting_or_the_ulimit(monkeypatch):
    monkeypatch.setattr(engines, "address_limit", lambda: 3_000_000 * 1024)
    monkeypatch.setenv("BT_RAIDER_PLANNER_MEMORY", str(2**30))
    assert "1024 MiB (BT_RAIDER_PLANNER_MEMORY)" in str(engines.memory_error())
    monkeypatch.setenv("BT_RAIDER_PLANNER_MEMORY", str(8 * 2**30))  # above the ulimit
    assert "2929 MiB (ulimit -v)" in str(engines.memory_error())
    monkeypatch.setattr(engines, "address_limit", lambda: None)
    monkeypatch.delenv("BT_RAIDER_PLANNER_MEMORY")
    assert "BT_RAIDER_PLANNER_MEMORY" in str(engines.memory_error())


# ---------------------------------------------------------------------------- size
FIVE_DOMAIN = """(define (domain five)
 (:requirements :strips :typing)
 (:types thing)
 (:predicates (link ?a ?b ?c ?d ?e - thing) (at ?a - thing) (done))
 (:action go :parameters (?a ?b - thing) :precondition (at ?a)
  :effect (and (at ?b) (not (at ?a))))
 (:action finish :parameters (?a - thing) :precondition (at ?a) :effect (done)))
"""


def five_problem(objects: int) -> str:
    """One true fact of a 5-ary predicate among ``objects ** 5`` false ones."""
    names = " ".join(f"o{i}" for i in range(objects))
    return (
        f"(define (problem five-{objects}) (:domain five) (:objects {names} - thing)"
        f" (:init (at o0) (link o0 o1 o2 o3 o4)) (:goal (and (done) (at o{objects - 1}))))"
    )


@pytest.fixture
def five(tmp_path: Path):
    def write(objects: int) -> tuple[Path, Path]:
        domain, problem = tmp_path / "five.pddl", tmp_path / f"five{objects}.pddl"
        domain.write_text(FIVE_DOMAIN)
        problem.write_text(five_problem(objects))
        return domain, problem

    return write


def test_solve_writes_the_true_facts_not_every_grounding(five):
    # 20 objects: 3.2 million groundings of the 5-ary predicate, which UP's writer enumerated
    # in this process (minutes, 1.4 GB) before the time-limited child even started.
    problem = pddl.load(*five(20))
    writer = problem_writer(problem)
    text = writer.get_problem()
    assert "(link o0 o1 o2 o3 o4)" in text and text.count("(link ") == 1
    plan = pddl.solve(problem, engine="pyperplan", timeout=60)
    assert pddl.validate(problem, plan)
    assert [s.text for s in pddl.plan_steps(plan)][-1] in ("(finish o19)", "(go o0 o19)")


def test_plan_paths_validates_in_the_child(five):
    found = pddl.plan_paths(*five(20), engine="pyperplan", timeout=60, validate=True)
    assert found.valid is True and found.problem == "five-20" and found.engine == "pyperplan"
    assert found.steps and found.steps[-1].text in ("(finish o19)", "(go o0 o19)")


def test_an_invalid_plan_is_not_called_valid():
    # The child's validation steps the plan: a step whose precondition fails is caught.
    from bt_raider.planners import child

    problem, task = child._pyperplan_task(FIVE_DOMAIN, five_problem(5), lambda _: None)
    assert not isinstance(problem, str)
    assert child._valid_strips(task, ["(go o0 o4)", "(finish o4)"])
    assert not child._valid_strips(task, ["(go o0 o4)", "(finish o0)"])  # not at o0 any more
    assert not child._valid_strips(task, ["(go o0 o1)"])  # goal not reached
    assert not child._valid_strips(task, ["(fly o0 o4)", "(finish o4)"])  # no such step


def test_a_timeout_while_parsing_names_the_phase(tmp_path: Path):
    # 200,000 objects: reading them is the long part, and the limit stops it.
    domain, problem = tmp_path / "five.pddl", tmp_path / "huge.pddl"
    domain.write_text(FIVE_DOMAIN)
    problem.write_text(five_problem(200_000))
    with pytest.raises(PlanningError) as exc:
        pddl.plan_paths(domain, problem, engine="auto", timeout=1)
    msg = str(exc.value)
    assert msg.startswith("no plan for 'five-200000' within 1 s:")
    assert re.search(r"at the time limit while (parsing|starting the planner) ", msg), msg


def test_the_plan_command_reads_nothing_into_up_in_its_own_process(five):
    # All that grows with the problem happens in the child, under --timeout and the memory
    # cap: the command itself never imports unified-planning (no reader, writer, validator).
    domain, problem = five(20)
    code = (
        "import sys; from bt_raider.cli import main; "
        f"status = main(['plan', {str(domain)!r}, {str(problem)!r}, '--timeout', '120']); "
        "print(status, 'unified_planning' in sys.modules, file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stderr.strip().splitlines()[-1] == "0 False", proc.stderr
    assert "problem: five-20" in proc.stdout and "valid: yes" in proc.stdout
