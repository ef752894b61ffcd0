"""The explorer in the user's world (issue 34): the care home's actions, words, people, policy,
plan, button and lounge; the oracle's properties D1-D7; a finding names the property and the
step, and its test names the room by a path relative to the user's project."""

from __future__ import annotations

import json

import py_trees
import pytest

from bt_raider import (
    ActionState,
    Progress,
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
)
from bt_raider.errors import UsageError
from bt_raider.examples import care_home
from bt_raider.testing.explore import explore
from bt_raider.testing.explore_domain import (
    ITEM,
    PROPERTIES,
    Episode,
    Outcome,
    UserDomain,
    judge,
    run_episode,
    world_of,
)

NAMES = care_home.KINDS
Status = py_trees.common.Status
#: The suite's care-home exploration (benchmarks/explore.py --room care_home --suite).
SUITE_DOMAIN_EPISODES = 400
SUITE_DOMAIN_SEED = 0


def domain(guard=care_home.guard):
    return UserDomain(care_home.SCENE, NAMES, guard)


def test_the_care_home_explored_in_its_own_terms_has_no_violation():
    """explore(domain=...) on the care home (not our kitchen): every form of episode runs, and
    none breaks D1-D7. On 801bbfc the same episodes break D1, D2, D5, D6 and D7, each class of
    the issue within them (docs/figures.md)."""
    forms = set()
    report = explore(
        domain=care_home.explored(),
        episodes=SUITE_DOMAIN_EPISODES,
        seed=SUITE_DOMAIN_SEED,
        on_episode=lambda o: forms.add((o.episode.form, o.episode.plan or o.episode.typo)),
    )
    assert report.episodes == SUITE_DOMAIN_EPISODES
    assert report.ok, report.text()
    assert report.violations == dict.fromkeys(PROPERTIES, 0)
    assert {f for f, _ in forms} == {
        "handover",
        "goto_person",
        "goto_place",
        "goto_thing",
        "fetch",
        "press",
    }
    assert ("goto_place", True) in forms  # the plan's step and the misspelt scene ran too
    assert report.statuses["SUCCESS"] > 0 and report.statuses["FAILURE"] > 0


def test_a_domain_without_the_users_action_for_a_kind_is_refused():
    with pytest.raises(UsageError, match="UserDomain.names has no 'approach'"):
        explore(domain=UserDomain(care_home.SCENE, {"handover": "HandTo"}, care_home.guard))


def test_the_oracle_finds_a_substitute_recipient_and_names_the_step():
    episode = Episode("handover", "Bernadette", False, "recognised", "resident", False, False, 1)
    outcome = Outcome(
        episode,
        calls=[("HandTo", ["Item|explore", "p_stranger"])],
        dialogue=[("ask", "Hello, who are you?", "I'm Zoe.")],
        status=Status.SUCCESS,
        reason="no issue",
    )
    found = judge(outcome, domain(), {})
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
    found = judge(outcome, domain(), {})
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
    outcome = run_episode(episode, room, domain(naive), {})
    assert "D2" in outcome.violations, outcome.dialogue
    from bt_raider.testing.explore_domain import DomainReport

    report = DomainReport()
    report.add(outcome)
    text = report.finding_text("D2", care_home.SCENE, care_home.SCENE.parents[2])
    assert "Path('examples/care_home/scene.json')" in text or "care_home/scene.json" in text
    assert "/work/" not in text and text.startswith("# D2")
    assert ScriptedHuman  # the explorer's people are scripted humans too


def test_the_oracle_finds_a_plan_step_read_by_position_and_a_typo_driven_into():
    """D5: the plan's door named after a person taken for the destination; D6: the scene's
    misspelt place let the robot drive into the closed door."""
    room = json.loads(care_home.SCENE.read_text())
    plan = Episode("goto_place", "corridor", False, "recognised", "resident", False, False, 3,
                   plan=True)  # fmt: skip
    went = Outcome(plan, [("navigate-to", ["p_stranger"])], [], Status.SUCCESS, "no issue")
    assert judge(went, care_home.explored(), room) == {
        "D5": "call 1: navigate-to(p_stranger) is not the destination corridor"
    }
    typo = Episode("goto_place", "corridor", False, "none", "resident", True, False, 4, typo=True)
    assert world_of(room, typo, {})["blocked"] == {"coridor": ["Door|corridor"]}
    drove = Outcome(typo, [("NavigateTo", ["corridor"])], [], Status.SUCCESS, "no issue")
    assert judge(drove, care_home.explored(), room) == {
        "D6": "call 1: NavigateTo(corridor) drives into Door|corridor, closed"
    }
    opened = Outcome(typo, [("NavigateTo", ["Door|corridor"]), ("OpenDoor", ["Door|corridor"]),
                            ("NavigateTo", ["corridor"])], [], Status.SUCCESS, "ok")  # fmt: skip
    assert judge(opened, care_home.explored(), room) == {}


def test_the_oracle_finds_a_users_word_misread_and_its_own_kind_unserved():
    room = json.loads(care_home.SCENE.read_text())
    fetch = Episode("fetch", "glasses", False, "none", "staff", False, False, 5,
                    meant="ReadingGlasses")  # fmt: skip
    took = Outcome(fetch, [("PickUp", ["Glass|1"])], [], Status.SUCCESS, "no issue")
    assert judge(took, care_home.explored(), room) == {
        "D5": "call 1: PickUp(Glass|1): 'glasses' means the ReadingGlasses"
    }
    press = Episode("press", "call button", False, "none", "staff", False, False, 6,
                    meant="CallButton")  # fmt: skip
    refused = Outcome(press, [], [], Status.FAILURE, "unknown action 'PressButton'")
    assert set(judge(refused, care_home.explored(), room)) == {"D7"}
    served = Outcome(press, [("PressButton", ["Button|explore"])], [], Status.SUCCESS, "ok")
    assert judge(served, care_home.explored(), room) == {}


class _KitchenRobot:
    """The care home's robot over the explorer's generated kitchen: every action ends at once."""

    def __init__(self, scene, words):
        self.scene = scene

    def start(self, action, args):
        return 1

    def poll(self, handle):
        return Progress(ActionState.SUCCEEDED, "done")

    def cancel(self, handle):
        pass

    def observe(self):
        return self.scene


class _PickUp(py_trees.behaviour.Behaviour):
    def __init__(self, spec):
        super().__init__("PickUp")
        self.robot, self.resolved = spec.robot, None
        self.target = spec.truth.groups[0].ids[0]

    def retarget(self, resolved):
        self.resolved = resolved

    def initialise(self):
        self.robot.start("PickUp", list(self.resolved.args) if self.resolved else [self.target])

    def update(self):
        return Status.SUCCESS


def _home_tree(spec):
    """The care home's user in the kitchen explorer: its PickUp under a guard whose recovery
    speaks the home's action names (NavigateTo, PickUp, ...)."""
    recovery = Recovery(
        SymbolicRecoveryPlanner(), spec.robot, spec.person, actions=list(care_home.ACTIONS)
    )
    query = spec.truth.groups[0].query
    return RaiderGuard(
        _PickUp(spec), query, SymbolicReasoner(), scene=spec.robot.observe, recovery=recovery
    )


def test_the_kitchen_explorer_judges_the_users_own_action_names_given_to_it():
    """Issue 34: P2 judged recovery by the explorer's built-in vocabularies and flagged the
    user's own NavigateTo/PickUp (12 of 20 episodes on 801bbfc). explore(actions=...) names the
    robot's own actions: its recovery's calls of them are the robot's."""
    pytest.importorskip("hypothesis")
    run = dict(episodes=8, seed=1, shrink=False)
    before = explore(_home_tree, _KitchenRobot, **run)
    assert before.violations["P2"] > 0  # the user's names, unknown to the explorer
    assert "PickUp" in str(before.first["P2"].violations)
    after = explore(_home_tree, _KitchenRobot, actions=care_home.KINDS, **run)
    assert after.episodes == 8 and after.violations["P2"] == 0, after.text()


def test_the_oracle_finds_a_missing_target_become_a_person():
    room = json.loads(care_home.SCENE.read_text())
    gone = Episode("goto_thing", "spectacles", False, "recognised", "staff", False, False, 7,
                   meant="ReadingGlasses")  # fmt: skip
    assert ITEM not in {o["objectId"] for o in world_of(room, gone, {})["objects"]}
    went = Outcome(gone, [("NavigateTo", ["p_stranger"])], [], Status.SUCCESS, "no issue")
    assert judge(went, care_home.explored(), room) == {
        "D1": "call 1: NavigateTo(p_stranger): a person, not the spectacles"
    }
