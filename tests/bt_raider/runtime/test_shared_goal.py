"""SharedGoalGuard: statuses of the guard and its child on every tick, never blocking."""

from __future__ import annotations

import threading
import time

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.cooperation.messages import answer_request
from bt_raider.cooperation.messaging import InProcessHub, Message
from bt_raider.cooperation.observations import Goal, ObjectInfo, Relevance, Sighting
from bt_raider.cooperation.relevance import SymbolicRelevance
from bt_raider.cooperation.reveca_memory import RevecaMemory
from bt_raider.cooperation.validator import Validator
from bt_raider.runtime.shared_goal import SHARED_GOALS_NAMESPACE, SharedGoalGuard
from bt_raider.simulation.multirobot import CATALOGUE, default_house

GOAL = Goal(("cupcake", "apple"), "coffeetable", "on", "1", "livingroom", (2.0, 2.0))
APPLE = GOAL.subgoal("apple", "7")
KEY = f"{SHARED_GOALS_NAMESPACE}/{APPLE.key}"
INVALID, RUNNING, SUCCESS, FAILURE = Status.INVALID, Status.RUNNING, Status.SUCCESS, Status.FAILURE
#: Seconds a held validation stays held (bob's answer waits on ``Team.release``); the
#: validator gives up after as long, so a tick that waited for it would take this long.
GATE_S = 5.0
#: A tick that does not wait for the gate ends well within this, even on a loaded machine.
TICK_LIMIT_S = GATE_S / 5


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.enable_activity_stream(maximum_size=10)
    yield
    py_trees.blackboard.Blackboard.clear()
    py_trees.blackboard.Blackboard.disable_activity_stream()


class Team:
    """alice validates; bob answers from his task history once ``release`` is set."""

    def __init__(self, bob_took_it: bool, bob_in_kitchen: bool = True):
        self.hub = InProcessHub()
        names = ("alice", "bob")
        self.memory = {
            n: RevecaMemory(n, GOAL, default_house(), names, estimator=SymbolicRelevance(CATALOGUE))
            for n in names
        }
        self.bus = {n: self.hub.connect(n) for n in names}
        self.release = threading.Event()
        self.requests: list[Message] = []
        bob = self.memory["bob"]
        bob.room, bob.step = "kitchen", 20
        if bob_took_it:
            bob.history.grabbed["7"] = "apple"

        def slow_answer(req: Message) -> Message:
            self.requests.append(req)
            self.release.wait(2 * GATE_S)  # held past the validator's own timeout
            return answer_request(bob, req)

        self.bus["bob"].serve(slow_answer)
        alice = self.memory["alice"]
        alice.step, alice.room, alice.position = 20, "livingroom", (4.0, 3.0)
        alice.observations.put(
            ObjectInfo(
                "7",
                "apple",
                "kitchen",
                (12.0, 1.0),
                2,
                actions=("grab",),
                relevance=Relevance.STRONG,
            )
        )
        if bob_in_kitchen:
            alice.collaborators["bob"].note(Sighting(5, "kitchen", (11.0, 3.0), False))
        self.validator = Validator(alice, self.bus["alice"], timeout=GATE_S)


def child_queue(*statuses: Status) -> py_trees.behaviours.StatusQueue:
    return py_trees.behaviours.StatusQueue(
        name="fetch apple", queue=list(statuses), eventually=SUCCESS
    )


def tick(guard, expect_guard: Status, expect_child: Status):
    t0 = time.perf_counter()
    guard.tick_once()
    took = time.perf_counter() - t0
    assert (guard.status, guard.decorated.status) == (expect_guard, expect_child), (
        guard.feedback_message
    )
    # Not a timing benchmark: it only shows the tick did not wait for a held validation.
    assert took < TICK_LIMIT_S, f"a tick took {took:.3f} s: it waited for the validation"


def wait_validated(guard, limit=5.0):
    deadline = time.monotonic() + limit
    while guard.validating and guard._pending is not None and not guard._pending.done():
        assert time.monotonic() < deadline, "validation did not finish"
        time.sleep(0.002)


def test_a_collaborator_confirms_then_success_without_running_the_child():
    team = Team(bob_took_it=True)
    child = child_queue(RUNNING, SUCCESS)
    guard = SharedGoalGuard(child, APPLE, team.validator)
    tick(guard, RUNNING, INVALID)  # validation submitted, child untouched
    deadline = time.monotonic() + 5
    while not team.requests:  # bob has the question; his answer is held back
        assert time.monotonic() < deadline
        time.sleep(0.002)
    for _ in range(3):
        tick(guard, RUNNING, INVALID)  # waiting for bob never blocks a tick
    assert guard.validating
    team.release.set()
    wait_validated(guard)
    tick(guard, SUCCESS, INVALID)  # the sub-goal is done by bob: the child never ran
    assert guard.result.achieved_by == "bob" and guard.result.asked == ("bob",)
    record = py_trees.blackboard.Blackboard.get(KEY)
    assert record["achieved_by"] == "bob"
    assert "7" not in team.memory["alice"].observations  # stale information dropped
    assert "done by bob" in guard.feedback_message
    # ticked again later: already recorded, SUCCESS at once, no new question
    tick(guard, SUCCESS, INVALID)
    assert len(team.requests) == 1


def test_denial_commits_and_the_guard_reflects_the_child():
    team = Team(bob_took_it=False)
    team.release.set()
    child = child_queue(RUNNING, RUNNING, SUCCESS)
    guard = SharedGoalGuard(child, APPLE, team.validator)
    tick(guard, RUNNING, INVALID)
    wait_validated(guard)
    tick(guard, RUNNING, RUNNING)  # committed: the child runs in the same tick
    assert "committed" in guard.feedback_message
    tick(guard, RUNNING, RUNNING)
    tick(guard, SUCCESS, SUCCESS)
    assert guard.result.answers == {"bob": "no"}
    assert KEY not in py_trees.blackboard.Blackboard.storage  # only collaborators' work is recorded


def test_nobody_could_have_done_it_commits_without_a_message():
    team = Team(bob_took_it=True, bob_in_kitchen=False)
    team.memory["alice"].collaborators["bob"].note(Sighting(19, "bedroom", (2.0, 10.0), True))
    child = child_queue(FAILURE)
    guard = SharedGoalGuard(child, APPLE, team.validator)
    guard.tick_once()
    if guard.status is RUNNING:  # the validation still runs: the child waits
        assert guard.decorated.status is INVALID, guard.feedback_message
        wait_validated(guard)
        tick(guard, FAILURE, FAILURE)  # the child's failure is the guard's
    else:  # it needed no message and was done within the first tick (a busy worker's timing)
        assert (guard.status, guard.decorated.status) == (FAILURE, FAILURE)
    assert "nobody likely" in guard.feedback_message or "fetch apple" in guard.feedback_message
    assert team.requests == [] and team.hub.stats.messages == 0


def test_a_subgoal_already_recorded_succeeds_at_once():
    team = Team(bob_took_it=True)
    py_trees.blackboard.Blackboard.set(KEY, {"achieved_by": "bob"})
    guard = SharedGoalGuard(child_queue(RUNNING), APPLE, team.validator)
    tick(guard, SUCCESS, INVALID)
    assert team.requests == [] and "already achieved" in guard.feedback_message


def test_terminate_cancels_the_validation():
    team = Team(bob_took_it=True)
    guard = SharedGoalGuard(child_queue(RUNNING), APPLE, team.validator)
    tick(guard, RUNNING, INVALID)
    pending = guard._pending
    guard.stop(INVALID)
    assert pending.cancelled and guard.status == INVALID and guard.decorated.status == INVALID
    assert "cancelled" in guard.feedback_message
    team.release.set()
    # restarting validates afresh
    tick(guard, RUNNING, INVALID)
    wait_validated(guard)
    tick(guard, SUCCESS, INVALID)


def test_a_broken_subgoal_source_fails_closed_with_the_reason():
    team = Team(bob_took_it=False)
    guard = SharedGoalGuard(child_queue(RUNNING), lambda: None, team.validator, name="planned")
    tick(guard, FAILURE, INVALID)
    assert "not a SubGoal" in guard.feedback_message


def test_a_subgoal_chosen_at_planning_time_and_its_own_namespace():
    team = Team(bob_took_it=True)
    team.release.set()
    chosen = {"sub": APPLE}
    guard = SharedGoalGuard(
        child_queue(RUNNING),
        lambda: chosen["sub"],
        team.validator,
        name="planned",
        namespace="/alice/shared",
    )
    tick(guard, RUNNING, INVALID)
    wait_validated(guard)
    tick(guard, SUCCESS, INVALID)
    assert py_trees.blackboard.Blackboard.get(f"/alice/shared/{APPLE.key}")["achieved_by"] == "bob"
    assert KEY not in py_trees.blackboard.Blackboard.storage


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (KeyError("apple"), "raised KeyError: 'apple'"),
        (RuntimeError(), "raised RuntimeError"),
    ],
)
def test_a_raising_subgoal_source_fails_closed_on_the_tick(error, reason):
    team = Team(bob_took_it=False)
    team.release.set()
    calls = []

    def planned() -> object:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return APPLE

    child = child_queue(RUNNING, SUCCESS)
    guard = SharedGoalGuard(child, planned, team.validator, name="planned")
    tick(guard, FAILURE, INVALID)  # the exception stays in the guard: the child never runs
    assert reason in guard.feedback_message and guard.phase == "failed"
    assert guard._pending is None and team.requests == []
    # The next run asks the function again; a sub-goal now validates and commits as usual.
    tick(guard, RUNNING, INVALID)
    wait_validated(guard)
    tick(guard, RUNNING, RUNNING)
    tick(guard, SUCCESS, SUCCESS)
    assert len(calls) == 2
