"""One robot of the cooperative table as its own process: it sees the world through the world
server and talks to its collaborators only over Zenoh (robot_main).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from bt_raider.cooperation.messaging import Message, MessageKind
from bt_raider.cooperation.observations import SubGoal
from bt_raider.cooperation.validator import ReobservingValidator
from bt_raider.errors import ActionFailed, CommunicationError
from bt_raider.examples.cooperative_table.cooperative_agent import CooperativeAgent
from bt_raider.examples.cooperative_table.episode import Episode
from bt_raider.examples.cooperative_table.policies import POLICIES
from bt_raider.examples.cooperative_table.world_server import WORLD_TIMEOUT
from bt_raider.fleet.signing import FleetSecurity
from bt_raider.fleet.zenoh_bus import ZenohBus, direct_callback
from bt_raider.simulation.multirobot import (
    GoalSpec,
    MultiRobotSim,
    Observation,
    RobotView,
    ThingView,
    default_house,
)

log = logging.getLogger("bt_raider.examples.processes")


#: Seconds a robot waits for its collaborators' broadcasts before its turn.
BROADCAST_WAIT = 5.0


#: Seconds a robot waits, at the end, for the fleet records its collaborators published.
MEMORY_SYNC_WAIT = 15.0


#: Fault modes a robot process can be started with (fault injection for tests).
FAULT_MODES = ("garbage", "oversized", "delay", "silent")


class WorldGone(CommunicationError):
    """The world process does not answer."""


class RemoteWorld:
    """What a robot may ask of the shared world, over Zenoh (duck-types ``MultiRobotSim``).

    It offers exactly what
    :class:`~bt_raider.examples.cooperative_table.cooperative_agent.CooperativeAgent` uses: the
    goal, the (public) map, the robot's own observation, its own actions, and the names of
    things it handles. The robot's action state only changes through its own calls and the
    world's step at the end of its turn, so it is cached between the two.
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
        # Broken by the robot itself, so signed by it (a signed fleet still reads them as faults).
        if self.fault == "garbage":
            return self._seal("\x00\x13{not a frame at all", "answer", answer.to or "")
        if self.fault == "oversized":
            text = json.dumps({**answer.to_dict(), "text": "x" * 4 * self.max_chars})
            return self._seal(text, "answer", answer.to or "")
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


def parse_fault(spec: str | None) -> tuple[str | None, float]:
    """``--fault garbage``, ``delay:SECONDS``, ... -> (mode, seconds); no spec -> no fault."""
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


def _reobserver(agent: CooperativeAgent, world: RemoteWorld) -> Callable[[SubGoal], bool | None]:
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
    fault, delay = parse_fault(args.fault)
    # A signed fleet by default: the runner gives each robot its key and the team's keyring.
    security = FleetSecurity.load(args.keys, args.name) if args.keys else None
    common = dict(
        team=args.team,
        prefix=args.prefix,
        listen=args.listen,
        connect=args.connect,
        keep_log=True,
        security=security,
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
            # The memory loads torch and the embedding model: only when the run keeps one.
            from bt_raider.fleet.fleet_memory import FleetMemory
            from bt_raider.memory import VectorMemory

            vector = VectorMemory(Path(args.memory_dir) / f"{args.name}.db")
            vector.setup()  # load the model before the clock starts
            fleet = FleetMemory(vector, bus)
        note = None
        if args.verbose:

            def note(step: int, robot: str, text: str) -> None:
                print(f"[{step:3d}] {robot}: {text}", file=sys.stderr, flush=True)

        # cast: RemoteWorld duck-types MultiRobotSim (all CooperativeAgent uses of it).
        sim = cast(MultiRobotSim, world)
        agent = ProcessAgent(args.name, sim, bus, POLICIES[args.policy], team, note=note)
        agent.fleet = fleet
        agent.validator.timeout = args.validation_timeout
        resilient = ReobservingValidator(agent.validator, _reobserver(agent, world))
        for guard in agent.guards:
            guard.validator = resilient
        if fault == "silent":
            bus.serve(lambda request: None)
        if not bus.wait_for_peers(team, args.join_timeout):
            missing = sorted(set(team) - bus.peers() - {args.name})
            raise CommunicationError(
                f"{args.name}: robot(s) {', '.join(missing)} did not join within "
                f"{args.join_timeout:g} s"
            )
        world._call("ready")

        driver = _TurnDriver(world, bus, fleet)

        seen_seq = 0
        while True:
            with turns:

                def advanced(last: int = seen_seq) -> bool:
                    return latest.get("seq", 0) > last

                turns.wait_for(advanced, timeout=0.5)
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
                # cast: _TurnDriver has what Episode.turn uses of an episode (sim, _charge).
                Episode.turn(cast(Episode, driver), agent)
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
                "unreadable": agent.unreadable,
            }
        )
        if fleet is not None:
            # A peer's last record may still be in flight: each robot tells the others how many
            # it published and waits until it has taken in theirs, before counting and closing.
            synced = fleet.finish([n for n in team if n != args.name], MEMORY_SYNC_WAIT)
            fleet.close(WORLD_TIMEOUT)
            assert vector is not None  # the fleet memory is made over it
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
