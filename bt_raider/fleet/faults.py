"""A bus wrapper that tolerates a failing transport: faults are counted and logged, never raised
into the robot's tick (FaultTolerantBus).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from typing import Any

from bt_raider.cooperation.messaging import (
    Handler,
    Message,
    MessageBus,
    Server,
)
from bt_raider.errors import CommunicationError
from bt_raider.fleet.zenoh_bus import ZenohBus, log
from bt_raider.fleet.zenoh_config import (
    Fault,
)


class FaultTolerantBus:
    """Any :class:`MessageBus` whose ``request`` never raises for the network's faults.

    A :class:`CommunicationError` from the wrapped ``request`` (a collaborator that left, a
    malformed answer on the in-process bus) is logged, counted in :attr:`faults` and returned
    as ``None`` -- *unknown*. A ``None`` answer is counted as ``no_answer``. Everything else is
    passed through.

    Args:
        bus: the bus to wrap.
    """

    def __init__(self, bus: MessageBus) -> None:
        self.bus = bus
        self.name = bus.name
        self.faults: Counter[str] = Counter()
        self.fault_log: deque[Fault] = deque(maxlen=1000)
        self._lock = threading.Lock()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.bus, attr)

    def _fault(self, kind: str, peer: str | None, detail: str) -> None:
        with self._lock:
            self.faults[kind] += 1
            self.fault_log.append(Fault(time.time(), kind, peer, detail))
        log.warning("%s: %s fault with %s: %s", self.name, kind, peer or "?", detail)

    def fault_summary(self) -> dict[str, int]:
        """Fault kinds seen by this wrapper and, for a :class:`ZenohBus`, by the bus itself."""
        with self._lock:
            out = Counter(self.faults)
        inner = getattr(self.bus, "fault_summary", None)
        if callable(inner):
            out.update(inner())
        return {k: v for k, v in sorted(out.items()) if v}

    def publish(self, msg: Message) -> None:
        self.bus.publish(msg)

    def subscribe(self, handler: Handler) -> None:
        self.bus.subscribe(handler)

    def poll(self) -> list[Message]:
        return self.bus.poll()

    def request(self, to: str, msg: Message, timeout: float) -> Message | None:
        try:
            answer = self.bus.request(to, msg, timeout)
        except CommunicationError as exc:
            self._fault("request_error", to, str(exc))
            return None
        if answer is None and not isinstance(self.bus, ZenohBus):
            # A ZenohBus has already counted why; another bus only says "nothing".
            self._fault(
                "no_answer", to, f"no answer to {msg.kind.value} {msg.id} within {timeout} s"
            )
        return answer

    def serve(self, handler: Server) -> None:
        self.bus.serve(handler)

    def close(self) -> None:
        self.bus.close()
