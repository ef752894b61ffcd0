"""Few-shot examples for recovery: the built-in ones, and the CDR memory as recovery sees it.

Recovery asks for examples while planning (already on a worker) and reports a success from a
guard's tick. Embedding a sentence takes milliseconds once the model is loaded and seconds
before, so a :class:`MemoryLink` does all memory work on its own thread: :meth:`record` only
queues, and :meth:`examples` waits for its answer (it is called from a worker, never a tick).

Example:
    >>> link = MemoryLink(VectorMemory("memory.db"))          # doctest: +SKIP
    >>> planner = LLMRecoveryPlanner(chat, examples=link.examples)    # doctest: +SKIP
    >>> recovery = Recovery(planner, robot, human, on_success=link.record)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import resources
from typing import Any

from bt_raider.files import MAX_CONFIG_BYTES, loads_json, read_json
from bt_raider.recovery.contract import ExamplesProvider

log = logging.getLogger(__name__)


def load_examples() -> list[dict[str, str]]:
    """The built-in examples (``bt_raider/recovery/data/recovery_examples.json``)."""
    path = resources.files("bt_raider.recovery") / "data" / "recovery_examples.json"
    what = "few-shot examples"
    if isinstance(path, os.PathLike):  # installed as files: read as every file is
        data = read_json(path, what=what, max_bytes=MAX_CONFIG_BYTES)
    else:  # inside a zip: the archive's member, still parsed within bounds
        data = loads_json(path.read_text(encoding="utf-8"), what=what, source=str(path))
    return [dict(e) for e in data["examples"]]


_WORD = re.compile(r"[a-z]+")


def builtin_examples(text: str, k: int) -> list[tuple[str, str]]:
    """The ``k`` built-in examples closest to ``text`` by shared words (deterministic).

    An :data:`ExamplesProvider` that needs no model; the CDR memory replaces it when given.
    """
    words = set(_WORD.findall(text.lower()))
    scored = []
    for i, ex in enumerate(load_examples()):
        other = set(_WORD.findall(ex["information"].lower()))
        overlap = len(words & other) / (len(words | other) or 1)
        scored.append((-overlap, i, ex))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [(ex["information"], ex["goal"]) for _, _, ex in scored[: max(0, k)]]


def record_id(information: str, goal: str) -> str:
    """A stable id for an ``[information -> goal]`` pair, so re-recording adds nothing."""
    import hashlib  # loads OpenSSL (~5 ms): only when a recovery is recorded

    digest = hashlib.sha1(f"{information}\n->\n{goal}".encode()).hexdigest()
    return f"recovery-{digest[:16]}"


class MemoryLink:
    """Few-shot examples from, and successes into, a :class:`~bt_raider.memory.VectorMemory`.

    Args:
        memory: the vector memory (anything with ``setup``, ``examples(query, k)`` returning
            objects with ``information``/``goal``, ``record(information, goal, outcome, ...)``
            and ``close``).
        fallback: examples used to top up when the memory has fewer than asked for (the
            built-in set by default; None for memory only).
        timeout: seconds :meth:`examples` waits for the memory before using the fallback.
    """

    def __init__(
        self,
        memory: Any,
        *,
        fallback: ExamplesProvider | None = builtin_examples,
        timeout: float = 30.0,
    ) -> None:
        self.memory = memory
        self.fallback = fallback
        self.timeout = timeout
        self.recorded: list[str] = []
        self.errors: list[str] = []
        # One thread: records land in the order they happened, and never on a tick.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bt_raider-memory")
        self._pending: list[Future[Any]] = []

    def setup(self) -> Future[Any]:
        """Start loading the memory (database, index, model) in the background."""
        return self._pool.submit(lambda: self.memory.setup())

    @classmethod
    def start(cls, open_memory: Callable[[], Any], **options: Any) -> MemoryLink:
        """A link whose memory is built by ``open_memory()`` and set up on the memory's thread.

        Building a VectorMemory imports torch and setting it up loads the embedding model:
        seconds that a caller starting at once can spend on other work. Everything asked of
        the link meanwhile waits its turn on that thread.
        """
        link = cls(None, **options)

        def build() -> None:
            try:
                link.memory = open_memory()
                link.memory.setup()
            except Exception as exc:  # later calls fail too, each noted in errors
                link.errors.append(f"opening the memory: {exc}")
                log.warning("memory failed to open: %s", exc)
                raise

        link._pool.submit(build)
        return link

    def examples(self, text: str, k: int) -> list[tuple[str, str]]:
        """Up to ``k`` ``(information, goal)`` pairs, conflicts removed; topped up by the fallback.

        Blocks until the memory answers: call it from a worker (recovery planning), not a tick.
        """
        shots: list[tuple[str, str]] = []
        try:
            found = self._pool.submit(lambda: self.memory.examples(text, k)).result(self.timeout)
            shots = [(e.information, e.goal) for e in found]
        except Exception as exc:  # a broken memory must not stop recovery: say so, go on
            self.errors.append(f"examples({text!r}): {exc}")
            log.warning("memory examples failed: %s", exc)
        if self.fallback is not None and len(shots) < k:
            for pair in self.fallback(text, k):
                if len(shots) >= k:
                    break
                if pair not in shots:
                    shots.append(pair)
        return shots

    def record(self, information: str, goal: str) -> None:
        """Queue a success (the shape of ``Recovery(on_success=...)``); returns at once."""
        rid = record_id(information, goal)

        def write() -> None:
            try:
                self.memory.record(
                    information, goal, "success", {"source": "recovery"}, record_id=rid
                )
                self.recorded.append(rid)
            except Exception as exc:
                self.errors.append(f"record({information!r}): {exc}")
                log.warning("memory record failed: %s", exc)

        self._pending.append(self._pool.submit(write))

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every queued record is written."""
        for future in self._pending:
            future.result(timeout)
        self._pending.clear()

    def close(self) -> None:
        """Write what is queued, then close the memory."""
        self.flush()
        # The memory is None when it failed to open (the reason is in self.errors).
        self._pool.submit(lambda: self.memory and self.memory.close()).result()
        self._pool.shutdown(wait=True)
