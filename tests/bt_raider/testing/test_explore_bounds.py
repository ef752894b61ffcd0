"""The explorer bounds the user's code it calls: factories, node ticks and robot calls.

A factory that hangs, raises or returns something else, a node whose update never returns, a
robot whose start never returns: each is a finding in the report, with the step, never a hung
test run or an escaped exception. An exploration in which no episode reached an action is not
ok. Every exploration here runs on a thread joined with its own timeout (no pytest-timeout).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import py_trees
import pytest

from bt_raider.robot.actions import ActionState, Progress
from bt_raider.testing import explore as explorer
from bt_raider.testing.explore import ExploreReport, explore
from bt_raider.testing.explore_tree import TreeSpec

S = py_trees.common.Status
#: Seconds one exploration here may take before the test fails as hung.
LIMIT_S = 60.0
FOREVER = threading.Event()  # never set: what a hung call waits on


def bounded_explore(*args: Any, **kwargs: Any) -> ExploreReport:
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(explore(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(LIMIT_S)
    assert box, f"explore() did not return within {LIMIT_S} s"
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


@pytest.fixture
def short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explorer, "FACTORY_S", 0.5)
    monkeypatch.setattr(explorer, "EPISODE_S", 2.0)


class Robot:
    """A user's robot: actions end at the first poll."""

    def __init__(self, scene: dict[str, Any], words: dict[str, str]) -> None:
        self.scene = scene

    def start(self, action: str, args: Any) -> int:
        return 1

    def poll(self, handle: int) -> Progress:
        return Progress(ActionState.SUCCEEDED, "done")

    def cancel(self, handle: int) -> None:
        pass

    def observe(self) -> dict[str, Any]:
        return self.scene


class StuckRobot(Robot):
    """Its start never returns (a driver waiting on hardware that is gone)."""

    def start(self, action: str, args: Any) -> int:
        FOREVER.wait()
        return 1


class Grab(py_trees.behaviour.Behaviour):
    """A user's node: grabs the first object of the instruction."""

    def __init__(self, spec: TreeSpec) -> None:
        super().__init__("grab it")
        group = spec.truth.groups[0]
        self.robot, self.target = spec.robot.view(group.kind), group.ids[0]

    def initialise(self) -> None:
        self.robot.start("Grab", [self.target])

    def update(self) -> S:
        self.feedback_message = "grabbed"
        return S.SUCCESS


class Sleeper(py_trees.behaviour.Behaviour):
    """A user's node whose update never returns."""

    def update(self) -> S:
        FOREVER.wait()
        return S.SUCCESS


def raising_world(scene: dict[str, Any], words: dict[str, str]) -> Any:
    raise RuntimeError("no robot on this bus")


def none_world(scene: dict[str, Any], words: dict[str, str]) -> Any:
    return None


def hanging_world(scene: dict[str, Any], words: dict[str, str]) -> Any:
    FOREVER.wait()


def grab(spec: TreeSpec) -> Grab:
    return Grab(spec)


def only(report: ExploreReport, prop: str) -> str:
    """The one property broken, and the message of its first episode."""
    assert not report.ok
    assert {p for p, n in report.violations.items() if n} == {prop}, report.text()
    return next(v.message for v in report.first[prop].violations if v.prop == prop)


@pytest.mark.parametrize(
    ("world", "prop", "words"),
    [
        (raising_world, "P6", "world_factory(scene, words) raised RuntimeError: no robot on"),
        (none_world, "P6", "world_factory(scene, words) returned None, not a robot"),
        (hanging_world, "P5", "world_factory(scene, words) did not return within 0.5 s"),
    ],
)
def test_a_world_factory_that_raises_returns_none_or_hangs_is_a_finding(short, world, prop, words):
    start = time.monotonic()
    report = bounded_explore(grab, world, episodes=4, seed=1, shrink=False)
    assert words in only(report, prop)
    assert time.monotonic() - start < LIMIT_S
    if world is hanging_world:  # stopped at the first hang: one thread left behind, not 4
        assert report.episodes == 1 and "stopped after episode 1" in report.problem


@pytest.mark.parametrize(
    ("tree", "prop", "words"),
    [
        (lambda spec: 1 / 0, "P6", "tree_factory(spec) raised ZeroDivisionError"),
        (lambda spec: "pick the cup", "P6", "tree_factory(spec) returned 'pick the cup', not a"),
        (lambda spec: FOREVER.wait(), "P5", "tree_factory(spec) did not return within 0.5 s"),
    ],
)
def test_a_tree_factory_that_raises_returns_no_behaviour_or_hangs_is_a_finding(
    short, tree, prop, words
):
    report = bounded_explore(tree, Robot, episodes=3, seed=1, shrink=False)
    assert words in only(report, prop)


def hung_episodes() -> int:
    """Episode threads still running (each hung one stays: Python cannot stop a thread)."""
    return sum(t.name == "explore: the episode" for t in threading.enumerate())


def test_a_node_whose_update_never_returns_is_a_finding_naming_it(short):
    before = hung_episodes()
    report = bounded_explore(lambda spec: Sleeper("sleepy node"), Robot, episodes=3, seed=2)
    # Hung once: the first episode is not run again for its replay (it would hang again).
    assert hung_episodes() - before == 1
    message = only(report, "P5")
    assert "the episode did not return within 2 s" in message
    assert "node 'sleepy node'" in message and "in update at test_explore_bounds.py" in message
    assert report.episodes == 1 and "stopped after episode 1" in report.problem
    assert report.findings == {}  # a hang is not shrunk: each candidate would hang again


def test_a_robot_whose_start_never_returns_is_a_finding_naming_the_call(short):
    report = bounded_explore(grab, StuckRobot, episodes=3, seed=2)
    message = only(report, "P5")
    assert "last robot call #1: start('Grab'" in message and "in start" in message


def test_an_exploration_in_which_no_episode_acts_is_not_ok_and_says_why():
    report = bounded_explore(
        lambda spec: py_trees.behaviours.Success("does nothing"), Robot, episodes=5, seed=3
    )
    assert not any(report.violations.values())  # nothing broken, and nothing explored
    assert not report.ok and "no episode reached an action" in report.problem
    assert "NOT OK: no episode reached an action" in report.text()
    acting = bounded_explore(grab, Robot, episodes=5, seed=3, shrink=False)
    assert not acting.problem
