"""The robot's side: a small :class:`Robot` protocol and :class:`ActionBehaviour`.

A :class:`Robot` starts an action and is polled for its progress, so an action that takes
seconds never blocks a tick: ``start(action, args) -> handle``, ``poll(handle) -> Progress``,
``cancel(handle)``, ``observe() -> Scene or AI2-THOR metadata dict``. A team wraps its own
action servers that way; an executor that finishes at once (a simulator, a fast actuator) needs
only ``execute`` and ``observe``, adapted by :class:`SyncRobot`. The robot runs the actions of
recovery subtrees (``move_to``, ``put``...); the team's own behaviours stay as they are.
Arguments may be :class:`Var` references to values an earlier ``ask`` wrote to the blackboard.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import py_trees

from bt_raider.errors import ActionFailed

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene
    from bt_raider.robot.retarget import ResolvedAction

#: Blackboard namespace of variables set by ``x = ask(...)`` in recovery code.
VARS_NAMESPACE = "/bt_raider/vars"


class ActionState(str, Enum):
    """Where a started action is: still running, done, or failed (see :class:`Progress`)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class Progress:
    """What a robot reports about a started action."""

    state: ActionState
    message: str = ""


@runtime_checkable
class Robot(Protocol):
    """What bt_raider needs from a robot (real or simulated).

    Every method is called on the tree's thread (``observe`` on a worker, when a guard is
    given ``scene=robot.observe``), so each must return at once: start a long action and
    report it through ``poll``.
    """

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        """Start ``action(*args)``; return a handle. Raise ActionFailed if it cannot start."""
        ...

    def poll(self, handle: Hashable) -> Progress:
        """Progress of a started action: RUNNING until it SUCCEEDED or FAILED."""
        ...

    def cancel(self, handle: Hashable) -> None:
        """Stop a started action (no-op when it already ended)."""
        ...

    def observe(self) -> Scene | dict[str, Any]:
        """The robot's current view of the scene, for checks (a Scene or AI2-THOR metadata)."""
        ...


class Actuator(Protocol):
    """What an :class:`ActionBehaviour` needs of a robot: :class:`Robot` without ``observe``."""

    def start(self, action: str, args: Sequence[Any]) -> Hashable: ...

    def poll(self, handle: Hashable) -> Progress: ...

    def cancel(self, handle: Hashable) -> None: ...


def vars_key(name: str, scope: str = "") -> str:
    """The blackboard key of recovery variable ``name`` in ``scope``.

    ``/bt_raider/vars/<scope>/<name>``; without a scope ``/bt_raider/vars/<name>``. A guard
    gives each recovery run its own scope, so two guards (or two runs of one) whose code both
    write ``choice = ask(...)`` never read each other's answer.
    """
    return f"{VARS_NAMESPACE}/{scope}/{name}" if scope else f"{VARS_NAMESPACE}/{name}"


def clear_vars(scope: str) -> int:
    """Forget every variable of ``scope`` (a recovery run ended); the number removed.

    An empty scope is the shared, unscoped namespace: nothing is removed (its owner is not
    known).
    """
    if not scope:
        return 0
    prefix = f"{VARS_NAMESPACE}/{scope}/"
    board = py_trees.blackboard.Blackboard
    return sum(board.unset(k) for k in [k for k in list(board.storage) if k.startswith(prefix)])


@dataclass(frozen=True)
class Var:
    """A reference to a recovery-code variable, read from the blackboard when the action starts.

    Attributes:
        name: the variable's name in the recovery code.
        scope: the recovery run it belongs to (see :func:`vars_key`); empty: unscoped.
    """

    name: str
    scope: str = ""

    @property
    def key(self) -> str:
        """The variable's blackboard key (:func:`vars_key`)."""
        return vars_key(self.name, self.scope)

    def __str__(self) -> str:
        return self.name


class ActionBehaviour(py_trees.behaviour.Behaviour):
    """Run one robot action: start in ``initialise``, poll in ``update``, cancel in ``terminate``.

    It is :class:`~bt_raider.robot.retarget.Retargetable`: under a
    :class:`~bt_raider.runtime.guards.RaiderGuard` it acts on what the guard's check resolved
    (see :meth:`resolved_args`).

    Args:
        action: the action name, e.g. ``"pick"``.
        args: its arguments; :class:`Var` entries are read from the blackboard at start.
        robot: the robot that executes it (a :class:`Robot`; only ``start``, ``poll`` and
            ``cancel`` are used).
        name: the node's name (defaults to ``action(arg, ...)``).
        aliases: argument -> the name the robot knows it by (plan name -> scene name), for
            arguments the check did not resolve.

    Attributes:
        resolved: what the guard's last passing check resolved this action to (None outside
            a guarded run).
    """

    def __init__(
        self,
        action: str,
        args: Sequence[Any],
        robot: Actuator,
        name: str | None = None,
        *,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(name or f"{action}({', '.join(str(a) for a in args)})")
        self.action = action
        self.args = list(args)
        self.robot = robot
        self.aliases = dict(aliases or {})
        self.resolved: ResolvedAction | None = None
        self._handle: Hashable | None = None
        self._start_error: str | None = None
        self._bb = self.attach_blackboard_client(name=f"{self.name}/vars")
        for arg in self.args:
            if isinstance(arg, Var):
                self._bb.register_key(key=arg.key, access=py_trees.common.Access.READ)

    def retarget(self, resolved: ResolvedAction | None) -> None:
        """Act on what the guard's check resolved (None: on :attr:`args` again)."""
        self.resolved = resolved

    def grounding(self) -> dict[str, list[str]]:
        """What the guard around this action grounded each argument phrase to.

        From :attr:`resolved`; else from a parent exposing a passing ``verdict``; empty when
        the action is not guarded.
        """
        r = self.resolved
        if r is not None and r.steps:  # a compound: this action's step, else every step's
            step = r.for_action(self.action, len(self.args))
            return dict(step.grounding if step is not None else r.verdict.grounding)
        if r is not None:
            return dict(r.grounding)
        verdict = getattr(self.parent, "verdict", None)
        if verdict is None or not getattr(verdict, "ok", False):
            return {}
        return dict(verdict.grounding)

    def resolved_args(self) -> list[Any]:
        """The arguments the robot gets.

        When the guard's check resolved the same action with as many arguments (for a compound
        instruction, its first step of this action), an argument it grounded to exactly one
        object becomes that objectId, and after a recovery an argument
        becomes the one the recovery chose (the person said "the clean cup": the robot picks
        that cup). Otherwise :class:`Var` references become their blackboard values; then an
        argument the check grounded to exactly one object becomes that objectId (a plan names
        ``adrianas_medicine``: the robot acts on the object the check meant); otherwise
        ``aliases`` maps it (plan name -> scene name).
        """
        chosen: list[str | None] = [None] * len(self.args)
        r = self.resolved
        if r is not None and r.steps:  # a compound instruction: this action's step
            r = r.for_action(self.action, len(self.args))
            same = r is not None
        elif r is not None:
            # The parser loads with the first guard's check: actions alone (a robot process
            # of the cooperative demo) never need it.
            from bt_raider.checking.parse import same_action

            same = same_action(self.action, r.action)
        else:
            same = False
        if r is not None and same and len(r.args) == len(self.args):
            # An objectId the check grounded, or what a recovery chose; else our own argument.
            chosen = [
                a if r.recovered or a != p else None for a, p in zip(r.args, r.phrases, strict=True)
            ]
        grounding = self.grounding()
        out = []
        for arg, pick in zip(self.args, chosen, strict=True):
            if pick is not None:
                arg = pick
            elif isinstance(arg, Var):
                try:
                    arg = self._bb.get(arg.key)
                except KeyError as exc:
                    raise ActionFailed(
                        f"{self.name}: variable {arg.name!r} has no value yet"
                    ) from exc
            ids = grounding.get(str(arg)) or []
            out.append(ids[0] if len(ids) == 1 else self.aliases.get(str(arg), arg))
        return out

    def initialise(self) -> None:
        self._handle = None
        self._start_error = None
        try:
            args = self.resolved_args()
            self._handle = self.robot.start(self.action, args)
            self.feedback_message = f"started {self.action}({', '.join(map(str, args))})"
        except ActionFailed as exc:
            self._start_error = str(exc)

    def update(self) -> py_trees.common.Status:
        if self._start_error is not None:
            self.feedback_message = self._start_error
            return py_trees.common.Status.FAILURE
        progress = self.robot.poll(self._handle)
        if progress.message:
            self.feedback_message = progress.message
        if progress.state is ActionState.SUCCEEDED:
            return py_trees.common.Status.SUCCESS
        if progress.state is ActionState.FAILED:
            return py_trees.common.Status.FAILURE
        return py_trees.common.Status.RUNNING

    def terminate(self, new_status: py_trees.common.Status) -> None:
        if new_status is py_trees.common.Status.INVALID and self._handle is not None:
            self.robot.cancel(self._handle)
        self._handle = None


class Executor(Protocol):
    """Something that runs an action to completion at once (a simulator, a fast actuator)."""

    def execute(self, action: str, args: Sequence[Any]) -> Any:
        """Run ``action(*args)``; raise ActionFailed when its real preconditions do not hold."""
        ...

    def observe(self) -> Scene | dict[str, Any]:
        """The current scene (a Scene or AI2-THOR metadata)."""
        ...


class SyncRobot:
    """Adapt an :class:`Executor` (e.g. ``SimWorld``) to the start/poll :class:`Robot` protocol.

    The action runs inside :meth:`start`, so it must be quick; the outcome is reported by the
    next :meth:`poll`.
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._results: dict[int, Progress] = {}
        self._next = 0

    def start(self, action: str, args: Sequence[Any]) -> int:
        self._next += 1
        try:
            out = self.executor.execute(action, list(args))
            message = f"{action} done" if out is None else str(out)
            self._results[self._next] = Progress(ActionState.SUCCEEDED, message)
        except ActionFailed as exc:
            self._results[self._next] = Progress(ActionState.FAILED, str(exc))
        return self._next

    def poll(self, handle: Hashable) -> Progress:
        try:
            return self._results.pop(handle)  # type: ignore[call-overload]
        except KeyError:
            return Progress(ActionState.FAILED, f"unknown action handle {handle!r}")

    def cancel(self, handle: Hashable) -> None:
        self._results.pop(handle, None)  # type: ignore[call-overload]

    def observe(self) -> Scene | dict[str, Any]:
        return self.executor.observe()
