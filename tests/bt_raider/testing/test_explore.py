"""The explorer end to end: the suite's bounded exploration, shrinking, the fixture, the extra.

``test_the_suites_exploration_finds_no_violation`` is the bounded, derandomised exploration
every run of the suite makes (``SUITE_EPISODES`` episodes, seed ``SUITE_SEED``, the rooms of
``benchmarks/explore.py --suite``): every property of the oracle must hold on every episode.
A failure prints each broken property's shrunk episode as a ready-to-paste pytest test.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import py_trees
import pytest

from bt_raider.errors import MissingDependencyError
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.testing.explore import ExploreReport, explore
from bt_raider.testing.explore_tree import TreeSpec
from bt_raider.testing.explore_world import two_cups
from bt_raider.testing.scenes import small_kitchen
from tests.shared_data import SHARED

S = py_trees.common.Status
ROOT = Path(__file__).resolve().parents[3]
#: The suite's exploration (``benchmarks/explore.py --suite`` runs the same).
SUITE_EPISODES = 300
SUITE_SEED = 24


def suite_rooms() -> dict[str, Any]:
    """The kit's kitchen, the demo's scene, a user's, and FloorPlan1 when ../shared is there."""
    rooms: dict[str, Any] = {
        "kitchen": ROOT / "bt_raider" / "testing" / "data" / "kitchen.json",
        "medicine": ROOT / "examples" / "medicine_delivery" / "scene.json",
        "studio": two_cups(),
    }
    floorplan = SHARED / "scenes" / "floorplan1_kitchen.json"
    if floorplan.is_file():
        rooms["floorplan1"] = floorplan
    return rooms


def test_the_suites_exploration_finds_no_violation():
    report = explore(
        rooms=suite_rooms(), episodes=SUITE_EPISODES, seed=SUITE_SEED, shrink_budget=10.0
    )

    assert report.episodes == SUITE_EPISODES
    assert report.ok, report.text()


# ---------------------------------------------------------------------------- a user's tree
class HandRobot:
    """A user's robot: actions end at the first poll."""

    def __init__(self, scene: dict[str, Any], words: dict[str, str]) -> None:
        self.scene = scene
        self.executed: list[tuple[str, tuple[Any, ...]]] = []

    def start(self, action: str, args: Any) -> int:
        self.executed.append((action, tuple(args)))
        return len(self.executed)

    def poll(self, handle: int) -> Progress:
        return Progress(ActionState.SUCCEEDED, "done")

    def cancel(self, handle: int) -> None:
        pass

    def observe(self) -> dict[str, Any]:
        return self.scene


class GrabLast(py_trees.behaviour.Behaviour):
    """A careless user's node: grabs the last object of its kind, asking nobody."""

    def __init__(self, spec: TreeSpec) -> None:
        super().__init__("grab the last one")
        group = spec.truth.groups[0]
        self.robot, self.kind, self.target = spec.robot.view(group.kind), group.kind, group.ids[-1]

    def initialise(self) -> None:
        self.handle = self.robot.start("Grab", [self.target])

    def update(self) -> S:
        self.feedback_message = f"grabbed {self.target}"
        return S.SUCCESS


class GiveUp(py_trees.behaviour.Behaviour):
    """A cautious user's node: refuses, saying why."""

    def update(self) -> S:
        self.feedback_message = "I will not guess which one"
        return S.FAILURE


def careless(spec: TreeSpec) -> GrabLast:
    return GrabLast(spec)


def test_a_careless_tree_is_caught_and_shrunk_to_two_objects_and_a_plain_case():
    report = explore(careless, HandRobot, episodes=25, seed=3, shrink_budget=20.0)

    assert report.violations["P1"] > 0
    # P1, and P3 when the objects are elsewhere (the id it grabs is not in the scene); P13-P15
    # when the words left it open for a reason the robot had to ask about (issue 32).
    assert {p for p, n in report.violations.items() if n} <= {"P1", "P3", "P13", "P14", "P15"}
    finding = report.findings["P1"]
    case = finding.episode.case
    # The smallest case that shows the bug: two objects, nothing else going on.
    assert len(case.things) == 2 and case.target == 0
    assert (case.person, case.tree, case.disturbance, case.form) == (
        "cooperative",
        "single",
        "none",
        "structured",
    )
    assert "P1" in finding.episode.props
    assert "from tests.bt_raider.testing.test_explore import careless" in finding.test
    assert "tree_factory=careless, world_factory=HandRobot" in finding.test
    assert report.shrink_s == pytest.approx(sum(f.shrink_s for f in report.findings.values()))


def test_a_tree_that_never_acts_is_not_ok_and_the_same_seed_draws_the_same_episodes(
    bt_raider_explore,
):
    drawn: list[list[Any]] = [[], []]
    reports: list[ExploreReport] = []
    for out in drawn:
        reports.append(
            bt_raider_explore(
                lambda spec: GiveUp("give up"),
                HandRobot,
                rooms={"kitchen": small_kitchen(), "studio": two_cups()},
                episodes=12,
                seed=7,
                on_episode=lambda ep, out=out: out.append(ep.case),
            )
        )

    # It breaks no property, but never acting it explored nothing: not ok, and it says so.
    assert all(not any(r.violations.values()) and r.episodes == 12 for r in reports)
    assert all(not r.ok and "no episode reached an action" in r.problem for r in reports)
    assert reports[0].statuses == {"FAILURE": 12}
    assert drawn[0] == drawn[1] and len(set(drawn[0])) > 1
    assert {c.room for c in drawn[0]} <= {"kitchen", "studio"}


def test_without_hypothesis_the_kit_imports_and_explore_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    import bt_raider.testing

    with pytest.raises(MissingDependencyError, match=r"bt_raider\[explore\]"):
        explore(episodes=1)
    assert bt_raider.testing.run_tree is not None and bt_raider.testing.Case().kind == "Cup"


def test_bad_options_are_refused_with_the_options():
    with pytest.raises(ValueError, match="episodes must be an integer >= 1"):
        explore(episodes=0)
    with pytest.raises(ValueError, match="people .*expected some of cooperative"):
        explore(people=["telepathic"], episodes=1)


def test_a_parallel_moved_mid_run_is_judged_on_each_run_not_on_their_timing():
    # Shrunk by the suite's exploration in a CI run: two guards in a Parallel, an object moved
    # before the second pick; which branch saw the move was the threads' timing (P8). Each run
    # must still be free of every other violation, twice over.
    from bt_raider.testing.explore import check_case
    from bt_raider.testing.explore_world import Case, Thing
    from tests.shared_data import require

    floorplan = require(SHARED / "scenes" / "floorplan1_kitchen.json")
    case = Case(
        room="floorplan1",
        things=(
            Thing(colour="black", dirty=False, side="right", far=True),
            Thing(colour="black", dirty=False, side="right", far=True),
            Thing(colour="green", dirty=True, side="right", far=True),
        ),
        target=2,
        form="structured",
        person="colour",
        tree="parallel",
        other=1,
        words="raider",
        disturbance="moved",
    )
    for _ in range(2):
        episode = check_case(case, rooms={"floorplan1": str(floorplan)}, replay=True)
        assert episode.violations == [], [str(v) for v in episode.violations]
        assert episode.status in ("SUCCESS", "FAILURE")


def test_the_ordinal_person_counts_only_an_order_it_can_read():
    # Shrunk from the 10,000-episode run (43 P1): asked "the cup on the right or the cup on
    # the left?" about two cups it saw on one side, the ordinal person said "the first one"
    # while meaning nothing, and the oracle blamed the robot for taking the first one listed.
    # A person who cannot tell which listed one is which must not count on the order.
    from bt_raider.testing.explore import check_case
    from bt_raider.testing.explore_world import Case, Thing
    from tests.shared_data import require

    floorplan = require(SHARED / "scenes" / "floorplan1_kitchen.json")
    same = Thing(colour="red", dirty=False, side="left", far=False)
    case = Case(room="floorplan1", things=(same, same), form="structured", person="ordinal")
    episode = check_case(case, rooms={"floorplan1": str(floorplan)}, replay=False)
    assert episode.violations == [], [str(v) for v in episode.violations]
    assert "the first one" not in episode.answers


def test_a_side_in_a_reply_is_read_from_where_the_robot_stood_when_it_asked():
    # Shrunk from the exploration of models under the hybrid (1,500 episodes, 1 P1; the model
    # played no part): in a Parallel the other branch turned the robot between the plan and
    # the question, the person said "the one on the left" as the robot faced then, and the
    # reply was read from the plan's view: the other box was taken. Thread timing decides
    # whether the turn comes first, so the case runs several times (the old code failed about
    # one run in three).
    from bt_raider.testing.explore import check_case
    from bt_raider.testing.explore_world import Case, Thing

    case = Case(
        things=(Thing(colour="black", dirty=False, side="front", far=True),),
        form="me",
        person="place",
        tree="parallel",
        other=1,
        words="user-small",
        disturbance="removed",
        when=3,
        model="prose",
    )
    for _ in range(10):
        episode = check_case(case, replay=False)
        assert "P1" not in episode.props, [str(v) for v in episode.violations]


@pytest.mark.parametrize("model", ["clears", "alarms", "made_up", "prose"])
def test_a_model_under_the_hybrid_never_leads_to_a_wrong_action(model):
    # 60 episodes per scripted model (the suite's exploration draws them among the others).
    from bt_raider.testing.explore import explore

    report = explore(models=(model,), episodes=60, seed=7, shrink=False)
    assert report.episodes == 60
    assert sum(report.violations.values()) == 0, report.violations


def test_a_parallel_whose_person_answers_by_a_side_is_not_asked_to_replay_identically():
    # Shrunk from a 2,000-episode run (1 P8): the other branch turns the robot, so whether the
    # person sees the cup "on the left" or "in front of you" when asked is thread timing; the
    # second answer is unclear three times and the run fails. Each run is judged on P1-P7.
    from bt_raider.testing.explore import check_case
    from bt_raider.testing.explore_world import Case, Thing

    box = Thing(colour="white", dirty=True, side="left", far=True)
    case = Case(kind="Box", things=(box,), form="me", person="place", tree="parallel", running=True)
    for _ in range(8):
        episode = check_case(case, replay=True)
        assert episode.violations == [], [str(v) for v in episode.violations]


def test_a_parallel_whose_recovery_plans_around_the_other_branch_is_judged_on_each_run():
    # Shrunk from a 10,000-episode run (seed 701, 2 P8): the apple branch's recovery is planned
    # from the robot as the cup branch has left it; in one run the hand is free (fetch the apple),
    # in another it holds the cup (put it down first, which fails once the cup branch has placed
    # it). Both runs are safe; which one happens is thread timing. Each run is judged on P1-P7.
    from bt_raider.testing.explore import _same_run, check_case, run_case
    from bt_raider.testing.explore_world import Case, Thing

    case = Case(
        kind="Apple",
        things=(
            Thing(colour="white", side="left", at="Plate"),
            Thing(colour="blue", side="left", at="Sink"),
        ),
        form="me",
        person="negating",
        tree="parallel",
        when=3,
        planner="scripted",
        names="same",
    )
    episode = check_case(case, replay=True)
    assert episode.violations == [], [str(v) for v in episode.violations]
    assert any(tag is None for _a, _b, tag in episode.calls), episode.calls
    # The other timing: the recovery found the cup in the hand and put it down first.
    freed = [("GoTo", ("CounterTop|explore",), None), ("Put", ("Cup|explore|0",), None)]
    mine = [c for c in episode.calls if c[2] is not None]
    assert _same_run(episode, replace(episode, calls=mine + freed))
    # Without a recovery, a parallel is still compared: each branch's calls must replay.
    quiet = run_case(replace(case, kind="Cup", form="structured", person="cooperative"))
    assert quiet.calls and all(tag is not None for _a, _b, tag in quiet.calls), quiet.calls
    action, _args, tag = quiet.calls[0]
    other = replace(quiet, calls=[(action, ("Apple|explore|0",), tag), *quiet.calls[1:]])
    assert _same_run(quiet, replace(quiet))
    assert not _same_run(quiet, other)
