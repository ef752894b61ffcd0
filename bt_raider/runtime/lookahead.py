"""Look ahead: check the steps after the current one on the state the earlier steps lead to.

A guard checks its own step when its turn comes. :class:`LookAhead` decorates a whole plan (a
``Sequence`` whose children are the steps, in order) and, while step *k* runs, asks a
*forecaster* on the worker pool whether steps *k+1* ... *k+depth* will be possible once the
steps before them are done. A tick never waits for it: the forecast is submitted when a step
starts (and every N ticks, or when the world changes, see ``every``) and taken in when ready.

Two forecasters:

* :class:`SceneForecaster` (here, :func:`forecast_scene`): the scene-level one. The symbolic
  effects of the earlier steps are applied to a copy of the scene
  (:func:`bt_raider.checking.steps.check_steps` and its ``apply_effects``, the same code that
  checks compound instructions) and the checker judges each later step on that copy;
* ``bt_raider.planners.lookahead.PddlForecaster``: a PDDL plan pushed through unified-planning's
  sequential simulator from the current state.

The first step that will fail becomes a :class:`Forecast` ("step 4 of 6, handover(robot,
medicine_1, alice), will fail: (holding robot medicine_1) is false", how many steps ahead). It
goes on the blackboard (``/bt_raider/forecasts/<step node name>`` and
:data:`LAST_FORECAST`) and, when the step is a :class:`~bt_raider.runtime.guards.RaiderGuard`,
to that guard (``guard.forecast``). What happens then is the ``policy``:

* ``"warn"`` (default): only that;
* ``"recover"``: the future guard, when its turn comes, takes the forecast as its verdict and
  starts its recovery at once, without spending a check on an issue already found. Not earlier:
  a recovery acts (asks, moves the robot) and must not interleave with the step still running.
  The guard re-checks its action after the recovery as always, so a forecast that went stale
  costs at most a needless recovery, never an unchecked action. ``unknown`` forecasts are
  only reported: there is nothing to recover from;
* ``"replan"``: the plan is stopped now (no more steps toward a failure) and a replanner
  (``bt_raider.planners.replan.Replanner``: ``replan(cancel=)``, ``build(plan)``) plans from
  the current state on the worker; its new plan subtree takes the old one's place under the
  look-ahead, and the forecaster follows the new plan (``forecaster.use_plan(plan)``).

A forecast fails closed: a scene that cannot be read, a checker that raises, a step that
cannot be judged, a forecast past its deadline are all a forecast of category ``unknown``
(reported, never silence).
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from typing import Any, Protocol, runtime_checkable

import py_trees
from py_trees.common import Status

from bt_raider.checking.contract import Checker, Query, as_query
from bt_raider.checking.steps import check_steps
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.runtime import worker
from bt_raider.runtime.guards import DEFAULT_DEADLINE, RaiderGuard
from bt_raider.runtime.scenes import SceneLike, read_scene, scene_source

#: Namespace of the forecasts per step: ``/bt_raider/forecasts/<step node name>``.
FORECASTS_NAMESPACE = "/bt_raider/forecasts"
#: Blackboard key of the latest forecast of any look-ahead (``None``: the plan ahead is fine).
LAST_FORECAST = "/bt_raider/last_forecast"
#: What a look-ahead does with a forecast issue.
POLICIES = ("warn", "recover", "replan")


def forecast_key(node_name: str) -> str:
    """The blackboard key of the forecast for the step node ``node_name``."""
    return f"{FORECASTS_NAMESPACE}/{node_name.replace('/', '_')}"


@dataclasses.dataclass(frozen=True)
class Forecast:
    """The first step of a plan that will not be possible, seen from an earlier step.

    Attributes:
        step: 0-based index, in the whole plan, of the step that will fail.
        of: number of steps in the plan.
        action: the step, e.g. ``"handover(robot, medicine_1, alice)"``.
        ahead: steps between the current step and the failing one (1: the next step).
        category: the issue category (``docs/scene-format.md``: ``wrong_state``,
            ``ambiguity``, ...), or ``unknown`` when the look-ahead could not reason about it.
        explanation: ``"step 4 of 6, handover(robot, medicine_1, alice), will fail: ..."``.
        failed: the preconditions or conditions that will fail (PDDL text for PDDL plans,
            the checker's explanation for scene-level checks, the reason for ``unknown``).
        verdict: the check's own verdict on the step in the predicted state, when there is one
            (its grounding feeds a recovery).
    """

    step: int
    of: int
    action: str
    ahead: int
    category: str
    explanation: str
    failed: tuple[str, ...] = ()
    verdict: Verdict | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def unknown(self) -> bool:
        """True when the look-ahead could not tell (fail closed: this is an alarm too)."""
        return self.category == Category.UNKNOWN.value

    def as_verdict(self) -> Verdict:
        """A :class:`Verdict` for the failing step's guard, explained as the forecast."""
        if self.verdict is not None:
            return dataclasses.replace(self.verdict, explanation=self.explanation, steps=[])
        return Verdict(self.category, self.explanation)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields above but ``verdict``, plus ``step_number`` (1-based)."""
        return {
            "step": self.step,
            "step_number": self.step + 1,
            "of": self.of,
            "action": self.action,
            "ahead": self.ahead,
            "category": self.category,
            "explanation": self.explanation,
            "failed": list(self.failed),
        }


def explain(step: int, of: int, action: str, reasons: Sequence[str]) -> str:
    """``"step 4 of 6, handover(robot, medicine_1, alice), will fail: <reasons>"``."""
    return f"step {step + 1} of {of}, {action}, will fail: {'; '.join(reasons)}"


def unknown_forecast(step: int, of: int, action: str, start: int, reason: str) -> Forecast:
    """A forecast that could not be made: category ``unknown``, at ``step``, saying why."""
    return Forecast(
        step=step,
        of=of,
        action=action,
        ahead=step - start,
        category=Category.UNKNOWN.value,
        explanation=f"step {step + 1} of {of}, {action}, cannot be foreseen: {reason}",
        failed=(reason,),
    )


def window(n: int, start: int, depth: int | None) -> int:
    """The last step index a look-ahead from ``start`` checks (``start`` when none is left).

    Raises:
        ValueError: ``start`` outside the plan, or ``depth`` not None nor an integer >= 1.
    """
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < max(n, 1):
        raise ValueError(f"start must be a step index in 0..{max(n - 1, 0)}, got {start!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"depth must be an integer >= 1 or None (every step left), got {depth!r}")
    last = n - 1 if depth is None else min(n - 1, start + depth)
    return max(last, start)


class _Cancelled(Exception):
    """The forecast was cancelled between two checks."""


def forecast_scene(
    scene: Any,
    queries: Sequence[str | Query],
    checker: Checker | None = None,
    start: int = 0,
    depth: int | None = None,
    *,
    cancel: threading.Event | None = None,
) -> Forecast | None:
    """The first of steps ``start+1`` .. ``start+depth`` a checker finds an issue with.

    The current step (``start``) is checked too, only to ground its arguments: its effects
    (and those of every later step) are applied to a copy of ``scene`` before the next step
    is checked (:func:`~bt_raider.checking.steps.check_steps`). The current step's own issue
    is its guard's business, not a forecast's; but when its arguments do not ground to one
    object each, what it will change cannot be known, and the forecast is ``unknown``.

    Args:
        scene: the scene now (a :class:`~bt_raider.perception.scene.Scene`; not changed).
        queries: every step of the plan, in order.
        checker: judges each step (default: the symbolic reasoner).
        start: index of the step being executed now.
        depth: how many steps ahead to check (None: all that are left).
        cancel: stops between two checks (the forecast then ends ``unknown``).

    Returns:
        The first failing step's :class:`Forecast` (``unknown`` when a step or the scene
        cannot be reasoned about), or None when every step checked is fine (or none is left).

    Raises:
        ValueError: ``start`` or ``depth`` out of range.
        QueryError: a query that is not a query (empty, too long).
    """
    steps = [as_query(q) for q in queries]
    n = len(steps)
    last = window(n, start, depth)
    if last == start:
        return None
    span = steps[start : last + 1]

    def unknown(k: int, reason: str) -> Forecast:
        return unknown_forecast(start + k, n, span[k].text, start, reason)

    copy = getattr(scene, "copy", None)
    if scene is None or not callable(copy):
        return unknown(1, f"no scene to look ahead in (got {type(scene).__name__})")
    if checker is None:
        from bt_raider.checking.symbolic import SymbolicReasoner  # lazily: start-up time

        checker = SymbolicReasoner()
    verdicts: list[Verdict] = []

    def check_one(state: Any, text: str) -> Verdict:
        if cancel is not None and cancel.is_set():
            raise _Cancelled
        q = span[len(verdicts)]
        # A pronoun the steps resolved ("close it" -> "close Fridge") changes the text only.
        query = q if text == q.text else dataclasses.replace(q, text=text)
        verdict = checker.check(state, query)
        if not isinstance(verdict, Verdict):
            raise TypeError(f"the checker returned {verdict!r} for {text!r}, not a Verdict")
        verdicts.append(verdict)
        return verdict

    try:
        check_steps(check_one, scene, [q.text for q in span])
    except _Cancelled:
        return unknown(max(len(verdicts), 1), "the look-ahead was cancelled")
    except Exception as exc:  # fail closed: the step we could not judge is the forecast
        if not verdicts:
            return unknown(1, f"the current step could not be checked ({_describe(exc)})")
        # check_steps checks step k after step k-1's effects: the error is step k's.
        return unknown(min(len(verdicts), len(span) - 1), _describe(exc))
    now = verdicts[0]
    if not now.ok and any(len(ids) != 1 for ids in now.grounding.values()):
        return unknown(
            1,
            f"what the current step ({span[0].text}) will change is not known yet "
            f"({now.category}: {now.explanation})",
        )
    if now.category is Category.UNKNOWN:
        return unknown(1, f"the current step could not be checked ({now.explanation})")
    for k, verdict in enumerate(verdicts[1:], start=1):
        if verdict.ok:
            continue
        return Forecast(
            step=start + k,
            of=n,
            action=span[k].text,
            ahead=k,
            category=verdict.category.value,
            explanation=explain(start + k, n, span[k].text, [verdict.explanation]),
            failed=(verdict.explanation,),
            verdict=verdict,
        )
    return None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@runtime_checkable
class Forecaster(Protocol):
    """Looks ahead in one plan: ``forecast(start, depth, cancel=...)`` runs on a worker."""

    def forecast(
        self, start: int, depth: int | None = None, *, cancel: threading.Event | None = None
    ) -> Forecast | None:
        """The first step after ``start`` (up to ``depth`` ahead) that will fail, or None."""
        ...

    def __len__(self) -> int:
        """The number of steps in the plan."""
        ...


class SceneForecaster:
    """The scene-level forecaster: a plan's step queries, a scene source and a checker.

    Args:
        queries: each step's query, in plan order (one per step node of the plan subtree).
        scene: as for :class:`~bt_raider.runtime.guards.RaiderGuard` (a callable such as
            ``robot.observe`` is called on the worker at every forecast).
        checker: judges each step (default: the symbolic reasoner).
        version: a cheap callable returning something that changes when the world does (a
            perception frame counter), for ``LookAhead(every="change")``; called on the tick.
    """

    def __init__(
        self,
        queries: Sequence[str | Query],
        scene: SceneLike,
        checker: Checker | None = None,
        *,
        version: Callable[[], Any] | None = None,
    ) -> None:
        self.queries = [as_query(q) for q in queries]  # a bad query is an error now
        if not self.queries:
            raise ValueError("a plan to look ahead in needs at least one step")
        self.scene = scene_source(scene)
        self.checker = checker
        self._version = version

    def __len__(self) -> int:
        return len(self.queries)

    def use_plan(self, queries: Sequence[str | Query]) -> None:
        """Look ahead in these steps from now on (after a replan)."""
        self.queries = [as_query(q) for q in queries]

    def version(self) -> Any:
        if self._version is None:
            raise TypeError("this SceneForecaster has no version= callable")
        return self._version()

    @property
    def versioned(self) -> bool:
        return self._version is not None

    def forecast(
        self, start: int, depth: int | None = None, *, cancel: threading.Event | None = None
    ) -> Forecast | None:
        """Read the scene (here, on the worker) and look ahead from step ``start``."""
        last = window(len(self.queries), start, depth)
        if last == start:
            return None
        try:
            scene = read_scene(self.scene)
        except Exception as exc:  # fail closed: a scene we cannot read is no all-clear
            nxt = self.queries[start + 1].text
            return unknown_forecast(
                start + 1,
                len(self.queries),
                nxt,
                start,
                f"cannot read the scene ({_describe(exc)})",
            )
        return forecast_scene(scene, self.queries, self.checker, start, depth, cancel=cancel)


# --------------------------------------------------------------------------- the decorator
def _check_plan(plan: py_trees.behaviour.Behaviour, forecaster: Any) -> None:
    if not callable(getattr(forecaster, "forecast", None)):
        raise TypeError(
            f"forecaster must have forecast(start, depth, *, cancel), got {forecaster!r}"
        )
    if not isinstance(plan, py_trees.composites.Composite):
        raise TypeError(
            f"LookAhead decorates a plan: a py_trees Composite whose children are the steps, "
            f"got {type(plan).__name__} {plan.name!r}"
        )
    n = len(forecaster)
    if n != len(plan.children):
        raise ValueError(
            f"the forecaster has {n} step(s) but the plan {plan.name!r} has "
            f"{len(plan.children)} step node(s)"
        )


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
        executor: where forecasts run (the shared worker pool by default).
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
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        window(max(len(forecaster), 1), 0, depth)  # validates depth
        if every != "step" and every != "change":
            if isinstance(every, bool) or not isinstance(every, int) or every < 1:
                raise ValueError(f"every must be 'step', 'change' or ticks >= 1, got {every!r}")
        if every == "change" and not (
            callable(getattr(forecaster, "version", None))
            and getattr(forecaster, "versioned", True)
        ):
            raise ValueError(
                "every='change' needs a forecaster with a version() (a PddlForecaster on a "
                "PddlWorld, or SceneForecaster(..., version=...))"
            )
        if policy == "replan" and not (
            callable(getattr(replanner, "replan", None))
            and callable(getattr(replanner, "build", None))
        ):
            raise ValueError(
                "policy 'replan' needs replanner= with replan(cancel=...) and build(plan) "
                "(bt_raider.planners.replan.Replanner)"
            )
        if deadline is not None and (
            isinstance(deadline, bool)
            or not isinstance(deadline, (int, float))
            or not 0 < deadline < math.inf
        ):
            raise ValueError(f"deadline must be seconds > 0 (finite) or None, got {deadline!r}")
        if isinstance(max_replans, bool) or not isinstance(max_replans, int) or max_replans < 0:
            raise ValueError(f"max_replans must be an integer >= 0, got {max_replans!r}")
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
        self._pending_start = -1
        self._replanning = False
        self._due = False
        self._ticks = 0
        self._start = -1
        self._version: Any = None
        self._marked: dict[int, Forecast] = {}
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
            key = forecast_key(node.name)
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
        self._outcome = None
        self.feedback_message = "looking ahead"

    def update(self) -> Status:
        if self._outcome is not None:
            return self._outcome
        if self._replanning:
            return Status.RUNNING
        status = self.decorated.status
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
    def _maybe_submit(self) -> None:
        start = self.current_step()
        if start < 0:
            return
        due = self._due or start != self._start
        if isinstance(self.every, int) and self._ticks % self.every == 0:
            due = True
        if self.every == "change":
            version = self.forecaster.version()
            if version is not self._version and version != self._version:
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
            self._version = self.forecaster.version()
        self._pending_start = start
        self._pending = worker.submit(
            self._forecast_job, start, executor=self.executor, deadline=self.deadline
        )

    def _forecast_job(self, start: int, *, cancel: threading.Event) -> Forecast | None:
        return self.forecaster.forecast(start, self.depth, cancel=cancel)

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
        start = self._pending_start
        now = self.current_step()
        if now < 0:
            return  # the plan is over
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
            if (
                self.policy == "recover"
                and not forecast.unknown
                and node.recovery is not None
                and node.max_attempts > 0
            ):
                node.early_verdict = forecast.as_verdict()

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
        exc = pending.exception()
        if exc is not None:
            self._outcome = Status.FAILURE
            self.feedback_message = f"{reason}; replanning failed: {_describe(exc)}"
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
