"""Issue 32, "Why" 3: a reply is read by the same reader as an instruction.

"the one behind you", "the one in the sink", "the golden one", "not the one in the sink" and
"the one on my left" (with and without the person's heading) mean to a reply what they mean
to the check; each case also checks the instruction that says the same.
"""

from __future__ import annotations

from typing import Any

import pytest

import bt_raider
from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace, Intent


def _obj(oid: str, x: float, z: float, **more: Any) -> dict[str, Any]:
    return {
        "objectId": oid,
        "objectType": oid.split("|", 1)[0],
        "position": {"x": x, "y": 0.9, "z": z},
        **more,
    }


def _scene(*objects: dict[str, Any], humans: list[dict[str, Any]] | None = None) -> Scene:
    data: dict[str, Any] = {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": list(objects),
    }
    if humans is not None:
        data["humans"] = humans
    return Scene(data)


SINK, IN_SINK, ON_COUNTER = "Sink|1", "Mug|sink", "Mug|counter"
MUGS = _scene(
    _obj(SINK, 0.5, 0.8, receptacle=True),
    _obj(IN_SINK, 0.5, 0.8, pickupable=True, parentReceptacles=[SINK], color="white"),
    _obj("CounterTop|1", -0.5, 0.8, receptacle=True),
    _obj(ON_COUNTER, -0.5, 0.8, pickupable=True, parentReceptacles=["CounterTop|1"], color="gold"),
)
AHEAD, BEHIND = "Mug|ahead", "Mug|behind"
AROUND = _scene(_obj(AHEAD, 0.0, 0.6, pickupable=True), _obj(BEHIND, 0.1, -0.6, pickupable=True))


@pytest.mark.parametrize(
    ("scene", "reply", "instruction", "meant"),
    [
        (MUGS, "the one in the sink", "pick the mug in the sink", IN_SINK),
        (MUGS, "not the one in the sink", "pick the mug, not the one in the sink", ON_COUNTER),
        (MUGS, "the golden one", "pick the golden mug", ON_COUNTER),
        (MUGS, "the gold one", "pick the gold mug", ON_COUNTER),
        (MUGS, "the mug that isn't in the sink", "pick the mug that isn't in the sink", ON_COUNTER),
        (AROUND, "the one behind you", "pick the mug behind you", BEHIND),
        (AROUND, "the one in front of you", "pick the mug in front of you", AHEAD),
    ],
)
def test_a_reply_means_what_the_same_words_mean_in_an_instruction(
    scene, reply, instruction, meant
) -> None:
    ids = [o.id for o in scene.objects if o.type == "Mug"]
    reading = AnswerSpace.objects(scene, ids).read(reply)
    assert reading.intent is Intent.CHOSEN and reading.value == meant, reading.reason
    verdict = bt_raider.check(scene, instruction)
    assert verdict.ok and list(verdict.grounding.values()) == [[meant]], verdict.explanation


@pytest.mark.parametrize(
    "reply",
    ["both", "either one", "the red one or the gold one", "the one in the sink unless it is hot"],
)
def test_a_reply_naming_several_or_with_a_word_left_over_is_unclear(reply) -> None:
    reading = AnswerSpace.objects(MUGS, [IN_SINK, ON_COUNTER]).read(reply)
    assert reading.intent is Intent.UNCLEAR and reading.value is None


PERSON = {"id": "h1", "name": "Ada", "position": {"x": 0.0, "z": 2.0}, "rotation": {"y": 180.0}}
GLASSES = (_obj("Cup|robots_left", -0.4, 1.0), _obj("Cup|robots_right", 0.4, 1.0))


def test_the_one_on_my_left_is_read_from_the_person_who_answers() -> None:
    scene = _scene(*GLASSES, humans=[PERSON])
    space = AnswerSpace.objects(scene, ["Cup|robots_left", "Cup|robots_right"])
    # Ada faces the robot: her left is the robot's right.
    assert space.read("the one on my left").value == "Cup|robots_right"
    assert space.read("the one on your left").value == "Cup|robots_left"


def test_the_one_on_my_left_without_the_persons_heading_is_asked_again() -> None:
    facing_unknown = {k: v for k, v in PERSON.items() if k != "rotation"}
    scene = _scene(*GLASSES, humans=[facing_unknown])
    space = AnswerSpace.objects(scene, ["Cup|robots_left", "Cup|robots_right"])
    reading = space.read("the one on my left")
    assert reading.intent is Intent.UNCLEAR and "which way you face" in reading.reason
    # Nobody known to be speaking: the same.
    space.speaker = None
    assert space.read("the one on my left").intent is Intent.UNCLEAR


# Three cups: two on the left were offered, the third stands in front and was not (the
# explorer, seed 501, episode 2,464, shrunk: "the one in front of you" read among the two
# picked the farther left one, which is more in front than the other; the person meant the
# third).
LEFT_NEAR, LEFT_FAR, FRONT = "Cup|left_near", "Cup|left_far", "Cup|front"
THIRD_AHEAD = _scene(
    _obj(LEFT_NEAR, -0.35, 0.45, pickupable=True, color="red"),
    _obj(LEFT_FAR, -0.42, 1.5, pickupable=True, color="blue"),
    _obj(FRONT, 0.0, 0.6, pickupable=True, color="red"),
)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("the one in front of you", "fits a cup I did not ask about"),
        ("the cup right in front of you", "fits a cup I did not ask about"),
    ],
)
def test_a_reply_that_fits_a_thing_not_offered_is_asked_again(reply, why) -> None:
    space = AnswerSpace.objects(THIRD_AHEAD, [LEFT_NEAR, LEFT_FAR])
    reading = space.read(reply)
    assert reading.intent is Intent.UNCLEAR and reading.value is None
    assert why in reading.reason
    # Offered all three, the same words designate the one in front.
    every = AnswerSpace.objects(THIRD_AHEAD, [LEFT_NEAR, LEFT_FAR, FRONT]).read(reply)
    assert every.intent is Intent.CHOSEN and every.value == FRONT, every.reason


@pytest.mark.parametrize(
    ("reply", "meant"),
    [("the blue one", LEFT_FAR), ("the far one", LEFT_FAR), ("the red one", LEFT_NEAR)],
)
def test_a_reply_among_the_offered_stands_when_others_fit_too(reply, meant) -> None:
    # "the red one" also fits the cup in front, not offered: the person chose among the two
    # offered, and only one of them is red.
    reading = AnswerSpace.objects(THIRD_AHEAD, [LEFT_NEAR, LEFT_FAR]).read(reply)
    assert reading.intent is Intent.CHOSEN and reading.value == meant, reading.reason
