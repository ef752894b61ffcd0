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


def test_run_of_no_ticks_is_refused_not_reported_as_goal_not_reached(capsys):
    # "--max-ticks 0" used to run nothing and print "goal reached: no": now a usage error.
    with pytest.raises(SystemExit) as exc:
        main(["plan", *GRIPPER, "--engine", "pyperplan", "--run", "--max-ticks", "0"])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "must be at least 1 tick" in captured.err


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
    assert all(re.fullmatch(r"planning: [a-z ]+\.\.\. \d+ s", line) for line in progress)
    assert progress[0].endswith(("... 0 s", "... 1 s"))  # from the first second
    assert any(line.startswith("planning: searching with pyperplan...") for line in progress)
    assert "planning:" not in captured.out


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "soon", "inf", "1e308", "-inf", "604801"])
def test_timeout_must_be_positive_seconds(capsys, bad):
    with pytest.raises(SystemExit) as exc:
        main(["plan", *GRIPPER, "--timeout", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--timeout" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("bad", ["0", "-5", "1.5", "many"])
def test_max_ticks_must_be_a_whole_number_above_zero(capsys, bad):
    with pytest.raises(SystemExit) as exc:
        main(["plan", *GRIPPER, "--run", "--max-ticks", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--max-ticks" in err and len(err.strip().splitlines()) == 1


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


# ---------------------------------------------------------------------------- reading the files
def _not_a_file(tmp_path, kind: str) -> str:
    import os

    path = tmp_path / f"{kind}.pddl"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        return "/dev/zero"
    return str(path)


@pytest.mark.parametrize(
    "kind, fragment",
    [
        ("fifo", "it is a named pipe (FIFO), not a file"),
        ("directory", "it is a directory, not a file"),
        ("device", "it is a character device, not a file"),
        ("missing", "(No such file or directory)"),
    ],
)
@pytest.mark.parametrize("which", [0, 1])
def test_what_is_not_a_pddl_file_is_refused_before_it_is_opened(
    capsys, tmp_path, kind, fragment, which
):
    files = list(GRIPPER)
    files[which] = _not_a_file(tmp_path, kind)
    what = ["PDDL domain", "PDDL problem"][which]
    assert main(["plan", *files, "--engine", "pyperplan"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"bt-raider plan: error: {files[which]}: cannot read {what} file")
    assert fragment in err


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"\xff\xfe(define", "looks like UTF-16 or UTF-32"),
        ("(define (domain caf\u00e9))".encode("latin-1"), "byte 0xe9 at offset 19 is not UTF-8"),
        ("(define (domain d))".encode("utf-16"), "looks like UTF-16 or UTF-32"),
        (b"(define (domain d)) \x80", "byte 0x80 at offset 20"),
    ],
)
def test_pddl_that_is_not_utf8_is_one_line(capsys, tmp_path, content, fragment):
    bad = tmp_path / "d.pddl"
    bad.write_bytes(content)
    assert main(["plan", str(bad), GRIPPER[1], "--engine", "pyperplan"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and f"{bad}: not UTF-8 text" in err
    assert fragment in err


def test_the_pddl_size_cap_is_an_option(capsys, tmp_path):
    from pathlib import Path

    size = Path(GRIPPER[0]).stat().st_size
    assert main(["plan", *GRIPPER, "--engine", "pyperplan", "--max-bytes", str(size - 1)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"{GRIPPER[0]}: the PDDL domain file is {size:,} bytes, over the limit" in err
    assert "--max-bytes" in err
    huge = tmp_path / "huge.pddl"
    with open(huge, "wb") as f:
        f.truncate(2**40)  # 1 TiB, sparse: refused from its size, never read
    assert main(["plan", GRIPPER[0], str(huge), "--engine", "pyperplan"]) == 2
    assert "the PDDL problem file is 1048576.0 MiB, over the limit of 16.0 MiB" in (
        capsys.readouterr().err
    )
    assert main(["plan", *GRIPPER, "--engine", "pyperplan", "--max-bytes", f"{size}"]) == 0


@pytest.mark.parametrize("bad", ["0", "-1", "big", "nan"])
def test_a_bad_size_cap_is_a_usage_error(capsys, bad):
    with pytest.raises(SystemExit) as exc:
        main(["plan", *GRIPPER, "--max-bytes", bad])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--max-bytes" in err
