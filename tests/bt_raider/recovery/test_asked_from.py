"""A reply's sides are the robot's as it asked: AnswerSpace.seen_from and pipeline.AskedFrom.

Two cups side by side in front of a robot at the origin; the robot faces +z (the clean cup on
its right) or has turned round (the clean cup on its left).
"""

from __future__ import annotations

import copy

from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace, Intent
from bt_raider.recovery.pipeline import AskedFrom
from bt_raider.testing.explore_world import two_cups

CLEAN, DIRTY = "Cup|+00.20|+00.90|+00.50", "Cup|-00.20|+00.90|+00.50"


def facing(yaw: float) -> Scene:
    data = copy.deepcopy(two_cups())
    data["agent"]["rotation"]["y"] = yaw
    return Scene(data)


def space() -> AnswerSpace:
    return AnswerSpace.objects(facing(0.0), [CLEAN, DIRTY], describe=False)


def test_seen_from_reads_sides_from_the_new_view_and_keeps_the_candidates():
    ahead, turned = space(), space().seen_from(facing(180.0))
    assert ahead.read("the one on the right").value == CLEAN
    assert turned.read("the one on the right").value == DIRTY
    assert turned.read("the dirty one").value == DIRTY  # not a side: the same either way
    assert [c.value for c in turned.candidates] == [c.value for c in ahead.candidates]
    assert ahead.scene is not turned.scene  # the original is left as it was


class Turning:
    """A scene source written for the test: each call returns the next view (the last stays)."""

    def __init__(self, *yaws: float) -> None:
        self.yaws = list(yaws)
        self.calls = 0

    def __call__(self) -> Scene:
        self.calls += 1
        return facing(self.yaws.pop(0) if len(self.yaws) > 1 else self.yaws[0])


def test_a_reply_is_read_from_the_view_when_the_question_was_put():
    # The plan saw the robot facing +z; it had turned round by the time it asked, and stayed.
    reader = AskedFrom(space(), Turning(180.0))
    read = reader.asking()
    assert read("the one on the right").value == DIRTY


def test_a_turn_while_the_person_answers_makes_a_side_unclear_not_a_guess():
    source = Turning(0.0, 180.0)  # asked facing +z; turned round before the reply was read
    read = AskedFrom(space(), source).asking()
    reading = read("the one on the right")
    assert reading.intent is Intent.UNCLEAR and not reading.usable
    assert "moved while you answered" in reading.reason
    # A reply that does not depend on where the robot faces is still read.
    assert AskedFrom(space(), Turning(0.0, 180.0)).asking()("the clean one").value == CLEAN
    assert source.calls == 2


def test_a_scene_that_cannot_be_read_leaves_the_plans_view():
    def broken() -> Scene:
        data = two_cups()
        data["agent"]["rotation"]["y"] = float("nan")  # Scene refuses it (SceneError)
        return Scene(data)

    read = AskedFrom(space(), broken).asking()
    assert read("the one on the right").value == CLEAN
