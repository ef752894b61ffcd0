"""Real people's words (issue 13): requests without a verb, "me", objects with parts, English."""

from __future__ import annotations

import pytest

from bt_raider.checking.contract import Query
from bt_raider.checking.parse import parse_query
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category
from bt_raider.errors import QueryError
from bt_raider.perception.scene import Scene

from .test_symbolic import hold, near, obj, person, put

APPLE = "Apple|+00.40|+00.96|+01.00"
MUG = "Mug|-01.95|+00.93|+00.25"
SINK = "Sink|-02.05|+00.90|-01.30"
BASIN = "Sink|-02.05|+00.90|-01.30|SinkBasin"


def check(d, text):
    return SymbolicReasoner().check(Scene(d), Query(text))


# --------------------------------------------------------------------------- requests
@pytest.mark.parametrize(
    "text, head",
    [
        ("I need the salt shaker", "salt shaker"),
        ("I need a mug", "mug"),
        ("I'd like the salt shaker, please", "salt shaker"),
        ("I would like a mug", "mug"),
        ("I want the apple", "apple"),
        ("Can I have the apple?", "apple"),
        ("could I get a mug please", "mug"),
        ("May I have the bread?", "bread"),
        ("The salt shaker, please.", "salt shaker"),
        ("get me a mug", "mug"),
        ("Could you fetch me the apple?", "apple"),
    ],
)
def test_a_request_without_a_verb_is_for_the_speaker(text, head):
    parsed = parse_query(text)
    assert parsed.request
    assert parsed.action == "handover"
    assert parsed.args[0].head == head and parsed.args[0].role == "object"
    assert parsed.args[1].text == "me" and parsed.args[1].role == "person"
    picked = parsed.as_pick()
    assert picked.action == "pick" and [a.head for a in picked.args] == [head]


@pytest.mark.parametrize(
    "text, obj_text",
    [
        ("bring me a pillow", "a pillow"),
        ("give me the apple", "the apple"),
        ("pass me the mug", "the mug"),
    ],
)
def test_me_never_stays_in_an_object_phrase(text, obj_text):
    parsed = parse_query(text)
    assert parsed.action == "handover" and not parsed.request
    assert [a.text for a in parsed.args] == [obj_text, "me"]


def test_a_wish_to_act_keeps_its_verb_and_a_non_request_stays_unknown():
    assert parse_query("I need you to open the fridge").action == "open"
    assert parse_query("I want to open the fridge").action == "open"
    with pytest.raises(QueryError, match="unknown action"):
        parse_query("would you mind singing a song")
    with pytest.raises(QueryError, match="unknown action"):
        parse_query("I think so")


def test_a_request_with_nobody_in_the_scene_is_a_pick(small_kitchen_dict):
    v = check(small_kitchen_dict, "I need the apple")
    assert v.action == "pick"
    assert v.grounding == {"the apple": [APPLE]}


def test_a_request_with_a_user_in_the_scene_is_a_handover_to_them(small_kitchen_dict):
    d = near(small_kitchen_dict, "Apple")
    person(d, "Bob", dist=1.5, pid="p_far")
    person(d, "Ana", dist=0.4, pid="p_near")
    d["humans"][0]["user"] = True  # the far one speaks
    v = check(d, "I'd like the apple, please")
    assert v.action == "handover"
    assert v.grounding["me"] == ["p_far"]
    assert v.category is Category.ROBOT_STATE and "holding" in v.explanation
    hold(d, "Apple")
    d["humans"][0]["position"] = dict(d["humans"][1]["position"])
    v = check(d, "I'd like the apple, please")
    assert v.category is Category.NONE and "Bob" in v.explanation


def test_me_is_the_nearest_person_when_nobody_is_marked(small_kitchen_dict):
    d = hold(near(small_kitchen_dict, "Apple"), "Apple")
    person(d, "Bob", dist=1.5, pid="p_far")
    person(d, "Ana", dist=0.4, pid="p_near")
    v = check(d, "bring me the apple")
    assert v.grounding["me"] == ["p_near"]
    assert v.category is Category.NONE and "Ana" in v.explanation


def test_me_with_nobody_in_the_scene_is_not_present_and_says_why(small_kitchen_dict):
    d = hold(small_kitchen_dict, "Apple")
    v = check(d, "bring me the apple")
    assert v.category is Category.NOT_PRESENT
    assert "speaker" in v.explanation and "nobody" in v.explanation.lower()


def test_a_scene_marks_the_user_with_a_boolean(small_kitchen_dict):
    d = person(small_kitchen_dict, "Bob")
    d["humans"][0]["user"] = True
    assert Scene(d).humans[0].is_user
    d["humans"][0]["user"] = "yes"
    with pytest.raises(Exception, match="user"):
        _ = Scene(d).humans[0].is_user


# --------------------------------------------------------------------------- parts
def test_a_part_is_named_and_linked_to_its_whole(small_kitchen):
    basin, sink = small_kitchen.by_id(BASIN), small_kitchen.by_id(SINK)
    assert small_kitchen.whole_of(basin) is sink
    assert small_kitchen.parts_of(sink) == [basin]
    assert small_kitchen.whole_of(sink) is None


def test_what_is_in_the_basin_is_in_the_sink(small_kitchen_dict):
    d = near(put(small_kitchen_dict, "Mug", BASIN), "Sink")
    obj(d, "Mug")["position"] = dict(obj(d, BASIN)["position"])
    v = check(d, "pick the mug in the sink")
    assert v.grounding["the mug in the sink"] == [MUG]
    v = check(d, "take the mug out of the sink")
    assert v.category is not Category.NOT_PRESENT
    assert v.grounding["the mug"] == [MUG]
    assert v.category is Category.NONE, v.explanation


@pytest.mark.parametrize("phrase", ["the basin", "the sink basin"])
def test_the_part_is_found_by_its_own_name(small_kitchen_dict, phrase):
    v = check(small_kitchen_dict, f"pick {phrase}")
    assert v.grounding[phrase] == [BASIN]


def test_placing_in_the_whole_places_in_its_receptacle_part(small_kitchen_dict):
    d = near(hold(small_kitchen_dict, "Mug"), "Sink")
    v = check(d, "put the mug in the sink")
    assert v.grounding["the sink"] == [BASIN]
    assert v.category is Category.NONE, v.explanation


# --------------------------------------------------------------------------- English
def test_a_plural_that_is_absent_agrees_in_number(small_kitchen_dict):
    v = check(small_kitchen_dict, "pick the spoons")
    assert v.category is Category.NOT_PRESENT
    assert v.explanation == "There are no spoons in the scene."
    assert check(small_kitchen_dict, "pick the spoon").explanation == (
        "There is no spoon in the scene."
    )


def test_a_phrasal_verb_takes_its_pronoun_in_the_middle(small_kitchen_dict):
    v = check(small_kitchen_dict, "turn on the light switch")
    assert v.category is Category.WRONG_STATE
    assert "to turn it on would change nothing" in v.explanation


def test_the_trace_agrees_with_the_tool_it_answers(small_kitchen_dict):
    # The Egg rests in the Fridge: the blocking tool lists it, and the answer must say why it
    # does not block opening rather than "nothing blocks".
    v = check(small_kitchen_dict, "open(Fridge)")
    lines = [t["content"] for t in v.trace]
    i = next(
        i for i, line in enumerate(lines) if line.startswith("check_obj_relationship('blocking'")
    )
    assert "Egg" in lines[i]
    answer = next(line for line in lines[i + 1 :] if line.startswith("ok:") or "obstructed" in line)
    assert "Egg" in answer


# --------------------------------------------------------------------------- routes
@pytest.mark.parametrize(
    "text, head",
    [
        ("turn around and walk to the stove on the left", "stove"),
        ("Walk straight ahead to the dresser.", "dresser"),
        (
            "Turn left, walk towards the door, turn left and walk towards the baseball bat",
            "baseball bat",
        ),
        ("Go left and stand in front of the night stand to the right of the bed.", "night stand"),
        ("head for the oven at the right", "oven"),
        ("Turn right and face the counter.", "counter"),
        ("Walk to the left side of the table.", "table"),
        ("Turn to your right and go to the first sink on your left.", "first sink"),
        ("walk to the counter then turn left to the sink", "sink"),
        ("walk to the wall then turn left and walk to the sink in front of you", "sink"),
        ("Walk to the left of the fridge to face the microwave", "microwave"),
        ("move to the counter and walk around it to face the opposite side", "counter"),
        ("walk eight steps, turn left for 5 steps, stop in front of the TV stand", "tv stand"),
        ("please go next to the radio", "radio"),
        ("go to the kitchen, find a glass", "kitchen"),
        ("go to the cup next to the sink", "cup"),
    ],
)
def test_a_route_is_an_approach_to_where_it_ends(text, head):
    parsed = parse_query(text)
    assert parsed.action == "approach"
    assert parsed.args[0].head == head
    assert parsed.args[0].relation in (None, "right of", "next to")


def test_a_route_keeps_the_plain_phrase_of_a_plain_approach():
    assert parse_query("go to the medicine counter").args[0].text == "the medicine counter"
    assert parse_query("approach Adriana").args[0].text == "Adriana"
    with pytest.raises(QueryError):
        parse_query("turn around")  # a route that ends nowhere names no target


def test_a_whole_and_its_part_named_alike_are_one_candidate(small_kitchen_dict):
    # "sink" names both the Sink and its SinkBasin in the lexicon: one thing, not an ambiguity.
    v = check(small_kitchen_dict, "go to the kitchen sink")
    assert v.category is not Category.AMBIGUITY
    assert v.grounding["the kitchen sink"] == [SINK]


@pytest.mark.parametrize(
    "text, obj_head, dest_head",
    [
        ("Put the bottle in the cabinet under the sink.", "bottle", "cabinet"),
        ("Put the watch on the table on top of the credit card.", "watch", "table"),
        ("Put the tomato in the bowl to your right.", "tomato", "bowl"),
        ("put the knife inside", "knife", "it"),
        ("put the apple to the left of the bowl in the fridge", "apple", "fridge"),
    ],
)
def test_place_takes_the_first_destination_and_what_follows_describes_it(text, obj_head, dest_head):
    parsed = parse_query(text)
    assert parsed.action == "place"
    assert [a.head for a in parsed.args] == [obj_head, dest_head]


def test_where_a_thing_is_says_in_or_on_as_its_holder_is(small_kitchen_dict):
    v = check(small_kitchen_dict, "take the mug out of the microwave")
    assert v.category is Category.NOT_PRESENT
    assert v.explanation.endswith("The Mug is on the CounterTop_3.")
