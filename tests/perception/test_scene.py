"""The scene model (perception/scene.py): loading, validation, display names, resolving, geometry."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bt_raider.errors import SceneError, ToolError
from bt_raider.perception.scene import ROBOT_DEFAULTS, Scene, validate_scene
from bt_raider.testing.scenes import KITCHEN_PATH
from tests.shared_data import KITCHEN, require


def tiny(**extra) -> dict:
    return {
        "objects": [
            {"objectId": "Apple|1", "objectType": "Apple", "position": {"x": 1, "y": 1, "z": 0}},
            {"objectId": "Mug|b", "objectType": "Mug", "position": {"x": 0, "y": 1, "z": 2}},
            {"objectId": "Mug|a", "objectType": "Mug", "position": {"x": 0, "y": 1, "z": 3}},
        ],
        "agent": {"position": {"x": 0, "y": 0.9, "z": 0}, "rotation": {"y": 0}},
        **extra,
    }


# ---------------------------------------------------------------------- loading
def test_load_the_real_kitchen():
    s = Scene.load(require(KITCHEN))
    raw = json.loads(KITCHEN.read_text())
    assert len(s) == len(raw["objects"]) == 77
    assert s.source == str(KITCHEN)
    assert s.to_dict() == raw  # kept unchanged, round-trips
    assert [o.id for o in s] == [o["objectId"] for o in raw["objects"]]


def test_load_the_small_kitchen():
    s = Scene.load(KITCHEN_PATH)
    raw = json.loads(KITCHEN_PATH.read_text())
    assert len(s) == len(raw["objects"]) == 39
    assert s.source == str(KITCHEN_PATH)
    assert s.to_dict() == raw  # kept unchanged, round-trips
    assert [o.id for o in s] == [o["objectId"] for o in raw["objects"]]


def test_load_errors_name_the_file(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{ nope")
    with pytest.raises(SceneError, match=r"broken\.json: not JSON"):
        Scene.load(bad)
    with pytest.raises(SceneError, match=r"missing\.json: cannot read"):
        Scene.load(tmp_path / "missing.json")
    no_objects = tmp_path / "empty.json"
    no_objects.write_text("{}")
    with pytest.raises(SceneError, match=r"empty\.json: missing key 'objects'"):
        Scene.load(no_objects)
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    with pytest.raises(SceneError, match=r"list\.json: a scene must be a JSON object"):
        Scene.load(listed)


@pytest.mark.parametrize(
    "mutate, where",
    [
        (lambda d: d["objects"].__setitem__(1, "Mug"), "objects[1]: must be an object"),
        (lambda d: d["objects"][2].pop("objectId"), "objects[2].objectId"),
        (lambda d: d["objects"][0].__setitem__("objectType", ""), "objects[0].objectType"),
        (lambda d: d["objects"][1].pop("position"), "objects[1].position: missing"),
        (
            lambda d: d["objects"][1].__setitem__("position", {"x": "a", "z": 0}),
            "objects[1].position",
        ),
        (lambda d: d["objects"][0].__setitem__("isOpen", "yes"), "objects[0].isOpen"),
        (lambda d: d["objects"][0].__setitem__("pickupable", 1), "objects[0].pickupable"),
        (
            lambda d: d["objects"][2].__setitem__("objectId", "Mug|b"),
            "objects[2].objectId: duplicate",
        ),
        (
            lambda d: d["objects"][0].__setitem__("parentReceptacles", "Table|1"),
            "objects[0].parentReceptacles",
        ),
        (lambda d: d.__setitem__("objects", {}), "'objects' must be a list"),
        (lambda d: d["agent"].pop("position"), "agent"),
        (lambda d: d.__setitem__("inventoryObjects", [{"id": 3}]), "inventoryObjects[0].objectId"),
        (lambda d: d.__setitem__("robot", {"reach": "far"}), "robot.reach"),
        (lambda d: d.__setitem__("humans", [{"name": "Ann"}]), "humans[0].id"),
        (lambda d: d.__setitem__("humans", [{"id": "h1"}]), "humans[0].position"),
        (lambda d: d.__setitem__("blocked", {"Apple|1": "Mug|a"}), "blocked"),
        (lambda d: d.__setitem__("user_info", "likes apples"), "user_info"),
        (lambda d: d.__setitem__("locations", {"desk": {"y": 1}}), "locations.desk"),
    ],
)
def test_malformed_scenes_name_source_index_and_field(mutate, where):
    data = tiny()
    mutate(data)
    with pytest.raises(SceneError) as err:
        Scene(data, source="my_scene.json")
    msg = str(err.value)
    assert msg.startswith("my_scene.json: ") and where in msg


def test_missing_agent_gets_a_default_pose():
    data = tiny()
    del data["agent"]
    s = Scene(data)
    assert np.allclose(s.agent_position, [0.0, 0.9, 0.0]) and s.agent_yaw == 0.0


def test_validate_scene_accepts_the_kitchen_dict(small_kitchen_dict):
    validate_scene(small_kitchen_dict, "k")  # no error


# ---------------------------------------------------------------------- display names
def test_display_names_unique_types_and_numbered_duplicates():
    s = Scene(tiny())
    assert s.name_of("Apple|1") == "Apple"
    # duplicates are numbered in objectId order, not file order
    assert s.name_of("Mug|a") == "Mug_1" and s.name_of("Mug|b") == "Mug_2"
    assert s.name_of("Nope|0") == "Nope|0"


def test_kitchen_display_names(small_kitchen):
    names = [o.name for o in small_kitchen]
    assert len(set(names)) == len(names)
    cabinets = sorted((o for o in small_kitchen if o.type == "Cabinet"), key=lambda o: o.id)
    assert [c.name for c in cabinets] == [f"Cabinet_{i}" for i in range(1, 4)]
    assert small_kitchen.resolve("Apple").name == "Apple"


def test_reindex_after_adding_an_object():
    s = Scene(tiny())
    s.data["objects"].append(
        {"objectId": "Apple|0", "objectType": "Apple", "position": {"x": 0, "z": 0}}
    )
    s.reindex()
    assert s.name_of("Apple|0") == "Apple_1" and s.name_of("Apple|1") == "Apple_2"


def test_copy_is_independent():
    s = Scene(tiny())
    c = s.copy()
    c.data["objects"][0]["isOpen"] = True
    assert not s.by_id("Apple|1").flag("isOpen") and c.by_id("Apple|1").flag("isOpen")


def test_objects_read_their_dict_live():
    s = Scene(tiny())
    apple = s.by_id("Apple|1")
    apple.raw["position"]["x"] = 5.0
    assert apple.position[0] == 5.0


# ---------------------------------------------------------------------- resolve
@pytest.mark.parametrize(
    "ref, name",
    [
        ("Apple", "Apple"),
        ("apple", "Apple"),
        (" Apple ", "Apple"),
        ("Apple|+00.40|+00.96|+01.00", "Apple"),
        ("Cabinet_3", "Cabinet_3"),
        ("cabinet_3", "Cabinet_3"),
        ("Cabinet 3", "Cabinet_3"),
        ("coffee machine", "CoffeeMachine"),
        ("CoffeeMachine", "CoffeeMachine"),
        ("butter knife", "ButterKnife"),
        ("Coffe Machine", "CoffeeMachine"),  # near-misses
        ("Frdge", "Fridge"),
        ("toastr", "Toaster"),
    ],
)
def test_resolve(small_kitchen, ref, name):
    assert small_kitchen.resolve(ref).name == name


def test_resolve_ambiguous_type_lists_candidates(small_kitchen):
    with pytest.raises(ToolError) as err:
        small_kitchen.resolve("countertop")
    msg = str(err.value)
    assert "ambiguous" in msg and "CounterTop_1, CounterTop_2, CounterTop_3" in msg


@pytest.mark.parametrize("ref", ["Spaceship", "", "   ", None, 3])
def test_resolve_unknown_names_it(small_kitchen, ref):
    with pytest.raises(ToolError) as err:
        small_kitchen.resolve(ref)
    assert repr(ref) in str(err.value)
    if isinstance(ref, str) and ref.strip():
        assert "Apple" in str(err.value)  # lists the objects
        assert not small_kitchen.has(ref)


def test_by_id_and_of_type(small_kitchen):
    with pytest.raises(ToolError, match="no object with objectId 'X'"):
        small_kitchen.by_id("X")
    assert len(small_kitchen.of_type("cabinet")) == 3
    assert small_kitchen.has("Mug")


# ---------------------------------------------------------------------- robot and geometry
def test_robot_defaults_and_overrides():
    assert Scene(tiny()).robot == ROBOT_DEFAULTS
    s = Scene(tiny(robot={"reach": 0.6}))
    assert s.robot["reach"] == 0.6 and s.robot["handover_distance"] == 0.5


@pytest.mark.parametrize("yaw", [0.0, 90.0, 180.0, 270.0, 33.0])
def test_heading_and_right_vector(yaw):
    data = tiny()
    data["agent"]["rotation"]["y"] = yaw
    s = Scene(data)
    h, r = s.heading(), s.right_vector()
    assert np.isclose(np.linalg.norm(h), 1) and np.isclose(h @ r, 0)
    # the right vector is the heading turned clockwise seen from above (x right, z up)
    assert np.isclose(h[0] * r[1] - h[1] * r[0], -1)
    assert np.allclose(h, [math.sin(math.radians(yaw)), math.cos(math.radians(yaw))])


def test_holding_and_distances(small_kitchen_dict):
    mug = next(o for o in small_kitchen_dict["objects"] if o["objectType"] == "Mug")
    small_kitchen_dict["inventoryObjects"] = [{"objectId": mug["objectId"], "objectType": "Mug"}]
    small_kitchen_dict["locations"] = {"door": {"x": 3.0, "z": -1.0}}
    small_kitchen_dict["humans"] = [{"id": "h1", "name": "Ann", "position": {"x": 0.0, "z": 1.0}}]
    s = Scene(small_kitchen_dict)
    assert [o.name for o in s.holding] == ["Mug"]
    ag = small_kitchen_dict["agent"]["position"]
    p = mug["position"]
    assert math.isclose(s.distance_to_robot("Mug"), math.hypot(p["x"] - ag["x"], p["z"] - ag["z"]))
    assert math.isclose(s.distance_to_robot("door"), 3.0)
    assert math.isclose(s.distance_to_robot("Ann"), 2.0)
    assert math.isclose(s.distance_to_robot("h1"), 2.0)
    with pytest.raises(ToolError):
        s.distance_to_robot("Narnia")


def test_humans(small_kitchen_dict):
    small_kitchen_dict["humans"] = [
        {"id": "h1", "name": "Adriana", "position": {"x": 0, "z": 0}, "looking_at_robot": True},
        {"id": "h2", "name": None, "position": {"x": 1, "z": 0}, "hands_free": False},
    ]
    s = Scene(small_kitchen_dict)
    assert s.human("adriana").id == "h1" and s.human("H2").name is None
    assert s.human("h1").looking_at_robot and s.human("h1").hands_free
    assert not s.human("h2").looking_at_robot and not s.human("h2").hands_free
    with pytest.raises(ToolError) as err:
        s.human("Bob")
    assert "'Bob'" in str(err.value) and "h1 (Adriana)" in str(err.value)
    assert "h2 (unrecognised)" in str(err.value)


def test_bbox_from_center_size_or_corner_points(kitchen):
    apple = kitchen.resolve("Apple")  # FloorPlan1's boxes carry both forms
    lo, hi = apple.bbox()
    pts = np.asarray(apple.raw["axisAlignedBoundingBox"]["cornerPoints"])
    assert np.allclose(lo, pts.min(0), atol=1e-3) and np.allclose(hi, pts.max(0), atol=1e-3)
    del apple.raw["axisAlignedBoundingBox"]["center"]
    lo2, hi2 = apple.bbox()
    assert np.allclose(lo2, pts.min(0)) and np.allclose(hi2, pts.max(0))
    apple.raw["axisAlignedBoundingBox"] = None
    assert apple.bbox() is None


_coord = st.floats(-1e4, 1e4) | st.integers(-10_000, 10_000)
_size = st.floats(0, 1e4) | st.integers(0, 10_000)
_xyz = st.fixed_dictionaries({"x": _coord, "z": _coord}, optional={"y": _coord})


@given(
    position=_xyz,
    center=_xyz,
    size=st.fixed_dictionaries({"x": _size, "y": _size, "z": _size}),
    corners=st.lists(st.tuples(_coord, _coord, _coord).map(list), min_size=1, max_size=8),
    agent=_xyz,
    yaw=st.floats(-360, 360) | st.integers(-360, 360),
    person=_xyz,
    place=_xyz,
)
def test_plain_geometry_holds_the_numbers_of_the_arrays(
    position, center, size, corners, agent, yaw, person, place
):
    # The checks read plain floats (no numpy); users and SimWorld read arrays: the same numbers.
    boxed = {"center": center, "size": size}
    data = tiny(humans=[{"id": "h1", "position": person}], locations={"spot": place})
    data["objects"][0].update(position=position, axisAlignedBoundingBox=boxed)
    data["objects"][1]["axisAlignedBoundingBox"] = {"cornerPoints": corners}
    data["agent"] = {"position": agent, "rotation": {"y": yaw}}
    s = Scene(data)
    for obj in s:
        assert obj.xyz == tuple(obj.position.tolist())
        box, plain = obj.bbox(), obj.box_corners()
        assert (box is None and plain is None) or plain == tuple(tuple(c.tolist()) for c in box)
    assert s.agent_xyz == tuple(s.agent_position.tolist())
    assert s.heading_xz() == tuple(s.heading().tolist())
    assert s.right_xz() == tuple(s.right_vector().tolist())
    assert s.humans[0].xyz == tuple(s.humans[0].position.tolist())
    assert {k: tuple(v.tolist()) for k, v in s.locations.items()} == s.location_points
    assert "spot" in s.locations and "h1" not in s.locations and list(s.locations) == ["spot"]
    for ref in ("spot", "h1", "Apple", "Mug_2"):
        assert s.xyz_of(ref) == tuple(s.position_of(ref).tolist())
        assert s.distance_to_robot(ref) == s.horizontal_distance(
            s.agent_position, s.position_of(ref)
        )


# ---------------------------------------------------------------------- known bugs in scene.py
def test_resolve_near_miss_tied_between_objects_is_ambiguous(small_kitchen):
    with pytest.raises(ToolError, match="ambiguous"):
        small_kitchen.resolve("drawers")  # as close to both drawers


def test_locations_must_be_an_object():
    with pytest.raises(SceneError, match="locations"):
        Scene(tiny(locations=["desk"]))


def test_agent_rotation_is_validated():
    data = tiny()
    data["agent"]["rotation"] = {"y": "north"}
    with pytest.raises(SceneError, match="agent.rotation"):
        Scene(data)


def test_human_name_must_be_text_or_null():
    data = tiny(humans=[{"id": "h1", "name": 5, "position": {"x": 0, "z": 0}}])
    with pytest.raises(SceneError, match=r"humans\[0\]\.name"):
        Scene(data)


def test_blocked_must_name_objects_of_the_scene(small_kitchen_dict):
    # An unresolvable blocker would make checks report "nothing blocks" (fail open).
    apple = next(o["objectId"] for o in small_kitchen_dict["objects"] if o["objectType"] == "Apple")
    small_kitchen_dict["blocked"] = {apple: ["Ghost|+1|+1|+1"]}
    with pytest.raises(SceneError, match=r"blocked\..*'Ghost\|\+1\|\+1\|\+1' is not an objectId"):
        Scene(small_kitchen_dict)


# ---------------------------------------------------------------------- tables of a scene state
@st.composite
def typed_scenes(draw: st.DrawFn) -> Scene:
    """Scenes of 1-12 objects of few types, ids and display names that may look alike."""
    n = draw(st.integers(1, 12))
    types = draw(
        st.lists(
            st.sampled_from(["Apple", "Mug", "Bowl", "apple", "Apple_1"]), min_size=n, max_size=n
        )
    )
    objects = [
        {"objectId": f"{t}|{i}", "objectType": t, "position": {"x": float(i), "y": 0.0, "z": 0.0}}
        for i, t in enumerate(types)
    ]
    return Scene({"objects": draw(st.permutations(objects))})


def _scan_find(scene: Scene, ref: str):
    return next((o for o in scene if o.id == ref or o.name.lower() == ref.lower()), None)


@given(
    typed_scenes(), st.sets(st.sampled_from(["Apple", "Mug", "Bowl", "apple", "Apple_1", "Cup"]))
)
def test_of_types_and_object_types_are_a_scan_of_the_objects(scene, types):
    assert scene.of_types(types) == [o for o in scene if o.type in types]
    assert scene.object_types() == {o.type for o in scene}
    assert scene.display_names() == [o.name for o in scene]


@given(typed_scenes(), st.data())
def test_find_is_the_first_object_by_id_or_display_name(scene, data):
    refs = [o.id for o in scene] + [o.name for o in scene] + [o.name.upper() for o in scene]
    ref = data.draw(st.sampled_from([*refs, "Apple", "apple_1", "Cup|0", "Mug|99"]))
    assert scene.find(ref) is _scan_find(scene, ref)


def test_tables_follow_reindex_and_an_unindexed_object_is_unknown_everywhere():
    s = Scene(tiny())
    extra = {"objectId": "Apple|0", "objectType": "Apple", "position": {"x": 0.0, "z": 0.0}}
    s.data["objects"].append(extra)
    # Not reindexed yet: no table knows it, as objects and resolve do not.
    assert len(s.of_types({"Apple"})) == 1 and s.find("Apple|0") is None
    s.reindex()
    assert [o.id for o in s.of_types({"Apple"})] == ["Apple|1", "Apple|0"]
    assert s.find("apple_1").id == "Apple|0" and s.find("Apple|1").name == "Apple_2"
    assert s.display_names() == ["Apple_2", "Mug_2", "Mug_1", "Apple_1"]
    s.data["objects"][:] = [o for o in s.data["objects"] if o["objectType"] != "Mug"]
    s.reindex()
    assert s.of_types({"Mug"}) == [] and s.object_types() == {"Apple"}
    assert s.find("Mug|a") is None and s.find("mug_1") is None


def test_find_after_ids_alike_takes_the_first():
    s = Scene(tiny())
    s.data["objects"].append(dict(s.data["objects"][1], position={"x": 9.0, "z": 9.0}))
    s.reindex()  # two objects named Mug|b: objects added after validation are not checked
    assert s.find("Mug|b") is s.objects[1]
    assert s.find("Mug|a") is s.objects[2]


def test_scene_objects_and_people_are_equal_by_value_not_hashable():
    from bt_raider.perception.scene import Human, SceneObject
    from bt_raider.perception.tools import Place

    raw = {"objectId": "Apple|1", "objectType": "Apple", "position": {"x": 0, "y": 0, "z": 0}}
    a, b = SceneObject(dict(raw), "Apple"), SceneObject(dict(raw), "Apple")
    assert a == b and a in [b] and a != SceneObject(dict(raw), "Apple_2")
    b.raw["isOpen"] = True  # the dict is live: equality follows it
    assert a != b
    assert Human({"id": "p1"}) == Human({"id": "p1"}) != Human({"id": "p2"})
    assert a != Human(raw)
    for thing in (a, Human({"id": "p1"})):
        with pytest.raises(TypeError):
            hash(thing)
    # A place is its name, wherever a scene put it.
    assert Place("door", (0.0, 0.0, 0.0)) == Place("door", (1.0, 0.0, 0.0))
    assert len({Place("door", (0.0, 0.0, 0.0)), Place("door", (2.0, 0.0, 0.0))}) == 1
    assert Place("door", (0.0, 0.0, 0.0)) != Place("bed", (0.0, 0.0, 0.0))
