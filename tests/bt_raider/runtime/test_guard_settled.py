"""Only the person settles which of several designated objects is meant (issue 32, P12).

"please pick up the cup" of two cups designates both; a recovery that picks one of them without
asking chose for the person. The guard releases its child only when the designation is settled:
one object, words that accept any ("any cup", "either"), or the person's answer. The team's own
pick node and one-armed robot (intent_world.py), the real symbolic checker, a planner that
proposes the code it is given; every tick asserts the guard's and the child's status.
"""

from __future__ import annotations

import py_trees
import pytest

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.recovery.pipeline import Recovery
from bt_raider.robot.designation import Designated, GuardIntent, outside
from bt_raider.robot.human import ScriptedHuman
from bt_raider.robot.retarget import ResolvedAction
from bt_raider.runtime.guards import Phase, RaiderGuard
from tests.bt_raider.runtime.intent_world import (
    BOWL,
    CLEAN_CUP,
    DIRTY_CUP,
    KNIFE,
    Hostile,
    I,
    MyPick,
    OneArmRobot,
    R,
    S,
    guarded,
    kitchen,
    refused_rows,
    run,
)

PASSED = Verdict(Category.NONE, "")


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


@pytest.mark.parametrize("cup", [CLEAN_CUP, DIRTY_CUP])
def test_a_recovery_that_picks_one_of_two_cups_without_asking_is_refused_at_release(
    cup: str,
) -> None:
    # The verifier is off: the guard's own release check refuses.
    guard, child, robot = guarded("please pick up the cup", f"pick('{cup}')", verify=False)

    rows = run(guard, child)

    assert [phase for *_, phase in rows] == [
        Phase.CHECKING,  # two cups: ambiguity
        Phase.PLANNING,  # the plan is its resume step alone: pick(cup), re-checked at once
        Phase.CHECKING,  # pick(cup) passes the check: one cup, in reach
        Phase.DONE,  # ... but nobody chose it: refused before the child's first tick
    ]
    refused_rows(rows)
    assert robot.log == [] and child.picked == [] and guard.resolved is None
    assert guard.designation is not None
    one = guard.designation.actions[0]
    assert one.allowed == (frozenset({CLEAN_CUP, DIRTY_CUP}),) and one.chosen == (None,)
    assert guard.refusal == guard.feedback_message
    assert f"{cup}: 'the cup' allows several" in str(guard.refusal)
    assert "nobody chose one" in str(guard.refusal)


def test_the_verifier_refuses_the_same_plan_before_it_starts() -> None:
    guard, child, robot = guarded("please pick up the cup", f"pick('{DIRTY_CUP}')", verify=True)

    rows = run(guard, child)

    assert [phase for *_, phase in rows] == [Phase.CHECKING, Phase.PLANNING, Phase.DONE]
    refused_rows(rows)
    assert guard.plan is None and robot.log == []
    assert "'the cup' allows several" in guard.feedback_message


@pytest.mark.parametrize("verify", [True, False])
def test_the_persons_answer_settles_it(verify: bool) -> None:
    code = "which = ask('Which cup should I pick up: the clean one or the dirty one?')\npick(which)"
    guard, child, robot = guarded(
        "please pick up the cup", code, verify=verify, answers=["the dirty one"]
    )

    rows = run(guard, child)

    assert all(c is I for _, c, phase in rows if phase is not Phase.ACTING), rows
    assert all(g is R for g, _, _ in rows[:-1]), rows
    assert rows[-1] == (S, S, Phase.ACTING), guard.feedback_message
    assert robot.picks() == [DIRTY_CUP] and child.picked == [DIRTY_CUP]
    assert guard.designation is not None
    assert guard.designation.actions[0].chosen[0] is not None


@pytest.mark.parametrize("words", ["pick any cup", "pick either cup", "pick a cup, you choose"])
def test_words_that_accept_any_cup_settle_it(words: str) -> None:
    # The knife fills the one hand: the plan puts it in the bowl and picks a cup; nobody asked.
    data = kitchen()
    data["inventoryObjects"] = [{"objectId": KNIFE, "objectType": "Knife"}]
    next(o for o in data["objects"] if o["objectId"] == KNIFE)["isPickedUp"] = True
    robot = OneArmRobot(data)
    child = MyPick("my pick", "Cup", robot)
    code = f"place('{KNIFE}', '{BOWL}')\npick('{DIRTY_CUP}')"
    recovery = Recovery(Hostile(code), robot, ScriptedHuman([]), verify=False)
    guard = RaiderGuard(
        child, words, SymbolicReasoner(), scene=robot.observe, recovery=recovery, max_attempts=1
    )

    rows = run(guard, child)

    assert all(c is I for _, c, phase in rows if phase is not Phase.ACTING), rows
    assert all(g is R for g, _, _ in rows[:-1]), rows
    assert rows[-1] == (S, S, Phase.ACTING), guard.feedback_message
    assert robot.log == [("place", [KNIFE, BOWL]), ("pick", [DIRTY_CUP])]
    assert guard.designation is not None
    assert guard.designation.actions[0].any_of == (True,)
    assert guard.designation.actions[0].allowed == (frozenset({CLEAN_CUP, DIRTY_CUP}),)
    assert guard.designation.actions[0].chosen == (None,)


@pytest.mark.parametrize("words", ["pick any cup", "pick either cup", "pick whichever cup"])
def test_any_cup_reaches_the_node_as_one_cup_never_as_the_phrase(words: str) -> None:
    # Both cups in reach: the check passes at once, and the node gets one cup's objectId (the
    # one the checker checked), never the text "any cup" (P3).
    guard, child, robot = guarded(words, "say('unused')", verify=True)

    rows = run(guard, child)

    assert [phase for *_, phase in rows] == [Phase.CHECKING, Phase.ACTING, Phase.ACTING]
    assert rows[0][:2] == (R, I) and rows[-1] == (S, S, Phase.ACTING), rows
    assert child.picked in ([CLEAN_CUP], [DIRTY_CUP]) and robot.picks() == child.picked
    assert guard.resolved is not None and guard.resolved.args == tuple(child.picked)


def test_one_cup_in_sight_is_settled_without_a_question() -> None:
    one = Designated("pick", ("the cup",), (frozenset({CLEAN_CUP}),))
    assert one.settled(0)
    released = ResolvedAction("pick", (CLEAN_CUP,), {}, {}, PASSED)
    assert outside(GuardIntent("pick the cup", (one,)), released) == []


def test_an_unsettled_phrase_refuses_whatever_the_arity() -> None:
    # A PDDL instance (pick robot cup counter) released as pick(Cup|dirty): positions cannot be
    # matched, the cup is still one of two nobody chose.
    both = frozenset({CLEAN_CUP, DIRTY_CUP})
    one = Designated("pick", ("the cup", "the counter"), (both, frozenset({"Counter|1"})))
    intent = GuardIntent("(pick robot cup counter)", (one,))
    released = ResolvedAction("pick", (DIRTY_CUP,), {}, {}, PASSED)
    assert "'the cup' allows several" in " ".join(outside(intent, released))
    assert outside(intent, released, settled=False) == []
    assert outside(intent.chosen_as(DIRTY_CUP), released) == []
    assert outside(intent.chosen_as(CLEAN_CUP), released) != []
