"""Our interface package, built from source, and ``bt-raider demo medicine-delivery --ros2``.

Skipped with the reason where cmake, a compiler or the ament/rosidl pieces are missing.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from bt_raider.ros2 import env

pytestmark = pytest.mark.ros2


def demo(tmp_path, *options, domain=None):
    """Start the demo command on localhost (it picks its own domain for the robot)."""
    child_env = env.local_env(domain)
    return subprocess.Popen(
        [sys.executable, "-m", "bt_raider.cli", "demo", "medicine-delivery", "--ros2"]
        + ["--no-memory", "--out", str(tmp_path / "out"), *options],
        env=child_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def robot_pid(output):
    match = re.search(r"ros2: robot process pid (\d+)", output)
    assert match, output
    return int(match.group(1))


def gone(pid, within=10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_our_types_carry_an_action_a_question_and_a_scene(interfaces_prefix, ros_node):
    from bt_raider.ros2 import interfaces

    interfaces.load(interfaces_prefix)
    from bt_raider_interfaces.action import Act
    from bt_raider_interfaces.msg import SceneStamped
    from bt_raider_interfaces.srv import Ask

    from bt_raider.robot.actions import ActionState
    from bt_raider.robot.human import ScriptedHuman
    from bt_raider.ros2.person import RosHuman, serve_person
    from bt_raider.ros2.robot import RosRobot

    server, client = ros_node("robot_side"), ros_node("tree_side")
    ran = []

    def execute(action, args):
        ran.append((action, args))
        return action == "pick", f"{action} {' '.join(args)}", 0

    interfaces.serve_actions(server, ["pick", "open"], execute)
    person = ScriptedHuman({r"which": "the red one"})
    serve_person(server, person, Ask)
    server.start()
    robot = RosRobot(client, interfaces.act_actions(["pick", "open"]))
    human = RosHuman(client, Ask)
    client.start()
    assert robot.wait_for_servers(20) == [] and human.wait_for_service(20)

    handles = [robot.start("pick", ["Cup|1"]), robot.start("open", ["Fridge|2"])]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
        robot.poll(h).state is ActionState.RUNNING for h in handles
    ):
        time.sleep(0.02)

    picked, opened = (robot.poll(h) for h in handles)
    assert picked.state is ActionState.SUCCEEDED and picked.message == "pick Cup|1"
    assert opened.state is ActionState.FAILED and "aborted: open Fridge|2" in opened.message
    assert sorted(ran) == [("open", ["Fridge|2"]), ("pick", ["Cup|1"])]
    assert human.ask("which cup?") == "the red one"
    assert human.wait_for("the door is open") is True
    assert [e.kind for e in person.transcript] == ["ask", "wait"]
    assert SceneStamped(seq=3, json="{}").seq == 3
    assert Act.Goal(action="pick", args=["a"]).args == ["a"]


def test_the_demo_over_ros2_finds_and_recovers_the_five_issues(interfaces_prefix, tmp_path):
    proc = demo(tmp_path)
    try:
        output, _ = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == 0, output
    assert "medicine handed over to Adriana: yes" in output
    summary = output[output.index("summary:") :]
    for issue in ("obstructed", "ambiguity", "out_of_reach", "not_present", "wrong_state"):
        assert f"{issue}" in summary, summary
    assert summary.count("SUCCESS") == 4
    assert gone(robot_pid(output), within=1.0), "the robot process outlived the demo"
    trace = json.loads((tmp_path / "out" / "trace.json").read_text())
    assert trace["outcome"]["delivered"] is True
    kinds = {e["kind"] for t in trace["ticks"] for e in t.get("events", [])}
    assert {"verdict", "recovery", "ask", "action"} <= kinds


def test_the_demo_over_ros2_ends_both_processes_on_failure(interfaces_prefix, tmp_path):
    proc = demo(tmp_path, "--scenario", "no-medicine")
    try:
        output, _ = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == 1, output
    assert "medicine handed over to Adriana: no" in output
    assert gone(robot_pid(output), within=1.0)


def test_ctrl_c_ends_the_demo_and_its_robot_process(interfaces_prefix, tmp_path):
    proc = demo(tmp_path)
    lines = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "ros2: robot process pid" in line or not line:
                break
        pid = robot_pid("".join(lines))
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends the command's process group
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode != 0
    assert gone(pid, within=10.0), "the robot process outlived Ctrl-C"
