"""The shared world of the multi-process demo: one process that owns the simulation.

Robots never see the :class:`~bt_raider.simulation.multirobot.MultiRobotSim`; they ask this
process over Zenoh, on the queryable ``<prefix>/<team>/world/rpc``, and get only what a robot
could perceive or do: its own observation (its room, closed containers stay closed), starting
or cancelling its own action, the name of a thing it handles. Partial observation holds.

The world also keeps the **clock**, exactly as the in-process
:class:`~examples.cooperative_table.episode.Episode` does: robots take turns, one simulation
step each, in the simulation's order. A turn is announced on ``<prefix>/<team>/world/turn``
(``{"seq", "phase", "robot", "step", "expect", "state"}``); the robot perceives, ticks its tree
until an action is under way, then calls ``end_turn``; the world runs one step of its action.
``expect`` tells the robot how many broadcasts each collaborator has published so far, so it
hears them before acting -- what an in-process bus gives for free.

A robot whose session disappears (its liveliness token goes) or that misses a turn by
``turn_timeout`` seconds is **retired**: its action is cancelled, what it held drops to the
floor where it stands, and the others play on.

Before the first turn every robot must **join** (reach the world) within ``ready_timeout``
seconds, then be **ready** (set up, e.g. its embedding model loaded, and hearing its
collaborators) within ``setup_timeout`` more. When one does not, the episode does not start and
the error names only the robot(s) that never joined (or never got ready); a robot whose session
ends before the start is named at once, without waiting out the timeout.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, TextIO

from bt_raider.errors import ActionFailed, BtRaiderError, CommunicationError, require
from bt_raider.fleet.zenoh_bus import direct_callback
from bt_raider.fleet.zenoh_config import DEFAULT_PREFIX, make_config
from bt_raider.simulation.multirobot import HORIZON, MultiRobotSim, SimulationError

log = logging.getLogger("bt_raider.examples.world_server")

#: Seconds a robot's query of the world may take before the world is taken as gone.
WORLD_TIMEOUT = 10.0

#: Seconds a robot may take for one turn before it is retired.
TURN_TIMEOUT = 20.0
#: Seconds the world waits for every robot to be ready.
READY_TIMEOUT = 60.0
#: Seconds the world then waits for every joined robot to be set up and ready.
SETUP_TIMEOUT = 300.0


def observation_to_dict(obs: Any) -> dict[str, Any]:
    """An observation (a dataclass) as the JSON-ready dict the server sends."""
    return asdict(obs)


def robot_state(sim: MultiRobotSim, name: str) -> dict[str, Any]:
    """What the server tells robot ``name`` about itself: status, running, busy, the step."""
    state, message = sim.status(name)
    return {
        "status": [state, message],
        "running": sim.running(name),
        "busy": sim.busy(name),
        "step": sim.step,
    }


class WorldServer:
    """Owns a :class:`MultiRobotSim`, answers the robots' queries and runs the clock.

    Args:
        sim: the simulation.
        team: the team's key segment.
        prefix: the key prefix.
        listen: endpoints to listen on (robots connect here).
        connect: endpoints to connect to.
        horizon: step limit.
        turn_timeout: seconds a turn may take before the robot is retired.
        ready_timeout: seconds to wait for every robot to join at the start.
        setup_timeout: seconds to wait, once all have joined, for every robot to be ready.
        emit: called with one JSON-able dict per event (a step begins, a robot is retired).
        before_start: called once every robot is ready, before the first turn (it may wait:
            a test or a benchmark starts an intruder there); raises to end the episode.
    """

    def __init__(
        self,
        sim: MultiRobotSim,
        *,
        team: str,
        prefix: str = DEFAULT_PREFIX,
        listen: Sequence[str] | None = None,
        connect: Sequence[str] = (),
        horizon: int = HORIZON,
        turn_timeout: float = TURN_TIMEOUT,
        ready_timeout: float = READY_TIMEOUT,
        setup_timeout: float = SETUP_TIMEOUT,
        emit: Callable[[dict[str, Any]], None] | None = None,
        before_start: Callable[[], None] | None = None,
    ) -> None:
        zenoh = require("zenoh", "fleet", needed_by="WorldServer")
        self._zenoh = zenoh
        self.sim = sim
        self.base = f"{prefix}/{team}"
        self.horizon = horizon
        self.turn_timeout = turn_timeout
        self.ready_timeout = ready_timeout
        self.setup_timeout = setup_timeout
        self.emit = emit or (lambda event: None)
        self.before_start = before_start
        self.order = list(sim.robots)
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._ready: set[str] = set()
        self._joined: set[str] = set()  # reached the world (asked for a join)
        self._alive: set[str] = set()
        self._seen: set[str] = set()  # whose liveliness token has ever appeared
        self.retired: dict[str, str] = {}  # robot -> why
        self._seq = 0
        self._turn: dict[str, Any] | None = None
        self._ended: dict[int, dict[str, Any]] = {}
        self._broadcasts: dict[str, int] = dict.fromkeys(self.order, 0)
        self.rpc_calls = 0
        self.session = zenoh.open(make_config(listen=listen, connect=connect))
        self._entities = [
            # Answered on Zenoh's thread: each request is short (the simulation is in memory).
            self.session.declare_queryable(
                f"{self.base}/world/rpc", direct_callback(zenoh, self._on_query)
            ),
            self.session.liveliness().declare_subscriber(
                f"{self.base}/*/alive", self._on_liveliness, history=True
            ),
        ]
        self._turns = self.session.declare_publisher(f"{self.base}/world/turn")

    # -- presence

    def _on_liveliness(self, sample: Any) -> None:
        robot = str(sample.key_expr).split("/")[-2]
        with self._changed:
            if sample.kind == self._zenoh.SampleKind.DELETE:
                self._alive.discard(robot)
            else:
                self._alive.add(robot)
                self._seen.add(robot)
            self._changed.notify_all()

    # -- queries

    def _on_query(self, query: Any) -> None:
        try:
            request = json.loads(query.payload.to_string()) if query.payload is not None else {}
            if not isinstance(request, dict):
                raise ValueError(f"a world request is a JSON object, got {request!r}")
            with self._changed:
                self.rpc_calls += 1
                result = self._handle(request)
                self._changed.notify_all()
            reply = {"ok": result}
        except (ActionFailed, SimulationError) as exc:
            reply = {"error": str(exc), "type": type(exc).__name__}
        except (ValueError, KeyError, TypeError, BtRaiderError) as exc:
            reply = {"error": f"bad world request: {exc}", "type": "BadRequest"}
        try:
            query.reply(query.key_expr, json.dumps(reply))
        finally:
            query.drop()

    def _robot(self, request: dict[str, Any]) -> str:
        name = request.get("robot")
        if name not in self.sim.robots:
            raise KeyError(f"unknown robot {name!r}: expected one of {', '.join(self.order)}")
        return name

    def _handle(self, request: dict[str, Any]) -> Any:
        sim = self.sim
        op = request.get("op")
        if op == "setup":
            if request.get("robot") in sim.robots:
                self._joined.add(request["robot"])  # it has reached the world
            spec = sim.goal
            spot = sim.thing(spec.location_id)
            return {
                "robots": self.order,
                "goal": asdict(spec),
                "location": {"room": spot.room, "position": list(spot.position)},
                "house": "default",
                "horizon": self.horizon,
            }
        name = self._robot(request)
        if name in self.retired and op not in ("report",):
            raise SimulationError(f"robot {name} has been retired: {self.retired[name]}")
        if op == "ready":
            self._ready.add(name)
            return True
        if op == "turn":  # a robot that may have missed an announcement asks
            return self._turn
        if op == "observe":
            return observation_to_dict(sim.observe(name))
        if op == "begin":
            sim.begin(name, str(request["action"]), [str(a) for a in request.get("args", [])])
            return robot_state(sim, name)
        if op == "cancel":
            sim.cancel(name)
            return robot_state(sim, name)
        if op == "spend":
            sim.spend(name, int(request["steps"]))
            return robot_state(sim, name)
        if op == "state":
            return robot_state(sim, name)
        if op == "thing":
            t = sim.thing(str(request["id"]))
            return {"id": t.id, "name": t.name, "room": t.room, "position": list(t.position)}
        if op == "has":
            return str(request["id"]) in sim.things
        if op == "taken_by":
            return sim.taken_by(str(request["id"]))
        if op == "advance":  # one step of the robot's action, in its own turn
            self._advance(name, int(request["seq"]))
            return robot_state(sim, name)
        if op == "end_turn":
            seq = int(request["seq"])
            self._advance(name, seq)
            self._ended[seq] = request
            self._broadcasts[name] = int(request.get("broadcasts", 0))
            return True
        raise KeyError(f"unknown world operation {op!r}")

    # -- the clock

    def _retire(self, name: str, why: str) -> None:
        """Take a robot out: cancel its action, drop what it holds where it stands."""
        if name in self.retired:
            return
        self.retired[name] = why
        sim = self.sim
        r = sim.robot(name)
        sim.cancel(name)
        for oid in list(r.held):
            t = sim.thing(oid)
            t.holder, t.parent, t.room, t.position = None, None, r.room, r.position
        r.held.clear()
        r.busy = 0
        log.warning("retired %s: %s", name, why)
        self.emit({"event": "retired", "robot": name, "step": sim.step, "why": why})

    def _advance(self, name: str, seq: int) -> None:
        """Run one step of ``name``'s action, once, and only in its own act turn."""
        turn = self._turn or {}
        if turn.get("seq") != seq or turn.get("robot") != name:
            raise KeyError(f"turn {seq} is not {name}'s: the current turn is {turn.get('seq')}")
        if turn.get("phase") == "act" and not turn.get("advanced"):
            self.sim.advance(name)
            turn["advanced"] = True

    def _play(self, name: str, phase: str) -> None:
        """Announce ``name``'s turn and wait for it to end (or retire the robot)."""
        with self._changed:
            if name in self.retired:
                return
            self._seq += 1
            seq = self._seq
            self._turn = {
                "seq": seq,
                "phase": phase,
                "robot": name,
                "step": self.sim.step,
                "expect": dict(self._broadcasts),
                "state": robot_state(self.sim, name),
            }
            payload = json.dumps(self._turn)
        self._turns.put(payload)
        deadline = time.monotonic() + self.turn_timeout
        with self._changed:
            while seq not in self._ended:
                if name not in self._alive:
                    self._retire(name, "its session is gone")
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    self._retire(name, f"no end of turn within {self.turn_timeout} s")
                    return
                self._changed.wait(min(left, 0.5))

    def wait_ready(self) -> None:
        """Wait until every robot has joined, then until every one is ready.

        Raises:
            CommunicationError: a robot's session ended before the start (at once), a robot
                did not join within ``ready_timeout`` seconds, or a joined robot was not ready
                within ``setup_timeout`` more. Only the robots at fault are named.
        """
        self._wait_for(self._joined, self.ready_timeout, "did not join")
        self._wait_for(self._ready, self.setup_timeout, "joined but were not ready")

    def _wait_for(self, done: set[str], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not set(self.order) <= done:
                gone = sorted((self._seen - self._alive) & (set(self.order) - self._ready))
                if gone:
                    raise CommunicationError(
                        f"robot(s) {', '.join(gone)} left before the episode started "
                        "(their session ended)"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = sorted(set(self.order) - done)
                    raise CommunicationError(
                        f"robot(s) {', '.join(missing)} {what} within {timeout:g} s"
                    )
                self._changed.wait(min(left, 0.5))

    def run(self) -> dict[str, Any]:
        """Play the episode; returns the world's figures."""
        sim = self.sim
        started = time.monotonic()
        self.wait_ready()
        if self.before_start is not None:
            self.before_start()
        self.emit(
            {
                "event": "start",
                "robots": self.order,
                "goal": sim.goal.text,
                "rooms": {n: r.room for n, r in sim.robots.items()},
                "objects": sum(t.kind == "object" for t in sim.things.values()),
                "dummies": sum(t.dummy for t in sim.things.values()),
            }
        )
        for name in self.order:
            self._play(name, "perceive")
        for name in self.order:
            self._play(name, "hello")
        while not sim.done() and sim.step < self.horizon:
            if len(self.retired) == len(self.order):
                break
            self.emit({"event": "step", "step": sim.step})
            for name in self.order:
                self._play(name, "act")
            sim.end_step()
        with self._changed:
            self._seq += 1
            self._turn = {"seq": self._seq, "phase": "end", "robot": None, "step": sim.step}
            payload = json.dumps(self._turn)
        self._turns.put(payload)
        puts = [
            {"step": e.step, "robot": e.robot, "text": e.text}
            for e in sim.events
            if f"on {sim.goal.location} ({sim.goal.location_id})" in e.text
            or f"in {sim.goal.location} ({sim.goal.location_id})" in e.text
        ]
        return {
            "success": sim.done(),
            "steps": sim.step,
            "travel": round(sim.travelled, 2),
            "goal": list(sim.goal.objects),
            "achieved": dict(sim.achieved),
            "goal_puts": puts,
            "retired": dict(self.retired),
            "rpc_calls": self.rpc_calls,
            "world_wall_s": round(time.monotonic() - started, 3),
        }

    def close(self) -> None:
        for e in [self._turns, *self._entities]:
            try:
                e.undeclare()
            except Exception:
                pass
        # Give the final announcement a moment to leave before the session goes.
        time.sleep(0.05)
        self.session.close()


def released(stream: TextIO) -> None:
    """Wait for the line ``go`` on ``stream`` (``processes world --hold``): the caller's hook
    has run, the episode may start.

    Raises:
        CommunicationError: the stream ended or said something else.
    """
    line = stream.readline()
    if line.strip() != "go":
        raise CommunicationError(f"the world was held and not released (read {line[:40]!r})")


def main(args: Any) -> int:
    """``processes world``: build the seeded simulation and serve it until the episode ends."""
    sim = MultiRobotSim.generate(
        args.seed, robots=args.robots, dummies=args.dummies if args.noisy else 0, goal=args.goal
    )

    def emit(event: dict[str, Any]) -> None:
        print(json.dumps(event), flush=True)

    server = WorldServer(
        sim,
        team=args.team,
        prefix=args.prefix,
        listen=args.listen,
        connect=args.connect,
        horizon=args.horizon,
        turn_timeout=args.turn_timeout,
        ready_timeout=args.ready_timeout,
        setup_timeout=getattr(args, "setup_timeout", SETUP_TIMEOUT),
        emit=emit,
        before_start=(lambda: released(sys.stdin)) if getattr(args, "hold", False) else None,
    )
    try:
        figures = server.run()
    except CommunicationError as exc:
        print(json.dumps({"event": "error", "error": str(exc)}), flush=True)
        print(f"world: {exc}", file=sys.stderr)
        return 2
    finally:
        server.close()
    print(json.dumps({"event": "world", "figures": figures}), flush=True)
    return 0
