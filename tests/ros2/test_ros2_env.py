"""Traffic stays local; a plain guard never imports rclpy; the spinner survives its callbacks.

The first tests need no ROS 2 (they run in every suite); those marked ``ros2`` make nodes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bt_raider.errors import UsageError
from bt_raider.ros2 import env
from bt_raider.testing.scenes import KITCHEN_PATH

ROOT = Path(__file__).resolve().parents[2]


def test_local_env_keeps_discovery_on_this_machine_with_a_short_lease():
    got = env.local_env(7, {"ROS_STATIC_PEERS": "10.0.0.9", "PATH": "/bin"})

    assert got["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert got["ROS_DOMAIN_ID"] == "7" and "ROS_STATIC_PEERS" not in got
    assert "<sec>1</sec>" in Path(got["FASTDDS_DEFAULT_PROFILES_FILE"]).read_text()
    assert env.check_local(got) == 7


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "ROS_DOMAIN_ID": "3"},
        {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
        {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_DOMAIN_ID": "300"},
        {
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
            "ROS_DOMAIN_ID": "1",
            "ROS_STATIC_PEERS": "x",
        },
    ],
)
def test_a_node_is_refused_unless_traffic_stays_local_in_its_own_domain(bad):
    with pytest.raises(UsageError, match="ROS_"):
        env.check_local(bad)


@pytest.mark.ros2  # meaningful where rclpy is installed: the ROS 2 venv of .ci/run
def test_check_and_a_plain_guard_never_import_rclpy():
    code = textwrap.dedent(
        f"""
        import sys
        import py_trees
        import bt_raider
        from bt_raider import RaiderGuard, SymbolicReasoner
        from bt_raider.cli import main
        assert main(["check", "--scene", {str(KITCHEN_PATH)!r}, "pick the apple"]) in (0, 1)
        guard = RaiderGuard(py_trees.behaviours.Success("s"), "pick the apple",
                            SymbolicReasoner(), scene={str(KITCHEN_PATH)!r})
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("rclpy", "rcl_interfaces"))
        assert not loaded, loaded
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr[-2000:]


@pytest.mark.ros2
def test_the_spinner_survives_a_callback_error_and_makes_entities_while_spinning(ros_node):
    from std_msgs.msg import String

    from bt_raider.ros2.scene import latched_qos

    spinner = ros_node("survivor")
    got = []

    def callback(msg):
        if msg.data == "boom":
            raise RuntimeError("a bad callback")
        got.append(msg.data)

    spinner.start()
    # Made while the executor spins (rclpy issue 1589): on the spinning thread, between turns.
    pub = spinner.call(lambda: spinner.node.create_publisher(String, "chatter", latched_qos()))
    spinner.call(lambda: spinner.node.create_subscription(String, "chatter", callback, 10))
    deadline = time.monotonic() + 10
    pub.publish(String(data="boom"))
    while not spinner.errors and time.monotonic() < deadline:
        time.sleep(0.02)
    pub.publish(String(data="after"))
    while not got and time.monotonic() < deadline:
        time.sleep(0.02)

    assert spinner.spinning
    assert "a bad callback" in spinner.errors[0] and got == ["after"]


@pytest.mark.ros2
def test_a_bad_scene_message_is_refused_until_a_good_one_comes(ros_node):
    from std_msgs.msg import String

    from bt_raider.errors import SceneError
    from bt_raider.ros2.scene import SceneTopic, latched_qos

    spinner = ros_node("scenes")
    topic = SceneTopic(spinner, "scene_under_test")
    pub = spinner.call(
        lambda: spinner.node.create_publisher(String, "scene_under_test", latched_qos())
    )
    spinner.start()
    with pytest.raises(SceneError, match="no scene"):
        topic()
    pub.publish(String(data='{"seq": 1, "scene": {"objects": []}}'))
    assert topic.wait(1, timeout=10)
    pub.publish(String(data="{not json"))
    deadline = time.monotonic() + 10
    while not topic.errors and time.monotonic() < deadline:
        time.sleep(0.02)
    with pytest.raises(SceneError, match="refused"):
        topic()  # fail closed: the last word from the robot could not be read
    pub.publish(String(data='{"seq": 2, "scene": {"objects": [], "sceneName": "x"}}'))
    assert topic.wait(2, timeout=10)
    assert topic()["sceneName"] == "x"


@pytest.mark.ros2
def test_a_second_suite_runs_at_the_same_time_in_its_own_domain(tmp_path):
    """Two pytest runs of the ROS 2 tests at once: each passes (own domains, no cross-talk)."""
    test = "tests/ros2/test_ros2_robot.py::test_the_cup_question_is_asked_and_answered_over_ros"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        test,
        "-n",
        "0",  # one process per suite: the two suites, not their workers, are what runs at once
        "-rA",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:warnings",
    ]
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    runs = [
        subprocess.Popen(cmd, cwd=ROOT, env=child_env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = []
    try:
        for run in runs:
            outputs.append(run.communicate(timeout=240)[0])
    finally:
        for run in runs:
            run.kill()
    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output[-3000:]
        assert f"PASSED {test}" in output, output[-3000:]


def test_the_ros2_pages_examples_are_python():
    """docs/ros2.md's examples need a robot's own types (```py: not run by test_readme); they
    must at least be Python that parses."""
    import ast
    import re

    text = (ROOT / "docs" / "ros2.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```py\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert len(blocks) >= 3
    for block in blocks:
        ast.parse(block)


hypothesis = pytest.importorskip("hypothesis", reason="Hypothesis comes with the test extra")
st = hypothesis.strategies
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@hypothesis.given(
    st.one_of(
        st.text(max_size=40),
        JSON.map(lambda v: __import__("json").dumps(v)),
        st.fixed_dictionaries({"seq": JSON, "scene": JSON}).map(
            lambda v: __import__("json").dumps(v)
        ),
    )
)
@hypothesis.settings(max_examples=300, deadline=None)
def test_a_scene_message_is_read_or_refused_never_guessed(text):
    from types import SimpleNamespace

    from bt_raider.errors import SceneError
    from bt_raider.ros2.scene import decode_json

    try:
        got = decode_json(SimpleNamespace(data=text))
    except SceneError:
        return  # refused, with a reason
    assert isinstance(got.scene, dict)
    assert got.seq is None or (isinstance(got.seq, int) and got.seq >= 0)


@hypothesis.given(
    st.dictionaries(
        st.sampled_from(["ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID", "ROS_STATIC_PEERS"]),
        st.text(max_size=10) | st.sampled_from(["LOCALHOST", "SUBNET", "0", "101", "102", "-1"]),
    )
)
def test_check_local_passes_only_localhost_and_a_domain(environ):
    try:
        domain = env.check_local(environ)
    except UsageError:
        return
    assert environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert not environ.get("ROS_STATIC_PEERS") and 0 <= domain <= 101
