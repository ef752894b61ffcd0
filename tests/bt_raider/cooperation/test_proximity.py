"""REVECA's relative proximity and Algorithm 1 (relevance, then proximity)."""

import pytest

from bt_raider.cooperation.observations import (
    CollaboratorInfo,
    Relevance,
    Sighting,
)
from bt_raider.cooperation.proximity import Proximity, relative_proximity, retrieve
from bt_raider.simulation.multirobot import default_house
from tests.bt_raider.cooperation.reveca_helpers import obj


def test_relative_proximity_is_phrased_for_the_model():
    house = default_house()
    bob = CollaboratorInfo("bob", [Sighting(3, "livingroom", (4.0, 3.0), True)])
    carol = CollaboratorInfo("carol", [Sighting(3, "kitchen", (0.0, 0.0), False)])  # room centre
    p = relative_proximity("kitchen", (12.0, 3.0), ("kitchen", (10.0, 3.0)), [bob, carol], house)
    assert p.mine == pytest.approx(2.0)
    assert p.others["bob"] == pytest.approx(8.0)
    assert p.others["carol"] == pytest.approx(1.0)  # placed at the kitchen's centre (11, 3)
    assert p.closer_than == ["bob"] and p.farther_than == ["carol"]
    assert p.phrase == "I'm closer than Bob and farther than Carol"
    assert Proximity(1.0).phrase == "no collaborator's position is known"


def test_retrieve_is_algorithm_1_relevance_then_proximity():
    house = default_house()
    me = ("kitchen", (10.0, 3.0))
    bob = CollaboratorInfo("bob", [Sighting(0, "livingroom", (1.0, 1.0), True)])
    near_low = obj("1", "banana", pos=(10.5, 3.0), relevance=Relevance.LOW)
    far_strong = obj("2", "apple", room="bedroom", pos=(2.0, 10.0), relevance=Relevance.STRONG)
    near_strong = obj("3", "cupcake", pos=(12.0, 3.0), relevance=Relevance.STRONG)
    bobs_strong = obj("4", "apple", room="livingroom", pos=(1.5, 1.0), relevance=Relevance.STRONG)
    infos = [near_low, far_strong, near_strong, bobs_strong]
    top = retrieve(infos, me, [bob], house, k=3)
    # Strong first; among them, the one I'm closer to than Bob, then the nearer of the two
    # Bob is closer to (livingroom 8.8 m before bedroom 12 m).
    assert [r.info.id for r in top] == ["3", "4", "2"]
    assert top[1].proximity.mine == pytest.approx(2 + 6.8, abs=0.05)
    assert top[0].proximity.closer_than == ["bob"]
    assert [r.info.id for r in retrieve(infos, me, [bob], house, k=2, use_relevance=False)] == [
        "1",
        "3",
    ]
