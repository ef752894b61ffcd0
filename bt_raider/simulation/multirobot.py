"""A multi-room household where two or more robots share a goal (C-WAH-like, seeded).

REVECA (Seo et al.) is evaluated in Communicative Watch-And-Help: decentralised agents in a
house of rooms, each seeing only the room it is in, objects hidden in closed containers until
someone opens them, goals of 3-5 sub-goals ("put cupcake, pudding, apple, juice on the
coffeetable") and, in Noisy-C-WAH, 10 or 20 dummy objects. :class:`MultiRobotSim` reproduces
that setting at the level the cognitive loop needs:

* a :class:`~bt_raider.simulation.house.House`: rectangular rooms joined by doors; walking
  follows the shortest path through the doors and takes ``ceil(distance / speed)`` steps;
* furniture: surfaces and containers, each able to hold some categories of things
  (:mod:`~bt_raider.simulation.catalogue`);
* partial observation: :meth:`MultiRobotSim.observe` shows the robot's room only, without the
  inside of closed containers (:mod:`~bt_raider.simulation.observation`);
* robots stepping in turn, one step of their current action each (:meth:`advance`), then the
  clock moves (:meth:`end_step`); sending a message costs a step (:meth:`spend`).

Actions (``begin(robot, action, args)``): ``walk(room, x, y)``, ``open(id)``, ``grab(id)``,
``put(id, destination_id)``, ``wait()``. Walking takes as many steps as the distance needs, the
others one step; preconditions are checked when the step runs (a collaborator may have changed
things meanwhile) and a failure is reported by :meth:`status` with the reason.

This module holds the simulator, its state and its limits (reach, hands, robots, horizon); the
layout is :mod:`~bt_raider.simulation.house`, what may be in the house
:mod:`~bt_raider.simulation.catalogue`, what a robot perceives
:mod:`~bt_raider.simulation.observation`. The names it uses from them can still be imported
from here. These modules import nothing of bt_raider but its errors and one another.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bt_raider.errors import ActionFailed
from bt_raider.simulation.catalogue import CATALOGUE as CATALOGUE
from bt_raider.simulation.catalogue import FURNITURE as FURNITURE
from bt_raider.simulation.catalogue import GOALS as GOALS
from bt_raider.simulation.house import House as House
from bt_raider.simulation.house import Point as Point
from bt_raider.simulation.house import SimulationError as SimulationError
from bt_raider.simulation.house import _dist
from bt_raider.simulation.house import default_house as default_house
from bt_raider.simulation.observation import Observation as Observation
from bt_raider.simulation.observation import RobotView as RobotView
from bt_raider.simulation.observation import ThingView as ThingView

#: How close (m) a robot must be to grab, open or put.
REACH = 1.0
#: Objects a robot can hold at once.
HANDS = 2
#: Robot names, in turn order.
ROBOT_NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")
#: Default step limit (C-WAH's H).
HORIZON = 250


# --------------------------------------------------------------------------- state


@dataclass
class Thing:
    """An object or a piece of furniture in the house."""

    id: str
    name: str
    kind: str  # "object" | "surface" | "container"
    category: str
    room: str
    position: Point
    holds: tuple[str, ...] = ()
    parent: str | None = None  # the surface or container it is on/in
    is_open: bool = False
    holder: str | None = None  # the robot holding it
    grabbed_by: str | None = None  # the first robot that grabbed it
    dummy: bool = False

    @property
    def label(self) -> str:
        return f"{self.name} ({self.id})"


@dataclass(frozen=True)
class GoalSpec:
    """The common goal: put every object in ``objects`` ``relation`` the ``location``."""

    objects: tuple[str, ...]
    location: str
    location_id: str
    relation: str = "on"

    @property
    def text(self) -> str:
        return f"put {', '.join(self.objects)} {self.relation} the {self.location}"


@dataclass
class _Running:
    action: str
    args: tuple[Any, ...]
    path: list[tuple[str, Point]] = field(default_factory=list)
    segment: int = 1  # index of the waypoint being walked to
    steps_left: int = 1


@dataclass
class RobotState:
    name: str
    room: str
    position: Point
    held: list[str] = field(default_factory=list)
    running: _Running | None = None
    result: tuple[str, str] | None = None  # ("succeeded" | "failed", message)
    busy: int = 0  # steps still spent communicating
    travelled: float = 0.0
    idle_steps: int = 0
    message_steps: int = 0


@dataclass(frozen=True)
class Event:
    step: int
    robot: str
    text: str


class MultiRobotSim:
    """The house, its things, the robots and the clock.

    Build one with :meth:`generate` (seeded) or directly for hand-made tests.

    Args:
        house: rooms and doors.
        things: every object and piece of furniture.
        robots: ``name -> (room, position)`` start places, in turn order.
        goal: the common goal.
        reach: how close a robot must be to interact.
        hands: how many objects a robot can hold.
    """

    def __init__(
        self,
        house: House,
        things: Sequence[Thing],
        robots: Mapping[str, tuple[str, Point]],
        goal: GoalSpec,
        *,
        reach: float = REACH,
        hands: int = HANDS,
    ) -> None:
        if not robots:
            raise SimulationError("a simulation needs at least one robot")
        self.house = house
        self.things: dict[str, Thing] = {}
        for t in things:
            if t.id in self.things:
                raise SimulationError(f"duplicate thing id {t.id!r}")
            house.room(t.room)
            self.things[t.id] = t
        self.robots: dict[str, RobotState] = {}
        for name, (room, pos) in robots.items():
            house.room(room)
            self.robots[name] = RobotState(name, room, (float(pos[0]), float(pos[1])))
        if goal.location_id not in self.things:
            raise SimulationError(f"goal location id {goal.location_id!r} is not a thing")
        self.goal = goal
        self.reach = reach
        self.hands = hands
        self.step = 0
        self.events: list[Event] = []
        self.achieved: dict[str, str] = {}  # goal object name -> robot that put it there

    # -- construction

    @classmethod
    def generate(
        cls,
        seed: int,
        *,
        robots: int = 2,
        goal: str | None = None,
        n_goal: int | None = None,
        dummies: int = 0,
        container_share: float = 0.5,
        house: House | None = None,
    ) -> MultiRobotSim:
        """A seeded episode.

        Args:
            seed: the random seed; the same seed gives the same episode.
            robots: how many robots (2 or more for cooperation; at most 6).
            goal: a key of :data:`GOALS`; chosen by the seed when None.
            n_goal: how many sub-goals (3-5; chosen by the seed when None).
            dummies: extra objects unrelated to the goal (Noisy-C-WAH uses 10 or 20).
            container_share: chance that a goal object starts inside a container.
            house: the layout (default :func:`default_house`).
        """
        if not 1 <= robots <= len(ROBOT_NAMES):
            raise SimulationError(f"robots must be 1..{len(ROBOT_NAMES)}, got {robots!r}")
        if dummies < 0:
            raise SimulationError(f"dummies must be >= 0, got {dummies!r}")
        rng = random.Random(seed)
        house = house or default_house()
        if goal is None:
            goal = rng.choice(sorted(GOALS))
        if goal not in GOALS:
            raise SimulationError(f"unknown goal {goal!r}: expected one of {', '.join(GOALS)}")
        location, relation, pool = GOALS[goal]
        n = n_goal if n_goal is not None else rng.randint(3, 5)
        if not 1 <= n <= len(pool):
            raise SimulationError(f"n_goal must be 1..{len(pool)} for {goal}, got {n!r}")
        objects = tuple(rng.sample(pool, n))

        things: list[Thing] = []
        next_id = iter(range(1, 10_000))

        def place_in(room: str, margin: float = 0.8) -> Point:
            r = house.room(room)
            return (
                round(rng.uniform(r.x0 + margin, r.x1 - margin), 2),
                round(rng.uniform(r.y0 + margin, r.y1 - margin), 2),
            )

        furniture: list[Thing] = []
        for name, room, kind, holds in FURNITURE:
            if room not in house.rooms:
                continue
            furniture.append(
                Thing(str(next(next_id)), name, kind, "furniture", room, place_in(room), holds)
            )
        things.extend(furniture)
        target = next((f for f in furniture if f.name == location), None)
        if target is None:
            raise SimulationError(f"the house has no {location} for goal {goal}")

        def put_somewhere(name: str, dummy: bool, container_share: float) -> None:
            category = CATALOGUE[name]
            spots = [
                f for f in furniture if f is not target and ("*" in f.holds or category in f.holds)
            ]
            inside = [f for f in spots if f.kind == "container"]
            on = [f for f in spots if f.kind == "surface"]
            group = inside if inside and (not on or rng.random() < container_share) else on
            host = rng.choice(group)
            jitter = (round(rng.uniform(-0.2, 0.2), 2), round(rng.uniform(-0.2, 0.2), 2))
            things.append(
                Thing(
                    str(next(next_id)),
                    name,
                    "object",
                    category,
                    host.room,
                    (host.position[0] + jitter[0], host.position[1] + jitter[1]),
                    parent=host.id,
                    dummy=dummy,
                )
            )

        for name in objects:
            put_somewhere(name, False, container_share)
        others = sorted(n for n in CATALOGUE if n not in objects)
        for _ in range(dummies):
            put_somewhere(rng.choice(others), True, 0.35)

        starts: dict[str, tuple[str, Point]] = {}
        for name in ROBOT_NAMES[:robots]:
            room = rng.choice(house.rooms)
            starts[name] = (room, place_in(room, 1.2))
        return cls(
            house,
            things,
            starts,
            GoalSpec(objects, location, target.id, relation),
        )

    # -- queries

    def thing(self, thing_id: str) -> Thing:
        try:
            return self.things[str(thing_id)]
        except KeyError:
            raise ActionFailed(f"no thing with id {thing_id!r}") from None

    def robot(self, name: str) -> RobotState:
        try:
            return self.robots[name]
        except KeyError:
            raise SimulationError(
                f"unknown robot {name!r}: expected one of {', '.join(self.robots)}"
            ) from None

    def _visible(self, t: Thing, room: str) -> bool:
        if t.holder is not None or t.room != room:
            return False
        parent = self.things.get(t.parent) if t.parent else None
        return parent is None or parent.kind != "container" or parent.is_open

    def _view(self, t: Thing) -> ThingView:
        if t.kind == "object":
            states: tuple[str, ...] = ("GRABBABLE", "INSIDE" if self._inside(t) else "ON")
            actions: tuple[str, ...] = ("grab",)
        elif t.kind == "container":
            states = ("OPEN",) if t.is_open else ("CLOSED",)
            actions = ("put",) if t.is_open else ("open",)
        else:
            states, actions = ("SURFACE",), ("put",)
        return ThingView(
            t.id,
            t.name,
            t.kind,
            t.category,
            t.room,
            t.position,
            states,
            actions,
            t.holds,
            t.parent,
        )

    def _inside(self, t: Thing) -> bool:
        parent = self.things.get(t.parent) if t.parent else None
        return parent is not None and parent.kind == "container"

    def _held(self, r: RobotState) -> tuple[tuple[str, str], ...]:
        return tuple((i, self.things[i].name) for i in r.held)

    def observe(self, robot: str) -> Observation:
        """What ``robot`` sees now: its room's visible things and the robots in it."""
        me = self.robot(robot)
        things = tuple(self._view(t) for t in self.things.values() if self._visible(t, me.room))
        others = tuple(
            RobotView(r.name, r.room, r.position, self._held(r))
            for r in self.robots.values()
            if r.name != robot and r.room == me.room
        )
        return Observation(self.step, robot, me.room, me.position, self._held(me), things, others)

    def taken_by(self, thing_id: str) -> str | None:
        """The robot that first grabbed the object (ground truth, for metrics)."""
        return self.thing(thing_id).grabbed_by

    def remaining(self) -> tuple[str, ...]:
        """Goal objects not yet where the goal wants them."""
        return tuple(o for o in self.goal.objects if o not in self.achieved)

    def done(self) -> bool:
        return not self.remaining()

    @property
    def travelled(self) -> float:
        """Metres walked by all robots."""
        return sum(r.travelled for r in self.robots.values())

    # -- actions

    def status(self, robot: str) -> tuple[str, str]:
        """``("idle" | "running" | "succeeded" | "failed", message)`` of the robot's last action."""
        r = self.robot(robot)
        if r.running is not None:
            return ("running", f"{r.running.action} in progress")
        if r.result is not None:
            return r.result
        return ("idle", "")

    def busy(self, robot: str) -> bool:
        """Whether the robot's next step is already spent (communicating)."""
        return self.robot(robot).busy > 0

    def running(self, robot: str) -> bool:
        return self.robot(robot).running is not None

    def begin(self, robot: str, action: str, args: Sequence[object] = ()) -> None:
        """Start an action; it progresses on :meth:`advance`.

        Raises:
            ActionFailed: the robot is already acting, the action is unknown or its arguments
                are malformed (preconditions are checked when the step runs).
        """
        r = self.robot(robot)
        if r.running is not None:
            raise ActionFailed(f"{robot} is already doing {r.running.action}; cancel it first")
        args = tuple(args)
        r.result = None
        if action == "walk":
            if len(args) != 3:
                raise ActionFailed(f"walk needs (room, x, y), got {args!r}")
            room, x, y = args
            try:
                target = (float(x), float(y))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise ActionFailed(f"walk needs numbers x, y, got {x!r}, {y!r}") from None
            try:
                box = self.house.room(str(room))
            except SimulationError as exc:
                raise ActionFailed(str(exc)) from None
            if not box.contains(target):
                raise ActionFailed(f"({x}, {y}) is not inside the {room}")
            path = self.house.path(r.room, r.position, str(room), target)
            if sum(_dist(p[1], q[1]) for p, q in zip(path, path[1:], strict=False)) < 1e-9:
                r.result = ("succeeded", f"{robot} is already at ({x}, {y}) in the {room}")
                return
            r.running = _Running("walk", (str(room), target), path)
            return
        arity = {"open": 1, "grab": 1, "put": 2, "wait": 0}
        if action not in arity:
            raise ActionFailed(
                f"unknown action {action!r}: expected one of walk, {', '.join(arity)}"
            )
        if len(args) != arity[action]:
            raise ActionFailed(f"{action} needs {arity[action]} argument(s), got {args!r}")
        for a in args:
            self.thing(str(a))
        r.running = _Running(action, tuple(str(a) for a in args))

    def cancel(self, robot: str) -> None:
        """Stop the robot's current action where it is."""
        r = self.robot(robot)
        if r.running is not None:
            r.result = ("failed", f"{r.running.action} cancelled")
            r.running = None

    def spend(self, robot: str, steps: int) -> None:
        """The robot spends its next ``steps`` steps communicating."""
        if steps < 0:
            raise SimulationError(f"steps must be >= 0, got {steps!r}")
        self.robot(robot).busy += steps

    def advance(self, robot: str) -> None:
        """Run one step of the robot's current action (its turn of this step)."""
        r = self.robot(robot)
        if r.busy > 0:
            r.busy -= 1
            r.message_steps += 1
            return
        run = r.running
        if run is None:
            r.idle_steps += 1
            return
        if run.action == "walk":
            self._walk(r, run)
            return
        r.running = None
        try:
            text = self._execute(r, run)
        except ActionFailed as exc:
            r.result = ("failed", str(exc))
            self.events.append(Event(self.step, r.name, f"failed: {exc}"))
            return
        r.result = ("succeeded", text)
        self.events.append(Event(self.step, r.name, text))

    def end_step(self) -> None:
        """Every robot has had its turn: the clock moves on."""
        self.step += 1

    def _walk(self, r: RobotState, run: _Running) -> None:
        budget = self.house.speed
        while budget > 1e-9 and run.segment < len(run.path):
            room, point = run.path[run.segment]
            d = _dist(r.position, point)
            if d <= budget + 1e-9:
                r.position, budget = point, budget - d
                r.travelled += d
                r.room = room
                run.segment += 1
                # Crossing a door: stand in the next room's segment from now on.
                if run.segment < len(run.path):
                    r.room = run.path[run.segment][0]
            else:
                f = budget / d
                r.position = (
                    r.position[0] + (point[0] - r.position[0]) * f,
                    r.position[1] + (point[1] - r.position[1]) * f,
                )
                r.travelled += budget
                r.room = room
                budget = 0.0
        if run.segment >= len(run.path):
            room, point = run.args
            r.running = None
            r.room = room
            r.result = ("succeeded", f"{r.name} reached ({point[0]:.1f}, {point[1]:.1f}) in {room}")

    def _near(self, r: RobotState, t: Thing) -> None:
        if t.room != r.room or _dist(r.position, t.position) > self.reach + 1e-9:
            raise ActionFailed(f"{t.label} is not within reach of {r.name} in the {r.room}")

    def _execute(self, r: RobotState, run: _Running) -> str:
        if run.action == "wait":
            return f"{r.name} waited"
        t = self.thing(run.args[0])
        if run.action == "open":
            if t.kind != "container":
                raise ActionFailed(f"{t.label} cannot be opened: it is a {t.kind}")
            self._near(r, t)
            if t.is_open:
                return f"{t.label} was already open"
            t.is_open = True
            return f"{r.name} opened {t.label}"
        if run.action == "grab":
            if t.kind != "object":
                raise ActionFailed(f"{t.label} cannot be grabbed: it is a {t.kind}")
            if t.holder is not None:
                raise ActionFailed(f"{t.label} is not here: {t.holder} holds it")
            if not self._visible(t, r.room) or _dist(r.position, t.position) > self.reach + 1e-9:
                raise ActionFailed(f"{t.label} is not here")
            if len(r.held) >= self.hands:
                raise ActionFailed(f"{r.name}'s hands are full")
            t.holder = r.name
            t.parent = None
            t.grabbed_by = t.grabbed_by or r.name
            r.held.append(t.id)
            return f"{r.name} grabbed {t.label}"
        # put
        dest = self.thing(run.args[1])
        if t.id not in r.held:
            raise ActionFailed(f"{r.name} does not hold {t.label}")
        if dest.kind == "object":
            raise ActionFailed(f"{dest.label} is not a surface or a container")
        if dest.kind == "container" and not dest.is_open:
            raise ActionFailed(f"{dest.label} is closed")
        self._near(r, dest)
        r.held.remove(t.id)
        t.holder = None
        t.parent = dest.id
        t.room = dest.room
        t.position = dest.position
        if dest.id == self.goal.location_id and t.name in self.goal.objects:
            self.achieved.setdefault(t.name, r.name)
        return f"{r.name} put {t.label} {'in' if dest.kind == 'container' else 'on'} {dest.label}"
