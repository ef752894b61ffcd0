"""The cooperative-table example: robots reach the goal; the ablations behave as they should."""

from __future__ import annotations

import py_trees
import pytest

from bt_raider.cli import main
from bt_raider.cooperation.messaging import MAX_FRAME_CHARS, MessageKind
from bt_raider.examples.cooperative_table.episode import Episode, run_episode
from bt_raider.examples.cooperative_table.policies import POLICIES
from bt_raider.runtime.shared_goal import SharedGoalGuard


def test_an_episode_reaches_the_goal_with_every_frame_in_bounds():
    episode = Episode(3, noisy=True)
    result = episode.run()
    assert result.success and result.steps < 250
    assert episode.sim.done()
    # two hellos and an announcement per sub-goal (the last one ends the episode before it is
    # announced)
    assert result.messages == len(episode.hub.log) >= 2 + len(episode.sim.goal.objects) - 1
    kinds = {m.kind for m in episode.hub.log}
    assert {MessageKind.HELLO, MessageKind.SUBGOAL_ACHIEVED} <= kinds
    assert all(len(m.to_json()) <= MAX_FRAME_CHARS for m in episode.hub.log)
    assert result.characters == sum(len(m.to_json()) for m in episode.hub.log)
    # every achievement was announced by the robot that did it
    announced = {
        m.data["subgoal"]["target"]: m.sender
        for m in episode.hub.log
        if m.kind is MessageKind.SUBGOAL_ACHIEVED
    }
    assert announced.items() <= episode.sim.achieved.items()
    assert len(announced) >= len(episode.sim.achieved) - 1


def test_episodes_are_reproducible():
    assert run_episode(5, noisy=True) == run_episode(5, noisy=True)


def test_every_subgoal_branch_is_wrapped_by_the_guard():
    episode = Episode(1)
    agent = episode.agents[0]
    guards = [n for n in agent.tree.iterate() if isinstance(n, SharedGoalGuard)]
    names = {g.name for g in guards}
    for sub in agent.memory.goal.subgoals:
        assert f"alice: shared {sub.text}" in names
    assert len(guards) == len(agent.memory.goal.subgoals) + 2  # + check, explore
    assert "alice: plan" in py_trees.display.ascii_tree(agent.tree)


@pytest.mark.slow
def test_validation_prevents_false_plans_that_no_validation_makes():
    seeds = range(30)
    reveca = [run_episode(s, noisy=True) for s in seeds]
    blind = [run_episode(s, noisy=True, policy="no-validation") for s in seeds]
    asking = [run_episode(s, noisy=True, policy="always-ask") for s in seeds]
    assert all(r.success for r in reveca + blind + asking)
    assert sum(r.false_plans for r in blind) > sum(r.false_plans for r in reveca)
    assert sum(r.requests for r in blind) == 0
    assert 0 < sum(r.requests for r in reveca) < sum(r.requests for r in asking)
    assert sum(r.messages for r in reveca) < 0.3 * sum(r.messages for r in asking)


def test_three_robots_and_every_policy_finish():
    for policy in POLICIES:
        assert run_episode(2, robots=3, policy=policy).success, policy


def test_the_demo_runs_from_the_command_line(capsys):
    assert main(["demo", "cooperative-table", "--seed", "4", "--noisy", "--policy", "reveca"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("goal: put ")
    assert "[hello]" in out and "plan [" in out
    assert "done after" in out and "false plans" in out and "messages" in out
    assert main(["demo", "cooperative-table", "--robots", "1"]) == 2
    assert "--robots must be 2..6" in capsys.readouterr().err
