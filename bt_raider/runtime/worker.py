"""Background work for behaviours that must never block a tick.

A behaviour submits work in ``initialise()``, polls :meth:`Pending.done` in ``update()`` and
calls :meth:`Pending.cancel` in ``terminate()``. The submitted function receives a
``cancel`` :class:`threading.Event` it should check between steps (an LLM loop checks it
between model calls), because a running Python thread cannot be killed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_shared: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def shared_executor() -> ThreadPoolExecutor:
    """The process-wide pool checks run on (created on first use)."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = ThreadPoolExecutor(max_workers=8, thread_name_prefix="bt_raider")
        return _shared


class Pending(Generic[T]):
    """A handle on work running in the background."""

    def __init__(self, future: Future[T], cancel_event: threading.Event) -> None:
        self._future = future
        self.cancel_event = cancel_event

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> T:
        """The result (re-raises the work's exception). Only call once :meth:`done`."""
        return self._future.result(timeout=0)

    def exception(self) -> BaseException | None:
        return self._future.exception(timeout=0)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until done; True when it finished. For tests and scripts, never in a tick."""
        return not wait([self._future], timeout=timeout).not_done

    def cancel(self) -> None:
        """Ask the work to stop; a queued job never starts, a running one sees the event."""
        self.cancel_event.set()
        self._future.cancel()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()


def submit(
    fn: Callable[..., T],
    *args: Any,
    executor: ThreadPoolExecutor | None = None,
    **kwargs: Any,
) -> Pending[T]:
    """Run ``fn(*args, cancel=event, **kwargs)`` in the background and return its handle."""
    event = threading.Event()
    pool = executor or shared_executor()
    future = pool.submit(fn, *args, cancel=event, **kwargs)
    return Pending(future, event)
