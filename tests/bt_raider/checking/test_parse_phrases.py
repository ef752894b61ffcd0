"""People's phrasings of objects and places (ALFRED's step descriptions are the model):
post-modifiers, distance adjectives, particles, carried objects and routes to a side of a place."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bt_raider.checking.parse import parse_phrase, parse_query


@pytest.mark.parametrize(
    ("text", "head", "relation", "anchor"),
    [
        ("the mug with the pen in it", "mug", None, None),
        ("the mug with the pen in it on the table", "mug", "on top of", "table"),
        ("the spoon with the black handle to the right of the stove", "spoon", "right of", "stove"),
        ("the statue at the back right corner of the table", "statue", None, None),
        ("the bowl and the spoon", "bowl", None, None),
        ("the box containing the remote control", "box", None, None),
        ("the dining table where the apple is", "dining table", None, None),
        (
            "the spoon between the lettuce and the spatula on the table",
            "spoon",
            "on top of",
            "table",
        ),
        # A relation phrase is never cut as a post-modifier.
        ("the apple at the left of the bowl", "apple", "left of", "bowl"),
    ],
)
def test_a_post_modifier_leaves_the_head_and_later_relations(text, head, relation, anchor):
    phrase = parse_phrase(text)
    assert phrase.head == head
    assert phrase.relation == relation
    assert (phrase.anchor.head if phrase.anchor else None) == anchor


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("the closest pink pillow", "pillow"),  # pink: a colour (phrase.colours)
        ("the near pillow", "pillow"),
        ("the nearest knife", "knife"),
    ],
)
def test_a_distance_adjective_names_no_anchor(text, head):
    phrase = parse_phrase(text)
    assert (phrase.head, phrase.relation, phrase.anchor) == (head, None, None)


def test_closest_to_is_still_a_relation():
    phrase = parse_phrase("the mug closest to the sink")
    assert (phrase.head, phrase.relation, phrase.anchor.head) == ("mug", "closest to", "sink")


@pytest.mark.parametrize(
    ("text", "obj", "source"),
    [
        ("Pick the blue towel up from the floor.", "towel", "floor"),
        ("Take the towel down from the towel ring.", "towel", "towel ring"),
        ("Pick the glass bowl up off of the black end table.", "glass bowl", "end table"),
    ],
)
def test_a_particle_before_the_source_is_no_part_of_the_object(text, obj, source):
    parsed = parse_query(text)
    assert parsed.action == "pick"
    assert parsed.arg("object").head == obj
    assert parsed.arg("source").head == source


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("go to the left of the sink", "sink"),
        ("Turn around and go to the left of the sink", "sink"),
        ("move to the desk at the foot of the bed", "desk"),
        ("Turn around and face the sink again", "sink"),
        ("turn right and go to the nightstand ahead", "nightstand"),
        # "white" is a colour, kept apart from the head.
        ("Turn left at the green table and face towards the white stove", "stove"),
    ],
)
def test_routes_end_at_the_place_not_at_its_side_or_a_modifier(text, head):
    parsed = parse_query(text)
    assert parsed.action == "approach"
    assert parsed.args[0].head == head


def test_a_carry_to_a_place_keeps_what_is_carried():
    parsed = parse_query("carry the apple to the microwave")
    assert parsed.action == "approach"
    assert parsed.args[0].head == "microwave"
    assert [a.head for a in parsed.pick_args] == ["apple"]
    assert parsed.as_pick() is parsed  # not a request: no pick form


_WORDS = st.sampled_from(
    "the a mug with pen in it on table and closest near at of left to right bowl where is".split()
)


@given(st.lists(_WORDS, min_size=1, max_size=12))
def test_any_phrase_parses_to_a_head_made_of_its_own_words(words):
    phrase = parse_phrase(" ".join(words))
    assert set(phrase.head.split()) <= set(words)


@pytest.mark.parametrize(
    ("text", "obj", "dest"),
    [
        ("Put the cooled tomato on the front right of the counter.", "cooled tomato", "counter"),
        ("Put the bowl on the front left corner of the TV stand", "bowl", "tv stand"),
        ("put the pot in the cabinet", "pot", "cabinet"),
    ],
)
def test_a_destination_is_the_place_not_its_side_or_corner(text, obj, dest):
    parsed = parse_query(text)
    assert parsed.action == "place"
    assert (parsed.arg("object").head, parsed.arg("destination").head) == (obj, dest)


def test_to_stand_by_a_place_names_the_place():
    parsed = parse_query("Cross the room to stand on the right side of the toilet.")
    assert (parsed.action, parsed.args[0].head) == ("approach", "toilet")


def test_a_with_modifier_is_kept_as_the_phrase_detail():
    phrase = parse_phrase("the table with the lamp on it")
    assert phrase.head == "table"
    assert phrase.detail is not None and phrase.detail.head == "lamp"
    assert parse_phrase("the statue at the back of the table").detail is None


def test_closest_to_you_names_no_anchor():
    phrase = parse_phrase("the bowl closest to you on the table")
    assert (phrase.head, phrase.relation, phrase.anchor.head) == ("bowl", "on top of", "table")


def test_a_route_to_a_corner_where_a_thing_is_ends_at_the_thing():
    parsed = parse_query("Walk to the far corner where the metal shelf is.")
    assert (parsed.action, parsed.args[0].head) == ("approach", "metal shelf")


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("Move to face the right side of the sink.", "sink"),
        ("go to the right hand side of the chair", "chair"),
        ("walk to the end of the counter", "counter"),
    ],
)
def test_an_approach_to_a_side_of_a_place_is_an_approach_to_the_place(text, head):
    parsed = parse_query(text)
    assert (parsed.action, parsed.args[0].head, parsed.args[0].text) == (
        "approach",
        head,
        f"the {head}",
    )


@pytest.mark.parametrize(
    ("text", "dest"),
    [
        ("Put the pot down on the right side of the table.", "table"),
        ("Place the keys on the right hand side of the couch.", "couch"),
    ],
)
def test_on_a_side_of_a_place_is_on_the_place(text, dest):
    parsed = parse_query(text)
    assert (parsed.action, parsed.arg("destination").head) == ("place", dest)


def test_beside_a_thing_is_no_destination_of_its_own():
    parsed = parse_query("put the apple to the left of the bowl on the table")
    assert parsed.arg("destination").head == "table"


def test_a_walk_to_a_side_of_a_place_ends_at_the_place():
    parsed = parse_query("Turn right and walk around the coffee table to the left of the couch.")
    assert (parsed.action, parsed.args[0].head) == ("approach", "couch")


def test_a_pick_drops_a_trailing_adverb():
    parsed = parse_query("take out the sliced egg inside")
    assert (parsed.action, parsed.args[0].head, parsed.args[0].states) == (
        "pick",
        "egg",
        ("sliced",),
    )


@pytest.mark.parametrize(
    "text",
    [
        "place the second credit card inside to the left of the first credit card",
        "Open the cabinet and place the plate inside with the ladle",
    ],
)
def test_inside_followed_by_a_modifier_puts_it_in_what_was_named_before(text):
    parsed = parse_query(text.split(" and ")[-1])
    assert (parsed.action, parsed.arg("destination").head) == ("place", "it")


def test_an_adverb_before_a_relation_is_no_part_of_the_head():
    parsed = parse_query(
        "Put the credit card down on the table, just to the left of the other credit card."
    )
    dest = parsed.arg("destination")
    assert (dest.head, dest.relation, dest.anchor.head) == ("table", "left of", "other credit card")


# --------------------------------------------------------------------------- issue 13, item 4
@pytest.mark.parametrize(
    ("text", "carried", "target"),
    [
        ("take the bowl to the counter to the left of the sink", "bowl", "counter"),
        ("turn back around and carry the CD to the desk next to the bed", "cd", "desk"),
        (
            "Carry the tennis racket over to the dresser so that you face the lamp",
            "tennis racket",
            "dresser",
        ),
        (
            "carry the remote to the floor lamp that is to the left of the red chair",
            "remote",
            "floor lamp",
        ),
    ],
)
def test_a_carry_goes_to_the_first_to_that_starts_no_relation(text, carried, target):
    parsed = parse_query(text)
    assert (parsed.action, parsed.args[0].head) == ("approach", target)
    assert [a.head for a in parsed.pick_args] == [carried]


def test_a_handover_to_a_person_beside_a_thing_keeps_the_object_whole():
    parsed = parse_query("give the cup to the left of the plate to Adriana")
    assert parsed.action == "handover"
    obj, person = parsed.args
    assert (obj.head, obj.relation, obj.anchor.head) == ("cup", "left of", "plate")
    assert person.text == "Adriana"


@pytest.mark.parametrize(
    ("text", "head", "detail"),
    [
        ("the counter the apple is sitting on", "counter", "apple"),
        ("the cabinet the microwave is on", "cabinet", "microwave"),
        ("the table that the tv is on", "table", "tv"),
        ("the shelf the vase was on", "shelf", "vase"),
    ],
)
def test_a_relative_clause_without_a_pronoun_leaves_the_head(text, head, detail):
    phrase = parse_phrase(text)
    assert (phrase.head, phrase.relation) == (head, None)
    assert phrase.detail is not None and phrase.detail.head == detail


@pytest.mark.parametrize(
    ("text", "head", "relation", "anchor"),
    [
        ("the apple that is on the table", "apple", "on top of", "table"),
        ("the mug on the table the lamp is on", "mug", "on top of", "table"),
    ],
)
def test_a_relation_is_no_relative_clause(text, head, relation, anchor):
    phrase = parse_phrase(text)
    assert (phrase.head, phrase.relation, phrase.anchor.head) == (head, relation, anchor)


@pytest.mark.parametrize(
    ("text", "relation", "anchor"),
    [
        ("the credit card to the right side of the desk", "right of", "desk"),
        ("the pen to the left hand side of the laptop", "left of", "laptop"),
    ],
)
def test_to_a_side_of_a_thing_is_a_relation(text, relation, anchor):
    phrase = parse_phrase(text)
    assert (phrase.relation, phrase.anchor.head) == (relation, anchor)
    assert phrase.head in ("credit card", "pen")


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("Step back up to the counter the apple is sitting on.", "counter"),
        ("turn right, turn left, walk to the corner with a trash bin", "trash bin"),
        ("Turn left and to the microwave.", "microwave"),
        ("Turn left and then left again to stand in front of the tub.", "tub"),
        ("Holding the credit card, turn around, then walk to the lamp in the corner.", "lamp"),
        ("With the wash rag in hand turn and go to the sink.", "sink"),
        (
            "With the spatula in your hand turn to your left and move in front of the stove.",
            "stove",
        ),
        ("Hold the egg and turn to the left and face the microwave on the left.", "microwave"),
        (
            "Turn right and begin walking across the room, then hang a left and walk over to the "
            "small bin below the mirror",
            "small bin",
        ),
        ("turnaround and head towards the microwave oven", "microwave oven"),
    ],
)
def test_routes_people_write_end_at_their_place(text, head):
    parsed = parse_query(text)
    assert (parsed.action, parsed.args[0].head) == ("approach", head)


@pytest.mark.parametrize("text", ["to the left", "Hold the egg", "with the knife in hand"])
def test_a_route_with_no_place_is_still_no_action(text):
    from bt_raider.errors import QueryError

    with pytest.raises(QueryError):
        parse_query(text)


def test_a_carry_then_a_route_ends_where_the_route_does():
    parsed = parse_query(
        "Carry the bread and turn to the right then the right again to find the stove"
    )
    assert (parsed.action, parsed.args[0].head) == ("approach", "stove")
    assert [a.head for a in parsed.pick_args] == ["bread"]


def test_a_carry_to_a_side_of_a_thing_still_has_a_recipient():
    parsed = parse_query("bring the remote controller to the left of the television")
    assert parsed.arg("object").head == "remote controller"


@pytest.mark.parametrize(
    ("text", "head", "detail"),
    [
        ("the dining table where the apple is", "dining table", "apple"),
        (
            "the other end of the table where there is a yellow apple",
            "other end of table",
            "apple",
        ),
        ("the wood desk where the desk lamp is sitting", "wood desk", "desk lamp"),
    ],
)
def test_a_where_clause_says_what_is_at_the_place(text, head, detail):
    phrase = parse_phrase(text)
    assert phrase.head == head
    assert phrase.detail is not None and phrase.detail.head == detail


def test_adjacent_to_is_next_to():
    phrase = parse_phrase("the counter adjacent to the fridge")
    assert (phrase.head, phrase.relation, phrase.anchor.head) == ("counter", "next to", "fridge")


@pytest.mark.parametrize(
    "text",
    [
        "place the CD in the front left corner",
        "place the other credit card inside before closing it again",
        "put the bottle of lotion inside all the way to the right",
        "put the mug in the back corner",
    ],
)
def test_a_destination_that_is_only_a_side_or_corner_is_in_what_was_named_before(text):
    parsed = parse_query(text)
    assert (parsed.action, parsed.arg("destination").head) == ("place", "it")


_CLAUSE_WORDS = st.sampled_from(
    "the a counter apple is was sitting on in where there that table lamp with to left of".split()
)


@given(st.lists(_CLAUSE_WORDS, min_size=1, max_size=12))
def test_relative_and_where_clauses_keep_heads_and_details_to_the_phrases_words(words):
    phrase = parse_phrase(" ".join(words))
    assert set(phrase.head.split()) <= set(words)
    if phrase.detail is not None:
        assert set(phrase.detail.head.split()) <= set(words)


_ROUTE_WORDS = st.sampled_from(
    "turn left right and to the sink with mug in hand holding walk go begin walking where is "
    "corner table carry take counter of then so".split()
)


@given(st.lists(_ROUTE_WORDS, min_size=1, max_size=14))
def test_any_route_like_text_parses_or_is_refused_with_a_query_error(words):
    from bt_raider.errors import QueryError

    try:
        parsed = parse_query(" ".join(words))
    except QueryError:
        return
    for arg in parsed.args:
        assert set(arg.head.split()) <= set(words) | {"it", "me"}


# --------------------------------------------------------------------------- colours, sides
@pytest.mark.parametrize(
    ("text", "head", "colours", "side"),
    [
        ("the red box", "box", ("red",), None),
        ("the box that is Gray", "box", ("grey",), None),
        ("the red one", "", ("red",), None),
        ("the orange", "orange", (), None),  # the colour is the noun
        ("the orange one", "orange", (), None),
        ("the drawer of the black cabinet", "drawer of black cabinet", (), None),
        ("the box on the left", "box", (), "left"),
        ("the box to your right", "box", (), "right"),
        ("the left box", "box", (), "left"),
        ("the leftmost box", "box", (), "left"),
        ("the box on the left hand side", "box", (), "left"),
        ("the cup in front of you", "cup", (), "front"),
        ("the cup in front of the robot", "cup", (), "front"),
        ("the cup ahead", "cup", (), "front"),
        ("the mug behind you", "mug", (), "behind"),
        ("the clean red mug on the right", "mug", ("red",), "right"),
    ],
)
def test_colours_and_sides_from_the_robot_are_read_apart_from_the_head(text, head, colours, side):
    phrase = parse_phrase(text)
    assert (phrase.head, phrase.colours, phrase.side) == (head, colours, side)
    assert phrase.relation is None


@pytest.mark.parametrize(
    ("text", "relation", "anchor_side"),
    [
        ("the bowl to the left of the tomato", "left of", None),  # another object's left
        ("the box on the left of the sink", "left of", None),
        ("the pot on the right burner", "on top of", "right"),  # the burner's side
        ("the cup on the box on the left", "on top of", "left"),  # the nearest noun's
        ("the mug behind the bowl", None, None),  # behind another object: not the robot's
    ],
)
def test_a_side_of_another_object_or_of_an_anchor_is_not_the_heads(text, relation, anchor_side):
    phrase = parse_phrase(text)
    assert phrase.side is None
    assert phrase.relation == relation
    if anchor_side is not None:
        assert phrase.anchor is not None and phrase.anchor.side == anchor_side


def test_a_side_before_a_relation_is_the_heads():
    phrase = parse_phrase("the box on the left next to the sink")
    assert (phrase.head, phrase.side, phrase.relation) == ("box", "left", "next to")
    assert phrase.describe() == "box [next to: sink] [robot's left]"


def test_right_as_an_adverb_and_pddl_names_are_no_sides():
    assert parse_phrase("the cup right next to the plate").side is None
    assert parse_phrase("left_cabinet", pddl=True).side is None
    assert parse_phrase("red_box", pddl=True).colours == ()


def test_a_participle_makes_on_a_state():
    phrase = parse_phrase("the switched on lamp")
    assert (phrase.head, phrase.states, phrase.relation) == ("lamp", ("switched on",), None)
