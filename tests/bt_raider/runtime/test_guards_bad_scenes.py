"""A guard fails closed on a scene the reasoner cannot use: the child never ticks.

The child is a plain ``py_trees`` behaviour written here (a team's own action node), the scene
an AI2-THOR metadata dict built here; the checks are the real symbolic reasoner's. Each tick
asserts the guard's and the child's status.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.perception.scene import Scene
from bt_raider.runtime.guards import RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
WAIT_S = 10.0
CUP = "Cup|+00.20|+00.90|+00.50"


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


class Grasp(py_trees.behaviour.Behaviour):
    """A team's own grasp node: counts the ticks it gets (it must get none on a bad scene)."""

    def __init__(self) -> None:
        super().__init__("Grasp cup")
        self.ticks = 0

    def update(self) -> Status:
        self.ticks += 1
        return Status.SUCCESS


def kitchen() -> dict[str, Any]:
    """A cup on a counter, in reach of the robot."""
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "robot": {"reach": 1.1, "handover_distance": 0.5, "arms": 1},
        "objects": [
            {
                "objectId": CUP,
                "objectType": "Cup",
                "position": {"x": 0.2, "y": 0.9, "z": 0.5},
                "pickupable": True,
                "parentReceptacles": ["CounterTop|1"],
            },
            {
                "objectId": "CounterTop|1",
                "objectType": "CounterTop",
                "position": {"x": 0.0, "y": 0.85, "z": 0.5},
                "receptacle": True,
                "receptacleObjectIds": [CUP],
            },
        ],
        "inventoryObjects": [],
    }


def run_guard(scene: Any) -> tuple[RaiderGuard, Grasp, list[tuple[Status, Status]]]:
    """Tick a guard around a fresh Grasp until it finishes; (guard, child, statuses per tick)."""
    child = Grasp()
    guard = RaiderGuard(child, "pick(Cup)", SymbolicReasoner(), scene=scene)
    seen: list[tuple[Status, Status]] = []
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        guard.tick_once()
        seen.append((guard.status, child.status))
        if guard.status is not R:
            return guard, child, seen
        time.sleep(0.005)
    raise AssertionError(f"the guard did not finish in {WAIT_S} s: {seen[-3:]}")


def test_the_baseline_scene_lets_the_child_run():
    guard, child, seen = run_guard(lambda: Scene(kitchen()))
    assert seen[0] == (R, I) and seen[-1] == (S, S) and child.ticks == 1


def _nan_in_dict(path: tuple[Any, ...]) -> Callable[[], Scene]:
    def observe() -> Scene:
        data = kitchen()
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = math.nan
        return Scene(data)  # refused: SceneError on the worker

    return observe


def _nan_after_loading(path: tuple[Any, ...]) -> Callable[[], Scene]:
    scene = Scene(kitchen())

    def observe() -> Scene:
        node = scene.data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = math.nan  # a perception update after validation
        return scene

    return observe


FIELDS = [
    ("agent", "position", "x"),
    ("objects", 0, "position", "z"),
    ("robot", "reach"),
    ("agent", "rotation", "y"),
]


@pytest.mark.parametrize("path", FIELDS, ids=[".".join(map(str, p)) for p in FIELDS])
@pytest.mark.parametrize("make", [_nan_in_dict, _nan_after_loading], ids=["dict", "after-load"])
def test_a_nan_in_the_scene_fails_the_guard_and_never_ticks_the_child(make, path):
    guard, child, seen = run_guard(make(path))
    assert all(c is I for _, c in seen), seen  # the child never ran
    assert [g for g, _ in seen[:-1]] == [R] * (len(seen) - 1) and seen[-1] == (F, I)
    assert child.ticks == 0 and child.status is I
    verdict = py_trees.blackboard.Blackboard.get(guard.key)
    assert verdict["category"] == "unknown" and verdict["final_response"] == "unfeasibility"
    named = ".".join(str(k) for k in path[-2:] if not isinstance(k, int))
    assert "nan" in guard.feedback_message and named in verdict["explanation"]


def test_a_scene_callable_returning_a_dict_with_nan_fails_closed():
    data = kitchen()
    data["objects"][0]["position"]["x"] = math.nan
    guard, child, seen = run_guard(lambda: Scene.from_dict(copy.deepcopy(data)))
    assert seen[-1] == (F, I) and child.ticks == 0
