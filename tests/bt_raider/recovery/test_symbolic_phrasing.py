"""The recovery of one obstructed approach does not depend on how the query was worded.

"go to the medicine counter" and ``approach(medicine_counter)`` get one check, so they must get
one question: the person is asked to move the Chair, never the destination itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bt_raider
from bt_raider.perception.scene import Scene
from bt_raider.recovery.contract import RecoveryRequest
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner

MEDICINE = Path(__file__).parents[3] / "examples" / "medicine_delivery" / "scene.json"
ASK = "ask('Could you move the Chair out of the way, please?')"


@pytest.mark.parametrize(
    "query",
    [
        "go to the medicine counter",
        "approach(medicine_counter)",
        "GoTo(medicine_counter)",
        "(goto tiago medicine_counter)",
        "walk to the medicine counter",
    ],
)
def test_every_phrasing_asks_to_move_only_the_chair(query):
    scene = Scene.load(MEDICINE)
    verdict = bt_raider.check(scene, query)
    assert verdict.category.value == "obstructed"
    code = SymbolicRecoveryPlanner().propose(RecoveryRequest(query, verdict, scene=scene))
    assert code.splitlines()[0] == ASK, code
    assert "medicine_counter and" not in code


def test_a_person_target_is_never_asked_to_move_out_of_their_own_way():
    data = json.loads(MEDICINE.read_text())
    data["humans"][0]["name"] = "Adriana"
    data["blocked"]["person_1"] = ["Chair|-00.55|+00.00|-01.40"]
    scene = Scene(data)
    for query in ("go to adriana", "approach(Adriana)", "approach(person_1)"):
        verdict = bt_raider.check(scene, query)
        code = SymbolicRecoveryPlanner().propose(RecoveryRequest(query, verdict, scene=scene))
        assert code.splitlines()[0] == ASK, (query, code)


def test_a_blocker_nothing_tells_apart_is_named_by_where_it_is_never_by_its_label():
    # Found by the explorer (P7, seed 102): "Could you move the Cup_1 and the Chair out of the
    # way, please?", three cups alike, one of them on the way with the chair.
    data = json.loads(MEDICINE.read_text())
    chair = data["blocked"]["medicine_counter"][0]
    cups = []
    for i in range(3):
        cup = {
            "objectId": f"Cup|+0{i}.00|+00.90|-01.00",
            "objectType": "Cup",
            "position": {"x": 0.0, "y": 0.9, "z": -1.0},
            "pickupable": True,
        }
        cups.append(cup)
    data["objects"].extend(cups)
    data["blocked"]["medicine_counter"] = [chair, cups[1]["objectId"]]
    scene = Scene(data)
    verdict = bt_raider.check(scene, "go to the medicine counter")
    assert verdict.category.value == "obstructed"
    code = SymbolicRecoveryPlanner().propose(
        RecoveryRequest("go to the medicine counter", verdict, scene=scene)
    )
    first = code.splitlines()[0]
    assert "Cup_" not in code and "Cup|" not in code, code
    assert first == "ask('Could you move the Chair and the cup in my way out of the way, please?')"
