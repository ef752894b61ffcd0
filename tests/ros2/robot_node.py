"""A robot written for the tests, as a ROS 2 process with the user's own types (test_msgs).

Not bt_raider's SimWorld nor its interface package: a team's robot. Each action of ``--actions``
is a ``test_msgs/action/NestedMessage`` server at ``/robot/NAME``; the goal's
``nested_field.uint32_value`` is the target's index in the scene's objects (the robot's own
numbering), the result's ``nested_field`` carries ``bool_value`` (ok) and ``uint64_value`` (the
scene number that shows it). The scene (``--scene``, a JSON file) goes out on ``scene`` as
``{"seq", "scene", "log"}``. The person is a ``test_msgs/srv/BasicTypes`` service ``ask``
(``string_value`` in, ``string_value`` out) answering ``--answer``; what the robot says on
``say`` is logged. Every goal, cancel and utterance is appended to ``--events`` as a JSON line.

``--reject NAME`` rejects that action's goals; ``--slow S`` makes every goal take S seconds
(cancellable); ``--scene-delay S`` publishes a goal's scene S seconds after its result.
Runs until SIGTERM/SIGINT; checks the environment keeps traffic local first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
import time

REACH_M = 1.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scene", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--actions", default="pick,move_to")
    parser.add_argument("--answer", default="the clean cup")
    parser.add_argument("--reject", action="append", default=[])
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--scene-delay", type=float, default=0.0)
    args = parser.parse_args()

    from bt_raider.ros2.env import check_local

    check_local()  # the fixture's rule holds in the child too
    import rclpy
    from rclpy.action import ActionServer, CancelResponse, GoalResponse
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.executors import MultiThreadedExecutor
    from std_msgs.msg import String
    from test_msgs.action import NestedMessage
    from test_msgs.srv import BasicTypes

    from bt_raider.ros2.scene import latched_qos

    scene = json.load(open(args.scene))
    lock = threading.Lock()
    seq = [0]
    log: list[dict] = []

    def event(**data: object) -> None:
        with lock, open(args.events, "a") as out:
            out.write(json.dumps({"t": time.time(), **data}) + "\n")

    rclpy.init()
    node = rclpy.create_node("test_robot")
    group = ReentrantCallbackGroup()
    pub = node.create_publisher(String, "scene", latched_qos())

    def publish() -> int:
        with lock:
            seq[0] += 1
            pub.publish(String(data=json.dumps({"seq": seq[0], "scene": scene, "log": log})))
            return seq[0]

    def find(oid: str) -> dict | None:
        return next((o for o in scene["objects"] if o["objectId"] == oid), None)

    def act(name: str, target: str) -> tuple[bool, str]:
        obj = find(target)
        agent = scene["agent"]["position"]
        if obj is None:
            return False, f"{name}: no object {target!r}"
        pos = obj["position"]
        if name == "move_to":
            agent["x"], agent["z"] = pos["x"] - 0.5, pos["z"]
            return True, f"at {target}"
        if math.hypot(pos["x"] - agent["x"], pos["z"] - agent["z"]) > REACH_M:
            return False, f"{target} is out of reach"
        obj["isPickedUp"] = True
        return True, f"picked {target}"

    def make(name: str) -> ActionServer:
        def target_of(request: object) -> str:
            index = request.nested_field.uint32_value
            return scene["objects"][index]["objectId"] if index < len(scene["objects"]) else "?"

        def on_goal(request: object) -> GoalResponse:
            target = target_of(request)
            if name in args.reject:
                event(kind="rejected", action=name, target=target)
                return GoalResponse.REJECT
            return GoalResponse.ACCEPT

        def on_cancel(_handle: object) -> CancelResponse:
            event(kind="cancel", action=name)
            return CancelResponse.ACCEPT

        def execute(handle: object) -> object:
            target = target_of(handle.request)
            event(kind="goal", action=name, target=target)
            end = time.monotonic() + args.slow
            result = NestedMessage.Result()
            while time.monotonic() < end:
                if stop.is_set():  # SIGTERM: a robot that shuts down aborts what it does
                    handle.abort()
                    event(kind="aborted", action=name, target=target)
                    return result
                if handle.is_cancel_requested:
                    handle.canceled()
                    event(kind="cancelled", action=name, target=target)
                    return result
                time.sleep(0.02)
            with lock:
                ok, message = act(name, target)
                log.append({"kind": "action", "action": name, "args": [target], "ok": ok})
            if args.scene_delay:
                number = seq[0] + 1
                threading.Timer(args.scene_delay, publish).start()
            else:
                number = publish()
            result.nested_field.bool_value = ok
            result.nested_field.uint64_value = number
            event(kind="done", action=name, target=target, ok=ok, seq=number)
            handle.succeed()
            return result

        return ActionServer(
            node,
            NestedMessage,
            f"/robot/{name}",
            execute,
            goal_callback=on_goal,
            cancel_callback=on_cancel,
            callback_group=group,
        )

    stop = threading.Event()
    servers = [make(name) for name in args.actions.split(",")]

    def answer(request: object, response: object) -> object:
        event(kind="ask", text=request.string_value, answer=args.answer)
        response.string_value = args.answer
        return response

    node.create_service(BasicTypes, "ask", answer, callback_group=group)
    node.create_subscription(
        String, "say", lambda m: event(kind="say", text=m.data), 10, callback_group=group
    )
    publish()
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    spin = threading.Thread(target=executor.spin, daemon=True)
    spin.start()
    event(kind="ready", servers=len(servers))
    parent = os.getppid()
    while not stop.wait(0.2):
        if os.getppid() != parent:  # the test run is gone: so is its robot
            break
    time.sleep(0.2)  # the aborted goals' results go out
    executor.shutdown(timeout_sec=1.0)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
