"""Scene.copy through a pickle round trip: a deep copy as copy.deepcopy makes, types kept."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bt_raider.errors import SceneError
from bt_raider.perception.scene import Scene, copy_data
from bt_raider.simulation.simworld import SimWorld


def tiny(**extra) -> dict:
    return {
        "objects": [
            {"objectId": "Apple|1", "objectType": "Apple", "position": {"x": 1, "y": 1, "z": 0}},
            {"objectId": "Mug|a", "objectType": "Mug", "position": {"x": 0, "y": 1, "z": 3}},
        ],
        "agent": {"position": {"x": 0, "y": 0.9, "z": 0}, "rotation": {"y": 0}},
        **extra,
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=30,
)


@given(value=json_values)
def test_copy_data_equals_deepcopy_and_shares_nothing(value):
    copied = copy_data({"v": value})
    assert copied == copy.deepcopy({"v": value})
    stack = [(copied, {"v": value})]
    while stack:  # no container of the copy is one of the original's
        a, b = stack.pop()
        if isinstance(a, (dict, list)):
            assert a is not b
            a, b = (list(a.values()), list(b.values())) if isinstance(a, dict) else (a, b)
            stack.extend(zip(a, b, strict=True))


def test_copy_data_keeps_types_and_shared_references_as_deepcopy_does():
    shared = {"x": 1.0}
    data = {"a": shared, "b": shared, "t": (1, 2), "n": np.float64(0.5), "s": {3}}
    copied = copy_data(data)
    assert copied["a"] is copied["b"] and copied["a"] is not shared
    assert type(copied["n"]) is np.float64 and type(copied["t"]) is tuple
    assert copied == data


def test_what_does_not_pickle_is_deep_copied():
    data = {"fn": lambda: 1, "list": [1, [2]]}  # a lambda does not pickle; deepcopy keeps it
    copied = copy_data(data)
    assert copied["fn"] is data["fn"] and copied["list"] == [1, [2]]
    assert copied["list"] is not data["list"] and copied["list"][1] is not data["list"][1]


def test_a_copy_is_validated_again_unless_the_caller_vouches_for_it():
    scene = Scene(tiny())
    scene.data["objects"][0]["position"]["x"] = math.nan  # changed by hand after validation
    with pytest.raises(SceneError, match="nan"):
        scene.copy()
    trusted = scene.copy(validate=False)
    assert math.isnan(trusted.data["objects"][0]["position"]["x"])
    assert trusted.name_of("Mug|a") == "Mug" and trusted.source == scene.source
    trusted.data["objects"][1]["isOpen"] = True
    assert "isOpen" not in scene.data["objects"][1]


def test_the_world_observes_an_independent_snapshot():
    world = SimWorld(Scene(tiny()))
    seen = world.observe()
    world.move_object("Apple|1", (2.0, 0.5))
    assert seen.by_id("Apple|1").xyz[0] == 1 and world.scene.by_id("Apple|1").xyz[0] == 2.0
    assert world.observe().by_id("Apple|1").xyz[0] == 2.0
