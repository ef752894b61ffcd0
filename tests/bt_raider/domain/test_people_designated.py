"""Issue 34, "Why": people are designated, never substituted by whoever answers.

A care-home robot written in the test (``care_home.py``): its own action names, its own plain
py_trees node, its own scene dict. Each test failed on main (801bbfc).
"""

from __future__ import annotations

import pytest

from tests.bt_raider.domain.care_home import (
    Status,
    guarded,
    lounge,
    person,
    tick,
)

PILLS = "PillOrganiser|1"


def run(guard, node):
    """Tick to the end; the guard's and its child's status on every tick."""
    statuses = tick(guard)
    return statuses


def asked(human):
    return [e.text for e in human.transcript if e.kind == "ask"]


def said(human):
    return [e.text for e in human.transcript if e.kind == "say"]


def test_the_pills_never_go_to_someone_else_who_is_in_sight():
    """Bernadette's pills, Bernadette not in sight, Ana is: nobody is asked who they are; the
    robot says Bernadette is not here and fails, and never calls HandTo."""
    scene = lounge(holding=PILLS, people=[person("h1", "Ana", 0.4, 0.3)])
    guard, node, robot, human = guarded(
        "HandTo(PillOrganiser, Bernadette)",
        "HandTo",
        ["PillOrganiser", "Bernadette"],
        scene,
        ["I'm Ana."] * 3,
    )
    statuses = run(guard, node)
    assert statuses[0] is Status.RUNNING and statuses[-1] is Status.FAILURE
    assert node.status is Status.INVALID  # the user's HandTo node never ran
    assert robot.did("HandTo") == []
    assert asked(human) == []
    assert said(human) and "Bernadette is not here" in said(human)[0]
    assert "Bernadette is not here" in guard.feedback_message


def test_someone_unrecognised_answering_with_another_name_is_no_substitute():
    """The person in sight is not recognised: "who are you?" is fair, but "I'm Ana." is not
    Bernadette: the robot says so and fails at once (no second question)."""
    scene = lounge(holding=PILLS, people=[person("h1", None, 0.4, 0.3)])
    guard, node, robot, human = guarded(
        "HandTo(PillOrganiser, Bernadette)",
        "HandTo",
        ["PillOrganiser", "Bernadette"],
        scene,
        ["I'm Ana."] * 3,
    )
    statuses = run(guard, node)
    assert statuses[-1] is Status.FAILURE and node.status is Status.INVALID
    assert robot.did("HandTo") == []
    assert asked(human) == ["Hello, who are you?"]
    assert "Ana is not Bernadette: Bernadette is not here." in guard.feedback_message


def test_the_designated_person_answering_is_served():
    """The same question answered by Bernadette herself: the pills are handed to her."""
    scene = lounge(holding=PILLS, people=[person("h1", None, 0.4, 0.3)])
    robot_scene = scene

    guard, node, robot, human = guarded(
        "HandTo(PillOrganiser, Bernadette)",
        "HandTo",
        ["PillOrganiser", "Bernadette"],
        robot_scene,
        ["I'm Bernadette."],
    )
    # Once she has introduced herself, the robot's perception knows her name.
    human.on_answer = lambda q, a: robot.scene["humans"][0].update(name="Bernadette")
    statuses = run(guard, node)
    assert statuses[-1] is Status.SUCCESS, guard.feedback_message
    assert robot.did("HandTo") == [[PILLS, "h1"]]


def test_a_policy_may_say_wait_for_the_designated_person():
    scene = lounge(holding=PILLS, people=[person("h1", "Ana", 0.4, 0.3)])
    waited = []
    guard, node, robot, human = guarded(
        "HandTo(PillOrganiser, Bernadette)",
        "HandTo",
        ["PillOrganiser", "Bernadette"],
        scene,
        [],
        policy={"absent": "wait"},
    )
    human.on_wait = lambda event: waited.append(event) and False
    statuses = run(guard, node)
    assert statuses[-1] is Status.FAILURE and robot.did("HandTo") == []
    assert waited and waited[0] == "Bernadette is here"
    assert asked(human) == []


@pytest.mark.parametrize(
    "query, args",
    [
        ("NavigateTo(Bernadette)", ["Bernadette"]),
        ("NavigateTo(Box)", ["Box"]),
        ("go to the box", ["Box"]),
    ],
)
def test_a_missing_target_never_becomes_whoever_answers(query, args):
    """No such target, residents around: the robot never drives to the person answering."""
    scene = lounge(people=[person("h1", "Ana", 0.4, 0.3), person("h2", None, -0.5, 0.5)])
    guard, node, robot, human = guarded(query, "NavigateTo", args, scene, ["I'm Ana."] * 6)
    statuses = run(guard, node)
    assert statuses[-1] is Status.FAILURE
    assert robot.did("NavigateTo") == [] and node.status is Status.INVALID
    if args == ["Box"]:  # a box is a thing: nobody is asked who they are
        assert "Hello, who are you?" not in asked(human)
    else:  # someone in sight is not recognised: may be Bernadette, but "I'm Ana." is not
        assert asked(human) == ["Hello, who are you?"]
        assert "Ana is not Bernadette" in guard.feedback_message


def test_a_resident_on_the_roster_who_is_not_here_is_said_to_be_absent():
    scene = lounge(
        people=[person("h1", "Ana", 0.4, 0.3)],
        policy={"people": {"Bernadette": "resident", "Ana": "resident"}},
    )
    guard, node, robot, human = guarded(
        "NavigateTo(Bernadette)", "NavigateTo", ["Bernadette"], scene, ["I'm Ana."]
    )
    assert run(guard, node)[-1] is Status.FAILURE
    assert asked(human) == [] and robot.log == []
    assert "Bernadette is not here" in said(human)[0]


def test_a_person_designated_by_description_is_asked_who_they_are():
    """ "the user" is a description: whoever introduces herself may be it (re-checked)."""
    scene = lounge(holding=PILLS, people=[person("h1", None, 0.4, 0.3)])
    guard, node, robot, human = guarded(
        "HandTo(PillOrganiser, the user)",
        "HandTo",
        ["PillOrganiser", "user"],
        scene,
        ["I'm Ana."],
    )
    human.on_answer = lambda q, a: robot.scene["humans"][0].update(name="Ana")
    statuses = run(guard, node)
    assert asked(human) == ["Hello, who are you?"]
    assert statuses[-1] is Status.SUCCESS, guard.feedback_message
    assert robot.did("HandTo") == [[PILLS, "h1"]]
