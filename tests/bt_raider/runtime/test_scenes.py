"""What scene= takes: a Scene, a dict (validated), a callable returning either, or None."""

from __future__ import annotations

import pytest

from bt_raider.errors import SceneError
from bt_raider.perception.scene import Scene
from bt_raider.runtime.scenes import as_scene, read_scene, scene_source

MUG = {"objectId": "Mug|1", "objectType": "Mug", "position": {"x": 0.3, "y": 0.9, "z": 0.4}}


def test_a_dict_is_converted_once_a_scene_or_anything_else_passes_as_is() -> None:
    fixed = scene_source({"objects": [MUG]})
    assert isinstance(fixed, Scene) and fixed.name_of("Mug|1") == "Mug"
    assert read_scene(fixed) is fixed  # read at every check: no conversion again
    scene = Scene.from_dict({"objects": [MUG]})
    assert scene_source(scene) is scene and scene_source(None) is None
    assert as_scene("a PDDL state") == "a PDDL state"  # a checker's own world model


def test_a_callable_is_kept_and_its_dict_converted_when_read() -> None:
    calls = []

    def observe() -> dict:
        calls.append(1)
        return {"objects": [MUG]}

    assert scene_source(observe) is observe and calls == []
    first, second = read_scene(observe), read_scene(observe)
    assert isinstance(first, Scene) and isinstance(second, Scene) and len(calls) == 2


def test_bad_dicts_name_where_they_came_from_and_the_field() -> None:
    with pytest.raises(SceneError, match=r"the scene dict: missing key 'objects'"):
        scene_source({"agent": {}})

    def observe() -> dict:
        return {"objects": [{"objectType": "Mug", "position": {"x": 0, "z": 0}}]}

    with pytest.raises(SceneError, match=r"returned by .*observe\(\): objects\[0\]\.objectId"):
        read_scene(observe)
