"""The pytest plugin: installed through the ``pytest11`` entry point, its fixtures reach a test
in a directory that has no conftest of ours (a user's project)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

USER_TEST = """
import py_trees

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.robot.actions import ActionBehaviour, SyncRobot
from bt_raider.runtime.guards import RaiderGuard


def test_blackboard_starts_clean(clean_blackboard):
    assert clean_blackboard.storage == {}
    clean_blackboard.set("/left/over", 1)


def test_again_clean(clean_blackboard):
    assert clean_blackboard.storage == {}


def test_guarded_open(bt_raider_run, sim_world, scripted_human):
    robot = SyncRobot(sim_world)
    node = ActionBehaviour("open", ["Fridge"], robot)
    guard = RaiderGuard(node, "open(Fridge)", SymbolicReasoner(), scene=robot.observe)
    result = bt_raider_run(guard, world=sim_world)
    assert result.status is py_trees.common.Status.FAILURE
    assert result.verdicts[guard.name][0].category.value == "out_of_reach"
    assert sim_world.executed == []
    assert scripted_human(["yes"]).ask("ok?") == "yes"


def test_that_fails_shows_the_run(bt_raider_run, sim_world):
    robot = SyncRobot(sim_world)
    guard = RaiderGuard(
        ActionBehaviour("open", ["Fridge"], robot),
        "open(Fridge)",
        SymbolicReasoner(),
        scene=robot.observe,
    )
    result = bt_raider_run(guard, world=sim_world)
    assert result.status is py_trees.common.Status.SUCCESS
"""


def test_the_plugin_is_registered_for_pytest():
    names = {(e.name, e.value) for e in entry_points(group="pytest11")}
    assert ("bt_raider", "bt_raider.testing.plugin") in names


def test_a_users_test_gets_the_fixtures_and_a_failure_shows_the_run(tmp_path):
    (tmp_path / "test_user_tree.py").write_text(textwrap.dedent(USER_TEST))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user_tree.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "3 passed" in out and "1 failed" in out, out
    assert "test_that_fails_shows_the_run" in out
    # The failing test's report carries the run: the verdict and what the world did.
    assert "bt_raider run 1 of 1" in out
    assert "out_of_reach" in out and "world executed: nothing" in out
