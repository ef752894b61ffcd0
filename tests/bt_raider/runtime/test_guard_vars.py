"""Recovery variables are scoped per guard and per recovery run.

Two guards in a py_trees ``Parallel``, each around a team's own pick behaviour (a plain
``py_trees.behaviour.Behaviour``), both recovering with code that writes ``choice = ask(...)``
and has steps between the ask and the resumed action. Before scoping, both wrote
``/bt_raider/vars/choice``: the cup guard's re-check read the mug answer and its child picked a
mug. Hypothesis varies the interleaving: the order of the guards in the Parallel, the steps
between the ask and the resume, how many ticks each answer and each robot action take.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.robot.actions import VARS_NAMESPACE, ActionState, Progress
from bt_raider.robot.retarget import ResolvedAction
from bt_raider.runtime.guards import Phase, RaiderGuard

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
MAX_TICKS = 3000

CLEAN_CUP, DIRTY_CUP = "Cup|+00.20|+00.90|+00.50", "Cup|-00.20|+00.90|+00.50"
CLEAN_MUG, DIRTY_MUG = "Mug|+00.30|+00.90|+00.40", "Mug|-00.30|+00.90|+00.40"


def thing(object_id: str, x: float, z: float, dirty: bool) -> dict[str, Any]:
    return {
        "objectId": object_id,
        "objectType": object_id.split("|", 1)[0],
        "position": {"x": x, "y": 0.9, "z": z},
        "visible": True,
        "pickupable": True,
        "dirtyable": True,
        "isDirty": dirty,
    }


SCENE = {
    "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
    "objects": [
        thing(CLEAN_CUP, 0.2, 0.5, False),
        thing(DIRTY_CUP, -0.2, 0.5, True),
        thing(CLEAN_MUG, 0.3, 0.4, False),
        thing(DIRTY_MUG, -0.3, 0.4, True),
    ],
}


class TeamRobot:
    """The team's robot: actions take a set number of polls; the scene does not change."""

    def __init__(self, polls: dict[str, int]) -> None:
        self.polls = polls
        self.log: list[tuple[str, list[Any]]] = []
        self._left: dict[int, int] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.log.append((action, list(args)))
        self._left[len(self.log)] = self.polls.get(str(args[0]).split("|", 1)[0], 1)
        return len(self.log)

    def poll(self, handle: Hashable) -> Progress:
        self._left[handle] -= 1  # type: ignore[index]
        done = self._left[handle] <= 0  # type: ignore[index]
        return Progress(ActionState.SUCCEEDED if done else ActionState.RUNNING)

    def cancel(self, handle: Hashable) -> None:
        self._left.pop(handle, None)  # type: ignore[call-overload]

    def observe(self) -> dict[str, Any]:
        return SCENE


class TeamPick(py_trees.behaviour.Behaviour):
    """The team's own pick: the one bt_raider method it has is ``retarget``."""

    def __init__(self, name: str, target: str, robot: TeamRobot) -> None:
        super().__init__(name)
        self.target, self.robot = target, robot
        self.resolved: ResolvedAction | None = None
        self.handle: Hashable = None

    def retarget(self, resolved: ResolvedAction | None) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        target = self.resolved.args[0] if self.resolved else self.target
        self.handle = self.robot.start("pick", [target])

    def update(self) -> Status:
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return R
        return S if state is ActionState.SUCCEEDED else F


class ChoicePlanner:
    """A model's plan, as an LLM writes it: the same variable name in every recovery."""

    def __init__(self, says: dict[str, int]) -> None:
        self.says = says

    def propose(self, request: Any, *, cancel: Any = None) -> str:
        kind = "cup" if "cup" in request.action.lower() else "mug"
        lines = [f"choice = ask('Which {kind} shall I take?')"]
        lines += [f"say('Thank you, one moment ({i}).')" for i in range(self.says[kind])]
        return "\n".join([*lines, "pick(choice)"])


class TickHuman:
    """Answers each question once the tree has ticked ``delay[kind]`` more times."""

    ANSWERS = {"cup": "the clean cup", "mug": "the dirty mug"}

    def __init__(self, delay: dict[str, int]) -> None:
        self.delay = delay
        self.tick = 0
        self._cond = threading.Condition()
        self.asked: list[str] = []
        self.said: list[str] = []

    def advance(self) -> None:
        with self._cond:
            self.tick += 1
            self._cond.notify_all()

    def ask(self, question: str) -> str:
        kind = "cup" if "cup" in question else "mug"
        with self._cond:
            self.asked.append(question)
            until = self.tick + self.delay[kind]
            # Bounded: a tree that stops ticking must not hang the worker (not a timing test).
            self._cond.wait_for(lambda: self.tick >= until, timeout=10)
        return self.ANSWERS[kind]

    def say(self, text: str) -> None:
        self.said.append(text)


def run_two_guards(
    *, cup_first: bool, says: dict[str, int], delay: dict[str, int], polls: dict[str, int]
) -> tuple[TeamRobot, dict[str, RaiderGuard], dict[str, TeamPick]]:
    robot = TeamRobot(polls)
    human = TickHuman(delay)
    recovery = Recovery(ChoicePlanner(says), robot, human)
    picks = {k: TeamPick(f"pick {k}", k.capitalize(), robot) for k in ("cup", "mug")}
    guards = {
        k: RaiderGuard(
            picks[k],
            f"pick the {k}",
            SymbolicReasoner(),
            scene=robot.observe,
            recovery=recovery,
            name=f"guard {k}",
        )
        for k in ("cup", "mug")
    }
    order = ["cup", "mug"] if cup_first else ["mug", "cup"]
    root = py_trees.composites.Parallel(
        "both",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True),
        children=[guards[k] for k in order],
    )
    for _ in range(MAX_TICKS):
        root.tick_once()
        human.advance()
        for k in order:
            guard, child = guards[k], picks[k]
            # Every tick: the child runs only after its guard's passing check.
            if guard.phase is not Phase.ACTING:
                assert child.status is I or guard.status is not R, (k, guard.phase, child.status)
            if child.status is R:
                assert guard.status is R and guard.phase is Phase.ACTING
            if guard.status is S:
                assert child.status is S
            assert guard.feedback_message
        if root.status is not R:
            break
        threading.Event().wait(0.001)  # let the workers run (not a timing assertion)
    return robot, guards, picks


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cup_first=st.booleans(),
    says=st.fixed_dictionaries({"cup": st.integers(0, 2), "mug": st.integers(1, 3)}),
    delay=st.fixed_dictionaries({"cup": st.integers(0, 3), "mug": st.integers(0, 3)}),
    polls=st.fixed_dictionaries({"Cup": st.integers(1, 3), "Mug": st.integers(1, 3)}),
)
def test_each_guard_picks_what_its_own_person_answered(
    cup_first: bool, says: dict[str, int], delay: dict[str, int], polls: dict[str, int]
) -> None:
    py_trees.blackboard.Blackboard.clear()
    robot, guards, picks = run_two_guards(cup_first=cup_first, says=says, delay=delay, polls=polls)

    assert guards["cup"].status is S and guards["mug"].status is S
    assert picks["cup"].status is S and picks["mug"].status is S
    assert sorted(robot.log) == sorted([("pick", [CLEAN_CUP]), ("pick", [DIRTY_MUG])])
    assert picks["cup"].resolved is not None and picks["cup"].resolved.args == (CLEAN_CUP,)
    assert picks["mug"].resolved is not None and picks["mug"].resolved.args == (DIRTY_MUG,)
    # Each run had its own scope, and it is gone once the run ended.
    assert guards["cup"].vars_scope != guards["mug"].vars_scope
    left = [k for k in py_trees.blackboard.Blackboard.storage if k.startswith(VARS_NAMESPACE)]
    assert left == []
