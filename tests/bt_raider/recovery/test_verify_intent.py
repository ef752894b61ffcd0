"""The verifier keeps the instruction's intent (issue 32, item 4).

A recovery plan may act on objects the instruction did not designate only as a recovery kind
that needs them (move, put down what the robot holds, move a blocker, open a container a
designated object is in, fetch a tool the action needs), never in place of the designated
object; and the robot's state (what it holds) is carried from step to step to the resume step.
"""

from __future__ import annotations

import pytest

from bt_raider.checking.contract import Query
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.perception.scene import Scene
from bt_raider.recovery.contract import RecoveryRequest
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.verify import SceneVerifier
from bt_raider.robot.designation import GuardIntent, step_kind
from bt_raider.robot.human import ScriptedHuman
from bt_raider.robot.retarget import argument_phrases
from tests.bt_raider.runtime.intent_world import (
    APPLE,
    BOWL,
    CLEAN_CUP,
    DIRTY_CUP,
    KNIFE,
    OTHER_APPLE,
    Hostile,
    OneArmRobot,
    kitchen,
    thing,
)


def request(query: str, scene: Scene, *, designate: bool = True) -> RecoveryRequest:
    """What a guard asks recovery for ``query`` (its first check's verdict and designation)."""
    verdict = SymbolicReasoner().check(scene, Query(query))
    assert not verdict.ok
    name, phrases = argument_phrases(Query(query))
    designation = GuardIntent.read(query, [(verdict.action or name, phrases, verdict.grounding)])
    return RecoveryRequest(
        query, verdict, scene=scene, designation=designation if designate else None
    )


def plan_of(code: str, req: RecoveryRequest):
    """Plan ``code`` for ``req`` through Recovery (which verifies it); the error if refused."""
    recovery = Recovery(Hostile(code), OneArmRobot(kitchen()), ScriptedHuman([]), max_retries=0)
    return recovery.plan(req)


@pytest.mark.parametrize("other", [APPLE, KNIFE])
def test_pick_the_cup_recovered_by_picking_something_else_is_refused(other: str) -> None:
    req = request("pick the cup", Scene(kitchen()))
    with pytest.raises(Exception, match=f"{other} is not what 'the cup' designates"):
        plan_of(f"pick('{other}')", req)


def test_pick_the_apple_recovered_by_pick_knife_then_pick_apple_is_refused() -> None:
    # The issue's own example: the knife is no blocker, container or tool of "pick".
    req = request("pick the apple", Scene(kitchen(apples=2)))
    with pytest.raises(Exception, match=r"step 1, pick\('Knife\|1'\): Knife\|1 is not what"):
        plan_of(f"pick('{KNIFE}')\npick('{APPLE}')", req)


def test_without_a_designation_the_full_hand_still_refutes_the_plan() -> None:
    # A caller that gives no designation still gets the robot's state carried: the knife fills
    # the one hand, so the resume step's pick cannot run -- the plan's own doing.
    req = request("pick the apple", Scene(kitchen(apples=2)), designate=False)
    with pytest.raises(Exception, match="caused by the plan"):
        plan_of(f"pick('{KNIFE}')\npick('{APPLE}')", req)


def test_a_second_pick_of_a_designated_object_with_a_full_hand_is_refused() -> None:
    # The person chose Apple|1; the plan picks the other apple first: the hand is full.
    req = request("pick the apple", Scene(kitchen(apples=2)))
    plan = plan_of(f"which = ask('Which apple?')\npick('{OTHER_APPLE}')\npick(which)", req)
    assert plan.proof is not None and plan.proof.waits_on_answer
    refused = SceneVerifier().verify(plan, req, {"which": APPLE})
    assert not refused.ok
    assert "pick(Apple|1) cannot run (robot state), caused by the plan" in refused.reason


@pytest.mark.parametrize("cup", [CLEAN_CUP, DIRTY_CUP])
def test_a_plan_that_chooses_among_the_designated_without_asking_is_refused(cup: str) -> None:
    # "the cup" of two: only the person settles which (P12); a plan may not choose for her.
    req = request("pick the cup", Scene(kitchen()))
    with pytest.raises(Exception, match="'the cup' allows several .* and nobody chose one"):
        plan_of(f"pick('{cup}')", req)


def test_a_plan_that_resumes_on_the_persons_choice_passes() -> None:
    req = request("pick the cup", Scene(kitchen()))
    plan = plan_of("which = ask('Which cup?')\npick(which)", req)
    assert plan.proof is not None and plan.proof.waits_on_answer
    ok = SceneVerifier().verify(plan, req, {"which": CLEAN_CUP})
    assert ok.ok, ok.reason


def test_words_that_accept_any_settle_it() -> None:
    # "any cup", both cups out of reach: the plan may come closer and pick either.
    req = request("pick any cup", Scene(kitchen(far_cups=True)))
    assert req.designation is not None and req.designation.actions[0].any_of == (True,)
    plan = plan_of(f"move_to('{DIRTY_CUP}')\npick('{DIRTY_CUP}')", req)
    assert plan.proof is not None and plan.proof.ok, plan.proof


def test_an_answer_narrows_what_the_resume_step_may_name() -> None:
    req = request("pick the cup", Scene(kitchen()))
    plan = plan_of(f"which = ask('Which cup?')\nmove_to(which)\npick('{DIRTY_CUP}')", req)
    assert plan.proof is not None and plan.proof.waits_on_answer  # verified again after it
    ok = SceneVerifier().verify(plan, req, {"which": DIRTY_CUP})
    assert ok.ok, ok.reason
    refused = SceneVerifier().verify(plan, req, {"which": CLEAN_CUP})
    assert not refused.ok
    assert "is not the 'the cup' the person chose (Cup|clean)" in refused.reason


def scene_with(*extra: dict, **blocked: list[str]) -> Scene:
    data = kitchen()
    data["objects"].extend(extra)
    if blocked:
        data["blocked"] = blocked
    return Scene(data)


def kinds(verb: str, refs: list[str], scene: Scene, designated: set[str], action: str = "pick"):
    designation = GuardIntent.read("q", [(action, ("the thing",), {"the thing": designated})])
    return step_kind(verb, refs, designation, scene, action=action)


def test_the_recovery_kinds_that_may_act_on_other_objects() -> None:
    egg = thing("Egg|1", "Egg", 0.1, 0.3, parentReceptacles=["Fridge|1"])
    fridge = thing("Fridge|1", "Fridge", 0.3, 0.3, pickupable=False, openable=True)
    on_cup = thing("Plate|1", "Plate", 0.3, 0.4, parentReceptacles=[CLEAN_CUP])
    scene = scene_with(egg, fridge, on_cup, **{CLEAN_CUP: ["Knife|1"]})
    held = kitchen()
    held["inventoryObjects"] = [{"objectId": KNIFE, "objectType": "Knife"}]
    holding = Scene(held)

    assert kinds("move_to", [KNIFE], scene, {CLEAN_CUP}) == "move"
    assert kinds("pick", [CLEAN_CUP], scene, {CLEAN_CUP}) == "designated"
    assert kinds("pick", [KNIFE], scene, {CLEAN_CUP}) == "clear_blocker"  # the blocked report
    assert kinds("pick", ["Plate|1"], scene, {CLEAN_CUP}) == "clear_blocker"  # rests on it
    assert kinds("open", ["Fridge|1"], scene, {"Egg|1"}) == "open_container"
    assert kinds("close", ["Fridge|1"], scene, {"Egg|1"}) == "open_container"
    assert kinds("place", [KNIFE, BOWL], holding, {APPLE}) == "free_hand"
    assert kinds("pick", [KNIFE], scene, {APPLE}, action="slice") == "fetch_tool"
    # Substitutes: none of the kinds.
    assert kinds("pick", [KNIFE], scene, {APPLE}) is None
    assert kinds("pick", [DIRTY_CUP], scene, {CLEAN_CUP}) is None
    assert kinds("open", ["Fridge|1"], scene, {APPLE}) is None
    assert kinds("place", [KNIFE, BOWL], scene, {APPLE}) is None  # not held: no hand to free
