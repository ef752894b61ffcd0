"""The symbolic CDR extractor: (operation, object) tuples and their slots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bt_raider.errors import MemoryStoreError
from bt_raider.memory.extract import Action, Lexicon, SymbolicExtractor, singular, tokenize

HURIC = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "huric"
    / "huric_en_commands.jsonl"
)


@pytest.fixture(scope="module")
def ex():
    return SymbolicExtractor()


def keys(ex, text):
    return [a.key for a in ex.extract(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Can you turn on the hall light?", [("turn_on", "lamp")]),
        ("Can you turn off the hall light?", [("turn_off", "lamp")]),
        ("switch the tv off please", [("turn_off", "television")]),
        (
            "could you please move towards the washing machine and turn it on",
            [("go", "washer"), ("turn_on", "washer")],
        ),
        ("open the fridge", [("open", "fridge")]),
        ("close the refrigerator", [("close", "fridge")]),
        ("pick up the apple", [("take", "apple")]),
        ("pick the apple up from the table", [("take", "apple")]),
        ("put down the apple", [("put", "apple")]),
        ("put the mug in the sink", [("put", "mug")]),
        ("take the book to the kitchen", [("bring", "book")]),
        ("get me the keys", [("bring", "key")]),
        ("grab the alarm clock", [("take", "clock")]),
        ("Put the apple slice in the fridge", [("put", "apple")]),
        (
            "go to the dinner table take the plates and bring them to the side table",
            [("go", "table"), ("take", "plate"), ("bring", "plate")],
        ),
        ("turn left and walk to the counter", [("go", "counter")]),
    ],
)
def test_actions(ex, text, expected):
    assert keys(ex, text) == expected


def test_slots_location_source_and_lexical_unit(ex):
    (a,) = ex.extract("take the box from the table to the kitchen please")
    assert (a.operation, a.object, a.location, a.source, a.lu) == (
        "bring",
        "box",
        "kitchen",
        "table",
        "take",
    )
    (b,) = ex.extract("put the cup on the table")
    assert b.location == "table" and b.lu == "put"
    (c,) = ex.extract("pick up the remote controller")
    assert c.lu == "pick up" and c.head == "controller" and c.object == "remote"


def test_negation(ex):
    (a,) = ex.extract("don't open the door")
    assert a.negated and a.key == ("open", "door")
    (b,) = ex.extract("open the door")
    assert not b.negated
    # Negation does not leak across clauses.
    first, second = ex.extract("do not close the door, and open the window")
    assert first.negated and not second.negated


def test_pronouns_resolve_to_what_they_stand_for(ex):
    assert keys(ex, "pick up the apple from the table and put it in the fridge") == [
        ("take", "apple"),
        ("put", "apple"),
    ]
    # What was put in is closed: the fridge, not the apple.
    assert keys(ex, "put the apple in the fridge and close it")[-1] == ("close", "fridge")
    assert keys(ex, "put the apple in the fridge and close the door")[-1] == ("close", "fridge")
    # Nothing to stand for: the object is unknown, not a thing called "it".
    assert keys(ex, "pick it up") == [("take", None)]


def test_directions_and_adjectives_are_not_actions(ex):
    assert keys(ex, "turn left") == []
    assert keys(ex, "the open drawer is near the sink") == []
    assert keys(ex, "Pick up the green wash rag") == [("take", "cloth")]


def test_huric_sentences_match_their_frame_annotations(ex):
    rows = {
        json.loads(line)["sentence"]: json.loads(line) for line in HURIC.read_text().splitlines()
    }
    cases = {
        "bring the book on the table in the kitchen": ("bring", "book"),
        "shut off the boiler": ("turn_off", "boiler"),
        "robot can you open the cabinet": ("open", "cabinet"),
        "drop the vase": ("put", "vase"),
        "could you close the shutters please": ("close", "shutter"),
    }
    for sentence, (op, head) in cases.items():
        assert sentence in rows  # real HuRIC commands
        frame = rows[sentence]["frames"][0]
        (a,) = ex.extract(sentence)
        assert a.operation == op and a.head == head
        assert a.lu.split()[0] == frame["lu"].split()[0]


def test_helpers():
    assert tokenize("Don't turn it off!") == ["do", "not", "turn", "it", "off", "!"]
    assert [singular(w) for w in ("boxes", "knives", "batteries", "glass", "cups")] == [
        "box",
        "knife",
        "battery",
        "glass",
        "cup",
    ]


def test_action_json_round_trip_and_bad_records():
    a = Action("put", "cup", location="table", negated=True, lu="put", head="cup")
    assert Action.from_json(a.to_json()) == a
    with pytest.raises(MemoryStoreError, match="unknown|expected 'operation'"):
        Action.from_json({"operation": "put", "colour": "red"})


def test_custom_lexicon_and_malformed_lexicon(tmp_path):
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "memory" / "data" / "lexicon.json").read_text()
    )
    data["verbs"]["yeet"] = {"op": "put", "transitive": True}
    path = tmp_path / "lex.json"
    path.write_text(json.dumps(data))
    assert keys(SymbolicExtractor(path), "yeet the ball") == [("put", "ball")]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"verbs": {}}))
    with pytest.raises(MemoryStoreError, match="malformed lexicon"):
        Lexicon.load(bad)
