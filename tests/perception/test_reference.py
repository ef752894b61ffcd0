"""The one reader: its program for a phrase, and properties of what it designates.

Properties are checked against scenes Hypothesis generates, through
:func:`bt_raider.checking.designation.designate` (the reader with the check's grounder) and
:func:`bt_raider.check`; the expected sets are computed here from the generated data.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import bt_raider
from bt_raider.checking.designation import designate
from bt_raider.perception.attributes import Viewer
from bt_raider.perception.reference import Core, Designation, read
from bt_raider.perception.reference import designate as run
from bt_raider.perception.reference_words import (
    ANY_PHRASES,
    EXCLUDERS,
    LEAD_INS,
    SAYING,
    at,
    by_head,
    first_at,
)
from bt_raider.perception.scene import Scene

COLOURS = ("red", "blue", "green", "gold")


# --------------------------------------------------------------------------- programs
def test_a_phrase_becomes_a_program() -> None:
    ref = read("any box except the red one")
    (part,) = ref.parts
    assert ref.quantifier == "any" and part.core == "box"
    assert [e.core for e in part.excluded] == ["red one"]
    ref = read("the glass on my right")
    (sel,) = ref.parts[0].selects
    assert (sel.kind, sel.value, sel.frame) == ("side", "right", "speaker")
    ref = read("the second drawer from the left")
    (sel,) = ref.parts[0].selects
    assert (sel.kind, sel.value, sel.frame) == ("ordinal", 2, "left:robot")
    assert len(read("the red box or the blue box").parts) == 2
    assert read("the cup unless it is cold").unread == ("unless it is cold",)
    assert read("the other one").other
    assert read("it does not matter").quantifier == "any"  # its "not" excludes nothing
    assert read("Could you please pick up the drawer under the sink now").unread == ()


def test_the_evaluator_works_on_any_core_grounder() -> None:
    class Thing:
        def __init__(self, oid: str, x: float) -> None:
            self.id, self.xyz, self.raw = oid, (x, 0.0, 1.0), {}

    things = [Thing("ann", -1.0), Thing("bob", 0.0), Thing("cal", 1.0)]

    def core(text: str) -> Core:
        return Core([t for t in things if t.id in text.split()])

    assert run("not ann", things, core).ids == ("bob", "cal")
    assert run("the first one", things, core, order=["cal", "bob", "ann"]).ids == ("cal",)
    assert run("the first one", things, core).unclear  # no list to count in
    me = Viewer(0.0, 2.0, 180.0, "Ada")  # facing -z: her left is +x
    assert run("the one on my left", things, core, speaker=me).ids == ("cal",)
    assert "who is speaking" in run("the one on my left", things, core).unclear


# --------------------------------------------------------------------------- properties
@st.composite
def boxes(draw: Any) -> tuple[dict[str, Any], list[str | None]]:
    n = draw(st.integers(2, 4))
    colours = [draw(st.sampled_from((*COLOURS, None))) for _ in range(n)]
    xs = draw(st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n, unique=True))
    objects = []
    for i, (colour, x) in enumerate(zip(colours, xs, strict=True)):
        o: dict[str, Any] = {
            "objectId": f"Box|{i}",
            "objectType": "Box",
            "position": {"x": x, "y": 0.9, "z": 0.8},
            "pickupable": True,
        }
        if colour is not None:
            o["color"] = colour
        objects.append(o)
    scene = {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": objects,
    }
    return scene, colours


PHRASES = ("the box", "the red box", "any box", "the box on the left", "the blue one")


#: The phrase lists the reader looks for at each word (lead-ins as word lists).
LISTS = (SAYING, EXCLUDERS, ANY_PHRASES, tuple(tuple(lead.split()) for lead in LEAD_INS))
LIST_WORDS = sorted({w for phrases in LISTS for p in phrases for w in p} | {"cup", ","})


@given(words=st.lists(st.sampled_from(LIST_WORDS), max_size=7), k=st.integers(0, 8))
def test_a_phrase_looked_up_by_its_first_word_is_the_first_that_stands_there(words, k) -> None:
    for phrases in LISTS:
        scanned = next((tuple(p) for p in phrases if at(words, k, p)), None)
        assert first_at(words, k, by_head(phrases)) == scanned


@settings(max_examples=60, deadline=None)
@given(world=boxes(), phrase=st.sampled_from(PHRASES), colour=st.sampled_from(COLOURS))
def test_adding_an_exclusion_never_adds_objects(world, phrase, colour) -> None:
    data, colours = world
    scene = Scene(data)
    before = designate(scene, phrase)
    after = designate(scene, f"{phrase} that is not {colour}")
    assert set(after.ids) <= set(before.ids)
    # What is certainly that colour is gone.
    certainly = {f"Box|{i}" for i, c in enumerate(colours) if c == colour}
    assert not certainly & set(after.ids)


UNKNOWN = ("unless it is cold", "if you like", "my", "Bob's", "wobbly", "the same")


@settings(max_examples=60, deadline=None)
@given(world=boxes(), words=st.sampled_from(UNKNOWN), at=st.booleans())
def test_a_word_left_over_never_yields_none(world, words, at) -> None:
    data, _colours = world
    data["objects"] = data["objects"][:1]  # one box: the words alone could change the referent
    query = f"pick {words} box" if at else f"pick the box {words}"
    verdict = bt_raider.check(data, query)
    assert verdict.category.value != "none", (query, verdict.explanation)


@settings(max_examples=40, deadline=None)
@given(world=boxes(), a=st.sampled_from(COLOURS), b=st.sampled_from(COLOURS))
def test_a_coordination_is_never_one_object(world, a, b) -> None:
    data, _colours = world
    verdict = bt_raider.check(data, f"pick the {a} box or the {b} box")
    assert verdict.category.value != "none"


def test_a_designation_is_one_only_when_clear() -> None:
    assert Designation(("a",)).single == "a"
    assert Designation(("a",), unclear="I did not understand 'x'").single is None
    assert Designation(("a",), mode="several").single is None
    assert Designation(("a", "b")).single is None


def test_pointing_words_never_select_by_height() -> None:
    # Found by the explorer (P12, seed 102): "that one over there", of three cups one of which
    # has a bounding box, read "over" as "above" and chose that cup; the robot cannot see
    # where a person points, so the reply fits all three (and the question is asked again).
    objs: list[dict[str, Any]] = []
    for i, (x, size) in enumerate([(0.0, 0.0), (0.3, 0.08), (0.6, 0.0)]):
        o: dict[str, Any] = {
            "objectId": f"Cup|{i}",
            "objectType": "Cup",
            "position": {"x": x, "y": 0.9, "z": 1.0},
            "pickupable": True,
        }
        if size:
            edge = {"x": size, "y": size, "z": size}
            o["axisAlignedBoundingBox"] = {"center": o["position"], "size": edge}
        objs.append(o)
    scene = Scene({"agent": {"position": {"x": 0, "y": 0.9, "z": 0}}, "objects": objs})
    ids = [o["objectId"] for o in objs]
    for words in ("that one over there", "the one up there", "that one right there"):
        assert designate(scene, words, among=ids, order=ids).ids == tuple(ids), words
    # "over" before an object is still a relation.
    assert designate(scene, "the cup over the table", among=ids).ids == ()
