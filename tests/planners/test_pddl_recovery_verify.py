"""PddlVerifier: a recovery plan is simulated in the PDDL domain before any of it runs."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.errors import ActionFailed
from bt_raider.llm.chat import ScriptedChat
from bt_raider.planners import pddl
from bt_raider.planners.pddl_recovery import PddlRecoveryPlanner, PddlVerifier, vocabulary
from bt_raider.planners.preconditions import PddlChecker
from bt_raider.planners.world import PddlWorld
from bt_raider.recovery.contract import RecoveryRequest
from bt_raider.recovery.llm import LLMRecoveryPlanner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.verify import Unrecoverable, Verifier
from bt_raider.robot.actions import ActionBehaviour, ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import RaiderGuard

Status = py_trees.common.Status
PICK = "(pick ball1 rooma left)"


class Fixed:
    """A planner that always proposes the same code."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.requests: list[RecoveryRequest] = []

    def propose(self, request, *, cancel=None) -> str:
        self.requests.append(request)
        return self.code


class RecordingRobot:
    """The test's own robot over a PddlWorld: records every call, acts at once."""

    def __init__(self, world: PddlWorld) -> None:
        self.world = world
        self.calls: list[tuple[str, list[Any]]] = []
        self._results: dict[int, Progress] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.calls.append((action, list(args)))
        try:
            self._results[len(self.calls)] = Progress(
                ActionState.SUCCEEDED, self.world.execute(action, list(args))
            )
        except ActionFailed as exc:
            self._results[len(self.calls)] = Progress(ActionState.FAILED, str(exc))
        return len(self.calls)

    def poll(self, handle: Hashable) -> Progress:
        return self._results[handle]  # type: ignore[index]

    def cancel(self, handle: Hashable) -> None:
        pass

    def observe(self) -> None:
        return None


def away(gripper) -> PddlWorld:
    """The robot was sent to roomb: picking ball1 in rooma needs a move back first."""
    world = PddlWorld(gripper)
    world.execute("move", ["rooma", "roomb"])
    return world


def request_for(world: PddlWorld, action: str = PICK) -> RecoveryRequest:
    return RecoveryRequest(action, PddlChecker(world).check(None, action))


def test_pddl_verifier_is_a_verifier(gripper) -> None:
    assert isinstance(PddlVerifier(gripper), Verifier)
    assert isinstance(PddlRecoveryPlanner(gripper).verifier, PddlVerifier)


def test_the_planner_s_own_plan_is_proved_in_the_domain(gripper) -> None:
    world = away(gripper)
    recovery = Recovery(
        PddlRecoveryPlanner(world, engine="pyperplan"),
        None,  # type: ignore[arg-type]
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
    )
    assert isinstance(recovery.verifier, PddlVerifier)  # the planner brought its own
    plan = recovery.plan(request_for(world))
    assert plan.proof is not None and plan.proof.ok and plan.proof.checked_steps == 1
    assert plan.proof.reason == "after 1 step(s), (pick ball1 rooma left) is applicable"


def test_a_plan_that_does_not_reach_the_preconditions_is_rejected_before_anything_runs(
    gripper,
) -> None:
    world = away(gripper)
    robot = RecordingRobot(world)
    planner = Fixed("pick('ball1', 'rooma', 'left')")  # forgot to move back
    recovery = Recovery(
        planner,
        robot,
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
        verifier=PddlVerifier(world),
    )
    with pytest.raises(Unrecoverable) as err:
        recovery.plan(request_for(world))
    assert err.value.reason.endswith(
        "cannot work: after the plan, (pick ball1 rooma left) would still fail: unsatisfied "
        "preconditions (at-robby rooma)"
    )
    assert len(planner.requests) == 2  # it proposed the same plan again: not asked a third time
    assert robot.calls == [] and [s.text for s in world.history] == ["(move rooma roomb)"]


def test_a_step_that_is_not_applicable_is_named(gripper) -> None:
    world = away(gripper)
    planner = Fixed(
        "drop('ball1', 'rooma', 'left')\nmove('roomb', 'rooma')\npick('ball1', 'rooma', 'left')"
    )
    recovery = Recovery(
        planner,
        RecordingRobot(world),
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
        verifier=PddlVerifier(world),
        max_retries=0,
    )
    with pytest.raises(
        Unrecoverable, match=r"step 1, drop\('ball1', 'rooma', 'left'\): unsatisfied"
    ):
        recovery.plan(request_for(world))


def test_inside_a_guard_the_refuted_plan_never_starts(gripper) -> None:
    world = away(gripper)
    robot = RecordingRobot(world)
    child = ActionBehaviour("pick", ["ball1", "rooma", "left"], robot)
    recovery = Recovery(
        Fixed("pick('ball1', 'rooma', 'left')"),
        robot,
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
        verifier=PddlVerifier(world),
    )
    guard = RaiderGuard(child, PICK, PddlChecker(world), scene=None, recovery=recovery)
    for _ in range(200):
        guard.tick_once()
        if guard.status != Status.RUNNING:
            break
        pending = guard._pending  # the check or the planning on its worker
        if pending is not None:
            pending.wait(5.0)
    assert guard.status == Status.FAILURE
    assert (
        "Unrecoverable" in guard.feedback_message and "(at-robby rooma)" in guard.feedback_message
    )
    assert robot.calls == []
    assert recovery.unrecoverable is not None


def test_an_llm_plan_is_verified_against_the_domain_and_corrected(gripper) -> None:
    world = away(gripper)
    chat = ScriptedChat(
        [
            "pick('ball1', 'rooma', 'left')",
            "move('roomb', 'rooma')\npick('ball1', 'rooma', 'left')",
        ]
    )
    recovery = Recovery(
        LLMRecoveryPlanner(chat, vocabulary=vocabulary(gripper)),
        RecordingRobot(world),
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
        verifier=PddlVerifier(world),
    )
    plan = recovery.plan(request_for(world))
    assert plan.proposals == 2 and plan.proof is not None and plan.proof.ok
    assert "unsatisfied preconditions (at-robby rooma)" in chat.calls[1][0]["content"]


def test_the_start_state_is_the_one_the_plan_was_made_in(gripper) -> None:
    """Verified again later (after an answer), the plan replays from where it started."""
    world = away(gripper)
    verifier = PddlVerifier(world)
    recovery = Recovery(
        Fixed("move('roomb', 'rooma')\npick('ball1', 'rooma', 'left')"),
        None,  # type: ignore[arg-type]
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
        verifier=verifier,
    )
    request = request_for(world)
    plan = recovery.plan(request)
    world.execute("move", ["roomb", "rooma"])  # the plan's first step ran
    again = verifier.verify(plan, request, {})
    assert again.ok and again.checked_steps == 1
    # A verifier that never saw the plan starts from the world as it is now: move fails.
    assert not PddlVerifier(world).verify(plan, request, {}).ok


STEPS = st.lists(
    st.tuples(
        st.sampled_from(["move", "pick", "drop"]),
        st.sampled_from(["ball1", "ball2"]),
        st.sampled_from(["rooma", "roomb"]),
        st.sampled_from(["rooma", "roomb"]),
        st.sampled_from(["left", "right"]),
    ),
    max_size=5,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_proved_means_the_world_runs_it_and_the_action_is_applicable(gripper, steps) -> None:
    """The verifier's verdict agrees with executing the plan in a fresh copy of the world."""
    code = []
    for name, ball, a, b, hand in steps:
        code.append(
            f"move({a!r}, {b!r})" if name == "move" else f"{name}({ball!r}, {a!r}, {hand!r})"
        )
    code.append("drop('ball1', 'roomb', 'left')")
    target = "(drop ball1 roomb left)"
    world = PddlWorld(gripper)
    recovery = Recovery(
        Fixed("\n".join(code)),
        None,  # type: ignore[arg-type]
        ScriptedHuman([]),
        vocabulary=vocabulary(gripper),
        verifier=PddlVerifier(world),
        max_retries=0,
    )
    try:
        recovery.plan(request_for(world, target))
        proved = True
    except Unrecoverable:
        proved = False
    fresh = PddlWorld(gripper)
    try:
        for line in code[:-1]:
            step = pddl.parse_step(line)
            fresh.execute(step.name, step.args)
        runs = fresh.is_applicable(target)
    except ActionFailed:
        runs = False
    assert proved == runs
