"""The one reader in someone else's tree: a plain py_trees pick and a robot written here.

The guard's child acts on the object the words designate: the box that is not red, the cup on
the speaker's right; without the speaker's heading the robot asks, and acts on the answer.
Every tick asserts the guard's and the child's status.
"""

from __future__ import annotations

import time
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider import (
    ActionState,
    Progress,
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
)


def _obj(oid: str, x: float, z: float, colour: str) -> dict[str, Any]:
    return {
        "objectId": oid,
        "objectType": oid.split("|", 1)[0],
        "position": {"x": x, "y": 0.9, "z": z},
        "pickupable": True,
        "color": colour,
    }


class TeamRobot:
    """A team's robot: each action takes two polls; it keeps its scene as a dict."""

    def __init__(self, scene: dict[str, Any]) -> None:
        self.scene, self.log, self.polls = scene, [], {}

    def start(self, action: str, args: list[Any]) -> int:
        self.log.append((action, list(args)))
        self.polls[len(self.log)] = 2
        return len(self.log)

    def poll(self, handle: int) -> Progress:
        self.polls[handle] -= 1
        done = self.polls[handle] <= 0
        return Progress(ActionState.SUCCEEDED if done else ActionState.RUNNING)

    def cancel(self, handle: int) -> None:
        self.polls.pop(handle, None)

    def observe(self) -> dict[str, Any]:
        return self.scene


class TeamPick(py_trees.behaviour.Behaviour):
    """A team's own pick; ``retarget`` is what a guard calls with what its check resolved."""

    def __init__(self, target: str, robot: TeamRobot) -> None:
        super().__init__(f"Pick {target}")
        self.target, self.robot, self.resolved, self.handle = target, robot, None, 0

    def retarget(self, resolved: Any) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        target = self.resolved.args[0] if self.resolved else self.target
        self.handle = self.robot.start("pick", [target])

    def update(self) -> Status:
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return Status.RUNNING
        return Status.SUCCESS if state is ActionState.SUCCEEDED else Status.FAILURE


def _run(scene: dict[str, Any], query: str, answers: list[str]) -> tuple[TeamRobot, list, Any]:
    robot = TeamRobot(scene)
    pick = TeamPick("the thing", robot)
    human = ScriptedHuman(answers)
    guard = RaiderGuard(
        pick,
        query=query,
        checker=SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
    )
    ticks: list[tuple[Status, Status]] = []
    for _ in range(3000):  # the check runs off the tick: tick every 5 ms, 15 s at most
        time.sleep(0.005)
        guard.tick_once()
        ticks.append((guard.status, pick.status))
        if not robot.log:
            # Nothing acted yet: the child has not run (the check or the recovery is on, or
            # the guard refused).
            assert pick.status is Status.INVALID, ticks[-1]
            assert guard.status in (Status.RUNNING, Status.FAILURE), ticks[-1]
        if guard.status in (Status.SUCCESS, Status.FAILURE):
            break
    return robot, ticks, human


ROBOT_AT_ORIGIN = {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}}


def test_the_child_picks_the_box_that_is_not_red() -> None:
    scene = {
        "agent": ROBOT_AT_ORIGIN,
        "objects": [_obj("Box|red", -0.3, 0.8, "red"), _obj("Box|blue", 0.3, 0.8, "blue")],
    }
    robot, ticks, _ = _run(scene, "pick the box that is not red", [])
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
    assert robot.log == [("pick", ["Box|blue"])]


ADA = {"id": "h1", "name": "Ada", "position": {"x": 0.0, "z": 2.0}, "rotation": {"y": 180.0}}
GLASSES = [_obj("Cup|robots_left", -0.4, 1.0, "blue"), _obj("Cup|robots_right", 0.4, 1.0, "red")]


def test_the_child_picks_the_cup_on_the_speakers_right() -> None:
    scene = {"agent": ROBOT_AT_ORIGIN, "objects": GLASSES, "humans": [ADA]}
    robot, ticks, human = _run(scene, "pick the cup on my right", [])
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
    # Ada faces the robot: her right is the robot's left.
    assert robot.log == [("pick", ["Cup|robots_left"])]
    assert not human.transcript  # nothing to ask


def test_without_the_speakers_heading_the_robot_asks_and_picks_the_answer() -> None:
    facing_unknown = {k: v for k, v in ADA.items() if k != "rotation"}
    scene = {"agent": ROBOT_AT_ORIGIN, "objects": GLASSES, "humans": [facing_unknown]}
    robot, ticks, human = _run(scene, "pick the cup on my right", ["the red one"])
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
    assert robot.log == [("pick", ["Cup|robots_right"])]  # what the person said, never a guess
    assert [e.kind for e in human.transcript][:1] == ["ask"]


# ------------------------------------------------ found by the explorer on the fixes (b77b230)
def test_a_multi_word_colour_is_excluded_whole() -> None:
    # Was: "grab the box that isn't light blue" read "light" as a lamp's name, excluded
    # nothing, and the light-blue box was picked.
    scene = {
        "agent": ROBOT_AT_ORIGIN,
        "objects": [
            _obj("Box|light", -0.3, 0.8, "light blue"),
            _obj("Box|dark", 0.3, 0.8, "dark blue"),
        ],
    }
    robot, ticks, human = _run(scene, "grab the box that isn't light blue", [])
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
    assert robot.log == [("pick", ["Box|dark"])]
    assert not human.transcript


def test_any_member_is_picked_by_its_object_id_never_by_the_words() -> None:
    # Was: "pick any box in the sink" reached the robot as pick('any box in the sink').
    boxes = [_obj("Box|a", -0.2, 0.8, "red"), _obj("Box|b", 0.2, 0.8, "red")]
    for box in boxes:
        box["parentReceptacles"] = ["Sink|s"]
    sink = _obj("Sink|s", 0.0, 0.9, "white")
    sink.update(pickupable=False, receptacle=True, receptacleObjectIds=["Box|a", "Box|b"])
    scene = {"agent": ROBOT_AT_ORIGIN, "objects": [*boxes, sink]}
    for words in ("pick any box in the sink", "pick any box in the sink, you choose"):
        robot, ticks, human = _run(scene, words, [])
        assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS), words
        assert len(robot.log) == 1 and robot.log[0][1][0] in ("Box|a", "Box|b"), robot.log
        assert not human.transcript


def test_an_ordinal_counts_along_the_side_it_names() -> None:
    # Was: "from the left" was read as a place to pick from; the first from the left was picked.
    scene = {
        "agent": ROBOT_AT_ORIGIN,
        "objects": [
            _obj("Apple|l", -0.5, 1.0, "yellow"),
            _obj("Apple|m", 0.0, 1.0, "black"),
            _obj("Apple|r", 0.5, 1.0, "black"),
        ],
    }
    robot, ticks, human = _run(scene, "grab the second apple from the left", [])
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
    assert robot.log == [("pick", ["Apple|m"])]
    assert not human.transcript


def test_a_word_left_over_is_asked_about_before_the_child_runs() -> None:
    # "wobbly" could change which box is meant: ask, never act on the rest of the words. The
    # question offers every box (what 'wobbly' allows is unknown), so the answer decides.
    scene = {
        "agent": ROBOT_AT_ORIGIN,
        "objects": [_obj("Box|red", -0.3, 0.8, "red"), _obj("Box|blue", 0.3, 0.8, "blue")],
    }
    for words in ("pick the wobbly red box", "pick the red box unless it is cold"):
        robot, ticks, human = _run(scene, words, ["the red one"])
        assert [e.kind for e in human.transcript][:1] == ["ask"], words
        assert robot.log == [("pick", ["Box|red"])], words
        assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
    robot, ticks, human = _run(scene, "pick the wobbly red box", ["the blue one"])
    assert [e.kind for e in human.transcript][:1] == ["ask"]
    assert "wobbly" in human.transcript[0].text and "Box|" not in human.transcript[0].text
    assert robot.log == [("pick", ["Box|blue"])] and ticks[-1] == (Status.SUCCESS, Status.SUCCESS)


# ---------------------------------------- issue 32's explorer, seeds 401 and 402 (shrunk)
def _mirrors(ticks: list[tuple[Status, Status]]) -> None:
    """Every tick: the child has not run and the guard is RUNNING, or the guard is the child."""
    for guard, child in ticks:
        assert (child is Status.INVALID and guard is Status.RUNNING) or guard is child, ticks


def test_the_cup_to_your_right_now_is_the_right_hand_cup_without_a_question() -> None:
    # Was (P9, seed 401): "right now" read as time, 'your' left over, and the robot asked.
    robot, ticks, human = _run(
        {"agent": ROBOT_AT_ORIGIN, "objects": GLASSES}, "pick up the cup to your right now", []
    )
    _mirrors(ticks)
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
    assert robot.log == [("pick", ["Cup|robots_right"])]
    assert not human.transcript


def test_the_cup_right_now_of_two_is_asked_about_never_the_right_hand_one() -> None:
    scene = {"agent": ROBOT_AT_ORIGIN, "objects": GLASSES}
    for words in ("pick the cup right now", "pick the cup right away"):
        robot, ticks, human = _run(scene, words, ["the blue one"])
        _mirrors(ticks)
        assert [e.kind for e in human.transcript][:1] == ["ask"], words
        assert robot.log == [("pick", ["Cup|robots_left"])], words  # the answer, never a side
        assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)


THREE_CUPS = [
    _obj("Cup|green", -0.3, 0.8, "green"),
    _obj("Cup|red", 0.0, 0.8, "red"),
    _obj("Cup|blue", 0.3, 0.8, "blue"),
]


def test_an_exclusion_reply_selects_among_the_options_the_question_offered() -> None:
    # Seed 402: "which: the green cup or the red cup?" - "the one that is not red" is green.
    scene = {"agent": ROBOT_AT_ORIGIN, "objects": THREE_CUPS}
    words = "pick the green cup or the red cup"
    robot, ticks, human = _run(scene, words, ["the one that is not red"])
    _mirrors(ticks)
    (asked,) = [e.text for e in human.transcript if e.kind == "ask"]
    assert "green cup" in asked and "red cup" in asked and "blue" not in asked
    assert robot.log == [("pick", ["Cup|green"])]
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)


def test_an_exclusion_reply_among_three_offered_is_asked_again() -> None:
    # Three offered: "not red" leaves green and blue; asked again, the answer decides.
    scene = {"agent": ROBOT_AT_ORIGIN, "objects": THREE_CUPS}
    robot, ticks, human = _run(scene, "pick the cup", ["the one that is not red", "the blue one"])
    _mirrors(ticks)
    assert [e.kind for e in human.transcript].count("ask") == 2
    assert robot.log == [("pick", ["Cup|blue"])]
    assert ticks[-1] == (Status.SUCCESS, Status.SUCCESS)
