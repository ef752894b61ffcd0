"""ActionBehaviour and SyncRobot: start/poll/cancel, blackboard variables, failures."""

import py_trees
import pytest

from bt_raider.errors import ActionFailed
from bt_raider.robot.actions import ActionBehaviour, ActionState, Progress, SyncRobot, Var

S = py_trees.common.Status


class SlowRobot:
    """Reports RUNNING for ``steps`` polls, then success; records cancels."""

    def __init__(self, steps=2):
        self.steps, self.started, self.cancelled, self._left = steps, [], [], {}

    def start(self, action, args):
        handle = len(self.started)
        self.started.append((action, list(args)))
        self._left[handle] = self.steps
        return handle

    def poll(self, handle):
        if self._left[handle] > 0:
            self._left[handle] -= 1
            return Progress(ActionState.RUNNING, "moving")
        return Progress(ActionState.SUCCEEDED, "done")

    def cancel(self, handle):
        self.cancelled.append(handle)

    def observe(self):
        return None


class Executor:
    def __init__(self):
        self.calls = []

    def execute(self, action, args):
        self.calls.append((action, args))
        if args == ["Microwave"] and action == "pick":
            raise ActionFailed("the Microwave is not pickupable")

    def observe(self):
        return "scene"


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def test_running_then_success_without_blocking():
    robot = SlowRobot(steps=2)
    node = ActionBehaviour("pick", ["Apple"], robot)
    assert [node.tick_once() or node.status for _ in range(3)] == [S.RUNNING, S.RUNNING, S.SUCCESS]
    assert robot.started == [("pick", ["Apple"])]
    assert node.feedback_message == "done"


def test_var_is_read_from_the_blackboard_at_start():
    client = py_trees.blackboard.Client(name="test")
    client.register_key(key=Var("item").key, access=py_trees.common.Access.WRITE)
    client.set(Var("item").key, "Medicine_2")
    robot = SlowRobot(steps=0)
    node = ActionBehaviour("pick", [Var("item")], robot)
    node.tick_once()
    assert node.status is S.SUCCESS
    assert robot.started == [("pick", ["Medicine_2"])]


def test_unset_var_fails_with_a_reason():
    node = ActionBehaviour("pick", [Var("which")], SlowRobot())
    node.tick_once()
    assert node.status is S.FAILURE
    assert "'which' has no value" in node.feedback_message


def test_interrupt_cancels_the_robot_action():
    robot = SlowRobot(steps=5)
    node = ActionBehaviour("approach", ["counter"], robot)
    node.tick_once()
    assert node.status is S.RUNNING
    node.stop(S.INVALID)
    assert robot.cancelled == [0]


def test_sync_robot_reports_success_and_failure():
    ex = Executor()
    robot = SyncRobot(ex)
    ok = ActionBehaviour("pick", ["Apple"], robot)
    bad = ActionBehaviour("pick", ["Microwave"], robot)
    ok.tick_once()
    bad.tick_once()
    assert ok.status is S.SUCCESS
    assert bad.status is S.FAILURE and "not pickupable" in bad.feedback_message
    assert robot.observe() == "scene"
    assert robot.poll(99).state is ActionState.FAILED


class _Guard(py_trees.decorators.Decorator):
    """Stands in for RaiderGuard: a parent exposing the verdict of its last check."""

    def __init__(self, child, verdict):
        super().__init__(name="guard", child=child)
        self.verdict = verdict

    def update(self):
        return self.decorated.status


def test_guarded_action_runs_on_what_the_check_grounded():
    from bt_raider.checking.verdict import Verdict

    robot = SlowRobot(steps=0)
    node = ActionBehaviour(
        "pick", ["adrianas_medicine", "counter"], robot, aliases={"counter": "CounterTop_1"}
    )
    ok = Verdict("none", "fine", grounding={"adrianas_medicine": ["Medicine|1"]})
    _Guard(node, ok).tick_once()
    # grounded to one object -> its id; not grounded -> the alias (plan name -> scene name)
    assert robot.started == [("pick", ["Medicine|1", "CounterTop_1"])]


def test_ambiguous_or_failed_grounding_is_not_used():
    from bt_raider.checking.verdict import Verdict

    robot = SlowRobot(steps=0)
    node = ActionBehaviour("pick", ["medicine"], robot)
    two = Verdict("none", "fine", grounding={"medicine": ["Medicine|1", "Medicine|2"]})
    _Guard(node, two).tick_once()
    failed = Verdict("ambiguity", "which?", grounding={"medicine": ["Medicine|1"]})
    node2 = ActionBehaviour("pick", ["medicine"], robot)
    _Guard(node2, failed).tick_once()
    assert robot.started == [("pick", ["medicine"]), ("pick", ["medicine"])]


def test_retarget_points_the_action_at_what_the_check_resolved_until_reset():
    from bt_raider.checking.contract import Query
    from bt_raider.checking.verdict import Verdict
    from bt_raider.robot.retarget import Retargetable, resolve_action

    robot = SlowRobot(steps=0)
    node = ActionBehaviour("pick", ["cup"], robot)
    assert isinstance(node, Retargetable)
    clean = Verdict("none", "fine", grounding={"the clean cup": ["Cup|2"]}, action="pick")
    node.retarget(resolve_action(clean, Query("pick the clean cup")))
    node.tick_once()
    node.retarget(None)  # the guard's next run: the node's own arguments again
    node.tick_once()
    assert robot.started == [("pick", ["Cup|2"]), ("pick", ["cup"])]


def test_retarget_of_another_action_or_arity_only_maps_grounded_arguments():
    from bt_raider.checking.contract import Query
    from bt_raider.checking.verdict import Verdict
    from bt_raider.robot.retarget import resolve_action

    robot = SlowRobot(steps=0)
    # A PDDL step's node keeps the robot and the place; the medicine becomes its objectId.
    node = ActionBehaviour("pick", ["tiago", "medicine", "counter"], robot)
    checked = Verdict("none", "fine", grounding={"medicine": ["Medicine|1"]}, action="pick")
    node.retarget(resolve_action(checked, Query("(pick tiago medicine counter)")))
    node.tick_once()
    # A recovery chose the argument: it replaces the node's own, grounded or not.
    other = ActionBehaviour("move_to", ["kitchen"], robot, aliases={"free_table": "Table|9"})
    spot = Verdict("none", "fine", grounding={}, action="move_to")
    other.retarget(resolve_action(spot, Query("move_to(free_table)"), asked=Query("move_to(x)")))
    other.tick_once()
    assert robot.started == [
        ("pick", ["tiago", "Medicine|1", "counter"]),
        ("move_to", ["Table|9"]),
    ]
