"""The care-home example (issue 34) with plain py_trees behaviours and a robot written here."""

from __future__ import annotations

import json
import time
import warnings

import py_trees
import pytest

from bt_raider import ActionState, Progress, RaiderGuard, ScriptedHuman
from bt_raider.errors import SceneWarning
from bt_raider.examples import care_home
from bt_raider.perception.scene import Scene

Status = py_trees.common.Status


class HomeRobot:
    """The home's robot: its own action names; its perception is the lounge file, updated."""

    def __init__(self) -> None:
        self.scene = json.loads(care_home.SCENE.read_text())
        self.log: list[tuple[str, list[str]]] = []

    def start(self, action, args):
        args = [str(a) for a in args]
        self.log.append((action, args))
        objects = {o["objectId"]: o for o in self.scene["objects"]}
        places = self.scene["locations"]
        if action == "NavigateTo":
            where = places.get(args[0]) or objects.get(args[0], {}).get("position")
            if where is not None:
                self.scene["agent"]["position"] = {"x": where["x"], "y": 0.9, "z": where["z"] - 0.3}
        elif action == "OpenDoor":
            objects[args[0]]["isOpen"] = True
        elif action == "PressButton":
            objects[args[0]]["isToggled"] = True
        elif action == "PickUp":
            self.scene["inventoryObjects"] = [
                {"objectId": args[0], "objectType": objects[args[0]]["objectType"]}
            ]
        return len(self.log)

    def poll(self, handle):
        return Progress(ActionState.SUCCEEDED)

    def cancel(self, handle):
        pass

    def observe(self):
        return self.scene


class Do(py_trees.behaviour.Behaviour):
    """The home's own action node."""

    def __init__(self, action, args, robot):
        super().__init__(f"{action}{tuple(args)}")
        self.action, self.args, self.robot, self.resolved = action, list(args), robot, None

    def retarget(self, resolved):
        self.resolved = resolved

    def initialise(self):
        args = list(self.resolved.args) if self.resolved else self.args
        self.robot.start(self.action, args)

    def update(self):
        return Status.SUCCESS


def run(query, action, args, answers=(), holding=None):
    robot = HomeRobot()
    if holding:
        robot.start("PickUp", [holding])
        robot.log.clear()
    human = ScriptedHuman(list(answers))
    node = Do(action, args, robot)
    guard = RaiderGuard(
        node,
        query,
        care_home.checker(),
        scene=robot.observe,
        recovery=care_home.recovery(robot, human),
    )
    statuses = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        guard.tick_once()
        statuses.append(guard.status)
        if guard.status in (Status.SUCCESS, Status.FAILURE):
            break
        time.sleep(0.003)
    return guard, node, robot, human, statuses


def test_the_lounge_is_a_valid_scene_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SceneWarning)
        scene = Scene.load(care_home.SCENE)
    assert {h.name for h in scene.humans} == {"Ana", "Tom"}


def test_bernadettes_pills_never_go_to_ana():
    guard, node, robot, human, statuses = run(
        "HandTo(PillOrganiser, Bernadette)",
        "HandTo",
        ["PillOrganiser", "Bernadette"],
        ["I'm Ana."],
        holding="PillOrganiser|bernadette",
    )
    assert statuses[-1] is Status.FAILURE and node.status is Status.INVALID
    assert robot.log == [] and [e.kind for e in human.transcript] == ["say"]
    assert "Bernadette is not here" in guard.feedback_message


def test_the_door_is_opened_and_nobody_is_asked():
    guard, node, robot, human, statuses = run("NavigateTo(corridor)", "NavigateTo", ["corridor"])
    assert statuses[-1] is Status.SUCCESS, guard.feedback_message
    assert ("OpenDoor", ["Door|corridor"]) in robot.log and human.transcript == []
    assert robot.log[-1] == ("NavigateTo", ["corridor"])


def test_the_spectacles_are_fetched_by_the_robot_not_by_a_resident():
    guard, node, robot, human, statuses = run("pick up the spectacles", "PickUp", ["glasses"])
    assert statuses[-1] is Status.SUCCESS, guard.feedback_message
    assert robot.log == [("NavigateTo", ["ReadingGlasses|1"]), ("PickUp", ["ReadingGlasses|1"])]
    assert human.transcript == []


def test_the_call_button_is_pressed_as_declared():
    guard, node, robot, human, statuses = run("PressButton(CallButton)", "PressButton", ["x"])
    assert statuses[-1] is Status.SUCCESS, guard.feedback_message
    assert guard.verdict.action == "PressButton"
    assert robot.log == [("PressButton", ["CallButton|1"])]


def test_the_domain_roles_are_derived():
    pytest.importorskip("unified_planning", reason="the pddl extra")
    from unified_planning.io import PDDLReader

    from bt_raider.planners.contracts import derive_contracts

    derived = derive_contracts(PDDLReader().parse_problem(str(care_home.DOMAIN)))
    assert derived.query("(navigate-to tiago lounge corridor corridor_door)") == (
        "navigate-to(corridor)"
    )
