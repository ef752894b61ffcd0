"""The action rules the contract decides (bt_raider.checking.action_rules).

REFLECT-style judgements: a running appliance must be turned off before it is opened, or
anything is put in or taken out; a Microwave, like a CoffeeMachine and a Toaster, holds one
dish. And the target of an ``approach`` is never its own obstacle, however the query is worded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bt_raider
from bt_raider.perception.relations import RUNNING_APPLIANCE_TYPES, SINGLE_SLOT_TYPES

MEDICINE = Path(__file__).parents[3] / "examples" / "medicine_delivery" / "scene.json"


def appliance(kind: str, *, running: bool, is_open: bool, holds: list[str]) -> dict[str, Any]:
    """A scene: the robot, an appliance of ``kind`` 0.6 m ahead, a bowl in the hand (2 arms)."""
    objects: list[dict[str, Any]] = [
        {
            "objectId": f"{kind}|1",
            "objectType": kind,
            "position": {"x": 0.0, "y": 0.9, "z": 0.6},
            "openable": kind == "Microwave",
            "toggleable": True,
            "receptacle": True,
            "isOpen": is_open,
            "isToggled": running,
            "receptacleObjectIds": list(holds),
        },
        {
            "objectId": "Bowl|1",
            "objectType": "Bowl",
            "position": {"x": 0.0, "y": 0.9, "z": 0.3},
            "pickupable": True,
            "receptacle": True,
            "isPickedUp": True,
        },
    ]
    for oid in holds:
        objects.append(
            {
                "objectId": oid,
                "objectType": oid.split("|")[0],
                "position": {"x": 0.0, "y": 0.9, "z": 0.6},
                "pickupable": True,
                "parentReceptacles": [f"{kind}|1"],
            }
        )
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "robot": {"arms": 2},
        "inventoryObjects": [{"objectId": "Bowl|1", "objectType": "Bowl"}],
        "objects": objects,
    }


def test_opening_a_running_microwave_is_wrong_state_turn_it_off_first():
    scene = appliance("Microwave", running=True, is_open=False, holds=[])
    for query in ("open(Microwave)", "open the microwave", "(open robot microwave)"):
        verdict = bt_raider.check(scene, query)
        assert verdict.category.value == "wrong_state", query
        assert verdict.explanation == (
            "The Microwave is running (turned on): turn it off first, then open it."
        )
    scene = appliance("Microwave", running=False, is_open=False, holds=[])
    verdict = bt_raider.check(scene, "open the microwave")
    assert verdict.ok and "the Microwave is not running" in verdict.explanation


@pytest.mark.parametrize("kind", ["Microwave", "Toaster", "CoffeeMachine"])
def test_placing_into_a_running_appliance_is_wrong_state(kind):
    scene = appliance(kind, running=True, is_open=True, holds=[])
    verdict = bt_raider.check(scene, f"place(Bowl, {kind})")
    assert verdict.category.value == "wrong_state"
    assert verdict.explanation == (
        f"The {kind} is running (turned on): turn it off first, then place the Bowl in it."
    )
    scene = appliance(kind, running=False, is_open=True, holds=[])
    assert bt_raider.check(scene, f"place(Bowl, {kind})").ok


def test_taking_out_of_a_running_microwave_is_wrong_state():
    scene = appliance("Microwave", running=True, is_open=True, holds=["Plate|1"])
    verdict = bt_raider.check(scene, "take the plate out of the microwave")
    assert verdict.category.value == "wrong_state"
    assert "turn it off first, then take the Plate out" in verdict.explanation


@pytest.mark.parametrize("kind", ["Microwave", "Toaster", "CoffeeMachine"])
def test_a_one_dish_appliance_that_holds_one_is_obstructed(kind):
    scene = appliance(kind, running=False, is_open=True, holds=["Plate|1"])
    verdict = bt_raider.check(scene, f"place(Bowl, {kind})")
    assert verdict.category.value == "obstructed"
    assert verdict.explanation == (
        f"The {kind} is occupied by a Plate: it holds one item at a time."
    )
    assert "Microwave" in SINGLE_SLOT_TYPES


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["Microwave", "Toaster", "CoffeeMachine"]),
    running=st.booleans(),
    is_open=st.booleans(),
    full=st.booleans(),
)
def test_placing_into_an_appliance_follows_the_contracts_order(kind, running, is_open, full):
    scene = appliance(kind, running=running, is_open=is_open, holds=["Plate|1"] if full else [])
    verdict = bt_raider.check(scene, f"put the bowl in the {kind.lower()}")
    closed = kind == "Microwave" and not is_open
    # wrong_state (closed, or running) comes before obstructed (full), which comes before none.
    if closed or (running and kind in RUNNING_APPLIANCE_TYPES):
        assert verdict.category.value == "wrong_state"
        assert ("turn it off first" in verdict.explanation) == (running and not closed)
    elif full:
        assert verdict.category.value == "obstructed"
    else:
        assert verdict.ok


# --------------------------------------------------------------------------- approach
PHRASINGS = [
    "go to the medicine counter",
    "approach(medicine_counter)",
    "GoTo(medicine_counter)",
    "move_to(medicine_counter)",
    "(goto tiago medicine_counter)",
    "navigate to the medicine counter",
]


def test_every_phrasing_of_going_to_the_counter_gives_one_check():
    scene = json.loads(MEDICINE.read_text())
    verdicts = [bt_raider.check(scene, q) for q in PHRASINGS]
    first = verdicts[0]
    assert first.category.value == "obstructed"
    assert first.explanation == (
        "The path to the medicine_counter is blocked by a Chair: it cannot be approached."
    )
    for query, verdict in zip(PHRASINGS, verdicts, strict=True):
        assert (verdict.category, verdict.explanation, verdict.objects) == (
            first.category,
            first.explanation,
            first.objects,
        ), query
        assert list(verdict.grounding.values()) == [["medicine_counter"]], query


def test_the_destination_is_never_its_own_obstacle():
    scene = json.loads(MEDICINE.read_text())
    chair = "Chair|-00.55|+00.00|-01.40"
    scene["blocked"] = {chair: [chair], "Chair": [chair]}
    for query in ("go to the chair", "approach(Chair)", f"approach({chair})"):
        verdict = bt_raider.check(scene, query)
        assert verdict.ok, (query, verdict.explanation)
        assert "the Chair itself is no obstacle" in verdict.explanation
    for o in scene["objects"]:
        if o["objectId"] == chair:
            o.update(pickupable=True, position={"x": 0.0, "y": 0.0, "z": -1.6})  # in reach
    verdict = bt_raider.check(scene, "pick(Chair)")
    assert verdict.ok, verdict.explanation  # not "blocked by a Chair"
