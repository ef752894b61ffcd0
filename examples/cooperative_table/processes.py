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
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bt_raider.cooperation.messaging import Message, MessageKind
from bt_raider.cooperation.observations import SubGoal
from bt_raider.cooperation.validator import ReobservingValidator
from bt_raider.errors import ActionFailed, CommunicationError
from bt_raider.examples.cooperative_table.cooperative_agent import POLICIES, CooperativeAgent
from bt_raider.examples.cooperative_table.episode import Episode
from bt_raider.fleet.zenoh_bus import ZenohBus, direct_callback
from bt_raider.fleet.zenoh_config import DEFAULT_PREFIX, loopback_endpoint
from bt_raider.simulation.multirobot import (
    HORIZON,
    ROBOT_NAMES,
    GoalSpec,
    Observation,
    RobotView,
    ThingView,
    default_house,
)

log = logging.getLogger("bt_raider.examples.processes")

#: Seconds a world query may take before the world is taken as gone.
WORLD_TIMEOUT = 10.0
#: Seconds a robot waits for its collaborators' broadcasts before its turn.
BROADCAST_WAIT = 5.0
#: Seconds a robot waits, at the end, for the fleet records its collaborators published.
MEMORY_SYNC_WAIT = 15.0
#: Fault modes a robot process can be started with (fault injection for tests).
FAULT_MODES = ("garbage", "oversized", "delay", "silent")
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


class WorldGone(CommunicationError):
    """The world process does not answer."""


class RemoteWorld:
    """What a robot may ask of the shared world, over Zenoh (duck-types ``MultiRobotSim``).

    It offers exactly what :class:`~.agent.CooperativeAgent` uses: the goal, the (public) map,
    the robot's own observation, its own actions, and the names of things it handles. The
    robot's action state only changes through its own calls and the world's step at the end of
    its turn, so it is cached between the two.
    """

    def __init__(
        self, session: Any, base: str, name: str, *, timeout: float = WORLD_TIMEOUT
    ) -> None:
        self.session = session
        self.key = f"{base}/world/rpc"
        self.name = name
        self.timeout = timeout
        self.calls = 0
        setup = self._call("setup")
        self.robots: dict[str, None] = dict.fromkeys(setup["robots"])
        g = setup["goal"]
        self.goal = GoalSpec(tuple(g["objects"]), g["location"], g["location_id"], g["relation"])
        self.house = default_house()
        self.horizon = int(setup["horizon"])
        self._location = setup["location"]
        self._state: dict[str, Any] = {
            "status": ["idle", ""],
            "running": False,
            "busy": False,
            "step": 0,
        }
        self.things = _RemoteThings(self)
        #: The turn being played (the world only advances a robot in its own turn).
        self.turn_seq = 0
        #: Set when the episode has ended: the world may be gone, nothing is sent any more.
        self.detached = False

    def _call(self, op: str, **args: Any) -> Any:
        payload = json.dumps({"op": op, "robot": self.name, **args})
        self.calls += 1
        replies = list(self.session.get(self.key, payload=payload, timeout=self.timeout))
        oks = [r.ok for r in replies if r.ok is not None]
        if not oks:
            raise WorldGone(f"the world did not answer {op} within {self.timeout} s")
        reply = json.loads(oks[0].payload.to_string())
        if "error" in reply:
            if reply.get("type") == "ActionFailed":
                raise ActionFailed(reply["error"])
            raise CommunicationError(f"world refused {op}: {reply['error']}")
        return reply["ok"]

    # -- the turn's state

    def set_state(self, state: Mapping[str, Any]) -> None:
        self._state = dict(state)

    @property
    def step(self) -> int:
        return int(self._state["step"])

    def status(self, robot: str) -> tuple[str, str]:
        self._mine(robot)
        state, message = self._state["status"]
        return (state, message)

    def running(self, robot: str) -> bool:
        self._mine(robot)
        return bool(self._state["running"])

    def busy(self, robot: str) -> bool:
        self._mine(robot)
        return bool(self._state["busy"])

    def _mine(self, robot: str) -> None:
        if robot != self.name:
            raise NotMine(f"{self.name} cannot ask about {robot}'s actions")

    # -- actions

    def begin(self, robot: str, action: str, args: Sequence[object] = ()) -> None:
        self._mine(robot)
        self.set_state(self._call("begin", action=action, args=[str(a) for a in args]))

    def cancel(self, robot: str) -> None:
        self._mine(robot)
        if self.detached:
            return  # the episode is over: the world has nothing left to cancel
        self.set_state(self._call("cancel"))

    def advance(self, robot: str) -> None:
        """One step of my action (the world runs it, in my turn)."""
        self._mine(robot)
        self.set_state(self._call("advance", seq=self.turn_seq))

    def spend(self, robot: str, steps: int) -> None:
        self._mine(robot)
        self.set_state(self._call("spend", steps=int(steps)))

    # -- perception

    def observe(self, robot: str) -> Observation:
        self._mine(robot)
        o = self._call("observe")
        return Observation(
            step=o["step"],
            robot=o["robot"],
            room=o["room"],
            position=tuple(o["position"]),
            held=tuple(tuple(h) for h in o["held"]),
            things=tuple(
                ThingView(
                    **{
                        **t,
                        "position": tuple(t["position"]),
                        "states": tuple(t["states"]),
                        "actions": tuple(t["actions"]),
                        "holds": tuple(t["holds"]),
                    }
                )
                for t in o["things"]
            ),
            robots=tuple(
                RobotView(
                    r["name"], r["room"], tuple(r["position"]), tuple(tuple(h) for h in r["held"])
                )
                for r in o["robots"]
            ),
        )

    def thing(self, thing_id: str) -> SimpleNamespace:
        if str(thing_id) == self.goal.location_id:
            loc = self._location
            return SimpleNamespace(
                id=thing_id,
                name=self.goal.location,
                room=loc["room"],
                position=tuple(loc["position"]),
            )
        t = self._call("thing", id=str(thing_id))
        return SimpleNamespace(
            id=t["id"], name=t["name"], room=t["room"], position=tuple(t["position"])
        )

    def taken_by(self, thing_id: str) -> str | None:
        """Who first grabbed it: ground truth, asked only to count false plans."""
        return self._call("taken_by", id=str(thing_id))


class NotMine(CommunicationError):
    """A robot asked about another robot's actions (our bug: the world would not tell)."""


class _RemoteThings:
    def __init__(self, world: RemoteWorld) -> None:
        self.world = world
        self._known: dict[str, bool] = {}

    def __contains__(self, thing_id: object) -> bool:
        key = str(thing_id)
        if key not in self._known:
            self._known[key] = bool(self.world._call("has", id=key))
        return self._known[key]


class FaultyBus(ZenohBus):
    """A ZenohBus whose answers are broken on purpose (``garbage``, ``oversized``, ``delay``)."""

    def __init__(self, name: str, *, fault: str, delay: float = 0.0, **kwargs: Any) -> None:
        self.fault = fault
        self.delay = delay
        super().__init__(name, **kwargs)

    def encode_answer(self, answer: Message) -> bytes:
        if self.fault == "garbage":
            return b"\x00\x13{not a frame at all"
        if self.fault == "oversized":
            return json.dumps({**answer.to_dict(), "text": "x" * 4 * self.max_chars}).encode()
        if self.fault == "delay":
            time.sleep(self.delay)
        return super().encode_answer(answer)


class ProcessAgent(CooperativeAgent):
    """A :class:`CooperativeAgent` whose successes also go to the fleet memory."""

    fleet: Any = None

    def announce(self, subgoal: SubGoal) -> None:
        super().announce(subgoal)
        if self.fleet is not None:
            g = self.memory.goal
            self.fleet.record_success(
                f"put the {subgoal.target} {g.relation} the {g.location}",
                f"{g.relation.capitalize()}({subgoal.target}, {g.location})",
                {"object_id": subgoal.object_id, "step": self.memory.step},
            )


class _TurnDriver:
    """What :meth:`Episode.turn` needs of its episode: the world, and charging for messages."""

    def __init__(self, world: RemoteWorld, bus: ZenohBus, fleet: Any = None) -> None:
        self.sim = world
        self.bus = bus
        self.fleet = fleet
        self.charged = 0

    def _charge(self, name: str) -> None:
        """Messages cost their sender a step each (answers included), as in-process."""
        if self.fleet is not None:
            # Between ticks: a success a tick queued is published (and so charged) in the turn
            # it happened, as when it was published on the tick.
            self.fleet.flush(WORLD_TIMEOUT)
        due = self.bus.stats.messages - self.charged
        if due > 0:
            self.sim.spend(name, due)
            self.charged = self.bus.stats.messages


def _parse_fault(spec: str | None) -> tuple[str | None, float]:
    if not spec:
        return None, 0.0
    mode, _, value = spec.partition(":")
    if mode not in FAULT_MODES:
        raise CommunicationError(
            f"fault {spec!r} is unknown: expected one of garbage, oversized, delay:SECONDS, silent"
        )
    if mode == "delay":
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not seconds >= 0:
            raise CommunicationError(f"fault {spec!r}: expected delay:SECONDS with SECONDS >= 0")
        return mode, seconds
    return mode, 0.0


def _reobserver(agent: CooperativeAgent, world: RemoteWorld):
    """Re-observe a sub-goal's object when it is in my room: True seen, False gone, None far."""

    def reobserve(subgoal: SubGoal) -> bool | None:
        m = agent.memory
        info = m.info_for(subgoal)
        if subgoal.action == "explore" or info is None:
            return None
        with m.lock:
            here = info.room == m.room
        if not here:
            return None
        agent.perceive()
        return (
            subgoal.object_id in m.observations if subgoal.object_id else info.id in m.observations
        )

    return reobserve


def robot_main(args: argparse.Namespace) -> int:
    """``processes robot``: one robot -- its bus, tree and memories -- playing its turns."""
    fault, delay = _parse_fault(args.fault)
    common = dict(
        team=args.team,
        prefix=args.prefix,
        listen=args.listen,
        connect=args.connect,
        keep_log=True,
    )
    bus = (
        FaultyBus(args.name, fault=fault, delay=delay, **common)
        if fault
        else ZenohBus(args.name, **common)
    )
    report: dict[str, Any] = {"event": "report", "robot": args.name}
    turns = threading.Condition()
    latest: dict[str, Any] = {}

    def on_turn(sample: Any) -> None:
        try:
            turn = json.loads(sample.payload.to_string())
        except ValueError:
            return
        with turns:
            if turn.get("seq", 0) > latest.get("seq", 0):
                latest.clear()
                latest.update(turn)
            turns.notify_all()

    turn_sub = bus.session.declare_subscriber(
        f"{bus.base}/world/turn", direct_callback(bus._zenoh, on_turn)
    )
    fleet = vector = None
    try:
        deadline = time.monotonic() + args.join_timeout
        world = None
        while world is None:
            try:
                world = RemoteWorld(bus.session, bus.base, args.name, timeout=args.world_timeout)
            except WorldGone:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        team = list(world.robots)
        if args.memory_dir:
            from bt_raider.fleet.fleet_memory import FleetMemory
            from bt_raider.memory import VectorMemory

            vector = VectorMemory(Path(args.memory_dir) / f"{args.name}.db")
            vector.setup()  # load the model before the clock starts
            fleet = FleetMemory(vector, bus)
        note = None
        if args.verbose:

            def note(step: int, robot: str, text: str) -> None:
                print(f"[{step:3d}] {robot}: {text}", file=sys.stderr, flush=True)

        agent = ProcessAgent(args.name, world, bus, POLICIES[args.policy], team, note=note)
        agent.fleet = fleet
        agent.validator.timeout = args.validation_timeout
        resilient = ReobservingValidator(agent.validator, _reobserver(agent, world))
        for guard in agent.guards:
            guard.validator = resilient
        if fault == "silent":
            bus.serve(lambda request: None)
        if not bus.wait_for_peers(team, args.join_timeout):
            raise CommunicationError(f"{args.name}: collaborators {team} did not all join")
        world._call("ready")

        driver = _TurnDriver(world, bus, fleet)

        seen_seq = 0
        while True:
            with turns:
                turns.wait_for(lambda last=seen_seq: latest.get("seq", 0) > last, timeout=0.5)
                turn = dict(latest)
            if turn.get("seq", 0) <= seen_seq:
                turn = world._call("turn") or {}  # an announcement may have been missed
                if turn.get("seq", 0) <= seen_seq:
                    continue
            seen_seq = turn["seq"]
            if turn["phase"] == "end":
                break
            if turn["robot"] != args.name:
                continue
            world.set_state(turn["state"])
            bus.logical_time = seen_seq  # publications of this turn sort after earlier turns'
            if not bus.wait_broadcasts(turn.get("expect", {}), BROADCAST_WAIT):
                log.warning("%s: broadcasts late at step %s", args.name, turn["step"])
                report.setdefault("late_broadcasts", 0)
                report["late_broadcasts"] += 1
            phase = turn["phase"]
            world.turn_seq = seen_seq
            if phase == "perceive":
                agent.perceive()
            elif phase == "hello":
                agent.say_hello()
            else:
                # The in-process episode's own turn, played on the remote world.
                Episode.turn(driver, agent)
            world._call("end_turn", seq=seen_seq, broadcasts=bus.broadcasts_sent)
        world.detached = True
        agent.shutdown()
        sent = [m for m in bus.log if m.sender == args.name]
        report.update(
            {
                "messages": bus.stats.messages,
                "characters": bus.stats.characters,
                "requests": sum(1 for m in sent if m.kind is MessageKind.VALIDATION_REQUEST),
                "announced": [
                    m.data["subgoal"]["target"]
                    for m in sent
                    if m.kind is MessageKind.SUBGOAL_ACHIEVED
                ],
                "commits": agent.commits,
                "false_plans": agent.false_plans,
                "faults": bus.fault_summary(),
                "unknown_policy": dict(resilient.counts),
                "rtts": sorted(bus.rtts),
                "world_calls": world.calls,
            }
        )
        if fleet is not None:
            # A peer's last record may still be in flight: each robot tells the others how many
            # it published and waits until it has taken in theirs, before counting and closing.
            synced = fleet.finish([n for n in team if n != args.name], MEMORY_SYNC_WAIT)
            fleet.close(WORLD_TIMEOUT)
            report["memory"] = {**fleet.summary(), "records": len(vector), "synced": synced}
        print(json.dumps(report), flush=True)
        return 0
    except (CommunicationError, WorldGone) as exc:
        print(json.dumps({**report, "error": str(exc)}), flush=True)
        return 2
    finally:
        try:
            turn_sub.undeclare()
        except Exception:
            pass
        if fleet is not None:
            fleet.close(WORLD_TIMEOUT)  # no ingestion runs once the memory closes
        bus.close()
        if vector is not None:
            vector.close()


# --------------------------------------------------------------------------- the runner


def _python_module_cmd() -> list[str]:
    return [sys.executable, "-m", "bt_raider.examples.cooperative_table.processes"]


def _reader(proc: subprocess.Popen, sink: list[dict[str, Any]], on_event=None) -> threading.Thread:
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


def _tail(proc: subprocess.Popen, sink: deque[str]) -> threading.Thread:
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
    memory_dir: str | Path | None = None,
    goal: str | None = None,
    team: str | None = None,
) -> dict[str, Any]:
    """Run one episode with ``n`` robot processes and a world process on 127.0.0.1.

    Args:
        n: robots (2..6).
        seed: the episode's seed (the same as the in-process demo's).
        noisy: add ``dummies`` dummy objects.
        policy: a key of :data:`~.agent.POLICIES`.
        horizon: step limit.
        validation_timeout: seconds a robot waits for a collaborator's answer.
        turn_timeout: seconds a robot may take for a turn before the world retires it.
        timeout: wall-clock limit for the whole run; every process is killed past it.
        faults: robot -> fault mode (``garbage``, ``oversized``, ``delay:S``, ``silent``).
        kill: robot -> step at which its process is killed (SIGKILL).
        memory_dir: give each robot a CDR vector memory there, shared as a fleet memory.
        goal: goal template (chosen by the seed when None).
        team: the Zenoh team segment (unique per run by default).

    Returns:
        The figures: those of the in-process demo (``success``, ``steps``, ``travel``,
        ``false_plans``, ``messages``, ``characters``, ``commits``, ``requests``) plus
        ``achieved`` (object -> robot), ``announced`` (robot -> objects), ``faults`` (robot ->
        kind -> count), ``faults_total``, ``retired``, ``killed``, ``reports`` and ``wall_s``.

    Raises:
        CommunicationError: the world failed or the run exceeded ``timeout``.
    """
    if n not in range(2, len(ROBOT_NAMES) + 1):
        raise CommunicationError(f"processes must be 2..{len(ROBOT_NAMES)}, got {n!r}")
    if policy not in POLICIES:
        raise CommunicationError(
            f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}"
        )
    faults = dict(faults or {})
    kill = dict(kill or {})
    names = list(ROBOT_NAMES[:n])
    for spec in faults.values():
        _parse_fault(spec)
    for who in [*faults, *kill]:
        if who not in names:
            raise CommunicationError(
                f"no robot {who!r} in this run: expected one of {', '.join(names)}"
            )
    team = team or f"run{os.getpid()}x{uuid.uuid4().hex[:6]}"
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
        "--listen", world_ep,
    ]  # fmt: skip
    if noisy:
        world_cmd.append("--noisy")
    if goal is not None:
        world_cmd += ["--goal", goal]
    started = time.monotonic()
    procs: dict[str, subprocess.Popen] = {}
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
            world_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
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
                "--listen", robot_eps[name],
                "--connect", world_ep,
            ]  # fmt: skip
            for other in names[:i]:
                cmd += ["--connect", robot_eps[other]]
            if name in faults:
                cmd += ["--fault", faults[name]]
            if memory_dir is not None:
                cmd += ["--memory-dir", str(memory_dir)]
            procs[name] = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
            events[name] = []
            stderr[name] = deque(maxlen=40)
            readers.append(_reader(procs[name], events[name]))
            readers.append(_tail(procs[name], stderr[name]))
        deadline = started + timeout
        try:
            procs["world"].wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise CommunicationError(f"the episode did not end within {timeout} s") from None
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
        f"(team {figures['team']})",
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
        dummies=getattr(args, "dummies", 20),
        horizon=getattr(args, "horizon", HORIZON),
        goal=getattr(args, "goal", None),
        memory_dir=getattr(args, "memory_dir", None),
    )
    print_figures(figures)
    return 0 if figures["success"] else 1


def _add_zenoh(p: argparse.ArgumentParser) -> None:
    p.add_argument("--team", required=True, help="Zenoh key segment shared by the run")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help="key prefix (default %(default)s)")
    p.add_argument("--listen", action="append", default=None, help="endpoint to listen on")
    p.add_argument("--connect", action="append", default=[], help="endpoint to connect to")


def build_parser() -> argparse.ArgumentParser:
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
    w.add_argument("--ready-timeout", type=float, default=60.0)
    r = sub.add_parser("robot", help="one robot: its tree, memory and bus")
    _add_zenoh(r)
    r.add_argument("--name", required=True, choices=ROBOT_NAMES)
    r.add_argument("--policy", default="reveca", choices=sorted(POLICIES))
    r.add_argument("--validation-timeout", type=float, default=2.0)
    r.add_argument("--world-timeout", type=float, default=WORLD_TIMEOUT)
    r.add_argument("--join-timeout", type=float, default=60.0)
    r.add_argument("--fault", default=None, help="garbage | oversized | delay:SECONDS | silent")
    r.add_argument("--memory-dir", default=None, help="folder for this robot's CDR memory")
    r.add_argument("--verbose", action="store_true", help="log decisions on stderr")
    run = sub.add_parser("run", help="start a world and N robots and print the figures")
    run.add_argument("--robots", type=int, default=2)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--noisy", action="store_true")
    run.add_argument("--policy", default="reveca", choices=sorted(POLICIES))
    run.add_argument("--memory-dir", default=None)
    run.add_argument("--json", action="store_true", help="print every figure as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    if args.command == "world":
        from bt_raider.examples.cooperative_table.world_server import main as world_main

        return world_main(args)
    if args.command == "robot":
        return robot_main(args)
    figures = run_processes(
        args.robots, args.seed, args.noisy, policy=args.policy, memory_dir=args.memory_dir
    )
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_figures(figures)
    return 0 if figures["success"] else 1


if __name__ == "__main__":
    sys.exit(main())
