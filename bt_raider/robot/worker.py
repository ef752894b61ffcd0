"""Background work for behaviours that must never block a tick.

A behaviour submits work in ``initialise()``, polls :meth:`Pending.done` in ``update()`` and
calls :meth:`Pending.cancel` in ``terminate()``. The submitted function receives a
``cancel`` :class:`threading.Event` it should check between steps (an LLM loop checks it
between model calls), because a running Python thread cannot be killed.

Work may carry a deadline (``submit(..., deadline=seconds)``): the seconds it has from when it
is *submitted*, waiting in the queue included. The caller is owed an answer by then: a job
that could not start in time (every thread held by hung jobs, the cap reached) is overdue all
the same, never started once its deadline has passed, and finishes with
:class:`JobNotStarted` (its caller fails closed). The :class:`WorkerPool` keeps hung jobs from
starving the queue behind them:

* a job running far longer than jobs usually do on the pool (3x the moving average of the jobs
  finished so far, at least ``slow_after``) while others wait is *late*, and *covered*: its
  thread stops counting as one of the pool's workers and another thread starts, so the queue
  keeps moving. Only jobs that ran their course teach the pool its typical time: one that was
  cancelled, ran past its deadline or had its thread covered does not (a stopped guard's slow
  check finishing late must not make the pool wait longer before covering the next blocked
  one). A cold pool, where no job has finished yet, counts a job late past
  ``slow_after``, for up to ``max_workers`` threads until one finishes: jobs blocked from the
  first tick do not starve the others, and slow ones starting together get one round of
  stand-ins, not a burst;
* at its deadline, or ``cancel_grace`` seconds after it was cancelled, a job still running is
  *stuck*: the pool sets its cancel event and covers it the same way.

A covered thread is left to finish (nothing can kill it), then serves the pool again if it is
short of a worker, or ends. Extra threads are capped (``max_extra``); past the cap a warning
is logged and queued jobs wait for a thread to come back. The pool's threads are daemons: a
hung job never keeps the process alive once the main thread is done.

Submitting is cheap on purpose (a guard submits in its first tick, and a tree may hold a
thousand guards): no lock, no :class:`threading.Event` and no :class:`~concurrent.futures.Future`
are made on the caller's thread; the cancel event is made on the worker when the job starts.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Executor, Future
from queue import Empty, SimpleQueue
from typing import Any, Generic, TypeVar

from bt_raider.errors import BtRaiderError, UsageError

T = TypeVar("T")

logger = logging.getLogger(__name__)

#: Workers of the process-wide pool, and how many extra threads may cover hung ones.
SHARED_WORKERS = 8
SHARED_MAX_EXTRA = 64

_shared: WorkerPool | None = None
_lock = threading.Lock()
#: Guards the start/cancel transition of every job (held for a few instructions).
_state = threading.Lock()
#: Notified whenever a job finishes, for :meth:`Pending.wait`.
_finished = threading.Condition()


class JobNotStarted(BtRaiderError, TimeoutError):
    """A job's deadline passed while it waited in the queue: it never started."""


def shared_executor() -> WorkerPool:
    """The process-wide pool checks run on (created on first use)."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = WorkerPool(SHARED_WORKERS, max_extra=SHARED_MAX_EXTRA)
        return _shared


class Pending(Generic[T]):
    """A handle on work running in the background.

    Attributes:
        timeout: the seconds the work has from its submission (None: no deadline).
        deadline: the :func:`time.monotonic` time it must finish by, set when it is submitted.
        started_at: when a thread started it (monotonic), None while queued.
        finished_at: when it finished (monotonic), None until then.
        timed_out: it was still running at its deadline.
    """

    __slots__ = (
        "fn",
        "args",
        "kwargs",
        "timeout",
        "deadline",
        "started_at",
        "finished_at",
        "timed_out",
        "_event",
        "_cancelled",
        "_started",
        "_done",
        "_result",
        "_exception",
        "_future",
        "_pool",
        "_slot",
        "_warned",
    )

    def __init__(
        self,
        fn: Callable[..., T],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs or {}
        self.timeout = timeout
        self.deadline: float | None = None if timeout is None else time.monotonic() + timeout
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.timed_out = False
        self._event: threading.Event | None = None
        self._cancelled = False
        self._started = False
        self._done = False
        self._result: Any = None
        self._exception: BaseException | None = None
        self._future: Future[Any] | None = None  # set when run on a foreign executor
        self._pool: WorkerPool | None = None
        self._slot: _Slot | None = None  # the pool thread running it
        self._warned = ""  # what the pool last warned about it

    def __repr__(self) -> str:
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        state = "done" if self._done else "running" if self._started else "queued"
        return f"<Pending {name} {state}{' cancelled' if self._cancelled else ''}>"

    def done(self) -> bool:
        return self._done

    def result(self) -> T:
        """The result (re-raises the work's exception). Only call once :meth:`done`."""
        if not self._done:
            raise TimeoutError(f"{self!r} has not finished")
        if self._exception is not None:
            raise self._exception
        return self._result

    def exception(self) -> BaseException | None:
        if not self._done:
            raise TimeoutError(f"{self!r} has not finished")
        return self._exception

    def wait(self, timeout: float | None = None) -> bool:
        """Block until done; True when it finished. For tests and scripts, never in a tick.

        A job still queued at its deadline is given up then (:meth:`expire`), so a caller
        waiting on a pool whose threads are all held never waits past the deadline.
        """
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            limit = end
            if self.deadline is not None and not self._started:
                limit = self.deadline if limit is None else min(limit, self.deadline)
            with _finished:
                left = None if limit is None else max(0.0, limit - time.monotonic())
                if _finished.wait_for(self.done, left):
                    return True
            if self.expire():
                return True
            if end is not None and time.monotonic() >= end:
                return self._done

    def expire(self, now: float | None = None) -> bool:
        """Finish the job with :class:`JobNotStarted` if its deadline passed while it was queued.

        Returns:
            True when it did (the job is done and ``timed_out``), False otherwise.
        """
        deadline = self.deadline
        if deadline is None or self._started:
            return False
        now = time.monotonic() if now is None else now
        if now <= deadline:
            return False
        with _state:
            if self._started:
                return False
            self._started = True  # no worker may start it now
        self.timed_out = True
        if self._future is not None:
            self._future.cancel()
        _finish(self, None, JobNotStarted(self._not_started()))
        return True

    def _not_started(self) -> str:
        return (
            f"it could not start within its deadline of {self.timeout:g} s "
            "(every worker thread was busy)"
        )

    def cancel(self) -> None:
        """Ask the work to stop; a queued job never starts, a running one sees the event."""
        with _state:
            self._cancelled = True
            event = self._event
            queued = not self._started and not self._done
            if queued:
                self._started = True  # no worker may start it now
        if event is not None:
            event.set()
        if queued:
            if self._future is not None:
                self._future.cancel()
            _finish(self, None, CancelledError())
            return
        pool, slot = self._pool, self._slot
        if pool is not None and slot is not None and not self._done:
            # Running: if it ignores the event, its thread is covered after a grace period.
            pool._watch_job(self, slot, time.monotonic() + pool.cancel_grace)

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def cancel_event(self) -> threading.Event:
        """The event the work sees as ``cancel`` (set once cancelled)."""
        with _state:
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        if self._cancelled:
            event.set()
        return event

    def overdue(self, now: float | None = None) -> bool:
        """True when the work is past its deadline, queued or running, or finished after it."""
        deadline = self.deadline
        if deadline is None:
            return False
        finished = self.finished_at
        if finished is not None:
            return finished > deadline or self.timed_out
        return (time.monotonic() if now is None else now) > deadline

    def abandon(self) -> None:
        """Give up on the work: cancel it and, if a pool thread runs it, cover that thread.

        For work past its deadline: the caller stops waiting, and the pool stops counting the
        thread as a worker (it finishes on its own; Python cannot stop it).
        """
        if self.expire():
            return  # never started: finished as JobNotStarted
        self.timed_out = self.timed_out or self.overdue()
        self.cancel()
        pool, slot = self._pool, self._slot
        if pool is not None and slot is not None and not self._done:
            pool._release(self, slot)


def _finish(job: Pending[Any], result: Any, exc: BaseException | None) -> None:
    job._result = result
    job._exception = exc
    job.finished_at = time.monotonic()
    job._done = True  # last: a poller that sees done() sees the result
    with _finished:
        _finished.notify_all()


def _run(job: Pending[Any], now: float | None = None) -> bool:
    """Run one job on the current thread (started at ``now``); False if cancelled before."""
    now = time.monotonic() if now is None else now
    if job.deadline is not None and now > job.deadline:
        job.expire(now)  # too late to start: its caller has failed closed (or will)
        return False
    with _state:
        if job._started:
            return False  # cancelled while queued: already finished
        job._started = True
        job.started_at = now
        if job._event is None:
            job._event = threading.Event()
        event = job._event
    try:
        result = job.fn(*job.args, cancel=event, **job.kwargs)
    except BaseException as exc:  # noqa: BLE001 - kept for the poller, like a Future
        _finish(job, None, exc)
    else:
        _finish(job, result, None)
    return True


class _Slot:
    """One pool thread; ``covered`` while another thread stands in for it."""

    __slots__ = ("covered", "job")

    def __init__(self) -> None:
        self.covered = False
        self.job: Pending[Any] | None = None


class WorkerPool(Executor):
    """A bounded pool of daemon threads that covers threads held by hung jobs.

    Args:
        max_workers: threads running jobs at once (covered ones not counted).
        max_extra: how many extra threads may cover hung or slow ones; past it queued jobs
            wait.
        slow_after: the least a job must run before it may count as slow (seconds); a job
            counts as slow past 3x the pool's typical job time and this.
        cancel_grace: seconds a cancelled job may keep running before its thread is covered.
        name: prefix of the threads' names.

    Raises:
        ValueError: a size below 1 (``max_extra`` below 0) or a time below 0.
    """

    def __init__(
        self,
        max_workers: int = 8,
        *,
        max_extra: int = 64,
        slow_after: float = 0.25,
        cancel_grace: float = 1.0,
        name: str = "bt_raider",
    ) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise UsageError(f"max_workers must be an integer >= 1, got {max_workers!r}")
        if isinstance(max_extra, bool) or not isinstance(max_extra, int) or max_extra < 0:
            raise UsageError(f"max_extra must be an integer >= 0, got {max_extra!r}")
        for label, value in (("slow_after", slow_after), ("cancel_grace", cancel_grace)):
            if not (isinstance(value, (int, float)) and 0 <= value < math.inf):
                raise UsageError(f"{label} must be seconds >= 0, got {value!r}")
        self.max_workers = max_workers
        self.max_extra = max_extra
        self.slow_after = float(slow_after)
        self.cancel_grace = float(cancel_grace)
        self.name = name
        self._queue: SimpleQueue[Pending[Any] | None] = SimpleQueue()
        self._lock = threading.Lock()
        self._live = 0  # threads alive, covered ones included
        self._covered = 0  # threads another one stands in for
        self._waiting = 0  # threads blocked on the queue
        self._starting = 0  # threads started that have not reached their loop yet
        self._threads: dict[threading.Thread, _Slot] = {}
        self._running: set[_Slot] = set()
        self._typical: float | None = None  # moving average of job run times
        self._ids = itertools.count()
        self._shutdown = False
        self._capped = False
        # Deadlines of running jobs and the slow-job check, in one daemon thread.
        self._watch: list[tuple[float, int, Pending[Any], _Slot]] = []
        self._watch_cond = threading.Condition(threading.Lock())
        self._watch_idle = False
        self._watcher: threading.Thread | None = None

    def __repr__(self) -> str:
        return (
            f"WorkerPool({self.max_workers} workers, {self._live} threads, "
            f"{self._covered} covered, {self.queued} queued)"
        )

    # ------------------------------------------------------------------ figures
    @property
    def threads(self) -> int:
        """Threads alive, covered ones included."""
        return self._live

    @property
    def covered(self) -> int:
        """Threads held by a hung or slow job, another thread standing in for each."""
        return self._covered

    @property
    def queued(self) -> int:
        """Jobs waiting for a thread."""
        return self._queue.qsize()

    # ------------------------------------------------------------------ submitting
    def submit_pending(self, job: Pending[Any]) -> Pending[Any]:
        """Queue a :class:`Pending` (what :func:`submit` does); returns it."""
        if self._shutdown:
            raise RuntimeError(f"{self!r} is shut down: cannot take {job!r}")
        job._pool = self
        self._queue.put(job)
        # Cheap when the pool is full and healthy: two reads and a comparison. Starting a
        # thread waits for it to run (~0.3 ms): the caller (a tick) starts at most one at a
        # time, and each new thread starts the next while jobs queue (see _work).
        if (
            self._starting == 0
            and self._live - self._covered < self.max_workers
            and self._waiting < self._queue.qsize()
        ):
            self._spawn()
        return job

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """:class:`concurrent.futures.Executor` style: ``fn`` gets no cancel event."""
        future: Future[T] = Future()

        def call(*, cancel: threading.Event) -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the future
                future.set_exception(exc)

        self.submit_pending(Pending(call))
        return future

    def warm_up(self) -> None:
        """Start every worker thread now (as a robot would at setup), not in the first tick.

        A process ticking a large tree may also, once the tree is built, ``gc.freeze()`` the
        objects made at setup (a full collection, which a check's thread may start while
        holding the GIL, then skips them) and raise ``sys.setswitchinterval`` above its tick's
        length; ``benchmarks/ticks.py`` does both and says so.
        """
        with self._lock:
            missing = self.max_workers - (self._live - self._covered)
        for _ in range(missing):
            self._spawn(force=True)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the threads once the queue is done (``cancel_futures``: drop queued jobs).

        With ``wait`` it joins the threads that no hung job holds.
        """
        with self._lock:
            self._shutdown = True
            threads = [t for t, slot in self._threads.items() if not slot.covered]
            sentinels = len(self._threads)
        if cancel_futures:
            while True:
                try:
                    job = self._queue.get_nowait()
                except Empty:
                    break
                if job is not None:
                    job.cancel()
        for _ in range(sentinels):
            self._queue.put(None)
        with self._watch_cond:
            self._watch_cond.notify_all()
        if wait:
            for thread in threads:
                thread.join()

    # ------------------------------------------------------------------ threads
    def _spawn(self, force: bool = False) -> None:
        with self._lock:
            if self._shutdown:
                return
            if not force and (
                self._live - self._covered >= self.max_workers
                or self._waiting >= self._queue.qsize()
            ):
                return  # another submit or a thread coming back covers it
            if self._live >= self.max_workers + self.max_extra:
                if not self._capped:
                    self._capped = True
                    logger.warning(
                        "%s: %d thread(s) held by hung or slow jobs and the cap "
                        "(max_extra=%d) is reached; queued jobs wait for a thread to finish",
                        self.name,
                        self._covered,
                        self.max_extra,
                    )
                return
            self._live += 1
            self._starting += 1
            slot = _Slot()
            thread = threading.Thread(
                target=self._work,
                args=(slot,),
                name=f"{self.name}_{next(self._ids)}",
                daemon=True,
            )
            self._threads[thread] = slot
            start_watcher = self._watcher is None
            if start_watcher:
                self._watcher = threading.Thread(
                    target=self._watch_loop, name=f"{self.name}_watch", daemon=True
                )
        thread.start()
        if start_watcher:
            self._watcher.start()  # type: ignore[union-attr]

    def _work(self, slot: _Slot) -> None:
        queue, lock = self._queue, self._lock
        with lock:
            self._starting -= 1
        self._spawn()  # more jobs queued than threads waiting: start the next one from here
        try:
            while True:
                with lock:
                    self._waiting += 1
                job = queue.get()
                with lock:
                    self._waiting -= 1
                if job is None:
                    return
                job._slot = slot
                slot.job = job
                with lock:
                    self._running.add(slot)
                now = time.monotonic()
                with self._watch_cond:  # the watcher looks at running jobs while any runs
                    if job.deadline is not None:
                        heapq.heappush(self._watch, (job.deadline, next(self._ids), job, slot))
                    if self._watch_idle or job.deadline is not None:
                        self._watch_cond.notify()
                ran = _run(job, now)
                job._slot = None
                slot.job = None
                with lock:
                    self._running.discard(slot)
                    if (
                        ran
                        and not job.timed_out
                        and not job._cancelled
                        and not slot.covered
                        and job.started_at is not None
                    ):
                        took = (job.finished_at or time.monotonic()) - job.started_at
                        typical = self._typical
                        self._typical = took if typical is None else 0.8 * typical + 0.2 * took
                    if slot.covered:
                        # Back from a hung job: a worker again if the pool is short of one.
                        slot.covered = False
                        self._covered -= 1
                        self._capped = False
                        if self._live - self._covered > self.max_workers:
                            return
        finally:
            with lock:
                self._live -= 1
                self._threads.pop(threading.current_thread(), None)

    def _cover(self, slot: _Slot) -> bool:
        """Stop counting ``slot``'s thread and start one in its place; False if already."""
        with self._lock:
            if slot.covered or slot.job is None:
                return False
            slot.covered = True
            self._covered += 1
        self._spawn()
        return True

    def _release(self, job: Pending[Any], slot: _Slot) -> None:
        """``job`` is stuck on ``slot``'s thread: cancel it and cover the thread."""
        with _state:
            event = job._event
        if event is not None:
            event.set()
        if job._done or job._slot is not slot:
            return
        newly = self._cover(slot)
        why = "past its deadline" if job.timed_out else "after it was cancelled"
        if job._warned == why:
            return  # the watcher and the caller both saw it
        job._warned = why
        logger.warning(
            "%s: %r is still running %s; its thread is left to finish%s (%d covered)",
            self.name,
            job,
            why,
            " and another takes its place" if newly else "",
            self._covered,
        )

    # ------------------------------------------------------------------ the watcher
    def _watch_job(self, job: Pending[Any], slot: _Slot, when: float) -> None:
        """Release ``slot`` at ``when`` if ``job`` is still running on it then."""
        with self._watch_cond:
            heapq.heappush(self._watch, (when, next(self._ids), job, slot))
            self._watch_cond.notify()

    def _slow_limit(self, typical: float | None) -> float:
        """Seconds past which a running job counts as slow."""
        return self.slow_after if typical is None else max(self.slow_after, 3 * typical)

    def _cover_slow(self, now: float) -> None:
        """Cover threads whose job is late (runs far past the typical time) while others wait.

        A cold pool (no job finished yet) has no typical time: a job running past
        ``slow_after`` is late, but at most ``max_workers`` threads are covered so until a job
        finishes. Checks blocked from the first tick so no longer starve the quick ones, and a
        cold pool of slow calls (LLM checks starting up) gets one round of stand-ins, not a
        burst up to ``max_extra``.
        """
        typical = self._typical
        if self._queue.qsize() <= self._waiting:
            return  # nothing waits
        limit = self._slow_limit(typical)
        with self._lock:
            slow = [
                s
                for s in self._running
                if not s.covered
                and s.job is not None
                and s.job.started_at is not None
                and now - s.job.started_at > limit
            ]
            if typical is None:
                slow = slow[: max(0, self.max_workers - self._covered)]
        for slot in slow:
            job = slot.job
            if job is not None and self._cover(slot):
                logger.info(
                    "%s: %r has run %.2f s (typical %s) while jobs wait: another thread "
                    "takes its place (%d covered)",
                    self.name,
                    job,
                    now - (job.started_at or now),
                    "unknown yet" if typical is None else f"{typical:.2f} s",
                    self._covered,
                )

    def _watch_loop(self) -> None:
        cond, heap = self._watch_cond, self._watch
        while True:
            with cond:
                if self._shutdown:
                    return
                now = time.monotonic()
                expired = []
                while heap and heap[0][0] <= now:
                    expired.append(heapq.heappop(heap))
                if not expired:
                    busy = bool(self._running)
                    wait = heap[0][0] - now if heap else None
                    if busy:  # look for slow jobs four times per slow limit
                        poll = max(self._slow_limit(self._typical) / 4, 0.01)
                        wait = poll if wait is None else min(wait, poll)
                    self._watch_idle = wait is None
                    # Capped: a far-off deadline (1e300 s) is no valid lock timeout.
                    cond.wait(None if wait is None else min(wait, 3600.0))
                    self._watch_idle = False
            for _, _, job, slot in expired:
                if not job._done:
                    job.timed_out = job.timed_out or job.overdue()
                    self._release(job, slot)
            self._cover_slow(time.monotonic())


class WindowBudget:
    """At most ``per_window`` units of work every ``window`` seconds, shared by many nodes.

    Bounds what a tick may take on when a thousand guards want to act in the same tick (submit
    their checks at the first tick, take in verdicts that finished together): each asks
    :meth:`take` first, and one told no tries again at its next tick. A tick no longer than
    ``window`` spans at most two windows, so it does at most ``2 * per_window`` units.
    Counting units (not timing them) keeps small trees deterministic: they never meet the cap.
    Used from the ticking thread only.
    """

    __slots__ = ("per_window", "window", "_start", "_used")

    def __init__(self, per_window: int, window: float = 0.01) -> None:
        if isinstance(per_window, bool) or not isinstance(per_window, int) or per_window < 1:
            raise UsageError(f"per_window must be an integer >= 1, got {per_window!r}")
        if not window > 0:
            raise UsageError(f"window must be seconds > 0, got {window!r}")
        self.per_window = per_window
        self.window = window
        self._start = -math.inf
        self._used = 0

    def take(self) -> bool:
        """True (and counted) if this window has room for one more unit of work."""
        if self._used < self.per_window:
            now = time.perf_counter()
            if now - self._start > self.window:
                self._start, self._used = now, 0
            self._used += 1
            return True
        now = time.perf_counter()
        if now - self._start > self.window:
            self._start, self._used = now, 1
            return True
        return False


def submit(
    fn: Callable[..., T],
    *args: Any,
    executor: Executor | None = None,
    deadline: float | None = None,
    **kwargs: Any,
) -> Pending[T]:
    """Run ``fn(*args, cancel=event, **kwargs)`` in the background and return its handle.

    Args:
        fn: the work; it gets a ``cancel`` event to check between steps.
        executor: where to run it: the shared :class:`WorkerPool` by default. Any other
            :class:`concurrent.futures.Executor` works too, but cannot cover a hung thread.
        deadline: seconds the work has from now, waiting for a thread included; None (or
            infinity) for no deadline. Past it the work is overdue; if it has not started by
            then it never does (:class:`JobNotStarted`).

    Raises:
        ValueError: a deadline that is not a positive number of seconds.
    """
    timeout = None
    if deadline is not None:
        if isinstance(deadline, bool) or not isinstance(deadline, (int, float)):
            raise UsageError(f"deadline must be seconds (a number > 0) or None, got {deadline!r}")
        if not deadline > 0:  # also NaN
            raise UsageError(f"deadline must be more than 0 seconds, got {deadline!r}")
        if not math.isinf(deadline):
            timeout = float(deadline)
    job: Pending[T] = Pending(fn, args, kwargs, timeout)
    pool = executor or shared_executor()
    if isinstance(pool, WorkerPool):
        pool.submit_pending(job)
    else:
        job._future = pool.submit(_run, job)
    return job


def wait_for_any(timeout: float) -> bool:
    """Sleep up to ``timeout`` seconds, waking as soon as a job of any pool finishes.

    For a loop that ticks a tree between sleeps (never call it in a tick): the tick after a
    check or a recovery plan finished takes its result at once instead of up to a period later.
    A job that finished just before the call is not waited for (the next tick sees it anyway).

    Returns:
        True when a job finished, False when ``timeout`` passed first.
    """
    if not timeout > 0:
        return False
    with _finished:
        return _finished.wait(timeout)
