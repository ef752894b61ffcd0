""":class:`TraceRecorder`: a tick-by-tick trace of any py_trees tree, guards included.

Attach it to a :class:`py_trees.trees.BehaviourTree` (it adds a post-tick handler) or to a
root behaviour (then call :meth:`TraceRecorder.tick` instead of ``root.tick_once()``)::

    recorder = TraceRecorder(tree, human=human, world=world)
    while tree.root.status in (Status.RUNNING, Status.INVALID):
        tree.tick()
    recorder.write("trace.json")

After every tick it walks the tree -- and the recovery subtree each guard grafted, which
py_trees' own iteration does not see -- and keeps only what changed: nodes added and removed,
statuses, feedback messages, the guards' phases, plus the tick's events (checks submitted,
verdicts with their Ground/Ask/Answer/Issue trace, recovery code and the nodes it compiled
to, what the robot asked and was answered, robot actions, world changes). A tick where nothing
changed is not written, so long runs stay small. The format is ``trace.schema.json`` next to
this module; :mod:`bt_raider.viewer.server` shows it live, :mod:`bt_raider.viewer.page` as a
file.

A guard is any node with ``phase`` and ``verdict`` attributes (``RaiderGuard``): its ``plan``,
``recovery_tree``, ``attempts``, ``query`` and ``recovery.human`` are read when present, so the
recorder imports nothing of the runtime and works on trees built by ``guard_tree``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import py_trees

from bt_raider.errors import UsageError
from bt_raider.viewer.trace import FORMAT, RESERVED_KEYS, VERSION

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing.TypeIs is Python 3.13+

#: A source of extra events: called after each tick, returns the events that happened since.
EventSource = Callable[[], Iterable[dict[str, Any]]]

_FINISHED = ("SUCCESS", "FAILURE")


def shape_of(node: py_trees.behaviour.Behaviour) -> str:
    """The py_trees family of a node: how the viewer and the dot picture draw it."""
    if isinstance(node, py_trees.composites.Selector):
        return "selector"
    if isinstance(node, py_trees.composites.Sequence):
        return "sequence"
    if isinstance(node, py_trees.composites.Parallel):
        return "parallel"
    if isinstance(node, py_trees.decorators.Decorator):
        return "decorator"
    return "behaviour"


class _GuardLike(Protocol):
    """What :func:`is_guard` sees in a RAIDER-style guard."""

    phase: Any
    verdict: Any


def is_guard(node: object) -> TypeIs[_GuardLike]:
    """True for a RAIDER-style guard (a node with ``phase`` and ``verdict``)."""
    return hasattr(node, "phase") and hasattr(node, "verdict")


def walk(
    root: py_trees.behaviour.Behaviour,
) -> Iterator[tuple[py_trees.behaviour.Behaviour, Any, bool]]:
    """Every node in pre-order, with its parent and whether it roots a grafted recovery.

    A guard's recovery subtree follows the guard's own child.
    """
    stack: list[tuple[Any, Any, bool]] = [(root, None, False)]
    while stack:
        node, parent, grafted = stack.pop()
        yield node, parent, grafted
        kids: list[tuple[Any, Any, bool]] = [(child, node, False) for child in node.children]
        if is_guard(node):
            tree = getattr(node, "recovery_tree", None)
            if tree is not None:
                kids.append((tree, node, True))
        stack.extend(reversed(kids))


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (anything unknown becomes its ``str``).

    A number that is not finite becomes its name (``"NaN"``, ``"Infinity"``): JSON has no such
    numbers, and a trace holding one is refused by the viewer and by browsers' ``JSON.parse``.
    """
    return json.loads(json.dumps(value, default=str), parse_constant=str)


def verdict_data(verdict: Any) -> dict[str, Any]:
    """A verdict as the trace stores it: everything, including questions and trace."""
    if hasattr(verdict, "as_dict"):
        data = verdict.as_dict()
    elif hasattr(verdict, "to_json"):
        data = verdict.to_json()
    else:
        data = {"category": "unknown", "final_response": "unfeasibility"}
        data["explanation"] = str(verdict)
    data = jsonable(data)
    data.setdefault("explanation", "")
    if isinstance(data.get("elapsed_s"), float):
        data["elapsed_s"] = round(data["elapsed_s"], 4)
    return data


def _foreign_entry(entry: Any) -> dict[str, Any]:
    """An entry of a user robot's own ``log`` (any shape): a call ``(action, args)`` reads as
    one; anything else is shown as it prints. Never a crash: the log is not ours."""
    if isinstance(entry, (tuple, list)) and entry and isinstance(entry[0], str):
        rest = entry[1] if len(entry) == 2 and isinstance(entry[1], (list, tuple)) else entry[1:]
        call = f"{entry[0]}({', '.join(str(a) for a in rest)})"
        return {"kind": "action", "text": call, "call": call, "ok": True, "result": None}
    return {"kind": "world", "text": str(entry)[:500]}


def world_events(world: Any) -> EventSource:
    """Events from a SimWorld's ``log``: robot actions and world changes, once each.

    A user robot's ``log`` of its own entries (tuples, strings) is shown as it is.
    """
    seen = 0

    def poll() -> list[dict[str, Any]]:
        nonlocal seen
        log = world.log
        new, seen = log[seen:], len(log)
        out: list[dict[str, Any]] = []
        for entry in new:
            if not isinstance(entry, dict):
                out.append(_foreign_entry(entry))
                continue
            if entry.get("kind") == "event":
                out.append({"kind": "world", "text": str(entry.get("action"))})
                continue
            call = f"{entry.get('action')}({', '.join(str(a) for a in entry.get('args') or [])})"
            ok = bool(entry.get("ok"))
            text = (
                f"{call} -> {entry.get('result')}" if ok else f"{call} FAILED: {entry.get('error')}"
            )
            out.append(
                {
                    "kind": "action",
                    "text": text,
                    "call": call,
                    "ok": ok,
                    "result": jsonable(entry.get("result")),
                    "error": entry.get("error"),
                }
            )
        return out

    return poll


class TraceRecorder:
    """Record a py_trees tree tick by tick, in the trace format of ``trace.schema.json``.

    Args:
        tree: a :class:`py_trees.trees.BehaviourTree` (recorded after each ``tree.tick()``)
            or a root behaviour (tick it with :meth:`tick`, or call :meth:`record` after
            each of your own ticks).
        human: the person the robot talks to (anything with a ``transcript`` of exchanges);
            the humans of the guards' recoveries are found by themselves.
        world: a SimWorld (anything with a ``log`` of SimWorld entries): robot actions and
            world changes become events.
        sources: more event sources, each called after every tick.
        title: the trace's title (default: the root's name).
        clock: seconds, for the ``t`` of each tick.

    Attributes:
        ticks: the recorded tick entries (only ticks where something changed).
        tick_count: ticks recorded so far (tick 0 is the tree before its first tick).
        finished: True once :meth:`finish` was called.
    """

    def __init__(
        self,
        tree: py_trees.trees.BehaviourTree | py_trees.behaviour.Behaviour,
        *,
        human: Any = None,
        world: Any = None,
        sources: Iterable[EventSource] = (),
        title: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(tree, py_trees.trees.BehaviourTree):
            self.root = tree.root
            self.tree: py_trees.trees.BehaviourTree | None = tree
            tree.add_post_tick_handler(self._post_tick)
        elif isinstance(tree, py_trees.behaviour.Behaviour):
            self.root = tree
            self.tree = None
        else:
            raise UsageError(
                f"TraceRecorder needs a py_trees BehaviourTree or Behaviour, got {type(tree).__name__}"
            )
        self.title = title or self.root.name
        self.started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.clock = clock
        self._t0 = clock()
        self.ticks: list[dict[str, Any]] = []
        self.tick_count = 0
        self.finished = False
        self.extra: dict[str, Any] = {}
        self._sources = list(sources)
        if world is not None:
            self._sources.append(world_events(world))
        self._humans: dict[int, Any] = {}
        self._said: dict[int, int] = {}
        if human is not None:
            self._add_human(human)
        self._ids: dict[Any, int] = {}  # behaviour.id -> trace id
        self._guard_ids: set[int] = set()
        self._next_id = 0
        self._status: dict[int, str] = {}
        self._feedback: dict[int, str] = {}
        self._guard_state: dict[int, dict[str, Any]] = {}
        self._seen_verdict: dict[int, Any] = {}
        self._seen_plan: dict[int, Any] = {}
        self._seen_intent: dict[int, list[Any]] = {}  # designation, resolved, refusal
        self._new_plans: list[tuple[Any, int, Any]] = []
        self._recovering: int | None = None  # the last guard seen recovering
        self._acting: int | None = None  # the guard acting in the last tick
        self._events: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self.record(tick=0)

    # ------------------------------------------------------------------ recording
    def tick(self) -> None:
        """Tick the root once, then record the tick (for a root behaviour, not a tree)."""
        if self.tree is not None:
            self.tree.tick()  # the post-tick handler records
            return
        self.root.tick_once()
        self.record()

    def _post_tick(self, _tree: Any) -> None:
        self.record()

    def detach(self) -> None:
        """Stop recording a BehaviourTree's ticks (its post-tick handler is removed)."""
        if self.tree is not None and self._post_tick in self.tree.post_tick_handlers:
            self.tree.post_tick_handlers.remove(self._post_tick)

    def event(self, kind: str, text: str, *, node: Any = None, **data: Any) -> None:
        """Add an event to the tick being run (between ticks: to the next one).

        Args:
            kind: what happened (``note``, ``action``, ... see the schema's list).
            text: one line for the timeline.
            node: the behaviour (or trace id) it concerns, if any.
            **data: more JSON fields.
        """
        if node is not None and not isinstance(node, int):
            node = self._ids.get(getattr(node, "id", None))
        with self._cond:
            self._events.append({"kind": kind, "node": node, "text": str(text), **jsonable(data)})

    def record(self, *, tick: int | None = None) -> dict[str, Any] | None:
        """Snapshot the tree after a tick; return the entry written (None: nothing changed)."""
        with self._cond:
            if tick is None:
                self.tick_count += 1
                tick = self.tick_count
            entry: dict[str, Any] = {"tick": tick, "t": self._elapsed()}
            events: list[dict[str, Any]] = []
            results: list[dict[str, Any]] = []  # guards that finished: after what they did
            self._snapshot(entry, events, results)
            self._transcripts(events)
            for source in self._sources:
                actor = self._actor()
                for item in source():
                    events.append({"node": actor, **jsonable(dict(item))})
            events.extend(self._events)
            events.extend(results)
            self._events = []
            if events:
                entry["events"] = events
            if len(entry) == 2 and tick != 0:
                return None
            self.ticks.append(entry)
            self._cond.notify_all()
            return entry

    def _snapshot(
        self, entry: dict[str, Any], events: list[dict[str, Any]], results: list[dict[str, Any]]
    ) -> None:
        added: list[dict[str, Any]] = []
        status: dict[str, str] = {}
        feedback: dict[str, str] = {}
        guards: dict[str, dict[str, Any]] = {}
        alive: set[int] = set()
        running: int | None = None  # a running guard that is recovering or acting
        finishing: int | None = None  # a guard that finished in this tick
        guard_ids = self._guard_ids
        for node, parent, grafted in walk(self.root):
            nid = self._ids.get(node.id)
            if nid is None:
                nid = self._add_node(node, parent, grafted, added)
            alive.add(nid)
            guard = nid in guard_ids
            value = node.status.value
            if self._status.get(nid) != value:
                self._status[nid] = value
                status[str(nid)] = value
                if guard and value in _FINISHED:
                    finishing = nid if finishing is None else finishing
                    text = f"{value}: {node.feedback_message}"
                    results.append({"kind": "result", "node": nid, "text": text, "status": value})
            message = node.feedback_message or ""
            if message.__class__ is not str:
                message = str(message)
            if self._feedback.get(nid, "") != message:
                self._feedback[nid] = message
                feedback[str(nid)] = message
            if guard:
                self._guard(node, nid, guards, events)
                busy = self._guard_state[nid]["phase"] in ("recovering", "acting")
                if running is None and value == "RUNNING" and busy:
                    running = nid
        self._acting = running if running is not None else finishing
        for node, nid, plan in self._new_plans:
            events.append(self._recovery_event(node, nid, plan))
        self._new_plans = []
        removed = sorted(set(self._status) - alive)
        for nid in removed:
            self._status.pop(nid, None)
            self._feedback.pop(nid, None)
        if removed:
            gone = set(removed)
            self._ids = {k: v for k, v in self._ids.items() if v not in gone}
        for key, part in (
            ("add", added),
            ("remove", removed),
            ("status", status),
            ("feedback", feedback),
            ("guards", guards),
        ):
            if part:
                entry[key] = part

    def _add_node(self, node: Any, parent: Any, grafted: bool, added: list[dict[str, Any]]) -> int:
        nid = self._next_id
        self._next_id += 1
        self._ids[node.id] = nid
        self._status[nid] = "INVALID"
        data: dict[str, Any] = {
            "id": nid,
            "name": node.name,
            "type": type(node).__name__,
            "shape": shape_of(node),
            "parent": None if parent is None else self._ids.get(parent.id),
        }
        if is_guard(node):
            data["guard"] = True
            guard_id = getattr(node, "guard_id", None)
            if isinstance(guard_id, str):
                data["guard_id"] = guard_id
            self._guard_ids.add(nid)
            human = getattr(getattr(node, "recovery", None), "human", None)
            if human is not None:
                self._add_human(human)
        if grafted:
            data["recovery"] = True
        added.append(data)
        return nid

    def _guard(
        self, node: Any, nid: int, guards: dict[str, dict[str, Any]], events: list[dict[str, Any]]
    ) -> None:
        phase = getattr(node.phase, "value", node.phase)
        query = getattr(node, "query", None)
        state = {
            "phase": str(phase),
            "attempts": int(getattr(node, "attempts", 0) or 0),
            "query": None if query is None else str(query),
        }
        old = self._guard_state.get(nid, {})
        changed = {k: v for k, v in state.items() if old.get(k) != v}
        self._guard_state[nid] = state
        intent = self._intent(node, nid)
        if changed or intent:
            guards[str(nid)] = {**changed, **intent}
        if state["phase"] == "recovering":
            self._recovering = nid
        if "phase" in changed and state["phase"] == "checking":
            text = f"check {state['query'] or 'submitted'}"
            events.append({"kind": "check", "node": nid, "text": text, "query": state["query"]})
        verdict = getattr(node, "verdict", None)
        if verdict is not None and verdict is not self._seen_verdict.get(nid):
            self._seen_verdict[nid] = verdict
            data = verdict_data(verdict)
            text = f"{data.get('category')}: {data.get('explanation')}"
            events.append({"kind": "verdict", "node": nid, "text": text, "verdict": data})
        plan = getattr(node, "plan", None)
        if plan is not None and plan is not self._seen_plan.get(nid):
            self._seen_plan[nid] = plan
            # Written once the walk has numbered the subtree (it comes after the guard).
            self._new_plans.append((node, nid, plan))

    def _intent(self, node: Any, nid: int) -> dict[str, Any]:
        """What changed of the guard's designation, released arguments and refusal."""
        seen = self._seen_intent.setdefault(nid, [None, None, None])
        out: dict[str, Any] = {}
        designation = getattr(node, "designation", None)
        if designation is not seen[0]:
            seen[0] = designation
            as_dict = getattr(designation, "as_dict", None)
            out["designation"] = jsonable(as_dict()) if callable(as_dict) else None
        resolved = getattr(node, "resolved", None)
        if resolved is not seen[1]:
            seen[1] = resolved
            args = getattr(resolved, "args", None)
            out["released"] = None if args is None else [str(a) for a in args]
        refusal = getattr(node, "refusal", None)
        if refusal != seen[2]:
            seen[2] = refusal
            out["refusal"] = None if refusal is None else str(refusal)
        return out

    def _recovery_event(self, node: Any, nid: int, plan: Any) -> dict[str, Any]:
        code = str(getattr(plan, "code", plan))
        event: dict[str, Any] = {
            "kind": "recovery",
            "node": nid,
            "text": "; ".join(code.splitlines()),
            "code": code,
            "proposals": int(getattr(plan, "proposals", 1) or 1),
            "rejected": [str(r) for r in getattr(plan, "rejected", []) or []],
            "gives_up": bool(getattr(plan, "gives_up", False)),
        }
        tree = getattr(node, "recovery_tree", None)
        if tree is not None:
            event["subtree"] = self._ids.get(tree.id)
            depth = {tree.id: 0}
            compiled = []
            for child, parent, _grafted in walk(tree):
                d = 0 if parent is None or child is tree else depth[parent.id] + 1
                depth[child.id] = d
                compiled.append({"depth": d, "name": child.name, "type": type(child).__name__})
            event["compiled"] = compiled
        return event

    def _actor(self) -> int | None:
        """The guard acting in the last tick (else the last one that recovered), or None."""
        return self._acting if self._acting is not None else self._recovering

    def _add_human(self, human: Any) -> None:
        if hasattr(human, "transcript") and id(human) not in self._humans:
            self._humans[id(human)] = human
            self._said[id(human)] = 0

    def _transcripts(self, events: list[dict[str, Any]]) -> None:
        for key, human in self._humans.items():
            transcript = human.transcript
            new = transcript[self._said[key] :]
            self._said[key] = len(transcript)
            for ex in new:
                kind = getattr(ex, "kind", "say")
                text = str(getattr(ex, "text", ex))
                event = {"kind": kind if kind in ("ask", "say", "wait") else "say", "text": text}
                event["node"] = self._actor()
                answer = getattr(ex, "answer", None)
                if answer is not None:
                    event["answer"] = str(answer)
                events.append(event)

    # ------------------------------------------------------------------ output
    def finish(self, **extra: Any) -> None:
        """Mark the run as over (live viewers stop waiting); ``extra`` goes into the file."""
        bad = RESERVED_KEYS & set(extra)
        if bad:
            raise UsageError(f"extra keys {sorted(bad)} are the trace's own; use other names")
        with self._cond:
            if self._events:  # events added after the last tick
                self.tick_count += 1
                self.ticks.append(
                    {
                        "tick": self.tick_count,
                        "t": self._elapsed(),
                        "events": self._events,
                    }
                )
                self._events = []
            self.extra.update(jsonable(extra))
            self.finished = True
            self._cond.notify_all()

    def _elapsed(self) -> float:
        """Seconds since recording started, for ``t``: 0.0 from a clock that went back or
        gave no number (the format's ``t`` is a finite number of at least 0)."""
        t = round(self.clock() - self._t0, 4)
        return t if 0.0 <= t < float("inf") else 0.0

    def header(self) -> dict[str, Any]:
        """The trace without its ticks."""
        with self._cond:
            return {
                "format": FORMAT,
                "version": VERSION,
                "title": self.title,
                "started": self.started,
                "tick_count": self.tick_count,
                "finished": self.finished,
            }

    def to_json(self, **extra: Any) -> dict[str, Any]:
        """The whole trace as JSON data; ``extra`` adds top-level keys (e.g. the outcome)."""
        bad = RESERVED_KEYS & set(extra)
        if bad:
            raise UsageError(f"extra keys {sorted(bad)} are the trace's own; use other names")
        with self._cond:
            data = self.header()
            data["ticks"] = list(self.ticks)
            data.update(self.extra)
            data.update(jsonable(extra))
            return data

    def write(self, path: str | Path, *, indent: int | None = None, **extra: Any) -> Path:
        """Write the trace as JSON to ``path`` (folders made); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_json(**extra), indent=indent, separators=_separators(indent))
        path.write_text(text + "\n", encoding="utf-8")
        return path

    # ------------------------------------------------------------------ live readers
    def entries_since(
        self, start: int, timeout: float | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        """Tick entries from index ``start``, waiting up to ``timeout`` s for one to come.

        Returns:
            (entries, finished) -- a live viewer stops once finished and nothing is left.
        """
        with self._cond:
            if len(self.ticks) <= start and not self.finished and timeout:
                self._cond.wait(timeout)
            return self.ticks[start:], self.finished


def _separators(indent: int | None) -> tuple[str, str] | None:
    return (",", ":") if indent is None else None
