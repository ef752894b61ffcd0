"""Queries that name an object by colour or by its side from the robot ground in ``check``.

Worlds are generated: two or three objects of one type around the robot, each with a colour or
none, placed by a bearing and a distance in the robot's own frame. The person designates one of
them; the generator knows which, so the oracle does not ask the code under test. The property:
the check grounds the designated object, or says ``ambiguity`` / ``not_present``, never
another object.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import bt_raider
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.perception.attributes import ANGLE_MARGIN, FRONT_CONE, SIDE_ANGLE, STRAIGHT_AHEAD

CHECKER = SymbolicReasoner()
PALETTE = ("red", "green", "blue", "yellow", "white")
TYPES = {"Box": "box", "Cup": "cup", "Apple": "apple"}


def thing(i: int, object_type: str, x: float, z: float, colour: str | None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "objectId": f"{object_type}|{i}",
        "objectType": object_type,
        "position": {"x": x, "y": 0.9, "z": z},
        "pickupable": True,
    }
    if colour is not None:
        d["color"] = colour
    return d


def around(robot: tuple[float, float, float], bearing: float, dist: float) -> tuple[float, float]:
    """The (x, z) at ``bearing`` degrees from the robot's heading (negative: left)."""
    x, z, yaw = robot
    y = math.radians(yaw)
    ahead, aside = math.cos(math.radians(bearing)) * dist, math.sin(math.radians(bearing)) * dist
    return x + ahead * math.sin(y) + aside * math.cos(y), z + ahead * math.cos(
        y
    ) - aside * math.sin(y)


def world(robot, object_type, colours, bearings, dists) -> dict[str, Any]:
    return {
        "agent": {
            "position": {"x": robot[0], "y": 0.9, "z": robot[1]},
            "rotation": {"y": robot[2]},
        },
        "objects": [
            thing(i, object_type, *around(robot, b, d), c)
            for i, (c, b, d) in enumerate(zip(colours, bearings, dists, strict=True))
        ],
    }


ROBOTS = st.tuples(st.floats(-3, 3), st.floats(-3, 3), st.floats(0, 359.9)).map(
    lambda t: (round(t[0], 2), round(t[1], 2), round(t[2], 1))
)


@st.composite
def worlds(draw: Any) -> tuple[dict[str, Any], str, list[Any], list[float], int]:
    """A world of 2 or 3 same-type objects within reach, and which one the person means."""
    n = draw(st.integers(2, 3))
    object_type = draw(st.sampled_from(sorted(TYPES)))
    colours = draw(st.lists(st.sampled_from((*PALETTE, None)), min_size=n, max_size=n))
    bearings = draw(st.lists(st.floats(-179, 180), min_size=n, max_size=n))
    dists = draw(st.lists(st.floats(0.3, 1.0), min_size=n, max_size=n))
    robot = draw(ROBOTS)
    meant = draw(st.integers(0, n - 1))
    return (
        world(robot, object_type, colours, bearings, dists),
        object_type,
        colours,
        bearings,
        meant,
    )


def lateral(bearing: float) -> float:
    return bearing if abs(bearing) <= 90 else math.copysign(180 - abs(bearing), bearing)


# --------------------------------------------------------------------------- colour
@settings(max_examples=150, deadline=None)
@given(case=worlds(), spare=st.sampled_from(PALETTE))
def test_a_colour_grounds_the_designated_object_or_leaves_the_choice_open(case, spare):
    scene, object_type, colours, _bearings, meant = case
    # The person names the meant object's colour (one the scene does not know is `spare`).
    colour = colours[meant] or spare
    query = f"pick the {colour} {TYPES[object_type]}"
    verdict = bt_raider.check(scene, query, backend=CHECKER)
    ids = [o["objectId"] for o in scene["objects"]]
    may_be = [ids[i] for i, c in enumerate(colours) if c in (colour, None)]
    grounded = verdict.grounding[f"the {colour} {TYPES[object_type]}"]
    if verdict.category.value == "none":
        assert grounded == [ids[meant]]  # never another object
    else:
        assert verdict.category.value == "ambiguity", verdict.explanation
        assert sorted(grounded) == sorted(may_be)
    # Decided by the generator: one object can be that colour -> it; several -> ambiguity.
    assert (verdict.category.value == "none") == (may_be == [ids[meant]])


@settings(max_examples=60, deadline=None)
@given(case=worlds())
def test_a_colour_nobody_has_is_not_present_and_named(case):
    scene, object_type, colours, _bearings, _meant = case
    missing = next(c for c in PALETTE if c not in colours)
    verdict = bt_raider.check(scene, f"pick the {missing} {TYPES[object_type]}", backend=CHECKER)
    if None in colours:
        # An object of unknown colour may be that colour: never a refusal, never a guess.
        assert verdict.category.value in ("none", "ambiguity")
        unknown = [
            o["objectId"] for o, c in zip(scene["objects"], colours, strict=True) if c is None
        ]
        assert sorted(next(iter(verdict.grounding.values()))) == sorted(unknown)
    else:
        assert verdict.category.value == "not_present"
        assert f"no {missing} {TYPES[object_type]}" in verdict.explanation


def test_the_red_box_among_red_and_blue_boxes():
    scene = world((0.0, 0.0, 0.0), "Box", ["red", "blue"], [-30.0, 30.0], [0.6, 0.6])
    verdict = bt_raider.check(scene, "pick the red box")
    assert verdict.ok and verdict.grounding == {"the red box": ["Box|0"]}
    assert bt_raider.check(scene, "pick(red box)").grounding == {"red box": ["Box|0"]}
    assert bt_raider.check(scene, "pick the box that is blue").grounding == {
        "the box that is blue": ["Box|1"]
    }
    two_red = world((0.0, 0.0, 0.0), "Box", ["red", "red", "blue"], [-30, 0, 30], [0.6] * 3)
    verdict = bt_raider.check(two_red, "pick the red box")
    assert verdict.category.value == "ambiguity"
    assert verdict.grounding == {"the red box": ["Box|0", "Box|1"]}
    verdict = bt_raider.check(scene, "pick the green box")
    assert verdict.category.value == "not_present"
    assert verdict.explanation == (
        "There is no green box in the scene: the Box_1 is red and the Box_2 is blue."
    )


def test_a_colour_word_that_is_the_noun_names_the_type():
    scene = world((0.0, 0.0, 0.0), "Orange", [None], [0.0], [0.5])
    verdict = bt_raider.check(scene, "pick the orange")
    assert verdict.ok and verdict.grounding == {"the orange": ["Orange|0"]}


def test_states_ground_as_replies_do():
    scene = world((0.0, 0.0, 0.0), "Mug", [None, None], [-30, 30], [0.6, 0.6])
    a, b = scene["objects"]
    a.update(dirtyable=True, isDirty=True, canFillWithLiquid=True, isFilledWithLiquid=True)
    b.update(dirtyable=True, isDirty=False, canFillWithLiquid=True, isFilledWithLiquid=False)
    for query, meant in [
        ("pick the clean mug", "Mug|1"),
        ("pick the dirty mug", "Mug|0"),
        ("pick the empty mug", "Mug|1"),
        ("pick the filled mug", "Mug|0"),
    ]:
        verdict = bt_raider.check(scene, query)
        assert verdict.ok and list(verdict.grounding.values()) == [[meant]], query
    lamps = world((0.0, 0.0, 0.0), "DeskLamp", [None, None], [-30, 30], [0.6, 0.6])
    on, off = lamps["objects"]
    on.update(toggleable=True, isToggled=True)
    off.update(toggleable=True, isToggled=False)
    for query, meant in [
        ("turn off the lamp that is on", "DeskLamp|0"),
        ("turn off the switched on lamp", "DeskLamp|0"),
        ("turn on the lamp that is off", "DeskLamp|1"),
    ]:
        verdict = bt_raider.check(lamps, query)
        assert verdict.ok and list(verdict.grounding.values()) == [[meant]], query


# --------------------------------------------------------------------------- sides
SAYINGS = {
    "left": ("the {n} on the left", "the left {n}", "the {n} to your left"),
    "right": ("the {n} on the right", "the right {n}", "the {n} on your right"),
    "front": ("the {n} in front of you", "the {n} ahead", "the {n} in front of the robot"),
    "behind": ("the {n} behind you", "the {n} behind the robot"),
}
EPS = 1e-6


def truth(side: str, bearings: list[float]) -> tuple[list[int], list[int], list[int]]:
    """From the generated bearings: the objects on ``side``, those that may be (near it), and
    the one a person means (empty when no object is the one)."""
    if side in ("left", "right"):
        far = [(-1 if side == "left" else 1) * lateral(b) for b in bearings]
        there = [i for i, v in enumerate(far) if v > SIDE_ANGLE + EPS]
        near = [i for i, v in enumerate(far) if v > STRAIGHT_AHEAD - EPS]
        return there, near, there if len(there) == 1 and near == there else []
    score = [(-abs(b) if side == "front" else abs(b)) for b in bearings]
    edge = -FRONT_CONE if side == "front" else 180.0 - FRONT_CONE
    best = max(range(len(score)), key=score.__getitem__)
    there = [i for i, v in enumerate(score) if v > edge + EPS]
    near = [i for i, v in enumerate(score) if score[best] - v < ANGLE_MARGIN + EPS]
    clear = score[best] > edge + EPS and near == [best]
    return there, near, [best] if clear else []


@settings(max_examples=200, deadline=None)
@given(case=worlds(), side=st.sampled_from(sorted(SAYINGS)), form=st.integers(0, 3))
def test_a_side_grounds_the_object_on_that_side_or_is_refused(case, side, form):
    scene, object_type, _colours, bearings, _meant = case
    for o in scene["objects"]:
        o.pop("color", None)
    phrase = SAYINGS[side][form % len(SAYINGS[side])].format(n=TYPES[object_type])
    verdict = bt_raider.check(scene, f"pick {phrase}", backend=CHECKER)
    there, near, meant = truth(side, bearings)
    ids = [o["objectId"] for o in scene["objects"]]
    grounded = verdict.grounding[phrase]
    category = verdict.category.value
    if category == "none":
        # Never another object: the one on that side, with no other on it or close to it.
        (one,) = grounded
        assert ids.index(one) in there or ids.index(one) in near
    else:
        assert category in ("ambiguity", "not_present"), verdict.explanation
    if meant:
        assert category == "none" and grounded == [ids[meant[0]]]  # a clear case is understood
    if len(there) > 1 and side in ("left", "right"):
        assert category == "ambiguity"  # two on the left: ask, never the leftmost
    if not near or (side in ("left", "right") and not there and not near):
        assert category == "not_present"


def test_the_box_on_the_left_is_never_a_missing_left():
    scene = world((0.0, 0.0, 0.0), "Box", [None, None], [-40.0, 40.0], [0.6, 0.6])
    verdict = bt_raider.check(scene, "pick the box on the left")
    assert verdict.ok and verdict.grounding == {"the box on the left": ["Box|0"]}
    verdict = bt_raider.check(scene, "pick the box on the right")
    assert verdict.ok and verdict.grounding == {"the box on the right": ["Box|1"]}
    verdict = bt_raider.check(scene, "pick the box behind you")
    assert verdict.category.value == "not_present"
    assert "no left" not in verdict.explanation
    assert verdict.explanation == (
        "There is no box behind you in the scene: the Box_1 is in front of the robot "
        "and the Box_2 is in front of the robot."
    )


def test_two_boxes_on_the_left_or_at_a_similar_angle_are_ambiguous_and_say_why():
    scene = world((1.0, -2.0, 90.0), "Box", [None, None], [-80.0, -20.0], [0.5, 1.0])
    verdict = bt_raider.check(scene, "pick the box on the left")
    assert verdict.category.value == "ambiguity"  # both on the left: not "the leftmost"
    assert "(the Box_1 and Box_2 are on the robot's left)" in verdict.explanation
    scene = world((1.0, -2.0, 90.0), "Box", [None, None], [-40.0, -7.0], [0.5, 1.0])
    verdict = bt_raider.check(scene, "pick the box on the left")
    assert verdict.category.value == "ambiguity"  # -7 degrees: maybe on the left
    assert "only a little to the robot's left" in verdict.explanation
    scene = world((1.0, -2.0, 90.0), "Box", [None, None], [-5.0, 3.0], [0.5, 1.0])
    verdict = bt_raider.check(scene, "pick the box in front of you")
    assert verdict.category.value == "ambiguity"
    assert "at a similar angle from the robot" in verdict.explanation


def test_without_the_robots_heading_a_side_is_ambiguity():
    scene = world((0.0, 0.0, 0.0), "Box", [None, None], [-40.0, 40.0], [0.6, 0.6])
    del scene["agent"]["rotation"]
    verdict = bt_raider.check(scene, "pick the box on the left")
    assert verdict.category.value == "ambiguity"
    assert "heading is not known" in verdict.explanation
    del scene["agent"]
    assert bt_raider.check(scene, "pick the left box").category.value == "ambiguity"


def test_colour_and_side_together_and_a_side_after_a_relation():
    scene = world(
        (0.0, 0.0, 0.0), "Box", ["red", "red", "blue"], [-40.0, 40.0, -60.0], [0.6, 0.6, 0.6]
    )
    verdict = bt_raider.check(scene, "pick the red box on the right")
    assert verdict.ok and verdict.grounding == {"the red box on the right": ["Box|1"]}
    verdict = bt_raider.check(scene, "pick the blue box on the right")
    assert verdict.category.value == "not_present"
    assert verdict.explanation == (
        "There is no blue box on the right in the scene: the Box_3 is on the robot's left."
    )


def test_a_nan_position_makes_a_side_unknown_never_none():
    scene = world((0.0, 0.0, 0.0), "Box", [None, None], [-40.0, 40.0], [0.6, 0.6])
    from bt_raider.perception.scene import Scene

    s = Scene(scene)
    s.objects[0].raw["position"]["x"] = math.nan
    verdict = bt_raider.check(s, "pick the box on the left")
    assert verdict.category.value == "unknown"
