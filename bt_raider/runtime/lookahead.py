"""Look ahead: check the steps after the current one on the state the earlier steps lead to.

A guard checks its own step when its turn comes. :class:`LookAhead` decorates a whole plan (a
``Sequence`` whose children are the steps, in order) and, while step *k* runs, asks a
*forecaster* on a worker whether steps *k+1* ... *k+depth* will be possible once the
steps before them are done. A tick never waits for it: the forecast is submitted when a step
starts (and every N ticks, or when the world changes, see ``every``) and taken in when ready.
Nor does a forecast delay the plan's own checks: forecasts run on a lane of their own
(:func:`forecast_executor`), and wait before each step they judge while the plan's current
guard has a check or a recovery's planning out (and :data:`QUIET` seconds after, as the next
step's check follows at once when an action ends at once).

Two forecasters:

* :class:`SceneForecaster` (:mod:`bt_raider.runtime.forecast`, re-exported here, with
  :func:`forecast_scene`): the scene-level one. The symbolic
  effects of the earlier steps are applied to a copy of the scene
  (:func:`bt_raider.checking.steps.check_steps` and its ``apply_effects``, the same code that
  checks compound instructions) and the checker judges each later step on that copy;
* ``bt_raider.planners.lookahead.PddlForecaster``: a PDDL plan pushed through unified-planning's
  sequential simulator from the current state.

The first step that will fail becomes a :class:`Forecast` ("step 4 of 6, handover(robot,
medicine_1, alice), will fail: (holding robot medicine_1) is false", how many steps ahead). It
goes on the blackboard (``/bt_raider/forecasts/<step key>`` and
:data:`LAST_FORECAST`) and, when the step is a :class:`~bt_raider.runtime.guards.RaiderGuard`,
to that guard (``guard.forecast``). What happens then is the ``policy``:

* ``"warn"`` (default): only that;
* ``"recover"``: the future guard, when its turn comes, takes the forecast as its verdict and
  starts its recovery at once, without spending a check on an issue already found -- but only
  if the scene its check reads has the facts the forecast predicted for that step
  (:meth:`Forecast.holds_in`); in a world that changed otherwise (someone took what the
  forecast saw in the hand, a step did not do what its effects say) the guard checks for
  itself. Not earlier: a recovery acts (asks, moves the robot) and must not interleave with
  the step still running. The guard re-checks its action after the recovery as always.
  ``unknown`` forecasts, and forecasts without predicted facts (a PDDL forecast's ``expect``
  is None), are only reported;
* ``"replan"``: the plan is stopped now (no more steps toward a failure) and a replanner
  (``bt_raider.planners.replan.Replanner``: ``replan(cancel=)``, ``build(plan)``) plans from
  the current state on the worker; its new plan subtree takes the old one's place under the
  look-ahead, and the forecaster follows the new plan (``forecaster.use_plan(plan)``).

A recovery changes the world as no step predicts: a forecast sent before a guard of the plan
started recovering is dropped when it comes in, the marks forecasts left on later steps are
taken off, and the next forecast goes out once the recovery is over.

A forecast fails closed: a scene that cannot be read, a checker that raises, a step that
cannot be judged, a forecast past its deadline are all a forecast of category ``unknown``
(reported, never silence).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from typing import Any, Protocol, cast

import py_trees
from py_trees.common import Status

from bt_raider.errors import UsageError
from bt_raider.robot import worker
from bt_raider.runtime.forecast import (  # re-exported: the look-ahead's public names
    Forecast,
    Forecaster,
    SceneFacts,
    SceneForecaster,
    _describe,
    explain,
    forecast_scene,
    scene_facts,
    unknown_forecast,
    window,
)
from bt_raider.runtime.guards import DEFAULT_DEADLINE, Phase, RaiderGuard

__all__ = [
    "FORECASTS_NAMESPACE",
    "LAST_FORECAST",
    "POLICIES",
    "Forecast",
    "Forecaster",
    "LookAhead",
    "SceneFacts",
    "SceneForecaster",
    "explain",
    "forecast_executor",
    "forecast_key",
    "forecast_scene",
    "scene_facts",
    "step_key",
    "unknown_forecast",
    "window",
]

#: Namespace of the forecasts per step: ``/bt_raider/forecasts/<step key>`` (:func:`step_key`).
FORECASTS_NAMESPACE = "/bt_raider/forecasts"
#: Blackboard key of the latest forecast of any look-ahead (``None``: the plan ahead is fine).
LAST_FORECAST = "/bt_raider/last_forecast"
#: What a look-ahead does with a forecast issue.
POLICIES = ("warn", "recover", "replan")


def step_key(node: py_trees.behaviour.Behaviour) -> str:
    """A step's part of its forecast key: a guard's unique ``guard_id``; for another node its
    name and its py_trees id, so that two steps named alike never share a forecast."""
    guard_id = getattr(node, "guard_id", None)
    if isinstance(guard_id, str):
        return guard_id
    return f"{node.name.replace('/', '_').replace('.', '_')}#{node.id.hex[:12]}"


def forecast_key(
    step: py_trees.behaviour.Behaviour | str,
    within: py_trees.behaviour.Behaviour | None = None,
) -> str:
    """The blackboard key of the forecast for a step: ``/bt_raider/forecasts/<step key>``
    (:func:`step_key`).

    Args:
        step: the step's node, or its name.
        within: for a name, any node of the tree the step is in (the look-ahead, say): the
            step is the one node of that tree with that name.

    Raises:
        UsageError: a name without ``within``, or a name no node, or several nodes, of that
            tree have (the message names them: pass the node).
    """
    if not isinstance(step, str):
        return f"{FORECASTS_NAMESPACE}/{step_key(step)}"
    if within is None:
        raise UsageError(
            f"forecast_key({step!r}): a name needs the tree it is in (within=the look-ahead), "
            "or pass the step's node"
        )
    root = within
    while root.parent is not None:
        root = root.parent
    found = [node for node in root.iterate() if node.name == step]
    if len(found) != 1:
        keys = ", ".join(step_key(node) for node in found) or "none"
        raise UsageError(
            f"{len(found)} nodes of the tree are named {step!r} ({keys}): pass the step's node"
        )
    return f"{FORECASTS_NAMESPACE}/{step_key(found[0])}"


# --------------------------------------------------------------------------- the decorator
def _check_plan(plan: py_trees.behaviour.Behaviour, forecaster: Any) -> None:
    if not callable(getattr(forecaster, "forecast", None)):
        raise UsageError(
            f"forecaster must have forecast(start, depth, *, cancel), got {forecaster!r}"
        )
    if not isinstance(plan, py_trees.composites.Composite):
        raise UsageError(
            f"LookAhead decorates a plan: a py_trees Composite whose children are the steps, "
            f"got {type(plan).__name__} {plan.name!r}"
        )
    n = len(forecaster)
    if n != len(plan.children):
        raise UsageError(
            f"the forecaster has {n} step(s) but the plan {plan.name!r} has "
            f"{len(plan.children)} step node(s)"
        )


#: Forecasts run on a lane of their own, never on the pool guards check on: a check never
#: queues behind a look-ahead (one thread, with spares to cover a hung forecast).
_lane: worker.WorkerPool | None = None
_lane_lock = threading.Lock()


def forecast_executor() -> worker.WorkerPool:
    """The look-ahead lane: the pool forecasts run on unless a LookAhead is given one."""
    global _lane
    with _lane_lock:
        if _lane is None:
            _lane = worker.WorkerPool(1, max_extra=2, name="bt_raider-lookahead")
        return _lane


#: Seconds the plan's checks must have been quiet before a forecast judges a step: when a
#: step's action ends at once (a simulator), the next guard's check follows within a tick or
#: two, and a forecast that started judging meanwhile would share the GIL with it.
QUIET = 0.01


class _Yielding:
    """A forecast's cancel event that also makes the forecast wait its turn.

    Both forecasters ask ``cancel.is_set()`` before each step they judge; this one first
    waits (up to ``budget`` seconds in all) while ``busy()`` says the plan's checks need the
    CPU, so a forecast takes the CPU (and the GIL) only when they do not.
    """

    def __init__(self, cancel: threading.Event, busy: Callable[[], bool], budget: float) -> None:
        self._cancel = cancel
        self._busy = busy
        self._until = time.monotonic() + budget

    def is_set(self) -> bool:
        cancel = self._cancel
        if not cancel.is_set() and time.monotonic() < self._until and self._busy():
            while self._busy() and not cancel.wait(0.002) and time.monotonic() < self._until:
                pass
        return cancel.is_set()

    def set(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._cancel.wait(timeout)


class _Versioned(Protocol):
    """A forecaster for ``every="change"``: ``version()`` changes whenever the world does."""

    def version(self) -> Any: ...


def _reason(node: py_trees.behaviour.Behaviour) -> str:
    """Why ``node`` failed: the innermost failed node's word (a guard that refused says it;
    a guard whose action failed still says its check passed, so the action speaks)."""
    said = node.feedback_message
    inner = getattr(node, "decorated", None)
    while isinstance(inner, py_trees.behaviour.Behaviour) and inner.status is Status.FAILURE:
        said = inner.feedback_message or said
        inner = getattr(inner, "decorated", None)
    return said or "no reason given"


class LookAhead(py_trees.decorators.Decorator):
    """Run a plan and look ahead of the step it is at (on a worker, never on the tick).

    The child is the plan subtree: a py_trees ``Composite`` (a ``Sequence(memory=True)``, as
    :func:`bt_raider.planners.tree.plan_to_tree` builds) whose children are the plan's steps
    in order, guarded or not; the step being executed is the composite's ``current_child``.
    The decorator's status is its child's, but while a replan (policy ``"replan"``) runs.

    Args:
        child: the plan subtree.
        forecaster: a :class:`Forecaster` for the same steps (``len(forecaster)`` must match
            the number of step nodes).
        policy: ``"warn"``, ``"recover"`` or ``"replan"`` (see the module docstring).
        depth: how many steps ahead to check (None: every step left).
        every: when to look ahead: ``"step"`` (default) when a step starts; an integer N also
            every N ticks while a step runs; ``"change"`` also whenever ``forecaster.version()``
            changes (checked on the tick, so it must be cheap; a PddlForecaster on a
            PddlWorld compares the world's state object).
        replanner: for ``"replan"``: ``replan(cancel=event) -> plan`` (on the worker) and
            ``build(plan) -> subtree``, e.g. ``bt_raider.planners.replan.Replanner``.
        max_replans: how many times ``"replan"`` may replace the plan.
        name: the node's name (default ``Look ahead <child name>``).
        executor: where forecasts run (default: a lane of their own,
            :func:`forecast_executor`, not the pool guards check on). Wherever it runs, a
            forecast waits before each step it judges while the plan's current guard has a
            check or a recovery's planning out, and :data:`QUIET` seconds after: a look-ahead
            does not take the CPU from the plan's own checks.
            A replan runs on the shared pool (the plan waits for it) unless this is given.
        deadline: seconds a forecast (or a replan) may run; past it the forecast is
            ``unknown`` (a replan: FAILURE). None: no deadline.

    Attributes:
        forecast: the latest forecast (None: the steps looked at are fine, or none yet).
        forecasts: how many forecasts were taken in.
        replans: plans swapped in by ``"replan"``.
        pending: the forecast or replan running on the worker, if any.
    """

    def __init__(
        self,
        child: py_trees.behaviour.Behaviour,
        forecaster: Forecaster,
        *,
        policy: str = "warn",
        depth: int | None = None,
        every: int | str = "step",
        replanner: Any = None,
        max_replans: int = 2,
        name: str | None = None,
        executor: Executor | None = None,
        deadline: float | None = DEFAULT_DEADLINE,
    ) -> None:
        # Everything is checked before the child is taken (Decorator.__init__ reparents it).
        _check_plan(child, forecaster)
        if policy not in POLICIES:
            raise UsageError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        window(max(len(forecaster), 1), 0, depth)  # validates depth
        if every != "step" and every != "change":
            if isinstance(every, bool) or not isinstance(every, int) or every < 1:
                raise UsageError(f"every must be 'step', 'change' or ticks >= 1, got {every!r}")
        if every == "change" and not (
            callable(getattr(forecaster, "version", None))
            and getattr(forecaster, "versioned", True)
        ):
            raise UsageError(
                "every='change' needs a forecaster with a version() (a PddlForecaster on a "
                "PddlWorld, or SceneForecaster(..., version=...))"
            )
        if policy == "replan" and not (
            callable(getattr(replanner, "replan", None))
            and callable(getattr(replanner, "build", None))
        ):
            raise UsageError(
                "policy 'replan' needs replanner= with replan(cancel=...) and build(plan) "
                "(bt_raider.planners.replan.Replanner)"
            )
        if deadline is not None and (
            isinstance(deadline, bool)
            or not isinstance(deadline, (int, float))
            or not 0 < deadline < math.inf
        ):
            raise UsageError(f"deadline must be seconds > 0 (finite) or None, got {deadline!r}")
        if isinstance(max_replans, bool) or not isinstance(max_replans, int) or max_replans < 0:
            raise UsageError(f"max_replans must be an integer >= 0, got {max_replans!r}")
        super().__init__(name=name or f"Look ahead {child.name}", child=child)
        self.forecaster = forecaster
        self.policy = policy
        self.depth = depth
        self.every = every
        self.replanner = replanner
        self.max_replans = max_replans
        self.executor = executor
        self.deadline = deadline
        self.blackboard = self.attach_blackboard_client(name=self.name)
        self.blackboard.register_key(key=LAST_FORECAST, access=py_trees.common.Access.WRITE)
        self._keys: dict[int, str] = {}
        self._check_steps()
        self.forecast: Forecast | None = None
        self.forecasts = 0
        self.replans = 0
        self._pending: worker.Pending[Any] | None = None
        self._replanning = False
        self._due = False
        self._ticks = 0
        self._start = -1  # the step the last forecast went out from
        self._version: Any = None
        self._marked: dict[int, Forecast] = {}
        # Recoveries seen (each changes the world as no step predicts): a forecast sent
        # before the latest one is stale and dropped when it comes in.
        self._epoch = 0
        self._pending_epoch = 0
        self._watched: tuple[int, Any, int] | None = None
        self._busy_at = -math.inf  # when a forecast last saw the plan's guard checking
        self._outcome: Status | None = None
        self._left: list[str] = []  # the step names left when a replan started

    # ------------------------------------------------------------------ steps
    @property
    def steps(self) -> list[py_trees.behaviour.Behaviour]:
        """The plan's step nodes, in order."""
        return list(self.decorated.children)

    @property
    def pending(self) -> worker.Pending[Any] | None:
        return self._pending

    def _check_steps(self) -> None:
        plan = self.decorated
        _check_plan(plan, self.forecaster)
        self._keys = {}
        for i, node in enumerate(plan.children):
            key = forecast_key(node)
            self.blackboard.register_key(key=key, access=py_trees.common.Access.WRITE)
            self._keys[i] = key

    def current_step(self) -> int:
        """Index of the step being executed (-1 before the plan starts or once it ended)."""
        plan = self.decorated
        if plan.status is not Status.RUNNING:
            return -1
        child = getattr(plan, "current_child", None)
        if child is None:
            return -1
        try:
            return plan.children.index(child)
        except ValueError:
            return -1

    # ------------------------------------------------------------------ tick
    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        """Tick the plan, then submit or take in a forecast (never waits for one)."""
        self.logger.debug(f"{self.__class__.__name__}.tick()")
        if self.status != Status.RUNNING:
            self.initialise()
        if not self._replanning:
            yield from self.decorated.tick()
            self._watch()
        self._ticks += 1
        self._poll()
        if not self._replanning and self._outcome is None:
            self._maybe_submit()
        new_status = self.update()
        if new_status != Status.RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

    def initialise(self) -> None:
        self._cancel_pending()
        self._clear_marks()
        self.forecast = None
        self.replans = 0
        self._replanning = False
        self._due = False
        self._ticks = 0
        self._start = -1
        self._watched = None
        self._outcome = None
        self.feedback_message = "looking ahead"

    def update(self) -> Status:
        if self._outcome is not None:
            return self._outcome
        if self._replanning:
            return Status.RUNNING
        status = self.decorated.status
        if status is Status.FAILURE:
            # The plan failed at a step before any forecast warned of it: say where and why
            # (what the look-ahead last said is not the reason).
            plan = self.decorated
            failed = getattr(plan, "current_child", None)
            if failed is not None and failed in plan.children:
                step = plan.children.index(failed) + 1
                said = _reason(failed)
                self.feedback_message = f"the plan failed at step {step} ({failed.name}): {said}"
        # A new plan from a replan is ticked next tick: until then the run goes on.
        return Status.RUNNING if status is Status.INVALID else status

    def terminate(self, new_status: Status) -> None:
        """Cancel a forecast or replan still running (never sets the status)."""
        if new_status is Status.INVALID or self._pending is not None:
            self._cancel_pending()
            self._replanning = False

    def _cancel_pending(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    # ------------------------------------------------------------------ forecasting
    def _watch(self) -> None:
        """Note a recovery starting at the current step: the world will change unforeseen.

        Forecasts sent before it are dropped when they come in, and the marks they left on
        the steps ahead are taken off (their guards check for themselves); the next forecast
        goes once the recovery is over.
        """
        now = self.current_step()
        node = self.decorated.children[now] if now >= 0 else None
        if not isinstance(node, RaiderGuard):
            self._watched = None
            return
        seen = (now, node, node.attempts)
        last = self._watched
        self._watched = seen
        before = last[2] if last is not None and last[:2] == seen[:2] else 0
        if node.attempts <= before:
            return
        self._epoch += 1
        self._due = True
        if not self._replanning:
            self._cancel_pending()  # its answer would be dropped: stop spending CPU on it
        self._clear_marks()
        self.forecast = None  # withdrawn with its marks
        self.feedback_message = (
            f"step {now + 1} is recovering: the forecasts made before it no longer count"
        )

    def _recovering(self, now: int) -> bool:
        """Step ``now``'s guard is planning or running a recovery (the world is in flux)."""
        node = self.decorated.children[now]
        return isinstance(node, RaiderGuard) and (
            node.phase is Phase.PLANNING or node.phase is Phase.RECOVERING
        )

    def _busy(self) -> bool:
        """The plan's current guard has a check or a recovery's planning out, or is
        recovering, or was less than :data:`QUIET` seconds ago (read on the forecast's
        thread)."""
        now = time.monotonic()
        if self._checking():
            self._busy_at = now
            return True
        return now - self._busy_at < QUIET

    def _checking(self) -> bool:
        plan = self.decorated
        node = getattr(plan, "current_child", None)
        if not isinstance(node, RaiderGuard) or node.status is not Status.RUNNING:
            return False
        phase = node.phase
        if phase is Phase.RECOVERING:
            return True  # its re-check follows the recovery's last action
        if phase is not Phase.CHECKING and phase is not Phase.PLANNING:
            return False
        pending = node.pending
        return pending is None or not pending.done()

    def _maybe_submit(self) -> None:
        start = self.current_step()
        if start < 0:
            return
        if self._recovering(start):
            self._due = True  # looked at once the recovery is over
            return
        due = self._due or start != self._start
        if isinstance(self.every, int) and self._ticks % self.every == 0:
            due = True
        # cast: __init__ refused every="change" for a forecaster without a callable version().
        forecaster = cast(_Versioned, self.forecaster)
        version = forecaster.version() if self.every == "change" else None
        if self.every == "change" and version is not self._version and version != self._version:
            due = True
        if not due:
            return
        if self._pending is not None:
            # One at a time: the next goes when this one is in (a forecast from a step that
            # is over still tells about the steps after the current one).
            self._due = True
            return
        self._due = False
        self._start = start
        if self.every == "change":
            self._version = version  # read once per tick: version() runs on the tick
        self._pending_epoch = self._epoch
        self._pending = worker.submit(
            self._forecast_job,
            start,
            executor=self.executor or forecast_executor(),
            deadline=self.deadline,
        )

    def _forecast_job(self, start: int, *, cancel: threading.Event) -> Forecast | None:
        # Half the deadline at most goes to waiting for the plan's checks.
        budget = 5.0 if self.deadline is None else self.deadline / 2
        polite = _Yielding(cancel, self._busy, budget)
        if polite.is_set():  # the scene is read once the checks are in, not before
            return None
        return self.forecaster.forecast(start, self.depth, cancel=polite)  # type: ignore[arg-type]

    def _poll(self) -> None:
        pending = self._pending
        if pending is None:
            return
        if not pending.done():
            if pending.deadline is not None and pending.overdue():
                self._pending = None
                pending.abandon()
                self._on_overdue()
            return
        self._pending = None
        if self._replanning:
            self._on_replan(pending)
            return
        start = self._start  # the step the forecast went out from (set on submission)
        now = self.current_step()
        if now < 0:
            return  # the plan is over
        if self._pending_epoch != self._epoch:
            # Made before a recovery changed the world: it may warn of an issue fixed since
            # (or miss one the recovery made). Look again from the world as it is now.
            self._due = True
            return
        if pending.overdue():
            self._on_overdue()
            return
        exc = pending.exception()
        if exc is not None:
            forecast = self._unknown_next(start, f"the forecaster raised {_describe(exc)}")
        else:
            forecast = pending.result()
            if forecast is not None and not isinstance(forecast, Forecast):
                forecast = self._unknown_next(start, f"the forecaster returned {forecast!r}")
        if now != start:
            # The plan moved on while it ran: what it saw beyond the current step still
            # holds (the steps between went as planned); an all-clear or an issue behind us
            # says nothing new, and the forecast from the current step is due anyway.
            if forecast is None or forecast.step <= now:
                return
            forecast = dataclasses.replace(forecast, ahead=forecast.step - now)
            start = now
        self._take(start, forecast)

    def _unknown_next(self, start: int, reason: str) -> Forecast | None:
        steps = self.steps
        if start + 1 >= len(steps):
            return None
        return unknown_forecast(start + 1, len(steps), steps[start + 1].name, start, reason)

    def _on_overdue(self) -> None:
        if self._replanning:
            self._replanning = False
            self._outcome = Status.FAILURE
            self.feedback_message = (
                f"{self.feedback_message}; replanning passed its deadline of {self.deadline:g} s"
            )
            return
        start = self.current_step()
        if start >= 0:
            reason = f"the look-ahead passed its deadline of {self.deadline:g} s"
            self._take(start, self._unknown_next(start, reason))

    def _take(self, start: int, forecast: Forecast | None) -> None:
        """Post a forecast (or the all-clear) and act on it as the policy says."""
        self.forecasts += 1
        self.forecast = forecast
        # Marks on the steps ahead are replaced; those on steps already done are history.
        for i in [i for i in self._marked if i != start]:
            self._unmark(i)
        self.blackboard.set(LAST_FORECAST, None if forecast is None else forecast.as_dict())
        if forecast is None:
            self.feedback_message = f"looking ahead from step {start + 1}: no issue ahead"
            return
        self.feedback_message = f"looking ahead from step {start + 1}: {forecast.explanation}"
        if 0 <= forecast.step < len(self._keys):
            self._mark(forecast.step, forecast)
        if self.policy == "replan" and not forecast.unknown:
            self._start_replan(forecast)

    def _mark(self, index: int, forecast: Forecast) -> None:
        self._marked[index] = forecast
        self.blackboard.set(self._keys[index], forecast.as_dict())
        node = self.decorated.children[index]
        if isinstance(node, RaiderGuard):
            node.forecast = forecast
            # Only a guard that can recover skips its check: one that cannot would fail on a
            # forecast without ever looking at the world itself.
            # And only when the world is as the forecast predicted at the guard's turn
            # (``holds_in``, on the scene its check reads): a forecast made before someone or
            # a recovery changed the world must not stand for a check.
            if (
                self.policy == "recover"
                and not forecast.unknown
                and forecast.expect is not None
                and node.recovery is not None
                and node.max_attempts > 0
            ):
                node.early_verdict = forecast.as_verdict()
                node.early_if = forecast.holds_in

    def _unmark(self, index: int) -> None:
        self._marked.pop(index, None)
        key = self._keys.get(index)
        # Two steps of the same name share a key: keep it while the other is marked.
        if key is not None and not any(self._keys.get(i) == key for i in self._marked):
            self.blackboard.unset(key)
        children = self.decorated.children
        node = children[index] if index < len(children) else None
        if isinstance(node, RaiderGuard) and node.status is not Status.RUNNING:
            node.forecast = None
            node.early_verdict = None
            node.early_if = None

    def _clear_marks(self) -> None:
        for i in list(self._marked):
            self._unmark(i)

    # ------------------------------------------------------------------ replanning
    def _start_replan(self, forecast: Forecast) -> None:
        if self.replans >= self.max_replans:
            self._outcome = Status.FAILURE
            self.feedback_message = (
                f"{forecast.explanation} (no replan left: {self.replans} of {self.max_replans})"
            )
            return
        plan = self.decorated
        self._left = [c.name for c in plan.children[max(self.current_step(), 0) :]]
        if plan.status is Status.RUNNING:
            plan.stop(Status.INVALID)  # no more steps toward a failure
        self._replanning = True
        self.feedback_message = f"{forecast.explanation}: replanning from the current state"
        self._pending = worker.submit(
            self._replan_job, executor=self.executor, deadline=self.deadline
        )

    def _replan_job(self, *, cancel: threading.Event) -> Any:
        return self.replanner.replan(cancel=cancel)

    def _on_replan(self, pending: worker.Pending[Any]) -> None:
        self._replanning = False
        reason = self.forecast.explanation if self.forecast else "the plan will fail"
        failed = pending.exception()
        if failed is not None:
            self._outcome = Status.FAILURE
            self.feedback_message = f"{reason}; replanning failed: {_describe(failed)}"
            return
        plan = pending.result()
        try:
            new = self.replanner.build(plan)
            if [c.name for c in new.children] == self._left:
                # The planner's model does not see what will go wrong: the same steps again.
                self._outcome = Status.FAILURE
                self.feedback_message = (
                    f"{reason}; replanning gave the same steps again (the planner's model "
                    "cannot see this issue)"
                )
                return
            use_plan = getattr(self.forecaster, "use_plan", None)
            if callable(use_plan):
                use_plan(plan)
            self._clear_marks()
            self._swap(new)
            self._check_steps()
        except Exception as exc:
            self._outcome = Status.FAILURE
            self.feedback_message = f"{reason}; the new plan cannot run: {_describe(exc)}"
            return
        self.replans += 1
        self._start = -1
        self.forecast = None
        self.feedback_message = (
            f"replanned ({self.replans}/{self.max_replans}) because {reason}: "
            f"{len(new.children)} step(s)"
        )

    def _swap(self, new: py_trees.behaviour.Behaviour) -> None:
        """Put ``new`` in place of the old plan (as ``Decorator.__init__`` sets a child)."""
        old = self.decorated
        if old.status is Status.RUNNING:
            old.stop(Status.INVALID)
        old.parent = None
        self.children[0] = new
        self.decorated = new
        new.parent = self
