"""What a scene may hold (perception/validation.py, values.py): finite numbers in range, shapes,
depth, and reading a scene file without trusting it (perception/scene_file.py: regular files
only, size cap, UTF-8, digits).

Every test builds its scene in code: nothing here needs ../shared.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bt_raider.errors import SceneError
from bt_raider.perception import validation
from bt_raider.perception.scene import Scene
from bt_raider.perception.scene_file import read_scene_json
from bt_raider.perception.validation import MAX_DEPTH, validate_scene
from bt_raider.perception.values import MAX_MAGNITUDE, as_number, as_vector, as_xyz, box_corners

NAN, INF = math.nan, math.inf


def full() -> dict[str, Any]:
    """A scene with every numeric field the format knows, all valid."""
    return {
        "objects": [
            {
                "objectId": "Apple|1",
                "objectType": "Apple",
                "position": {"x": 0.5, "y": 0.9, "z": 0.2},
                "rotation": {"x": 0.0, "y": 90.0, "z": 0.0},
                "axisAlignedBoundingBox": {
                    "center": {"x": 0.5, "y": 0.95, "z": 0.2},
                    "size": {"x": 0.1, "y": 0.1, "z": 0.1},
                    "cornerPoints": [[0.45, 0.9, 0.15], [0.55, 1.0, 0.25]],
                },
                "objectOrientedBoundingBox": {"cornerPoints": [[0.45, 0.9, 0.15]]},
                "distance": 0.54,
                "mass": 0.2,
                "pickupable": True,
            },
            {
                "objectId": "Box|2",
                "objectType": "Box",
                "position": {"x": -0.5, "y": 0.9, "z": 0.2},
                "axisAlignedBoundingBox": {"cornerPoints": [[-0.6, 0.8, 0.1], [-0.4, 1.0, 0.3]]},
            },
        ],
        "agent": {
            "position": {"x": 0.0, "y": 0.9, "z": 0.0},
            "rotation": {"x": 0.0, "y": 0.0, "z": 0.0},
            "cameraHorizon": 0.0,
        },
        "robot": {"reach": 1.1, "handover_distance": 0.5, "arms": 1},
        "humans": [
            {
                "id": "person_1",
                "name": "Ann",
                "position": {"x": 0.0, "y": 0.0, "z": 0.4},
                "looking_at_robot": True,
                "hands_free": True,
            }
        ],
        "locations": {"counter": {"x": 1.0, "z": 2.0}},
    }


def setter(*path: Any) -> Callable[[dict[str, Any], Any], None]:
    def put(data: dict[str, Any], value: Any) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return put


#: (field path, the text the refusal must name). Every numeric field of the format.
FIELDS = [
    (("objects", 0, "position", "x"), "objects[0].position.x"),
    (("objects", 0, "position", "y"), "objects[0].position.y"),
    (("objects", 0, "position", "z"), "objects[0].position.z"),
    (("objects", 0, "rotation", "y"), "objects[0].rotation.y"),
    (("objects", 0, "axisAlignedBoundingBox", "center", "x"), "axisAlignedBoundingBox.center.x"),
    (("objects", 0, "axisAlignedBoundingBox", "size", "z"), "axisAlignedBoundingBox.size.z"),
    (("objects", 1, "axisAlignedBoundingBox", "cornerPoints", 1, 2), "cornerPoints[1][2]"),
    (("objects", 0, "objectOrientedBoundingBox", "cornerPoints", 0, 0), "cornerPoints[0][0]"),
    (("objects", 0, "distance"), "objects[0].distance"),
    (("objects", 0, "mass"), "objects[0].mass"),
    (("agent", "position", "x"), "agent.position.x"),
    (("agent", "position", "z"), "agent.position.z"),
    (("agent", "rotation", "y"), "agent.rotation.y"),
    (("agent", "cameraHorizon"), "agent.cameraHorizon"),
    (("robot", "reach"), "robot.reach"),
    (("robot", "handover_distance"), "robot.handover_distance"),
    (("robot", "arms"), "robot.arms"),
    (("humans", 0, "position", "x"), "humans[0].position.x"),
    (("humans", 0, "position", "z"), "humans[0].position.z"),
    (("locations", "counter", "x"), "locations.counter.x"),
    (("locations", "counter", "z"), "locations.counter.z"),
]


def test_the_full_scene_is_valid():
    validate_scene(full(), "s.json")  # the baseline every refusal below departs from


@pytest.mark.parametrize("value", [NAN, INF, -INF], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("path, named", FIELDS, ids=[f[1] for f in FIELDS])
def test_a_non_finite_number_is_refused_naming_the_field(path, named, value):
    data = full()
    setter(*path)(data, value)
    with pytest.raises(SceneError) as err:
        Scene(data, source="s.json")
    msg = str(err.value)
    assert msg.startswith("s.json: ") and named in msg
    assert ("nan" in msg or "inf" in msg) and "finite" in msg


GEOMETRY = [f for f in FIELDS if "mass" not in f[1] and "robot.arms" not in f[1]]


@pytest.mark.parametrize("value", [1e308, -1e5, 10**400], ids=["1e308", "-1e5", "10**400"])
@pytest.mark.parametrize("path, named", GEOMETRY, ids=[f[1] for f in GEOMETRY])
def test_geometry_out_of_range_is_refused(path, named, value):
    data = full()
    setter(*path)(data, value)
    with pytest.raises(SceneError) as err:
        Scene(data, source="s.json")
    msg = str(err.value)
    assert named in msg and len(msg) < 300  # a 400-digit number is summarised, not printed


def test_a_number_at_the_bound_is_accepted():
    data = full()
    data["agent"]["position"]["x"] = MAX_MAGNITUDE
    data["objects"][0]["mass"] = 1e308  # not geometry: only finite
    Scene(data)


@pytest.mark.parametrize(
    "path, value, named",
    [
        (("robot", "reach"), 0, "robot.reach"),
        (("robot", "reach"), -1, "robot.reach"),
        (("robot", "handover_distance"), 0.0, "robot.handover_distance"),
        (("robot", "arms"), 0, "robot.arms"),
        (("robot", "arms"), 1.5, "robot.arms"),
        (("robot", "arms"), 65, "robot.arms"),
        (("objects", 0, "distance"), -1, "objects[0].distance"),
        (("objects", 0, "axisAlignedBoundingBox", "size", "x"), -0.1, "size"),
        (("objects", 0, "position", "x"), True, "objects[0].position.x"),
        (("objects", 0, "position", "x"), "0.5", "objects[0].position.x"),
        (("agent", "rotation", "y"), None, "agent.rotation.y"),
        (("humans", 0, "looking_at_robot"), NAN, "humans[0].looking_at_robot"),
        (("humans", 0, "hands_free"), 1, "humans[0].hands_free"),
        (("humans", 0, "id"), NAN, "humans[0].id"),
        (("objects", 0, "axisAlignedBoundingBox"), "big", "axisAlignedBoundingBox"),
        (("objects", 1, "axisAlignedBoundingBox", "cornerPoints", 0), [1, 2], "cornerPoints[0]"),
    ],
)
def test_values_out_of_their_domain_are_refused(path, value, named):
    data = full()
    setter(*path)(data, value)
    with pytest.raises(SceneError, match=r"^s\.json: ") as err:
        validate_scene(data, "s.json")
    assert named in str(err.value)


def test_an_objects_refusal_names_its_id():
    data = full()
    data["objects"][1]["position"]["z"] = NAN
    with pytest.raises(SceneError, match=r"objectId 'Box\|2' at objects\[1\]\.position\.z"):
        validate_scene(data, "s.json")


def test_nesting_deeper_than_the_limit_is_refused_without_recursion():
    data = full()
    deep: list[Any] = []
    node = deep
    for _ in range(5 * MAX_DEPTH):
        node.append([])
        node = node[0]
    data["extra"] = deep
    with pytest.raises(SceneError, match=f"nested deeper than {MAX_DEPTH} levels"):
        validate_scene(data, "s.json")
    data["extra"] = [[[1.0]]]  # shallow extensions are fine
    validate_scene(data, "s.json")


# --------------------------------------------------------------------------- reading values live
@pytest.mark.parametrize(
    "mutate, read",
    [
        (
            setter(
                "objects",
                0,
                "position",
                "x",
            ),
            lambda s: s.by_id("Apple|1").position,
        ),
        (setter("agent", "position", "z"), lambda s: s.agent_position),
        (setter("agent", "rotation", "y"), lambda s: s.right_vector()),
        (setter("robot", "reach"), lambda s: s.robot),
        (setter("humans", 0, "position", "x"), lambda s: s.humans[0].position),
        (setter("locations", "counter", "z"), lambda s: s.locations),
        (
            setter("objects", 0, "axisAlignedBoundingBox", "center", "y"),
            lambda s: s.by_id("Apple|1").bbox(),
        ),
        (setter("objects", 0, "pickupable"), lambda s: s.by_id("Apple|1").flag("pickupable")),
        (setter("humans", 0, "looking_at_robot"), lambda s: s.humans[0].looking_at_robot),
        # The plain-float readers the checks use refuse the same values.
        (setter("objects", 0, "position", "x"), lambda s: s.by_id("Apple|1").xyz),
        (setter("agent", "position", "z"), lambda s: s.agent_xyz),
        (setter("agent", "rotation", "y"), lambda s: s.right_xz()),
        (setter("agent", "rotation", "y"), lambda s: s.heading_xz()),
        (setter("humans", 0, "position", "x"), lambda s: s.humans[0].xyz),
        (setter("locations", "counter", "z"), lambda s: s.location_points),
        (setter("locations", "counter", "z"), lambda s: s.xyz_of("counter")),
        (
            setter("objects", 0, "axisAlignedBoundingBox", "size", "x"),
            lambda s: s.by_id("Apple|1").box_corners(),
        ),
    ],
)
def test_a_value_changed_after_loading_is_refused_where_it_is_read(mutate, read):
    scene = Scene(full())
    read(scene)  # fine before the change
    mutate(scene.data, NAN)
    with pytest.raises(SceneError):
        read(scene)


def test_readers_accept_numpy_numbers_and_refuse_the_rest():
    assert as_number(np.float32(1.5), "v") == 1.5 and as_number(np.int64(2), "v") == 2.0
    assert as_vector({"x": np.float64(1), "z": 2}, "p").tolist() == [1.0, 0.0, 2.0]
    assert as_xyz({"x": np.float32(1), "y": np.int8(3), "z": 2}, "p") == (1.0, 3.0, 2.0)
    assert box_corners({"center": {"x": 0, "z": 0}, "size": {"x": 2, "z": 4}}, "b") == (
        (-1.0, 0.0, -2.0),
        (1.0, 0.0, 2.0),
    )
    for bad in ({"x": 1}, {"x": 1, "z": "2"}, [1, 2, 3], {"x": NAN, "z": 0}):
        with pytest.raises(SceneError, match="^p"):
            as_xyz(bad, "p")
    for bad in (NAN, "1", None, True, 10**400, [1]):
        with pytest.raises(SceneError, match="^v: "):
            as_number(bad, "v")


# --------------------------------------------------------------------------- reading files
def write(tmp_path: Path, content: bytes | str, name: str = "scene.json") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def test_a_valid_file_with_a_utf8_bom_loads(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbf" + json.dumps(full()).encode())
    assert len(Scene.load(path)) == 2


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("\ufeff{}".encode("utf-16"), "UTF-16"),
        (json.dumps(full()).encode("utf-16-le"), "UTF-16"),
        (bytes(range(256)) * 4, "not UTF-8"),
        (b'{"objects": []}\xff', "byte 0xff at offset 15"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"objects": [], "n": ' + "7" * 5000 + "}", "an integer of 5000 digits"),
        ('{"objects": [], "n": 1' + "0" * 400 + "}", "an integer of 401 digits"),
        (
            '{"objects": [], "agent": {"position": {"x": 1' + "0" * 300 + ', "z": 0}}}',
            "agent.position.x: must be a finite number from -10000 to 10000, got an integer",
        ),
        ('{"objects": [], "agent": {"position": {"x": NaN, "z": 0}}}', "agent.position.x"),
        ('{"objects": [], "agent": {"position": {"x": 1e400, "z": 0}}}', "got inf"),
        ('{"objects": [], "agent": {"position": {"x": -Infinity, "z": 0}}}', "got -inf"),
        ("", "not JSON"),
    ],
    ids=[
        "utf16-bom",
        "utf16-le",
        "binary",
        "bad-byte",
        "deep",
        "5000-digits",
        "401-digits",
        "301-digit-coordinate",
        "NaN",
        "1e400",
        "-Infinity",
        "empty",
    ],
)
def test_bad_files_are_one_scene_error_naming_the_file(tmp_path, content, fragment):
    path = write(tmp_path, content)
    with pytest.raises(SceneError) as err:
        Scene.load(path)
    msg = str(err.value)
    assert msg.startswith(str(path)) and fragment in msg and len(msg) < 400


def test_the_size_cap_refuses_before_reading_and_can_be_raised(tmp_path):
    path = write(tmp_path, json.dumps(full()))
    size = path.stat().st_size
    with pytest.raises(SceneError, match=r"over the limit of 100 bytes.*--max-scene-bytes"):
        Scene.load(path, max_bytes=100)
    assert len(Scene.load(path, max_bytes=size)) == 2


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(SceneError, match="it is a directory"):
        read_scene_json(tmp_path)


def _loads_within(path: Path, seconds: float = 5.0) -> BaseException | None:
    """Scene.load(path) in a thread: the exception it raised; fails the test if it blocks."""
    box: list[BaseException | None] = []

    def run() -> None:
        try:
            Scene.load(path)
            box.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"Scene.load({path}) blocked for {seconds} s"
    return box[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "scene.json"
    os.mkfifo(fifo)
    exc = _loads_within(fifo)
    assert isinstance(exc, SceneError) and "named pipe" in str(exc)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_device_is_refused_without_reading_it():
    exc = _loads_within(Path("/dev/zero"))
    assert isinstance(exc, SceneError) and "character device" in str(exc)


def test_a_missing_file_and_a_bad_path_are_scene_errors(tmp_path):
    with pytest.raises(SceneError, match="cannot read scene file"):
        Scene.load(tmp_path / "nope.json")
    with pytest.raises(SceneError, match="cannot read scene file"):
        Scene.load("bad\0path.json")


def test_validation_leaves_a_valid_scene_unchanged():
    data = full()
    before = copy.deepcopy(data)
    Scene(data)
    assert data == before


@pytest.mark.parametrize("path", [("objects", 0, "mass"), ("agent", "position", "x")])
def test_an_integer_too_long_to_print_is_refused_in_one_short_line(path):
    data = full()
    setter(*path)(data, 10**5000)  # str() of it would raise: over 4,300 digits
    with pytest.raises(SceneError, match="an integer of about 5000 digits") as err:
        validate_scene(data, "s.json")
    assert len(str(err.value)) < 200


# --------------------------------------------------------------------------- checks told in bulk
# validate_scene clears a common scene in bulk (_numbers_fine, _object_fine) and walks it value
# by value only when that is not certain. The walk alone is the reference: whatever the document,
# both ways refuse it with the same message, or both accept it.
def outcome(check: Callable[[], None]) -> str | None:
    try:
        check()
    except SceneError as exc:
        return str(exc)
    return None


def walk_only(check: Callable[[], None]) -> str | None:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(validation, "_numbers_fine", lambda data: False)
        m.setattr(validation, "_object_fine", lambda obj: False)
        return outcome(check)


KEYS = st.sampled_from(
    [
        "position",
        "rotation",
        "size",
        "distance",
        "locations",
        "cornerPoints",
        "center",
        "axisAlignedBoundingBox",
        "cameraHorizon",
        "x",
        "y",
        "z",
        "mass",
        "objects",
        "n",
    ]
)
NUMBERS = st.one_of(
    st.floats(),  # NaN and the infinities included
    st.floats(-2e4, 2e4),
    st.integers(-(10**5), 10**5),
    st.sampled_from(
        [0.0, -0.0, 1e4, -1e4, 10000.000000000002, 1e308, -1e308, 10**400, -(10**400), 2**1024]
    ),
)
SCALARS = NUMBERS | st.booleans() | st.text(max_size=2) | st.none()
ODD = st.sampled_from([np.float64("nan"), np.float64(2.0), np.int64(-3), (1.0, NAN), True])
VALUES = st.recursive(
    SCALARS | ODD,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=24,
)
#: Lists of dicts with the same keys in the same order: the shape of a scene's objects.
TABLES = st.lists(KEYS, min_size=1, max_size=4, unique=True).flatmap(
    lambda keys: st.lists(
        st.lists(VALUES, min_size=len(keys), max_size=len(keys)).map(
            lambda row: dict(zip(keys, row, strict=True))
        ),
        min_size=1,
        max_size=5,
    )
)
DOCUMENTS = st.dictionaries(KEYS, VALUES | TABLES, max_size=5)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
@example({"locations": {"size": {"x": -1.0}}})  # a place called "size" may be below 0
@example({"n": [{"size": {"x": -1.0}}, {"size": {"x": 1.0}}]})  # an object's size may not
@example({"n": [[1.0, 2.0], [3.0, NAN]]})  # rows, as cornerPoints
@example({"size": [-1.0], "n": {"distance": [[-1.0, 0.0]]}})  # items under a size key
@example({"position": [10**400], "mass": 1e308, "distance": -0.0})
def test_numbers_are_judged_in_bulk_as_the_walk_judges_them(document):
    def check() -> None:
        validation._check_numbers(document, "s.json")

    assert outcome(check) == walk_only(check)


@pytest.mark.parametrize("extra", range(-3, 3))
@pytest.mark.parametrize("leaf", [1.0, NAN])
def test_nesting_near_the_limit_is_judged_as_the_walk_judges_it(extra, leaf):
    deep: Any = [leaf]
    for _ in range(MAX_DEPTH + extra - 1):
        deep = [deep]
    data = {**full(), "extra": deep}

    def check() -> None:
        validate_scene(data, "s.json")

    assert outcome(check) == walk_only(check)


OBJECT_FIELDS = st.sampled_from(
    [
        "objectId",
        "objectType",
        "position",
        "axisAlignedBoundingBox",
        "pickupable",
        "visible",
        "isOpen",
        "parentReceptacles",
        "receptacleObjectIds",
        "mass",
    ]
)
#: Near misses of each field first (a y that is a bool, a row of two), then anything.
FIELD_VALUES = st.one_of(
    st.sampled_from(
        [
            {"x": 1.0, "z": 2.0},
            {"x": 1, "y": True, "z": 0},
            {"x": 1.0, "y": None, "z": 0.0},
            {"x": 1.0},
            {"center": {"x": 0, "z": 0}},
            {"center": {"x": 0, "z": 0}, "size": {"x": 1, "z": "1"}},
            {"cornerPoints": [[0.0, 1.0, 2.0], [1, 2]]},
            {"cornerPoints": [[0.0, 1.0, 2.0]] * 8},
            {"cornerPoints": [[0.0, 1.0, np.float64(2.0)]]},
            ["Fridge|1"],
            ["Fridge|1", 3],
            [],
            "",
            "Apple|1",
            1,
            True,
        ]
    ),
    VALUES,
)


@settings(max_examples=300)
@given(st.lists(st.dictionaries(OBJECT_FIELDS, FIELD_VALUES, max_size=4), max_size=3))
@example([{"position": {"x": 1, "y": True, "z": 0}}])
@example([{"isOpen": 1}, {"visible": None}])
@example([{"receptacleObjectIds": ["Fridge|1", 3]}])
@example([{"axisAlignedBoundingBox": {"cornerPoints": [[0.0, 1.0, 2.0], [1, 2]]}}])
@example([{"objectId": "Box|2"}])  # a duplicate id
def test_objects_are_judged_fast_as_the_checks_judge_them(changes):
    data = full()
    for i, change in enumerate(changes):
        data["objects"][i % 2].update(change)

    def check() -> None:
        validate_scene(data, "s.json")

    assert outcome(check) == walk_only(check)


def test_a_valid_scene_is_cleared_in_bulk(small_kitchen_dict):
    """The fast ways are the ones taken (else the checks above prove nothing about speed)."""
    for data in (full(), small_kitchen_dict):
        assert validation._numbers_fine(data)
        assert all(validation._object_fine(obj) for obj in data["objects"])


def _one_object_scene(**fields: Any) -> dict[str, Any]:
    obj = {"objectId": "Apple|1", "objectType": "Apple", "position": {"x": 0.3, "y": 0.9, "z": 0.3}}
    return {"objects": [{**obj, **fields}], "user_info": []}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"objectType": "A" * 257}, "objectType"),
        ({"objectId": "x" * 10_000}, "objectId"),
        ({"color": "red" * 100}, "color"),
        ({"parentReceptacles": ["Table|1", "T" * 300]}, "parentReceptacles[1]"),
    ],
)
def test_names_longer_than_the_limit_are_refused_naming_the_field(fields, field):
    with pytest.raises(SceneError, match=rf"objects\[0\]\.{re.escape(field)}: [\d,]+ characters"):
        validate_scene(_one_object_scene(**fields), "s.json")
    # A name at the limit passes.
    validate_scene(_one_object_scene(objectType="A" * validation.MAX_NAME_CHARS), "s.json")


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=validation.MAX_NAME_CHARS + 1, max_value=200_000))
def test_a_name_of_any_length_past_the_limit_is_refused_at_once(n):
    scene = _one_object_scene(objectType="A" * n)
    with pytest.raises(SceneError, match=f"over the limit of {validation.MAX_NAME_CHARS}"):
        validate_scene(scene, "s.json")
    scene = {**_one_object_scene(), "user_info": ["x" * (validation.MAX_INFO_CHARS + n)]}
    with pytest.raises(SceneError, match=r"user_info\[0\]"):
        validate_scene(scene, "s.json")
