"""The cooperative-table demo with robots in separate processes, over Zenoh on 127.0.0.1.

Every run starts a world process and N robot processes; ``run_processes`` waits on each with a
timeout and kills whatever is left in a ``finally``. Every endpoint is ``tcp/127.0.0.1:<free
port>`` and multicast scouting is off.
"""

from __future__ import annotations

import argparse
import io
import time
from collections import Counter

import pytest

pytest.importorskip("zenoh")

from bt_raider.errors import CommunicationError  # noqa: E402
from bt_raider.examples.cooperative_table import demo  # noqa: E402
from bt_raider.examples.cooperative_table.episode import Episode  # noqa: E402
from bt_raider.examples.cooperative_table.processes import (  # noqa: E402
    FIGURES,
    print_figures,
    run_demo,
    run_processes,
)

pytestmark = pytest.mark.zenoh


def in_process(seed: int, robots: int, **kwargs):
    episode = Episode(seed, robots=robots, **kwargs)
    result = episode.run()
    return result, dict(episode.sim.achieved)


def assert_each_subgoal_once(figures: dict) -> None:
    """Every goal object put on the goal location exactly once, and announced at most once."""
    put = Counter(p["text"].split(" put ")[1].split(" (")[0] for p in figures["goal_puts"])
    assert set(put) == set(figures["goal"]), figures["goal_puts"]
    assert all(n == 1 for n in put.values()), f"a sub-goal was done twice: {put}"
    announced = Counter(o for objs in figures["announced"].values() for o in objs)
    assert all(n == 1 for n in announced.values()), f"announced twice: {announced}"


@pytest.mark.parametrize(("robots", "seed"), [(2, 1), (4, 3)])
def test_robot_processes_reach_the_same_result_as_in_process(robots, seed):
    expected, achieved = in_process(seed, robots)
    figures = run_processes(robots, seed, timeout=60)
    assert figures["success"] and expected.success
    got = {k: figures[k] for k in FIGURES}
    want = {k: getattr(expected, k) for k in FIGURES}
    assert got == want
    assert figures["achieved"] == achieved  # the same robot did the same sub-goal
    assert_each_subgoal_once(figures)
    assert figures["faults_total"] == 0 and figures["errors"] == {}
    assert figures["retired"] == {} and figures["killed"] == {}
    assert set(figures["reports"]) == {"alice", "bob", "carol", "dave"}.intersection(
        figures["reports"]
    )
    assert all(r is not None for r in figures["reports"].values())
    if robots == 4:
        # Validation requests did cross processes as Zenoh queries, each answered.
        assert figures["requests"] >= 1
        assert sum(len(r["rtts"]) for r in figures["reports"].values()) == figures["requests"]


def test_the_demo_prints_the_same_figures_as_in_process(capsys):
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    args = parser.parse_args(["--seed", "2", "--robots", "2", "--quiet"])
    assert demo.run(args) == 0
    in_process_lines = capsys.readouterr().out.splitlines()
    args.processes = 2  # what `--processes 2` sets once the demo has the option
    assert run_demo(args) == 0
    lines = capsys.readouterr().out.splitlines()
    for prefix in ("goal:", "policy:", "robots:", "done after"):
        want = [line for line in in_process_lines if line.startswith(prefix)]
        assert want and [line for line in lines if line.startswith(prefix)] == want
    assert "network faults: none" in lines


def test_a_killed_collaborator_is_survived_and_its_subgoals_taken_over():
    seed = 1
    _, achieved = in_process(seed, 2, policy="always-ask")
    bobs = {o for o, who in achieved.items() if who == "bob"}
    assert bobs, "the seed must give bob sub-goals in the healthy run"
    figures = run_processes(
        2, seed, policy="always-ask", kill={"bob": 2}, validation_timeout=0.3, timeout=60
    )
    assert figures["killed"] == {"bob": 2}
    assert "bob" in figures["retired"]
    assert figures["reports"]["bob"] is None  # it died: no report
    assert figures["success"], "alice must finish alone"
    assert set(figures["achieved"].values()) == {"alice"}
    assert bobs <= set(figures["achieved"])  # bob's sub-goals were taken over
    faults = figures["faults"]["alice"]
    lost = faults.get("unreachable", 0) + faults.get("timeout", 0)
    assert lost >= 1, faults
    # Every unknown answer went through the documented policy, and was counted.
    policy = figures["unknown_policy"]["alice"]
    assert policy["unknown"] == lost
    assert policy["unknown"] == sum(
        policy.get(k, 0) for k in ("reobserved_present", "reobserved_gone", "committed_blind")
    )
    assert_each_subgoal_once(figures)


@pytest.mark.parametrize(("fault", "kind"), [("garbage", "malformed"), ("oversized", "oversized")])
def test_a_collaborator_answering_garbage_is_unknown_and_counted(fault, kind):
    figures = run_processes(
        2, 2, policy="always-ask", faults={"bob": fault}, validation_timeout=0.5, timeout=60
    )
    assert figures["success"]
    alice = figures["reports"]["alice"]
    assert alice["requests"] >= 1
    # Every request alice sent got garbage back: each one counted, none answered.
    assert figures["faults"]["alice"] == {kind: alice["requests"]}
    assert alice["rtts"] == []
    assert figures["unknown_policy"]["alice"]["unknown"] == alice["requests"]
    # Bob's own requests to alice are answered normally.
    bob = figures["reports"]["bob"]
    assert figures["faults"]["bob"] == {} and len(bob["rtts"]) == bob["requests"]
    assert_each_subgoal_once(figures)


def test_an_answer_later_than_the_timeout_is_unknown_and_counted():
    figures = run_processes(
        2, 2, policy="always-ask", faults={"bob": "delay:0.6"}, validation_timeout=0.2, timeout=90
    )
    assert figures["success"]
    alice = figures["reports"]["alice"]
    assert alice["requests"] >= 1
    assert figures["faults"]["alice"] == {"timeout": alice["requests"]}
    assert figures["faults_total"] == alice["requests"]
    assert_each_subgoal_once(figures)
    out = io.StringIO()
    print_figures(figures, out=out)
    assert f"network faults: alice: timeout {alice['requests']}" in out.getvalue()


def test_bad_runs_are_refused_before_any_process_starts():
    with pytest.raises(CommunicationError, match="2..6"):
        run_processes(1, 0)
    with pytest.raises(CommunicationError, match="no robot 'zed'"):
        run_processes(2, 0, faults={"zed": "garbage"})
    with pytest.raises(CommunicationError, match="unknown policy"):
        run_processes(2, 0, policy="telepathy")


@pytest.fixture
def onnx_cache(tmp_path, monkeypatch):
    """A cache folder holding the bundled model's ONNX export, for the robot processes.

    The suite's own cache is empty (tests/conftest.py), so each robot would embed on torch: 10 s
    of CPU apiece to import it, where the export (built without torch) takes one.
    """
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from bt_raider.memory import onnx_model
    from bt_raider.memory.embedder import bundled_model_path

    folder = tmp_path / "cache"
    onnx_model.prepare(bundled_model_path(), folder=folder)
    monkeypatch.setenv(onnx_model.CACHE_ENV, str(folder))  # inherited by the processes
    return folder


@pytest.mark.slow  # each robot process loads the embedding model
def test_fleet_memory_crosses_processes(tmp_path, onnx_cache):
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    figures = run_processes(2, 2, memory_dir=memory_dir, timeout=90)
    assert figures["success"]
    memory = figures["memory"]
    published = {name: m["published"] for name, m in memory.items()}
    # One record per sub-goal a robot announced (the last put ends the episode unannounced).
    assert published == {name: len(objs) for name, objs in figures["announced"].items()}
    assert sum(published.values()) >= 1
    for name, m in memory.items():
        other = next(n for n in memory if n != name)
        # Each robot waited for the other's end note and records before counting and closing.
        assert m["synced"] is True, m
        # What the other robot learnt arrived and passed the CDR rules, once each.
        assert m["accepted"] == published[other]
        assert m["quarantined"] == 0 and m["rejected"] == 0 and m["errors"] == 0
        assert m["records"] == published[name] + published[other]
    assert (memory_dir / "alice.db").exists() and (memory_dir / "bob.db").exists()


def test_command_line_processes_match_the_in_process_demo(capsys):
    from bt_raider.cli import main

    assert main(["demo", "cooperative-table", "--seed", "3", "--quiet"]) == 0
    local = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("done after")]
    assert main(["demo", "cooperative-table", "--seed", "3", "--quiet", "--processes", "2"]) == 0
    out = capsys.readouterr().out
    remote = [ln for ln in out.splitlines() if ln.startswith("done after")]
    assert local and remote == local  # same steps, travel, false plans and messages
    assert "over Zenoh on 127.0.0.1" in out


@pytest.mark.parametrize(("robots", "absent"), [(2, "bob"), (4, "carol")])
def test_a_robot_killed_before_it_joins_is_named_alone_within_the_join_timeout(robots, absent):
    join_timeout = 6.0  # generous for a loaded machine; the default is 60 s
    started = time.monotonic()
    with pytest.raises(CommunicationError) as info:
        run_processes(robots, 1, absent=[absent], join_timeout=join_timeout, timeout=90)
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert f"robot(s) {absent} did not join within 6 s" in message, message
    others = [n for n in ("alice", "bob", "carol", "dave") if n != absent]
    assert not any(n in message for n in others), message  # only the missing robot is blamed
    # Process start-up and teardown on top of the timeout, nowhere near the old 60 s.
    assert elapsed < join_timeout + 25, elapsed


def test_the_join_timeout_is_a_demo_option(capsys):
    from bt_raider.cli import main

    code = main(["demo", "cooperative-table", "--processes", "2", "--join-timeout", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "join timeout must be > 0 seconds, got 0.0" in err[0]
    with pytest.raises(CommunicationError, match="no robot 'zed'"):
        run_processes(2, 0, absent=["zed"])


def _intruder(keys, goal, started: list):
    """on_started: the intruder process, claiming every goal object done in every robot's name."""
    import json
    import subprocess
    import sys

    def start(base: str, endpoints: list[str]) -> None:
        cmd = [
            sys.executable, "-m", "bt_raider.fleet.intruder", "--base", base,
            "--targets", ",".join(goal.objects), "--location", goal.location,
            "--relation", goal.relation, "--robots", "alice,bob", "--seconds", "120",
            *(["--stolen-key", str(keys / "carol.key")] if keys else []),
            *[a for e in endpoints for a in ("--connect", e)],
        ]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert json.loads(proc.stdout.readline())["event"] == "ready"

    return start


@pytest.mark.parametrize("signed", [True, False])
def test_an_intruder_on_the_bus_changes_nothing_in_a_signed_run(tmp_path, signed):
    from bt_raider.fleet.signing import generate_keys

    keys = tmp_path / "keys" if signed else None
    if keys is not None:
        generate_keys(keys, ["alice", "bob", "carol"])  # carol's key is stolen
    episode = Episode(0, robots=2)
    goal = episode.sim.goal
    expected = episode.run()
    started: list = []
    try:
        figures = run_processes(
            2, 0, timeout=90, signed=signed, keys=keys, on_started=_intruder(keys, goal, started)
        )
    finally:
        for proc in started:
            proc.kill()
            proc.communicate(timeout=10)
    same = all(figures[k] == getattr(expected, k) for k in FIGURES)
    refused = Counter()
    for faults in figures["faults"].values():
        refused.update(faults)
    if signed:
        assert figures["signed"] and figures["success"] and same, figures["faults"]
        assert {"unsigned", "forged", "unknown_key", "wrong_robot"} <= set(refused), refused
        assert (tmp_path / "keys" / "alice.key").exists()  # a given keys folder is kept
    else:
        # The attack is real: robots that trust the bus take the claims and stop short.
        assert not same and not figures["success"]


def test_the_demo_runs_signed_by_default_and_unsigned_on_request():
    figures = run_processes(2, 1, timeout=60)
    assert figures["signed"] and figures["success"] and figures["faults_total"] == 0
    out = io.StringIO()
    print_figures(figures, out=out)
    assert "signed)" in out.getvalue()
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    assert parser.parse_args(["--processes", "2", "--unsigned"]).unsigned


@pytest.mark.parametrize(
    ("said", "released"), [("go\n", True), ("go", True), ("", False), ("stop\n", False)]
)
def test_a_held_world_starts_only_on_go(said, released):
    # run_processes holds the first turn while its on_started hook runs (an intruder in place
    # before anyone acts: with quick robots, an intruder started beside them came too late).
    from bt_raider.examples.cooperative_table import world_server

    if released:
        world_server.released(io.StringIO(said))
    else:
        with pytest.raises(CommunicationError, match="held and not released"):
            world_server.released(io.StringIO(said))
