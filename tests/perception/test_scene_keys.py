"""A typo in the scene contract never removes a hazard (issue 34, "A typo clears a hazard")."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bt_raider.errors import SceneError, SceneWarning
from bt_raider.perception.scene import Scene


def hall(**more):
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": [
            {
                "objectId": "Door|1",
                "objectType": "Door",
                "position": {"x": 0.0, "z": 2.0},
                "openable": True,
            },
            {"objectId": "Box|1", "objectType": "Box", "position": {"x": 1.0, "z": 1.0}},
            {"objectId": "Box|2", "objectType": "Box", "position": {"x": 2.0, "z": 1.0}},
        ],
        "humans": [{"id": "h1", "name": "Ana", "position": {"x": 0.5, "z": 0.5}}],
        "locations": {"corridor": {"x": 0.0, "z": 3.0}, "lounge": {"x": 3.0, "z": 0.0}},
        **more,
    }


def test_a_misspelt_place_in_blocked_is_refused_naming_the_nearest():
    with pytest.raises(SceneError) as err:
        Scene(hall(blocked={"coridor": ["Door|1"]}))
    assert str(err.value) == (
        "<dict>: blocked: 'coridor' is not a place, object or person of the scene; "
        "did you mean 'corridor'?"
    )
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "key", ["corridor", "CORRIDOR", "Door|1", "door", "Box_2", "box 1", "h1", "Ana", "lounge"]
)
def test_every_name_of_the_scene_may_key_blocked(key):
    assert Scene(hall(blocked={key: ["Door|1"]})).blocked == {key: ["Door|1"]}


def test_an_objectid_may_key_an_object_out_of_view():
    """Perception's ids are never typed by hand: one of an object not in view is kept."""
    assert Scene(hall(blocked={"Box|7": ["Door|1"]})).blocked == {"Box|7": ["Door|1"]}


def test_a_hazard_map_under_another_word_is_refused():
    with pytest.raises(SceneError, match=r"'obstacles' is not a key .*did you mean 'blocked'\?"):
        Scene(hall(obstacles={"corridor": ["Door|1"]}))
    with pytest.raises(SceneError, match=r"'blockd' .*did you mean 'blocked'\?"):
        Scene(hall(blockd={"corridor": ["Door|1"]}))


def test_a_key_like_a_known_one_is_a_warning_naming_it():
    data = hall()
    data["people"] = data.pop("humans")
    data["objects"][1]["colour"] = "red"
    data["humans"] = [{"id": "h2", "nmae": "Bo", "position": {"x": 0.0, "z": 1.0}}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Scene(data)
    said = sorted(str(w.message) for w in caught if w.category is SceneWarning)
    assert said == [
        "<dict>: 'people' is not a key of the scene contract; did you mean 'humans'?",
        "<dict>: humans[0]: 'nmae' is not read; did you mean 'name'?",
        "<dict>: objects[1] (Box|1): 'colour' is not read; did you mean 'color'?",
    ]


def test_keys_of_ai2thor_metadata_and_keys_near_nothing_are_left_alone():
    data = hall(sceneName="FloorPlan1", lastAction="Pass", my_notes={"a": 1})
    data["objects"][0].update(mass=2.0, salientMaterials=["Wood"], isMoving=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Scene(data)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["corridor", "lounge", "Door", "Ana"]), st.data())
def test_any_one_letter_slip_in_a_blocked_key_is_refused_or_names_the_same_thing(name, data):
    """Drop, double or swap one letter: the key still names a thing, or it is refused."""
    i = data.draw(st.integers(0, len(name) - 1))
    slip = data.draw(st.sampled_from(["drop", "double", "swap"]))
    typo = {
        "drop": name[:i] + name[i + 1 :],
        "double": name[:i] + name[i] + name[i:],
        "swap": name[:i] + name[i + 1 : i + 2] + name[i : i + 1] + name[i + 2 :],
    }[slip]
    try:
        scene = Scene(hall(blocked={typo: ["Door|1"]}))
    except SceneError as exc:
        assert "is not a place, object or person" in str(exc)
        return
    assert (
        typo.lower().replace("_", "")
        in {
            n.lower().replace("_", "")
            for n in ("corridor", "lounge", "Door|1", "Ana", "door", "h1")
        }
        or typo == name
    ), scene.blocked
