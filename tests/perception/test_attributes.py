"""Colours and sides from the robot's view (bt_raider.perception.attributes).

Positions are generated in the robot's own frame (a bearing and a distance) and placed in the
world through the robot's pose, so the side an object is on is known from the generator, not
from the code under test.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bt_raider.errors import SceneError
from bt_raider.perception import attributes
from bt_raider.perception.scene import Scene


def box(i: int, x: float, z: float, color: Any = None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "objectId": f"Box|{i}",
        "objectType": "Box",
        "position": {"x": x, "y": 0.9, "z": z},
    }
    if color is not None:
        d["color"] = color
    return d


def scene_of(*objects: dict[str, Any], agent: dict[str, Any] | None = None) -> Scene:
    data: dict[str, Any] = {"objects": list(objects)}
    if agent is not None:
        data["agent"] = agent
    return Scene(data)


def around(robot: tuple[float, float, float], bearing: float, dist: float) -> tuple[float, float]:
    """The (x, z) at ``bearing`` degrees from the heading (negative: left), ``dist`` m away."""
    x, z, yaw = robot
    h = (math.sin(math.radians(yaw)), math.cos(math.radians(yaw)))
    r = (math.cos(math.radians(yaw)), -math.sin(math.radians(yaw)))
    a, s = math.cos(math.radians(bearing)) * dist, math.sin(math.radians(bearing)) * dist
    return x + a * h[0] + s * r[0], z + a * h[1] + s * r[1]


def pose(robot: tuple[float, float, float]) -> dict[str, Any]:
    return {"position": {"x": robot[0], "y": 0.9, "z": robot[1]}, "rotation": {"y": robot[2]}}


# --------------------------------------------------------------------------- colour
def test_colours_of_reads_the_words_of_color_in_one_spelling():
    s = scene_of(box(1, 0, 1, "Dark Gray"), box(2, 0, 2, "red and golden"), box(3, 0, 3))
    a, b, c = s.objects
    assert attributes.colours_of(a) == {"dark", "grey"}
    assert attributes.colours_of(b) == {"red", "and", "gold"}
    assert attributes.colours_of(c) is None


def test_a_color_that_is_no_string_is_refused_at_loading_and_when_read():
    with pytest.raises(SceneError, match=r"objects\[0\]\.color: must be a colour word"):
        scene_of(box(1, 0, 1, ["red"]))
    s = scene_of(box(1, 0, 1, "red"))
    s.objects[0].raw["color"] = 7  # changed after loading
    with pytest.raises(SceneError, match="Box_1|Box"):
        attributes.colours_of(s.objects[0])


def test_with_colours_keeps_the_fitting_and_the_unknown_and_names_the_others():
    s = scene_of(box(1, 0, 1, "red"), box(2, 0, 2, "blue"), box(3, 0, 3))
    red, blue, unknown = s.objects
    assert attributes.with_colours([red, blue], ["red"]) == ([red], "")
    # An object of unknown colour may be red: it stays, so the choice stays open.
    assert attributes.with_colours([red, blue, unknown], ["red"]) == ([red, unknown], "")
    kept, why = attributes.with_colours([red, blue], ["green"])
    assert kept == [] and why == "the Box_1 is red and the Box_2 is blue"
    # Nobody has a colour: the word narrows nothing.
    assert attributes.with_colours([unknown], ["green"]) == ([unknown], "")


# --------------------------------------------------------------------------- sides
ROBOTS = st.tuples(st.floats(-5, 5), st.floats(-5, 5), st.floats(0, 359.9, allow_nan=False)).map(
    lambda t: (round(t[0], 2), round(t[1], 2), round(t[2], 1))
)


def lateral(bearing: float) -> float:
    """How far to the side an object at ``bearing`` is (negative left), mirrored front to back."""
    return bearing if abs(bearing) <= 90 else math.copysign(180 - abs(bearing), bearing)


@given(robot=ROBOTS, bearing=st.floats(-179, 180), dist=st.floats(0.2, 3.0))
def test_bearing_is_the_angle_from_the_heading(robot, bearing, dist):
    x, z = around(robot, bearing, dist)
    s = scene_of(box(1, x, z), agent=pose(robot))
    got = attributes.bearing(s, s.objects[0])
    assert got is not None
    assert math.isclose(got[0], bearing, abs_tol=1e-3) or abs(abs(got[0]) - 180) < 1e-3
    assert math.isclose(got[1], lateral(bearing), abs_tol=1e-3)


BEARINGS = st.lists(st.floats(-179, 180), min_size=1, max_size=4)
DISTS = st.lists(st.floats(0.2, 3.0), min_size=4, max_size=4)
EPS = 1e-6


def placed(robot, bearings, dists):
    objects = [
        box(i, *around(robot, b, d)) for i, (b, d) in enumerate(zip(bearings, dists, strict=False))
    ]
    return scene_of(*objects, agent=pose(robot))


@given(robot=ROBOTS, bearings=BEARINGS, dists=DISTS, side=st.sampled_from(["left", "right"]))
def test_the_one_on_the_left_is_the_only_one_there(robot, bearings, dists, side):
    s = placed(robot, bearings, dists)
    # The generator's truth: how far each object is to the side asked, in degrees.
    far = [(-1 if side == "left" else 1) * lateral(b) for b in bearings]
    there = [i for i, v in enumerate(far) if v > attributes.SIDE_ANGLE + EPS]
    near = [i for i, v in enumerate(far) if v > attributes.STRAIGHT_AHEAD - EPS]
    kept, why = attributes.on_side(s, s.objects, side)
    ids = [o.id for o in kept]
    if len(kept) == 1:
        # Never an object of another side, nor one of two on that side.
        (one,) = ids
        i = int(one.split("|")[1])
        assert far[i] >= attributes.SIDE_ANGLE - EPS
        assert all(v <= attributes.STRAIGHT_AHEAD + EPS for j, v in enumerate(far) if j != i)
    if len(there) == 1 and near == there:
        assert ids == [f"Box|{there[0]}"]  # a clear case is understood
    if len(there) > 1:
        assert len(kept) > 1 and f"on the robot's {side}" in why  # two there: no choice made
    if not any(v >= attributes.SIDE_ANGLE - EPS for v in far):
        assert kept == [] and " is " in why


@given(robot=ROBOTS, bearings=BEARINGS, dists=DISTS, side=st.sampled_from(["front", "behind"]))
def test_the_one_in_front_is_the_one_clearly_nearest_the_heading(robot, bearings, dists, side):
    s = placed(robot, bearings, dists)
    score = [(-abs(b) if side == "front" else abs(b)) for b in bearings]
    edge = -attributes.FRONT_CONE if side == "front" else 180 - attributes.FRONT_CONE
    best = max(range(len(score)), key=score.__getitem__)
    others = [v for i, v in enumerate(score) if i != best]
    kept, why = attributes.on_side(s, s.objects, side)
    ids = [o.id for o in kept]
    if len(kept) == 1:
        assert ids == [f"Box|{best}"]  # never another object than the most central one
        assert all(score[best] - v >= attributes.ANGLE_MARGIN - EPS for v in others)
    elif kept:
        assert f"Box|{best}" in ids and "similar angle" in why
    if score[best] > edge + EPS and all(
        score[best] - v > attributes.ANGLE_MARGIN + EPS for v in others
    ):
        assert ids == [f"Box|{best}"]  # a clear case is understood
    if score[best] < edge - EPS:
        assert kept == [] and " is " in why


def test_on_side_without_a_heading_cannot_tell_several_apart():
    s = scene_of(box(1, -1, 1), box(2, 1, 1))  # no agent: default position, heading unknown
    assert not attributes.heading_known(s)
    kept, why = attributes.on_side(s, s.objects, "left")
    assert [o.id for o in kept] == ["Box|1", "Box|2"] and "heading is not known" in why
    s2 = scene_of(box(1, -1, 1), box(2, 1, 1), agent={"position": {"x": 0, "z": 0}})
    assert not attributes.heading_known(s2)
    assert len(attributes.on_side(s2, s2.objects, "right")[0]) == 2


def test_an_object_where_the_robot_stands_leaves_the_choice_open():
    agent = pose((0.0, 0.0, 0.0))
    s = scene_of(box(1, -1, 1), box(2, 0.01, 0.0), agent=agent)
    kept, why = attributes.on_side(s, s.objects, "left")
    assert [o.id for o in kept] == ["Box|1", "Box|2"] and "where the robot stands" in why
    alone = scene_of(box(2, 0.01, 0.0), agent=agent)
    kept, why = attributes.on_side(alone, alone.objects, "left")
    assert kept == [] and "where the robot stands" in why


def test_where_from_robot_says_the_side_in_the_terms_asked():
    s = scene_of(box(1, -1, 0.2), box(2, 0, 1), box(3, 0, -1), agent=pose((0.0, 0.0, 0.0)))
    left, ahead, back = s.objects
    assert attributes.where_from_robot(s, left, "right") == "on the robot's left"
    assert attributes.where_from_robot(s, ahead, "left") == "straight ahead of the robot"
    assert attributes.where_from_robot(s, back, "front") == "behind the robot"
    assert attributes.where_from_robot(s, left, "behind") == "on the robot's left"


def test_a_nan_position_is_a_scene_error_never_a_side():
    s = scene_of(box(1, -1, 1), box(2, 1, 1), agent=pose((0.0, 0.0, 0.0)))
    s.objects[0].raw["position"]["x"] = math.nan
    with pytest.raises(SceneError):
        attributes.on_side(s, s.objects, "left")


def test_an_unknown_side_is_a_bug_of_the_caller():
    s = scene_of(box(1, -1, 1), agent=pose((0.0, 0.0, 0.0)))
    with pytest.raises(ValueError, match="side: expected one of left, right, front, behind"):
        attributes.on_side(s, s.objects, "up")
