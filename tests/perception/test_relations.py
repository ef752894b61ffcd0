"""Spatial relations: the format doc's rules on hand-built scenes and on the real FloorPlan1."""

from __future__ import annotations

import math

import pytest

from bt_raider.errors import SceneError, ToolError
from bt_raider.perception import relations
from bt_raider.perception.relations import (
    RELATIONS,
    closest,
    holds,
    is_container,
    normalize_relation,
    related,
)
from bt_raider.perception.scene import Scene


def obj(oid: str, otype: str, x: float, z: float, y: float = 0.9, size=None, **flags) -> dict:
    """An AI2-THOR-style object dict; ``size`` (sx, sy, sz) adds a bounding box at the position."""
    d = {"objectId": oid, "objectType": otype, "position": {"x": x, "y": y, "z": z}}
    if size is not None:
        sx, sy, sz = size
        d["axisAlignedBoundingBox"] = {
            "center": {"x": x, "y": y, "z": z},
            "size": {"x": sx, "y": sy, "z": sz},
        }
    d.update(flags)
    return d


def scene(*objects: dict, yaw: float = 0.0, **extra) -> Scene:
    data = {
        "objects": list(objects),
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": -2.0}, "rotation": {"y": yaw}},
        **extra,
    }
    return Scene(data)


# ---------------------------------------------------------------------- normalize_relation
@pytest.mark.parametrize(
    "phrase, canonical",
    [
        ("to the left of", "left_of"),
        ("on the left of", "left_of"),
        ("left of", "left_of"),
        ("Left_Of", "left_of"),
        ("to the right of", "right_of"),
        ("on the right of", "right_of"),
        ("on top of", "on_top_of"),
        ("on", "on_top_of"),
        ("is on top of", "on_top_of"),
        ("in", "inside"),
        ("inside of", "inside"),
        ("inside", "inside"),
        ("under", "below"),
        ("beneath", "below"),
        ("above", "above"),
        ("over", "above"),
        ("next to", "next_to"),
        ("beside", "next_to"),
        ("near", "near"),
        ("close to", "near"),
        ("closest to", "closest_to"),
        ("nearest to", "closest_to"),
        ("blocking", "blocking"),
        ("occluding", "blocking"),
        ("  ON   TOP   OF ", "on_top_of"),
    ],
)
def test_normalize_relation_phrases(phrase, canonical):
    assert normalize_relation(phrase) == canonical


def test_every_canonical_name_normalises_to_itself():
    for name in RELATIONS:
        assert normalize_relation(name) == name
        assert normalize_relation(name.replace("_", " ")) == name


@pytest.mark.parametrize("bad", ["sideways of", "", "diagonal", 3])
def test_unknown_relation_names_value_and_options(bad):
    with pytest.raises(ToolError) as err:
        normalize_relation(bad)
    msg = str(err.value)
    assert repr(bad) in msg
    assert "left_of" in msg and "blocking" in msg


# ---------------------------------------------------------------------- left / right
@pytest.mark.parametrize(
    "yaw, dx, dz, expected",
    [
        (0.0, 0.3, 0.0, "right_of"),  # yaw 0 faces +z: right is +x
        (0.0, -0.3, 0.0, "left_of"),
        (180.0, 0.3, 0.0, "left_of"),  # facing -z flips the sides
        (90.0, 0.0, -0.3, "right_of"),  # facing +x: right is -z
        (90.0, 0.0, 0.3, "left_of"),
        (270.0, 0.0, 0.3, "right_of"),
    ],
)
def test_left_right_follow_the_robot_heading(yaw, dx, dz, expected):
    s = scene(obj("Y", "Plate", 1.0, 1.0), obj("X", "Fork", 1.0 + dx, 1.0 + dz), yaw=yaw)
    x, y = s.by_id("X"), s.by_id("Y")
    other = "left_of" if expected == "right_of" else "right_of"
    assert holds(s, expected, x, y)
    assert not holds(s, other, x, y)
    assert holds(s, other, y, x)  # and Y is on the other side of X
    assert [o.id for o in related(s, expected, y)] == ["X"]


def test_left_right_margin_and_range():
    s = scene(
        obj("Y", "Plate", 0.0, 0.0),
        obj("inside_margin", "Fork", 0.04, 0.3),  # 4 cm to the right: not enough
        obj("past_margin", "Spoon", 0.06, 0.3),
        obj("too_far", "Knife", 0.9, 0.6),  # 1.08 m away horizontally
        obj("in_range", "Cup", 0.9, 0.4),  # 0.985 m away
    )
    y = s.by_id("Y")
    right = {o.id for o in related(s, "right_of", y)}
    assert right == {"past_margin", "in_range"}
    assert related(s, "left_of", y) == []


def test_left_right_depend_only_on_the_side_offset_not_depth():
    # Straight ahead of Y (along the heading): neither left nor right.
    s = scene(obj("Y", "Plate", 0.0, 0.0), obj("X", "Fork", 0.0, 0.8))
    x, y = s.by_id("X"), s.by_id("Y")
    assert not holds(s, "left_of", x, y) and not holds(s, "right_of", x, y)


# ---------------------------------------------------------------------- on top of / inside
def test_inside_for_containers_on_top_for_surfaces():
    s = scene(
        obj("Bowl|1", "Bowl", 0, 0, receptacle=True, receptacleObjectIds=["Apple|1"]),
        obj("Apple|1", "Apple", 0, 0, parentReceptacles=["Bowl|1"]),
        obj("Table|1", "DiningTable", 1, 1, receptacle=True),
        obj("Book|1", "Book", 1, 1, parentReceptacles=["Table|1"]),
        obj("Chest|1", "Chest", 2, 2, receptacle=True, openable=True),  # custom, openable
        obj("Watch|1", "Watch", 2, 2, parentReceptacles=["Chest|1"]),
    )
    apple, bowl = s.by_id("Apple|1"), s.by_id("Bowl|1")
    book, table = s.by_id("Book|1"), s.by_id("Table|1")
    watch, chest = s.by_id("Watch|1"), s.by_id("Chest|1")
    assert holds(s, "inside", apple, bowl) and not holds(s, "on_top_of", apple, bowl)
    assert holds(s, "on top of", book, table) and not holds(s, "in", book, table)
    assert holds(s, "inside", watch, chest)
    assert not holds(s, "inside", bowl, apple)  # the relation has a direction
    assert [o.id for o in related(s, "inside", bowl)] == ["Apple|1"]
    assert [o.id for o in related(s, "on_top_of", table)] == ["Book|1"]


def test_inside_is_seen_from_either_side_of_the_link():
    # Only the receptacle lists its content (some perception stacks fill only one side).
    s = scene(
        obj("Fridge|1", "Fridge", 0, 0, openable=True, receptacleObjectIds=["Egg|1"]),
        obj("Egg|1", "Egg", 0, 0),
    )
    assert holds(s, "inside", s.by_id("Egg|1"), s.by_id("Fridge|1"))


@pytest.mark.parametrize(
    "otype, openable, expected",
    [
        ("Fridge", True, True),
        ("Cabinet", True, True),
        ("Drawer", True, True),
        ("Microwave", True, True),
        ("Bowl", False, True),
        ("Cup", False, True),
        ("Mug", False, True),
        ("Pot", False, True),
        ("Sink", False, True),
        ("SinkBasin", False, True),
        ("GarbageCan", False, True),
        ("Box", True, True),
        ("CounterTop", False, False),
        ("Plate", False, False),
        ("Shelf", False, False),
        ("Toilet", True, False),  # openable, but things stand on it
    ],
)
def test_is_container(otype, openable, expected):
    s = scene(obj("o", otype, 0, 0, openable=openable))
    assert is_container(s.by_id("o")) is expected


# ---------------------------------------------------------------------- above / below
def test_above_below_need_height_order_and_xz_overlap():
    s = scene(
        obj("Shelf|top", "Shelf", 0, 0, y=1.5, size=(0.6, 0.04, 0.3)),
        obj("Shelf|low", "Shelf", 0, 0, y=0.5, size=(0.6, 0.04, 0.3)),
        obj("Shelf|aside", "Shelf", 2, 0, y=1.5, size=(0.6, 0.04, 0.3)),  # no overlap in x
        obj("Cup|1", "Cup", 0.1, 0.05, y=0.56, size=(0.08, 0.08, 0.08)),  # rests on the low shelf
        obj("Plate|nobox", "Plate", 0, 0, y=2.0),
    )
    top, low, aside = s.by_id("Shelf|top"), s.by_id("Shelf|low"), s.by_id("Shelf|aside")
    cup, nobox = s.by_id("Cup|1"), s.by_id("Plate|nobox")
    assert holds(s, "above", top, low) and holds(s, "below", low, top)
    assert not holds(s, "above", low, top)
    assert not holds(s, "above", aside, low)  # higher but not over it
    assert holds(s, "above", cup, low) and holds(s, "below", cup, top)
    assert not holds(s, "above", nobox, low) and not holds(s, "below", low, nobox)
    assert {o.id for o in related(s, "below", top)} == {"Shelf|low", "Cup|1"}


def test_above_tolerates_resting_contact_but_not_overlap():
    base = obj("Table|1", "DiningTable", 0, 0, y=0.5, size=(1, 1, 1))  # top at y = 1.0
    sunk = obj("Apple|1", "Apple", 0, 0, y=1.04, size=(0.1, 0.1, 0.1))  # bottom 0.99
    deep = obj("Apple|2", "Apple", 0.2, 0, y=0.9, size=(0.1, 0.1, 0.1))  # bottom 0.85
    s = scene(base, sunk, deep)
    table = s.by_id("Table|1")
    assert holds(s, "above", s.by_id("Apple|1"), table)
    assert not holds(s, "above", s.by_id("Apple|2"), table)


# ---------------------------------------------------------------------- near / closest
def test_near_and_next_to_use_half_a_metre_horizontally():
    s = scene(
        obj("Y", "Plate", 0, 0),
        obj("A", "Fork", 0.3, 0.39),  # 0.492 m
        obj("B", "Spoon", 0.3, 0.42, y=5.0),  # 0.516 m horizontally (height ignored)
        obj("C", "Cup", 0, 0.2, y=3.0),  # 0.2 m horizontally, far above
    )
    y = s.by_id("Y")
    assert {o.id for o in related(s, "near", y)} == {"A", "C"}
    assert related(s, "next to", y) == related(s, "near", y)
    assert [o.id for o in related(s, "closest_to", y)] == ["C"]
    assert holds(s, "closest_to", s.by_id("C"), y)
    assert not holds(s, "closest_to", s.by_id("A"), y)


def test_closest_picks_the_nearest_candidate_and_skips_the_reference():
    s = scene(obj("Y", "Plant", 0, 0), obj("M1", "Medicine", 0.1, 0), obj("M2", "Medicine", 0.2, 0))
    y = s.by_id("Y")
    assert closest(s, [s.by_id("M2"), s.by_id("M1"), y], y).id == "M1"
    with pytest.raises(ToolError, match="empty"):
        closest(s, [y], y)


def test_nothing_relates_to_itself():
    s = scene(obj("Y", "Bowl", 0, 0, size=(0.2, 0.2, 0.2)))
    y = s.by_id("Y")
    for rel in RELATIONS:
        assert not holds(s, rel, y, y)
        assert related(s, rel, y) == []


# ---------------------------------------------------------------------- blocking
def test_blocking_lists_the_blocked_report_then_what_sits_on_or_in_y():
    s = scene(
        obj("Bowl|1", "Bowl", 0, 0, receptacle=True),
        obj("Apple|1", "Apple", 0, 0, parentReceptacles=["Bowl|1"]),
        obj("Chair|1", "Chair", 0.5, 0.5),
        obj("Box|1", "Box", 2, 2),
        blocked={"Bowl|1": ["Chair|1"], "Box": ["Chair|1"]},
    )
    bowl = s.by_id("Bowl|1")
    assert [o.id for o in related(s, "blocking", bowl)] == ["Chair|1", "Apple|1"]
    assert holds(s, "blocking", s.by_id("Apple|1"), bowl)
    assert not holds(s, "blocking", s.by_id("Box|1"), bowl)
    # keyed by display name works too (an unknown blocker id is refused by scene validation)
    assert [o.id for o in related(s, "blocking", s.by_id("Box|1"))] == ["Chair|1"]
    assert relations.blocker_ids(s, ["bowl|1"]) == ["Chair|1"]


# ---------------------------------------------------------------------- the real small_kitchen
def _raw_by_id(small_kitchen_dict):
    return {o["objectId"]: o for o in small_kitchen_dict["objects"]}


def test_kitchen_left_right_match_raw_geometry(small_kitchen, small_kitchen_dict):
    yaw = math.radians(small_kitchen_dict["agent"]["rotation"]["y"])
    rx, rz = math.cos(yaw), -math.sin(yaw)
    raws = small_kitchen_dict["objects"]
    checked = 0
    for ref in ("Bowl", "Mug", "CoffeeMachine", "Plate", "Apple"):
        y = small_kitchen.resolve(ref)
        yp = y.raw["position"]
        for side, sign in (("right_of", 1), ("left_of", -1)):
            expected = set()
            for r in raws:
                p = r["position"]
                dx, dz = p["x"] - yp["x"], p["z"] - yp["z"]
                if r["objectId"] != y.id and math.hypot(dx, dz) <= 1.0:
                    if sign * (dx * rx + dz * rz) > 0.05:
                        expected.add(r["objectId"])
            got = {o.id for o in related(small_kitchen, side, y)}
            assert got == expected
            checked += len(expected)
    assert checked > 10  # the check compared real, non-empty sets


def test_kitchen_receptacle_relations_match_parent_receptacles(small_kitchen, small_kitchen_dict):
    raw = _raw_by_id(small_kitchen_dict)
    pairs = [
        (r["objectId"], parent)
        for r in small_kitchen_dict["objects"]
        for parent in r.get("parentReceptacles") or []
    ]
    assert pairs
    for child, parent in pairs:
        x, y = small_kitchen.by_id(child), small_kitchen.by_id(parent)
        inside = raw[parent]["objectType"] in relations.CONTAINER_TYPES or raw[parent].get(
            "openable", False
        )
        assert holds(small_kitchen, "inside", x, y) is bool(inside)
        assert holds(small_kitchen, "on_top_of", x, y) is (not inside)
    egg, fridge = small_kitchen.resolve("Egg"), small_kitchen.resolve("Fridge")
    assert [o.name for o in related(small_kitchen, "inside", fridge)] == ["Egg"]
    assert egg in related(small_kitchen, "blocking", fridge)


def test_kitchen_above_below_match_corner_points(kitchen, kitchen_dict):
    def box(r):
        pts = r["axisAlignedBoundingBox"]["cornerPoints"]
        return [min(p[i] for p in pts) for i in range(3)], [
            max(p[i] for p in pts) for i in range(3)
        ]

    raws = [r for r in kitchen_dict["objects"] if r.get("axisAlignedBoundingBox")]
    for ref in ("CoffeeMachine", "Cup", "Apple"):
        y = kitchen.resolve(ref)
        (ylo, yhi) = box(y.raw)
        expected_above, expected_below = set(), set()
        for r in raws:
            if r["objectId"] == y.id:
                continue
            lo, hi = box(r)
            overlap = all(lo[i] < yhi[i] and ylo[i] < hi[i] for i in (0, 2))
            if overlap and lo[1] >= yhi[1] - relations.STACK_TOLERANCE:
                expected_above.add(r["objectId"])
            if overlap and ylo[1] >= hi[1] - relations.STACK_TOLERANCE:
                expected_below.add(r["objectId"])
        assert {o.id for o in related(kitchen, "above", y)} == expected_above
        assert {o.id for o in related(kitchen, "below", y)} == expected_below
    # the cup sits in a wall cabinet right above the salt shaker on the counter
    assert kitchen.resolve("SaltShaker") in related(kitchen, "below", kitchen.resolve("Cup"))


def test_kitchen_near_and_closest_match_raw_distances(small_kitchen, small_kitchen_dict):
    for ref in ("Toaster", "Plate", "Lettuce"):
        y = small_kitchen.resolve(ref)
        yp = y.raw["position"]
        dists = {
            r["objectId"]: math.hypot(r["position"]["x"] - yp["x"], r["position"]["z"] - yp["z"])
            for r in small_kitchen_dict["objects"]
            if r["objectId"] != y.id
        }
        assert {o.id for o in related(small_kitchen, "near", y)} == {
            i for i, d in dists.items() if d <= 0.5
        }
        assert related(small_kitchen, "closest_to", y)[0].id == min(dists, key=dists.get)


def test_kitchen_relations_accept_phrases(small_kitchen):
    mug = small_kitchen.resolve("Mug")
    assert related(small_kitchen, "to the left of", mug) == related(small_kitchen, "left_of", mug)
    assert related(small_kitchen, "under", small_kitchen.resolve("Cup")) == related(
        small_kitchen, "below", small_kitchen.resolve("Cup")
    )


# ---------------------------------------------------------------------- numbers that are not finite
class _Thing:
    """Anything with a position (a tool's Place, a user's object): relations take duck types."""

    def __init__(self, name: str, x: float, z: float) -> None:
        self.name = self.id = name
        self.position = [x, 0.9, z]


@pytest.mark.parametrize("x", [math.nan, math.inf])
def test_a_distance_that_is_not_finite_is_an_error_not_false(x):
    a, b = _Thing("a", x, 0.0), _Thing("b", 0.0, 0.0)
    with pytest.raises(ToolError, match="distance between a and b"):
        relations.horizontal_distance(a, b)


@pytest.mark.parametrize("relation", ["left_of", "right_of", "near", "next_to", "closest_to"])
def test_a_position_changed_to_nan_makes_a_relation_an_error(relation):
    s = scene(obj("Apple|1", "Apple", -0.3, 0.0), obj("Bowl|1", "Bowl", 0.0, 0.0))
    apple, bowl = s.by_id("Apple|1"), s.by_id("Bowl|1")
    assert isinstance(holds(s, relation, apple, bowl), bool)  # fine before the change
    s.data["objects"][0]["position"]["x"] = math.nan  # e.g. a simulated world's edit
    with pytest.raises((SceneError, ToolError)) as err:  # never a True/False from a NaN
        related(s, relation, bowl)
    assert "nan" in str(err.value)


def test_a_yaw_changed_to_nan_makes_left_and_right_an_error():
    s = scene(obj("Apple|1", "Apple", -0.3, 0.0), obj("Bowl|1", "Bowl", 0.0, 0.0))
    s.data["agent"]["rotation"]["y"] = math.nan
    with pytest.raises((SceneError, ToolError), match="agent.rotation.y"):
        related(s, "left_of", s.by_id("Bowl|1"))


def test_a_box_changed_to_nan_makes_above_an_error():
    s = scene(
        obj("Apple|1", "Apple", 0.0, 0.0, y=1.2, size=(0.1, 0.1, 0.1)),
        obj("Table|1", "DiningTable", 0.0, 0.0, y=0.5, size=(1.0, 1.0, 1.0)),
    )
    assert holds(s, "above", s.by_id("Apple|1"), s.by_id("Table|1"))
    s.data["objects"][1]["axisAlignedBoundingBox"]["size"]["y"] = math.nan
    with pytest.raises((SceneError, ToolError), match="axisAlignedBoundingBox.size.y"):
        holds(s, "above", s.by_id("Apple|1"), s.by_id("Table|1"))
