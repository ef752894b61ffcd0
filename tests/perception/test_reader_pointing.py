"""Pointing in the one reader: a reply that points designates nothing, even the only candidate.

The rule lives in :func:`bt_raider.perception.reference_words.points`; replies read it
(:meth:`~bt_raider.recovery.answers.AnswerSpace.read`), and an instruction's "there" and "here"
stay ignored words, as before.
"""

from __future__ import annotations

import pytest

import bt_raider
from bt_raider.perception.reference_words import points
from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace, Intent


@pytest.mark.parametrize(
    "reply",
    ["that one over there", "this one here", "that one", "this", "That one.", "the one there"],
)
def test_pointing_replies(reply: str) -> None:
    assert points(reply)


@pytest.mark.parametrize(
    "reply", ["the red one", "that red one", "the one that is not red", "the one on the left"]
)
def test_words_that_say_which_do_not_point(reply: str) -> None:
    assert not points(reply)


CUP = {
    "objectId": "Cup|1",
    "objectType": "Cup",
    "position": {"x": 0.3, "y": 0.9, "z": 0.8},
    "pickupable": True,
    "color": "red",
}
SCENE = {"agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}}}


def test_a_reply_that_points_is_asked_again_even_for_the_only_candidate() -> None:
    space = AnswerSpace.objects(Scene({**SCENE, "objects": [CUP]}), ["Cup|1"])
    for reply in ("that one over there", "that one"):
        reading = space.read(reply)
        assert reading.intent is Intent.UNCLEAR and "where you point" in reading.reason
    assert space.read("the red one").value == "Cup|1"


def test_an_instructions_there_is_still_an_ignored_word() -> None:
    verdict = bt_raider.check({**SCENE, "objects": [CUP]}, "pick up the cup there")
    assert verdict.ok and list(verdict.grounding.values()) == [["Cup|1"]], verdict.explanation
