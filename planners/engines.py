"""Planning engines in a child process, so a time limit stops every one of them.

pyperplan has no time limit of its own and Fast Downward's runs inside unified-planning (UP);
a search that runs in this process cannot be stopped. So each search runs in a child process
(``python -m bt_raider.planners.engines``) that reads one JSON request per line on stdin and
answers one JSON line on stdout; when the time is up the child and everything it started is
killed. Children are kept between searches (the engine's imports are paid once) and a fresh
one replaces a killed one.

What a child runs:

- ``pyperplan``: pyperplan's own PDDL parser, grounding and search (weighted A* with h_add, as
  UP's pyperplan engine) — no UP in the child, so it starts in a fraction of a second.
- ``fast-downward``: UP's ``PDDLReader`` and ``OneshotPlanner(name="fast-downward")`` with the
  time limit, which Fast Downward honours.

Requests are PDDL text and answers are plan steps as text (``(pick ball1 rooma left)``); the
caller maps the names back to its problem (see :func:`bt_raider.planners.pddl.solve`).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bt_raider.errors import PlanningError

#: Engines bt_raider drives, in the order ``auto`` tries them (the fastest first).
ENGINES: tuple[str, ...] = ("fast-downward", "pyperplan")
ENGINE_CHOICES: tuple[str, ...] = ("auto", *ENGINES)
#: Engine -> (module that must be importable, PyPI package, bt_raider extra).
MODULES = {
    "pyperplan": ("pyperplan", "up-pyperplan", "pddl"),
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
#: Seconds a self-timed engine gets past the limit to answer before it is killed.
GRACE = 1.0
#: The most address space a planning child (and Fast Downward under it) may take, in bytes.
MEMORY_CAP = 8 * 2**30
#: Idle children kept for the next search.
MAX_IDLE = 2

Progress = Callable[[str, float], Any]


def installed_engines() -> list[str]:
    """The engines of :data:`ENGINES` installed here, in ``auto`` order (nothing is imported)."""
    return [e for e in ENGINES if importlib.util.find_spec(MODULES[e][0]) is not None]


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


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _memory_limit() -> None:
    """Cap the child's address space (Fast Downward inherits it): a search that would fill the
    machine stops with an error instead. ``BT_RAIDER_PLANNER_MEMORY`` (bytes, 0 = no cap)
    overrides the default of half the machine's memory, at most :data:`MEMORY_CAP`."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    wanted = os.environ.get("BT_RAIDER_PLANNER_MEMORY")
    if wanted is not None:
        if not wanted.strip().isdigit():
            raise SystemExit(f"BT_RAIDER_PLANNER_MEMORY must be a number of bytes, got {wanted!r}")
        limit = int(wanted)
    else:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):  # pragma: no cover - unknown machine
            total = 2 * MEMORY_CAP
        limit = min(MEMORY_CAP, total // 2)
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))


# ---------------------------------------------------------------------------- the parent side
class _Child:
    """One child process and the threads that drain its output."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bt_raider.planners.engines"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
            start_new_session=os.name == "posix",  # False is Popen's default
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.errors: deque[str] = deque(maxlen=30)  # stderr's last lines, for messages
        self._next = 0
        for stream, sink in ((self.proc.stdout, self.lines.put), (self.proc.stderr, None)):
            threading.Thread(target=self._drain, args=(stream, sink), daemon=True).start()

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
        self, rid: int, deadline: float | None, tick: Callable[[], Any]
    ) -> dict[str, Any] | None:
        """The answer to request ``rid``; None when ``deadline`` passes first."""
        while True:
            wait = PROGRESS_PERIOD
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return None
            try:
                line = self.lines.get(timeout=wait)
            except queue.Empty:
                tick()
                continue
            if line is None:
                self.proc.wait()
                raise PlanningError(
                    f"the planner process ended (exit status {self.proc.returncode}): "
                    f"{self._stderr() or 'no message'}"
                )
            answer = json.loads(line)
            if answer.get("id") == rid:
                return answer
            # Not this request's answer (none should be pending): skip it.

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
            _kill_all(stray)
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
        progress: called as ``progress(engine, seconds)`` every :data:`PROGRESS_PERIOD`
            seconds while the search runs.
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
    start = time.monotonic()
    deadline = None
    if timeout is not None:
        deadline = start + timeout + (GRACE if engine in SELF_TIMED else 0.0)
    request = {
        "engine": engine,
        "domain": domain,
        "problem": problem,
        "timeout": timeout,
        "shared_names": shared_names,
    }
    child = _take()
    answered = False
    try:
        rid = child.send(request)
        tick = (lambda: progress(engine, time.monotonic() - start)) if progress else (lambda: None)
        reply = child.receive(rid, deadline, tick)
        if reply is None:
            return Answer("timeout", message=f"stopped after {time.monotonic() - start:.1f} s")
        answered = True
        return Answer(
            str(reply.get("status", "error")),
            [str(s) for s in reply.get("plan") or []],
            str(reply.get("problem") or ""),
            str(reply.get("message") or ""),
        )
    finally:
        if answered:
            _give_back(child)
        else:  # out of time, interrupted or broken: the search must not go on
            child.kill()


# ---------------------------------------------------------------------------- the child side
def _steps(names: list[list[str]]) -> list[str]:
    return ["(" + " ".join(parts) + ")" for parts in names]


def _pyperplan(request: dict[str, Any]) -> dict[str, Any]:
    # pyperplan's own parser and search: UP's pyperplan engine runs the same grounding and
    # search (weighted A* with h_add) on the same STRIPS problem.
    from pyperplan.pddl.parser import Parser
    from pyperplan.planner import HEURISTICS, SEARCHES, _ground, _search

    parser = Parser(None)
    parser.domInput, parser.probInput = request["domain"], request["problem"]
    try:
        domain = parser.parse_domain(read_from_file=False)
        problem = parser.parse_problem(domain, read_from_file=False)
    except Exception as exc:  # pyperplan raises ValueError, ParseError, SemanticError, ...
        return {"status": "error", "message": f"pyperplan cannot read the PDDL: {exc}"}
    task = _ground(problem)
    solution = _search(task, SEARCHES["wastar"], HEURISTICS["hadd"](task))
    if solution is None:
        return {"status": "unsolvable", "problem": problem.name, "message": "UNSOLVABLE_PROVEN"}
    return {"status": "solved", "problem": problem.name, "plan": [op.name for op in solution]}


def _fast_downward(request: dict[str, Any]) -> dict[str, Any]:
    import warnings

    from unified_planning.engines import PlanGenerationResultStatus as S
    from unified_planning.environment import get_environment
    from unified_planning.exceptions import UPException
    from unified_planning.io import PDDLReader

    # The global environment: UP's compilers build parts of the problem in it. This process
    # only plans, so its flags are ours to set.
    env = get_environment()
    env.credits_stream = None  # UP's banner must not reach the answer stream
    env.error_used_name = not request.get("shared_names")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = PDDLReader(env).parse_problem_string(request["domain"], request["problem"])
    options = {} if request.get("timeout") is None else {"timeout": float(request["timeout"])}
    try:
        with env.factory.OneshotPlanner(name="fast-downward") as planner:
            planner.skip_checks = True  # the caller checked the problem's kind
            result = planner.solve(problem, **options)
    except (UPException, NotImplementedError, AssertionError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return {"status": "error", "problem": problem.name, "message": reason}
    status = {
        S.SOLVED_SATISFICING: "solved",
        S.SOLVED_OPTIMALLY: "solved",
        S.UNSOLVABLE_PROVEN: "unsolvable",
        S.UNSOLVABLE_INCOMPLETELY: "unsolvable",
        S.TIMEOUT: "timeout",
    }.get(result.status, "error")
    answer: dict[str, Any] = {"status": status, "problem": problem.name}
    if status == "solved" and result.plan is not None:
        answer["plan"] = _steps(
            [[a.action.name, *(str(p) for p in a.actual_parameters)] for a in result.plan.actions]
        )
    log = " ".join(" ".join(m.message.split()) for m in (result.log_messages or []))
    answer["message"] = f"{result.status.name}: {log[-400:]}" if status == "error" else ""
    return answer


def _load(engine: Any) -> dict[str, Any]:
    if engine == "pyperplan":
        import pyperplan.pddl.parser  # noqa: F401
        import pyperplan.planner  # noqa: F401
    elif engine == "fast-downward":
        import unified_planning.io  # noqa: F401
        import up_fast_downward  # noqa: F401
    return {"status": "loaded"}


def _handle(request: dict[str, Any]) -> dict[str, Any]:
    engine = request.get("engine")
    if request.get("op") == "load":
        return _load(engine)
    if engine == "pyperplan":
        return _pyperplan(request)
    if engine == "fast-downward":
        return _fast_downward(request)
    return {"status": "error", "message": f"unknown planning engine {engine!r}"}


def _read_requests(requests: queue.Queue[str]) -> None:
    # The parent gone (its end of the pipe closed, even by SIGKILL) ends the child at once,
    # a search in progress and whatever it started included: nobody will read the answer.
    for line in sys.stdin:
        requests.put(line)
    _kill_all(descendants(os.getpid()))
    os._exit(0)


def main() -> None:
    """The child: answer each request line on stdin with one JSON line; exit at end of input."""
    _memory_limit()
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever an engine prints must not mix with the answers
    requests: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read_requests, args=(requests,), daemon=True).start()
    while True:
        line = requests.get()
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = _handle(request)
        except Exception as exc:  # report it; the parent decides what it means
            answer = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
        answer["id"] = request.get("id")
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
