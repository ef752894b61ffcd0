"""A ROS 2 node spinning on a background thread, safe to use from a behaviour tree.

Two things a real integration meets, handled here once:

* creating an entity (an action client, a subscription) while an executor spins on another
  thread can kill that thread (rclpy issue 1589): :class:`Spinner` creates every entity on its
  own thread, before spinning or between two turns of the loop (:meth:`Spinner.call`);
* an exception in a callback ends ``spin()``: the loop here catches it, keeps it in
  :attr:`Spinner.errors`, and spins on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from bt_raider.errors import CommunicationError, UsageError
from bt_raider.ros2 import env

T = TypeVar("T")
log = logging.getLogger(__name__)

#: Seconds :meth:`Spinner.call` waits for the spinning thread by default.
CALL_TIMEOUT_S = 10.0
#: Errors of callbacks kept in :attr:`Spinner.errors` (the oldest go first).
MAX_ERRORS = 100


class Spinner:
    """One rclpy context and node, spun by a daemon thread once :meth:`start` is called.

    Args:
        name: the node's name.
        domain_id: the ROS 2 domain (None: ``ROS_DOMAIN_ID`` of the environment, else 0).
        localhost: set ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a short lease in this
            process before the node is made (:func:`bt_raider.ros2.env.apply_local`); False
            leaves the environment to the user (a robot on a real network).
        namespace: the node's namespace.

    Attributes:
        node: the rclpy node (create entities through :meth:`call`).
        errors: ``repr`` of each exception a callback raised, oldest first.
    """

    def __init__(
        self,
        name: str,
        *,
        domain_id: int | None = None,
        localhost: bool = True,
        namespace: str = "",
    ) -> None:
        rclpy = env.need_rclpy()
        from rclpy.executors import SingleThreadedExecutor

        if localhost:
            env.apply_local(domain_id)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node(name, namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.errors: deque[str] = deque(maxlen=MAX_ERRORS)
        self._jobs: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        # Wakes the executor when a job is queued, so a job waits for no timeout.
        self._wake = self.node.create_guard_condition(lambda: None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Spinner:
        """Spin on a daemon thread (entities made before this are ready at the first turn)."""
        if self._closed:
            raise UsageError(f"the spinner of node {self.node.get_name()!r} is closed")
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name=f"ros2-{self.node.get_name()}", daemon=True
            )
            self._thread.start()
        return self

    @property
    def spinning(self) -> bool:
        """Whether the background thread is spinning."""
        return self._thread is not None and self._thread.is_alive()

    def close(self, timeout: float = 5.0) -> None:
        """Stop spinning (waits up to ``timeout`` s for the thread), destroy the node."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None:
            self._wake.trigger()
            self._thread.join(timeout)
        while self._jobs:
            _fn, future = self._jobs.popleft()
            future.cancel()
        try:
            self.executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()
        finally:
            if self.context.ok():
                self.context.try_shutdown()

    def __enter__(self) -> Spinner:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ running code on it
    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn`` on the spinning thread between two turns; its future (never blocks)."""
        if self._closed:
            raise CommunicationError(f"the spinner of node {self.node.get_name()!r} is closed")
        future: Future[T] = Future()
        if threading.current_thread() is self._thread or not self.spinning:
            self._run(fn, future)
            return future
        self._jobs.append((fn, future))
        self._wake.trigger()
        return future

    def defer(self, fn: Callable[[], T]) -> Future[T]:
        """Like :meth:`submit`, but from a callback too: ``fn`` runs after the current turn.

        A callback that must make or destroy an entity defers it, so the executor's wait set
        never changes under the turn that runs the callback.
        """
        if self._closed:
            raise CommunicationError(f"the spinner of node {self.node.get_name()!r} is closed")
        if not self.spinning:
            return self.submit(fn)
        future: Future[T] = Future()
        self._jobs.append((fn, future))
        self._wake.trigger()
        return future

    def call(self, fn: Callable[[], T], timeout: float = CALL_TIMEOUT_S) -> T:
        """Run ``fn`` on the spinning thread and return what it returns.

        Raises:
            CommunicationError: the thread did not run it within ``timeout`` seconds.
        """
        try:
            return self.submit(fn).result(timeout)
        except FutureTimeout as exc:
            raise CommunicationError(
                f"node {self.node.get_name()!r} did not run {fn!r} within {timeout:g} s"
            ) from exc

    @staticmethod
    def _run(fn: Callable[[], Any], future: Future[Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # handed to the caller through the future
            future.set_exception(exc)

    def _loop(self) -> None:
        from rclpy.executors import ExternalShutdownException

        while not self._stop.is_set():
            while self._jobs:
                fn, future = self._jobs.popleft()
                self._run(fn, future)
            try:
                self.executor.spin_once(timeout_sec=0.1)
            except ExternalShutdownException:
                break
            except Exception as exc:  # a callback's error must not end the loop
                if self._stop.is_set() or not self.context.ok():
                    break
                self.errors.append(repr(exc))
                log.warning("node %s: a callback raised %r", self.node.get_name(), exc)
                time.sleep(0.01)  # a callback that always raises does not spin the CPU
