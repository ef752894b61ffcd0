"""RaiderGuard tick by tick: the guard's and the child's status after every tick.

Checks and planning run on worker threads; between ticks the tests wait for that work with
:func:`settle` (or release a gated checker), so every tick sees a known state.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.parse import split_action
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import ActionFailed
from bt_raider.perception.scene import Scene
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionBehaviour, ActionState, Progress, SyncRobot
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import LAST_VERDICT, Phase, RaiderGuard, guard_tree
from bt_raider.simulation.simworld import PreconditionFailed, SimWorld

R, S, F, I = Status.RUNNING, Status.SUCCESS, Status.FAILURE, Status.INVALID  # noqa: E741
GATE_S = 5.0


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


# ------------------------------------------------------------------------- test doubles


class ScriptedChecker:
    """Returns scripted verdicts (the last one repeats); may wait on a gate the test opens."""

    def __init__(
        self,
        verdicts: Sequence[Verdict | Exception | Callable[[Any, Query], Verdict]],
        gate: threading.Event | None = None,
    ) -> None:
        self.verdicts = list(verdicts)
        self.gate = gate
        self.calls: list[str] = []
        self.scenes: list[Any] = []
        self.cancels: list[threading.Event | None] = []
        self.threads: list[str] = []
        self.entered = threading.Event()

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        self.calls.append(str(query))
        self.scenes.append(scene)
        self.cancels.append(cancel)
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(GATE_S), "the test never opened the gate"
        item = self.verdicts[min(len(self.calls), len(self.verdicts)) - 1]
        if isinstance(item, Exception):
            raise item
        if callable(item):
            return item(scene, query)
        return item


class ScriptedRobot:
    """Actions take ``polls`` polls; names in ``fail`` fail; records start/cancel."""

    def __init__(self, polls: int = 1, fail: Sequence[str] = ()) -> None:
        self.polls = polls
        self.fail = set(fail)
        self.started: list[tuple[str, list[Any]]] = []
        self.cancelled: list[Hashable] = []
        self._left: dict[Hashable, int] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.started.append((action, list(args)))
        handle = len(self.started)
        self._left[handle] = self.polls
        return handle

    def poll(self, handle: Hashable) -> Progress:
        action = self.started[handle - 1][0]  # type: ignore[operator]
        self._left[handle] -= 1
        if self._left[handle] > 0:
            return Progress(ActionState.RUNNING, f"{action} running")
        if action in self.fail:
            return Progress(ActionState.FAILED, f"{action} failed: no path")
        return Progress(ActionState.SUCCEEDED, f"{action} done")

    def cancel(self, handle: Hashable) -> None:
        self.cancelled.append(handle)

    def observe(self) -> None:
        return None


class CountingChild(py_trees.behaviour.Behaviour):
    """A child that counts its ticks and succeeds after ``ticks`` of them."""

    def __init__(self, ticks: int = 1) -> None:
        super().__init__("child")
        self.ticks = ticks
        self.updates = 0
        self.terminated: list[Status] = []

    def initialise(self) -> None:
        self.count = 0

    def update(self) -> Status:
        self.updates += 1
        self.count += 1
        return S if self.count >= self.ticks else R

    def terminate(self, new_status: Status) -> None:
        self.terminated.append(new_status)


def settle(guard: RaiderGuard, timeout: float = GATE_S) -> None:
    """Wait until the guard and its recovery subtree have no work in flight."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        nodes = [guard, *(guard.recovery_tree.iterate() if guard.recovery_tree else [])]
        if all(getattr(n, "pending", None) is None or n.pending.done() for n in nodes):
            return
        time.sleep(0.001)
    raise AssertionError("background work did not finish")


def drive(
    guard: RaiderGuard,
    child: py_trees.behaviour.Behaviour,
    expected: list[tuple[Status, Status, Phase]],
) -> None:
    """Tick once per row, asserting (guard status, child status, phase) after each tick."""
    for n, row in enumerate(expected, start=1):
        guard.tick_once()
        got = (guard.status, child.status, guard.phase)
        assert got == row, f"tick {n}: expected {row}, got {got} ({guard.feedback_message})"
        settle(guard)


def none(action: str = "pick", **kw: Any) -> Verdict:
    return Verdict(Category.NONE, "Nothing stops the action.", action=action, **kw)


# ------------------------------------------------------------------------- verdict none


def test_verdict_none_runs_the_child_and_caches_the_verdict() -> None:
    gate = threading.Event()
    checker = ScriptedChecker([none()], gate=gate)
    robot = ScriptedRobot(polls=3)
    child = ActionBehaviour("pick", ["Apple"], robot)
    guard = RaiderGuard(child, "pick(Apple)", checker)
    start = time.perf_counter()
    guard.tick_once()
    assert time.perf_counter() - start < 0.5 * GATE_S  # the gated check did not block the tick
    assert (guard.status, child.status, guard.phase) == (R, I, Phase.CHECKING)
    assert checker.entered.wait(GATE_S)
    guard.tick_once()  # still pending
    assert (guard.status, child.status, guard.phase) == (R, I, Phase.CHECKING)
    gate.set()
    settle(guard)
    drive(guard, child, [(R, R, Phase.ACTING), (R, R, Phase.ACTING), (S, S, Phase.ACTING)])
    assert checker.calls == ["pick(Apple)"]  # no re-check while the child ran
    assert robot.started == [("pick", ["Apple"])]
    assert checker.threads[0] != threading.current_thread().name
    stored = py_trees.blackboard.Blackboard.get(guard.key)
    assert stored["category"] == "none" and stored["explanation"] == "Nothing stops the action."
    assert py_trees.blackboard.Blackboard.get(LAST_VERDICT) == stored
    assert guard.feedback_message == "no issue: Nothing stops the action."


def test_first_tick_never_runs_the_child_even_with_an_instant_check() -> None:
    checker = ScriptedChecker([none()])
    child = CountingChild()
    guard = RaiderGuard(child, "pick(Apple)", checker)
    guard.tick_once()
    assert checker.entered.wait(GATE_S)
    assert (guard.status, child.status, child.updates) == (R, I, 0)
    settle(guard)
    drive(guard, child, [(S, S, Phase.ACTING)])
    # A new run checks again.
    drive(guard, child, [(R, S, Phase.CHECKING), (S, S, Phase.ACTING)])
    assert checker.calls == ["pick(Apple)", "pick(Apple)"]


# ------------------------------------------------------------------------- recovery


def test_issue_recovery_recheck_then_child_runs() -> None:
    ambiguity = Verdict(
        Category.AMBIGUITY,
        "apple could be Apple_1 or Apple_2.",
        grounding={"apple": ["Apple|1", "Apple|2"]},
        action="pick",
    )
    checker = ScriptedChecker([ambiguity, none(grounding={"Apple_2": ["Apple|2"]})])
    robot, human = ScriptedRobot(polls=2), ScriptedHuman(["Apple_2"])
    child = ActionBehaviour("pick", ["apple"], robot)
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, human)
    guard = RaiderGuard(child, "pick(apple)", checker, recovery=recovery)
    drive(
        guard,
        child,
        [
            (R, I, Phase.CHECKING),  # check submitted
            (R, I, Phase.PLANNING),  # ambiguity: recovery code requested
            (R, I, Phase.RECOVERING),  # subtree ticked: the question is asked
            (R, I, Phase.CHECKING),  # answer written; re-check pick(Apple_2)
            (R, R, Phase.ACTING),  # none: the child starts
            (S, S, Phase.ACTING),
        ],
    )
    assert guard.plan is not None
    assert guard.plan.code == (
        "choice = ask('Which apple should I pick up: Apple|1 or Apple|2?')\npick(choice)"
    )
    assert guard.recovery_tree is not None and guard.recovery_tree.status == S
    assert [c.status for c in guard.recovery_tree.children] == [S]
    assert checker.calls == ["pick(apple)", "pick(Apple_2)"]
    # The child was pointed at what the person chose (the objectId the re-check grounded).
    assert robot.started == [("pick", ["Apple|2"])]
    assert human.transcript_text().endswith("human: Apple_2")
    assert py_trees.blackboard.Blackboard.get(LAST_VERDICT)["category"] == "none"
    assert guard.attempts == 1
    assert child.resolved is not None and child.resolved.recovered
    # The next run starts from the original arguments again.
    guard.tick_once()
    assert child.args == ["apple"] and child.resolved is None


def test_recovery_subtree_statuses_propagate_as_running() -> None:
    far = Verdict(Category.OUT_OF_REACH, "The Apple is 2 m away.", action="pick")
    checker = ScriptedChecker([far, none()])
    robot = ScriptedRobot(polls=3)
    child = ActionBehaviour("pick", ["Apple"], robot)
    guard = RaiderGuard(
        child,
        "pick(Apple)",
        checker,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([])),
    )
    drive(guard, child, [(R, I, Phase.CHECKING), (R, I, Phase.PLANNING)])
    rows = []
    for _ in range(3):
        guard.tick_once()
        move = guard.recovery_tree.children[0]
        rows.append((guard.status, move.status, guard.phase))
        if guard.phase is Phase.RECOVERING:
            assert guard.tip() is move  # the display's tip is the running recovery node
        settle(guard)
    assert rows == [(R, R, Phase.RECOVERING), (R, R, Phase.RECOVERING), (R, S, Phase.CHECKING)]
    drive(guard, child, [(R, R, Phase.ACTING), (R, R, Phase.ACTING), (S, S, Phase.ACTING)])
    assert robot.started == [("move_to", ["Apple"]), ("pick", ["Apple"])]


def test_gives_up_after_max_attempts() -> None:
    far = Verdict(Category.OUT_OF_REACH, "The Apple is 2 m away.", action="pick")
    checker = ScriptedChecker([far])
    robot = ScriptedRobot()
    child = CountingChild()
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]))
    guard = RaiderGuard(child, "pick(Apple)", checker, recovery=recovery, max_attempts=2)
    drive(
        guard,
        child,
        [
            (R, I, Phase.CHECKING),
            (R, I, Phase.PLANNING),  # attempt 1
            (R, I, Phase.CHECKING),  # move_to ran at once; re-check
            (R, I, Phase.PLANNING),  # attempt 2
            (R, I, Phase.CHECKING),
            (F, I, Phase.DONE),  # still out of reach: give up
        ],
    )
    assert guard.feedback_message == "The Apple is 2 m away. (gave up after 2 recovery attempt(s))"
    assert child.updates == 0
    assert robot.started == [("move_to", ["Apple"])] * 2
    assert len(checker.calls) == 3


def test_no_recovery_or_zero_attempts_fail_with_the_explanation() -> None:
    obstructed = Verdict(Category.OBSTRUCTED, "An Apple is inside the Bowl.", action="pick")
    child = CountingChild()
    guard = RaiderGuard(child, "pick(Bowl)", ScriptedChecker([obstructed]))
    drive(guard, child, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert guard.feedback_message == "An Apple is inside the Bowl."
    stored = py_trees.blackboard.Blackboard.get(guard.key)
    assert stored["category"] == "obstructed" and stored["final_response"] == "unfeasibility"
    zero = RaiderGuard(
        CountingChild(),
        "pick(Bowl)",
        ScriptedChecker([obstructed]),
        recovery=Recovery(SymbolicRecoveryPlanner(), ScriptedRobot(), ScriptedHuman([])),
        max_attempts=0,
        name="zero",
    )
    drive(zero, zero.decorated, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert "gave up after 0 recovery attempt(s)" in zero.feedback_message


def test_a_plan_that_only_says_why_fails_after_saying_it() -> None:
    heavy = Verdict(Category.WRONG_PROPERTY, "The Microwave cannot be picked up.", action="pick")
    human = ScriptedHuman([])
    child = CountingChild()
    guard = RaiderGuard(
        child,
        "pick(Microwave)",
        ScriptedChecker([heavy]),
        recovery=Recovery(SymbolicRecoveryPlanner(), ScriptedRobot(), human),
    )
    drive(
        guard,
        child,
        [
            (R, I, Phase.CHECKING),
            (R, I, Phase.PLANNING),
            (R, I, Phase.RECOVERING),
            (F, I, Phase.DONE),
        ],
    )
    assert human.transcript_text() == "robot says: The Microwave cannot be picked up."
    assert guard.feedback_message.startswith("The Microwave cannot be picked up. (told the person")


def test_failed_recovery_is_retried_then_reported() -> None:
    far = Verdict(Category.OUT_OF_REACH, "The Apple is 2 m away.", action="pick")
    robot = ScriptedRobot(fail=["move_to"])
    child = CountingChild()
    guard = RaiderGuard(
        child,
        "pick(Apple)",
        ScriptedChecker([far]),
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([])),
        max_attempts=2,
    )
    for _ in range(10):
        guard.tick_once()
        if guard.status != R:
            break
        settle(guard)
    assert guard.status == F and child.updates == 0
    assert guard.feedback_message == (
        "The Apple is 2 m away. (gave up after 2 recovery attempt(s); the last recovery failed: "
        "move_to('Apple'): move_to failed: no path)"
    )


def test_unplannable_recovery_fails_closed() -> None:
    class Hostile:
        def propose(self, request, *, cancel=None) -> str:
            return "__import__('os').system('echo pwned')"

    far = Verdict(Category.OUT_OF_REACH, "The Apple is 2 m away.", action="pick")
    child = CountingChild()
    guard = RaiderGuard(
        child,
        "pick(Apple)",
        ScriptedChecker([far]),
        recovery=Recovery(Hostile(), ScriptedRobot(), ScriptedHuman([]), max_retries=1),
    )
    drive(guard, child, [(R, I, Phase.CHECKING), (R, I, Phase.PLANNING), (F, I, Phase.DONE)])
    assert guard.feedback_message.startswith(
        "The Apple is 2 m away. (no recovery: RecoveryCodeError: no acceptable recovery"
    )
    assert "__import__" in guard.feedback_message


# ------------------------------------------------------------------------- failing closed


def test_checker_that_raises_fails_closed() -> None:
    child = CountingChild()
    guard = RaiderGuard(
        child,
        "pick(Apple)",
        ScriptedChecker([RuntimeError("camera offline")]),
        recovery=Recovery(SymbolicRecoveryPlanner(), ScriptedRobot(), ScriptedHuman([])),
    )
    drive(guard, child, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert guard.feedback_message == "the check of pick(Apple) failed: RuntimeError: camera offline"
    stored = py_trees.blackboard.Blackboard.get(LAST_VERDICT)
    assert stored["category"] == "unknown" and "camera offline" in stored["explanation"]
    assert child.updates == 0


def test_checker_returning_garbage_or_unknown_fails_closed() -> None:
    garbage = RaiderGuard(CountingChild(), "pick(Apple)", ScriptedChecker([lambda s, q: "yes"]))  # type: ignore[list-item]
    drive(garbage, garbage.decorated, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert garbage.feedback_message == "the checker returned 'yes' for pick(Apple), not a Verdict"
    unknown = RaiderGuard(
        CountingChild(),
        "pick(Apple)",
        ScriptedChecker([Verdict.unknown("time limit of 30 s")]),
        recovery=Recovery(SymbolicRecoveryPlanner(), ScriptedRobot(), ScriptedHuman([])),
        name="unknown",
    )
    drive(unknown, unknown.decorated, [(R, I, Phase.CHECKING), (F, I, Phase.DONE)])
    assert unknown.feedback_message == "The check did not finish: time limit of 30 s"
    assert unknown.attempts == 0  # no recovery from a check that did not finish


def test_query_callable_is_read_at_every_run_and_may_fail() -> None:
    texts = iter(["pick(Apple)", "pick(Mug)"])
    checker = ScriptedChecker([none()])
    guard = RaiderGuard(CountingChild(), lambda: next(texts), checker)
    for _ in range(2):
        guard.tick_once()
        settle(guard)
        guard.tick_once()
    assert checker.calls == ["pick(Apple)", "pick(Mug)"]
    guard.tick_once()  # the iterator is exhausted: the query cannot be built ...
    assert guard.status == R  # ... which is found out on the worker, never on the tick
    settle(guard)
    guard.tick_once()
    assert guard.status == F
    assert guard.feedback_message == "cannot build the query to check: StopIteration"


def test_scene_sources() -> None:
    observed = []

    def observe() -> str:
        observed.append(threading.current_thread().name)
        return "scene-now"

    class NoCancel:
        def __init__(self) -> None:
            self.scenes: list[Any] = []

        def check(self, scene, query):
            self.scenes.append(scene)
            return none()

    plain = NoCancel()
    fixed = ("a world model of the checker's own",)  # not a str: a str is a scene file's path
    for scene, checker in ((observe, ScriptedChecker([none()])), (None, plain), (fixed, plain)):
        guard = RaiderGuard(CountingChild(), "pick(Apple)", checker, scene=scene)
        guard.tick_once()
        settle(guard)
        guard.tick_once()
        assert guard.status == S
    assert observed and observed[0] != threading.current_thread().name  # observed off the tick
    assert plain.scenes == [None, fixed]


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="Recovery\\(planner, robot, human\\)"):
        RaiderGuard(
            CountingChild(), "pick(A)", ScriptedChecker([]), recovery=SymbolicRecoveryPlanner()
        )  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_attempts"):
        RaiderGuard(CountingChild(), "pick(A)", ScriptedChecker([]), max_attempts=-1)
    with pytest.raises(TypeError, match="checker"):
        RaiderGuard(CountingChild(), "pick(A)", object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty"):
        RaiderGuard(CountingChild(), "  ", ScriptedChecker([]))


# ------------------------------------------------------------------------- terminate


def test_terminate_while_the_check_is_pending() -> None:
    gate = threading.Event()
    checker = ScriptedChecker([none()], gate=gate)
    child = CountingChild()
    guard = RaiderGuard(child, "pick(Apple)", checker)
    guard.tick_once()
    assert checker.entered.wait(GATE_S)
    pending = guard.pending
    assert (guard.status, child.status) == (R, I)
    guard.stop(I)  # e.g. a higher-priority branch took over
    assert checker.cancels[0] is not None and checker.cancels[0].is_set()
    assert pending is not None and pending.cancelled and guard.pending is None
    assert (guard.status, child.status, child.updates) == (I, I, 0)
    gate.set()
    # The late verdict of the cancelled check is never used: a new run checks afresh.
    guard.tick_once()
    assert guard.phase is Phase.CHECKING
    settle(guard)
    assert len(checker.calls) == 2
    drive(guard, child, [(S, S, Phase.ACTING)])


def test_preempted_by_a_selector_while_recovering() -> None:
    class BlockingHuman:
        def __init__(self) -> None:
            self.release = threading.Event()

        def ask(self, question: str) -> str:
            self.release.wait(GATE_S)
            return "Apple_1"

        def say(self, text: str) -> None: ...

    ambiguity = Verdict(
        Category.AMBIGUITY, "Two apples.", grounding={"Apple": ["A|1", "A|2"]}, action="pick"
    )
    human = BlockingHuman()
    child = CountingChild()
    guard = RaiderGuard(
        child,
        "pick(Apple)",
        ScriptedChecker([ambiguity]),
        recovery=Recovery(SymbolicRecoveryPlanner(), ScriptedRobot(), human),
    )
    emergency = py_trees.behaviours.StatusQueue(name="emergency", queue=[F, F, F, S], eventually=S)
    root = py_trees.composites.Selector("root", memory=False, children=[emergency, guard])
    for _ in range(3):
        root.tick_once()
        settle(guard) if guard.phase is not Phase.RECOVERING else None
    assert guard.phase is Phase.RECOVERING and guard.status == R
    ask = guard.recovery_tree.children[0]
    assert ask.status == R and ask.pending is not None
    ask_pending = ask.pending
    root.tick_once()  # the emergency branch succeeds: the guard is preempted
    assert (root.status, guard.status, child.status) == (S, I, I)
    assert guard.recovery_tree is None or guard.recovery_tree.status == I
    assert ask_pending.cancelled and ask.status == I
    human.release.set()


def test_terminate_while_acting_cancels_the_robot_action() -> None:
    robot = ScriptedRobot(polls=10)
    child = ActionBehaviour("pick", ["Apple"], robot)
    guard = RaiderGuard(child, "pick(Apple)", ScriptedChecker([none()]))
    drive(guard, child, [(R, I, Phase.CHECKING), (R, R, Phase.ACTING)])
    guard.stop(I)
    assert (guard.status, child.status) == (I, I)
    assert robot.cancelled == [1]


# ------------------------------------------------------------------------- guard_tree


def test_guard_tree_wraps_selected_nodes_in_place() -> None:
    robot = ScriptedRobot()
    pick = ActionBehaviour("pick", ["Apple"], robot)
    place = ActionBehaviour("place", ["Apple", "Table"], robot)
    say = py_trees.behaviours.Success("log")
    inner = py_trees.decorators.Inverter("not", py_trees.decorators.Inverter("id", place))
    root = py_trees.composites.Sequence("plan", memory=True, children=[pick, say, inner])
    # Each verdict names the action it checked: a guard never runs a place on a pick's verdict.
    checker = ScriptedChecker([lambda scene, query: none(query.text.split("(")[0])])

    def select(node):
        if isinstance(node, ActionBehaviour):
            return f"{node.action}({', '.join(node.args)})"
        return None

    out = guard_tree(root, checker, select=select, max_attempts=1)
    assert out is root
    assert isinstance(root.children[0], RaiderGuard) and root.children[0].decorated is pick
    assert root.children[0].parent is root and pick.parent is root.children[0]
    assert root.children[1] is say
    wrapped = inner.decorated.decorated
    assert isinstance(wrapped, RaiderGuard) and wrapped.decorated is place
    assert wrapped.parent is inner.decorated and wrapped.max_attempts == 1
    # Guarding again leaves guarded nodes alone.
    guard_tree(root, checker, select=select)
    assert sum(isinstance(n, RaiderGuard) for n in root.iterate()) == 2
    tree = py_trees.trees.BehaviourTree(root)
    for _ in range(10):
        tree.tick()
        if root.status != R:
            break
        for node in root.iterate():
            if isinstance(node, RaiderGuard):
                settle(node)
    assert root.status == S
    assert sorted(checker.calls) == ["pick(Apple)", "place(Apple, Table)"]
    assert robot.started == [("pick", ["Apple"]), ("place", ["Apple", "Table"])]
    assert "Guard pick(Apple)" in py_trees.display.unicode_tree(root)
    single = ActionBehaviour("open", ["Fridge"], robot)
    new_root = guard_tree(single, checker, select=select)
    assert isinstance(new_root, RaiderGuard) and new_root.decorated is single


# ------------------------------------------------------------------------- with SimWorld


class DryRunChecker:
    """A real (if simple) checker: try the action on a copy of the scene in SimWorld.

    The world's own precondition rules decide the category, the way RAIDER's Precond
    baseline would; grounding lists what each argument could mean.
    """

    def check(self, scene: Scene, query: Query, *, cancel=None) -> Verdict:
        name, args = split_action(str(query))
        grounding = {a: [o.id for o in scene.of_type(a)] or self._one(scene, a) for a in args}
        try:
            SimWorld(scene).execute(name or "", args)
        except PreconditionFailed as exc:
            return Verdict(exc.reason, exc.detail, grounding=grounding, action=name)
        return Verdict(Category.NONE, f"{query} can run.", grounding=grounding, action=name)

    @staticmethod
    def _one(scene: Scene, ref: str) -> list[str]:
        try:
            return [scene.resolve(ref).id]
        except Exception:
            return []


def test_end_to_end_ambiguity_with_simworld(small_kitchen_dict: dict) -> None:
    data = copy.deepcopy(small_kitchen_dict)
    mug = next(o for o in data["objects"] if o["objectType"] == "Mug")
    data["objects"].append(dict(mug, objectId="Mug|-01.95|+00.93|-00.05", receptacleObjectIds=[]))
    data["objects"][-1]["position"] = {"x": -1.95, "y": 0.93, "z": -0.05}
    data["objects"][-1].pop("axisAlignedBoundingBox")
    data["agent"]["position"] = {"x": -1.2, "y": 0.9, "z": 0.1}  # within reach of both mugs
    world = SimWorld(data)
    robot = SyncRobot(world)
    human = ScriptedHuman({"which mug": "Mug_2."})
    child = ActionBehaviour("pick", ["Mug"], robot)
    guard = RaiderGuard(
        child,
        "pick(Mug)",
        DryRunChecker(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
    )
    for _ in range(10):
        guard.tick_once()
        if guard.status != R:
            break
        settle(guard)
    assert guard.status == S, guard.feedback_message
    mug_2 = world.scene.resolve("Mug_2")
    assert [h.id for h in world.scene.holding] == [mug_2.id]
    assert world.executed == [f"pick({mug_2.id})"]
    asked = "Which mug should I pick up? I see 2: please describe the one you mean."
    assert asked in human.transcript_text()  # no internal labels: "Mug_1 or Mug_2?"


def test_end_to_end_person_moves_the_blocker(small_kitchen_dict: dict) -> None:
    data = copy.deepcopy(small_kitchen_dict)
    chair = copy.deepcopy(next(o for o in data["objects"] if o["objectType"] == "Stool"))
    chair.update(objectId="Chair|-00.55|+00.00|-01.40", objectType="Chair", pickupable=False)
    data["objects"].append(chair)
    data["locations"] = {"medicine_counter": {"x": -1.05, "y": 0.0, "z": -1.55}}
    data["blocked"] = {"medicine_counter": [chair["objectId"]]}
    data["humans"] = [
        {"id": "person_1", "name": None, "position": {"x": 1.35, "y": 0.0, "z": 0.55}}
    ]
    world = SimWorld(data)
    robot = SyncRobot(world)

    def person_acts(question: str, answer: str) -> None:
        if "move the Chair" in question:
            world.unblock("medicine_counter")

    human = ScriptedHuman(["Of course."], on_answer=person_acts)
    child = ActionBehaviour("approach", ["medicine_counter"], robot)
    guard = RaiderGuard(
        child,
        "approach(medicine_counter)",
        DryRunChecker(),
        scene=robot.observe,
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
    )
    statuses = []
    for _ in range(10):
        guard.tick_once()
        statuses.append((guard.status, child.status))
        if guard.status != R:
            break
        settle(guard)
    assert guard.status == S, guard.feedback_message
    assert statuses[-1] == (S, S) and all(c == I for _, c in statuses[:-1])
    assert human.transcript_text() == (
        "robot asks: Could you move the Chair out of the way, please?\nhuman: Of course."
    )
    assert world.executed == ["approach(medicine_counter)"]


def test_simworld_failure_inside_recovery_is_reported(small_kitchen_dict: dict) -> None:
    world = SimWorld(small_kitchen_dict)
    robot = SyncRobot(world)
    # The Egg is in the closed Fridge, 3 m away, and a Stool blocks the way to the Fridge:
    # the recovery's move_to('Fridge') fails.
    world.block("Fridge", "Stool_1")
    guard = RaiderGuard(
        ActionBehaviour("pick", ["Egg"], robot),
        "pick(Egg)",
        DryRunChecker(),
        scene=robot.observe,
        # Unverified: verification would see the blocked way and never start the plan.
        recovery=Recovery(SymbolicRecoveryPlanner(), robot, ScriptedHuman([]), verify=False),
        max_attempts=1,
    )
    for _ in range(10):
        guard.tick_once()
        if guard.status != R:
            break
        settle(guard)
    assert guard.status == F
    assert guard.plan is not None
    assert guard.plan.code == "move_to('Fridge')\nopen('Fridge')\npick('Egg')"
    fridge = world.scene.resolve("Fridge").id  # the robot receives objectIds
    assert (
        f"the last recovery failed: move_to('Fridge'): move_to({fridge}) failed [obstructed]"
        in guard.feedback_message
    )
    with pytest.raises(ActionFailed):
        world.execute("pick", ["Egg"])  # nothing was done behind the guard's back


def test_query_callable_runs_on_the_worker_not_the_tick() -> None:
    import threading

    threads = []

    def build() -> str:
        threads.append(threading.current_thread())
        return "pick(Apple)"

    guard = RaiderGuard(CountingChild(), build, ScriptedChecker([none()]))
    guard.tick_once()
    settle(guard)
    guard.tick_once()
    assert threads and threads[0] is not threading.main_thread()
    assert str(guard.query) == "pick(Apple)"
