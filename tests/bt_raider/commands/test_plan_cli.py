"""``bt-raider plan``: plan, tree, run, and one-line errors with exit 2."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from bt_raider.cli import main
from bt_raider.planners import engines
from bt_raider.planners.pddl import load
from tests.planners.generated import SHARED_DOMAIN, SHARED_PROBLEM, gripper_domain, gripper_problem
from tests.shared_data import OWN_PDDL

#: Our own gripper-style domain (tests/data/pddl/two_rooms).
GRIPPER = [
    str(OWN_PDDL / "two_rooms" / "domain.pddl"),
    str(OWN_PDDL / "two_rooms" / "problem.pddl"),
]


def _plan_lines(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index("plan:") + 1
    end = lines.index("tree:")
    return [line.split(". ", 1)[1] for line in lines[start:end]]


def test_prints_the_plan_and_the_tree(capsys):
    assert main(["plan", *GRIPPER, "--engine", "pyperplan"]) == 0
    out = capsys.readouterr().out
    assert "engine: pyperplan" in out and "valid: yes" in out
    steps = _plan_lines(out)
    assert len(steps) > 0 and all(s.startswith("(") for s in steps)
    tree = out.split("tree:", 1)[1]
    assert "three-balls" in tree
    for step in steps:
        assert f"--> {step}" in tree
    assert "run:" not in out


def test_run_executes_every_step_and_reaches_the_goal(capsys):
    assert main(["plan", *GRIPPER, "--engine", "pyperplan", "--run"]) == 0
    out = capsys.readouterr().out
    steps = _plan_lines(out)
    run = out.split("run:", 1)[1]
    for i, step in enumerate(steps, 1):
        assert f"{i:>3}. {step}: SUCCESS" in run
    assert "outcome: SUCCESS" in run and "goal reached: yes" in run


def test_run_stopped_early_reports_the_goal_not_reached(capsys):
    assert main(["plan", *GRIPPER, "--engine", "pyperplan", "--run", "--max-ticks", "0"]) == 1
    out = capsys.readouterr().out
    assert "goal reached: no" in out and "unsatisfied goals: (at ball" in out


def test_missing_file_is_exit_2_with_one_line(capsys, tmp_path):
    missing = tmp_path / "missing_problem.pddl"
    assert main(["plan", GRIPPER[0], str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("bt-raider plan: error:") and "missing_problem.pddl" in err


def test_durative_domain_is_exit_2_naming_the_feature(capsys):
    d = OWN_PDDL / "lamp_durative"
    assert main(["plan", str(d / "domain.pddl"), str(d / "problem.pddl")]) == 2
    err = capsys.readouterr().err
    assert "durative actions" in err and "Installed engines" in err


def test_bad_pddl_is_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.pddl"
    bad.write_text("(define (domain broken) (:action")
    assert main(["plan", str(bad), GRIPPER[1]]) == 2
    assert "bad.pddl: not valid PDDL" in capsys.readouterr().err


@pytest.fixture
def big_gripper(tmp_path):
    """A 60-ball gripper that pyperplan needs well over 10 s for."""
    domain, problem = tmp_path / "domain.pddl", tmp_path / "gripper60.pddl"
    domain.write_text(gripper_domain())
    problem.write_text(gripper_problem(60))
    return [str(domain), str(problem)]


def test_timeout_stops_pyperplan_with_exit_2_and_one_line(capsys, big_gripper, monkeypatch):
    monkeypatch.setattr(engines, "PROGRESS_PERIOD", 0.5)
    load(*big_gripper)  # UP's first import is not the search's time
    start = time.monotonic()
    assert main(["plan", *big_gripper, "--engine", "pyperplan", "--timeout", "2"]) == 2
    assert time.monotonic() - start < 6  # generous: the machine may be busy
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert lines[-1].startswith(
        "bt-raider plan: error: no plan for 'gripper-60' within 2 s: pyperplan was stopped"
    )
    # Progress on stderr while it searched, never on stdout.
    progress = lines[:-1]
    assert len(progress) >= 2
    assert all(re.fullmatch(r"planning with pyperplan\.\.\. \d+ s", line) for line in progress)
    assert "planning with" not in captured.out


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "soon"])
def test_timeout_must_be_positive_seconds(capsys, bad):
    with pytest.raises(SystemExit) as exc:
        main(["plan", *GRIPPER, "--timeout", bad])
    assert exc.value.code == 2
    assert "--timeout" in capsys.readouterr().err


def test_shared_names_are_refused_naming_the_option(capsys, tmp_path):
    domain, problem = tmp_path / "carts.pddl", tmp_path / "move_cart.pddl"
    domain.write_text(SHARED_DOMAIN)
    problem.write_text(SHARED_PROBLEM)
    assert main(["plan", str(domain), str(problem)]) == 2
    err = capsys.readouterr().err
    assert "move_cart.pddl" in err and "'cart'" in err and "--allow-shared-names" in err
    assert main(["plan", str(domain), str(problem), "--allow-shared-names", "--run"]) == 0
    out = capsys.readouterr().out
    assert "(push cart dock aisle)" in out and "goal reached: yes" in out


def test_unknown_engine_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plan", *GRIPPER, "--engine", "lama"])
    assert exc.value.code == 2


@pytest.mark.slow
@pytest.mark.skipif(
    __import__("importlib").util.find_spec("up_fast_downward") is None,
    reason="up-fast-downward is not installed",
)
def test_console_script_with_fast_downward():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bt_raider.cli",
            "plan",
            *GRIPPER,
            "--engine",
            "fast-downward",
            "--run",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "engine: fast-downward" in proc.stdout and "goal reached: yes" in proc.stdout
    # UP's credits banner is silenced.
    assert "credits" not in proc.stdout.lower() and "credits" not in proc.stderr.lower()
