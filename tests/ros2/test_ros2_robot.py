"""A guarded tree in this process, a robot in another, over real ROS 2 (the user's own types).

The robot is tests/ros2/robot_node.py (test_msgs types, written for the tests); the tree is a
plain py_trees behaviour of the test's own around a RaiderGuard. Every wait is bounded.
"""

from __future__ import annotations

import json
import signal
import time

import py_trees
import pytest

from bt_raider import ActionState, RaiderGuard, Recovery, SymbolicReasoner, SymbolicRecoveryPlanner
from bt_raider.errors import ActionFailed

pytestmark = pytest.mark.ros2
Status = py_trees.common.Status
CLEAN, DIRTY, MUG = (
    "Cup|+00.20|+00.90|+00.50",
    "Cup|-00.20|+00.90|+00.50",
    "Mug|+03.00|+00.90|+00.00",
)


def thing(object_id, kind, x, z=0.5, dirty=None):
    obj = {
        "objectId": object_id,
        "objectType": kind,
        "position": {"x": x, "y": 0.9, "z": z},
        "pickupable": True,
    }
    if dirty is not None:
        obj.update(dirtyable=True, isDirty=dirty)
    return obj


def two_cups_and_a_far_mug():
    return {
        "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
        "objects": [
            thing(CLEAN, "Cup", 0.2, dirty=False),
            thing(DIRTY, "Cup", -0.2, dirty=True),
            thing(MUG, "Mug", 3.0, z=0.0),
        ],
    }


class MyAction(py_trees.behaviour.Behaviour):
    """The team's own action node: start, poll, cancel; ``retarget`` takes the guard's choice."""

    def __init__(self, action, target, robot):
        super().__init__(f"{action} {target}")
        self.action, self.target, self.robot = action, target, robot
        self.resolved = None
        self.handle = None

    def retarget(self, resolved):
        self.resolved = resolved

    def initialise(self):
        target = self.resolved.args[0] if self.resolved else self.target
        self.handle, self.error = None, None
        try:
            self.handle = self.robot.start(self.action, [target])
        except ActionFailed as exc:  # the robot's protocol: it could not start
            self.error = str(exc)

    def update(self):
        if self.error is not None:
            self.feedback_message = self.error
            return Status.FAILURE
        progress = self.robot.poll(self.handle)
        self.feedback_message = progress.message
        if progress.state is ActionState.RUNNING:
            return Status.RUNNING
        return Status.SUCCESS if progress.state is ActionState.SUCCEEDED else Status.FAILURE

    def terminate(self, new_status):
        if new_status is Status.INVALID and self.handle is not None:
            self.robot.cancel(self.handle)


def nested_goal(args, scene):
    """The robot numbers objects by their place in its scene: the goal names that number."""
    from test_msgs.action import NestedMessage

    ids = [o["objectId"] for o in scene["objects"]]
    if args[0] not in ids:
        raise ValueError(f"{args[0]!r} is not in the robot's scene")
    goal = NestedMessage.Goal()
    goal.nested_field.uint32_value = ids.index(args[0])
    return goal


def nested_result(result):
    return result.nested_field.bool_value, ""


def nested_seq(result):
    return int(result.nested_field.uint64_value)


def connect(ros_node, actions=("pick", "move_to"), **robot_options):
    """This process's side: a node, the scene topic, the robot and the person over ROS 2."""
    from test_msgs.action import NestedMessage
    from test_msgs.srv import BasicTypes

    from bt_raider.ros2.person import RosHuman
    from bt_raider.ros2.robot import RosAction, RosRobot
    from bt_raider.ros2.scene import SceneTopic

    spinner = ros_node()
    scene = SceneTopic(spinner)
    mapping = {
        name: RosAction(NestedMessage, f"/robot/{name}", nested_goal, nested_result, nested_seq)
        for name in actions
    }
    robot = RosRobot(spinner, mapping, scene, **robot_options)
    human = RosHuman(
        spinner, BasicTypes, request_field="string_value", response_field="string_value"
    )
    spinner.start()
    assert scene.wait(1, timeout=30), "no scene from the robot within 30 s"
    missing = robot.wait_for_servers(30)
    assert missing == [], robot.explain_missing(missing)
    assert human.wait_for_service(30)
    return spinner, scene, robot, human


def tick_until_done(tree, root, seconds=20.0, period=0.01):
    deadline = time.monotonic() + seconds
    ticks = []
    while time.monotonic() < deadline:
        tree.tick()
        ticks.append(root.status)
        if root.status in (Status.SUCCESS, Status.FAILURE):
            return ticks
        time.sleep(period)
    raise AssertionError(f"the tree was still {root.status} after {seconds:g} s")


def guarded(robot, human, scene, action, target, query):
    node = MyAction(action, target, robot)
    recovery = Recovery(SymbolicRecoveryPlanner(), robot, human)
    guard = RaiderGuard(node, query, SymbolicReasoner(), scene=scene, recovery=recovery)
    return guard, node


def test_the_cup_question_is_asked_and_answered_over_ros(ros_node, robot_process):
    from bt_raider.ros2.state import GuardStatePublisher
    from bt_raider.viewer.recorder import TraceRecorder

    robot_proc = robot_process(two_cups_and_a_far_mug(), "--answer", "the clean cup")
    spinner, scene, robot, human = connect(ros_node)
    guard, node = guarded(robot, human, scene, "pick", "Cup", "pick the cup")
    tree = py_trees.trees.BehaviourTree(guard)
    from std_msgs.msg import String

    heard = []
    spinner.call(
        lambda: spinner.node.create_subscription(
            String, "bt_raider/guard_state", lambda m: heard.append(json.loads(m.data)), 50
        )
    )
    state = GuardStatePublisher(spinner, tree, humans=[human])
    recorder = TraceRecorder(tree, human=human, title="cup over ROS 2")

    tick_until_done(tree, guard)
    recorder.finish()

    assert guard.status is Status.SUCCESS, guard.feedback_message
    assert node.status is Status.SUCCESS
    (asked,) = robot_proc.events("ask")
    assert "cup" in asked["text"].lower() and asked["answer"] == "the clean cup"
    assert [(g["action"], g["target"]) for g in robot_proc.events("goal")] == [("pick", CLEAN)]
    # The scene shows the effect: the clean cup is in the hand, the dirty one is not.
    objects = {o["objectId"]: o for o in scene()["objects"]}
    assert objects[CLEAN].get("isPickedUp") and not objects[DIRTY].get("isPickedUp")
    # The guard's state went out on the topic: the ambiguity, the question, the recovery.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(heard) < len(state.published):
        time.sleep(0.05)
    kinds = [m["kind"] for m in heard]
    assert "ask" in kinds and "recovery" in kinds
    verdicts = [m["verdict"]["category"] for m in heard if m["kind"] == "verdict"]
    assert verdicts[0] == "ambiguity" and verdicts[-1] == "none"
    # The trace recorder works on the ROS run (bt-raider view opens what it writes).
    events = [e["kind"] for t in recorder.to_json()["ticks"] for e in t.get("events", [])]
    assert "verdict" in events and "ask" in events


def test_recovery_drives_to_a_far_object_then_picks_it(ros_node, robot_process):
    robot_proc = robot_process(two_cups_and_a_far_mug())
    _spinner, scene, robot, human = connect(ros_node)
    guard, node = guarded(robot, human, scene, "pick", "Mug", "pick the mug")
    tree = py_trees.trees.BehaviourTree(guard)

    tick_until_done(tree, guard)

    assert guard.status is Status.SUCCESS, guard.feedback_message
    assert node.status is Status.SUCCESS
    goals = [(g["action"], g["target"]) for g in robot_proc.events("goal")]
    assert goals == [("move_to", MUG), ("pick", MUG)]
    assert guard.verdict.ok
    mug = next(o for o in scene()["objects"] if o["objectId"] == MUG)
    assert mug["isPickedUp"]


def test_a_rejected_goal_fails_with_the_reason(ros_node, robot_process):
    robot_proc = robot_process(two_cups_and_a_far_mug(), "--reject", "pick")
    _spinner, _scene, robot, _human = connect(ros_node)
    node = MyAction("pick", CLEAN, robot)
    tree = py_trees.trees.BehaviourTree(node)

    statuses = tick_until_done(tree, node)

    assert statuses[-1] is Status.FAILURE
    assert "rejected" in node.feedback_message and "/robot/pick" in node.feedback_message
    assert robot_proc.events("rejected") and not robot_proc.events("goal")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_server_killed_mid_goal_fails_the_action_within_3_s(ros_node, robot_process, sig):
    robot_proc = robot_process(two_cups_and_a_far_mug(), "--slow", "60")
    _spinner, _scene, robot, _human = connect(ros_node)
    node = MyAction("pick", CLEAN, robot)
    tree = py_trees.trees.BehaviourTree(node)
    tree.tick()
    robot_proc.wait_event("goal")
    tree.tick()
    assert node.status is Status.RUNNING

    robot_proc.proc.send_signal(sig)
    killed = time.monotonic()
    while node.status is Status.RUNNING and time.monotonic() - killed < 3.0:
        tree.tick()
        time.sleep(0.02)

    assert node.status is Status.FAILURE, f"still {node.status} 3 s after the kill"
    # SIGTERM: the robot aborts its goal on the way out (or is gone); SIGKILL: it is gone
    # from the graph after the short lease.
    reason = "lost" if sig is signal.SIGKILL else ("aborted", "lost")
    assert any(word in node.feedback_message for word in reason), node.feedback_message
    assert "pick" in node.feedback_message


def test_stopping_the_tree_mid_goal_cancels_it_on_the_server(ros_node, robot_process):
    robot_proc = robot_process(two_cups_and_a_far_mug(), "--slow", "60")
    _spinner, _scene, robot, _human = connect(ros_node)
    node = MyAction("pick", CLEAN, robot)
    root = py_trees.composites.Sequence("serve", memory=True, children=[node])
    tree = py_trees.trees.BehaviourTree(root)
    tree.tick()
    robot_proc.wait_event("goal")
    tree.tick()
    assert node.status is Status.RUNNING

    root.stop(Status.INVALID)  # the tree is stopped (a higher priority took over, Ctrl-C)

    assert node.status is Status.INVALID
    robot_proc.wait_event("cancelled", timeout=10)
    assert robot_proc.events("cancel")[0]["action"] == "pick"


def test_a_result_waits_for_the_scene_that_shows_its_effect(ros_node, robot_process):
    robot_proc = robot_process(two_cups_and_a_far_mug(), "--scene-delay", "5")
    _spinner, scene, robot, _human = connect(ros_node, scene_timeout_s=20)
    before = scene.seq
    handle = robot.start("pick", [CLEAN])
    robot_proc.wait_event("done")
    # The robot logs "done" before its result travels: wait (bounded) until the result is in.
    deadline = time.monotonic() + 10
    waiting = robot.poll(handle)
    while "waiting for scene" not in waiting.message and time.monotonic() < deadline:
        time.sleep(0.01)
        waiting = robot.poll(handle)
    # The result is in, the scene that shows it is not: still RUNNING, and saying why.
    assert waiting.state is ActionState.RUNNING and "waiting for scene" in waiting.message
    assert scene.seq == before

    deadline = time.monotonic() + 10
    while robot.poll(handle).state is ActionState.RUNNING and time.monotonic() < deadline:
        time.sleep(0.02)

    assert robot.poll(handle).state is ActionState.SUCCEEDED
    cup = next(o for o in robot.observe()["objects"] if o["objectId"] == CLEAN)
    assert cup["isPickedUp"]  # the guard's next check sees the cup in the hand


def test_a_scene_that_never_shows_the_result_is_a_failure(ros_node, robot_process):
    robot_process(two_cups_and_a_far_mug(), "--scene-delay", "60")
    _spinner, _scene, robot, _human = connect(ros_node, scene_timeout_s=0.5)
    handle = robot.start("pick", [CLEAN])
    deadline = time.monotonic() + 10
    while robot.poll(handle).state is ActionState.RUNNING and time.monotonic() < deadline:
        time.sleep(0.02)

    progress = robot.poll(handle)
    assert progress.state is ActionState.FAILED and "did not arrive" in progress.message


def test_a_server_not_found_gets_a_new_client_and_is_found_when_it_comes(
    ros_node, robot_process, monkeypatch
):
    """The tree starts first; its clients are made anew until the robot comes, then work."""
    from test_msgs.action import NestedMessage

    from bt_raider.ros2 import robot as ros_robot
    from bt_raider.ros2.scene import SceneTopic

    monkeypatch.setattr(ros_robot, "REMAKE_S", 0.3)
    spinner = ros_node()
    scene = SceneTopic(spinner)
    spec = ros_robot.RosAction(NestedMessage, "/robot/pick", nested_goal, nested_result, nested_seq)
    robot = ros_robot.RosRobot(spinner, {"pick": spec}, scene)
    spinner.start()
    deadline = time.monotonic() + 20
    while robot.remade["/robot/pick"] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert robot.remade["/robot/pick"] >= 2
    assert robot.wait_for_servers(0) == ["/robot/pick"]
    explained = robot.explain_missing(["/robot/pick"])
    assert "in the graph: nothing" in explained, explained

    robot_proc = robot_process(two_cups_and_a_far_mug())
    assert robot.wait_for_servers(30) == [], robot.explain_missing(["/robot/pick"])
    assert scene.wait(1, timeout=30)
    handle = robot.start("pick", [CLEAN])
    deadline = time.monotonic() + 20
    while robot.poll(handle).state is ActionState.RUNNING and time.monotonic() < deadline:
        time.sleep(0.02)

    assert robot.poll(handle).state is ActionState.SUCCEEDED, robot.poll(handle)
    assert [(g["action"], g["target"]) for g in robot_proc.events("goal")] == [("pick", CLEAN)]
    assert not spinner.errors
