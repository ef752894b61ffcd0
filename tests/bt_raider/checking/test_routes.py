"""Routes: where a walk people describe ends (bt_raider.checking.routes)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bt_raider.checking.parse import parse_query
from bt_raider.checking.routes import clause_breaks, direction_tail, is_route, relation_spans


def target(text: str) -> str:
    parsed = parse_query(text)
    assert parsed.action == "approach", (text, parsed)
    return parsed.args[0].head


def test_clause_breaks_mark_the_words_after_a_comma_or_full_stop():
    words = "walk to the table turn right".split()
    assert clause_breaks("Walk to the table, turn right.", words) == {4}
    assert clause_breaks("walk to the table turn right", words) == set()


def test_clause_breaks_align_with_the_tail_of_the_text():
    # The normalised words may have lost a polite prefix: the breaks still line up.
    assert clause_breaks(
        "Please, walk to the sink, then stop", "walk to the sink then stop".split()
    ) == {4}


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("Walk to the table, turn right", "table"),
        ("Turn around and walk forward to a green bin. Turn right to face it.", "bin"),
        ("Turn left and face the white, round table", "round table"),
        ("Move across the room to the long, short brown table.", "long short table"),
        (
            "Turn right, go towards the couch, turn right, walk in front of the black desk.",
            "desk",
        ),
    ],
)
def test_a_comma_before_a_verb_ends_the_destination_a_comma_between_adjectives_does_not(text, head):
    # Colour words ("green bin") are kept apart from the head: see the test below.
    assert target(text) == head


def test_a_colour_of_the_destination_is_kept_apart_from_its_head():
    parsed = parse_query("Turn left and face the white, round table")
    assert (parsed.args[0].head, parsed.args[0].colours) == ("round table", ("white",))


def test_approach_inside_a_route_names_the_destination():
    text = (
        "Turn to your left and when you reach the wall, turn to your right and approach the counter"
    )
    assert target(text) == "counter"


def test_direction_tail_and_relation_spans():
    assert direction_tail("the sink on your left".split()) == 2
    assert direction_tail("the sink".split()) == 2
    assert relation_spans("the cup to the left of the bowl".split()) == [(2, 4, "left of")]


def test_is_route_needs_a_walking_verb():
    assert is_route("turn left and go to the sink".split(), None, [])
    assert not is_route("open the fridge".split(), "open", ["the", "fridge"])


@given(
    st.lists(st.sampled_from(["to", "the", "sink", ",", "turn", "left", "walk", "."]), max_size=12)
)
def test_clause_breaks_are_indices_of_the_words(tokens):
    text = " ".join(tokens)
    words = [t for t in tokens if t not in (",", ".")]
    assert clause_breaks(text, words) <= set(range(1, len(words)))


@pytest.mark.parametrize(
    ("text", "head", "detail"),
    [
        ("Go to the right side of the dining table where the apple is.", "dining table", "apple"),
        (
            "Walk to the other end of the table where there is a yellow apple.",
            "table",
            "apple",
        ),
    ],
)
def test_a_where_clause_after_a_place_says_what_is_there(text, head, detail):
    parsed = parse_query(text)
    assert (parsed.action, parsed.args[0].head) == ("approach", head)
    assert parsed.args[0].detail is not None and parsed.args[0].detail.head == detail
