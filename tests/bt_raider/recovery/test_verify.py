"""Verified recovery: a plan is proved on a copy of the scene before any of it runs."""

from __future__ import annotations

import time

import py_trees
import pytest

from bt_raider.checking.contract import Query
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import RecoveryCodeError
from bt_raider.llm.chat import ScriptedChat
from bt_raider.recovery.contract import RecoveryRequest
from bt_raider.recovery.llm import LLMRecoveryPlanner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.recovery.verify import (
    AnswerCheck,
    Proof,
    SceneVerifier,
    Unrecoverable,
    Verifier,
)
from bt_raider.robot.actions import ActionBehaviour
from bt_raider.robot.human import GroundedAsk, ScriptedHuman
from bt_raider.runtime.guards import RaiderGuard
from tests.bt_raider.recovery.toy import (
    APPLE,
    COUNTER,
    FAR_FROM_PLANT,
    ToyRobot,
    toy_scene_dict,
)

Status = py_trees.common.Status
TOY_ACTIONS = {"move_to": "navigate", "pick": "grasp", "place": "put"}
#: Frees the hand, then grasps: what a robot holding the Apple must do.
GOOD = "navigate('CounterTop')\nput('Apple', 'CounterTop')\nnavigate('Medicine_2')\ngrasp('Medicine_2')"


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


class Fixed:
    """A planner that proposes the given codes in turn (the last one again when they run out)."""

    def __init__(self, *codes: str) -> None:
        self.codes = list(codes)
        self.requests: list[RecoveryRequest] = []

    def propose(self, request, *, cancel=None) -> str:
        self.requests.append(request)
        return self.codes[min(len(self.requests), len(self.codes)) - 1]


def busy_hand() -> tuple[ToyRobot, RecoveryRequest]:
    """The toy robot holds the Apple and is asked to grasp Medicine_2 (the real checker)."""
    robot = ToyRobot(toy_scene_dict(holding_apple=True))
    scene = robot.observe()
    verdict = SymbolicReasoner().check(scene, Query("grasp(Medicine_2)"))
    assert verdict.category is Category.ROBOT_STATE
    return robot, RecoveryRequest("grasp(Medicine_2)", verdict, holding=["Apple"], scene=scene)


def run_tree(tree: py_trees.behaviour.Behaviour, ticks: int = 60) -> None:
    """Tick until the tree ends, waiting for background work between ticks."""
    for _ in range(ticks):
        tree.tick_once()
        if tree.status != Status.RUNNING:
            return
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            recovery = getattr(tree, "recovery_tree", None)
            nodes = [*tree.iterate(), *(recovery.iterate() if recovery is not None else [])]
            if all(getattr(n, "pending", None) is None or n.pending.done() for n in nodes):
                break
            time.sleep(0.001)
    raise AssertionError(f"{tree.name} still running after {ticks} ticks")


# ------------------------------------------------------------------------- up front


def test_scene_verifier_is_a_verifier() -> None:
    assert isinstance(SceneVerifier(), Verifier)


def test_a_plan_that_leaves_the_hand_full_is_rejected_before_anything_runs() -> None:
    robot, request = busy_hand()
    planner = Fixed("grasp('Medicine_2')")  # the resume step alone: the Apple is still held
    recovery = Recovery(planner, robot, ScriptedHuman([]), actions=TOY_ACTIONS, max_retries=2)
    with pytest.raises(Unrecoverable) as err:
        recovery.plan(request)
    assert "after the plan, grasp(Medicine_2) would still fail (robot state)" in err.value.reason
    assert "holding the Apple" in err.value.reason
    assert err.value.action == "grasp(Medicine_2)"
    # The planner repeated itself: it was not asked a third time.
    assert len(planner.requests) == 2
    assert planner.requests[1].feedback == err.value.reason
    assert recovery.unrecoverable is err.value
    assert recovery.refuted == 1 and recovery.proved == 0
    assert robot.calls == []


def test_a_step_that_cannot_run_is_named_in_the_reason() -> None:
    robot, request = busy_hand()
    planner = Fixed("navigate('Medicine_1')\ngrasp('Medicine_1')\ngrasp('Medicine_2')")
    recovery = Recovery(planner, robot, ScriptedHuman([]), actions=TOY_ACTIONS, max_retries=0)
    with pytest.raises(Unrecoverable, match=r"step 2, grasp\('Medicine_1'\): robot state: "):
        recovery.plan(request)
    assert robot.calls == []


def test_inside_a_guard_a_refuted_recovery_never_starts_and_the_guard_says_why() -> None:
    robot = ToyRobot(toy_scene_dict(holding_apple=True))
    child = py_trees.behaviours.Success(name="the user's grasp")
    recovery = Recovery(Fixed("grasp('Medicine_2')"), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    guard = RaiderGuard(
        child, "grasp(Medicine_2)", SymbolicReasoner(), scene=robot.observe, recovery=recovery
    )
    run_tree(guard)
    assert guard.status == Status.FAILURE
    assert child.status == Status.INVALID  # the guarded action never ran
    assert "no recovery: Unrecoverable" in guard.feedback_message
    assert "would still fail (robot state)" in guard.feedback_message
    assert guard.recovery_tree is None
    gone = recovery.unrecoverable
    assert gone is not None and gone.action == str(guard.query) == "grasp(Medicine_2)"
    assert "would still fail (robot state)" in gone.reason
    assert robot.calls == []


def test_a_good_recovery_is_proved_and_runs() -> None:
    robot, request = busy_hand()
    recovery = Recovery(Fixed(GOOD), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    assert plan.proof is not None and plan.proof.ok and not plan.proof.waits_on_answer
    assert plan.proof.checked_steps == 3
    assert "grasp(Medicine_2) can run" in plan.proof.reason
    assert recovery.unrecoverable is None and recovery.proved == 1
    tree = recovery.compile(plan)
    run_tree(tree)
    assert tree.status == Status.SUCCESS
    assert robot.calls == [
        ("navigate", [COUNTER]),
        ("put", [APPLE, COUNTER]),
        ("navigate", [FAR_FROM_PLANT]),
    ]


def test_verification_off_trusts_the_plan() -> None:
    robot, request = busy_hand()
    recovery = Recovery(
        Fixed("navigate('Medicine_2')\ngrasp('Medicine_2')"),
        robot,
        ScriptedHuman([]),
        actions=TOY_ACTIONS,
        verify=False,
    )
    plan = recovery.plan(request)
    assert recovery.verifier is None and plan.proof is None
    tree = recovery.compile(plan)
    run_tree(tree)
    assert robot.calls == [("navigate", [FAR_FROM_PLANT])]  # it started a plan that cannot work


def test_the_symbolic_planner_s_plans_pass() -> None:
    robot, request = busy_hand()
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    assert plan.proof is not None and plan.proof.ok and plan.proof.checked_steps == 3


def test_a_plan_that_only_says_why_passes_and_is_unrecoverable() -> None:
    robot, request = busy_hand()
    recovery = Recovery(Fixed("say('I cannot.')"), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    assert plan.gives_up and plan.proof is not None and plan.proof.ok
    gone = recovery.unrecoverable
    assert gone is not None and gone.reason == "I cannot." and gone.action == request.action


def test_without_a_scene_nothing_is_verified_and_the_proof_says_so() -> None:
    verdict = Verdict(Category.OUT_OF_REACH, "too far", action="pick")
    recovery = Recovery(Fixed("move_to('Apple')\npick('Apple')"), None, ScriptedHuman([]))  # type: ignore[arg-type]
    plan = recovery.plan(RecoveryRequest("pick(Apple)", verdict))
    assert plan.proof is not None and plan.proof.ok and plan.proof.checked_steps == 0
    assert plan.proof.reason.startswith("not verified")


def test_an_action_the_verifier_cannot_simulate_fails_closed() -> None:
    robot, request = busy_hand()
    recovery = Recovery(
        Fixed("wipe('CounterTop')\ngrasp('Medicine_2')"),
        robot,
        ScriptedHuman([]),
        actions=RobotActionsWithWipe(),
        max_retries=0,
    )
    with pytest.raises(Unrecoverable, match=r"step 1, wipe\('CounterTop'\): I cannot tell"):
        recovery.plan(request)
    assert robot.calls == []


def RobotActionsWithWipe():  # noqa: N802 - reads as the robot's actions
    from bt_raider.recovery.robot_actions import RobotActions

    return RobotActions({**TOY_ACTIONS, "wipe": "wipe"}, arities={"wipe": 1})


def test_a_verifier_that_raises_fails_closed() -> None:
    robot, request = busy_hand()

    class Broken:
        def verify(self, plan, request, answers=None):
            raise RecoveryCodeError("the model is gone")

    recovery = Recovery(
        Fixed(GOOD), robot, ScriptedHuman([]), actions=TOY_ACTIONS, verifier=Broken(), max_retries=0
    )
    with pytest.raises(Unrecoverable, match="verification raised RecoveryCodeError"):
        recovery.plan(request)
    with pytest.raises(TypeError, match="verifier must have verify"):
        Recovery(Fixed(GOOD), robot, ScriptedHuman([]), verifier=object())  # type: ignore[arg-type]


# ------------------------------------------------------------------------- LLM feedback


def test_the_llm_hears_why_its_plan_cannot_work_and_its_second_plan_is_accepted() -> None:
    robot, request = busy_hand()
    chat = ScriptedChat(["navigate('Medicine_2')\ngrasp('Medicine_2')", GOOD])
    recovery = Recovery(LLMRecoveryPlanner(chat), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    assert plan.proposals == 2 and plan.proof is not None and plan.proof.ok
    second = chat.calls[1][0]["content"]
    assert (
        "Your previous answer was rejected: the plan \"navigate('Medicine_2'); "
        "grasp('Medicine_2')\" cannot work: after the plan, grasp(Medicine_2) would still fail "
        "(robot state): " in second
    )
    assert "holding the Apple" in second
    assert plan.rejected == [requests_feedback(recovery, second)]
    tree = recovery.compile(plan)
    run_tree(tree)
    assert robot.calls[:2] == [("navigate", [COUNTER]), ("put", [APPLE, COUNTER])]


def requests_feedback(recovery: Recovery, prompt: str) -> str:
    """The rejection reason as the prompt shows it."""
    line = next(x for x in prompt.splitlines() if x.startswith("Your previous answer was"))
    return line.removeprefix("Your previous answer was rejected: ")


# ------------------------------------------------------------------------- after an answer

#: Where to put the Apple down is the person's call: the counter works, the closed fridge not.
ASKS_WHERE = (
    "where = ask('Where should I put the apple down?')\n"
    "navigate(where)\n"
    "put('Apple', where)\n"
    "navigate('Medicine_2')\n"
    "grasp('Medicine_2')"
)


def answer_dependent(answer: str) -> tuple[Recovery, ToyRobot, py_trees.behaviour.Behaviour]:
    robot, request = busy_hand()
    human = ScriptedHuman([answer])
    recovery = Recovery(Fixed(ASKS_WHERE), robot, human, actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    assert plan.proof is not None and plan.proof.ok and plan.proof.waits_on_answer
    assert plan.proof.checked_steps == 0 and "waits on the answer" in plan.proof.reason
    tree = recovery.compile(plan)
    kinds = [type(c) for c in tree.children]
    assert kinds == [GroundedAsk, AnswerCheck, ActionBehaviour, ActionBehaviour, ActionBehaviour]
    run_tree(tree)
    return recovery, robot, tree


def test_an_answer_that_makes_the_plan_fail_stops_it_before_the_next_robot_action() -> None:
    recovery, robot, tree = answer_dependent("in the fridge")
    assert tree.status == Status.FAILURE
    check = tree.children[1]
    assert check.status == Status.FAILURE and check.final
    assert check.proof is not None and not check.proof.ok
    assert "step 3, put('Apple', where): wrong state" in check.feedback_message
    assert "closed" in check.feedback_message
    assert robot.calls == []  # not even the move to the fridge
    gone = recovery.unrecoverable
    assert gone is not None and gone.reason == check.proof.reason
    assert gone.action == "grasp(Medicine_2)"


def test_an_answer_that_keeps_the_plan_valid_lets_it_run() -> None:
    recovery, robot, tree = answer_dependent("on the counter")
    assert tree.status == Status.SUCCESS
    check = tree.children[1]
    assert check.status == Status.SUCCESS and check.proof is not None and check.proof.ok
    assert check.proof.checked_steps == 3
    assert robot.calls == [
        ("navigate", [COUNTER]),
        ("put", [APPLE, COUNTER]),
        ("navigate", [FAR_FROM_PLANT]),
    ]
    assert recovery.unrecoverable is None


def test_a_guard_stops_when_the_answer_makes_its_recovery_fail() -> None:
    robot = ToyRobot(toy_scene_dict(holding_apple=True))
    child = py_trees.behaviours.Success(name="the user's grasp")
    guard = RaiderGuard(
        child,
        "grasp(Medicine_2)",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(
            Fixed(ASKS_WHERE), robot, ScriptedHuman(["the fridge"]), actions=TOY_ACTIONS
        ),
    )
    run_tree(guard)
    assert guard.status == Status.FAILURE and child.status == Status.INVALID
    assert "recovery stopped" in guard.feedback_message
    assert "cannot work with this answer" in guard.feedback_message
    assert robot.calls == []


def test_proof_is_frozen_with_defaults() -> None:
    proof = Proof(False, "step 1, pick('X'): no")
    assert proof.checked_steps == 0 and not proof.waits_on_answer
    with pytest.raises(AttributeError):
        proof.ok = True  # type: ignore[misc]


def test_a_verification_that_raises_after_the_answer_fails_closed() -> None:
    robot, request = busy_hand()

    class BreaksOnAnswers(SceneVerifier):
        def verify(self, plan, request, answers=None):
            if answers:
                raise ValueError("the scene copy is damaged")
            return super().verify(plan, request, answers)

    recovery = Recovery(
        Fixed(ASKS_WHERE),
        robot,
        ScriptedHuman(["on the counter"]),
        actions=TOY_ACTIONS,
        verifier=BreaksOnAnswers(),
    )
    tree = recovery.compile(recovery.plan(request))
    run_tree(tree)
    check = tree.children[1]
    assert tree.status == Status.FAILURE and check.status == Status.FAILURE
    assert "verifying the plan failed: ValueError: the scene copy is damaged" in (
        check.feedback_message
    )
    assert robot.calls == []


def test_a_blocked_way_is_seen_before_the_robot_sets_off(small_kitchen_dict: dict) -> None:
    """The Egg is in the closed Fridge and a Stool blocks the way there: the plan
    ``move_to('Fridge'); open('Fridge'); pick('Egg')`` is refuted at its first step."""
    from bt_raider.robot.actions import SyncRobot
    from bt_raider.simulation.simworld import SimWorld

    world = SimWorld(small_kitchen_dict)
    world.block("Fridge", "Stool_1")
    robot = SyncRobot(world)
    child = ActionBehaviour("pick", ["Egg"], robot)
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]))
    guard = RaiderGuard(
        child, "pick(Egg)", SymbolicReasoner(), scene=robot.observe, recovery=recovery
    )
    run_tree(guard)
    assert guard.status == Status.FAILURE and child.status == Status.INVALID
    assert "step 1, move_to('Fridge'): obstructed: The path to the Fridge is blocked by" in (
        guard.feedback_message
    )
    assert [e for e in world.log if e["kind"] == "action"] == []  # the robot never moved
    assert recovery.refuted == 1


def test_the_verifier_refuses_a_made_up_place_and_a_blocked_named_place() -> None:
    robot, request = busy_hand()
    recovery = Recovery(Fixed(ASKS_WHERE), robot, ScriptedHuman([]), actions=TOY_ACTIONS)
    plan = recovery.plan(request)
    verifier = SceneVerifier()

    made_up = verifier.verify(plan, request, {"where": "red mug"})
    assert not made_up.ok
    assert made_up.reason.startswith("step 2, navigate(where): 'red mug' is no object")

    scene = request.scene
    assert scene is not None
    scene.data["locations"] = {"shelf": {"x": 1.0, "y": 0.0, "z": 1.0}}
    assert verifier.verify(plan, request, {"where": "shelf"}).reason.startswith("step 3")
    scene.data["blocked"] = {"shelf": [APPLE]}
    blocked = verifier.verify(plan, request, {"where": "shelf"})
    assert not blocked.ok
    assert blocked.reason.startswith("step 2, navigate(where): obstructed: The path to the")
    assert robot.calls == []


def test_an_answer_check_reads_the_variables_of_its_own_scope() -> None:
    robot, request = busy_hand()
    recovery = Recovery(
        Fixed(ASKS_WHERE), robot, ScriptedHuman(["on the counter"]), actions=TOY_ACTIONS
    )
    plan = recovery.plan(request)
    # Another recovery's `where`, unscoped and in another scope: never read by this one.
    board = py_trees.blackboard.Blackboard
    board.set("/bt_raider/vars/where", "Fridge")
    board.set("/bt_raider/vars/other/1/where", "Fridge")
    tree = recovery.compile(plan, scope="mine/1")
    check = tree.children[1]
    assert isinstance(check, AnswerCheck) and check.scope == "mine/1"
    run_tree(tree)
    assert tree.status == Status.SUCCESS and check.status == Status.SUCCESS
    assert board.get("/bt_raider/vars/mine/1/where") == COUNTER
    assert robot.calls[:2] == [("navigate", [COUNTER]), ("put", [APPLE, COUNTER])]
