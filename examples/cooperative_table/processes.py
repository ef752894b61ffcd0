"""The cooperative-table demo with every robot in its own process, coordinating over Zenoh.

``run_processes(n, seed, noisy)`` starts one **world** process (the shared simulation, see
:mod:`.world_server`) and ``n`` **robot** processes on 127.0.0.1. Each robot has its own
behaviour tree, its own REVECA memory (what it perceived and heard) and, with ``memory_dir``,
its own CDR vector memory shared through :class:`~bt_raider.fleet.fleet_memory.FleetMemory`. The
robots talk only through :class:`~bt_raider.fleet.zenoh_bus.ZenohBus`: the start-up exchange and
sub-goal announcements are publications, validation requests are queries with a timeout.

The clock is the in-process episode's (robots take turns, one step each), so a healthy run
reaches the same result as :func:`~.episode.run_episode` with the same seed. Faults can be
injected per robot (``faults={"bob": "garbage"}``: answer validation requests with garbage,
``"oversized"``, ``"delay:SECONDS"``, ``"silent"``) and a robot can be killed at a step
(``kill={"bob": 3}``); every fault a robot meets is counted in its report.

Entry points (used by the runner; runnable by hand)::

    python -m bt_raider.examples.cooperative_table.processes world --seed 1 --robots 2 \\
        --team t1 --listen tcp/127.0.0.1:7501
    python -m bt_raider.examples.cooperative_table.processes robot --name alice --team t1 \\
        --listen tcp/127.0.0.1:7502 --connect tcp/127.0.0.1:7501
    python -m bt_raider.examples.cooperative_table.processes run --robots 4 --seed 1
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bt_raider.errors import CommunicationError, need
from bt_raider.examples.cooperative_table.policies import POLICIES
from bt_raider.examples.cooperative_table.world_server import WORLD_TIMEOUT
from bt_raider.examples.cooperative_table.world_server import main as world_main
from bt_raider.fleet.zenoh_config import DEFAULT_PREFIX, loopback_endpoint
from bt_raider.simulation.multirobot import (
    HORIZON,
    ROBOT_NAMES,
)

log = logging.getLogger("bt_raider.examples.processes")

#: Seconds every robot has to join before the episode starts (``--join-timeout``).
JOIN_TIMEOUT = 60.0
#: Extra seconds a robot waits for its collaborators, so the world names the missing one first.
JOIN_MARGIN = 5.0

#: The episode figures a multi-process run must reproduce from the in-process run of the same seed.
FIGURES = (
    "success",
    "steps",
    "travel",
    "false_plans",
    "messages",
    "characters",
    "commits",
    "requests",
)


# --------------------------------------------------------------------------- robot side


# --------------------------------------------------------------------------- the runner


def _run_keys(names: Sequence[str]) -> str:
    """A private folder (0700) with a key per robot (0600) and the keyring, for one run."""
    from bt_raider.fleet.signing import generate_keys

    folder = tempfile.mkdtemp(prefix="bt-raider-keys-")
    generate_keys(folder, names)
    return folder


def _python_module_cmd() -> list[str]:
    return [sys.executable, "-m", "bt_raider.examples.cooperative_table.processes"]


def _reader(
    proc: subprocess.Popen[str],
    sink: list[dict[str, Any]],
    on_event: Callable[[dict[str, Any]], object] | None = None,
) -> threading.Thread:
    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            sink.append(event)
            if on_event is not None:
                on_event(event)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def _tail(proc: subprocess.Popen[str], sink: deque[str]) -> threading.Thread:
    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            sink.append(line.rstrip())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t


def run_processes(
    n: int,
    seed: int,
    noisy: bool = False,
    *,
    policy: str = "reveca",
    dummies: int = 20,
    horizon: int = HORIZON,
    validation_timeout: float = 2.0,
    turn_timeout: float = 20.0,
    timeout: float = 120.0,
    faults: Mapping[str, str] | None = None,
    kill: Mapping[str, int] | None = None,
    absent: Sequence[str] = (),
    join_timeout: float = JOIN_TIMEOUT,
    memory_dir: str | Path | None = None,
    goal: str | None = None,
    team: str | None = None,
    signed: bool = True,
    keys: str | Path | None = None,
    on_started: Callable[[str, list[str]], object] | None = None,
) -> dict[str, Any]:
    """Run one episode with ``n`` robot processes and a world process on 127.0.0.1.

    Args:
        n: robots (2..6).
        seed: the episode's seed (the same as the in-process demo's).
        noisy: add ``dummies`` dummy objects.
        policy: a key of :data:`~bt_raider.examples.cooperative_table.policies.POLICIES`.
        horizon: step limit.
        validation_timeout: seconds a robot waits for a collaborator's answer.
        turn_timeout: seconds a robot may take for a turn before the world retires it.
        timeout: wall-clock limit for the whole run; every process is killed past it.
        faults: robot -> fault mode (``garbage``, ``oversized``, ``delay:S``, ``silent``).
        kill: robot -> step at which its process is killed (SIGKILL).
        absent: robots whose process is killed as soon as it starts, before it can join (a
            robot that crashes at start-up).
        join_timeout: seconds every robot has to join before the episode starts; past it the
            run ends with an error naming only the robot(s) that did not join.
        memory_dir: give each robot a CDR vector memory there, shared as a fleet memory.
        goal: goal template (chosen by the seed when None).
        team: the Zenoh team segment (unique per run by default).
        signed: every robot signs what it sends with its own key, made for this run in a
            private temporary folder, and drops what the team's keyring does not verify
            (:mod:`bt_raider.fleet.signing`); False: an unsigned fleet.
        keys: with ``signed``, a keys folder made by ``bt-raider fleet keys new`` to use
            instead (kept after the run).
        on_started: called with the team's key base and the robots' endpoints once every
            process is started; the world holds the first turn until it returns (a benchmark
            starts an intruder there, in place before anyone acts).

    Returns:
        The figures: those of the in-process demo (``success``, ``steps``, ``travel``,
        ``false_plans``, ``messages``, ``characters``, ``commits``, ``requests``) plus
        ``achieved`` (object -> robot), ``announced`` (robot -> objects), ``faults`` (robot ->
        kind -> count), ``faults_total``, ``retired``, ``killed``, ``reports`` and ``wall_s``.

    Raises:
        CommunicationError: a robot did not join within ``join_timeout`` (the message names
            it, and only it), the world failed, or the run exceeded ``timeout``.
        MissingDependencyError: the ``fleet`` extra (with ``memory_dir``: also ``memory``)
            is not installed.
    """
    if n not in range(2, len(ROBOT_NAMES) + 1):
        raise CommunicationError(f"processes must be 2..{len(ROBOT_NAMES)}, got {n!r}")
    if policy not in POLICIES:
        raise CommunicationError(
            f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}"
        )
    # Checked here, in one line, rather than as a traceback from every child process.
    need("fleet", "robot processes (--processes)")
    if memory_dir is not None:
        need("memory", "the robots' vector memories (--memory-dir)")
    faults = dict(faults or {})
    kill = dict(kill or {})
    names = list(ROBOT_NAMES[:n])
    from bt_raider.examples.cooperative_table.robot_process import parse_fault

    for spec in faults.values():
        parse_fault(spec)
    if not join_timeout > 0:
        raise CommunicationError(f"join timeout must be > 0 seconds, got {join_timeout!r}")
    for who in [*faults, *kill, *absent]:
        if who not in names:
            raise CommunicationError(
                f"no robot {who!r} in this run: expected one of {', '.join(names)}"
            )
    team = team or f"run{os.getpid()}x{uuid.uuid4().hex[:6]}"
    own_keys = signed and keys is None
    keys = (_run_keys(names) if own_keys else str(keys)) if signed else None
    world_ep = loopback_endpoint()
    robot_eps = {name: loopback_endpoint() for name in names}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.setdefault("RUST_LOG", "error")
    common = ["--team", team, "--prefix", DEFAULT_PREFIX]
    world_cmd = [
        *_python_module_cmd(),
        "world",
        *common,
        "--seed", str(seed),
        "--robots", str(n),
        "--horizon", str(horizon),
        "--dummies", str(dummies),
        "--turn-timeout", str(turn_timeout),
        "--ready-timeout", str(join_timeout),
        "--listen", world_ep,
    ]  # fmt: skip
    if noisy:
        world_cmd.append("--noisy")
    if on_started is not None:
        world_cmd.append("--hold")  # released on its stdin once on_started has returned
    if goal is not None:
        world_cmd += ["--goal", goal]
    started = time.monotonic()
    procs: dict[str, subprocess.Popen[str]] = {}
    events: dict[str, list[dict[str, Any]]] = {}
    stderr: dict[str, deque[str]] = {}
    readers: list[threading.Thread] = []
    killed: dict[str, int] = {}

    def on_world_event(event: dict[str, Any]) -> None:
        if event.get("event") != "step":
            return
        for who, at in kill.items():
            if event["step"] >= at and who not in killed and who in procs:
                try:
                    procs[who].send_signal(signal.SIGKILL)
                    killed[who] = event["step"]
                except ProcessLookupError:
                    pass

    try:
        procs["world"] = subprocess.Popen(
            world_cmd,
            stdin=subprocess.PIPE if on_started is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        events["world"] = []
        stderr["world"] = deque(maxlen=40)
        readers.append(_reader(procs["world"], events["world"], on_world_event))
        readers.append(_tail(procs["world"], stderr["world"]))
        for i, name in enumerate(names):
            cmd = [
                *_python_module_cmd(),
                "robot",
                *common,
                "--name", name,
                "--policy", policy,
                "--validation-timeout", str(validation_timeout),
                # The world decides who is missing: robots wait a little longer than it does.
                "--join-timeout", str(join_timeout + JOIN_MARGIN),
                "--listen", robot_eps[name],
                "--connect", world_ep,
            ]  # fmt: skip
            for other in names[:i]:
                cmd += ["--connect", robot_eps[other]]
            if name in faults:
                cmd += ["--fault", faults[name]]
            if memory_dir is not None:
                cmd += ["--memory-dir", str(memory_dir)]
            if keys is not None:
                cmd += ["--keys", keys]
            procs[name] = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
            if name in absent:
                procs[name].kill()
                killed[name] = -1
            events[name] = []
            stderr[name] = deque(maxlen=40)
            readers.append(_reader(procs[name], events[name]))
            readers.append(_tail(procs[name], stderr[name]))
        if on_started is not None:
            on_started(f"{DEFAULT_PREFIX}/{team}", [world_ep, *robot_eps.values()])
            world_in = procs["world"].stdin
            assert world_in is not None  # opened above, with --hold
            try:
                world_in.write("go\n")
                world_in.close()
            except BrokenPipeError:
                pass  # the world has ended already; its events say why
        deadline = started + timeout
        try:
            procs["world"].wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise CommunicationError(f"the episode did not end within {timeout} s") from None
        for r in readers[:2]:
            r.join(timeout=2.0)  # the world's last words
        failed = next((e["error"] for e in events["world"] if e.get("event") == "error"), None)
        if failed is not None:
            # No episode without every robot: the others are stopped, not waited for.
            raise CommunicationError(f"the episode did not start: {failed}")
        for name in names:
            try:
                procs[name].wait(timeout=max(5.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass  # killed below; its report is missing
        for r in readers:
            r.join(timeout=2.0)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in procs.values():
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                pass
        if own_keys and keys is not None:
            shutil.rmtree(keys, ignore_errors=True)
    wall = time.monotonic() - started
    world = next((e["figures"] for e in events["world"] if e.get("event") == "world"), None)
    if world is None:
        tails = "\n".join(f"[{k}] {line}" for k, lines in stderr.items() for line in lines)
        raise CommunicationError(f"the world process ended without figures:\n{tails[-4000:]}")
    reports = {
        name: next((e for e in events[name] if e.get("event") == "report"), None) for name in names
    }
    done = {k: v for k, v in reports.items() if v is not None}
    start = next((e for e in events["world"] if e.get("event") == "start"), {})
    figures = {
        "seed": seed,
        "policy": policy,
        "noisy": noisy,
        "robots": n,
        "success": world["success"],
        "steps": world["steps"],
        "travel": world["travel"],
        "false_plans": sum(r.get("false_plans", 0) for r in done.values()),
        "messages": sum(r.get("messages", 0) for r in done.values()),
        "characters": sum(r.get("characters", 0) for r in done.values()),
        "commits": sum(r.get("commits", 0) for r in done.values()),
        "requests": sum(r.get("requests", 0) for r in done.values()),
        "achieved": world["achieved"],
        "goal": world["goal"],
        "goal_puts": world["goal_puts"],
        "announced": {k: r.get("announced", []) for k, r in done.items()},
        "faults": {k: r.get("faults", {}) for k, r in done.items()},
        "faults_total": sum(sum(r.get("faults", {}).values()) for r in done.values()),
        "unknown_policy": {k: r.get("unknown_policy", {}) for k, r in done.items()},
        "retired": world["retired"],
        "killed": killed,
        "errors": {k: r["error"] for k, r in done.items() if "error" in r},
        "rpc_calls": world["rpc_calls"],
        "reports": reports,
        "stderr": {k: list(v) for k, v in stderr.items() if v},
        "start": start,
        "team": team,
        "signed": signed,
        "wall_s": round(wall, 3),
        "episode_s": world["world_wall_s"],
    }
    if memory_dir is not None:
        figures["memory"] = {k: r.get("memory") for k, r in done.items()}
    return figures


# --------------------------------------------------------------------------- command line


def print_figures(figures: Mapping[str, Any], *, out: Any = None) -> None:
    """Print a run the way the in-process demo prints an episode, plus the network's faults."""
    out = out or sys.stdout
    start = figures.get("start") or {}
    policy = POLICIES[figures["policy"]]
    if start:
        print(f"goal: {start['goal']}", file=out)
    print(f"policy: {policy.name} ({policy.description})", file=out)
    if start:
        rooms = ", ".join(f"{n} in the {room}" for n, room in start["rooms"].items())
        extra = f" ({start['dummies']} dummies)" if figures["noisy"] else ""
        print(f"robots: {rooms}; {start['objects']} objects{extra}", file=out)
    print(
        f"processes: {figures['robots']} robots + 1 world, over Zenoh on 127.0.0.1 "
        f"(team {figures['team']}, {'signed' if figures['signed'] else 'UNSIGNED'})",
        file=out,
    )
    print(
        f"{'done' if figures['success'] else 'NOT done'} after {figures['steps']} steps; "
        f"travel {figures['travel']:.1f} m; false plans {figures['false_plans']}; "
        f"messages {figures['messages']} ({figures['characters']} characters; "
        f"{figures['requests']} validation requests)",
        file=out,
    )
    faults = {n: f for n, f in figures["faults"].items() if f}
    shown = "; ".join(
        f"{n}: " + ", ".join(f"{k} {v}" for k, v in f.items()) for n, f in faults.items()
    )
    print(f"network faults: {shown or 'none'}", file=out)
    for name, why in figures["retired"].items():
        print(f"retired: {name} ({why})", file=out)
    print(f"wall time: {figures['wall_s']:.2f} s (episode {figures['episode_s']:.2f} s)", file=out)


def run_demo(args: argparse.Namespace) -> int:
    """``bt-raider demo cooperative-table --processes N``: the demo with N robot processes."""
    figures = run_processes(
        args.processes,
        args.seed,
        args.noisy,
        policy=args.policy,
        join_timeout=getattr(args, "join_timeout", JOIN_TIMEOUT),
        dummies=getattr(args, "dummies", 20),
        horizon=getattr(args, "horizon", HORIZON),
        goal=getattr(args, "goal", None),
        memory_dir=getattr(args, "memory_dir", None),
        signed=not getattr(args, "unsigned", False),
    )
    print_figures(figures)
    return 0 if figures["success"] else 1


def _add_zenoh(p: argparse.ArgumentParser) -> None:
    p.add_argument("--team", required=True, help="Zenoh key segment shared by the run")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help="key prefix (default %(default)s)")
    p.add_argument("--listen", action="append", default=None, help="endpoint to listen on")
    p.add_argument("--connect", action="append", default=[], help="endpoint to connect to")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m bt_raider.examples.cooperative_table.processes``."""
    parser = argparse.ArgumentParser(
        prog="python -m bt_raider.examples.cooperative_table.processes",
        description="Multi-process cooperative-table demo over Zenoh",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("world", help="serve the shared simulation and run the clock")
    _add_zenoh(w)
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--robots", type=int, default=2)
    w.add_argument("--noisy", action="store_true")
    w.add_argument("--dummies", type=int, default=20)
    w.add_argument("--horizon", type=int, default=HORIZON)
    w.add_argument("--goal", default=None)
    w.add_argument("--turn-timeout", type=float, default=20.0)
    w.add_argument("--ready-timeout", type=float, default=JOIN_TIMEOUT, help="join timeout")
    w.add_argument("--setup-timeout", type=float, default=300.0, help="then, to be ready")
    w.add_argument("--hold", action="store_true", help="start the first turn on 'go' (stdin)")
    r = sub.add_parser("robot", help="one robot: its tree, memory and bus")
    _add_zenoh(r)
    r.add_argument("--name", required=True, choices=ROBOT_NAMES)
    r.add_argument("--policy", default="reveca", choices=sorted(POLICIES))
    r.add_argument("--validation-timeout", type=float, default=2.0)
    r.add_argument("--world-timeout", type=float, default=WORLD_TIMEOUT)
    r.add_argument("--join-timeout", type=float, default=JOIN_TIMEOUT + JOIN_MARGIN)
    r.add_argument("--fault", default=None, help="garbage | oversized | delay:SECONDS | silent")
    r.add_argument("--memory-dir", default=None, help="folder for this robot's CDR memory")
    r.add_argument("--keys", default=None, help="keys folder: sign with NAME.key, check keyring")
    r.add_argument("--verbose", action="store_true", help="log decisions on stderr")
    run = sub.add_parser("run", help="start a world and N robots and print the figures")
    run.add_argument("--robots", type=int, default=2)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--noisy", action="store_true")
    run.add_argument("--policy", default="reveca", choices=sorted(POLICIES))
    run.add_argument("--memory-dir", default=None)
    run.add_argument(
        "--join-timeout",
        type=float,
        default=JOIN_TIMEOUT,
        help="seconds every robot has to join (default %(default)s)",
    )
    run.add_argument("--unsigned", action="store_true", help="robots do not sign their messages")
    run.add_argument("--json", action="store_true", help="print every figure as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Start the world server, one robot, or a whole run (``world`` / ``robot`` / ``run``)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    if args.command == "world":
        return world_main(args)
    if args.command == "robot":
        # Imported here, where a robot runs: the world process needs none of the robot's
        # modules (its agent, tree and REVECA; 0.4 s of CPU, more than the world's own).
        from bt_raider.examples.cooperative_table.robot_process import robot_main

        return robot_main(args)
    figures = run_processes(
        args.robots,
        args.seed,
        args.noisy,
        policy=args.policy,
        memory_dir=args.memory_dir,
        join_timeout=args.join_timeout,
        signed=not args.unsigned,
    )
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_figures(figures)
    return 0 if figures["success"] else 1


if __name__ == "__main__":
    sys.exit(main())
