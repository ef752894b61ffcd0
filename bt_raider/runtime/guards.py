""":class:`RaiderGuard`: check an action before it runs, explain what is wrong, and recover.

A decorator in the style of :class:`py_trees.decorators.EternalGuard`: the check that must
precede the child happens in ``tick()``. Unlike EternalGuard's condition, a RAIDER check takes
seconds (an LLM agent loop), so it runs on a worker and the guard returns RUNNING meanwhile --
a tick never blocks. One run of the guard goes::

    CHECKING --none--> ACTING (tick the child; the verdict is cached for this run)
        |
        issue --> PLANNING (recovery code, on a worker) --> RECOVERING (tick the subtree)
                                                                  |
        CHECKING <-- re-check the action (with the plan's resolved arguments) <--+

bounded by ``max_attempts`` recoveries. Every verdict goes on the blackboard
(``/bt_raider/verdicts/<guard id>`` and ``/bt_raider/last_verdict``, as
:meth:`~bt_raider.checking.verdict.Verdict.as_dict`); after a passing check, before the child's
first tick, what it resolved the action to goes to the child (``child.retarget(resolved)``, see
:mod:`bt_raider.robot.retarget`) and to ``/bt_raider/resolved/<guard id>``. The child may be
any py_trees behaviour. The guard fails closed: a checker that raises, a
check that cannot finish (``unknown``), no recovery, a recovery that cannot be planned, or
issues left after the last attempt all end in FAILURE with a readable ``feedback_message``.

The guard is written in three modules, one per part of its run: this one holds the decorator
(its run, its tick, the pacing of checks: :data:`SUBMIT_BUDGET`, :data:`INTAKE_BUDGET`) and
:func:`guard_tree`; :mod:`bt_raider.runtime.guard_check` the check's job on the worker, the
verdict on the blackboard, what it decides, and the :class:`~bt_raider.runtime.guard_check.Phase`
of a run; :mod:`bt_raider.runtime.guard_recovery` the recovery. The names this module uses from
them can still be imported from here.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from functools import partial
from typing import Any, TypeAlias

import py_trees
from py_trees.common import Status

from bt_raider.checking.contract import Checker, Query, as_query
from bt_raider.checking.verdict import Verdict
from bt_raider.checking.vocabulary import ACTIONS
from bt_raider.errors import UsageError
from bt_raider.recovery.contract import RecoveryPlan
from bt_raider.recovery.pipeline import Recovery
from bt_raider.robot import worker
from bt_raider.robot.designation import GuardIntent, action_kind
from bt_raider.robot.retarget import ResolvedAction, compound_steps, new_guard_id, resolved_key
from bt_raider.runtime.guard_check import (
    _ACTING,
    _CHECKING,
    _IDLE,
    _PLANNING,
    _RECOVERING,
    _RUNNING,
    _Checking,
    _describe,
)
from bt_raider.runtime.guard_check import LAST_VERDICT as LAST_VERDICT
from bt_raider.runtime.guard_check import Phase as Phase
from bt_raider.runtime.guard_check import verdict_key as verdict_key
from bt_raider.runtime.guard_recovery import _Recovering
from bt_raider.runtime.scenes import SceneLike, scene_source

#: Seconds a guard's check may take unless the guard says otherwise (``deadline=``).
DEFAULT_DEADLINE = 30.0
#: Checks all guards together submit, and results they take in, per 10 ms: a tree of a thousand
#: guards spreads its first submissions, and verdicts that finish together, over a few ticks.
SUBMIT_BUDGET = worker.WindowBudget(64)
INTAKE_BUDGET = worker.WindowBudget(16)

QueryLike: TypeAlias = "str | Query | Callable[[], str | Query]"


def _accepts_cancel(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "cancel" or p.kind is p.VAR_KEYWORD for p in params)


class RaiderGuard(_Checking, _Recovering, py_trees.decorators.Decorator):
    """Check the child's action before it runs; recover when there is an issue.

    The child may be any py_trees behaviour. After every passing check, before the guard ticks
    it, the child learns what the check resolved its action to (the objectIds its arguments
    grounded to; after a recovery, the arguments the recovery chose, e.g. the cup the person
    named), as a :class:`~bt_raider.robot.retarget.ResolvedAction`:

    * ``child.retarget(resolved)`` is called when the child has a ``retarget`` method
      (:class:`~bt_raider.robot.retarget.Retargetable`); at the guard's next run,
      ``child.retarget(None)``: back to its own arguments;
    * the blackboard key ``/bt_raider/resolved/<guard id>``
      (:func:`~bt_raider.robot.retarget.resolved_key`, also :attr:`resolved_key`) holds
      :meth:`~bt_raider.robot.retarget.ResolvedAction.as_dict`: ``{"action", "args",
      "grounding", "bindings", "query", "phrases", "recovered"}``, from the passing check until
      the guard's next run starts.

    Args:
        child: the action's behaviour (any py_trees behaviour).
        query: the action to check: text, a :class:`~bt_raider.checking.contract.Query`, or a callable
            returning one at check time (e.g. with the planner's current preconditions).
        checker: any :class:`~bt_raider.checking.contract.Checker`.
        scene: a :class:`~bt_raider.perception.scene.Scene`, an AI2-THOR metadata dict
            (validated and converted now), a callable returning either (e.g.
            ``robot.observe``; called on the worker at every check, not on the tick), or None
            for checkers that need none (see :mod:`bt_raider.runtime.scenes`).
        recovery: a :class:`~bt_raider.recovery.pipeline.Recovery`; None: an issue is a FAILURE.
        max_attempts: recoveries allowed per run of the child.
        name: the node's name (default ``Guard <child name>``).
        executor: the thread pool checks and planning run on (the shared one by default).
        deadline: seconds a check (or a recovery's planning) may run once a worker starts it
            (time queued behind other checks does not count); past it the guard fails closed
            (an ``unknown`` verdict saying so, FAILURE, the child never runs) and another
            thread takes the hung one's place in the pool. None: no deadline.
        node_action: what the child does (``"pick"``, or the robot's name for it), for a child
            that does not say so through an ``action`` attribute (as
            :class:`~bt_raider.robot.actions.ActionBehaviour` does). A child that says what
            it does never runs on words that ask for another kind of action ("The cup,
            please." asks to hand it over; a pick node under it): the run fails at its first
            verdict, before any recovery moves the robot (:attr:`refusal` says why).

    Attributes:
        phase: the current :class:`Phase`.
        query: the query being checked (refined by a recovery's resolved arguments).
        verdict: the latest verdict of this run.
        attempts: recoveries started in this run.
        plan: the latest :class:`~bt_raider.recovery.pipeline.RecoveryPlan`.
        recovery_tree: the latest recovery subtree (ticked from inside the guard).
        vars_id: this guard's part of the blackboard keys of recovery variables.
        vars_scope: the current recovery run's scope, ``<vars_id>/<n>``: its code's variables
            live at ``/bt_raider/vars/<vars_scope>/<name>`` until the run ends (see
            :func:`~bt_raider.robot.actions.vars_key`).
        resolved: what the passing check of this run resolved the action to (else None); for
            a compound instruction, with one resolution per step (``resolved.steps``).
        steps: a compound instruction's steps ("pick the tomato", "put it in the bowl"), as
            checked now (a step a recovery resolved is replaced by its resolved call); empty
            for one action. Each step is checked on the state the earlier ones lead to; the
            first with an issue is recovered on its own (its query, its verdict, its scene).
        step_verdicts: per step of the latest check, the query checked and its verdict.
        resolved_key: the blackboard key of :attr:`resolved`.
        guard_id: this guard's id, unique in the process whatever its name (``<name>#<n>``,
            :func:`~bt_raider.robot.retarget.new_guard_id`): every blackboard key of its state
            (:attr:`key`, :attr:`resolved_key`, :attr:`vars_id`) and its trace entry use it.
        key: the blackboard key of its latest verdict, ``/bt_raider/verdicts/<guard_id>``.
        designation: what the instruction's words allow, per argument (a
            :class:`~bt_raider.robot.designation.GuardIntent`, read at this run's first check,
            narrowed by the person's answers); the child is released only on arguments inside
            it (else the run fails with :attr:`refusal`). None before the first verdict.
        refusal: why this run refused to release the child (its resolved arguments lay outside
            the designation, or the child does another kind of action than the words ask),
            else None.
        forecast: what a :class:`~bt_raider.runtime.lookahead.LookAhead` foresees for this
            step (a ``Forecast``), or None.
        early_verdict: set by a look-ahead of policy ``"recover"``: the next run takes it as
            its first check's verdict (recovering at once), then checks as usual.
        early_if: None, or a test of the scene that check reads (on the worker): the early
            verdict stands only if it returns True (the world is as the look-ahead predicted);
            else the guard checks for itself.
    """

    def __init__(
        self,
        child: py_trees.behaviour.Behaviour,
        query: QueryLike,
        checker: Checker,
        *,
        scene: SceneLike = None,
        recovery: Recovery | None = None,
        max_attempts: int = 2,
        name: str | None = None,
        executor: Executor | None = None,
        deadline: float | None = DEFAULT_DEADLINE,
        node_action: str | None = None,
    ) -> None:
        super().__init__(name=name or f"Guard {child.name}", child=child)
        names = recovery.actions if isinstance(recovery, Recovery) else None
        own = names.verb_of if names is not None else None
        if node_action is not None and action_kind(node_action, own) is None:
            raise UsageError(
                f"node_action must name a kind of action ({', '.join(ACTIONS)}) or one of the "
                f"robot's own names, got {node_action!r}"
            )
        self.node_action = node_action
        if not callable(getattr(checker, "check", None)):
            raise UsageError(f"checker must have check(scene, query, *, cancel), got {checker!r}")
        if recovery is not None and not isinstance(recovery, Recovery):
            raise UsageError(
                f"recovery must be a bt_raider.recovery.pipeline.Recovery, got {type(recovery).__name__}: "
                "wrap a planner as Recovery(planner, robot, human)"
            )
        if not isinstance(max_attempts, int) or isinstance(max_attempts, bool) or max_attempts < 0:
            raise UsageError(f"max_attempts must be an integer >= 0, got {max_attempts!r}")
        if deadline is not None and (
            isinstance(deadline, bool)
            or not isinstance(deadline, (int, float))
            or not 0 < deadline < math.inf
        ):
            raise UsageError(f"deadline must be seconds > 0 (finite) or None, got {deadline!r}")
        # A bad query is an error now, not at the first tick; parsed once, reused by every run
        # (a tree of 1,000 guards initialises them all in its first tick).
        self._parsed = None if callable(query) else (query, as_query(query))
        self.query_source = query
        self.checker = checker
        self.scene = scene_source(scene)  # a dict: validated now (SceneError), converted once
        self.recovery = recovery
        self.max_attempts = max_attempts
        self.executor = executor
        self.deadline = deadline
        self._cancel_kw = _accepts_cancel(checker.check)
        # Every key of this guard's state is made from its id, never from its display name:
        # two guards named alike (or both left at the default) never read each other's state.
        self.guard_id = new_guard_id(self.name)
        self.key = verdict_key(self.guard_id)
        self._plain_key = "." not in self.key  # a dot would make set() nest an attribute
        self.blackboard = self.attach_blackboard_client(name=self.name)
        self.blackboard.register_key(key=self.key, access=py_trees.common.Access.WRITE)
        self.blackboard.register_key(key=LAST_VERDICT, access=py_trees.common.Access.WRITE)
        self.resolved_key = resolved_key(self.guard_id)
        self.blackboard.register_key(key=self.resolved_key, access=py_trees.common.Access.WRITE)
        # State of one run (reset by initialise()).
        self.phase = Phase.IDLE
        self.query: Query | None = None
        self.verdict: Verdict | None = None
        self.attempts = 0
        self.plan: RecoveryPlan | None = None
        self.recovery_tree: py_trees.behaviour.Behaviour | None = None
        # Recovery variables: /bt_raider/vars/<vars_id>/<run n>/<name>, one scope per run.
        self.vars_id = self.guard_id
        self.vars_scope = ""
        self._recovery_runs = 0
        self._vars_live = False  # the current scope may hold variables
        self._pending: worker.Pending[Any] | None = None
        self._unsent: tuple[Callable[[], Any] | None] | None = None  # a check waiting to go
        self._outcome: Status | None = None
        self._scene_seen: Any = None
        self._recovery_error: str | None = None
        self.resolved: ResolvedAction | None = None
        self.designation: GuardIntent | None = None
        self.refusal: str | None = None
        self._original_steps: list[str] = []
        self._asked: Query | None = None  # the query before a recovery refined it
        self._retargeted = False  # the child was retargeted in this run
        self.steps: list[str] = []
        self.step_verdicts: list[tuple[str, Verdict]] = []
        self._recovering_step: int | None = None  # the compound's step being recovered
        self._recovered_steps: set[int] = set()
        self.forecast: Any = None
        self.early_verdict: Verdict | None = None
        self.early_if: Callable[[Any], bool] | None = None
        self._early: tuple[Verdict, Callable[[Any], bool] | None] | None = None

    # ------------------------------------------------------------------ public helpers
    @property
    def pending(self) -> worker.Pending[Any] | None:
        """The background check or planning, while there is one."""
        return self._pending

    # ------------------------------------------------------------------ tick
    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        """Poll the background work, then tick the recovery subtree or the child.

        Yields:
            a reference to itself or one of its (or the recovery subtree's) nodes
        """
        if self.phase is _ACTING and self.status is _RUNNING:
            # Hot path: the verdict is cached for this run; only the child is ticked.
            yield from self.decorated.tick()
            new_status = self.decorated.status
            if new_status is not _RUNNING:
                self.stop(new_status)
            self.status = new_status
            yield self
            return
        pending = self._pending
        if (
            pending is not None
            and not pending._done  # noqa: SLF001 - Pending.done() without the call, per guard per tick
            and self.status is _RUNNING
            and (self.phase is _CHECKING or self.phase is _PLANNING)
            and (pending.deadline is None or not pending.overdue())
        ):
            # Waiting on the worker: nothing changes this tick. A tree of 1,000 guards pays
            # this path 1,000 times a tick, so it skips the logging and the status update.
            yield self
            return
        unsent = self._unsent
        if (
            unsent is not None
            and pending is None
            and self.status is _RUNNING
            and self.phase is _CHECKING
        ):
            # Waiting for room to send the check (SUBMIT_BUDGET): the same, until there is.
            self._poll()  # with nothing pending, it only sends the check when there is room
            yield self
            return
        self.logger.debug(f"{self.__class__.__name__}.tick()")
        if self.status is not _RUNNING:
            # The check was just submitted: RUNNING now, even if a fast checker already
            # finished, so the first tick never runs the child.
            self.initialise()
        else:
            self._poll()
        if self.phase is _RECOVERING and self.recovery_tree is not None:
            yield from self.recovery_tree.tick()
            self._after_recovery_tick()
        if self.phase is _ACTING:
            yield from self.decorated.tick()
        new_status = self.update()
        if new_status is not _RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

    def initialise(self) -> None:
        """Start a run: forget the last one and submit the check (never blocks)."""
        self._drop_recovery_tree()
        self.phase = _IDLE
        self.verdict = None
        self.plan = None
        self.attempts = 0
        self._outcome = None
        self._recovery_error = None
        self._asked = None
        self.designation = None
        self.refusal = None
        self.steps, self.step_verdicts = [], []
        self._original_steps = []
        self._recovering_step = None
        self._recovered_steps = set()
        early = self.early_verdict  # used by one run only
        self._early = None if early is None else (early, self.early_if)
        self.early_verdict = self.early_if = None
        restore_error = self._restore_child()
        if restore_error is not None:
            self._fail(restore_error)
            return
        source = self.query_source
        if callable(source):
            # Built on the worker: a PDDL precondition query grounds the action against the
            # planner's state, which is too slow for a tick.
            self.query = None
            self._submit_check(source)
            return
        parsed = self._parsed
        if parsed is not None and parsed[0] is source:
            self.query = parsed[1]
        else:  # query_source was replaced since
            try:
                self.query = as_query(source)
            except Exception as exc:  # fail closed, say why
                self._fail(f"cannot build the query to check: {_describe(exc)}")
                return
            self._parsed = (source, self.query)
        self.steps = list(compound_steps(self.query))
        self._original_steps = list(self.steps)
        self._submit_check()

    def update(self) -> Status:
        if self._outcome is not None:
            return self._outcome
        if self.phase is _ACTING:
            return self.decorated.status
        return _RUNNING

    def terminate(self, new_status: Status) -> None:
        """Cancel pending work and stop a running recovery (never sets the status)."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        self._unsent = None  # a check not sent yet never will be
        tree = self.recovery_tree
        if tree is not None and tree.status == Status.RUNNING:
            tree.stop(Status.INVALID)
        self._clear_vars()  # the run is over: its recovery variables go with it
        if new_status == Status.INVALID:
            self.phase = Phase.IDLE

    def tip(self) -> py_trees.behaviour.Behaviour | None:
        if self.phase is Phase.RECOVERING and self.recovery_tree is not None:
            return self.recovery_tree.tip()
        return super().tip()

    # ------------------------------------------------------------------ checking
    def _submit_check(self, build: Callable[[], Any] | None = None) -> None:
        self.phase = _CHECKING
        self.feedback_message = f"checking {self.query or 'the current query'}"
        self._unsent = None
        if SUBMIT_BUDGET.take():
            self._send_check(build)
        else:  # this tick has submitted enough: the next one sends it
            self._unsent = (build,)

    def _send_check(self, build: Callable[[], Any] | None) -> None:
        self._unsent = None
        self._pending = worker.submit(
            self._check_job,
            self.query,
            build,
            tuple(self.steps),
            executor=self.executor,
            deadline=self.deadline,
            reread=self._reread_texts(),
        )

    def _poll(self) -> None:
        pending = self._pending
        if pending is None:
            unsent = self._unsent
            if unsent is not None and self.phase is _CHECKING and SUBMIT_BUDGET.take():
                self._send_check(unsent[0])
            return
        if not pending.done():
            if pending.deadline is not None and pending.overdue():
                self._on_overdue(pending)
            return
        if not INTAKE_BUDGET.take():
            return  # this tick has taken in enough results: the next one takes this
        self._pending = None
        if pending.overdue():  # finished, but after its deadline: too late to trust
            self._on_overdue(pending)
        elif self.phase is _CHECKING:
            self._on_verdict(pending)
        elif self.phase is _PLANNING:
            self._on_plan(pending)

    def _fail(self, reason: str) -> None:
        self._outcome = Status.FAILURE
        self.phase = Phase.DONE
        self.feedback_message = reason


def guard_tree(
    root: py_trees.behaviour.Behaviour,
    checker: Checker,
    *,
    select: Callable[[py_trees.behaviour.Behaviour], QueryLike | None],
    scene: SceneLike = None,
    recovery: Recovery | None = None,
    **kw: Any,
) -> py_trees.behaviour.Behaviour:
    """Wrap the nodes of an existing tree for which ``select`` returns a query.

    Each selected node is replaced in its parent, at its place, by a :class:`RaiderGuard`
    around it, with py_trees' own calls (``Composite.remove_child``/``insert_child``; a
    decorator's child is swapped the way ``Decorator.__init__`` sets it, as py_trees has no
    call for that). Nodes already guarded are left alone. Every query is read and validated
    before the tree changes, so a bad one leaves the tree as it was.

    Args:
        root: the tree's root (or the root of a subtree).
        checker: the checker every guard uses.
        select: node -> its query (as for :class:`RaiderGuard`), or None to leave it alone.
        scene: as for :class:`RaiderGuard` (a dict is converted once, for every guard).
        recovery: as for :class:`RaiderGuard`.
        **kw: more :class:`RaiderGuard` options (``max_attempts``, ...).

    Returns:
        The root, or the guard that replaced it when the root itself was selected.

    Raises:
        QueryError: ``select`` returned a query that cannot be checked (nothing was changed).
        SceneError: ``scene`` is a dict that is not a valid scene (nothing was changed).
    """
    scene = scene_source(scene)
    chosen: list[tuple[py_trees.behaviour.Behaviour, QueryLike]] = []
    for node in list(root.iterate()):
        if isinstance(node, RaiderGuard) or isinstance(node.parent, RaiderGuard):
            continue
        query = select(node)
        if query is None:
            continue
        if not callable(query):
            as_query(query)
        chosen.append((node, query))
    new_root = root
    for node, query in chosen:
        make = partial(RaiderGuard, node, query, checker, scene=scene, recovery=recovery, **kw)
        guard = _swap_in(node, make)
        if node is root:
            new_root = guard
    return new_root


def _swap_in(
    node: py_trees.behaviour.Behaviour,
    make: Callable[[], RaiderGuard],
) -> RaiderGuard:
    """Put ``make()`` (a guard around ``node``) at ``node``'s place in its parent."""
    parent = node.parent
    if isinstance(parent, py_trees.composites.Composite):
        index = parent.remove_child(node)  # stops it if running, clears its parent
        try:
            guard = make()
        except Exception:
            parent.insert_child(node, index)  # leave the tree as it was
            raise
        parent.insert_child(guard, index)
        return guard
    if parent is not None and not isinstance(parent, py_trees.decorators.Decorator):
        raise UsageError(
            f"cannot guard {node.name!r}: its parent {parent.name!r} is a "
            f"{type(parent).__name__}, neither a py_trees Composite nor a Decorator"
        )
    if node.status == Status.RUNNING:
        node.stop(Status.INVALID)
    try:
        guard = make()
    except Exception:
        node.parent = parent  # Decorator.__init__ took the node before the guard refused
        raise
    if parent is not None:
        parent.children[0] = guard
        parent.decorated = guard
        guard.parent = parent
    return guard
