"""Planning engines in a child process, so a time limit stops every one of them.

pyperplan has no time limit of its own, Fast Downward's runs inside unified-planning (UP), and
reading, grounding and writing a large problem can take longer than any search; none of it can
be stopped in this process. So all of it runs in a child process
(``python -m bt_raider.planners.child``, :mod:`bt_raider.planners.child`) that reads one JSON
request per line on stdin and answers one JSON line on stdout; when the time is up the child
and everything it started is killed. The child's address space is capped (only ever lowered:
a hard ``ulimit -v`` stays in force, and a limit too small to plan in is one
:class:`~bt_raider.errors.PlanningError` naming it). Children are kept between searches (the
engine's imports are paid once) and a fresh one replaces a killed one.

What a child runs:

- ``pyperplan``: pyperplan's own PDDL parser, grounding and search (weighted A* with h_add, as
  UP's pyperplan engine) — no UP in the child, so it starts in a fraction of a second.
- ``fast-downward``: UP's ``PDDLReader`` and ``OneshotPlanner(name="fast-downward")`` with the
  time limit, which Fast Downward honours.

Requests are PDDL text and answers are plan steps as text (``(pick ball1 rooma left)``); the
caller maps the names back to its problem (see :func:`bt_raider.planners.pddl.solve`). While it
works the child says what it does (``parsing``, ``grounding``, ``searching with pyperplan``,
``validating``): the ``progress`` callback hears it from the first second on.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bt_raider.errors import PlanningError, installed

#: Engines bt_raider drives, in the order ``auto`` tries them (the fastest first).
ENGINES: tuple[str, ...] = ("fast-downward", "pyperplan")
ENGINE_CHOICES: tuple[str, ...] = ("auto", *ENGINES)
#: Engine -> (module that must be importable, PyPI package, bt_raider extra).
MODULES = {
    "pyperplan": ("pyperplan", "pyperplan", "pyperplan"),
    "fast-downward": ("up_fast_downward", "up-fast-downward", "fast-downward"),
}
#: Engines that also stop themselves at the limit (the child is then kept for the next search).
SELF_TIMED = frozenset({"fast-downward"})
#: What pyperplan supports, as UP's pyperplan engine declares it (STRIPS with types).
PYPERPLAN_FEATURES = frozenset(
    {"ACTION_BASED", "FLAT_TYPING", "HIERARCHICAL_TYPING", "PLAN_LENGTH"}
)
#: Seconds between two progress calls while a search runs.
PROGRESS_PERIOD = 5.0
#: Seconds before the first progress call (then at each new phase, and every period).
FIRST_PROGRESS = 1.0
#: Seconds a self-timed engine gets past the limit to answer before it is killed.
GRACE = 1.0
#: The most address space a planning child (and Fast Downward under it) may take, in bytes.
MEMORY_CAP = 8 * 2**30
#: Below this address-space limit no planner child can even start (Python and an engine):
#: refused before trying.
MIN_MEMORY = 128 * 2**20
#: Idle children kept for the next search.
MAX_IDLE = 2

#: ``progress(what, seconds)``: what the child does (``"searching with pyperplan"``) and the
#: seconds since the request was sent.
Progress = Callable[[str, float], Any]


def installed_engines() -> list[str]:
    """The engines of :data:`ENGINES` installed here, in ``auto`` order (nothing is imported)."""
    return [e for e in ENGINES if installed(MODULES[e][0])]


@dataclass
class Answer:
    """A child's answer to one search.

    Attributes:
        status: ``solved``, ``unsolvable``, ``timeout`` or ``error``.
        plan: the steps as PDDL text, in order (when solved).
        problem: the problem's name as the engine read it.
        message: what went wrong (``error``), or UP's status name.
    """

    status: str
    plan: list[str] = field(default_factory=list)
    problem: str = ""
    message: str = ""


# ---------------------------------------------------------------------------- processes
def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, grandchildren, ...), read from ``/proc``.

    Empty where there is no ``/proc`` (not Linux): killing the child's group is all there is.
    """
    parents: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def kill_all(pids: list[int]) -> None:
    """SIGKILL each of ``pids`` (one already gone is skipped)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


#: What a process says when the address-space limit refuses it memory: Python, the dynamic
#: loader (a library's import), OpenBLAS (numpy's import), thread stacks.
MEMORY_SIGNS = (
    "MemoryError",
    "Cannot allocate memory",
    "can't start new thread",
    "failed to map segment",
    "Memory allocation still failed",
    "std::bad_alloc",
)


def address_limit() -> int | None:
    """This process's address-space limit in bytes (``ulimit -v``), None when there is none."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def _out_of_memory(stderr: str) -> bool:
    """The child's last words say it ran out of address space (at start-up, say)."""
    return any(sign in stderr for sign in MEMORY_SIGNS)


def memory_error() -> PlanningError:
    """The one-line error for a planner that ran out of memory under its address-space cap."""
    limit = address_limit()
    wanted = os.environ.get("BT_RAIDER_PLANNER_MEMORY", "").strip()
    if wanted.isdigit() and int(wanted) > 0 and (limit is None or int(wanted) < limit):
        limit, source = int(wanted), "BT_RAIDER_PLANNER_MEMORY"
    else:
        source = "ulimit -v"
    if limit is None:
        return PlanningError(
            "the planner ran out of memory (its cap is half the machine's memory, at most "
            f"{MEMORY_CAP // 2**30} GiB): set BT_RAIDER_PLANNER_MEMORY to more bytes"
        )
    return PlanningError(
        f"the address-space limit of {limit // 2**20} MiB ({source}) is too small for planning "
        "this problem: raise it"
    )


def _child_environment() -> dict[str, str]:
    """The child's environment: numpy's BLAS with one thread and two malloc arenas, which
    reserve less address space (planning uses neither), unless the user chose otherwise."""
    env = dict(os.environ)
    # The child runs in a directory of its own: a relative PYTHONPATH entry would move with it.
    if env.get("PYTHONPATH"):
        parts = env["PYTHONPATH"].split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) if p else p for p in parts)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("MALLOC_ARENA_MAX", "2")
    return env


# ---------------------------------------------------------------------------- the parent side
class _Child:
    """One child process and the threads that drain its output."""

    def __init__(self) -> None:
        # A working directory of its own: Fast Downward writes output.sas where it runs, and two
        # searches in one directory (two callers, two test workers) read each other's task.
        self.workdir = tempfile.mkdtemp(prefix="bt-raider-planner-")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bt_raider.planners.child"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
                start_new_session=os.name == "posix",  # False is Popen's default
                env=_child_environment(),
                cwd=self.workdir,
            )
        except OSError as exc:
            shutil.rmtree(self.workdir, ignore_errors=True)
            if exc.errno == errno.ENOMEM:  # fork refused under the address-space limit
                raise memory_error() from exc
            raise PlanningError(f"cannot start the planner process: {exc}") from exc
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.errors: deque[str] = deque(maxlen=30)  # stderr's last lines, for messages
        self._next = 0
        self.phase = ""  # what the child said it does, for messages
        self._drains = [
            threading.Thread(target=self._drain, args=(stream, sink), daemon=True)
            for stream, sink in ((self.proc.stdout, self.lines.put), (self.proc.stderr, None))
        ]
        for drain in self._drains:
            drain.start()

    def _drain(self, stream: Any, sink: Callable[[str | None], Any] | None) -> None:
        for line in stream:
            if sink is not None:
                sink(line)
            else:
                self.errors.append(line.rstrip())
        if sink is not None:
            sink(None)  # end of output: the child is gone

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, request: dict[str, Any]) -> int:
        self._next += 1
        request = {**request, "id": self._next}
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise PlanningError(f"the planner process ended: {self._stderr() or exc}") from exc
        return self._next

    def receive(
        self,
        rid: int,
        deadline: float | None,
        tick: Callable[[str], Any],
        first: float | None = None,
    ) -> dict[str, Any] | None:
        """The answer to request ``rid``; None when ``deadline`` passes first.

        ``tick(phase)`` is called at each phase line the child sends, at ``first`` (a
        monotonic time) and every :data:`PROGRESS_PERIOD` seconds after.
        """
        self.phase = ""
        due = time.monotonic() + PROGRESS_PERIOD if first is None else first
        while True:
            now = time.monotonic()
            wait = due - now
            if deadline is not None:
                if deadline <= now:
                    return None
                wait = min(wait, deadline - now)
            try:
                line = self.lines.get(timeout=max(wait, 0.0))
            except queue.Empty:
                if time.monotonic() >= due:
                    tick(self.phase)
                    due = time.monotonic() + PROGRESS_PERIOD
                continue
            if line is None:
                self.proc.wait()
                self._drains[1].join(timeout=1.0)  # its last words name the reason
                stderr = self._stderr()
                if _out_of_memory(stderr):
                    raise memory_error()
                raise PlanningError(
                    f"the planner process ended (exit status {self.proc.returncode}): "
                    f"{stderr or 'no message'}"
                )
            answer = json.loads(line)
            if answer.get("id") != rid:
                continue  # not this request's (a prepare's "loaded"): skip it
            if "phase" in answer:
                self.phase = str(answer["phase"])
                tick(self.phase)
                continue
            if answer.get("status") == "memory":
                raise memory_error()
            return dict(answer)

    def _stderr(self) -> str:
        return " ".join(" ".join(self.errors).split())[-400:]

    def kill(self) -> None:
        if self.alive():
            # UP starts Fast Downward in a session of its own, so killing the child's group
            # would orphan a search that then runs (and grows) for ever: kill every descendant.
            stray = descendants(self.proc.pid)
            try:
                if os.name == "posix":
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:  # pragma: no cover - not POSIX
                    self.proc.kill()
            except (ProcessLookupError, PermissionError):
                pass
            kill_all(stray)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - the kernel lags
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)


_idle: list[_Child] = []
_lock = threading.Lock()


def _take() -> _Child:
    with _lock:
        while _idle:
            child = _idle.pop()
            if child.alive():
                return child
            child.kill()
    return _Child()


def _give_back(child: _Child) -> None:
    with _lock:
        if child.alive() and len(_idle) < MAX_IDLE:
            _idle.append(child)
            return
    child.kill()


@atexit.register
def shutdown() -> None:
    """Stop the idle children (they also exit when this process ends)."""
    with _lock:
        children, _idle[:] = list(_idle), []
    for child in children:
        child.kill()


def prepare(engine: str) -> None:
    """Start a child for ``engine`` and have it import the engine now, in parallel with the
    caller's own start-up, so a search soon after does not wait for either (a demo that plans
    first thing). Nothing waits for the child; its reply is skipped by the next search."""
    if engine not in ENGINES:
        raise PlanningError(
            f"unknown planning engine {engine!r}: expected one of {', '.join(ENGINES)}"
        )
    child = _take()
    child.send({"op": "load", "engine": engine})
    _give_back(child)


def exchange(
    request: dict[str, Any],
    *,
    timeout: float | None,
    progress: Progress | None = None,
    grace: float = 0.0,
    first_after: float | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """Send ``request`` to a child and wait for its answer, at most ``timeout`` (+ ``grace``) s.

    Args:
        request: the JSON request (see :mod:`bt_raider.planners.child`).
        timeout: seconds before the child is killed (None: no limit).
        progress: called as ``progress(what, seconds)`` once the child has worked for
            :data:`FIRST_PROGRESS` seconds, then at each new phase and every
            :data:`PROGRESS_PERIOD` seconds.
        grace: extra seconds for a child that stops itself at ``timeout`` (Fast Downward).
        first_after: seconds before the first progress call (default :data:`FIRST_PROGRESS`;
            less for a command whose start-up took the rest of its first second).

    Returns:
        The answer (None when the time ran out) and the last phase the child named.

    Raises:
        PlanningError: the child could not run, ended without answering, or ran out of memory
            under its address-space limit (the message names the limit).
    """
    limit = address_limit()
    if limit is not None and limit < MIN_MEMORY:
        raise memory_error()  # no child could start: say so before trying
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout + grace
    wait = FIRST_PROGRESS if first_after is None else max(0.0, first_after)
    first = start + min(wait, PROGRESS_PERIOD)

    def tick(phase: str) -> None:
        now = time.monotonic()
        if progress is None or now < first:
            return  # a quick answer says nothing: one line for an error stays one line
        progress(phase or "starting the planner", now - start)

    child = _take()
    answered = False
    try:
        rid = child.send(request)
        reply = child.receive(rid, deadline, tick, first)
        if reply is None:
            return None, child.phase
        answered = True
        return reply, child.phase
    finally:
        if answered:
            _give_back(child)
        else:  # out of time, interrupted or broken: the search must not go on
            child.kill()


def run(
    engine: str,
    domain: str,
    problem: str,
    *,
    timeout: float | None = 60.0,
    progress: Progress | None = None,
    shared_names: bool = False,
) -> Answer:
    """Search a plan for the PDDL texts ``domain`` + ``problem`` with ``engine`` in a child.

    Args:
        engine: ``pyperplan`` or ``fast-downward``.
        domain: the domain's PDDL text.
        problem: the problem's PDDL text.
        timeout: seconds before the search is stopped (None: no limit).
        progress: called as ``progress(what, seconds)`` while the child works (see
            :func:`exchange`).
        shared_names: let a type and an object share a name (Fast Downward's reader).

    Returns:
        The child's answer (``timeout`` when the limit stopped it).

    Raises:
        PlanningError: the child process could not run or ended without answering.
    """
    if engine not in ENGINES:
        raise PlanningError(
            f"unknown planning engine {engine!r}: expected one of {', '.join(ENGINES)}"
        )
    request = {
        "engine": engine,
        "domain": domain,
        "problem": problem,
        "timeout": timeout,
        "shared_names": shared_names,
    }
    start = time.monotonic()
    grace = GRACE if engine in SELF_TIMED else 0.0
    reply, _ = exchange(request, timeout=timeout, progress=progress, grace=grace)
    if reply is None:
        return Answer("timeout", message=f"stopped after {time.monotonic() - start:.1f} s")
    return answer_of(reply)


def answer_of(reply: dict[str, Any]) -> Answer:
    """The :class:`Answer` in a child's JSON reply."""
    return Answer(
        str(reply.get("status", "error")),
        [str(s) for s in reply.get("plan") or []],
        str(reply.get("problem") or ""),
        str(reply.get("message") or ""),
    )
