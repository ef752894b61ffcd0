"""Issue 34, "Why": the seams a newcomer hit. ``RaiderGuard(scene="file.json")`` failed every
check; ``run_tree(world=robot, trace=...)`` crashed on a robot keeping a ``log`` list of tuples;
explanations said "Glass_2" where questions said "the full glass"; a typo in ``blocked`` cleared
a hazard. Each failed on main."""

from __future__ import annotations

import json

import pytest

from bt_raider import (
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
    run_tree,
)
from bt_raider.errors import SceneError
from tests.bt_raider.domain.care_home import ACTIONS, Act, CareRobot, Status, lounge, thing, tick


def two_glasses():
    return lounge(
        people=[],
        objects=[
            thing("Glass|1", "Glass", 0.3, 0.3, pickupable=True, canFillWithLiquid=True,
                  isFilledWithLiquid=True),
            thing("Glass|2", "Glass", -0.3, 0.3, pickupable=True, canFillWithLiquid=True),
        ],
    )  # fmt: skip


def test_a_guard_loads_its_scene_from_a_file_path(tmp_path):
    path = tmp_path / "lounge.json"
    path.write_text(json.dumps(lounge(people=[])))
    robot = CareRobot(lounge(people=[]))
    node = Act("PickUp", ["PillOrganiser"], robot)
    guard = RaiderGuard(node, "PickUp(PillOrganiser)", SymbolicReasoner(), scene=str(path))
    statuses = tick(guard)
    assert statuses[0] is Status.RUNNING and statuses[-1] is Status.SUCCESS
    assert guard.verdict.ok and robot.did("PickUp") == [["PillOrganiser|1"]]
    # A pathlib.Path works the same.
    assert RaiderGuard(Act("x", [], robot), "PickUp(PillOrganiser)", SymbolicReasoner(),
                       scene=path).scene.objects  # fmt: skip


def test_a_missing_scene_file_is_refused_in_one_line(tmp_path):
    with pytest.raises(SceneError) as err:
        RaiderGuard(Act("x", [], CareRobot(lounge())), "PickUp(PillOrganiser)",
                    SymbolicReasoner(), scene=str(tmp_path / "nope.json"))  # fmt: skip
    assert "nope.json" in str(err.value) and "\n" not in str(err.value)


def test_a_trace_records_a_user_robot_that_keeps_its_own_log(tmp_path):
    robot = CareRobot(lounge(people=[]))
    assert robot.log == []  # a list of (action, args) tuples: the user's own format
    node = Act("PickUp", ["PillOrganiser"], robot)
    guard = RaiderGuard(node, "PickUp(PillOrganiser)", SymbolicReasoner(), scene=robot.observe)
    trace = tmp_path / "trace.json"
    result = run_tree(guard, world=robot, trace=trace, timeout=20)
    assert result.status is Status.SUCCESS
    data = json.loads(trace.read_text())
    assert "PickUp(PillOrganiser|1)" in json.dumps(data)


def test_explanations_name_objects_as_questions_do():
    robot = CareRobot(two_glasses())
    human = ScriptedHuman(["the full glass"])
    guard = RaiderGuard(
        Act("PickUp", ["Glass"], robot),
        "PickUp(Glass)",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human, actions=ACTIONS),
    )
    assert tick(guard)[-1] is Status.SUCCESS
    assert "the full glass" in human.transcript[0].text  # the question's words
    assert robot.did("PickUp") == [["Glass|1"]]
    # The explanation (the guard's feedback, the trace) uses the same words for Glass_1.
    without = RaiderGuard(
        Act("PickUp", ["Glass"], robot), "PickUp(Glass)", SymbolicReasoner(), scene=two_glasses()
    )
    assert tick(without)[-1] is Status.FAILURE
    assert "Glass_1 (the full glass)" in without.feedback_message, without.feedback_message


def test_a_typo_in_blocked_never_clears_the_hazard():
    scene = lounge(people=[], blocked={"coridor": ["Door|corridor"]})
    with pytest.raises(SceneError, match="'coridor' is not a place.*did you mean 'corridor'"):
        RaiderGuard(Act("NavigateTo", ["corridor"], CareRobot(lounge())), "NavigateTo(corridor)",
                    SymbolicReasoner(), scene=scene)  # fmt: skip
    # From a robot's observe(): the check fails closed, the robot never drives.
    robot = CareRobot(scene)
    node = Act("NavigateTo", ["corridor"], robot)
    guard = RaiderGuard(node, "NavigateTo(corridor)", SymbolicReasoner(), scene=robot.observe)
    assert tick(guard)[-1] is Status.FAILURE
    assert robot.log == [] and node.status is Status.INVALID
    assert "coridor" in guard.feedback_message
