"""Fixtures for real ROS 2 nodes: a domain of its own per test, localhost only, robots by PID.

Tests marked ``ros2`` skip (with the reason) where rclpy is missing; those that need our
interface package also where cmake or a compiler is. Every node starts only after
:func:`bt_raider.ros2.env.check_local` passed: ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and
the test's own ``ROS_DOMAIN_ID`` (from ``domain_coordinator``, so pytest-xdist workers and a
second suite never share one). Robot processes are stopped by PID at the test's end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bt_raider.errors import installed

HERE = Path(__file__).parent
ROBOT_NODE = HERE / "robot_node.py"
#: Seconds every wait of these tests may take at most.
WAIT_S = 20.0


def pytest_collection_modifyitems(config, items):
    if installed("rclpy"):
        return
    skip = pytest.mark.skip(reason="rclpy is not installed: pip install 'bt_raider[ros2]'")
    for item in items:
        if item.get_closest_marker("ros2") is not None:
            item.add_marker(skip)


@pytest.fixture
def ros_domain(monkeypatch):
    """This test's own ROS 2 domain, set (localhost only, short lease) in this process."""
    from bt_raider.ros2 import env

    with env.domain() as number:
        for key, value in env.local_env(number).items():
            if os.environ.get(key) != value:
                monkeypatch.setenv(key, value)
        monkeypatch.delenv("ROS_STATIC_PEERS", raising=False)
        yield number


@pytest.fixture
def ros_node(ros_domain):
    """Make started :class:`Spinner` nodes in this process (refused unless traffic is local)."""
    from bt_raider.ros2 import env
    from bt_raider.ros2.node import Spinner

    made = []

    def make(name: str = "test_tree") -> Spinner:
        assert env.check_local() == ros_domain
        spinner = Spinner(name, domain_id=ros_domain)
        made.append(spinner)
        return spinner

    yield make
    for spinner in made:
        spinner.close()


class RobotProcess:
    """A robot process of the test, its events file, and how to wait on it."""

    def __init__(self, proc: subprocess.Popen, events: Path) -> None:
        self.proc = proc
        self.events_path = events

    @property
    def pid(self) -> int:
        return self.proc.pid

    def events(self, kind: str | None = None) -> list[dict]:
        if not self.events_path.exists():
            return []
        lines = self.events_path.read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        return [r for r in rows if kind is None or r["kind"] == kind]

    def wait_event(self, kind: str, timeout: float = WAIT_S) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.events(kind)
            if found:
                return found[-1]
            if self.proc.poll() is not None:
                raise AssertionError(f"the robot process ended ({self.proc.returncode})")
            time.sleep(0.05)
        raise AssertionError(f"no {kind!r} event from the robot within {timeout:g} s")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@pytest.fixture
def robot_process(ros_domain, tmp_path):
    """Start tests/ros2/robot_node.py with a scene dict and options; stopped by PID after."""
    from bt_raider.ros2 import env

    started: list[RobotProcess] = []

    def start(scene: dict, *options: str) -> RobotProcess:
        n = len(started)
        scene_file = tmp_path / f"robot{n}_scene.json"
        scene_file.write_text(json.dumps(scene))
        events = tmp_path / f"robot{n}_events.jsonl"
        child_env = env.local_env(ros_domain)
        env.check_local(child_env)  # refuse a node whose traffic could leave the machine
        proc = subprocess.Popen(
            [sys.executable, str(ROBOT_NODE), "--scene", str(scene_file), "--events", str(events)]
            + list(options),
            env=child_env,
            stdin=subprocess.DEVNULL,
        )
        robot = RobotProcess(proc, events)
        started.append(robot)
        robot.wait_event("ready")
        return robot

    yield start
    for robot in started:
        robot.stop(signal.SIGKILL if robot.proc.poll() is None else signal.SIGTERM)


@pytest.fixture(scope="session")
def interfaces_prefix():
    """bt_raider_interfaces built once (skip where cmake, a compiler or the pieces are missing).

    Built into ``$BT_RAIDER_ROS2_CACHE`` (``.ci/run`` builds it there first) or the user's
    cache, not the suite's per-run cache: a build takes a minute or two.
    """
    if not installed("rclpy"):
        pytest.skip("rclpy is not installed: pip install 'bt_raider[ros2]'")
    from bt_raider.ros2 import interfaces

    missing = interfaces.missing_tools()
    if missing:
        pytest.skip(f"cannot build bt_raider_interfaces here: missing {', '.join(missing)}")
    cache = Path(os.environ.get("BT_RAIDER_ROS2_CACHE") or Path.home() / ".cache" / "bt_raider")
    os.environ["BT_RAIDER_ROS2_CACHE"] = str(cache)  # the demo's process finds the same build
    return interfaces.build(cache)
