"""A simulated world for unit-testing trees: a scene that actions really change.

:class:`SimWorld` holds a copy of a :class:`~bt_raider.perception.scene.Scene` and executes
robot actions on it the way AI2-THOR would (``inventoryObjects``, ``isPickedUp``, both sides of
``parentReceptacles``/``receptacleObjectIds``, ``isOpen``, ``isToggled``, ``isSliced``, the
agent's pose). An action whose real preconditions do not hold raises :class:`PreconditionFailed`
(an :class:`~bt_raider.errors.ActionFailed`) naming the reason, with the rules and the priority
of the issue table in ``docs/scene-format.md`` section 3 — so a tree that skips a check really
fails, with the category a checker would have reported.

Wrap it with ``bt_raider.robot.actions.SyncRobot(world)`` to get a Robot for ``ActionBehaviour``.

Actions (arguments are objectIds, display names, person ids or recognised names, or named
``locations``; an ambiguous name fails — disambiguation is the checker's job, not the world's):

==========================  ===========================================================
``move_to(target)``         alias of ``approach``
``approach(target)``        a location: stand on it (facing its optional ``yaw``, else the
                            direction of travel); an object: stop :data:`OBJECT_STANDOFF` m
                            from it (never farther than ``reach``); a person: stop at
                            0.8 x ``handover_distance``. The robot then faces the target.
                            Fails when ``blocked`` lists a blocker for the target.
``pick(obj)``               one arm: the hand must be free
``place(obj, dest)``        put the held ``obj`` on/in ``dest``
``place(x)``                RAIDER's one-argument form: when ``x`` is the held object, put it
                            on the receptacle the robot last approached (else the nearest
                            open surface within reach, not the Floor or a one-slot
                            appliance) — as in
                            ``move_to(pan), place(tomato)``; when ``x`` is not held, ``x`` is
                            the destination of whatever the robot holds
``open/close(obj)``         ``isOpen`` (and ``openness``)
``turnon/turnoff(obj)``     ``isToggled``
``slice(obj)``              needs a Knife or ButterKnife in the hand; sets ``isSliced`` (the
                            object stays in the scene, unlike AI2-THOR's slice pieces)
``handover(obj, person)``   the person must be recognised, looking at the robot, have free
                            hands and stand within ``handover_distance``; the object goes to
                            the person's ``holding`` list (an extension field of ``humans[]``)
==========================  ===========================================================

Events between ticks: :meth:`SimWorld.inject` (now), :meth:`SimWorld.schedule` (after some
actions or ticks, or just before an action), and the helpers :meth:`~SimWorld.move_object`,
:meth:`~SimWorld.block`, :meth:`~SimWorld.unblock`, :meth:`~SimWorld.set_human`,
:meth:`~SimWorld.set_state`, :meth:`~SimWorld.set_agent`. Everything that happened is in
:attr:`SimWorld.log`.

Ground floor: imports nothing of bt_raider but :mod:`bt_raider.errors` and the perception
package.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from bt_raider.errors import ActionFailed, SceneError, ToolError
from bt_raider.perception.relations import SINGLE_SLOT_TYPES
from bt_raider.perception.scene import Human, Scene, SceneObject, copy_data
from bt_raider.perception.values import XYZ
from bt_raider.simulation.events import ScheduledEvent, WorldEvents

#: How close (m) the robot stops in front of an object it approaches (capped at 0.9 x reach).
OBJECT_STANDOFF = 0.6
#: Fraction of ``handover_distance`` at which the robot stops in front of a person.
PERSON_STANDOFF = 0.8
#: Objects a robot can slice with (AI2-THOR accepts both).
KNIVES = ("Knife", "ButterKnife")
#: Receptacles that hold one object at a time.
#: Receptacles that are containers rather than surfaces (the implicit ``place`` avoids them).
CONTAINERS = ("Bowl", "Cup", "Mug", "Pot", "Pan", "Kettle", "GarbageCan", "SinkBasin", "Box")
#: How far (m) in front of the robot a held object is carried, and at what height offset.
HAND_OFFSET = 0.3
#: Height (m) at which a person holds what she is handed.
PERSON_HAND_HEIGHT = 0.9

#: Canonical action -> arities it accepts.
ACTIONS: dict[str, tuple[int, ...]] = {
    "move_to": (1,),
    "approach": (1,),
    "pick": (1,),
    "place": (1, 2),
    "open": (1,),
    "close": (1,),
    "turnon": (1,),
    "turnoff": (1,),
    "slice": (1,),
    "handover": (2,),
}
#: Other spellings accepted for the canonical actions.
ALIASES: dict[str, str] = {
    "moveto": "move_to",
    "goto": "move_to",
    "go_to": "move_to",
    "navigate": "move_to",
    "pickup": "pick",
    "pick_up": "pick",
    "grab": "pick",
    "put": "place",
    "turn_on": "turnon",
    "toggleon": "turnon",
    "toggle_on": "turnon",
    "turn_off": "turnoff",
    "toggleoff": "turnoff",
    "toggle_off": "turnoff",
    "cut": "slice",
    "give": "handover",
    "hand_over": "handover",
    "approach_person": "approach",
}


class PreconditionFailed(ActionFailed):
    """An action the world refused, with the issue category of ``docs/scene-format.md``.

    Attributes:
        action: the canonical action name.
        action_args: the arguments as given.
        reason: ``ambiguity``, ``not_present``, ``robot_state``, ``wrong_property``,
            ``wrong_state``, ``obstructed``, ``out_of_reach`` or ``bad_action``.
    """

    def __init__(self, action: str, args: Sequence[Any], reason: str, message: str) -> None:
        super().__init__(f"{action}({', '.join(map(str, args))}) failed [{reason}]: {message}")
        self.action = action
        self.action_args = list(args)
        self.reason = reason
        self.detail = message


@dataclass
class _Target:
    """What an approach/move argument named: a location, a person or an object."""

    kind: str  # "location" | "person" | "object"
    key: str  # location name, person id or objectId
    name: str  # how messages name it
    position: XYZ
    keys: set[str] = field(default_factory=set)  # every way ``blocked`` may list it
    yaw: float | None = None


def _yaw_towards(src: Sequence[float], dst: Sequence[float]) -> float:
    """Yaw in degrees (0 faces +z, 90 faces +x) that points from ``src`` to ``dst``."""
    return math.degrees(math.atan2(dst[0] - src[0], dst[2] - src[2])) % 360.0


def _clip(value: float, low: float, high: float) -> float:
    """``value`` within ``[low, high]`` (as numpy's clip: the upper bound wins when they cross)."""
    return min(max(value, low), high)


class SimWorld(WorldEvents):
    """A scene that robot actions change, with events injected between ticks.

    Args:
        scene: the starting scene (a :class:`Scene` or a scene dict); the world keeps a copy.

    Attributes:
        scene: the live scene (read it in tests; change it through the helpers).
        log: one dict per executed action or event, in order: ``kind`` (``action`` or
            ``event``), ``action``, ``args``, ``ok``, ``result``, ``reason``, ``error``,
            ``tick``.
    """

    def __init__(self, scene: Scene | dict[str, Any]) -> None:
        if isinstance(scene, Scene):
            self.scene = scene.copy()
        else:
            self.scene = Scene(copy_data(scene))  # deepcopy's result, five times faster
        self.log: list[dict[str, Any]] = []
        self.ticks = 0
        self.actions_done = 0
        self._events: list[ScheduledEvent] = []
        self._last_target: str | None = None  # objectId of the object last approached
        # Checks read observe() on worker threads while the tick thread acts.
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ Executor protocol
    def observe(self) -> Scene:
        """A snapshot of the scene (a deep copy: later actions do not change it)."""
        with self._lock:
            # Validated when the world was made; every change since went through a checked
            # helper, so the copy skips a second validation (a third of its cost).
            return self.scene.copy(validate=False)

    def execute(self, action: str, args: Sequence[Any]) -> str:
        """Run one action to completion.

        Returns:
            A one-line description of what happened.

        Raises:
            PreconditionFailed: when the action's real preconditions do not hold; nothing in
                the scene changes then.
        """
        args = [a if isinstance(a, str) else str(a) for a in args]
        with self._lock:
            entry: dict[str, Any] = {
                "kind": "action",
                "action": str(action),
                "args": list(args),
                "tick": self.ticks,
            }
            try:
                name = self._canonical(action, args)
                entry["action"] = name
                self._fire_before(name)
                result = getattr(self, f"_do_{name}")(*args)
            except PreconditionFailed as exc:
                entry.update(ok=False, result=None, reason=exc.reason, error=str(exc))
                self.log.append(entry)
                self._after_action()
                raise
            entry.update(ok=True, result=result, reason=None, error=None)
            self.log.append(entry)
            self._after_action()
            return result

    # ------------------------------------------------------------------ log views
    @property
    def failures(self) -> list[dict[str, Any]]:
        """Log entries of actions that failed."""
        return [e for e in self.log if e["kind"] == "action" and not e["ok"]]

    @property
    def executed(self) -> list[str]:
        """Successful actions as ``name(arg, ...)`` strings, in order."""
        return [
            f"{e['action']}({', '.join(e['args'])})"
            for e in self.log
            if e["kind"] == "action" and e["ok"]
        ]

    # ------------------------------------------------------------------ actions
    def _do_move_to(self, target: str) -> str:
        return self._go("move_to", target)

    def _do_approach(self, target: str) -> str:
        return self._go("approach", target)

    def _do_pick(self, obj: str) -> str:
        o = self._resolve_obj("pick", [obj], obj)
        self._need_free_hand("pick", [obj], f"pick {o.name}")
        if not o.flag("pickupable"):
            self._fail("pick", [obj], "wrong_property", f"{o.name} is not pickupable")
        for pid in o.parents:
            parent = self._maybe(pid)
            if parent is not None and parent.flag("openable") and not parent.flag("isOpen"):
                self._fail(
                    "pick", [obj], "wrong_state", f"{o.name} is inside the closed {parent.name}"
                )
        if o.children:
            names = ", ".join(self.scene.name_of(c) for c in o.children)
            self._fail("pick", [obj], "obstructed", f"{names} on or in {o.name}")
        self._check_blocked("pick", [obj], o.id, o.name)
        self._check_reach("pick", [obj], o)
        self._detach(o)
        o.raw["isPickedUp"] = True
        self._no_longer_blocking(o.id)
        self.scene.data.setdefault("inventoryObjects", []).append(
            {"objectId": o.id, "objectType": o.type}
        )
        self._carry()
        return f"picked {o.name}"

    def _do_place(self, *args: str) -> str:
        held = self.scene.holding
        if len(args) == 1:
            ref = self._resolve_obj("place", args, args[0])
            if not held:
                self._fail("place", args, "robot_state", "the robot holds nothing to place")
            if any(h.id == ref.id for h in held):
                # RAIDER's place(object): put it down where the robot is.
                obj, dest = ref, self._here(args, ref)
            else:  # place(destination): put the held object there
                obj, dest = held[0], ref
        else:
            obj = self._resolve_obj("place", args, args[0])
            dest = self._resolve_obj("place", args, args[1])
            if not any(h.id == obj.id for h in held):
                holding = ", ".join(h.name for h in held) or "nothing"
                self._fail(
                    "place", args, "robot_state", f"the robot does not hold {obj.name} ({holding})"
                )
        if not dest.flag("receptacle"):
            self._fail("place", args, "wrong_property", f"{dest.name} is not a receptacle")
        if dest.flag("openable") and not dest.flag("isOpen"):
            self._fail("place", args, "wrong_state", f"{dest.name} is closed")
        if dest.type in SINGLE_SLOT_TYPES and dest.children:
            names = ", ".join(self.scene.name_of(c) for c in dest.children)
            self._fail("place", args, "obstructed", f"{dest.name} is occupied by {names}")
        self._check_blocked("place", args, dest.id, dest.name)
        self._check_reach("place", args, dest)
        self._release(obj)
        self._shift(obj.raw, self._drop_point(dest))
        self._attach(obj, dest)
        return f"placed {obj.name} on {dest.name}"

    def _here(self, args: Sequence[Any], obj: SceneObject) -> SceneObject:
        """Where ``place(obj)`` puts the held object: the receptacle the robot last approached,
        else the nearest open receptacle within reach, surfaces first (never the Floor or a
        one-slot appliance)."""
        last = self._maybe(self._last_target) if self._last_target else None
        if last is not None and last.flag("receptacle"):
            return last
        reach = float(self.scene.robot["reach"])
        agent = self.scene.agent_xyz
        options = []
        for o in self.scene:
            if (
                o.id == obj.id
                or o.type in ("Floor", *SINGLE_SLOT_TYPES)
                or not o.flag("receptacle")
            ):
                continue
            dist = self.scene.horizontal_distance(agent, o.xyz)
            closed = o.flag("openable") and not o.flag("isOpen")
            full = o.type in SINGLE_SLOT_TYPES and bool(o.children)
            if dist <= reach and not closed and not full:
                # Surfaces before containers: a robot told to put it down puts it on a counter.
                options.append((o.type in CONTAINERS, dist, o.name, o))
        if not options:
            self._fail(
                "place",
                args,
                "out_of_reach",
                f"no free receptacle within reach ({reach:.2f} m) to put {obj.name} on",
            )
        return min(options, key=lambda t: t[:3])[3]

    def _do_open(self, obj: str) -> str:
        return self._open_close("open", obj, True)

    def _do_close(self, obj: str) -> str:
        return self._open_close("close", obj, False)

    def _do_turnon(self, obj: str) -> str:
        return self._toggle("turnon", obj, True)

    def _do_turnoff(self, obj: str) -> str:
        return self._toggle("turnoff", obj, False)

    def _do_slice(self, obj: str) -> str:
        o = self._resolve_obj("slice", [obj], obj)
        if not any(h.type in KNIVES for h in self.scene.holding):
            holding = ", ".join(h.name for h in self.scene.holding) or "nothing"
            self._fail(
                "slice", [obj], "robot_state", f"slicing needs a knife; the robot holds {holding}"
            )
        if not o.flag("sliceable"):
            self._fail("slice", [obj], "wrong_property", f"{o.name} is not sliceable")
        if o.flag("isSliced"):
            self._fail("slice", [obj], "wrong_state", f"{o.name} is already sliced")
        self._check_blocked("slice", [obj], o.id, o.name)
        self._check_reach("slice", [obj], o)
        o.raw["isSliced"] = True
        return f"sliced {o.name}"

    def _do_handover(self, obj: str, person: str) -> str:
        args = [obj, person]
        o = self._resolve_obj("handover", args, obj)
        h = self._resolve_person("handover", args, person)
        if not any(x.id == o.id for x in self.scene.holding):
            holding = ", ".join(x.name for x in self.scene.holding) or "nothing"
            self._fail(
                "handover", args, "robot_state", f"the robot does not hold {o.name} ({holding})"
            )
        who = h.name or h.id
        if not h.looking_at_robot:
            self._fail("handover", args, "wrong_state", f"{who} is not looking at the robot")
        if not h.hands_free:
            self._fail("handover", args, "wrong_state", f"{who} has no free hands")
        dist = self.scene.horizontal_distance(self.scene.agent_xyz, h.xyz)
        limit = float(self.scene.robot["handover_distance"])
        if dist > limit:
            self._fail(
                "handover",
                args,
                "out_of_reach",
                f"{who} is {dist:.2f} m away, farther than the handover distance {limit:.2f} m",
            )
        self._release(o)
        hx, _, hz = h.xyz
        hand = {"x": hx, "y": PERSON_HAND_HEIGHT, "z": hz}
        self._shift(o.raw, hand)
        h.raw.setdefault("holding", [])
        if o.id not in h.raw["holding"]:
            h.raw["holding"].append(o.id)
        return f"handed {o.name} to {who}"

    # ------------------------------------------------------------------ action helpers
    def _go(self, action: str, ref: str) -> str:
        t = self._target(action, ref)
        blockers = self._blockers(t.keys)
        if blockers:
            names = ", ".join(self.scene.name_of(b) for b in blockers)
            self._fail(action, [ref], "obstructed", f"the path to {t.name} is blocked by {names}")
        agent = self.scene.agent_xyz
        if t.kind == "location":
            new = [t.position[0], agent[1], t.position[2]]
            if t.yaw is not None:
                yaw = t.yaw
            elif self.scene.horizontal_distance(agent, new) > 1e-6:
                yaw = _yaw_towards(agent, new)
            else:
                yaw = self.scene.agent_yaw
        else:
            if t.kind == "person":
                stop = PERSON_STANDOFF * float(self.scene.robot["handover_distance"])
            else:
                stop = min(OBJECT_STANDOFF, 0.9 * float(self.scene.robot["reach"]))
            dist = self.scene.horizontal_distance(agent, t.position)
            new = list(agent)
            if dist > stop:
                flat = ((agent[0] - t.position[0]) / dist, (agent[2] - t.position[2]) / dist)
                new[0] = t.position[0] + flat[0] * stop
                new[2] = t.position[2] + flat[1] * stop
            yaw = _yaw_towards(new, t.position) if dist > 1e-6 else self.scene.agent_yaw
        agent_raw = self.scene.data["agent"]
        agent_raw["position"] = {"x": float(new[0]), "y": float(new[1]), "z": float(new[2])}
        agent_raw.setdefault("rotation", {"x": 0.0, "y": 0.0, "z": 0.0})["y"] = yaw
        self._last_target = t.key if t.kind == "object" else None
        self._carry()
        return f"at {t.name} ({self._fmt(agent_raw['position'])}, facing {yaw:.0f} deg)"

    def _open_close(self, action: str, obj: str, value: bool) -> str:
        o = self._resolve_obj(action, [obj], obj)
        self._need_free_hand(action, [obj], f"{action} {o.name}")
        if not o.flag("openable"):
            self._fail(action, [obj], "wrong_property", f"{o.name} cannot be opened or closed")
        if o.flag("isOpen") == value:
            self._fail(
                action, [obj], "wrong_state", f"{o.name} is already {'open' if value else 'closed'}"
            )
        self._check_blocked(action, [obj], o.id, o.name)
        self._check_reach(action, [obj], o)
        o.raw["isOpen"] = value
        o.raw["openness"] = 1.0 if value else 0.0
        return f"{'opened' if value else 'closed'} {o.name}"

    def _toggle(self, action: str, obj: str, value: bool) -> str:
        o = self._resolve_obj(action, [obj], obj)
        self._need_free_hand(action, [obj], f"{action} {o.name}")
        if not o.flag("toggleable"):
            self._fail(action, [obj], "wrong_property", f"{o.name} cannot be turned on or off")
        if o.flag("isToggled") == value:
            self._fail(
                action, [obj], "wrong_state", f"{o.name} is already {'on' if value else 'off'}"
            )
        self._check_blocked(action, [obj], o.id, o.name)
        self._check_reach(action, [obj], o)
        o.raw["isToggled"] = value
        return f"turned {'on' if value else 'off'} {o.name}"

    def _fail(self, action: str, args: Sequence[Any], reason: str, message: str) -> NoReturn:
        raise PreconditionFailed(action, args, reason, message)

    def _canonical(self, action: str, args: Sequence[Any] | None) -> str:
        key = str(action).strip().lower().replace("-", "_").replace(" ", "_")
        name = ALIASES.get(key, key)
        if name not in ACTIONS:
            raise PreconditionFailed(
                str(action),
                args or [],
                "bad_action",
                f"unknown action {action!r}: expected one of {', '.join(ACTIONS)}",
            )
        if args is not None and len(args) not in ACTIONS[name]:
            arity = " or ".join(map(str, ACTIONS[name]))
            raise PreconditionFailed(
                name, args, "bad_action", f"{name} takes {arity} argument(s), got {len(args)}"
            )
        return name

    def _resolve_obj(self, action: str, args: Sequence[Any], ref: str) -> SceneObject:
        try:
            return self.scene.resolve(ref)
        except ToolError as exc:
            reason = "ambiguity" if "ambiguous" in str(exc) else "not_present"
            self._fail(action, args, reason, str(exc))
            raise  # pragma: no cover - _fail always raises

    def _resolve_person(self, action: str, args: Sequence[Any], ref: str) -> Human:
        try:
            h = self.scene.human(ref)
        except ToolError as exc:
            self._fail(action, args, "not_present", str(exc))
            raise  # pragma: no cover
        if not h.name:
            self._fail(action, args, "not_present", f"person {h.id} is not recognised")
        return h

    def _target(self, action: str, ref: str) -> _Target:
        locations = self.scene.data.get("locations") or {}
        if ref in locations:
            raw = locations[ref]
            yaw = raw.get("yaw") if isinstance(raw, dict) else None
            return _Target(
                "location",
                ref,
                ref,
                self.scene.location_points[ref],
                {ref},
                None if yaw is None else float(yaw),
            )
        try:
            h = self.scene.human(ref)
        except ToolError:
            h = None
        if h is not None:
            if not h.name:
                self._fail(action, [ref], "not_present", f"person {h.id} is not recognised")
            return _Target("person", h.id, h.name, h.xyz, {h.id, h.name})
        try:
            o = self.scene.resolve(ref)
        except ToolError as exc:
            if "ambiguous" in str(exc):
                self._fail(action, [ref], "ambiguity", str(exc))
            places = ", ".join(sorted(locations)) or "none"
            people = (
                ", ".join(f"{x.id} ({x.name or 'unrecognised'})" for x in self.scene.humans)
                or "none"
            )
            self._fail(
                action,
                [ref],
                "not_present",
                f"no location, recognised person or object {ref!r}; "
                f"locations: {places}; people: {people}",
            )
            raise  # pragma: no cover
        if self._is_held(o):
            self._fail(action, [ref], "wrong_state", f"the robot is holding {o.name}")
        return _Target("object", o.id, o.name, o.xyz, {o.id, o.name})

    def _blocked_key(self, target: str) -> str:
        """The key ``blocked`` uses for a target: location name, person id or objectId."""
        if target in (self.scene.data.get("locations") or {}):
            return target
        try:
            return self.scene.human(target).id
        except ToolError:
            return self._object(target).id

    def _key_or_none(self, ref: str) -> str | None:
        try:
            return self._blocked_key(ref)
        except (ToolError, SceneError):
            return None

    def _blockers(self, keys: set[str]) -> list[str]:
        """Blockers ``blocked`` lists for any spelling of one target (``keys``)."""
        out: list[str] = []
        for key, blockers in (self.scene.data.get("blocked") or {}).items():
            if key in keys or self._key_or_none(key) in keys:
                out.extend(b for b in blockers if b not in out)
        return out

    def _no_longer_blocking(self, object_id: str) -> None:
        """A blocker the robot picked up is in its hand, no longer in anyone's way."""
        blocked = self.scene.data.get("blocked") or {}
        for key in list(blocked):
            if object_id in blocked[key]:
                blocked[key] = [b for b in blocked[key] if b != object_id]
                if not blocked[key]:
                    del blocked[key]

    def _check_blocked(self, action: str, args: Sequence[Any], object_id: str, name: str) -> None:
        blockers = self._blockers({object_id, name})
        if blockers:
            names = ", ".join(self.scene.name_of(b) for b in blockers)
            self._fail(action, args, "obstructed", f"{name} is blocked by {names}")

    def _check_reach(self, action: str, args: Sequence[Any], o: SceneObject) -> None:
        dist = self.scene.horizontal_distance(self.scene.agent_xyz, o.xyz)
        reach = float(self.scene.robot["reach"])
        if dist > reach:
            self._fail(
                action,
                args,
                "out_of_reach",
                f"{o.name} is {dist:.2f} m away, beyond the robot's reach of {reach:.2f} m",
            )

    def _need_free_hand(self, action: str, args: Sequence[Any], what: str) -> None:
        held = self.scene.holding
        if len(held) >= int(self.scene.robot["arms"]):
            names = ", ".join(h.name for h in held)
            self._fail(action, args, "robot_state", f"cannot {what}: the hand is busy with {names}")

    def _object(self, ref: str) -> SceneObject:
        return self.scene.resolve(ref)

    def _maybe(self, object_id: str) -> SceneObject | None:
        try:
            return self.scene.by_id(object_id)
        except ToolError:
            return None

    def _is_held(self, o: SceneObject) -> bool:
        return any(h.id == o.id for h in self.scene.holding)

    def _detach(self, o: SceneObject) -> None:
        """Take ``o`` off whatever holds it (both sides of the receptacle links)."""
        for pid in o.parents:
            parent = self._maybe(pid)
            if parent is not None and parent.raw.get("receptacleObjectIds"):
                parent.raw["receptacleObjectIds"] = [
                    c for c in parent.raw["receptacleObjectIds"] if c != o.id
                ]
        o.raw["parentReceptacles"] = None

    def _attach(self, o: SceneObject, dest: SceneObject) -> None:
        o.raw["parentReceptacles"] = [dest.id]
        kids = list(dest.raw.get("receptacleObjectIds") or [])
        if o.id not in kids:
            kids.append(o.id)
        dest.raw["receptacleObjectIds"] = kids

    def _release(self, o: SceneObject) -> None:
        inv = self.scene.data.get("inventoryObjects") or []
        self.scene.data["inventoryObjects"] = [i for i in inv if i.get("objectId") != o.id]
        o.raw["isPickedUp"] = False
        o.raw["parentReceptacles"] = None

    def _carry(self) -> None:
        """Held objects travel in front of the robot."""
        agent = self.scene.agent_xyz
        hx, hz = self.scene.heading_xz()
        for o in self.scene.holding:
            self._shift(
                o.raw,
                {
                    "x": float(agent[0] + HAND_OFFSET * hx),
                    "y": float(agent[1]),
                    "z": float(agent[2] + HAND_OFFSET * hz),
                },
            )

    def _drop_point(self, dest: SceneObject) -> dict[str, float]:
        """Where a placed object lands: the point of ``dest``'s top nearest to the robot."""
        box = dest.box_corners()
        agent = self.scene.agent_xyz
        if box is None:
            x, y, z = dest.xyz
            return {"x": x, "y": y, "z": z}
        lo, hi = box
        # A few centimetres inside the edge, so the object rests on the receptacle.
        margin = [min(0.05, (h - low) / 2) for low, h in zip(lo, hi, strict=True)]
        x = _clip(agent[0], lo[0] + margin[0], hi[0] - margin[0])
        z = _clip(agent[2], lo[2] + margin[2], hi[2] - margin[2])
        y = (
            float(hi[1])
            if dest.type not in ("Fridge", "Cabinet", "Drawer", "Microwave")
            else float((lo[1] + hi[1]) / 2)
        )
        return {"x": x, "y": y, "z": z}

    @staticmethod
    def _shift(raw: dict[str, Any], pos: dict[str, float]) -> None:
        """Move an object's position and both of its bounding boxes by the same offset."""
        old = raw["position"]
        delta = (
            pos["x"] - float(old["x"]),
            pos["y"] - float(old.get("y", 0.0)),
            pos["z"] - float(old["z"]),
        )
        raw["position"] = {"x": pos["x"], "y": pos["y"], "z": pos["z"]}
        for key in ("axisAlignedBoundingBox", "objectOrientedBoundingBox"):
            box = raw.get(key)
            if not isinstance(box, dict):
                continue
            center = box.get("center")
            if isinstance(center, dict):
                box["center"] = {
                    "x": float(center["x"]) + delta[0],
                    "y": float(center.get("y", 0.0)) + delta[1],
                    "z": float(center["z"]) + delta[2],
                }
            if box.get("cornerPoints"):
                box["cornerPoints"] = [
                    [float(c[0]) + delta[0], float(c[1]) + delta[1], float(c[2]) + delta[2]]
                    for c in box["cornerPoints"]
                ]

    @staticmethod
    def _fmt(pos: dict[str, float]) -> str:
        return f"x={pos['x']:.2f}, z={pos['z']:.2f}"

    def __repr__(self) -> str:
        return f"SimWorld({self.scene.source!r}, {len(self.scene)} objects, {len(self.log)} log entries)"
