"""Events between ticks: world changes a test injects or schedules into a :class:`SimWorld`.

:class:`WorldEvents` is the part of :class:`~bt_raider.simulation.simworld.SimWorld` that changes
the world from outside the robot -- :meth:`~WorldEvents.inject` (now),
:meth:`~WorldEvents.schedule` (after some actions or ticks, or just before an action), and the
helpers :meth:`~WorldEvents.move_object`, :meth:`~WorldEvents.block`,
:meth:`~WorldEvents.unblock`, :meth:`~WorldEvents.set_human`, :meth:`~WorldEvents.set_state`,
:meth:`~WorldEvents.set_agent` -- with the machinery that fires and logs them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from bt_raider.errors import SceneError
from bt_raider.perception.scene import CAPABILITIES, STATES, Scene, SceneObject

#: A world change: called with the world it changes (the :class:`SimWorld` this module's
#: :class:`WorldEvents` is mixed into; typed loosely so that this module, below ``simworld``,
#: does not name it).
WorldChange: TypeAlias = Callable[[Any], Any]


@dataclass
class ScheduledEvent:
    """A world change waiting for its moment (see :meth:`SimWorld.schedule`)."""

    fn: WorldChange
    label: str
    after_actions: int | None = None
    after_ticks: int | None = None
    before: str | None = None
    fired: bool = False
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class WorldEvents:
    """World changes from outside the robot; mixed into :class:`SimWorld`, whose state it edits."""

    # What this mixin uses of its host, declared for the type checker (this module may not
    # import ``simworld``). The annotations make no class attributes; SimWorld.__init__ sets
    # them. The method stubs exist only for the type checker; SimWorld defines them.
    scene: Scene
    log: list[dict[str, Any]]
    ticks: int
    actions_done: int
    _events: list[ScheduledEvent]
    _lock: threading.RLock

    if TYPE_CHECKING:

        def _canonical(self, action: str, args: Sequence[Any] | None) -> str: ...
        def _object(self, ref: str) -> SceneObject: ...
        def _is_held(self, o: SceneObject) -> bool: ...
        def _detach(self, o: SceneObject) -> None: ...
        def _attach(self, o: SceneObject, dest: SceneObject) -> None: ...
        def _carry(self) -> None: ...
        def _blocked_key(self, target: str) -> str: ...
        def _key_or_none(self, ref: str) -> str | None: ...
        @staticmethod
        def _shift(raw: dict[str, Any], pos: dict[str, float]) -> None: ...
        @staticmethod
        def _fmt(pos: dict[str, float]) -> str: ...

    # ------------------------------------------------------------------ events
    def inject(self, fn: WorldChange, label: str | None = None) -> Any:
        """Apply a world change now (between ticks) and log it; returns what ``fn`` returns."""
        with self._lock:
            return self._run_event(fn, _label(fn, label))

    def schedule(
        self,
        fn: WorldChange,
        *,
        after_actions: int | None = None,
        after_ticks: int | None = None,
        before: str | None = None,
        label: str | None = None,
    ) -> ScheduledEvent:
        """Apply ``fn(world)`` later: exactly one of the three triggers must be given.

        Args:
            fn: the change, e.g. ``lambda w: w.set_human("person_1", looking_at_robot=False)``.
            after_actions: fire once this many more actions were executed (failed ones count).
            after_ticks: fire on the :meth:`tick` call that many ticks from now.
            before: fire just before the next execution of this action (e.g. ``"handover"``),
                so the action meets a world its check did not see.
            label: name for the log.

        Returns:
            The :class:`ScheduledEvent` (call ``.cancel()`` to withdraw it).
        """
        given = [t for t in (after_actions, after_ticks, before) if t is not None]
        if len(given) != 1:
            raise SceneError(
                "schedule needs exactly one trigger: after_actions=N, after_ticks=N or before=ACTION"
            )
        for key, val in (("after_actions", after_actions), ("after_ticks", after_ticks)):
            if val is not None and (not isinstance(val, int) or val < 0):
                raise SceneError(f"schedule: {key} must be a non-negative int, got {val!r}")
        if before is not None:
            before = self._canonical(before, None)
        with self._lock:
            event = ScheduledEvent(
                fn,
                _label(fn, label),
                after_actions=None if after_actions is None else self.actions_done + after_actions,
                after_ticks=None if after_ticks is None else self.ticks + after_ticks,
                before=before,
            )
            self._events.append(event)
            if after_actions == 0 or after_ticks == 0:
                self._fire_due()
            return event

    def tick(self) -> None:
        """Advance the world's tick counter and fire events that are due.

        Hook it to a tree: ``tree.add_post_tick_handler(lambda _tree: world.tick())``.
        """
        with self._lock:
            self.ticks += 1
            self._fire_due()

    @property
    def pending_events(self) -> list[ScheduledEvent]:
        return [e for e in self._events if not (e.fired or e.cancelled)]

    # ------------------------------------------------------------------ event helpers
    def move_object(self, obj: str, position: Any, *, parent: str | None = None) -> None:
        """Move an object (a person moving it, not the robot); keep its height unless given.

        Args:
            obj: objectId or display name.
            position: ``{x, y, z}``, ``(x, z)`` or ``(x, y, z)``.
            parent: when given, the object now rests on/in this receptacle (both sides of
                the receptacle links are updated).
        """
        with self._lock:
            target = self._object(obj)
            if self._is_held(target):
                raise SceneError(f"cannot move {target.name}: the robot is holding it")
            pos = xyz_position(position, f"move_object({target.name})", default_y=target.xyz[1])
            self._shift(target.raw, pos)
            if parent is not None:
                dest = self._object(parent)
                self._detach(target)
                self._attach(target, dest)
            self._note(f"move_object({target.name}, {self._fmt(pos)})")

    def block(self, target: str, blocker: str) -> None:
        """Record that ``blocker`` (an object) blocks reaching or approaching ``target``."""
        with self._lock:
            key = self._blocked_key(target)
            blocker_id = self._object(blocker).id
            blocked = self.scene.data.setdefault("blocked", {})
            if blocker_id not in blocked.setdefault(key, []):
                blocked[key].append(blocker_id)
            self._note(f"block({key}, {self.scene.name_of(blocker_id)})")

    def unblock(self, target: str) -> list[str]:
        """Clear every blocker of ``target``; returns the blockers' objectIds."""
        with self._lock:
            key = self._blocked_key(target)
            blocked = self.scene.data.get("blocked") or {}
            removed = []
            for k in [k for k in blocked if k == key or self._key_or_none(k) == key]:
                removed.extend(blocked.pop(k))
            self._note(f"unblock({key})")
            return removed

    def set_human(self, person: str, **fields: Any) -> None:
        """Change a person: ``name`` (she introduced herself), ``looking_at_robot``,
        ``hands_free``, ``position``, ``holding``.
        """
        with self._lock:
            human = self.scene.human(person)
            for key, val in fields.items():
                if key not in HUMAN_FIELDS:
                    raise SceneError(
                        f"set_human: unknown field {key!r}: expected one of {', '.join(HUMAN_FIELDS)}"
                    )
                if key == "position":
                    val = xyz_position(val, f"set_human({human.id}).position", human.xyz[1])
                elif key in ("looking_at_robot", "hands_free") and not isinstance(val, bool):
                    raise SceneError(f"set_human: {key} must be true or false, got {val!r}")
                elif key == "name" and val is not None and not isinstance(val, str):
                    raise SceneError(f"set_human: name must be a string or None, got {val!r}")
                human.raw[key] = val
            shown = ", ".join(f"{k}={v!r}" for k, v in fields.items())
            self._note(f"set_human({human.id}, {shown})")

    def set_state(self, obj: str, flag: str, value: bool) -> None:
        """Set one AI2-THOR state or capability flag of an object."""
        with self._lock:
            target = self._object(obj)
            if flag not in STATES + CAPABILITIES:
                raise SceneError(
                    f"set_state: unknown flag {flag!r}: expected one of "
                    + ", ".join(STATES + CAPABILITIES)
                )
            if not isinstance(value, bool):
                raise SceneError(f"set_state: {flag} must be true or false, got {value!r}")
            target.raw[flag] = value
            if flag == "isOpen":
                target.raw["openness"] = 1.0 if value else 0.0
            self._note(f"set_state({target.name}, {flag}={value})")

    def set_agent(self, position: Any = None, yaw: float | None = None) -> None:
        """Put the robot somewhere (a test's starting pose); what it holds moves with it."""
        with self._lock:
            agent = self.scene.data["agent"]
            if position is not None:
                agent["position"] = xyz_position(position, "set_agent", self.scene.agent_xyz[1])
            if yaw is not None:
                agent.setdefault("rotation", {"x": 0.0, "y": 0.0, "z": 0.0})["y"] = float(yaw) % 360
            self._carry()
            self._note(f"set_agent({agent['position']}, yaw={self.scene.agent_yaw:.0f})")

    # ------------------------------------------------------------------ event machinery
    def _run_event(self, fn: WorldChange, label: str) -> Any:
        out = fn(self)
        self.scene.reindex()  # an event may have added objects or people
        self.log.append(
            {
                "kind": "event",
                "action": label,
                "args": [],
                "ok": True,
                "result": None if out is None else str(out),
                "reason": None,
                "error": None,
                "tick": self.ticks,
            }
        )
        return out

    def _note(self, text: str) -> None:
        """Log a helper's change (helpers called inside an event are logged too)."""
        self.log.append(
            {
                "kind": "event",
                "action": text,
                "args": [],
                "ok": True,
                "result": None,
                "reason": None,
                "error": None,
                "tick": self.ticks,
            }
        )

    def _fire_before(self, action: str) -> None:
        for ev in list(self._events):
            if not (ev.fired or ev.cancelled) and ev.before == action:
                ev.fired = True
                self._run_event(ev.fn, ev.label)

    def _after_action(self) -> None:
        self.actions_done += 1
        self._fire_due()

    def _fire_due(self) -> None:
        for ev in list(self._events):
            if ev.fired or ev.cancelled:
                continue
            due = (ev.after_actions is not None and self.actions_done >= ev.after_actions) or (
                ev.after_ticks is not None and self.ticks >= ev.after_ticks
            )
            if due:
                ev.fired = True
                self._run_event(ev.fn, ev.label)


def _label(fn: WorldChange, label: str | None) -> str:
    """An event's name in the log: ``label``, else the function's name."""
    if label:
        return label
    name: str = getattr(fn, "__name__", "event")
    return name


#: Fields :meth:`SimWorld.set_human` may change.
HUMAN_FIELDS = ("name", "position", "looking_at_robot", "hands_free", "holding")


def _is_array(value: Any) -> bool:
    """Whether ``value`` is a numpy array (only when numpy is loaded can it be one)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, getattr(np, "ndarray", ()))


def xyz_position(value: Any, where: str, default_y: float = 0.0) -> dict[str, float]:
    """A position from ``{x, y, z}``, ``(x, z)`` or ``(x, y, z)``; SceneError otherwise."""
    if isinstance(value, dict):
        try:
            return {
                "x": float(value["x"]),
                "y": float(value.get("y", default_y)),
                "z": float(value["z"]),
            }
        except (KeyError, TypeError, ValueError):
            pass
    elif (isinstance(value, (list, tuple)) or _is_array(value)) and len(value) in (2, 3):
        try:
            nums = [float(v) for v in value]
        except (TypeError, ValueError):
            nums = []
        if len(nums) == 2:
            return {"x": nums[0], "y": float(default_y), "z": nums[1]}
        if len(nums) == 3:
            return {"x": nums[0], "y": nums[1], "z": nums[2]}
    raise SceneError(f"{where}: expected {{x, y, z}}, (x, z) or (x, y, z), got {value!r}")
