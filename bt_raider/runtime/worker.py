"""Background work for behaviours that must never block a tick.

A behaviour submits work in ``initialise()``, polls :meth:`Pending.done` in ``update()`` and
calls :meth:`Pending.cancel` in ``terminate()``. The submitted function receives a
``cancel`` :class:`threading.Event` it should check between steps (an LLM loop checks it
between model calls), because a running Python thread cannot be killed.

Work may carry a deadline (``submit(..., deadline=seconds)``). A job still queued at its
deadline never starts. A job still running at its deadline, or still running ``cancel_grace``
seconds after it was cancelled, is *stuck*: the pool sets its cancel event, stops counting its
thread as one of its workers and starts a replacement, so a hung check delays the jobs behind
it by at most its deadline, and never starves them. The stuck thread is left to finish (nothing can kill it)
and then ends. Replacements are capped (``max_stuck``); past the cap a warning is logged and
queued jobs wait for a thread to come back. The pool's threads are daemons: a hung job never
keeps the process alive once the main thread is done.

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
from concurrent.futures import Executor, Future
from queue import SimpleQueue
from typing import Any, Generic, TypeVar

T = TypeVar("T")

logger = logging.getLogger(__name__)

#: Workers of the process-wide pool, and how many stuck threads it may replace.
SHARED_WORKERS = 8
SHARED_MAX_STUCK = 64

_shared: WorkerPool | None = None
_lock = threading.Lock()
#: Guards the start/cancel transition of every job (held for a few instructions).
_state = threading.Lock()
#: Notified whenever a job finishes, for :meth:`Pending.wait`.
_finished = threading.Condition()


def shared_executor() -> WorkerPool:
    """The process-wide pool checks run on (created on first use)."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = WorkerPool(SHARED_WORKERS, max_stuck=SHARED_MAX_STUCK)
        return _shared


class Pending(Generic[T]):
    """A handle on work running in the background.

    Attributes:
        deadline: the :func:`time.monotonic` time the work must finish by; None for none.
        finished_at: when the work finished (monotonic), None while it runs.
        timed_out: the work was still running (or queued) at its deadline.
    """

    __slots__ = (
        "fn",
        "args",
        "kwargs",
        "deadline",
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
    )

    def __init__(
        self,
        fn: Callable[..., T],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        deadline: float | None = None,
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs or {}
        self.deadline = deadline
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
        """Block until done; True when it finished. For tests and scripts, never in a tick."""
        with _finished:
            return _finished.wait_for(self.done, timeout)

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
            _finish(self, None, _cancelled_error(self))
            return
        pool, slot = self._pool, self._slot
        if pool is not None and slot is not None and not self._done:
            # Running: if it ignores the event, its thread is replaced after a grace period.
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
        """True when the deadline passed before the work finished."""
        deadline = self.deadline
        if deadline is None:
            return False
        finished = self.finished_at
        if finished is not None:
            return finished > deadline or self.timed_out
        return (time.monotonic() if now is None else now) > deadline

    def abandon(self) -> None:
        """Give up on the work: cancel it and, if a pool thread runs it, replace that thread.

        For work past its deadline: the caller stops waiting, and the pool stops counting the
        thread as a worker (it finishes on its own; Python cannot stop it).
        """
        self.timed_out = self.timed_out or self.overdue()
        self.cancel()
        pool, slot = self._pool, self._slot
        if pool is not None and slot is not None and not self._done:
            pool._release(self, slot)


def _cancelled_error(job: Pending[Any]) -> BaseException:
    if job.timed_out:
        return TimeoutError(f"{job.fn!r} passed its deadline before it started")
    from concurrent.futures import CancelledError

    return CancelledError()


def _finish(job: Pending[Any], result: Any, exc: BaseException | None) -> None:
    job._result = result
    job._exception = exc
    job.finished_at = time.monotonic()
    job._done = True  # last: a poller that sees done() sees the result
    with _finished:
        _finished.notify_all()


def _run(job: Pending[Any]) -> None:
    """Run one job on the current thread (skipped when cancelled or past its deadline)."""
    with _state:
        if job._started:
            return  # cancelled while queued: already finished
        job._started = True
        if job.deadline is not None and time.monotonic() > job.deadline:
            job.timed_out = True
            job._cancelled = True
        if job._event is None:
            job._event = threading.Event()
        event = job._event
        skip = job._cancelled
    if skip:
        event.set()
        _finish(job, None, _cancelled_error(job))
        return
    try:
        result = job.fn(*job.args, cancel=event, **job.kwargs)
    except BaseException as exc:  # noqa: BLE001 - kept for the poller, like a Future
        _finish(job, None, exc)
    else:
        _finish(job, result, None)


class _Slot:
    """One pool thread; ``stuck`` once its job passed the deadline and it was replaced."""

    __slots__ = ("stuck",)

    def __init__(self) -> None:
        self.stuck = False


class WorkerPool(Executor):
    """A bounded pool of daemon threads that replaces threads stuck past their job's deadline.

    Args:
        max_workers: threads running jobs at once (stuck ones not counted).
        max_stuck: how many stuck threads may be replaced at once; past it queued jobs wait.
        cancel_grace: seconds a cancelled job may keep running before its thread counts as
            stuck.
        name: prefix of the threads' names.

    Raises:
        ValueError: a size below 1 (``max_stuck`` below 0).
    """

    def __init__(
        self,
        max_workers: int = 8,
        *,
        max_stuck: int = 64,
        cancel_grace: float = 1.0,
        name: str = "bt_raider",
    ) -> None:
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be an integer >= 1, got {max_workers!r}")
        if not isinstance(max_stuck, int) or max_stuck < 0:
            raise ValueError(f"max_stuck must be an integer >= 0, got {max_stuck!r}")
        if not cancel_grace >= 0:
            raise ValueError(f"cancel_grace must be seconds >= 0, got {cancel_grace!r}")
        self.max_workers = max_workers
        self.max_stuck = max_stuck
        self.cancel_grace = cancel_grace
        self.name = name
        self._queue: SimpleQueue[Pending[Any] | None] = SimpleQueue()
        self._lock = threading.Lock()
        self._live = 0  # threads alive, stuck ones included
        self._stuck = 0  # threads whose job passed its deadline
        self._waiting = 0  # threads blocked on the queue
        self._threads: dict[threading.Thread, _Slot] = {}
        self._ids = itertools.count()
        self._shutdown = False
        self._capped = False
        # Deadlines of running jobs, watched by one daemon thread started on first need.
        self._watch: list[tuple[float, int, Pending[Any], _Slot]] = []
        self._watch_cond = threading.Condition(threading.Lock())
        self._watcher: threading.Thread | None = None

    def __repr__(self) -> str:
        return (
            f"WorkerPool({self.max_workers} workers, {self._live} threads, "
            f"{self._stuck} stuck, {self.queued} queued)"
        )

    # ------------------------------------------------------------------ figures
    @property
    def threads(self) -> int:
        """Threads alive, stuck ones included."""
        return self._live

    @property
    def stuck(self) -> int:
        """Threads still running a job that passed its deadline."""
        return self._stuck

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
        # Cheap when the pool is full and healthy: two reads and a comparison.
        if self._live - self._stuck < self.max_workers and self._waiting < self._queue.qsize():
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
        """Start every worker thread now (as a robot would at setup), not in the first tick."""
        with self._lock:
            missing = self.max_workers - (self._live - self._stuck)
        for _ in range(missing):
            self._spawn(force=True)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the threads once the queue is done (``cancel_futures``: drop queued jobs).

        With ``wait`` it joins the threads that are not stuck.
        """
        with self._lock:
            self._shutdown = True
            threads = [t for t, slot in self._threads.items() if not slot.stuck]
        if cancel_futures:
            while True:
                try:
                    job = self._queue.get_nowait()
                except Exception:  # noqa: BLE001 - queue.Empty
                    break
                if job is not None:
                    job.cancel()
        for _ in threads:
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
                self._live - self._stuck >= self.max_workers or self._waiting >= self._queue.qsize()
            ):
                return  # another submit or a thread coming back covers it
            if self._live >= self.max_workers + self.max_stuck:
                if not self._capped:
                    self._capped = True
                    logger.warning(
                        "%s: %d thread(s) stuck past their job's deadline, the cap "
                        "(max_stuck=%d) is reached; queued jobs wait for a thread to finish",
                        self.name,
                        self._stuck,
                        self.max_stuck,
                    )
                return
            self._live += 1
            slot = _Slot()
            thread = threading.Thread(
                target=self._work,
                args=(slot,),
                name=f"{self.name}_{next(self._ids)}",
                daemon=True,
            )
            self._threads[thread] = slot
        thread.start()

    def _work(self, slot: _Slot) -> None:
        queue, lock = self._queue, self._lock
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
                if job.deadline is not None:
                    self._watch_job(job, slot, job.deadline)
                _run(job)
                job._slot = None
                if slot.stuck:
                    with lock:
                        # Back from a stuck job: a worker again if the pool is short of one.
                        self._stuck -= 1
                        self._capped = False
                        slot.stuck = False
                        if self._live - self._stuck > self.max_workers:
                            return
        finally:
            with lock:
                self._live -= 1
                self._threads.pop(threading.current_thread(), None)

    def _release(self, job: Pending[Any], slot: _Slot) -> None:
        """Stop counting ``slot``'s thread, stuck in ``job``: cancel the job, replace the thread."""
        with _state:
            event = job._event
        if event is not None:
            event.set()
        with self._lock:
            if slot.stuck or job._done or job._slot is not slot:
                return
            slot.stuck = True
            self._stuck += 1
            stuck = self._stuck
        why = "past its deadline" if job.timed_out else "after it was cancelled"
        logger.warning(
            "%s: %r is still running %s; its thread is left to finish and another takes "
            "its place (%d stuck)",
            self.name,
            job,
            why,
            stuck,
        )
        self._spawn()

    # ------------------------------------------------------------------ deadlines
    def _watch_job(self, job: Pending[Any], slot: _Slot, when: float) -> None:
        """Release ``slot`` at ``when`` if ``job`` is still running on it then."""
        with self._watch_cond:
            heapq.heappush(self._watch, (when, next(self._ids), job, slot))
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch_loop, name=f"{self.name}_deadlines", daemon=True
                )
                self._watcher.start()
            elif self._watch[0][2] is job:
                self._watch_cond.notify()

    def _watch_loop(self) -> None:
        cond, heap = self._watch_cond, self._watch
        while True:
            expired = []
            with cond:
                if self._shutdown:
                    return
                now = time.monotonic()
                while heap and heap[0][0] <= now:
                    expired.append(heapq.heappop(heap))
                if not expired:
                    # Capped: a far-off deadline (1e300 s) is no valid lock timeout.
                    cond.wait(min(heap[0][0] - now, 3600.0) if heap else None)
                    continue
            for _, _, job, slot in expired:
                if not job._done:
                    job.timed_out = job.timed_out or job.overdue()
                    self._release(job, slot)


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
            :class:`concurrent.futures.Executor` works too, but cannot replace a stuck thread.
        deadline: seconds from now the work must finish in; None for no deadline.

    Raises:
        ValueError: a deadline that is not a positive number of seconds.
    """
    when = None
    if deadline is not None:
        if isinstance(deadline, bool) or not isinstance(deadline, (int, float)):
            raise ValueError(f"deadline must be seconds (a number > 0) or None, got {deadline!r}")
        if not deadline > 0 or math.isnan(deadline):
            raise ValueError(f"deadline must be more than 0 seconds, got {deadline!r}")
        if not math.isinf(deadline):
            when = time.monotonic() + deadline
    job: Pending[T] = Pending(fn, args, kwargs, when)
    pool = executor or shared_executor()
    if isinstance(pool, WorkerPool):
        pool.submit_pending(job)
    else:
        job._future = pool.submit(_run, job)
    return job
