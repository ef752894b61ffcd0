"""Look-ahead in scene-level plans, and the LookAhead decorator in a team's own tree.

The plans' steps are plain py_trees behaviours written here (a toy robot's actions that take a
few ticks), the scene is a dict built here, and the checks are the real symbolic reasoner's.
Every tick of the decorator tests asserts the decorator's and the steps' statuses.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time
from typing import Any

import py_trees
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.perception.scene import Scene
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import Phase, RaiderGuard
from bt_raider.runtime.lookahead import (
    LAST_FORECAST,
    Forecast,
    LookAhead,
    SceneForecaster,
    forecast_key,
    forecast_scene,
)

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
WAIT_S = 10.0

CLEAN_CUP = "Cup|+00.20|+00.90|+00.50"
DIRTY_CUP = "Cup|-00.20|+00.90|+00.50"
COUNTER = "CounterTop|+00.00|+00.85|+00.50"
DRAWER = "Drawer|+00.40|+00.70|+00.30"
APPLE = "Apple|+00.10|+00.90|+00.40"


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def kitchen() -> dict[str, Any]:
    """In reach: a counter with a clean cup, a dirty cup and an apple; a closed drawer."""

    def thing(object_id: str, x: float, z: float, **flags: Any) -> dict[str, Any]:
        kind = object_id.split("|")[0]
        return {
            "objectId": object_id,
            "objectType": kind,
            "position": {"x": x, "y": 0.9, "z": z},
            "visible": True,
            **flags,
        }

    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": [
            thing(CLEAN_CUP, 0.2, 0.5, pickupable=True, dirtyable=True, isDirty=False,
                  parentReceptacles=[COUNTER]),
            thing(DIRTY_CUP, -0.2, 0.5, pickupable=True, dirtyable=True, isDirty=True,
                  parentReceptacles=[COUNTER]),
            thing(APPLE, 0.1, 0.4, pickupable=True, parentReceptacles=[COUNTER]),
            thing(COUNTER, 0.0, 0.5, receptacle=True,
                  receptacleObjectIds=[CLEAN_CUP, DIRTY_CUP, APPLE]),
            thing(DRAWER, 0.4, 0.3, openable=True, isOpen=False, receptacle=True),
        ],
        "inventoryObjects": [],
    }  # fmt: skip


def scene() -> Scene:
    return Scene.from_dict(kitchen())


#: Step 4 ("pick the cup") will be ambiguous: three steps ahead of step 1.
AMBIGUOUS_LATER = ["open the drawer", "close the drawer", "open the drawer", "pick the cup"]
#: Step 4 will find the hand full: step 3 picked the apple.
HAND_FULL_LATER = ["open the drawer", "close the drawer", "pick the apple", "open the drawer"]
#: Nothing wrong with any step.
FINE = ["open the drawer", "pick the apple", "put the apple in the drawer", "close the drawer"]


# --------------------------------------------------------------------------- forecast_scene
def test_a_failure_three_steps_ahead_is_flagged_from_the_first_step():
    f = forecast_scene(scene(), AMBIGUOUS_LATER, SymbolicReasoner(), start=0)
    assert isinstance(f, Forecast)
    assert (f.step, f.of, f.ahead, f.category) == (3, 4, 3, "ambiguity")
    assert f.action == "pick the cup"
    assert f.explanation.startswith("step 4 of 4, pick the cup, will fail: ")
    assert "2 objects" in f.explanation or "Cup" in f.explanation
    assert f.verdict is not None and len(f.verdict.grounding["the cup"]) == 2
    assert f.as_verdict().category is Category.AMBIGUITY
    assert f.as_verdict().explanation == f.explanation


def test_the_earlier_steps_effects_make_the_later_failure():
    # Nothing is wrong with "open the drawer" in the scene now; after "pick the apple" (step 3)
    # the hand is full, so opening the drawer (step 4) will not be possible.
    assert SymbolicReasoner().check(scene(), "open the drawer").ok
    f = forecast_scene(scene(), HAND_FULL_LATER, SymbolicReasoner(), start=0)
    assert f is not None and (f.step, f.ahead, f.category) == (3, 3, "robot_state")
    assert "Apple" in f.explanation and f.failed == (f.verdict.explanation,)


def test_no_false_alarm_on_a_plan_that_is_fine():
    assert forecast_scene(scene(), FINE, SymbolicReasoner(), start=0) is None
    # Later, the scene shows what the earlier steps did (the drawer open): still fine.
    opened = kitchen()
    opened["objects"][-1]["isOpen"] = True
    for start in (1, 2, 3):
        assert forecast_scene(Scene.from_dict(opened), FINE, start=start) is None
    # ... but from the scene as it was, the put (step 3) looks impossible: the drawer is shut.
    f = forecast_scene(scene(), FINE, start=1)
    assert f is not None and (f.step, f.category) == (2, "wrong_state")


def test_depth_bounds_how_far_it_looks_and_the_scene_is_not_changed():
    s = scene()
    before = copy.deepcopy(s.data)
    assert forecast_scene(s, AMBIGUOUS_LATER, start=0, depth=2) is None
    f = forecast_scene(s, AMBIGUOUS_LATER, start=0, depth=3)
    assert f is not None and f.step == 3
    assert forecast_scene(s, AMBIGUOUS_LATER, start=3) is None  # nothing left to look at
    assert s.data == before


@pytest.mark.parametrize("start, depth", [(-1, None), (4, None), (0, 0), (0, -2), (True, None)])
def test_a_start_or_depth_out_of_range_is_an_error(start, depth):
    with pytest.raises(ValueError, match="start|depth"):
        forecast_scene(scene(), AMBIGUOUS_LATER, start=start, depth=depth)


class Raises:
    """A checker that raises on one query."""

    def __init__(self, bad: str) -> None:
        self.bad, self.inner = bad, SymbolicReasoner()

    def check(self, scene, query, *, cancel=None):
        if str(query) == self.bad:
            raise RuntimeError("the model server is down")
        return self.inner.check(scene, query)


def test_fails_closed_unknown_never_silence():
    f = forecast_scene(None, FINE, start=0)
    assert f is not None and f.unknown and f.step == 1 and "no scene" in f.explanation
    f = forecast_scene(scene(), FINE, Raises("put the apple in the drawer"), start=0)
    assert f is not None and f.unknown and f.step == 2
    assert "the model server is down" in f.explanation
    assert f.explanation.startswith("step 3 of 4, put the apple in the drawer, cannot be foreseen")
    f = forecast_scene(scene(), FINE, Raises("open the drawer"), start=0)
    assert f is not None and f.unknown and "current step could not be checked" in f.explanation
    # The current step is ambiguous: what it will change is not known, so neither is the rest.
    f = forecast_scene(scene(), ["pick the cup", "open the drawer"], start=0)
    assert f is not None and f.unknown and f.step == 1 and "not known yet" in f.explanation


@settings(max_examples=25, deadline=None)
@given(
    steps=st.lists(
        st.sampled_from(
            ["open the drawer", "close the drawer", "pick the apple", "pick the cup",
             "put the apple in the drawer", "pick the clean cup", "put the apple on the counter"]
        ),
        min_size=2,
        max_size=6,
    ),
    start=st.integers(0, 5),
    depth=st.one_of(st.none(), st.integers(1, 5)),
)  # fmt: skip
def test_the_forecast_is_the_first_issue_of_the_compound_check(steps, start, depth):
    """The same steps as one compound instruction: its first issue after ``start`` is ours."""
    start = min(start, len(steps) - 1)
    f = forecast_scene(scene(), steps, start=start, depth=depth)
    last = len(steps) - 1 if depth is None else min(len(steps) - 1, start + depth)
    if start == last:
        assert f is None
        return
    compound = SymbolicReasoner().check(scene(), ", then ".join(steps[start : last + 1]))
    records = compound.steps or [{"verdict": compound.to_json()}]
    categories = [r["verdict"]["category"] for r in records]
    if len(records) != last - start + 1:
        return  # the sentence split differently than the list; nothing to compare
    if categories[0] != "none" and f is not None and f.unknown and f.step == start + 1:
        return  # the current step's own issue left what it changes unknown
    later = [(i, c) for i, c in enumerate(categories[1:], start=start + 1) if c != "none"]
    if not later:
        assert f is None
    else:
        assert f is not None and (f.step, f.category) == later[0]


# --------------------------------------------------------------------------- the decorator
class ToyRobot:
    """The team's robot: actions take ``polls`` polls; its scene is a dict it keeps."""

    def __init__(self, polls: int = 2) -> None:
        self.polls, self.scene = polls, kitchen()
        self.log: list[tuple[str, list[str]]] = []
        self._left: dict[int, int] = {}

    def start(self, action, args):
        self.log.append((action, list(args)))
        self._left[len(self.log)] = self.polls
        return len(self.log)

    def poll(self, handle):
        self._left[handle] -= 1
        if self._left[handle] > 0:
            return Progress(ActionState.RUNNING)
        action, args = self.log[handle - 1]
        by_id = {o["objectId"]: o for o in self.scene["objects"]}
        if action in ("open", "close"):  # this kitchen has one thing to open: the drawer
            by_id[DRAWER]["isOpen"] = action == "open"
        elif action == "pick" and args[0] in by_id:
            by_id[args[0]].update(isPickedUp=True, parentReceptacles=None)
            kind = by_id[args[0]]["objectType"]
            self.scene["inventoryObjects"] = [{"objectId": args[0], "objectType": kind}]
        return Progress(ActionState.SUCCEEDED)

    def cancel(self, handle):
        self._left.pop(handle, None)

    def observe(self):
        return copy.deepcopy(self.scene)


class Act(py_trees.behaviour.Behaviour):
    """The team's own action node: starts on the robot, polls it."""

    def __init__(self, text: str, robot: ToyRobot) -> None:
        super().__init__(text)
        self.text, self.robot, self.resolved = text, robot, None

    def retarget(self, resolved):
        self.resolved = resolved

    def initialise(self):
        args = list(self.resolved.args) if self.resolved else [self.text]
        self.handle = self.robot.start(self.text.split()[0], args)

    def update(self):
        state = self.robot.poll(self.handle).state
        return S if state is ActionState.SUCCEEDED else R


class Hold(py_trees.behaviour.Behaviour):
    """A step that runs until the test releases it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.release = False

    def update(self):
        return S if self.release else R


class Gated:
    """A forecaster written here: waits for the test's gate, then answers ``answer(start)``."""

    def __init__(self, n: int, answer) -> None:
        self.n, self.answer = n, answer
        self.gate = threading.Event()
        self.calls: list[tuple[int, int | None]] = []

    def __len__(self) -> int:
        return self.n

    def forecast(self, start, depth=None, *, cancel=None):
        self.calls.append((start, depth))
        assert self.gate.wait(WAIT_S)
        return self.answer(start)


def eventually(condition) -> bool:
    """True once ``condition()`` is (a job starts when a worker thread takes it up)."""
    end = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True


def wait_done(node) -> None:
    pending = node.pending
    assert pending is not None and pending.wait(WAIT_S)


def statuses(nodes) -> list[Status]:
    return [n.status for n in nodes]


def forecast_at(step: int, start: int, n: int = 4, category: str = "wrong_state") -> Forecast:
    return Forecast(step, n, f"step{step}", step - start, category,
                    f"step {step + 1} of {n}, step{step}, will fail: the door is locked",
                    ("the door is locked",))  # fmt: skip


def test_the_decorator_never_blocks_a_tick_and_posts_the_forecast():
    steps = [Hold(f"step{i}") for i in range(4)]
    plan = py_trees.composites.Sequence("plan", memory=True, children=steps)
    forecaster = Gated(4, lambda start: forecast_at(3, start))
    la = LookAhead(plan, forecaster, depth=3)
    for _ in range(5):  # the forecast waits on the gate: every tick goes on regardless
        t0 = time.perf_counter()
        la.tick_once()
        assert time.perf_counter() - t0 < 1.0
        assert la.status is R and statuses(steps) == [R, I, I, I]
        assert la.pending is not None and not la.pending.done()
    assert eventually(lambda: forecaster.calls == [(0, 3)])  # once per step, not per tick
    bb = py_trees.blackboard.Blackboard
    assert not bb.exists(forecast_key("step3", la))
    forecaster.gate.set()
    wait_done(la)
    la.tick_once()
    assert la.status is R and statuses(steps) == [R, I, I, I]
    f = la.forecast
    assert f is not None and (f.step, f.ahead) == (3, 3)
    assert bb.get(forecast_key("step3", la))["explanation"] == f.explanation
    assert bb.get(LAST_FORECAST)["step_number"] == 4
    assert "will fail: the door is locked" in la.feedback_message
    # The next step starts: a new forecast from it, the plan runs on to the end.
    steps[0].release = True
    la.tick_once()
    assert la.status is R and statuses(steps) == [S, R, I, I]
    wait_done(la)
    assert forecaster.calls == [(0, 3), (1, 3)]
    for s in steps:
        s.release = True
    la.tick_once()
    assert la.status is S and statuses(steps) == [S, S, S, S]


def test_an_all_clear_later_takes_the_warning_back():
    answers = {0: forecast_at(3, 0), 1: None}
    steps = [Hold(f"step{i}") for i in range(4)]
    plan = py_trees.composites.Sequence("plan", memory=True, children=steps)
    forecaster = Gated(4, answers.get)
    forecaster.gate.set()
    la = LookAhead(plan, forecaster)
    la.tick_once()
    wait_done(la)
    la.tick_once()
    assert la.forecast is not None
    assert py_trees.blackboard.Blackboard.exists(forecast_key("step3", la))
    steps[0].release = True
    la.tick_once()
    wait_done(la)
    la.tick_once()
    assert la.status is R and statuses(steps) == [S, R, I, I]
    assert la.forecast is None and "no issue ahead" in la.feedback_message
    assert not py_trees.blackboard.Blackboard.exists(forecast_key("step3", la))
    assert py_trees.blackboard.Blackboard.get(LAST_FORECAST) is None


def test_a_forecaster_that_raises_is_an_unknown_forecast():
    def boom(start):
        raise RuntimeError("perception lost")

    steps = [Hold(f"step{i}") for i in range(3)]
    forecaster = Gated(3, boom)
    forecaster.gate.set()
    la = LookAhead(py_trees.composites.Sequence("plan", True, steps), forecaster)
    la.tick_once()
    wait_done(la)
    la.tick_once()
    assert la.status is R and statuses(steps) == [R, I, I]
    assert la.forecast is not None and la.forecast.unknown and la.forecast.step == 1
    assert "perception lost" in la.forecast.explanation


def test_every_n_ticks_looks_again_while_a_step_runs():
    steps = [Hold(f"step{i}") for i in range(3)]
    forecaster = Gated(3, lambda start: None)
    forecaster.gate.set()
    la = LookAhead(py_trees.composites.Sequence("plan", True, steps), forecaster, every=3)
    for _ in range(9):
        la.tick_once()
        assert la.status is R and statuses(steps) == [R, I, I]
        if la.pending is not None:
            wait_done(la)
    assert len(forecaster.calls) == 4  # the first tick (the step started), then ticks 3, 6, 9


def test_every_change_looks_again_when_the_world_changes():
    frame = {"n": 0}
    robot = ToyRobot(polls=100)
    queries = ["open the drawer", "pick the apple", "open the drawer"]
    forecaster = SceneForecaster(queries, robot.observe, version=lambda: frame["n"])
    steps = [Act(q, robot) for q in queries]
    la = LookAhead(py_trees.composites.Sequence("plan", True, steps), forecaster, every="change")
    la.tick_once()
    wait_done(la)
    la.tick_once()
    f = la.forecast
    assert f is not None and (f.step, f.category) == (2, "robot_state")
    # The apple is gone (someone ate it): picking it is the issue now, one step ahead.
    robot.scene["objects"] = [o for o in robot.scene["objects"] if o["objectId"] != APPLE]
    la.tick_once()
    assert la.pending is None and la.forecast is f  # no change reported: no new forecast
    frame["n"] += 1
    la.tick_once()
    wait_done(la)
    la.tick_once()
    assert la.status is R and statuses(steps) == [R, I, I]
    assert la.forecast is not None and (la.forecast.step, la.forecast.category) == (
        1,
        "not_present",
    )


def guarded_plan(robot: ToyRobot, queries, *, recovery: Recovery | None, checker):
    steps = [
        RaiderGuard(Act(q, robot), q, checker, scene=robot.observe, recovery=recovery)
        for q in queries
    ]
    return steps, py_trees.composites.Sequence("plan", memory=True, children=steps)


class Counting:
    """The guards' checker: the real symbolic reasoner, counting what it is asked."""

    def __init__(self) -> None:
        self.inner, self.asked = SymbolicReasoner(), []

    def check(self, scene, query, *, cancel=None):
        self.asked.append(str(query))
        return self.inner.check(scene, query)


def run(root, guards, max_ticks: int = 400, pause: float = 0.002) -> list[list[Status]]:
    """Tick to the end, ``pause`` seconds apart; every tick, the decorator and the step
    statuses are recorded."""
    seen = []
    for _ in range(max_ticks):
        root.tick_once()
        seen.append([root.status, *statuses(guards)])
        if root.status is not R:
            return seen
        time.sleep(pause)
    raise AssertionError(f"still running after {max_ticks} ticks: {root.feedback_message}")


def test_warn_posts_to_the_future_guard_which_still_checks_for_itself():
    robot = ToyRobot()
    checker = Counting()
    human = ScriptedHuman(["the clean cup"])
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, human)
    guards, plan = guarded_plan(robot, AMBIGUOUS_LATER, recovery=recovery, checker=checker)
    la = LookAhead(plan, SceneForecaster(AMBIGUOUS_LATER, robot.observe), policy="warn")
    la.tick_once()
    wait_done(la)
    la.tick_once()
    assert la.status is R and guards[0].status is R and statuses(guards[1:]) == [I, I, I]
    f = guards[3].forecast
    assert f is not None and (f.step, f.ahead, f.category) == (3, 3, "ambiguity")
    assert guards[3].early_verdict is None  # warn: the guard will check for itself
    board = py_trees.blackboard.Blackboard.get(forecast_key(guards[3]))
    assert board["explanation"].startswith("step 4 of 4, pick the cup, will fail")
    seen = run(la, guards)
    assert all(row[0] is R for row in seen[:-1]) and seen[-1][0] is S, la.feedback_message
    assert statuses(guards) == [S, S, S, S]
    assert "pick the cup" in checker.asked  # its own check found the ambiguity again
    assert robot.log[-1] == ("pick", [CLEAN_CUP])


def test_recover_starts_the_future_guards_recovery_without_checking_first():
    robot = ToyRobot()
    checker = Counting()
    human = ScriptedHuman(["the clean cup"])
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, human)
    guards, plan = guarded_plan(robot, AMBIGUOUS_LATER, recovery=recovery, checker=checker)
    la = LookAhead(plan, SceneForecaster(AMBIGUOUS_LATER, robot.observe), policy="recover")
    la.tick_once()
    wait_done(la)
    la.tick_once()
    assert la.status is R and statuses(guards) == [R, I, I, I]
    early = guards[3].early_verdict
    assert isinstance(early, Verdict) and early.category is Category.AMBIGUITY
    phases = []
    seen = []
    for _ in range(400):
        la.tick_once()
        seen.append([la.status, *statuses(guards)])
        phases.append(guards[3].phase)
        if la.status is not R:
            break
        time.sleep(0.002)
    assert seen[-1] == [S, S, S, S, S]
    assert all(row[0] is R for row in seen[:-1])
    # Its first verdict was the forecast: recovery planned at once, then a real re-check.
    assert "pick the cup" not in checker.asked
    assert Phase.PLANNING in phases or Phase.RECOVERING in phases
    assert guards[3].attempts == 1 and guards[3].verdict.ok
    assert [e.kind for e in human.transcript] == ["ask"] and robot.log[-1] == ("pick", [CLEAN_CUP])
    assert guards[3].early_verdict is None  # used by one run only


def test_recover_does_not_skip_the_check_of_a_guard_that_cannot_recover():
    robot = ToyRobot()
    checker = Counting()
    guards, plan = guarded_plan(robot, AMBIGUOUS_LATER, recovery=None, checker=checker)
    la = LookAhead(plan, SceneForecaster(AMBIGUOUS_LATER, robot.observe), policy="recover")
    la.tick_once()
    wait_done(la)
    seen = run(la, guards)
    assert seen[-1][0] is F and guards[3].status is F
    assert guards[3].forecast is not None and guards[3].early_verdict is None
    assert "pick the cup" in checker.asked  # failed on its own check, not on the forecast


def test_bad_arguments_are_errors_at_construction():
    steps = [Hold("a"), Hold("b")]
    plan = py_trees.composites.Sequence("plan", True, steps)
    good = Gated(2, lambda s: None)
    with pytest.raises(ValueError, match="policy"):
        LookAhead(plan, good, policy="panic")
    with pytest.raises(ValueError, match="2 step node"):
        LookAhead(py_trees.composites.Sequence("p", True, [Hold("x"), Hold("y")]), Gated(3, None))
    with pytest.raises(TypeError, match="Composite"):
        LookAhead(Hold("alone"), Gated(1, None))
    with pytest.raises(ValueError, match="every"):
        LookAhead(py_trees.composites.Sequence("p", True, [Hold("x")]), Gated(1, None), every=0)
    with pytest.raises(ValueError, match="version"):
        LookAhead(
            py_trees.composites.Sequence("p", True, [Hold("x")]),
            SceneForecaster(["open the drawer"], kitchen()),
            every="change",
        )
    with pytest.raises(ValueError, match="replanner"):
        LookAhead(py_trees.composites.Sequence("p", True, [Hold("x")]), Gated(1, None),
                  policy="replan")  # fmt: skip
    with pytest.raises(ValueError, match="depth"):
        LookAhead(py_trees.composites.Sequence("p", True, [Hold("x")]), Gated(1, None), depth=0)
    with pytest.raises(ValueError, match="max_replans"):
        LookAhead(plan, good, max_replans=-1)
    with pytest.raises(TypeError, match="forecast"):
        LookAhead(plan, object())
    # Refused: the plan was not taken from where it was.
    root = py_trees.composites.Selector("root", False, [plan])
    with pytest.raises(ValueError):
        LookAhead(plan, good, policy="panic")
    assert plan.parent is root


def test_stopping_the_decorator_cancels_the_forecast():
    steps = [Hold(f"step{i}") for i in range(2)]
    forecaster = Gated(2, lambda s: None)
    la = LookAhead(py_trees.composites.Sequence("plan", True, steps), forecaster)
    la.tick_once()
    pending = la.pending
    assert pending is not None and not pending.done()
    la.stop(Status.INVALID)
    assert la.pending is None and pending.cancelled and statuses(steps) == [I, I]
    forecaster.gate.set()


def test_a_forecast_that_comes_in_after_the_step_ended_still_warns_of_what_is_ahead():
    steps = [Hold(f"step{i}") for i in range(4)]
    forecaster = Gated(4, lambda start: forecast_at(3, start))
    la = LookAhead(py_trees.composites.Sequence("plan", True, steps), forecaster)
    la.tick_once()
    steps[0].release = True
    la.tick_once()  # step 2 runs; the forecast from step 1 is still out
    assert la.status is R and statuses(steps) == [S, R, I, I]
    assert eventually(lambda: len(forecaster.calls) == 1)
    assert forecaster.calls == [(0, None)]  # one at a time: the one from step 2 waits
    forecaster.gate.set()
    wait_done(la)
    la.tick_once()
    assert la.status is R and statuses(steps) == [S, R, I, I]
    f = la.forecast
    assert f is not None and f.step == 3 and f.ahead == 2  # counted from the step now
    assert py_trees.blackboard.Blackboard.exists(forecast_key("step3", la))
    wait_done(la)  # the forecast from step 2, sent once the first came in
    assert forecaster.calls == [(0, None), (1, None)]


class ListReplanner:
    """A team's replanner written here: hands out the plans it was given, in order."""

    def __init__(self, *plans: list[str]) -> None:
        self.plans = list(plans)
        self.asked = 0

    def replan(self, *, cancel=None):
        self.asked += 1
        return self.plans.pop(0)

    def build(self, plan):
        return py_trees.composites.Sequence("new plan", True, [Hold(q) for q in plan])


def test_replan_stops_the_plan_and_runs_the_new_one():
    queries = ["open the drawer", "pick the apple", "open the drawer"]  # step 3: hand full
    steps = [Hold(q) for q in queries]
    plan = py_trees.composites.Sequence("plan", True, steps)
    replanner = ListReplanner(["open the drawer", "pick the clean cup"])
    forecaster = SceneForecaster(queries, kitchen())
    la = LookAhead(plan, forecaster, policy="replan", replanner=replanner)
    for _ in range(400):
        la.tick_once()
        if la.replans:
            break
        assert la.status is R
        time.sleep(0.002)
    assert la.replans == 1 and replanner.asked == 1
    assert la.decorated is not plan and plan.parent is None and statuses(steps) == [I, I, I]
    assert forecaster.queries[1].text == "pick the clean cup"  # it follows the new plan
    for _ in range(3):
        la.tick_once()
        assert la.status is R
    for node in la.decorated.children:
        node.release = True
    la.tick_once()
    assert la.status is S and statuses(la.decorated.children) == [S, S]


def test_replan_that_gives_the_same_steps_again_fails_and_says_why():
    queries = ["open the drawer", "pick the apple", "open the drawer"]
    plan = py_trees.composites.Sequence("plan", True, [Hold(q) for q in queries])
    replanner = ListReplanner(list(queries))
    la = LookAhead(plan, SceneForecaster(queries, kitchen()), policy="replan", replanner=replanner)
    for _ in range(400):
        la.tick_once()
        if la.status is not R:
            break
        time.sleep(0.002)
    assert la.status is F and la.replans == 0
    assert "will fail" in la.feedback_message and "same steps again" in la.feedback_message


# --------------------------------------------------------------------------- stale forecasts
class PlacingRobot(ToyRobot):
    """The toy robot, which can also put down what it holds (a recovery's ``place``)."""

    def poll(self, handle):
        progress = super().poll(handle)
        action, args = self.log[handle - 1]
        if progress.state is ActionState.SUCCEEDED and action == "place":
            give_away(self.scene, args[0], onto=COUNTER)
        return progress


def give_away(scene: dict[str, Any], object_id: str, onto: str) -> None:
    """``object_id`` leaves the robot's hand and lies on ``onto``."""
    by_id = {o["objectId"]: o for o in scene["objects"]}
    scene["inventoryObjects"] = [i for i in scene["inventoryObjects"] if i["objectId"] != object_id]
    by_id[object_id].update(isPickedUp=False, parentReceptacles=[onto])


class PickedAndTaken(Act):
    """The team's pick, after which a person takes the picked thing from the robot's hand."""

    def update(self):
        status = super().update()
        if status is S:
            give_away(self.robot.scene, APPLE, onto=COUNTER)
        return status


def assert_plan_row(la, guards, row) -> None:
    """One tick: the decorator's status is the plan's; steps run in order, children inside."""
    plan = [g.status for g in guards]
    assert la.status is row[0] and plan == row[1:]
    done = 0
    while done < len(plan) and plan[done] is S:
        done += 1
    assert all(s is I for s in plan[done + 1 :]), plan
    for guard in guards:
        child = guard.decorated.status
        assert child is I or child is S or guard.status is R, (guard.name, guard.status, child)


def test_recover_ignores_a_forecast_the_world_no_longer_matches():
    # From step 1: step 4 (open the drawer) will find the hand full, the apple picked at
    # step 3. But as step 3 ends, a person takes the apple: at step 4's turn the hand is free.
    # The forecast must not stand for step 4's check (its recovery would have nothing to put
    # down, give up, and fail a step that can run).
    robot = ToyRobot()
    checker = Counting()
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]))
    guards = [
        RaiderGuard(
            (PickedAndTaken if q == "pick the apple" else Act)(q, robot),
            q,
            checker,
            scene=robot.observe,
            recovery=recovery,
        )
        for q in HAND_FULL_LATER
    ]
    plan = py_trees.composites.Sequence("plan", memory=True, children=guards)
    la = LookAhead(plan, SceneForecaster(HAND_FULL_LATER, robot.observe), policy="recover")
    la.tick_once()
    assert_plan_row(la, guards, [R, R, I, I, I])
    wait_done(la)
    la.tick_once()
    assert_plan_row(la, guards, [R, R, I, I, I])
    f = guards[3].forecast
    assert f is not None and (f.step, f.category) == (3, "robot_state") and f.expect is not None
    assert isinstance(guards[3].early_verdict, Verdict)  # marked: it would stand if still true
    marked_at_turn = []
    seen = []
    for _ in range(400):
        before = guards[3].status
        early = guards[3].early_verdict
        la.tick_once()
        if before is I and guards[3].status is R:
            marked_at_turn.append(early)
        seen.append([la.status, *statuses(guards)])
        assert_plan_row(la, guards, seen[-1])
        if la.status is not R:
            break
        time.sleep(0.002)
    assert seen[-1] == [S, S, S, S, S], [g.feedback_message for g in guards]
    assert all(row[0] is R for row in seen[:-1])
    # Its turn came with the forecast on it, yet it checked the world and found no issue.
    assert marked_at_turn and marked_at_turn[0] is not None
    assert marked_at_turn[0].category is Category.ROBOT_STATE
    assert checker.asked.count("open the drawer") == 2 and guards[3].attempts == 0
    assert robot.log[-1] == ("open", [DRAWER]) and not robot.scene["inventoryObjects"]


def test_a_forecast_made_before_a_recovery_is_dropped_and_made_again():
    # The hand holds the apple: step 1's guard recovers (puts it down). The forecast from
    # step 1 was sent before that recovery; it comes in after and must not count.
    robot = PlacingRobot()
    robot.scene["inventoryObjects"] = [{"objectId": APPLE, "objectType": "Apple"}]
    apple = next(o for o in robot.scene["objects"] if o["objectId"] == APPLE)
    apple.update(isPickedUp=True, parentReceptacles=None)
    robot.scene["objects"][3]["receptacleObjectIds"] = [CLEAN_CUP, DIRTY_CUP]
    queries = ["open the drawer", "close the drawer", "open the drawer"]
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]))
    guards, plan = guarded_plan(robot, queries, recovery=recovery, checker=Counting())
    stale = forecast_at(2, 0, n=3, category="robot_state")
    forecaster = Gated(3, lambda start: stale if len(forecaster.calls) == 1 else None)
    la = LookAhead(plan, forecaster, policy="recover")
    seen = []

    def tick() -> None:
        la.tick_once()
        seen.append([la.status, *statuses(guards)])
        assert_plan_row(la, guards, seen[-1])

    tick()
    sent = la.pending
    assert sent is not None and seen[-1] == [R, R, I, I]
    for _ in range(400):  # step 1's check finds the hand full; its recovery starts
        tick()
        if guards[0].attempts:
            break
        time.sleep(0.002)
    assert guards[0].attempts == 1 and seen[-1] == [R, R, I, I]
    forecaster.gate.set()
    assert sent.wait(WAIT_S)
    tick()
    # Dropped: no forecast, no mark on step 3 (whose guard would otherwise take it).
    assert la.forecast is None and guards[2].forecast is None
    assert not py_trees.blackboard.Blackboard.exists(forecast_key(guards[2]))
    for _ in range(400):
        tick()
        if la.status is not R:
            break
        # A robot that takes time to act: the new forecast gets its turn (it waits for the
        # plan's checks to be quiet), even on a loaded machine.
        time.sleep(0.02)
    assert seen[-1] == [S, S, S, S] and all(row[0] is R for row in seen[:-1])
    assert len(forecaster.calls) >= 2  # looked again once the recovery was over
    assert la.forecast is None and guards[2].attempts == 0
    assert ("place", [APPLE, COUNTER]) in robot.log or any(a == "place" for a, _ in robot.log)


class GatedChecker:
    """The guards' checker: the real symbolic reasoner, once the test opens the gate."""

    def __init__(self) -> None:
        self.inner, self.gate = SymbolicReasoner(), threading.Event()

    def check(self, scene, query, *, cancel=None):
        assert self.gate.wait(WAIT_S)
        return self.inner.check(scene, query)


class Recording:
    """A forecaster written here: records on which thread and when it looks ahead."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.threads: list[str] = []

    def __len__(self) -> int:
        return self.n

    def forecast(self, start, depth=None, *, cancel=None):
        self.threads.append(threading.current_thread().name)
        return None


def test_a_forecast_waits_for_the_plans_check_on_a_lane_of_its_own():
    robot = ToyRobot()
    checker = GatedChecker()
    queries = ["open the drawer", "close the drawer", "open the drawer"]
    guards, plan = guarded_plan(robot, queries, recovery=None, checker=checker)
    forecaster = Recording(len(queries))
    la = LookAhead(plan, forecaster)
    la.tick_once()
    assert la.status is R and statuses(guards) == [R, I, I]
    assert la.pending is not None and guards[0].pending is not None
    for _ in range(20):  # the guard's check is out: the forecast does not start judging
        time.sleep(0.005)
        la.tick_once()
        assert la.status is R and statuses(guards) == [R, I, I]
        assert guards[0].decorated.status is I  # the child waits for its check
        assert forecaster.threads == []
    checker.gate.set()
    # A robot that takes time to act (20 ms a tick): the forecast, which waits for the plan's
    # checks to be quiet, gets its turn before the plan ends, even on a loaded machine.
    seen = run(la, guards, pause=0.02)
    assert seen[-1] == [S, S, S, S] and all(row[0] is R for row in seen[:-1])
    assert forecaster.threads and all(
        t.startswith("bt_raider-lookahead") for t in forecaster.threads
    )


def test_forecast_facts_tell_whether_the_world_is_as_predicted():
    f = forecast_scene(scene(), HAND_FULL_LATER, start=0)
    assert f is not None and f.step == 3 and f.expect is not None
    predicted = kitchen()
    by_id = {o["objectId"]: o for o in predicted["objects"]}
    by_id[DRAWER]["isOpen"] = False  # opened at step 1, closed at step 2
    by_id[APPLE].update(isPickedUp=True, parentReceptacles=None)
    predicted["inventoryObjects"] = [{"objectId": APPLE, "objectType": "Apple"}]
    by_id[COUNTER]["receptacleObjectIds"] = [CLEAN_CUP, DIRTY_CUP]
    assert f.holds_in(Scene.from_dict(predicted))
    moved = copy.deepcopy(predicted)
    moved["agent"]["position"]["x"] += 0.5  # the robot stands elsewhere
    assert not f.holds_in(Scene.from_dict(moved))
    nudged = copy.deepcopy(predicted)  # where a simulator's approach ends: a few cm, degrees off
    nudged["agent"]["position"]["x"] += 0.08
    nudged["agent"]["rotation"]["y"] = 355.0
    assert f.holds_in(Scene.from_dict(nudged))
    # ... unless the issue was judged on where the robot stands.
    reach = dataclasses.replace(f, category="out_of_reach")
    assert reach.holds_in(Scene.from_dict(predicted))
    assert not reach.holds_in(Scene.from_dict(nudged))
    other = copy.deepcopy(predicted)  # the same but the drawer: open
    other["objects"][-1]["isOpen"] = True
    assert not f.holds_in(Scene.from_dict(other))
    assert not f.holds_in(scene())  # the hand is free
    assert not f.holds_in(None) and not f.holds_in(kitchen())  # not a Scene: no
    assert not forecast_at(3, 0).holds_in(scene())  # no facts recorded: never stands
