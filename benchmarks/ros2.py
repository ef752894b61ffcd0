"""bt_raider over real ROS 2: discovery, goal round trips, ticks while spinning, lost robots.

Printed:

* **discovery** (s): from starting the demo's robot process (``ros2_robot``) to this process
  having its first scene, every action server and the question service;
* **goal round trip** (p50 / p99 / max, ms): ``move_to`` goals on the robot's action server,
  from ``start`` to ``poll`` saying SUCCEEDED, which includes waiting for the scene showing it;
* **tick time while spinning** (p50 / p99 / max, ms): a tree of ActionBehaviours sending
  those goals, ticked every 5 ms while the node spins on its thread;
* **kill to failure** (s): a goal on a slow server (tests/ros2/robot_node.py), the server
  killed by SIGTERM or SIGKILL, until ``poll`` reports FAILED with its reason;
* **python start** (ms): ``python -c pass`` in this venv, with the wheels' start-up hook (it
  re-starts the interpreter to set the library path) and with it skipped;
* **demo wall time** (s): ``bt-raider demo medicine-delivery --no-memory``, in-process vs
  ``--ros2`` (median of ``--demo-runs``).

``--repeat N`` instead runs ``pytest tests/ros2 -m ros2`` N times in a row (each bounded by
``--repeat-timeout``) and prints each run's counts, the failed tests and the total: the issue's
"20 repeated runs with 0 failures".

Run: ``python3 benchmarks/ros2.py`` in a venv with ``bt_raider[pddl,ros2-interfaces]``.
Every process it starts runs with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a domain of
its own (:mod:`bt_raider.ros2.env`).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import py_trees

from bt_raider.robot.actions import ActionBehaviour, ActionState
from bt_raider.ros2 import env, interfaces
from bt_raider.ros2.node import Spinner
from bt_raider.ros2.robot import RosAction, RosRobot
from bt_raider.ros2.scene import SceneTopic

ROOT = Path(__file__).resolve().parents[1]
ROBOT_NODE = ROOT / "tests" / "ros2" / "robot_node.py"
PLACES = ("home", "user_position")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(name: str, values: list[float], unit: str = "ms", scale: float = 1000.0) -> str:
    v = [x * scale for x in values]
    return (
        f"{name:<28} p50 {pct(v, 0.5):8.2f}  p99 {pct(v, 0.99):8.2f}  max {max(v):8.2f} {unit}"
        f"  (n={len(v)})"
    )


def demo_robot(prefix: Path, domain: int) -> subprocess.Popen[bytes]:
    module = "bt_raider.examples.medicine_delivery.ros2_robot"
    return subprocess.Popen(
        [sys.executable, "-m", module, "--prefix", str(prefix)],
        env=env.local_env(domain),
        stdout=subprocess.DEVNULL,
    )


def over_the_demo_robot(prefix: Path, goals: int, tick_seconds: float) -> None:
    interfaces.load(prefix)
    with env.domain() as domain:
        t0 = time.monotonic()
        proc = demo_robot(prefix, domain)
        spinner = Spinner("bench_tree", domain_id=domain)
        try:
            scene = SceneTopic(spinner)
            robot = RosRobot(spinner, interfaces.act_actions(["move_to"]), scene)
            spinner.start()
            if not scene.wait(1, 60) or robot.wait_for_servers(60):
                raise SystemExit("the robot process did not come up in 60 s")
            print(f"{'discovery':<28} {time.monotonic() - t0:8.2f} s (process start to connected)")
            trips = []
            for i in range(goals):
                start = time.perf_counter()
                handle = robot.start("move_to", [PLACES[i % 2]])
                while robot.poll(handle).state is ActionState.RUNNING:
                    time.sleep(0.0005)
                assert robot.poll(handle).state is ActionState.SUCCEEDED, robot.poll(handle)
                trips.append(time.perf_counter() - start)
            print(line("goal round trip", trips))
            ticks, round_trips = [], 0
            steps = [ActionBehaviour("move_to", [p], robot) for p in PLACES]
            there_and_back = py_trees.composites.Sequence("to and fro", memory=True, children=steps)
            root = py_trees.decorators.Repeat("again", there_and_back, num_success=-1)
            tree = py_trees.trees.BehaviourTree(root)
            end = time.monotonic() + tick_seconds
            while time.monotonic() < end and root.status is not py_trees.common.Status.FAILURE:
                start = time.perf_counter()
                tree.tick()
                ticks.append(time.perf_counter() - start)
                round_trips += there_and_back.status is py_trees.common.Status.SUCCESS
                time.sleep(0.005)
            print(line("tick while spinning", ticks) + f"  ({round_trips} there and back)")
        finally:
            spinner.close()
            proc.terminate()
            proc.wait(10)


def kill_to_failure(runs: int) -> None:
    from test_msgs.action import NestedMessage

    scene = {"agent": {"position": {"x": 0, "y": 0.9, "z": 0}}, "objects": [{"objectId": "a"}]}

    def goal(_args: list[object], _scene: object) -> object:
        return NestedMessage.Goal()

    for sig in (signal.SIGTERM, signal.SIGKILL):
        times = []
        for _ in range(runs):
            with env.domain() as domain, tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / "s.json").write_text(json.dumps(scene))
                events = Path(tmp) / "e.jsonl"
                proc = subprocess.Popen(
                    [sys.executable, str(ROBOT_NODE), "--scene", f"{tmp}/s.json"]
                    + ["--events", str(events), "--slow", "60", "--actions", "pick"],
                    env=env.local_env(domain),
                )
                spinner = Spinner("bench_kill", domain_id=domain)
                try:
                    robot = RosRobot(
                        spinner, {"pick": RosAction(NestedMessage, "/robot/pick", goal)}
                    )
                    spinner.start()
                    if robot.wait_for_servers(60):
                        raise SystemExit("the slow robot did not come up in 60 s")
                    handle = robot.start("pick", ["a"])
                    deadline = time.monotonic() + 20
                    while '"goal"' not in (events.read_text() if events.exists() else ""):
                        if time.monotonic() > deadline:
                            raise SystemExit("the slow robot never started the goal")
                        time.sleep(0.01)
                    proc.send_signal(sig)
                    killed = time.perf_counter()
                    while robot.poll(handle).state is ActionState.RUNNING:
                        if time.perf_counter() - killed > 30:
                            raise SystemExit("no failure 30 s after the kill")
                        time.sleep(0.005)
                    times.append(time.perf_counter() - killed)
                finally:
                    spinner.close()
                    proc.kill()
                    proc.wait(10)
        print(line(f"kill to failure ({sig.name})", times, "s", 1.0))


def demo_wall(runs: int) -> None:
    if runs < 1:
        return
    for label, extra in (("in-process", []), ("--ros2", ["--ros2"])):
        walls = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as out:
                cmd = [sys.executable, "-m", "bt_raider.cli", "demo", "medicine-delivery"]
                cmd += ["--no-memory", "--out", out, *extra]
                start = time.perf_counter()
                run = subprocess.run(cmd, env=env.local_env(), capture_output=True, timeout=300)
                walls.append(time.perf_counter() - start)
                if run.returncode != 0:
                    raise SystemExit(f"the demo {label} failed:\n{run.stdout.decode()[-2000:]}")
        print(f"{'demo wall ' + label:<28} median {statistics.median(walls):6.2f} s  (n={runs})")


def hook_cost(runs: int) -> None:
    """The wheels' start-up hook: ``python -c pass`` with it and with it skipped."""
    import os

    base = {k: v for k, v in os.environ.items() if k != "_ROS_WHEELS_BOOTSTRAP_COMPLETE"}
    for label, env_ in (
        ("hook", base),
        ("hook skipped", {**base, "_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1"}),
    ):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env_, check=True)
            times.append(time.perf_counter() - start)
        print(line(f"python start ({label})", times))


def repeat(runs: int, timeout: float) -> int:
    """``pytest tests/ros2 -m ros2`` ``runs`` times; the number of runs that did not pass."""
    import re

    cmd = [sys.executable, "-m", "pytest", "tests/ros2", "-m", "ros2", "-rf"]
    cmd += ["-p", "no:cacheprovider"]
    bad = 0
    for i in range(1, runs + 1):
        start = time.perf_counter()
        try:
            run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
            out, code = run.stdout, run.returncode
        except subprocess.TimeoutExpired as exc:
            out, code = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else "", -1
            out += f"\ntimed out after {timeout:g} s"
        summary = next((ln for ln in reversed(out.splitlines()) if " in " in ln), "no summary")
        failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.MULTILINE)
        bad += code != 0
        print(f"run {i:2d}/{runs}  {time.perf_counter() - start:6.0f} s  rc {code}  {summary}")
        for name in failed:
            print(f"        failed: {name}")
        sys.stdout.flush()
    print(f"{runs} runs of pytest tests/ros2 -m ros2: {runs - bad} passed, {bad} with failures")
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=200)
    parser.add_argument("--tick-seconds", type=float, default=5.0)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--demo-runs", type=int, default=3)
    parser.add_argument("--starts", type=int, default=30, help="python starts per hook setting")
    parser.add_argument("--repeat", type=int, default=0, help="only run the ROS 2 tests N times")
    parser.add_argument("--repeat-timeout", type=float, default=900.0, help="seconds per run")
    args = parser.parse_args()
    if args.repeat:
        raise SystemExit(1 if repeat(args.repeat, args.repeat_timeout) else 0)
    env.apply_local()
    hook_cost(args.starts)
    prefix = interfaces.built() or interfaces.build(echo=print)
    over_the_demo_robot(prefix, args.goals, args.tick_seconds)
    kill_to_failure(args.kills)
    demo_wall(args.demo_runs)


if __name__ == "__main__":
    main()
