"""``bt-raider demo medicine-delivery --ros2``: the robot in another process, over ROS 2.

:func:`start` builds bt_raider's interface package (once, into the cache), reserves a ROS 2
domain, starts :mod:`~bt_raider.examples.medicine_delivery.ros2_robot` as a child process on
localhost only, and returns the robot, the person and a mirror of the world for
:func:`~bt_raider.examples.medicine_delivery.demo.run_scenario`; the guarded plan then runs
in this process exactly as in-process, but every action is a ROS 2 goal, every check reads
the scene from the topic, and every question goes over the service. The returned ``stop``
ends the child (SIGTERM, then SIGKILL after a bound) and the node, on success, failure and
Ctrl-C alike.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from bt_raider.errors import CommunicationError, need
from bt_raider.perception.scene import Scene
from bt_raider.ros2 import env, interfaces
from bt_raider.ros2.node import Spinner
from bt_raider.ros2.person import RosHuman
from bt_raider.ros2.robot import RosRobot
from bt_raider.ros2.scene import SceneTopic
from bt_raider.simulation.simworld import ACTIONS, ALIASES

#: Seconds the robot process has to come up (import, discovery, first scene).
START_TIMEOUT_S = 60.0
#: Seconds it has to end after SIGTERM before it is killed.
STOP_TIMEOUT_S = 5.0


class RemoteWorld:
    """The world as the scene topic shows it: what the demo's report and outcome read."""

    def __init__(self, topic: SceneTopic) -> None:
        self.topic = topic
        self._cached: tuple[int, Scene] | None = None

    def observe(self) -> Scene:
        """The latest scene (one Scene per sequence number)."""
        seq = self.topic.seq
        if self._cached is None or self._cached[0] != seq:
            self._cached = (seq, Scene(self.topic(), source=f"scene {seq} on ROS 2"))
        return self._cached[1]

    @property
    def scene(self) -> Scene:
        return self.observe()

    @property
    def log(self) -> list[dict[str, Any]]:
        """The robot world's log, as its latest scene message carried it."""
        message = self.topic.message
        return list(message.extra.get("log", [])) if message is not None else []

    def tick(self) -> None:
        """The world ticks in the robot's process."""


def _stop_child(proc: subprocess.Popen[bytes]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_TIMEOUT_S)
    return int(proc.returncode)


def start(
    variant: str = "default", *, echo: Callable[[str], Any] = print
) -> tuple[dict[str, Any], Callable[[], None]]:
    """Start the robot process and connect to it.

    Returns:
        ``(parts, stop)``: ``parts`` are ``world``, ``robot`` and ``human`` for
        ``run_scenario``; ``stop()`` ends the robot process and this side's node.

    Raises:
        MissingDependencyError: rclpy, or what building the interface package needs.
        CommunicationError: the robot process did not come up in time.
    """
    need("ros2", "--ros2")
    prefix = interfaces.built() or interfaces.build(echo=echo)
    interfaces.load(prefix)
    from bt_raider_interfaces.srv import Ask

    with contextlib.ExitStack() as stack:
        domain = stack.enter_context(env.domain())
        child_env = env.local_env(domain)
        module = "bt_raider.examples.medicine_delivery.ros2_robot"
        proc = subprocess.Popen(
            [sys.executable, "-m", module, "--prefix", str(prefix), "--scenario", variant],
            env=child_env,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches us; we stop the robot ourselves
        )
        stack.callback(_stop_child, proc)
        spinner = Spinner("medicine_delivery_tree", domain_id=domain)
        stack.callback(spinner.close)
        scene = SceneTopic(spinner)
        actions = interfaces.act_actions(ACTIONS)
        for alias, name in ALIASES.items():
            actions.setdefault(alias, actions[name])
        robot = RosRobot(spinner, actions, scene)
        human = RosHuman(spinner, Ask, scene=scene)
        spinner.start()
        t0 = time.monotonic()
        deadline = t0 + START_TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            if scene.seq >= 1 and not robot.wait_for_servers(0.1) and human.wait_for_service(0.1):
                break
            time.sleep(0.05)
        else:
            raise CommunicationError(
                f"the robot process (pid {proc.pid}) did not come up within "
                f"{START_TIMEOUT_S:g} s (exit status {proc.poll()})"
            )
        echo(
            f"ros2: robot process pid {proc.pid}, ROS_DOMAIN_ID={domain}, localhost only; "
            f"connected in {time.monotonic() - t0:.1f} s"
        )
        stopper = stack.pop_all()

    def stop() -> None:
        stopper.close()

    return {"world": RemoteWorld(scene), "robot": robot, "human": human}, stop


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (for tests of the clean end)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
