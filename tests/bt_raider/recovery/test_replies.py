"""Every reply of the reply grammar is read as what it designates, or asked again (never another).

The candidates are generated (type, colour, states, positions, the robot's heading); the replies
come from :func:`bt_raider.recovery.reply_forms.reply_forms`, whose oracle reads the scene's data,
not the reader. Also the text-level helpers of :mod:`bt_raider.recovery.replies`.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bt_raider.perception.reference import read
from bt_raider.perception.scene import Scene
from bt_raider.recovery import replies
from bt_raider.recovery.answers import AnswerSpace, Intent
from bt_raider.recovery.reply_forms import KINDS, ReplyForm, reply_forms
from tests.bt_raider.recovery.strategies import candidate_scenes


def _check(space: AnswerSpace, form: ReplyForm) -> None:
    reading = space.read(form.text)
    values = {c.value for c in space.candidates}
    if reading.usable:
        assert reading.value in values
        # The one property: a usable reading is exactly what the reply designates.
        assert reading.value == form.designates, (form, reading)
    else:
        assert reading.value is None
        assert reading.intent is not Intent.PASSED


@settings(max_examples=400, deadline=None)
@given(world=candidate_scenes(), data=st.data())
def test_a_reply_picks_what_it_designates_or_nothing(world: Any, data: Any) -> None:
    scene, ids, chosen = world
    space = AnswerSpace.objects(scene, ids)
    forms = reply_forms(scene, ids, chosen)
    form = data.draw(st.sampled_from(forms))
    lead = data.draw(st.sampled_from(["", "Hmm, ", "Well ", "OK so ", "Yes, "]))
    _check(space, ReplyForm(form.kind, lead + form.text, form.designates))


@settings(max_examples=150, deadline=None)
@given(world=candidate_scenes(), data=st.data())
def test_two_replies_glued_by_a_correction_take_the_correction(world: Any, data: Any) -> None:
    scene, ids, chosen = world
    space = AnswerSpace.objects(scene, ids)
    forms = [f for f in reply_forms(scene, ids, chosen) if f.kind not in ("silent", "hostile")]
    first = data.draw(st.sampled_from(forms))
    second = data.draw(st.sampled_from([f for f in forms if f.kind != "other_alone"]))
    marker = data.draw(st.sampled_from([", sorry, I meant ", ". No, ", " - actually "]))
    designates = second.designates
    if second.kind in ("refusing", "dont_know", "why"):
        designates = None
    _check(space, ReplyForm("glued", first.text + marker + second.text, designates))


def test_every_kind_of_reply_is_written() -> None:
    data = {
        "agent": {"position": {"x": 0, "y": 0.9, "z": 0}, "rotation": {"y": 0}},
        "objects": [
            {"objectId": "Cup|a", "objectType": "Cup", "position": {"x": 0.4, "y": 0.9, "z": 0.6},
             "color": "blue", "isDirty": False},
            {"objectId": "Mug|b", "objectType": "Mug", "position": {"x": -0.4, "y": 0.9, "z": 0.6},
             "color": "red", "isDirty": True},
        ],
    }  # fmt: skip
    scene = Scene(data)
    forms = reply_forms(scene, ["Cup|a", "Mug|b"], "Cup|a")
    written = {f.kind for f in forms}
    assert written == set(KINDS)
    space = AnswerSpace.objects(scene, ["Cup|a", "Mug|b"])
    for form in forms:
        _check(space, form)


# ----------------------------------------------------------------------- text helpers


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("the red one, no, the blue one", ("the red one, ", "the blue one")),
        (
            "The blue one, sorry, I meant the other one.",
            ("The blue one, sorry, ", "the other one."),
        ),
        ("Sorry, I mean the one next to the plant.", ("Sorry, ", "the one next to the plant.")),
        ("the one next to the plant, sorry", None),
        ("option no 2", None),
        ("I'd rather than the red", None),
    ],
)
def test_a_correction_is_what_follows_the_last_marker(text, split) -> None:
    assert replies.split_correction(text) == split


@pytest.mark.parametrize(
    ("text", "asked", "excluded"),
    [
        ("not the clean one", "", ["clean one"]),
        ("the cup, not the clean one", "cup", ["clean one"]),
        ("not the red one, the blue one", "blue one", ["red one"]),
        ("I don't want the red one", "", ["red one"]),
        ("the blue one", "blue one", []),
    ],
)
def test_a_negation_is_set_apart_to_its_clause_end(text, asked, excluded) -> None:
    # The one reader sets it apart (bt_raider.perception.reference), for replies and instructions.
    (part,) = read(text).parts
    assert part.core == asked and [e.core for e in part.excluded] == excluded


@pytest.mark.parametrize(
    ("text", "several"), [("both", True), ("either one", True), ("the blue one", False),
                          ("neither", False), ("it does not matter", True)],
)  # fmt: skip
def test_a_reply_that_leaves_the_choice_open_names_several(text, several) -> None:
    assert replies.names_several(text) is several


def test_ordinals_from_an_end_are_not_counted() -> None:
    assert replies.uncountable_ordinal("the second to last")
    assert replies.uncountable_ordinal("the third from the left")
    assert not replies.uncountable_ordinal("the third one")
    assert replies.is_other("the other one") == "one"
    assert replies.is_other("other cup") == "cup"
    assert replies.is_other("the other blue one") is None
