"""Engines in a child process: the time limit stops any of them, ``auto`` prefers Fast
Downward, and planning PDDL files needs no UP in this process. All PDDL is written here."""

from __future__ import annotations

import fractions
import importlib.util
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bt_raider.errors import PlanningError
from bt_raider.planners import child as planning_child
from bt_raider.planners import engines, pddl
from tests.planners.generated import (
    PIGEONS_DOMAIN,
    SHARED_DOMAIN,
    SHARED_PROBLEM,
    gripper_domain,
    gripper_problem,
    pigeons_problem,
)

HAS_FD = importlib.util.find_spec("up_fast_downward") is not None
needs_fd = pytest.mark.skipif(not HAS_FD, reason="up-fast-downward is not installed")


@pytest.fixture
def gripper_files(tmp_path):
    def write(balls: int) -> tuple[Path, Path]:
        domain, problem = tmp_path / "domain.pddl", tmp_path / f"gripper{balls}.pddl"
        domain.write_text(gripper_domain())
        problem.write_text(gripper_problem(balls))
        return domain, problem

    return write


def _searching_children() -> list[int]:
    """Live planner children of this process (Linux /proc), idle ones stopped first."""
    engines.shutdown()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and stat[0] != "Z" and b"planners.child" in cmdline:
            found.append(int(entry.name))
    return found


# ---------------------------------------------------------------------------- time limits
def test_pyperplan_is_stopped_at_the_time_limit(gripper_files):
    problem = pddl.load(*gripper_files(60))
    start = time.monotonic()
    with pytest.raises(PlanningError) as exc:
        pddl.solve(problem, engine="pyperplan", timeout=2)
    elapsed = time.monotonic() - start
    assert elapsed < 6, f"a 2 s limit took {elapsed:.1f} s"  # generous: a shared machine
    msg = str(exc.value)
    assert msg.startswith("no plan for 'gripper-60' within 2 s: pyperplan was stopped")
    assert "--timeout" in msg
    if sys.platform.startswith("linux"):
        assert _searching_children() == []  # the search is not left running
    # The next search gets a fresh child and works.
    small = pddl.load(*gripper_files(2))
    assert pddl.validate(small, pddl.solve(small, engine="pyperplan", timeout=30))


def test_plan_files_is_stopped_at_the_time_limit(gripper_files):
    with pytest.raises(PlanningError, match=r"within 1 s: pyperplan was stopped"):
        pddl.plan_files(*gripper_files(60), engine="pyperplan", timeout=1)


def test_progress_is_reported_while_the_search_runs(gripper_files, monkeypatch):
    monkeypatch.setattr(engines, "PROGRESS_PERIOD", 0.3)
    calls: list[tuple[str, float]] = []
    with pytest.raises(PlanningError, match="within 2 s"):
        pddl.plan_files(
            *gripper_files(60),
            engine="pyperplan",
            timeout=2,
            progress=lambda e, s: calls.append((e, s)),
        )
    assert len(calls) >= 3
    # What the child does, in its order, ending with the search the limit stopped.
    order = ["starting the planner", "parsing", "grounding", "searching with pyperplan"]
    said = [e for e, _ in calls]
    assert said[-1] == "searching with pyperplan"
    assert set(said) <= set(order) and said == sorted(said, key=order.index)
    seconds = [s for _, s in calls]
    assert seconds == sorted(seconds) and seconds[-1] <= 2.5


@needs_fd
def test_auto_picks_fast_downward_and_solves_what_pyperplan_cannot_in_time(gripper_files):
    problem = pddl.load(*gripper_files(60))
    assert pddl.choose_engine(problem) == "fast-downward"
    plan = pddl.solve(problem, timeout=60)
    assert pddl.validate(problem, plan)
    assert len(plan.actions) >= 60 * 2  # each ball is picked and dropped


@needs_fd
def test_fast_downward_is_bounded_by_the_time_limit(tmp_path, gripper_files):
    # UP passes the limit to Fast Downward, which stops itself; the child is killed otherwise.
    small = pddl.load(*gripper_files(2))
    pddl.solve(small, engine="fast-downward")  # UP's import in the child is not the search's
    domain, problem = tmp_path / "holes.pddl", tmp_path / "pigeons.pddl"
    domain.write_text(PIGEONS_DOMAIN)
    problem.write_text(pigeons_problem(14))
    hard = pddl.load(domain, problem)
    start = time.monotonic()
    with pytest.raises(PlanningError, match="no plan for 'pigeons-14' within 2 s: fast-downward"):
        pddl.solve(hard, engine="fast-downward", timeout=2)
    assert time.monotonic() - start < 2 + engines.GRACE + 3  # generous: a shared machine


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc")
def test_each_planner_child_works_in_a_directory_of_its_own(tmp_path, monkeypatch):
    # Fast Downward writes output.sas where it runs: in the caller's directory, two searches at
    # once (two callers, two test workers) read each other's task (CI's blocks read miconic's).
    engines.shutdown()
    monkeypatch.chdir(tmp_path)
    first, second = engines._take(), engines._take()
    try:
        places = [Path(os.readlink(f"/proc/{c.proc.pid}/cwd")) for c in (first, second)]
        assert tmp_path not in places and places[0] != places[1]
        assert all(p.is_dir() for p in places)
    finally:
        first.kill()
        second.kill()
    assert not any(p.exists() for p in places)  # removed with its child


def test_a_relative_pythonpath_still_points_where_the_caller_meant(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["src", str(tmp_path / "abs"), ""]))
    env = engines._child_environment()
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path / "src"), str(tmp_path / "abs"), ""]


@needs_fd
def test_simultaneous_fast_downward_searches_each_plan_their_own_problem(tmp_path):
    domain = tmp_path / "domain.pddl"
    domain.write_text(gripper_domain())
    problems = []
    for balls in (1, 2, 3, 4):
        path = tmp_path / f"gripper{balls}.pddl"
        path.write_text(gripper_problem(balls))
        problems.append(path)

    def plan(path: Path) -> list[str]:
        return [s.text for s in pddl.plan_files(domain, path, engine="fast-downward", timeout=60)]

    with ThreadPoolExecutor(len(problems)) as pool:
        plans = list(pool.map(plan, problems))
    for balls, steps in zip((1, 2, 3, 4), plans, strict=True):
        moved = {s.split()[1] for s in steps if s.startswith("(drop")}
        assert moved == {f"ball{i}" for i in range(balls)}, steps


def _wait_for_descendants(pid: int, seconds: float = 20.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        below = engines.descendants(pid)
        if below:
            return below
        time.sleep(0.05)
    return []


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"  # a zombie is done
    except OSError:
        return False


def _start_hard_search(child: engines._Child) -> list[int]:
    child.send(
        {"engine": "fast-downward", "domain": PIGEONS_DOMAIN, "problem": pigeons_problem(14)}
    )  # no time limit: only a kill stops it
    # Wait until the search runs in a session of its own, as UP starts it.
    end = time.monotonic() + 30
    while time.monotonic() < end:
        below = engines.descendants(child.proc.pid)
        if any(_session(pid) not in (None, os.getsid(child.proc.pid)) for pid in below):
            return below
        time.sleep(0.05)
    raise AssertionError("Fast Downward did not start under the child")


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except ProcessLookupError:
        return None


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@needs_fd
@linux_only
def test_killing_a_child_kills_the_search_it_started_in_its_own_session():
    # UP starts Fast Downward with start_new_session: killing the child's group alone left
    # a search running (and growing to 21 GB) after its time limit.
    child = engines._Child()
    below = _start_hard_search(child)
    time.sleep(3)  # past its first lines of output: the search is silent for a long while now
    below = engines.descendants(child.proc.pid)
    child.kill()
    # Killed, not merely left to die of a broken pipe at its next line of output (which may
    # be minutes away): gone at once.
    end = time.monotonic() + 1.0
    while any(_running(pid) for pid in below) and time.monotonic() < end:
        time.sleep(0.02)
    assert [pid for pid in below if _running(pid)] == []


@needs_fd
@linux_only
def test_a_child_whose_parent_goes_away_stops_its_search():
    # The parent's end of the pipe closes (as when the parent is SIGKILLed): the child ends
    # and takes the search with it, instead of searching for nobody.
    child = engines._Child()
    below = _start_hard_search(child)
    assert child.proc.stdin is not None
    child.proc.stdin.close()
    assert child.proc.wait(timeout=10) == 0
    end = time.monotonic() + 10
    while any(_running(pid) for pid in below) and time.monotonic() < end:
        time.sleep(0.05)
    assert [pid for pid in below if _running(pid)] == []
    child.kill()


@linux_only
def test_descendants_finds_grandchildren_and_not_the_process_itself():
    script = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import time; time.sleep(30)'])"
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        below = _wait_for_descendants(proc.pid)
        assert len(below) == 1 and proc.pid not in below
        assert engines.descendants(below[0]) == []
    finally:
        for pid in engines.descendants(proc.pid):
            os.kill(pid, 9)
        proc.kill()
        proc.wait()


def test_a_bad_memory_setting_is_named_by_the_child(gripper_files, monkeypatch):
    monkeypatch.setenv("BT_RAIDER_PLANNER_MEMORY", "lots")
    engines.shutdown()  # a fresh child reads the setting
    with pytest.raises(PlanningError, match="BT_RAIDER_PLANNER_MEMORY must be a number of bytes"):
        pddl.plan_files(*gripper_files(2))
    monkeypatch.delenv("BT_RAIDER_PLANNER_MEMORY")
    engines.shutdown()


def test_without_fast_downward_auto_is_pyperplan(gripper_files, monkeypatch):
    monkeypatch.setattr(engines, "ENGINES", ("pyperplan",))
    assert pddl.installed_engines() == ["pyperplan"]
    assert pddl.choose_engine(pddl.load(*gripper_files(2))) == "pyperplan"


# ---------------------------------------------------------------------------- the engines
def test_pyperplan_features_are_what_its_up_engine_declares():
    up_pyperplan = pytest.importorskip("up_pyperplan.engine")
    declared = up_pyperplan.EngineImpl.supported_kind().features
    assert engines.PYPERPLAN_FEATURES == frozenset(declared)


@pytest.mark.parametrize("engine", ["pyperplan", pytest.param("fast-downward", marks=needs_fd)])
def test_plan_files_matches_solve(gripper_files, engine):
    files = gripper_files(3)
    steps = pddl.plan_files(*files, engine=engine, timeout=60)
    problem = pddl.load(*files)
    assert pddl.validate(problem, pddl.to_plan(problem, steps))
    # The same engine on the same problem (read by itself, or written back by UP) finds a plan
    # of the same length; tie-breaking may order the balls differently.
    assert len(steps) == len(pddl.solve(problem, engine=engine, timeout=60).actions)


def _fresh_python(code: str) -> str:
    """The last line ``code`` prints in an interpreter of its own (what it imported is its own)."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout.strip().splitlines()[-1]


def test_plan_files_needs_no_unified_planning_here(gripper_files):
    domain, problem = gripper_files(3)
    code = (
        "import sys; from bt_raider.planners.pddl import plan_files; "
        f"steps = plan_files({str(domain)!r}, {str(problem)!r}); "
        "print(len(steps), sorted(m for m in ('unified_planning', 'scipy', 'networkx') "
        "if m in sys.modules))"
    )
    count, loaded = _fresh_python(code).split(" ", 1)
    assert int(count) > 0 and loaded.strip() == "[]"


@needs_fd
def test_the_planning_child_plans_with_fast_downward_without_scipy_or_networkx(gripper_files):
    # UP names ConfigSpace (scipy.stats) and networkx at import; the child defers both.
    domain, problem = gripper_files(3)
    code = (
        "import json, sys; from bt_raider.planners import child; "
        f"request = {{'op': 'plan', 'engine': 'fast-downward', 'timeout': 60, "
        f"'domain': open({str(domain)!r}).read(), 'problem': open({str(problem)!r}).read()}}; "
        "answer = child._handle(request, lambda _: None); "
        "print(json.dumps([answer['status'], len(answer['plan']), sorted(m for m in "
        "('ConfigSpace', 'scipy', 'networkx', 'numpy') if m in sys.modules)]))"
    )
    status, steps, loaded = json.loads(_fresh_python(code))
    assert status == "solved" and steps > 0 and loaded == []


def test_a_deferred_module_is_the_real_one_on_first_use():
    stand_in = planning_child._stand_in("fractions", "Fraction")
    assert "Decimal" not in vars(stand_in) and stand_in.Fraction is not fractions.Fraction
    with pytest.raises(AttributeError):
        stand_in.__file__  # noqa: B018 - what introspection asks of every module is not a use
    assert "Decimal" not in vars(stand_in)
    assert stand_in.Fraction(1, 3) == fractions.Fraction(1, 3)  # a call imports the module
    assert type(stand_in.Fraction(2, 3)) is fractions.Fraction
    assert stand_in.Fraction is fractions.Fraction  # the real names, once imported
    assert stand_in.__file__ == fractions.__file__
    other = planning_child._stand_in("fractions", "Fraction")
    assert other.Decimal is fractions.Decimal  # any other name imports it too


def test_unreadable_pddl_for_pyperplan_is_a_planning_error(tmp_path, gripper_files):
    domain, problem = gripper_files(2)
    broken = tmp_path / "broken.pddl"
    broken.write_text(problem.read_text().replace("(:goal", "(:gaol"))
    with pytest.raises(PlanningError, match="pyperplan cannot solve.*cannot read the PDDL"):
        pddl.plan_files(domain, broken)


def test_unsolvable_files_say_so(tmp_path, gripper_files):
    domain, _ = gripper_files(1)
    never = tmp_path / "never.pddl"
    never.write_text(
        "(define (problem never) (:domain gripper-typed)"
        " (:objects ball0 - ball rooma roomb - room left - gripper)"
        " (:init (at-robby rooma) (at ball0 rooma)) (:goal (at ball0 roomb)))"  # no free gripper
    )
    with pytest.raises(PlanningError, match="'never' has no plan: pyperplan proved"):
        pddl.plan_files(domain, never)


def test_a_child_that_dies_is_a_planning_error(gripper_files, monkeypatch):
    # The child runs the interpreter this process names; one that exits at once never answers.
    monkeypatch.setattr(sys, "executable", "/bin/false")
    engines.shutdown()  # no idle child may answer instead
    with pytest.raises(PlanningError, match="planner process ended"):
        pddl.plan_files(*gripper_files(2))


# ---------------------------------------------------------------------------- shared names
@pytest.fixture
def shared_names(tmp_path):
    domain, problem = tmp_path / "carts.pddl", tmp_path / "move_cart.pddl"
    domain.write_text(SHARED_DOMAIN)
    problem.write_text(SHARED_PROBLEM)
    return domain, problem


def test_a_type_and_an_object_of_one_name_are_refused_naming_the_option(shared_names):
    with pytest.raises(PlanningError) as exc:
        pddl.load(*shared_names)
    msg = str(exc.value)
    assert msg.startswith(str(shared_names[1]))  # the problem declares the clashing object
    assert "'cart'" in msg and "allow_shared_names=True" in msg and "--allow-shared-names" in msg


@pytest.mark.parametrize("engine", ["pyperplan", pytest.param("fast-downward", marks=needs_fd)])
def test_shared_names_load_and_plan_with_the_option(shared_names, engine):
    problem = pddl.load(*shared_names, allow_shared_names=True)
    assert problem.object("cart").type.name == "cart"
    plan = pddl.solve(problem, engine=engine, timeout=60)
    assert [s.text for s in pddl.plan_steps(plan)] == [
        "(push cart dock aisle)",
        "(push cart aisle shelf)",
    ]
    assert pddl.validate(problem, plan)
    assert not pddl.validate(problem, pddl.to_plan(problem, ["(push cart aisle shelf)"]))


# ---------------------------------------------------------------------------- prepare
def test_a_prepared_child_serves_the_next_search(gripper_files):
    engines.shutdown()
    engines.prepare("pyperplan")
    assert len(engines._idle) == 1
    prepared = engines._idle[0]
    files = gripper_files(2)
    steps = pddl.plan_files(*files, engine="pyperplan")  # the "loaded" reply is skipped
    assert pddl.validate(pddl.load(*files), pddl.to_plan(pddl.load(*files), steps))
    assert engines._idle == [prepared]  # the same child, kept for the next search


def test_prepare_refuses_an_unknown_engine():
    with pytest.raises(PlanningError, match="unknown planning engine 'lama'"):
        engines.prepare("lama")
