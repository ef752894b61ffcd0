"""One intent per guard, carried to the moment it releases its child (issue 32, item 4).

The team's own pick node and one-armed robot (tests/bt_raider/runtime/intent_world.py), the
real symbolic checker, and recovery planners that propose hostile code. The guard releases its
child only on arguments inside what the instruction's words (and the person's answers)
designate, checked in the guard itself: with the verifier switched off, the guard still refuses.
Every tick asserts the guard's and the child's status.
"""

from __future__ import annotations

import py_trees
import pytest

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.errors import UsageError
from bt_raider.recovery.pipeline import Recovery
from bt_raider.robot.human import ScriptedHuman
from bt_raider.robot.retarget import guard_named, resolved_for
from bt_raider.runtime.guards import Phase, RaiderGuard
from bt_raider.testing.run import run_tree
from tests.bt_raider.runtime.intent_world import (
    APPLE,
    BOWL,
    CLEAN_CUP,
    DIRTY_CUP,
    KNIFE,
    OTHER_APPLE,
    F,
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
    settle,
)


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


@pytest.mark.parametrize("other", [APPLE, KNIFE])
def test_a_recovery_that_retargets_to_another_type_is_refused_at_release(other: str) -> None:
    # The verifier is off: the guard's own check is all that stands between the plan and the arm.
    guard, child, robot = guarded("pick the cup", f"pick('{other}')", verify=False)

    rows = run(guard, child)

    assert [phase for *_, phase in rows] == [
        Phase.CHECKING,  # two cups: ambiguity
        Phase.PLANNING,  # the plan's only step is its resume step, pick(other): nothing to run
        Phase.CHECKING,  # so pick(other) is re-checked at once: nothing stops it
        Phase.DONE,  # ... but it is not a cup: refused before the child's first tick
    ]
    refused_rows(rows)
    assert robot.log == [] and child.picked == []
    assert guard.resolved is None and guard.verdict is not None and guard.verdict.ok
    assert guard.designation is not None
    assert guard.designation.actions[0].allowed == (frozenset({CLEAN_CUP, DIRTY_CUP}),)
    assert guard.refusal == guard.feedback_message
    assert f"{other} is not what 'the cup' designates" in guard.refusal


def test_the_verifier_refuses_the_same_plan_before_it_starts() -> None:
    guard, child, robot = guarded("pick the cup", f"pick('{APPLE}')", verify=True)

    rows = run(guard, child)

    assert [phase for *_, phase in rows] == [Phase.CHECKING, Phase.PLANNING, Phase.DONE]
    refused_rows(rows)
    assert guard.plan is None and robot.log == []
    assert f"{APPLE} is not what 'the cup' designates" in guard.feedback_message


def test_a_recovery_that_retargets_to_an_excluded_object_is_refused() -> None:
    # "the clean cup" excludes the dirty one; the clean one is out of reach, the dirty in reach.
    guard, child, robot = guarded(
        "pick the clean cup", f"pick('{DIRTY_CUP}')", verify=False, far_clean_cup=True
    )

    rows = run(guard, child)

    refused_rows(rows)
    assert robot.log == [] and child.picked == []
    assert guard.designation is not None
    assert guard.designation.actions[0].allowed == (frozenset({CLEAN_CUP}),)
    assert f"{DIRTY_CUP} is not what 'the clean cup' designates" in str(guard.refusal)


def test_a_plan_that_asks_then_names_the_other_cup_is_refused_at_release() -> None:
    # The plan asks which cup, the person says the clean one, the plan resumes on the dirty one.
    # The verifier cannot see it (the resume step does not use the answer); the guard can.
    code = f"which = ask('Which cup should I pick up?')\npick('{DIRTY_CUP}')"
    guard, child, robot = guarded("pick the cup", code, verify=True, answers=["the clean cup"])

    rows = run(guard, child)

    refused_rows(rows)
    assert robot.log == [] and child.picked == []
    assert guard.designation is not None
    assert guard.designation.actions[0].chosen == (CLEAN_CUP,)
    assert "is not the 'the cup' the person chose" in str(guard.refusal)


def test_the_answer_the_person_gave_is_released() -> None:
    code = "which = ask('Which cup should I pick up?')\npick(which)"
    guard, child, robot = guarded("pick the cup", code, verify=True, answers=["the clean cup"])

    rows = run(guard, child)

    assert all(c is I for _, c, phase in rows if phase is not Phase.ACTING)
    assert rows[-1] == (S, S, Phase.ACTING)
    assert robot.picks() == [CLEAN_CUP] and child.picked == [CLEAN_CUP]
    assert guard.resolved is not None and guard.resolved.args == (CLEAN_CUP,)
    assert guard.designation is not None and guard.designation.actions[0].chosen == (CLEAN_CUP,)


@pytest.mark.parametrize("verify", [True, False])
def test_a_second_pick_with_a_full_hand_is_refused(verify: bool) -> None:
    # Two apples; the person chooses one, the plan picks the other first, then resumes on
    # hers: one arm cannot hold both.
    code = f"which = ask('Which apple?')\npick('{OTHER_APPLE}')\npick(which)"
    guard, child, robot = guarded("pick the apple", code, verify=verify, apples=2, answers=[APPLE])

    rows = run(guard, child)

    refused_rows(rows)
    assert child.picked == []  # the child never ran
    if verify:  # refused before anything moved: the plan's own pick fills the hand
        assert robot.log == []
        assert "caused by the plan" in guard.feedback_message
    else:  # the robot picked (the plan ran), and the re-check found the hand full
        assert robot.picks() == [OTHER_APPLE]
        assert "robot" in guard.feedback_message.lower()


@pytest.mark.parametrize("verify", [True, False])
def test_an_object_out_of_sight_is_designated_by_the_words_where_the_robot_looks(
    verify: bool,
) -> None:
    # "the apple" grounds to nothing at first: its designation is read again, with the same
    # words, where the recovery took the robot. The apple it finds there is released.
    guard, child, robot = guarded(
        "pick the apple", f"move_to('{BOWL}')\npick('{APPLE}')", verify=verify, hidden_apple=True
    )

    rows = run(guard, child)

    assert all(c is I for _, c, phase in rows if phase is not Phase.ACTING), rows
    assert rows[-1] == (S, S, Phase.ACTING), guard.feedback_message
    assert guard.designation is not None
    assert guard.designation.actions[0].allowed == (frozenset({APPLE}),)  # read where it looked
    assert robot.log == [("move_to", [BOWL]), ("pick", [APPLE])]


@pytest.mark.parametrize("verify", [True, False])
def test_an_object_out_of_sight_is_not_replaced_by_one_in_sight(verify: bool) -> None:
    guard, child, robot = guarded(
        "pick the apple", f"move_to('{BOWL}')\npick('{KNIFE}')", verify=verify, hidden_apple=True
    )

    rows = run(guard, child)

    refused_rows(rows)
    assert child.picked == []
    if verify:  # the knife is in sight and "the apple" matched nothing in sight
        assert robot.log == [] and "Knife|1 is in sight" in guard.feedback_message
    else:  # the robot moved; where it looks, "the apple" is the apple, not the knife
        assert robot.log == [("move_to", [BOWL])]
        assert guard.designation is not None
        assert guard.designation.actions[0].allowed == (frozenset({APPLE}),)
        assert f"{KNIFE} is not what 'the apple' designates" in str(guard.refusal)


def two_guards(name_a: str, name_b: str) -> tuple[py_trees.composites.Parallel, list[RaiderGuard]]:
    robot = OneArmRobot(kitchen(), arms=2)  # one arm per branch
    cup = MyPick("pick", "Cup", robot)
    apple = MyPick("pick", "Apple", robot)
    recovery = Recovery(
        Hostile("which = ask('Which cup should I pick up?')\npick(which)"),
        robot,
        ScriptedHuman(["the dirty cup"]),
    )
    guards = [
        RaiderGuard(
            cup,
            "pick the cup",
            SymbolicReasoner(),
            scene=robot.observe,
            recovery=recovery,
            name=name_a,
        ),
        RaiderGuard(apple, "pick the apple", SymbolicReasoner(), scene=robot.observe, name=name_b),
    ]
    root = py_trees.composites.Parallel(
        "both", policy=py_trees.common.ParallelPolicy.SuccessOnAll(), children=guards
    )
    return root, guards


@pytest.mark.parametrize("names", [("fetch", "fetch"), ("fetch/cup", "fetch.cup"), (None, None)])
def test_two_guards_named_alike_in_a_parallel_each_act_on_their_own_object(names) -> None:
    root, (cup_guard, apple_guard) = two_guards(*names)
    assert cup_guard.name == apple_guard.name or names == ("fetch/cup", "fetch.cup")
    assert cup_guard.guard_id != apple_guard.guard_id
    assert cup_guard.key != apple_guard.key
    assert cup_guard.resolved_key != apple_guard.resolved_key
    cup, apple = cup_guard.decorated, apple_guard.decorated
    rows = []
    for _ in range(60):
        root.tick_once()
        rows.append((root.status, cup_guard.status, cup.status, apple_guard.status, apple.status))
        # Neither child is ticked before its own guard releases it.
        for guard, child in ((cup_guard, cup), (apple_guard, apple)):
            if guard.phase is not Phase.ACTING:
                assert child.status is I, rows
        if root.status is not R:
            break
        settle(root)
    assert rows[-1] == (S, S, S, S, S), rows
    assert cup.picked == [DIRTY_CUP] and apple.picked == [APPLE]
    board = py_trees.blackboard.Blackboard
    assert board.get(cup_guard.resolved_key)["args"] == [DIRTY_CUP]
    assert board.get(apple_guard.resolved_key)["args"] == [APPLE]
    assert board.get(cup_guard.key)["category"] == "none"
    if cup_guard.name == apple_guard.name:
        with pytest.raises(UsageError, match=r"2 guards are named .*#\d+, .*#\d+"):
            resolved_for(cup_guard.name, apple)  # asked by a node of the tree
    else:
        assert resolved_for(cup_guard.name, apple)["args"] == [DIRTY_CUP]
        assert guard_named(apple_guard.name, root) is apple_guard


def test_run_results_never_merge_two_guards_named_alike() -> None:
    root, (cup_guard, apple_guard) = two_guards("fetch", "fetch")

    result = run_tree(root, timeout=20)

    assert result.status is S, result.summary()
    with pytest.raises(UsageError, match="2 guards are named 'fetch'"):
        result.verdicts["fetch"]
    with pytest.raises(UsageError, match="2 guards are named 'fetch'"):
        result.recovered(guard="fetch")
    cup_verdicts = result.verdicts[cup_guard.guard_id]
    assert [v.category.value for v in cup_verdicts] == ["ambiguity", "none"]
    assert [v.category.value for v in result.verdicts[apple_guard.guard_id]] == ["none"]
    assert sorted(result.verdicts) == sorted([cup_guard.guard_id, apple_guard.guard_id])
    assert result.recovered(guard=cup_guard.guard_id)
    assert not result.recovered(guard=apple_guard.guard_id)
    assert list(result.recoveries) == [cup_guard.guard_id]
    with pytest.raises(UsageError, match="several nodes are named 'pick'"):
        result.statuses("pick")


def test_a_unique_name_still_looks_up_as_before() -> None:
    root, (cup_guard, apple_guard) = two_guards("fetch cup", "fetch apple")

    result = run_tree(root, timeout=20)

    assert result.status is S, result.summary()
    assert sorted(result.verdicts) == ["fetch apple", "fetch cup"]
    assert result.verdicts["fetch cup"] is result.verdicts[cup_guard.guard_id]
    assert result.recovered(guard="fetch cup") and not result.recovered(guard="fetch apple")
    assert "ask(" in result.recoveries["fetch cup"][0]
    assert F not in result.statuses("fetch apple")
