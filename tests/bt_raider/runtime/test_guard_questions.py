"""A question to a person names things in the scene's words, never an internal label (P7).

"pick the wobbly red box": the check cannot read 'wobbly' and asks; the symbolic recovery used
to ask "Which Box_1 should I pick up?" (the display name of the one box the read words found).
Now it says what it did not understand and offers the boxes as a person tells them apart, and
only the person's answer settles which. The team's own pick node and one-armed robot
(intent_world.py), the real symbolic checker and planner; every tick asserts the guard's and the
child's status.
"""

from __future__ import annotations

import re

import py_trees
import pytest

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import Phase, RaiderGuard
from tests.bt_raider.runtime.intent_world import (
    F,
    I,
    MyPick,
    OneArmRobot,
    R,
    S,
    run,
    thing,
)

RED, BLUE, GREY = "Box|red", "Box|blue", "Box|grey"
#: An internal label: a display name with a number, or an objectId.
LABEL = re.compile(r"\b[A-Z][A-Za-z]*_\d+\b|\w+\|\w+")


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def boxes(*colours: str) -> dict:
    """Boxes of these colours from left to right, all in reach."""
    objects = [
        thing(f"Box|{c}", "Box", -0.4 + 0.8 * i / max(1, len(colours) - 1), color=c)
        for i, c in enumerate(colours)
    ]
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": objects,
        "inventoryObjects": [],
    }


def guarded(
    query: str, scene: dict, answers: list[str]
) -> tuple[RaiderGuard, MyPick, OneArmRobot, ScriptedHuman]:
    robot = OneArmRobot(scene)
    child = MyPick("my pick", "Box", robot)
    human = ScriptedHuman(answers)
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, human)
    guard = RaiderGuard(
        child, query, SymbolicReasoner(), scene=robot.observe, recovery=recovery, max_attempts=1
    )
    return guard, child, robot, human


def questions(human: ScriptedHuman) -> list[str]:
    return [ex.text for ex in human.transcript if ex.kind == "ask"]


@pytest.mark.parametrize(("answer", "picked"), [("the red one", RED), ("the blue one", BLUE)])
def test_a_word_left_over_is_asked_about_in_the_scenes_words(answer: str, picked: str) -> None:
    guard, child, robot, human = guarded("pick the wobbly red box", boxes("red", "blue"), [answer])

    rows = run(guard, child)

    asked = questions(human)
    assert len(asked) == 1, asked
    assert not LABEL.search(asked[0]), asked
    assert asked[0].startswith("I did not understand 'wobbly' in 'the wobbly red box'."), asked
    assert "Which box should I pick up:" in asked[0]
    assert "red" in asked[0] and "blue" in asked[0]
    assert all(c is I for _, c, phase in rows if phase is not Phase.ACTING), rows
    assert all(g is R for g, _, _ in rows[:-1]), rows
    assert rows[-1] == (S, S, Phase.ACTING), guard.feedback_message
    assert robot.picks() == [picked] and child.picked == [picked]
    assert guard.designation is not None
    assert guard.designation.actions[0].allowed == (frozenset({RED, BLUE}),)


@pytest.mark.parametrize(
    ("answer", "picked"),
    [
        ("that one", None),
        ("yes", RED),
        ("no", None),
        ("the blue one", None),
        ("not that one", None),
    ],
)
def test_the_only_box_of_its_kind_is_asked_about_by_its_kind(
    answer: str, picked: str | None
) -> None:
    guard, child, robot, human = guarded("pick the wobbly red box", boxes("red"), [answer] * 3)

    rows = run(guard, child)

    asked = questions(human)
    assert asked and not any(LABEL.search(q) for q in asked), asked
    assert asked[0].endswith("Which box should I pick up? I see only the box."), asked
    assert all(c is I for _, c, phase in rows if phase is not Phase.ACTING), rows
    assert all(g is R for g, _, _ in rows[:-1]), rows
    if picked is None:  # no, another, or not that one: nothing settles it, nothing moves
        assert rows[-1] == (F, I, Phase.DONE), rows
        assert robot.log == [] and child.picked == []
    else:
        assert rows[-1] == (S, S, Phase.ACTING), guard.feedback_message
        assert robot.picks() == [picked] and child.picked == [picked]


def test_an_exclusion_with_words_left_over_offers_every_box_it_may_mean() -> None:
    # "the box that isn't dirty and gray": read as "not dirty" (with 'and gray' left over) the
    # words would leave the red box alone, yet the person may mean the blue one (not both dirty
    # and grey). The question offers every box it may mean; her answer is what is picked.
    scene = boxes("red", "grey", "blue")
    for o in scene["objects"]:
        o.update(dirtyable=True, isDirty=o["objectId"] != RED)
    guard, child, robot, human = guarded(
        "pick the box that isn't dirty and gray", scene, ["the blue one"]
    )

    rows = run(guard, child)

    asked = questions(human)
    assert len(asked) == 1 and not LABEL.search(asked[0]), asked
    assert "Which box should I pick up:" in asked[0] and "blue" in asked[0], asked
    assert all(c is I for _, c, phase in rows if phase is not Phase.ACTING), rows
    assert rows[-1] == (S, S, Phase.ACTING), (asked, guard.feedback_message)
    assert robot.picks() == [BLUE] and child.picked == [BLUE]
