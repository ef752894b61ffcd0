"""Issue 34, "Why": questions a person should not be asked. The robot does itself what its own
actions can do (OpenDoor, NavigateTo); a policy says who may be asked what. Failed on main."""

from __future__ import annotations

from bt_raider.recovery.robot_actions import RobotActions
from tests.bt_raider.domain.care_home import (
    ACTIONS,
    Status,
    guarded,
    lounge,
    person,
    thing,
    tick,
)

RESIDENTS = [
    person("h1", "Ana", 0.4, 0.3, role="resident"),
    person("h2", "Bob", -0.4, 0.3, role="resident"),
]
GLASSES = thing("ReadingGlasses|1", "ReadingGlasses", 3.0, 3.0, pickupable=True)


def test_a_closed_door_on_the_route_is_opened_with_the_robots_own_opendoor():
    for people in (RESIDENTS, []):
        scene = lounge(people=people, blocked={"corridor": ["Door|corridor"]})
        guard, node, robot, human = guarded(
            "NavigateTo(corridor)", "NavigateTo", ["corridor"], scene, ["ok"] * 3
        )
        statuses = tick(guard)
        assert statuses[-1] is Status.SUCCESS, guard.feedback_message
        assert node.status is Status.SUCCESS
        assert human.transcript == []  # nobody asked to move the door
        assert ("OpenDoor", ["Door|corridor"]) in robot.log
        assert robot.log[-1] == ("NavigateTo", ["corridor"])


def test_an_item_out_of_reach_is_fetched_with_navigateto_not_by_a_resident():
    scene = lounge(people=RESIDENTS, objects=[GLASSES])
    guard, node, robot, human = guarded(
        "PickUp(ReadingGlasses)", "PickUp", ["ReadingGlasses"], scene, ["ok"] * 3
    )
    statuses = tick(guard)
    assert statuses[-1] is Status.SUCCESS, guard.feedback_message
    assert human.transcript == []
    assert robot.log == [
        ("NavigateTo", ["ReadingGlasses|1"]),
        ("PickUp", ["ReadingGlasses|1"]),
    ]


def test_a_resident_is_never_sent_to_fetch_things():
    """A robot without NavigateTo, only a resident in sight: nobody is asked; it fails with why."""
    scene = lounge(people=[RESIDENTS[0]], objects=[GLASSES])
    guard, node, robot, human = guarded(
        "PickUp(ReadingGlasses)",
        "PickUp",
        ["ReadingGlasses"],
        scene,
        ["ok"] * 3,
        actions=["PickUp", "PutDown", "HandTo"],
    )
    statuses = tick(guard)
    assert statuses[-1] is Status.FAILURE and robot.log == []
    assert [e for e in human.transcript if e.kind == "ask"] == []
    assert "nobody here may fetch it" in guard.feedback_message


def test_staff_may_be_asked_to_fetch_things():
    scene = lounge(people=[person("h3", "Tom", 0.4, 0.3, role="staff")], objects=[GLASSES])
    guard, node, robot, human = guarded(
        "PickUp(ReadingGlasses)",
        "PickUp",
        ["ReadingGlasses"],
        scene,
        ["here you are"] * 3,
        actions=["PickUp", "PutDown", "HandTo"],
        policy={"ask": {"staff": ["*"]}},
    )
    tick(guard)
    assert [e.text for e in human.transcript if e.kind == "ask"][0] == (
        "Could you bring the ReadingGlasses closer to me, please?"
    )


def test_nobody_is_asked_to_move_a_door_when_nobody_is_there():
    """A robot without OpenDoor, nobody in sight, a declared policy: no question into the void."""
    scene = lounge(people=[], blocked={"corridor": ["Door|corridor"]}, policy={"absent": "fail"})
    guard, node, robot, human = guarded(
        "NavigateTo(corridor)",
        "NavigateTo",
        ["corridor"],
        scene,
        ["ok"] * 3,
        actions=["NavigateTo", "PickUp", "PutDown"],
    )
    assert tick(guard)[-1] is Status.FAILURE
    assert [e for e in human.transcript if e.kind == "ask"] == [] and robot.log == []


def test_a_drawer_is_opened_with_opendrawer_and_a_door_skill_never_opens_it():
    drawer = thing(
        "Drawer|1",
        "Drawer",
        0.3,
        0.4,
        openable=True,
        isOpen=False,
        receptacle=True,
        receptacleObjectIds=["Pills|1"],
    )
    pills = thing("Pills|1", "Pills", 0.3, 0.4, pickupable=True, parentReceptacles=["Drawer|1"])
    scene = lounge(people=[], objects=[drawer, pills])
    guard, node, robot, human = guarded(
        "PickUp(Pills)", "PickUp", ["Pills"], scene, [], actions=[*ACTIONS, "OpenDrawer"]
    )
    tick(guard)
    assert ("OpenDrawer", ["Drawer|1"]) in robot.log
    assert not [args for name, args in robot.log if name == "OpenDoor"]
    skills = RobotActions.from_names(ACTIONS)
    assert skills.name_for("open", kind="Drawer") is None
    assert skills.name_for("open", kind="Door") == "OpenDoor"
