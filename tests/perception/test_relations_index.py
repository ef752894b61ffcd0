"""The spatial index answers exactly what the relation rules answer, object by object.

``related`` reads a :class:`~bt_raider.perception.spatial.SpatialIndex`: in plain Python (a
grid of cells) below ``NUMPY_FROM`` objects, else with numpy (a vectorised radius query, a
KD-tree once several anchors share it, vectorised box tests). These tests hold both paths to the
definitions of ``docs/scene-format.md`` section 2, written out here in plain arithmetic, and to
the pair-by-pair rule (:func:`relations.related_brute_force`) on random small scenes, the
threshold forced either way.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.errors import BtRaiderError, ToolError
from bt_raider.perception import relations, spatial
from bt_raider.perception.scene import Scene

TYPES = ("Apple", "Bowl", "Mug", "CounterTop", "Cabinet", "Knife")
GEOMETRIC = ("left_of", "right_of", "near", "next_to", "above", "below")
EVERY = (*GEOMETRIC, "on_top_of", "inside", "closest_to", "blocking")


def _object(i: int, otype: str, x: float, y: float, z: float, size: tuple | None) -> dict:
    d = {
        "objectId": f"{otype}|{i}",
        "objectType": otype,
        "position": {"x": x, "y": y, "z": z},
    }
    if size is not None:
        d["axisAlignedBoundingBox"] = {
            "center": {"x": x, "y": y, "z": z},
            "size": {"x": size[0], "y": size[1], "z": size[2]},
        }
    return d


@st.composite
def scenes(draw: st.DrawFn, coordinate: st.SearchStrategy[float], yaws: st.SearchStrategy[float]):
    """A scene of 1-14 objects, some with boxes, some resting in or on others, maybe blocked."""
    n = draw(st.integers(1, 14))
    sizes = st.one_of(st.none(), st.tuples(*[st.sampled_from((0.1, 0.25, 0.5, 1.0))] * 3))
    objects = []
    for i in range(n):
        otype = draw(st.sampled_from(TYPES))
        x, z = draw(coordinate), draw(coordinate)
        y = draw(st.sampled_from((0.0, 0.25, 0.5, 0.9, 1.0)))
        objects.append(_object(i, otype, x, y, z, draw(sizes)))
    for o in objects:  # receptacle links, from either side
        if draw(st.booleans()):
            parent = draw(st.sampled_from(objects))
            if parent is not o:
                side = draw(st.booleans())
                if side:
                    o["parentReceptacles"] = [parent["objectId"]]
                else:
                    parent.setdefault("receptacleObjectIds", []).append(o["objectId"])
    data = {
        "objects": objects,
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": -3.0}, "rotation": {"y": draw(yaws)}},
    }
    if draw(st.booleans()):
        blocked = draw(st.sampled_from(objects))["objectId"]
        data["blocked"] = {blocked: [draw(st.sampled_from(objects))["objectId"]]}
    return Scene(data)


# Positions on a quarter-metre grid and right-angle headings: boundaries (exactly 0.5 m,
# exactly 1.0 m, exactly touching boxes) come up often and the arithmetic is exact.
grid = scenes(
    st.integers(-8, 8).map(lambda k: k * 0.25), st.sampled_from((0.0, 90.0, 180.0, 270.0))
)
# Any finite coordinates and headings: the index must round exactly as the rule does.
anywhere = scenes(
    st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False),
    st.floats(0.0, 360.0, allow_nan=False, allow_infinity=False),
)
# On and around the edges of the plain-Python grid's cells, at the rules' own distances apart:
# a neighbour exactly 1.0 or 0.5 m away in the next cell must still be found.
edges = scenes(
    st.builds(
        lambda k, d: k * spatial.CELL + d,
        st.integers(-3, 3),
        st.sampled_from((0.0, 1e-12, -1e-12, 0.25, -0.25, 0.5, -0.5, 1.0, -1.0)),
    ),
    st.sampled_from((0.0, 90.0, 180.0, 270.0)),
)
#: NUMPY_FROM forced so that every scene takes the plain-Python path, or the numpy path.
PATHS = {"python": sys.maxsize, "numpy": 0}


@contextmanager
def numpy_from(threshold: int) -> Iterator[None]:
    saved = spatial.NUMPY_FROM
    spatial.NUMPY_FROM = threshold
    try:
        yield
    finally:
        spatial.NUMPY_FROM = saved


def _by_definition(scene: Scene, rel: str, y) -> set[str]:
    """The format doc's rule, in plain arithmetic (no code of relations.py)."""
    yaw = math.radians(scene.agent_yaw)
    rx, rz = math.cos(yaw), -math.sin(yaw)
    yp = y.raw["position"]
    out = set()
    for x in scene.objects:
        if x.id == y.id:
            continue
        xp = x.raw["position"]
        dx, dz = xp["x"] - yp["x"], xp["z"] - yp["z"]
        dist = math.hypot(dx, dz)
        side = dx * rx + dz * rz
        if rel in ("near", "next_to"):
            ok = dist <= 0.5
        elif rel == "right_of":
            ok = dist <= 1.0 and side > 0.05
        elif rel == "left_of":
            ok = dist <= 1.0 and side < -0.05
        else:
            top, bottom = (x, y) if rel == "above" else (y, x)
            ok = _stacked(top, bottom)
        if ok:
            out.add(x.id)
    return out


def _box(o) -> tuple[list[float], list[float]] | None:
    box = o.raw.get("axisAlignedBoundingBox")
    if not box:
        return None
    c, s = box["center"], box["size"]
    return ([c[k] - s[k] / 2 for k in "xyz"], [c[k] + s[k] / 2 for k in "xyz"])


def _stacked(top, bottom) -> bool:
    """``top``'s box higher than ``bottom``'s (resting contact of 2 cm allowed), overlapping in x, z."""
    bt, bb = _box(top), _box(bottom)
    if bt is None or bb is None:
        return False
    overlap = all(bt[0][i] < bb[1][i] and bb[0][i] < bt[1][i] for i in (0, 2))
    return overlap and bt[0][1] >= bb[1][1] - 0.02


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(grid, edges), st.sampled_from(sorted(PATHS)))
def test_indexed_relations_match_the_format_docs_definitions(scene, path):
    with numpy_from(PATHS[path]):
        for rel in GEOMETRIC:
            for y in scene.objects:
                found = {o.id for o in relations.related(scene, rel, y)}
                assert found == _by_definition(scene, rel, y), (path, rel, y.id)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(grid, anywhere, edges), st.sampled_from(sorted(PATHS)))
def test_indexed_relations_match_the_pair_by_pair_rule_in_order(scene, path):
    # Outside a scope each call indexes afresh (numpy: vectorised); inside one, every anchor
    # after the second reads the same index (numpy: a KD-tree): all must give the rule's
    # answer, in scene order.
    expected = {
        (rel, y.id): [o.id for o in relations.related_brute_force(scene, rel, y)]
        for rel in EVERY
        for y in scene.objects
    }
    with numpy_from(PATHS[path]):
        for rel in EVERY:
            for y in scene.objects:
                got = [o.id for o in relations.related(scene, rel, y)]
                assert got == expected[rel, y.id], (path, rel, y.id)
        with relations.indexed(scene):
            for rel in EVERY:
                for y in scene.objects:
                    got = [o.id for o in relations.related(scene, rel, y)]
                    assert got == expected[rel, y.id], (path, rel, y.id)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(grid, anywhere, edges), st.sampled_from(sorted(PATHS)), st.data())
def test_expected_anchors_get_the_rules_answers(scene, path, data):
    # expect() answers the neighbourhoods of many anchors in one pass (numpy: one KD-tree
    # query); each answer, and those of anchors it was not told of, is still the rule's.
    told = data.draw(st.lists(st.sampled_from(scene.objects), max_size=6))
    with numpy_from(PATHS[path]):
        for rel in EVERY:
            with relations.indexed(scene):
                relations.expect(scene, rel, told)
                for y in scene.objects:
                    got = [o.id for o in relations.related(scene, rel, y)]
                    want = [o.id for o in relations.related_brute_force(scene, rel, y)]
                    assert got == want, (path, rel, y.id)


def test_expect_is_a_hint_that_never_fails():
    objects = [_object(i, "Apple", 0.2 * i, 0.9, 0.0, None) for i in range(4)]
    scene = Scene({"objects": objects})
    relations.expect(scene, "near", scene.objects)  # outside indexed(): nothing to prepare
    with numpy_from(0), relations.indexed(scene):
        relations.expect(scene, "no such relation", scene.objects)
        relations.expect(scene, "inside", scene.objects)  # read from links: nothing to do
        relations.expect(scene, "near", [*scene.objects, object(), scene.objects[0]])
        for y in scene.objects:
            got = [o.id for o in relations.related(scene, "near", y)]
            assert got == [o.id for o in relations.related_brute_force(scene, "near", y)]
            assert len(got) in (2, 3)


@settings(max_examples=60, deadline=None)
@given(grid)
def test_receptacle_relations_match_the_parent_links(scene):
    for y in scene.objects:
        resting = {
            x.id
            for x in scene.objects
            if x.id != y.id and (y.id in x.parents or x.id in y.children)
        }
        inside = {o.id for o in relations.related(scene, "inside", y)}
        on_top = {o.id for o in relations.related(scene, "on_top_of", y)}
        assert inside | on_top == resting
        assert not (inside and on_top)
        assert (inside == resting) == (relations.is_container(y) or not resting)


def test_a_scene_moved_outside_a_scope_is_read_again():
    a = _object(0, "Apple", 0.0, 0.9, 0.0, None)
    b = _object(1, "Bowl", 3.0, 0.9, 0.0, None)
    scene = Scene({"objects": [a, b], "agent": {"position": {"x": 0.0, "y": 0.9, "z": -2.0}}})
    bowl = scene.by_id("Bowl|1")
    assert relations.related(scene, "near", bowl) == []
    a["position"] = {"x": 2.8, "y": 0.9, "z": 0.0}
    assert [o.id for o in relations.related(scene, "near", bowl)] == ["Apple|0"]
    with relations.indexed(scene) as index:
        assert relations.index_of(scene) is index
        with relations.indexed(scene) as inner:  # scopes nest and share one index
            assert inner is index
        assert relations.index_of(scene) is index
    assert relations.index_of(scene) is not index  # the scope ended: nothing is kept


def test_a_person_is_an_anchor_for_distance_relations_only():
    a = _object(0, "Apple", 0.0, 0.9, 0.0, (0.1, 0.1, 0.1))
    scene = Scene(
        {
            "objects": [a],
            "agent": {"position": {"x": 0.0, "y": 0.9, "z": -2.0}},
            "humans": [{"id": "h1", "position": {"x": 0.3, "y": 0.0, "z": 0.0}}],
        }
    )
    person = scene.human("h1")
    assert [o.id for o in relations.related(scene, "near", person)] == ["Apple|0"]
    assert [o.id for o in relations.related(scene, "left_of", person)] == ["Apple|0"]
    for rel in ("above", "below", "on_top_of", "inside"):
        assert relations.related(scene, rel, person) == []


def test_positions_outside_the_fast_path_are_read_one_by_one():
    # Whole numbers (valid AI2-THOR JSON) skip the batch read; the answer must not change.
    a = _object(0, "Apple", 0, 0.9, 0, None)
    b = _object(1, "Bowl", 0.3, 0.9, 0.0, None)
    scene = Scene({"objects": [a, b], "agent": {"position": {"x": 0.0, "y": 0.9, "z": -2.0}}})
    assert [o.id for o in relations.related(scene, "near", scene.by_id("Bowl|1"))] == ["Apple|0"]
    assert [o.id for o in relations.related(scene, "left_of", scene.by_id("Bowl|1"))] == ["Apple|0"]


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_position_that_is_not_finite_is_refused_on_either_path(path):
    # A duck-typed scene (no raw dicts, no validation): the index meets the NaN and refuses
    # as the rule does, never answering without the object.
    class Thing:
        def __init__(self, name: str, x: float, z: float) -> None:
            self.name = self.id = name
            self.position = (x, 0.9, z)

    class Room:
        objects = [Thing("a", math.nan, 0.0), Thing("b", 0.2, 0.0), Thing("c", 0.0, 0.0)]

        def right_xz(self) -> tuple[float, float]:
            return 1.0, 0.0

    room = Room()
    a, c = room.objects[0], room.objects[2]
    with numpy_from(PATHS[path]):
        for rel in ("near", "left_of", "right_of", "closest_to"):
            with pytest.raises(ToolError, match="distance between"):
                relations.related(room, rel, c)  # a NaN among the others
            with pytest.raises(ToolError, match="distance between"):
                relations.related(room, rel, a)  # the anchor's own position


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_duck_typed_scene_rests_things_through_its_own_links(path):
    # Objects of a user's perception: no raw dicts, their own parents and children.
    class Thing:
        def __init__(self, name: str, parents=(), children=()) -> None:
            self.name = self.id = self.type = name
            self.position = (0.0, 0.9, 0.0)
            self.parents, self.children = list(parents), list(children)

        def flag(self, key: str) -> bool:
            return False

    class Room:
        blocked: dict = {}
        objects = [
            Thing("cup", parents=["table"]),
            Thing("pen"),
            Thing("table", children=["pen", "cup"]),
            Thing("book", parents=["table", "shelf"]),
            Thing("shelf"),
        ]

    room = Room()
    with numpy_from(PATHS[path]), relations.indexed(room):
        for y in room.objects:
            for rel in ("on_top_of", "inside", "blocking"):
                got = [o.id for o in relations.related(room, rel, y)]
                assert got == [o.id for o in relations.related_brute_force(room, rel, y)]
        on_table = [o.id for o in relations.related(room, "on_top_of", room.objects[2])]
        assert on_table == ["cup", "pen", "book"]


def test_a_small_scene_is_related_without_numpy():
    # bt-raider check on a room must not pay numpy's import: every relation, in and out of a
    # scope, on a scene below NUMPY_FROM objects, in a fresh interpreter.
    objects = [
        _object(i, TYPES[i % len(TYPES)], (i % 7) * 0.3, 0.9, (i // 7) * 0.3, (0.2, 0.2, 0.2))
        for i in range(40)
    ]
    objects[1]["parentReceptacles"] = [objects[3]["objectId"]]
    data = {"objects": objects, "agent": {"position": {"x": 0.0, "y": 0.9, "z": -3.0}}}
    code = f"""
import json, sys
from bt_raider.perception import relations, spatial
from bt_raider.perception.scene import Scene
scene = Scene(json.loads({json.dumps(json.dumps(data))}))
assert len(scene.objects) < spatial.NUMPY_FROM
found = 0
for rel in relations.RELATIONS:
    for y in scene.objects:
        found += len(relations.related(scene, rel, y))
with relations.indexed(scene):
    for rel in relations.RELATIONS:
        for y in scene.objects:
            found += len(relations.related(scene, rel, y))
print(found, sorted(m for m in ("numpy", "scipy") if m in sys.modules))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    found, loaded = out.stdout.strip().split(" ", 1)
    assert int(found) > 0
    assert loaded == "[]"


# ---------------------------------------------------------------------- among some objects
def _among_by_rule(scene, rel: str, y, among) -> list[str]:
    """The whole scene's answer kept to ``among`` (closest_to: the nearest of ``among``)."""
    if rel == "closest_to":
        pool = [o for o in among if o.id != y.id]
        return [relations.closest(scene, pool, y).id] if pool else []
    ids = {o.id for o in among}
    return [o.id for o in relations.related_brute_force(scene, rel, y) if o.id in ids]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(grid, anywhere, edges), st.sampled_from(sorted(PATHS)), st.data())
def test_relations_among_some_objects_are_the_rules_answers_kept_to_them(scene, path, data):
    # "Which apple is left of the bowl": the scene's answer restricted to the apples, in scene
    # order, asked alone, inside a scope (one index per list of objects) and after expect().
    kinds = data.draw(st.sets(st.sampled_from(TYPES), min_size=1))
    among = scene.of_types(kinds)
    told = data.draw(st.lists(st.sampled_from(scene.objects), max_size=6))
    with numpy_from(PATHS[path]):
        # The rule's answers once (the oracle is most of the cost), for both passes.
        wanted = {
            (rel, y.id): _among_by_rule(scene, rel, y, among)
            for rel in EVERY
            for y in scene.objects
        }
        for rel in EVERY:
            for y in scene.objects:
                want = wanted[rel, y.id]
                assert [o.id for o in relations.related(scene, rel, y, among)] == want
        with relations.indexed(scene):
            for rel in EVERY:
                relations.expect(scene, rel, told, among)
                for y in scene.objects:
                    got = [o.id for o in relations.related(scene, rel, y, among)]
                    assert got == wanted[rel, y.id], (path, rel, y.id)


def test_a_scope_keeps_one_index_per_list_of_objects():
    objects = [_object(i, ("Apple", "Bowl")[i % 2], 0.2 * i, 0.9, 0.0, None) for i in range(6)]
    scene = Scene({"objects": objects})
    apples, bowls = scene.of_type("Apple"), scene.of_type("Bowl")
    with relations.indexed(scene) as whole:
        of_apples = relations.index_of(scene, apples)
        assert relations.index_of(scene, list(apples)) is of_apples  # the same objects
        assert relations.index_of(scene, bowls) is not of_apples
        assert relations.index_of(scene) is whole
        assert of_apples.objects == apples and of_apples.partial and not whole.partial
    assert relations.index_of(scene, apples) is not of_apples  # nothing kept after the scope


def _far_apart() -> dict:
    """Apples beside a bowl, a mug 50 m away, a second bowl 20 m away with nothing near it."""
    objects = [
        _object(0, "Apple", -0.3, 0.9, 0.0, (0.1, 0.1, 0.1)),
        _object(1, "Bowl", 0.0, 0.9, 0.0, (0.2, 0.1, 0.2)),
        _object(2, "Apple", 0.3, 0.9, 0.0, (0.1, 0.1, 0.1)),
        _object(3, "Mug", 50.0, 0.9, 50.0, (0.1, 0.1, 0.1)),
        _object(4, "Apple", 20.0, 0.9, 20.5, (0.1, 0.1, 0.1)),
        _object(5, "Bowl", 20.0, 0.9, 20.0, (0.2, 0.1, 0.2)),
    ]
    objects[2]["parentReceptacles"] = ["Bowl|1"]
    # Yaw 0: the robot's right vector is +x.
    return {"objects": objects, "agent": {"position": {"x": 0.0, "y": 0.9, "z": -2.0}}}


def _spoil(scene: Scene, object_id: str, key: str = "x") -> None:
    # In place, after validation, as a simulated world or a perception glitch would.
    scene.by_id(object_id).raw["position"][key] = math.nan


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("rel", ["left_of", "right_of", "near", "next_to", "closest_to"])
def test_a_nan_among_the_candidates_is_refused_even_far_from_the_anchor(path, rel):
    # The apple 20 m away is no neighbour of Bowl|1, but it is one of the objects asked about:
    # its position is a number the answer rests on, so the answer is refused, never [].
    scene = Scene(_far_apart())
    _spoil(scene, "Apple|4", "z")
    apples = scene.of_type("Apple")
    with numpy_from(PATHS[path]):
        with pytest.raises(BtRaiderError, match="Apple"):
            relations.related(scene, rel, scene.by_id("Bowl|1"), apples)
        with relations.indexed(scene), pytest.raises(BtRaiderError, match="Apple"):
            relations.expect(scene, rel, scene.of_type("Bowl"), apples)
            relations.related(scene, rel, scene.by_id("Bowl|1"), apples)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("rel", ["left_of", "right_of", "near", "next_to", "closest_to"])
def test_a_nan_in_the_anchor_is_refused_among_some_objects(path, rel):
    scene = Scene(_far_apart())
    _spoil(scene, "Bowl|1")
    with numpy_from(PATHS[path]), pytest.raises(BtRaiderError, match="Bowl"):
        relations.related(scene, rel, scene.by_id("Bowl|1"), scene.of_type("Apple"))


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_nan_outside_the_objects_asked_about_is_not_read(path):
    # The mug is not an apple: no number of it enters "which apple is left of the bowl", so the
    # answer stands (the same as with the mug intact); asked about every object, the mug is
    # one of them and the relation is refused.
    scene = Scene(_far_apart())
    bowl, apples = scene.by_id("Bowl|1"), scene.of_type("Apple")
    with numpy_from(PATHS[path]):
        intact = {
            rel: [o.id for o in relations.related(scene, rel, bowl, apples)]
            for rel in relations.RELATIONS
        }
        _spoil(scene, "Mug|3")
        for rel in relations.RELATIONS:
            assert [o.id for o in relations.related(scene, rel, bowl, apples)] == intact[rel]
        assert intact["left_of"] == ["Apple|0"] and intact["right_of"] == ["Apple|2"]
        assert intact["inside"] == ["Apple|2"] and intact["closest_to"] == ["Apple|0"]
        for rel in ("left_of", "near", "closest_to"):
            with pytest.raises(BtRaiderError, match="Mug"):
                relations.related(scene, rel, bowl)


def test_blocking_among_some_objects_keeps_only_them():
    data = _far_apart()
    data["blocked"] = {"Bowl|1": ["Mug|3", "Apple|0"]}
    scene = Scene(data)
    bowl = scene.by_id("Bowl|1")
    assert [o.id for o in relations.related(scene, "blocking", bowl)] == [
        "Mug|3",
        "Apple|0",
        "Apple|2",
    ]
    got = relations.related(scene, "blocking", bowl, scene.of_type("Apple"))
    assert [o.id for o in got] == ["Apple|0", "Apple|2"]
    assert relations.related(scene, "blocking", bowl, []) == []


def _large_scene(n: int) -> Scene:
    """``n`` objects on a 5 cm grid over four square metres: many neighbours within 1 m."""
    import random

    rng = random.Random(7)
    objects = [
        _object(
            i,
            TYPES[i % len(TYPES)],
            rng.randrange(-20, 21) * 0.05,
            (0.0, 0.5, 0.9)[i % 3],
            rng.randrange(-20, 21) * 0.05,
            (0.1, 0.1, 0.1) if i % 2 else None,
        )
        for i in range(n)
    ]
    agent = {"position": {"x": 0.0, "y": 0.9, "z": -3.0}, "rotation": {"y": 0.0}}
    return Scene({"objects": objects, "agent": agent})


def _answers_in_one_scope(scene: Scene, anchors: list) -> tuple[dict, spatial.SpatialIndex]:
    """Every radius relation of every anchor, asked as a check does (one shared index)."""
    radius_relations = ("near", "next_to", "left_of", "closest_to")
    with relations.indexed(scene):
        index = spatial.index_of(scene)
        out = {}
        for rel in radius_relations:
            relations.expect(scene, rel, anchors)
            for y in anchors:
                out[rel, y.id] = [o.id for o in relations.related(scene, rel, y)]
    return out, index


def test_a_large_scene_without_scipy_gets_the_kd_trees_answers_from_numpy(monkeypatch):
    # scipy is not in the core install: a large scene must not crash there, and the numpy pass
    # that replaces the KD-tree must find the very same objects.
    pytest.importorskip("scipy.spatial")
    scene = _large_scene(2 * spatial.NUMPY_FROM)
    anchors = scene.objects[:: len(scene.objects) // 40]
    with_tree, index = _answers_in_one_scope(scene, anchors)
    assert index.large and index._tree is not None  # the KD-tree path ran
    monkeypatch.setitem(sys.modules, "scipy.spatial", None)  # import scipy.spatial fails
    with pytest.raises(ImportError):
        from scipy.spatial import cKDTree  # noqa: F401
    without, index = _answers_in_one_scope(scene, anchors)
    assert index.large and index._tree is None and index._no_tree  # the numpy path ran
    assert without == with_tree
    assert sum(map(len, without.values())) > 10 * len(without)  # crowded: real answers
    for y in anchors[:5]:  # and both are the rule's
        want = [o.id for o in relations.related_brute_force(scene, "near", y)]
        assert without["near", y.id] == want


def test_the_numpy_pass_and_the_kd_tree_find_the_same_rows(monkeypatch):
    pytest.importorskip("scipy.spatial")
    scene = _large_scene(3 * spatial.NUMPY_FROM)
    points = [(x * 0.1, z * 0.1) for x in range(-12, 13, 3) for z in range(-12, 13, 4)]
    kd = spatial.SpatialIndex(scene)
    kd.expect(points, 1.0)  # many points: the KD-tree answers them in one pass
    assert kd._tree is not None
    monkeypatch.setitem(sys.modules, "scipy.spatial", None)
    plain = spatial.SpatialIndex(scene)
    plain.expect(points, 1.0)  # a hint only: without scipy nothing is prepared
    for radius in (0.5, 1.0):
        for x, z in points:
            got = list(plain.within(x, z, radius))
            assert got == list(kd.within(x, z, radius)), (x, z, radius)
    assert plain._tree is None and plain._no_tree
