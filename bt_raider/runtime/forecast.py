"""Forecasts: the first step of a plan that will not be possible, and the scene-level forecaster.

:func:`forecast_scene` applies the symbolic effects of the earlier steps to a copy of the scene
(:func:`bt_raider.checking.steps.check_steps` and its ``apply_effects``, the same code that
checks compound instructions) and has the checker judge each later step on that copy; the first
step with an issue is a :class:`Forecast`. :class:`SceneForecaster` does it for one plan, on
the scene a source gives, for :class:`bt_raider.runtime.lookahead.LookAhead` (which re-exports
everything here). A forecast records the facts of the state it predicted for the failing step
(:func:`scene_facts`): a guard takes it for its own check only in a world with those facts
(:meth:`Forecast.holds_in`).
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from bt_raider.checking.action_contract import ActionContracts
from bt_raider.checking.contract import Checker, Query, as_query
from bt_raider.checking.steps import check_steps
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import Cancelled, UsageError
from bt_raider.runtime.scenes import SceneLike, read_scene, scene_source

__all__ = [
    "Forecast",
    "Forecaster",
    "SceneFacts",
    "SceneForecaster",
    "explain",
    "forecast_scene",
    "scene_facts",
    "unknown_forecast",
    "window",
]


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
        expect: the :class:`SceneFacts` of the predicted state the step was judged in (None:
            not known, e.g. a PDDL forecast). A guard takes the forecast for its own check
            (policy ``"recover"``) only when the scene it reads has these facts: see
            :meth:`holds_in`.
    """

    step: int
    of: int
    action: str
    ahead: int
    category: str
    explanation: str
    failed: tuple[str, ...] = ()
    verdict: Verdict | None = dataclasses.field(default=None, compare=False, repr=False)
    expect: Any = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def unknown(self) -> bool:
        """True when the look-ahead could not tell (fail closed: this is an alarm too)."""
        return self.category == Category.UNKNOWN.value

    def holds_in(self, scene: Any) -> bool:
        """True when ``scene`` has the facts this forecast predicted for its step.

        Then the world is as the forecast saw it coming, and its verdict stands for a check
        of the step in ``scene``. A scene whose facts differ (a recovery or someone changed
        the world since, a step did not do what its effects say), one that cannot be read,
        or a forecast without ``expect``: False (the guard checks for itself).
        """
        expect = self.expect
        if not isinstance(expect, SceneFacts):
            return False
        try:
            real = scene_facts(scene)
        except Exception:  # fail closed: a scene we cannot read confirms nothing
            return False
        if real.things != expect.things or (real.agent is None) != (expect.agent is None):
            return False
        # Where the robot stands is one of the facts a reach or sight issue was judged on;
        # for the others a simulator's few cm and degrees off the predicted stand-off do not
        # change what the check would say.
        metres, degrees = _STRICT_POSE if self.category in _POSE_CATEGORIES else POSE_TOLERANCE
        if expect.agent is not None and math.dist(real.agent, expect.agent) > metres:  # type: ignore[arg-type]
            return False
        turn = abs(real.heading - expect.heading) % 360.0
        return min(turn, 360.0 - turn) <= degrees

    def as_verdict(self) -> Verdict:
        """A :class:`Verdict` for the failing step's guard, explained as the forecast."""
        if self.verdict is not None:
            return self.verdict.replace(explanation=self.explanation, steps=[])
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


#: Object flags a step's symbolic effects or a check's judgement can depend on.
_STATE_FLAGS = (
    "isOpen",
    "isToggled",
    "isSliced",
    "isPickedUp",
    "isDirty",
    "isBroken",
    "isCooked",
    "isFilledWithLiquid",
    "isUsedUp",
)
#: Positions are compared to this many metres (a simulator's float noise is not a change).
_GRID = 0.05
#: How far (metres, degrees) the robot may stand from where a forecast predicted and the
#: forecast still stand (a simulator's approach ends a few cm and degrees off the stand-off
#: the symbolic effects predict) ...
POSE_TOLERANCE = (0.25, 20.0)
#: ... but for issues judged on where the robot stands, only float noise.
_STRICT_POSE = (_GRID, 2.0)
_POSE_CATEGORIES = frozenset(
    c.value for c in (Category.OUT_OF_REACH, Category.OBSTRUCTED, Category.NOT_PRESENT)
)


class SceneFacts(NamedTuple):
    """What :func:`scene_facts` reads off a scene: compare with :meth:`Forecast.holds_in`."""

    #: A hash of the objects' states, containers and positions, the hand, the people.
    things: int
    #: Where the robot stands (x, y, z), or None when the scene does not say.
    agent: tuple[float, float, float] | None
    #: Which way it faces (degrees about y).
    heading: float


def _cell(position: Any) -> tuple[int, ...]:
    if not isinstance(position, dict):
        return ()
    return tuple(round(float(position.get(k) or 0.0) / _GRID) for k in ("x", "y", "z"))


def scene_facts(scene: Any) -> SceneFacts:
    """A cheap fingerprint of what a check reads in ``scene``: equal scenes, equal facts.

    Covers every object's id, state flags (:data:`_STATE_FLAGS`), containers and position
    (to 5 cm; held objects' positions left out: they follow the robot), what the robot holds,
    the people (id, position, hands, gaze), and, apart (compared with a tolerance), where the
    robot stands and faces. Run on a worker, never on the tick (a few hundred objects: well
    under a millisecond each).

    Raises:
        AttributeError, TypeError, ValueError: ``scene`` is not a scene.
    """
    data = scene.data
    held = frozenset(i.get("objectId") for i in data.get("inventoryObjects") or [])
    objects = []
    for obj in scene.objects:
        raw = obj.raw
        oid = raw["objectId"]
        objects.append(
            (
                oid,
                tuple(raw.get(k) for k in _STATE_FLAGS),
                tuple(raw.get("parentReceptacles") or ()),
                () if oid in held else _cell(raw.get("position")),
            )
        )
    agent = data.get("agent") or {}
    rotation = agent.get("rotation") or {}
    people = tuple(
        (str(h.get("id")), _cell(h.get("position")), h.get("hands_free"), h.get("looking_at_robot"))
        for h in data.get("humans") or []
    )
    heading = float(rotation.get("y") or 0.0) % 360.0 if isinstance(rotation, dict) else 0.0
    where = agent.get("position")
    xyz = None
    if isinstance(where, dict):
        xyz = (
            float(where.get("x") or 0.0),
            float(where.get("y") or 0.0),
            float(where.get("z") or 0.0),
        )
    things = hash((tuple(sorted(objects)), tuple(sorted(held, key=str)), people))
    return SceneFacts(things, xyz, heading)


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
        raise UsageError(f"start must be a step index in 0..{max(n - 1, 0)}, got {start!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise UsageError(f"depth must be an integer >= 1 or None (every step left), got {depth!r}")
    last = n - 1 if depth is None else min(n - 1, start + depth)
    return max(last, start)


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
    expect: list[Any] = []  # the facts of the state the first failing later step was judged in

    def check_one(state: Any, text: str) -> Verdict:
        if cancel is not None and cancel.is_set():
            raise Cancelled("the look-ahead was cancelled")
        q = span[len(verdicts)]
        # A pronoun the steps resolved ("close it" -> "close Fridge") changes the text only.
        query = q if text == q.text else q.replace(text=text)
        verdict = checker.check(state, query)
        if not isinstance(verdict, Verdict):
            raise UsageError(f"the checker returned {verdict!r} for {text!r}, not a Verdict")
        if verdicts and not verdict.ok and not expect:
            try:
                expect.append(scene_facts(state))
            except Exception:  # no fingerprint: the forecast only warns
                expect.append(None)
        verdicts.append(verdict)
        return verdict

    try:
        # A kind of the user's own is checked, and its declared effects applied, by its contract.
        contracts = getattr(checker, "contracts", None)
        if not isinstance(contracts, ActionContracts):
            contracts = None  # a checker of the user's own with some other ``contracts``
        check_steps(check_one, scene, [q.text for q in span], contracts)
    except Cancelled:
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
            expect=expect[0] if expect else None,
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
            raise UsageError("a plan to look ahead in needs at least one step")
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
            raise UsageError("this SceneForecaster has no version= callable")
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
