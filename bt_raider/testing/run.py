"""Run a tree to completion in a test and record what happened: :func:`run_tree`.

The tree is any py_trees tree -- the user's own behaviours, ``RaiderGuard``\\ s around them,
the user's own :class:`~bt_raider.robot.actions.Robot` or a
:class:`~bt_raider.simulation.simworld.SimWorld` -- ticked until its root leaves RUNNING, a
number of ticks passes, or a timeout. The :class:`RunResult` holds the statuses of every node
per tick, each guard's verdicts and the recovery code it ran, the person's transcript and the
world, for a test to assert on.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import py_trees
from py_trees.common import Status

from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import UsageError
from bt_raider.robot.actions import Robot, SyncRobot
from bt_raider.robot.human import Exchange, HumanInterface, ScriptedHuman
from bt_raider.runtime.guards import RaiderGuard
from bt_raider.viewer.recorder import TraceRecorder

_DONE = (Status.SUCCESS, Status.FAILURE)
T = TypeVar("T")


class ByGuard(Mapping[str, list[T]], Generic[T]):
    """Per guard, a list of what it did: looked up by the guard's display name where no other
    guard of the run has it, and always by its unique id (``guard.guard_id``).

    Two guards that share a display name are never merged: asking by that name raises a
    :class:`~bt_raider.errors.UsageError` that names their ids; iterating gives the name of a
    guard whose name is its own and the id of one whose name is not.
    """

    def __init__(self) -> None:
        self._items: dict[str, list[T]] = {}
        self._names: dict[str, str] = {}  # guard id -> display name

    def know(self, guard_id: str, name: str) -> None:
        """Take note of a guard of the run (a name it shares is then no key), items or not."""
        self._names.setdefault(guard_id, name)

    def add(self, guard_id: str, name: str, item: T) -> None:
        """Append ``item`` to the list of the guard ``guard_id`` (display name ``name``)."""
        self.know(guard_id, name)
        self._items.setdefault(guard_id, []).append(item)

    def guard_id(self, key: str) -> str:
        """The id of the guard ``key`` names (its id, or a display name no other guard has).

        Raises:
            KeyError: no guard of the run has that id or name.
            UsageError: several guards have that name (the message names their ids).
        """
        if key in self._names:
            return key
        ids = [g for g, n in self._names.items() if n == key]
        if len(ids) == 1:
            return ids[0]
        if not ids:
            raise KeyError(key)
        raise UsageError(
            f"{len(ids)} guards are named {key!r} ({', '.join(ids)}): a name cannot tell them "
            "apart; look them up by id (guard.guard_id)"
        )

    def names(self) -> dict[str, str]:
        """Guard id -> display name, for every guard of the run noted so far."""
        return dict(self._names)

    def __getitem__(self, key: str) -> list[T]:
        return self._items[self.guard_id(key)]

    def __iter__(self) -> Iterator[str]:
        names = list(self._names.values())
        for guard_id in self._items:
            name = self._names[guard_id]
            yield name if names.count(name) == 1 else guard_id

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"ByGuard({dict(self.items())!r})"


@dataclass(frozen=True)
class RecoveryRun:
    """One recovery a guard ran.

    Attributes:
        guard: the guard's name.
        guard_id: the guard's unique id (``guard.guard_id``).
        category: the issue category that led to it (``ambiguity``, ``out_of_reach``, ...).
        explanation: the verdict's explanation.
        code: the accepted recovery code, one statement per line.
        succeeded: True when the guard's next check found no issue; False when it found one,
            the recovery failed, or the run ended first.
    """

    guard: str
    category: Category
    explanation: str
    code: str
    succeeded: bool
    guard_id: str = ""


@dataclass
class RunResult:
    """What happened in one :func:`run_tree`.

    Attributes:
        status: the root's last status (RUNNING when the run hit ``max_ticks`` or the timeout).
        ticks: per tick, the status of every node by name (the tree's nodes, then the nodes of
            recovery subtrees ticked that tick); a repeated name gets `` #2``, `` #3``.
        verdicts: per guard, every verdict it reached, in order (a :class:`ByGuard`: by
            display name where it is the guard's own, by ``guard.guard_id`` always).
        recovery_runs: every recovery run, in order (see :class:`RecoveryRun`).
        transcript: what the robot asked, said and waited for, and the answers.
        world: the world the run used (``world=``, else the robot).
        feedback: per node name, its last non-empty ``feedback_message``.
        timed_out: True when the root was still RUNNING at the end.
        elapsed_s: wall time of the run.
        trace_path: where the run's trace was written (``trace=``), else None.
    """

    status: Status
    ticks: list[dict[str, Status]] = field(default_factory=list)
    verdicts: ByGuard[Verdict] = field(default_factory=ByGuard)
    recovery_runs: list[RecoveryRun] = field(default_factory=list)
    transcript: list[Exchange] = field(default_factory=list)
    world: Any = None
    feedback: dict[str, str] = field(default_factory=dict)
    timed_out: bool = False
    elapsed_s: float = 0.0
    trace_path: Path | None = None

    @property
    def recoveries(self) -> ByGuard[str]:
        """Per guard (as :attr:`verdicts`), the code of each recovery it ran."""
        out: ByGuard[str] = ByGuard()
        for guard_id, name in self.verdicts.names().items():
            out.know(guard_id, name)
        for run in self.recovery_runs:
            out.add(run.guard_id or run.guard, run.guard, run.code)
        return out

    def recovered(
        self, category: str | Category | None = None, *, guard: str | None = None
    ) -> bool:
        """True when a recovery (from ``category``, of ``guard``) led to a passing re-check.

        Args:
            category: an issue category (``"out_of_reach"``) or a final response
                (``"ambiguity"``, ``"unfeasibility"``); None: any.
            guard: a guard's id, or a name no other guard of the run has; None: any.

        Raises:
            UsageError: several guards are named ``guard``.
        """
        want = None if category is None else str(getattr(category, "value", category))
        wanted = None
        if guard is not None:
            try:
                wanted = self.recoveries.guard_id(guard)
            except KeyError:
                return False
        for run in self.recovery_runs:
            if wanted is not None and (run.guard_id or run.guard) != wanted:
                continue
            if want is not None and want not in (run.category.value, run.category.response.value):
                continue
            if run.succeeded:
                return True
        return False

    def statuses(self, name: str) -> list[Status]:
        """The status of node ``name`` on every tick (INVALID where it was not in the tree).

        Raises:
            UsageError: several nodes were named ``name`` at once (their statuses are under
                ``name``, ``name #2``...: ask for one of those).
        """
        repeated = f"{name} #2"
        if any(repeated in tick for tick in self.ticks):
            raise UsageError(
                f"several nodes are named {name!r}: a name cannot tell them apart; their "
                f"statuses are under {name!r}, {repeated!r}... in the order the tree lists them"
            )
        return [tick.get(name, Status.INVALID) for tick in self.ticks]

    def transcript_text(self) -> str:
        """The transcript as ``robot asks: ...`` / ``human: ...`` lines."""
        return "\n".join(line for exchange in self.transcript for line in exchange.lines())

    def summary(self) -> str:
        """A readable account of the run (pytest shows it when a test using the kit fails).

        It never raises: the world is the user's (its ``executed`` may hold tuples, objects,
        a huge list, things whose ``__str__`` raises); what cannot be shown is named as such.
        """
        state = (
            "still RUNNING (timed out)"
            if self.timed_out
            else _shown(getattr(self.status, "value", self.status))
        )
        lines = [f"run ended {state} after {len(self.ticks)} tick(s), {self.elapsed_s:.2f} s"]
        for part in (self._verdict_lines, self._recovery_lines, self._world_lines):
            try:
                lines.extend(part())
            except Exception as exc:  # a user's object in the run: say so, go on
                lines.append(f"  (cannot show {part.__name__[1:-6]}: {_error(exc)})")
        return "\n".join(lines)

    def _verdict_lines(self) -> list[str]:
        out = []
        for guard, verdicts in self.verdicts.items():
            for v in verdicts:
                category = _shown(getattr(v.category, "value", v.category), "category")
                out.append(f"  {_shown(guard)}: {category}: {_shown(v.explanation)}")
        return out

    def _recovery_lines(self) -> list[str]:
        out = []
        for run in self.recovery_runs:
            code = "; ".join(_shown(run.code).splitlines())
            outcome = "recovered" if run.succeeded else "not recovered"
            category = _shown(getattr(run.category, "value", run.category), "category")
            out.append(f"  {_shown(run.guard)} recovery ({category}, {outcome}): {code}")
        for exchange in self.transcript:
            try:
                out.extend(f"  {line}" for line in exchange.lines())
            except Exception as exc:
                out.append(f"  (cannot show an exchange: {_error(exc)})")
        return out

    def _world_lines(self) -> list[str]:
        out = []
        executed = _attribute(self.world, "executed")
        if executed is not _MISSING and executed is not None:
            out.append(f"  world executed: {_listing(executed)}")
        failures = _attribute(self.world, "failures")
        if failures is not _MISSING and failures:
            for entry in _entries(failures):
                error = entry.get("error") if isinstance(entry, dict) else entry
                out.append(f"  world refused: {_shown(error)}")
        return out

    def __str__(self) -> str:
        return self.summary()


#: How much of a user's value a summary shows.
SHOWN_ENTRIES = 50
SHOWN_CHARS = 300
_MISSING = object()


def _error(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _shown(value: Any, what: str = "value") -> str:
    """``value`` as text, cut to :data:`SHOWN_CHARS`; a value that cannot be shown says so."""
    try:
        text = value if isinstance(value, str) else str(value)
        if not isinstance(text, str):
            raise TypeError(f"__str__ returned {type(text).__name__}")
    except Exception as exc:
        try:
            text = repr(value)
            if not isinstance(text, str):
                raise TypeError(f"__repr__ returned {type(text).__name__}") from None
        except Exception:
            return f"<a {type(value).__name__} {what} that cannot be shown: {_error(exc)}>"
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _attribute(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, _MISSING)
    except Exception as exc:  # a property that raises
        return f"<cannot read {name}: {_error(exc)}>"


def _entries(value: Any) -> list[Any]:
    """The first :data:`SHOWN_ENTRIES` items of ``value`` (a non-iterable: itself)."""
    if isinstance(value, (str, bytes, dict)):
        return [value]
    try:
        return list(itertools.islice(iter(value), SHOWN_ENTRIES + 1))
    except Exception:
        return [value]


def _listing(value: Any) -> str:
    """What a world's ``executed`` holds, entry by entry (``pick(Cup)``, ``('pick', 'Cup')``)."""
    entries = _entries(value)
    if not entries:
        return "nothing"
    shown = [_shown(e, "entry") for e in entries[:SHOWN_ENTRIES]]
    total: Any = None
    try:
        total = len(value)
    except Exception:
        pass
    if len(entries) > SHOWN_ENTRIES:
        more = f"{total - SHOWN_ENTRIES} more" if isinstance(total, int) else "more"
        shown.append(f"... ({more} not shown)")
    return ", ".join(shown)


class _Recorder:
    """Watches the guards of a tree after every tick."""

    def __init__(self, result: RunResult) -> None:
        self.result = result
        self._seen_verdict: dict[int, Any] = {}
        self._seen_data: dict[int, Any] = {}
        self._seen_plan: dict[int, Any] = {}
        self._open: dict[int, tuple[RaiderGuard, Any, Verdict]] = {}  # guard -> running recovery

    def after_tick(self, nodes: Sequence[py_trees.behaviour.Behaviour]) -> None:
        statuses: dict[str, Status] = {}
        for node in nodes:
            name = node.name
            n = 2
            while name in statuses:
                name = f"{node.name} #{n}"
                n += 1
            statuses[name] = node.status
            if node.feedback_message:
                self.result.feedback[name] = node.feedback_message
        self.result.ticks.append(statuses)
        for node in nodes:
            if isinstance(node, RaiderGuard):
                self._watch(node)

    def _watch(self, guard: RaiderGuard) -> None:
        key = id(guard)
        self.result.verdicts.know(guard.guard_id, guard.name)
        new: Verdict | None = None
        verdict = guard.verdict
        if verdict is not None and verdict is not self._seen_verdict.get(key):
            new = verdict
        try:
            data = py_trees.blackboard.Blackboard.get(guard.key)
        except KeyError:
            data = None
        if new is None and data is not None and data is not self._seen_data.get(key):
            # A check that raised or timed out is only on the blackboard (as ``unknown``).
            if data.get("category") == Category.UNKNOWN.value:
                new = Verdict(Category.UNKNOWN, str(data.get("explanation", "")))
        self._seen_verdict[key] = verdict
        self._seen_data[key] = data
        if new is not None:
            self.result.verdicts.add(guard.guard_id, guard.name, new)
            self._close(guard, succeeded=new.ok)
        plan = guard.plan
        if plan is not None and plan is not self._seen_plan.get(key):
            self._seen_plan[key] = plan
            self._close(guard, succeeded=False)
            if guard.verdict is not None:
                self._open[key] = (guard, plan, guard.verdict)
        if guard.status in _DONE and key in self._open and new is None:
            self._close(guard, succeeded=False)

    def _close(self, guard: RaiderGuard, *, succeeded: bool) -> None:
        opened = self._open.pop(id(guard), None)
        if opened is None:
            return
        _, plan, verdict = opened
        self.result.recovery_runs.append(
            RecoveryRun(
                guard.name,
                verdict.category,
                verdict.explanation,
                plan.code,
                succeeded,
                guard_id=guard.guard_id,
            )
        )

    def finish(self) -> None:
        for guard, _, _ in list(self._open.values()):
            self._close(guard, succeeded=False)


def _nodes(root: py_trees.behaviour.Behaviour, visited: Sequence[Any]) -> list[Any]:
    """The tree's nodes, then nodes ticked this tick outside it (recovery subtrees)."""
    nodes = list(root.iterate())
    known = {id(n) for n in nodes}
    for node in visited:
        if id(node) not in known:
            known.add(id(node))
            nodes.append(node)
    return nodes


def _swap_people(
    root: py_trees.behaviour.Behaviour, human: HumanInterface
) -> list[tuple[Any, Any]]:
    """Point every guard's recovery and every ask/say/wait node at ``human``; returns undo."""
    undo: list[tuple[Any, Any]] = []
    for node in root.iterate():
        recovery = getattr(node, "recovery", None) if isinstance(node, RaiderGuard) else None
        if recovery is not None and hasattr(recovery, "human"):
            undo.append((recovery, recovery.human))
            recovery.human = human
        if isinstance(getattr(node, "human", None), HumanInterface):
            asker: Any = node  # an ask/say/wait node; py_trees' Behaviour declares no ``human``
            undo.append((asker, asker.human))
            asker.human = human
    return undo


def _people_in(root: py_trees.behaviour.Behaviour) -> list[Any]:
    people: dict[int, Any] = {}
    for node in root.iterate():
        recovery = getattr(node, "recovery", None) if isinstance(node, RaiderGuard) else None
        for who in (getattr(recovery, "human", None), getattr(node, "human", None)):
            if who is not None and hasattr(who, "transcript"):
                people.setdefault(id(who), who)
    return list(people.values())


def run_tree(
    tree: Any,
    *,
    world: Any = None,
    robot: Robot | None = None,
    human: HumanInterface | None = None,
    answers: Sequence[str] | dict[str, str] | None = None,
    max_ticks: int | None = None,
    timeout: float = 30.0,
    period: float = 0.005,
    trace: str | Path | None = None,
) -> RunResult:
    """Tick ``tree`` until its root succeeds or fails; record statuses, verdicts, recoveries.

    Args:
        tree: a root behaviour, a :class:`py_trees.trees.BehaviourTree` (its pre/post tick
            handlers run), or ``build(robot, human) -> root`` to build the tree for this run.
        world: the world to return in the result; ticked after each tree tick when it has a
            ``tick()`` (a :class:`~bt_raider.simulation.simworld.SimWorld`, so its scheduled
            events fire; do not also hook it to the tree). The default robot acts on it.
        robot: the robot handed to ``build`` (default ``SyncRobot(world)``).
        human: the person who answers; with a built tree, every guard's recovery and every
            ask/say/wait node is pointed at this person for the run (and restored after).
        answers: shorthand for ``human=ScriptedHuman(answers)``: a list used in order, or
            regex -> answer. With neither, a built tree keeps its own people and ``build``
            gets a person with no answers (any question fails the recovery, clearly).
        max_ticks: stop after this many ticks (the result is then RUNNING, ``timed_out``);
            None: only the timeout bounds the run.
        timeout: stop after this many seconds, likewise.
        period: seconds slept between ticks while the root is RUNNING, so a run waiting on a
            check or an answer does not spin a core.
        trace: write the run's trace there, in the format the demo writes and
            ``bt-raider view TRACE.json`` shows (:mod:`bt_raider.viewer.trace`).

    Returns:
        The :class:`RunResult`. A run that did not finish is stopped (pending checks
        cancelled) and reported as RUNNING with ``timed_out`` set; it does not raise.

    Raises:
        TypeError: ``tree`` is not a behaviour, a BehaviourTree or a callable; or ``build``
            returned something that is not a behaviour; or both ``human`` and ``answers``.
        ValueError: a non-positive ``max_ticks`` or ``timeout``, a negative ``period``.
    """
    if human is not None and answers is not None:
        raise UsageError("give the person as human=... or as answers=..., not both")
    if max_ticks is not None and (
        not isinstance(max_ticks, int) or isinstance(max_ticks, bool) or max_ticks < 1
    ):
        raise UsageError(f"max_ticks must be an integer >= 1 or None, got {max_ticks!r}")
    if not timeout > 0:
        raise UsageError(f"timeout must be > 0 seconds, got {timeout!r}")
    if not period >= 0:
        raise UsageError(f"period must be >= 0 seconds, got {period!r}")
    if answers is not None:
        human = ScriptedHuman(answers if isinstance(answers, dict) else list(answers))
    bt: py_trees.trees.BehaviourTree | None = None
    undo: list[tuple[Any, Any]] = []
    built_here = False
    if isinstance(tree, py_trees.trees.BehaviourTree):
        bt, root = tree, tree.root
    elif isinstance(tree, py_trees.behaviour.Behaviour):
        root = tree
    elif callable(tree):
        build: Callable[..., Any] = tree
        built_here = True
        if robot is None and world is not None:
            robot = SyncRobot(world)
        if human is None:
            human = ScriptedHuman([])
        root = build(robot, human)
        if not isinstance(root, py_trees.behaviour.Behaviour):
            raise UsageError(f"build(robot, human) must return a py_trees behaviour, got {root!r}")
    else:
        raise UsageError(
            "tree must be a py_trees behaviour, a BehaviourTree or build(robot, human), "
            f"got {type(tree).__name__}"
        )
    if human is not None and not built_here:
        undo = _swap_people(root, human)
    people = [human] if human is not None else _people_in(root)
    result = RunResult(Status.INVALID, world=world if world is not None else robot)
    recorder = _Recorder(result)
    # The root, not a BehaviourTree: the tick loop below records, no post-tick handler. World
    # changes come from a SimWorld's log; a user's own robot has none.
    tracer = (
        TraceRecorder(root, human=human, world=world if hasattr(world, "log") else None)
        if trace is not None
        else None
    )
    start = time.monotonic()
    try:
        ticks = itertools.count() if max_ticks is None else range(max_ticks)
        for _ in ticks:
            visited: list[Any] = []
            if bt is not None:
                visitor = _Collect(visited)
                bt.visitors.append(visitor)
                try:
                    bt.tick()
                finally:
                    bt.visitors.remove(visitor)
            else:
                visited.extend(root.tick())
            if callable(getattr(world, "tick", None)):
                world.tick()
            recorder.after_tick(_nodes(root, visited))
            if tracer is not None:
                tracer.record()
            result.status = root.status
            if root.status in _DONE or time.monotonic() - start > timeout:
                break
            if period:
                time.sleep(period)
        result.timed_out = result.status not in _DONE
        if result.timed_out and root.status is Status.RUNNING:
            root.stop(Status.INVALID)  # cancel pending checks, answers and actions
    finally:
        recorder.finish()
        if tracer is not None:
            tracer.finish(outcome=str(root.status.value))
            assert trace is not None  # there is a tracer only when a trace path was given
            result.trace_path = tracer.write(trace)
        for owner, previous in reversed(undo):
            owner.human = previous
        result.elapsed_s = time.monotonic() - start
        result.transcript = sorted(
            (ex for who in people for ex in getattr(who, "transcript", [])),
            key=lambda ex: ex.time,
        )
    return result


class _Collect(py_trees.visitors.VisitorBase):
    """Collects the nodes a BehaviourTree ticks."""

    def __init__(self, into: list[Any]) -> None:
        super().__init__(full=True)
        self.into = into

    def run(self, behaviour: py_trees.behaviour.Behaviour) -> None:
        self.into.append(behaviour)


__all__ = ["ByGuard", "RecoveryRun", "RunResult", "run_tree"]
