"""The medicine-delivery robot as a ROS 2 process (``bt-raider demo medicine-delivery --ros2``).

The simulated kitchen (a :class:`~bt_raider.simulation.simworld.SimWorld`) and Adriana live
here: each robot action is an action server (``bt_raider_interfaces/action/Act`` at
``/robot/NAME``), the scene goes out on ``scene`` after every change (numbered; the world's
log rides along for the demo's report), and Adriana answers on the ``ask`` service and hears
on ``say``. The guarded plan runs in the command's own process.

Run as ``python -m bt_raider.examples.medicine_delivery.ros2_robot --prefix PREFIX``, with the
environment of :func:`bt_raider.ros2.env.local_env` (it refuses to start otherwise). It ends
on SIGTERM or SIGINT, or when its parent process is gone.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bt_raider.errors import ActionFailed
from bt_raider.examples.medicine_delivery import scenario
from bt_raider.perception.scene import Scene
from bt_raider.ros2 import env, interfaces
from bt_raider.ros2.node import Spinner
from bt_raider.ros2.person import serve_person
from bt_raider.ros2.scene import ScenePublisher
from bt_raider.simulation.simworld import ACTIONS, SimWorld

#: The robot's actions served (the SimWorld's, under their canonical names).
SERVED = tuple(ACTIONS)


class KitchenRobot:
    """The world, Adriana and the scene publisher, behind one lock."""

    def __init__(self, spinner: Spinner, variant: str) -> None:
        spec = scenario.variant(variant)
        if variant == "default":
            self.world = SimWorld(Scene.load(scenario.SCENE))
        else:
            self.world = SimWorld(Scene(scenario.variant_scene(variant)))
        self.human = scenario.Adriana(self.world, spec.topics).scripted()
        self.lock = threading.Lock()
        self.scene = ScenePublisher(spinner)

    def publish(self) -> int:
        """Publish the scene as it is now (with the world's log); its number."""
        with self.lock:
            return self.scene.publish(self.world.observe().data, log=self.world.log)

    def execute(self, action: str, args: list[str]) -> tuple[bool, str, int]:
        try:
            message, ok = str(self.world.execute(action, args)), True
        except ActionFailed as exc:
            message, ok = str(exc), False
        self.world.tick()
        return ok, message, self.publish()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo's robot as a ROS 2 process until it is stopped; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", required=True, help="bt_raider_interfaces install prefix")
    parser.add_argument("--scenario", default="default", choices=tuple(scenario.VARIANTS))
    args = parser.parse_args(argv)
    env.check_local()  # never a node whose traffic could leave the machine
    interfaces.load(Path(args.prefix))
    from bt_raider_interfaces.srv import Ask

    parent = os.getppid()
    spinner = Spinner("medicine_delivery_robot", localhost=False)
    kitchen = KitchenRobot(spinner, args.scenario)

    class Heard:
        """Adriana; each thing she hears or answers is followed by the scene it changed."""

        def ask(self, question: str) -> str:
            return str(kitchen.human.ask(question))

        def say(self, text: str) -> None:
            kitchen.human.say(text)
            kitchen.publish()

        def wait_for(self, event: str) -> bool:
            return bool(kitchen.human.wait_for(event))

    interfaces.serve_actions(spinner, SERVED, kitchen.execute)
    serve_person(spinner, Heard(), Ask, scene_seq=kitchen.publish)
    kitchen.publish()
    stop = threading.Event()

    def on_signal(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    spinner.start()
    print("robot ready", flush=True)
    while not stop.wait(0.2):
        if os.getppid() != parent or not spinner.spinning:
            break
    spinner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
