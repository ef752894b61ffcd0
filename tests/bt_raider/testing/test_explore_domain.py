"""The explorer in the user's world (issue 34): the care home's actions, words, people, policy
and lounge; the oracle's properties D1-D4; a finding names the property and the step, and its
test names the room by a path relative to the user's project."""

from __future__ import annotations

import json

import py_trees

from bt_raider import (
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
)
from bt_raider.examples import care_home
from bt_raider.testing.explore_domain import (
    Episode,
    Outcome,
    explore_domain,
    judge,
    run_episode,
    world_of,
)

NAMES = {
    "handover": "HandTo",
    "approach": "NavigateTo",
    "pick": "PickUp",
    "open": "OpenDoor",
    "place": "PutDown",
}
Status = py_trees.common.Status


def test_the_care_home_explored_in_its_own_terms_has_no_violation():
    report = explore_domain(
        care_home.SCENE,
        NAMES,
        care_home.guard,
        count=60,
        seed=3,
        words=("PillOrganiser", "pill box", "pills"),
    )
    assert report.episodes == 60
    assert report.violations == {"D1": 0, "D2": 0, "D3": 0, "D4": 0}, report.findings


def test_the_oracle_finds_a_substitute_recipient_and_names_the_step():
    episode = Episode("handover", "Bernadette", False, "recognised", "resident", False, False, 1)
    outcome = Outcome(
        episode,
        calls=[("HandTo", ["Item|explore", "p_stranger"])],
        dialogue=[("ask", "Hello, who are you?", "I'm Zoe.")],
        status=Status.SUCCESS,
        reason="no issue",
    )
    found = judge(outcome, NAMES, list(NAMES.values()))
    assert found == {"D1": "call 1: HandTo(Item|explore, p_stranger) is not Bernadette"}


def test_the_oracle_finds_a_resident_sent_on_an_errand_and_a_foreign_action():
    episode = Episode("goto_place", "corridor", False, "none", "resident", True, False, 2)
    outcome = Outcome(
        episode,
        calls=[("move_to", ["corridor"])],
        dialogue=[("ask", "Could you move the Door out of the way, please?", "ok")],
        status=Status.FAILURE,
        reason="",
    )
    found = judge(outcome, NAMES, list(NAMES.values()))
    assert set(found) == {"D2", "D3", "D4"}
    assert found["D2"].startswith("question 1: 'Could you move the Door")


def test_a_robot_that_asks_the_resident_is_caught():
    """The questions main asked (RAIDER's default planner, no policy given to recovery, the
    resident in sight asked to move the door): D2 finds it, and the finding's test names the
    room relative to the project."""

    def naive(node, query, robot, human):
        robot.scene.pop("policy", None)  # what main read: no roles, no policy
        for h in robot.scene["humans"]:
            h.pop("role", None)
        return RaiderGuard(
            node,
            query,
            SymbolicReasoner(),
            scene=robot.observe,
            recovery=Recovery(SymbolicRecoveryPlanner(), robot, human, actions=["NavigateTo"]),
        )

    episode = Episode("goto_place", "corridor", True, "recognised", "resident", True, False, 5)
    room = json.loads(care_home.SCENE.read_text())
    assert world_of(room, episode, {})["humans"][0]["name"] == "Zoe"
    outcome = run_episode(episode, room, NAMES, {}, naive)
    assert "D2" in outcome.violations, outcome.dialogue
    from bt_raider.testing.explore_domain import DomainReport

    report = DomainReport()
    report.add(outcome)
    text = report.finding_text("D2", care_home.SCENE, care_home.SCENE.parents[2])
    assert "Path('examples/care_home/scene.json')" in text or "care_home/scene.json" in text
    assert "/work/" not in text and text.startswith("# D2")
    assert ScriptedHuman  # the explorer's people are scripted humans too
