"""Issue 34, "Why": no way to add words ("pill box", "pills", "spectacles"; "glasses" collides
with "glass"). The home's lexicon file, loaded through bt_raider.files, is read by the check and
by the reader of replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bt_raider
from bt_raider import (
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
)
from bt_raider.perception.lexicon import CategoryLexicon, LexiconError, LexiconFileError
from bt_raider.perception.scene import Scene
from tests.bt_raider.domain.care_home import ACTIONS, Act, CareRobot, Status, lounge, thing, tick

LEXICON = Path(__file__).resolve().parents[3] / "examples" / "care_home" / "lexicon.json"


def table():
    return lounge(
        objects=[
            thing("Glass|1", "Glass", 0.3, 0.3, pickupable=True),
            thing("ReadingGlasses|1", "ReadingGlasses", -0.3, 0.3, pickupable=True),
        ]
    )


@pytest.mark.parametrize(
    "query, meant",
    [
        ("pick up the glasses", "ReadingGlasses|1"),
        ("pick up my spectacles", "ReadingGlasses|1"),
        ("pick up the pill box", "PillOrganiser|1"),
        ("pick up the pills", "PillOrganiser|1"),
        ("PickUp(organiser)", "PillOrganiser|1"),
        ("pick up the glass", "Glass|1"),
    ],
)
def test_the_homes_words_ground_to_its_things(query, meant):
    checker = SymbolicReasoner(lexicon=CategoryLexicon.load(LEXICON))
    verdict = checker.check(Scene(table()), query)
    assert [ids for ids in verdict.grounding.values()] == [[meant]], verdict.explanation


def test_without_them_glasses_were_a_glass():
    """The behaviour the lexicon fixes: "the glasses" read as the plural of "glass"."""
    verdict = bt_raider.check(table(), "pick up the glasses")
    assert list(verdict.grounding.values()) == [["Glass|1"]]


def test_a_word_that_is_no_type_is_never_a_plural(tmp_path):
    path = tmp_path / "words.json"
    path.write_text(json.dumps({"not_types": ["glasses"]}))
    lexicon = CategoryLexicon.load(path)
    assert lexicon.types_for("glasses") == set()
    assert lexicon.types_for("glass")  # still a word for a glass
    verdict = SymbolicReasoner(lexicon=lexicon).check(Scene(table()), "pick up the glasses")
    assert verdict.grounding["the glasses"] != ["Glass|1"]


def test_a_bad_lexicon_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "bad.json").write_text('{"synonyms": {"pills": "PillOrganiser"}, "colours": {}}')
    with pytest.raises(LexiconError, match="unknown section 'colours'"):
        CategoryLexicon.load(tmp_path / "bad.json")
    with pytest.raises(LexiconFileError):
        CategoryLexicon.load(tmp_path / "missing.json")


def test_a_reply_in_the_homes_words_never_names_another_thing():
    """Two glasses, "which glass?", answered "the spectacles": that is the ReadingGlasses in
    the home's words, neither glass: the robot never picks one at a guess."""
    scene = table()
    scene["objects"][4].update(objectId="Glass|2", objectType="Glass")
    robot = CareRobot(scene)
    lexicon = CategoryLexicon.load(LEXICON)
    human = ScriptedHuman(["the spectacles"] * 3)
    node = Act("PickUp", ["glass"], robot)
    guard = RaiderGuard(
        node,
        "pick up the glass",
        SymbolicReasoner(lexicon=lexicon),
        scene=robot.observe,
        recovery=Recovery(
            SymbolicRecoveryPlanner(), robot, human, actions=ACTIONS, lexicon=lexicon
        ),
    )
    assert tick(guard)[-1] is Status.FAILURE
    assert robot.did("PickUp") == [] and node.status is Status.INVALID
    assert human.transcript[0].kind == "ask" and "glass" in human.transcript[0].text.lower()
