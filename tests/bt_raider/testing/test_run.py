"""run_tree: the user's own behaviours and robot, ticked to the end, with what happened recorded."""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
import pytest

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import ActionFailed
from bt_raider.perception.scene import Scene
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import RaiderGuard
from bt_raider.simulation.simworld import SimWorld
from bt_raider.testing import run_tree, small_kitchen

S = py_trees.common.Status


@pytest.fixture(autouse=True)
def fresh_blackboard(clean_blackboard):
    """The plugin's fixture: py_trees keeps one blackboard per process."""
    return clean_blackboard


# ---------------------------------------------------------------------------- the user's side
class ArmRobot:
    """A robot written by the user: an action takes two polls; it keeps its own scene dict."""

    def __init__(self, scene: dict[str, Any]) -> None:
        self.scene = scene
        self.started: list[tuple[str, list[str]]] = []
        self.cancelled: list[Hashable] = []
        self._jobs: dict[int, list[Any]] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.started.append((action, [str(a) for a in args]))
        self._jobs[len(self.started)] = [action, list(args), 0]
        return len(self.started)

    def poll(self, handle: Hashable) -> Progress:
        job = self._jobs[handle]
        job[2] += 1
        if job[2] < 2:
            return Progress(ActionState.RUNNING, f"{job[0]} under way")
        del self._jobs[handle]
        if job[0] != "pick":
            return Progress(ActionState.FAILED, f"this arm cannot {job[0]}")
        target = next((o for o in self.scene["objects"] if o["objectId"] == job[1][0]), None)
        if target is None:
            return Progress(ActionState.FAILED, f"no object {job[1][0]!r} to pick")
        target["isPickedUp"] = True
        self.scene["inventoryObjects"] = [
            {"objectId": target["objectId"], "objectType": target["objectType"]}
        ]
        return Progress(ActionState.SUCCEEDED, f"picked {target['objectId']}")

    def cancel(self, handle: Hashable) -> None:
        self.cancelled.append(handle)
        self._jobs.pop(handle, None)

    def observe(self) -> Scene:
        return Scene.from_dict(self.scene)


class Pick(py_trees.behaviour.Behaviour):
    """The user's own pick node: picks what its guard resolved (retarget), else its target."""

    def __init__(self, target: str, robot: ArmRobot) -> None:
        super().__init__(f"pick {target}")
        self.target = target
        self.robot = robot
        self.resolved = None
        self.handle: Hashable | None = None

    def retarget(self, resolved) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        target = self.resolved.args[0] if self.resolved else self.target
        self.handle = self.robot.start("pick", [target])

    def update(self) -> py_trees.common.Status:
        progress = self.robot.poll(self.handle)
        self.feedback_message = progress.message
        return {
            ActionState.RUNNING: S.RUNNING,
            ActionState.SUCCEEDED: S.SUCCESS,
            ActionState.FAILED: S.FAILURE,
        }[progress.state]


class Count(py_trees.behaviour.Behaviour):
    """RUNNING ``n - 1`` times, then SUCCESS."""

    def __init__(self, name: str, n: int) -> None:
        super().__init__(name)
        self.n = n
        self.ticks = 0

    def initialise(self) -> None:
        self.ticks = 0

    def update(self) -> py_trees.common.Status:
        self.ticks += 1
        self.feedback_message = f"tick {self.ticks} of {self.n}"
        return S.SUCCESS if self.ticks >= self.n else S.RUNNING


#: The kit's Tomato (display name Tomato_2 once there are two) and the one a test adds (Tomato_1).
KIT_TOMATO = "Tomato|-00.35|+00.96|-01.62"
ADDED_TOMATO = "Tomato|+00.55|+00.96|-01.55"


def two_tomatoes() -> dict[str, Any]:
    """The kit's kitchen with a second Tomato on the island, both within reach."""
    scene = small_kitchen().to_dict()
    first = next(o for o in scene["objects"] if o["objectType"] == "Tomato")
    second = dict(first, objectId=ADDED_TOMATO)
    second["position"] = {"x": 0.55, "y": 0.96, "z": -1.55}
    second.pop("axisAlignedBoundingBox", None)
    scene["objects"].append(second)
    return scene


def guarded_pick(robot: ArmRobot, human: Any, *, name: str = "Tomato") -> RaiderGuard:
    return RaiderGuard(
        Pick(name, robot),
        f"pick({name})",
        SymbolicReasoner(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
        name="guard pick",
    )


# ---------------------------------------------------------------------------- plain trees
def test_statuses_of_every_node_per_tick_for_plain_behaviours():
    root = py_trees.composites.Sequence(
        "task", memory=True, children=[Count("wash", 3), Count("dry", 2)]
    )
    result = run_tree(root, period=0)
    assert result.status is S.SUCCESS and not result.timed_out
    assert len(result.ticks) == 4
    assert result.statuses("wash") == [S.RUNNING, S.RUNNING, S.SUCCESS, S.SUCCESS]
    assert result.statuses("dry") == [S.INVALID, S.INVALID, S.RUNNING, S.SUCCESS]
    assert result.statuses("task") == [S.RUNNING, S.RUNNING, S.RUNNING, S.SUCCESS]
    assert result.feedback["dry"] == "tick 2 of 2"
    assert result.verdicts == {} and result.recovery_runs == [] and result.transcript == []


def test_a_behaviour_tree_runs_with_its_handlers_and_the_world_ticks():
    world = SimWorld(small_kitchen())
    fired = []
    world.schedule(lambda w: fired.append(w.ticks), after_ticks=2)
    handled = []
    tree = py_trees.trees.BehaviourTree(Count("wait", 3))
    tree.add_post_tick_handler(lambda t: handled.append(t.count))
    result = run_tree(tree, world=world, period=0)
    assert result.status is S.SUCCESS and len(result.ticks) == 3
    assert handled == [0, 1, 2]  # the tree's own post-tick handlers ran
    assert fired == [2] and world.ticks == 3 and result.world is world


def test_repeated_names_are_kept_apart():
    root = py_trees.composites.Sequence(
        "task", memory=False, children=[Count("step", 1), Count("step", 2)]
    )
    result = run_tree(root, period=0)
    assert result.status is S.SUCCESS
    assert result.ticks[-1]["step"] is S.SUCCESS and result.ticks[-1]["step #2"] is S.SUCCESS
    assert result.statuses("step #2") == [S.RUNNING, S.SUCCESS]


# ---------------------------------------------------------------------------- guards
def test_a_guarded_user_node_on_a_user_robot_recovers_from_an_ambiguity():
    scene = two_tomatoes()
    robot = ArmRobot(scene)
    root = py_trees.composites.Sequence(
        "lunch", memory=True, children=[guarded_pick(robot, ScriptedHuman([]))]
    )
    result = run_tree(root, world=robot, answers=["Tomato_2"])
    assert result.status is S.SUCCESS, result.summary()
    verdicts = result.verdicts["guard pick"]
    assert [v.category for v in verdicts] == [Category.AMBIGUITY, Category.NONE]
    assert result.recovered("ambiguity") and result.recovered(guard="guard pick")
    assert not result.recovered("out_of_reach") and not result.recovered(guard="other")
    (code,) = result.recoveries["guard pick"]
    assert "ask(" in code and code.splitlines()[-1].startswith("pick(")
    (asked,) = result.transcript
    assert asked.kind == "ask"
    assert "the tomato on the left or the tomato on the right" in asked.text
    assert asked.answer == "Tomato_2"
    # The user's robot picked the tomato the person chose, and the world says so.
    assert robot.started == [("pick", [KIT_TOMATO])]
    assert [o["objectId"] for o in result.world.scene["inventoryObjects"]] == [KIT_TOMATO]
    # The guard ran its child only after the passing check; the child's status is per tick.
    child = result.statuses("pick Tomato")
    first_run = child.index(S.RUNNING)
    assert all(s is S.INVALID for s in child[:first_run])
    assert child[-1] is S.SUCCESS
    assert result.statuses("guard pick")[first_run] is S.RUNNING


def test_answers_replace_the_person_of_a_built_tree_for_the_run_only():
    robot = ArmRobot(two_tomatoes())
    own = ScriptedHuman(["Tomato_1"])
    guard = guarded_pick(robot, own)
    result = run_tree(guard, world=robot, answers=["Tomato_2"])
    assert result.status is S.SUCCESS
    assert own.transcript == []  # the scripted person answered, not the tree's own
    assert guard.recovery.human is own  # and the tree has its own person back
    assert [ex.answer for ex in result.transcript] == ["Tomato_2"]


def test_a_built_tree_keeps_its_people_without_answers():
    robot = ArmRobot(two_tomatoes())
    own = ScriptedHuman(["Tomato_1"])
    result = run_tree(guarded_pick(robot, own), world=robot)
    assert result.status is S.SUCCESS
    assert [ex.answer for ex in result.transcript] == ["Tomato_1"]
    assert robot.started == [("pick", [ADDED_TOMATO])]


def test_a_builder_gets_the_robot_over_the_world_and_the_scripted_person():
    world = SimWorld(Scene.from_dict(two_tomatoes()))
    seen = {}

    def build(robot, human):
        from bt_raider.robot.actions import ActionBehaviour

        seen.update(robot=robot, human=human)
        pick = ActionBehaviour("pick", ["Tomato"], robot)
        return RaiderGuard(
            pick,
            "pick(Tomato)",
            SymbolicReasoner(),
            scene=robot.observe,
            recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
        )

    result = run_tree(build, world=world, answers={"which tomato": "Tomato_1"})
    assert result.status is S.SUCCESS, result.summary()
    assert seen["robot"].executor is world and isinstance(seen["human"], ScriptedHuman)
    assert world.executed == [f"pick({ADDED_TOMATO})"]
    assert result.recovered("ambiguity")
    assert f"world executed: pick({ADDED_TOMATO})" in result.summary()


def test_a_recovery_that_gets_no_answer_is_recorded_as_not_recovered():
    robot = ArmRobot(two_tomatoes())
    result = run_tree(guarded_pick(robot, ScriptedHuman([])), world=robot, answers=[])
    assert result.status is S.FAILURE
    assert [v.category for v in result.verdicts["guard pick"]] == [Category.AMBIGUITY] * 3
    assert len(result.recovery_runs) == 2  # max_attempts
    assert not any(run.succeeded for run in result.recovery_runs)
    assert not result.recovered() and not result.recovered("ambiguity")
    assert robot.started == []
    assert "not recovered" in result.summary()


class Raises:
    def check(self, scene, query, *, cancel=None):
        raise RuntimeError("the model server is down")


def test_a_check_that_raises_is_an_unknown_verdict():
    robot = ArmRobot(small_kitchen().to_dict())
    guard = RaiderGuard(Pick("Tomato", robot), "pick(Tomato)", Raises(), scene=robot.observe)
    result = run_tree(guard, world=robot)
    assert result.status is S.FAILURE
    (verdict,) = result.verdicts[guard.name]
    assert isinstance(verdict, Verdict) and verdict.category is Category.UNKNOWN
    assert "the model server is down" in verdict.explanation
    assert robot.started == []


# ---------------------------------------------------------------------------- ends and bounds
class Slow:
    """A checker that takes ``seconds`` (it honours cancel) and then passes the action."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.cancelled = threading.Event()

    def check(self, scene, query, *, cancel):
        if cancel.wait(self.seconds):
            self.cancelled.set()
        return Verdict(Category.NONE, "fine")


def test_a_run_that_does_not_finish_is_stopped_and_reported_running():
    checker = Slow(30.0)
    guard = RaiderGuard(Count("never", 1), "pick(Tomato)", checker)
    started = time.monotonic()
    result = run_tree(guard, timeout=0.3, period=0.01)
    assert time.monotonic() - started < 10  # does not hang
    assert result.status is S.RUNNING and result.timed_out
    assert checker.cancelled.wait(5)  # the pending check was cancelled
    assert guard.status is S.INVALID
    assert "still RUNNING (timed out)" in result.summary()


def test_max_ticks_bounds_the_run():
    result = run_tree(Count("long", 100), max_ticks=5, period=0)
    assert result.timed_out and result.status is S.RUNNING and len(result.ticks) == 5


def test_ticks_sleep_while_a_check_pends():
    # A 0.3 s check at period 0.02 s takes about 15 ticks; spinning would take thousands.
    guard = RaiderGuard(Count("act", 1), "pick(Tomato)", Slow(0.3))
    result = run_tree(guard, period=0.02)
    assert result.status is S.SUCCESS
    assert len(result.ticks) < 40


@pytest.mark.parametrize(
    "tree, kw, error, match",
    [
        ("not a tree", {}, TypeError, "py_trees behaviour"),
        (Count("x", 1), {"human": ScriptedHuman([]), "answers": []}, TypeError, "not both"),
        (Count("x", 1), {"max_ticks": 0}, ValueError, "max_ticks"),
        (Count("x", 1), {"timeout": 0}, ValueError, "timeout"),
        (Count("x", 1), {"period": -1}, ValueError, "period"),
        (lambda robot, human: "oops", {}, TypeError, "must return a py_trees behaviour"),
    ],
)
def test_bad_arguments_are_clear_errors(tree, kw, error, match):
    with pytest.raises(error, match=match):
        run_tree(tree, **kw)


def test_the_kitchen_is_fresh_each_time():
    a = small_kitchen()
    a.data["objects"].clear()
    assert len(small_kitchen()) == 39
    b = small_kitchen()
    assert b.resolve("Fridge").flag("openable") and not b.resolve("Fridge").flag("isOpen")


def test_unexpected_question_fails_clearly_with_no_answers():
    robot = ArmRobot(two_tomatoes())

    def build(robot_, human):
        return guarded_pick(robot, human)

    result = run_tree(build, world=robot)
    assert result.status is S.FAILURE
    assert "no scripted answer" in result.feedback["guard pick"]
    with pytest.raises(ActionFailed):
        ScriptedHuman([]).ask("anything?")


def test_a_run_writes_the_viewers_trace(tmp_path):
    from bt_raider.viewer.trace import load_trace

    scene = two_tomatoes()
    robot = ArmRobot(scene)
    root = py_trees.composites.Sequence(
        "lunch", memory=True, children=[guarded_pick(robot, ScriptedHuman([]))]
    )
    result = run_tree(root, world=robot, answers=["Tomato_2"], trace=tmp_path / "run.json")
    assert result.status is S.SUCCESS, result.summary()
    assert result.trace_path == tmp_path / "run.json"
    trace = load_trace(result.trace_path)  # checked against trace.schema.json
    assert trace["finished"] is True and trace["outcome"] == "SUCCESS"
    assert trace["tick_count"] >= len(result.ticks)
    events = [e for t in trace["ticks"] for e in t.get("events", [])]
    kinds = [e["kind"] for e in events]
    # The ambiguity, its recovery, the question and the passing re-check, in that order.
    assert kinds.index("verdict") < kinds.index("recovery") < kinds.index("ask")
    assert sum(k == "verdict" for k in kinds) == 2
    assert any(e["kind"] == "ask" and e.get("answer") == "Tomato_2" for e in events)


def test_no_trace_is_written_unless_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    robot = ArmRobot(two_tomatoes())
    root = py_trees.composites.Sequence(
        "lunch", memory=True, children=[guarded_pick(robot, ScriptedHuman([]))]
    )
    result = run_tree(root, world=robot, answers=["Tomato_2"])
    assert result.trace_path is None and list(tmp_path.iterdir()) == []
