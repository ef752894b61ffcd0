"""The planning child: ``python -m bt_raider.planners.child``, started by
:mod:`bt_raider.planners.engines`.

It reads one JSON request per line on stdin and answers each with one JSON line on stdout,
after any number of ``{"id": ..., "phase": "parsing"}`` lines that say what it is doing (the
parent turns them into progress lines). Everything costly happens here, under the parent's
time limit and this process's address-space cap: reading the PDDL text into unified-planning
(UP) or pyperplan, choosing the engine, grounding, searching and validating the plan. The
parent only reads the files and kills this process when the time is up.

Requests:

- ``{"op": "load", "engine": E}``: import the engine now (a demo that plans first thing).
- ``{"engine": E, "domain": D, "problem": P, "timeout": S}``: search with ``pyperplan`` or
  ``fast-downward`` (the problem written by the parent, see
  :func:`bt_raider.planners.pddl.solve`).
- ``{"op": "plan", "engine": E, "domain": D, "problem": P, "timeout": S, "validate": V}``: all
  of it from the PDDL files' text, ``E`` may be ``auto`` (see
  :func:`bt_raider.planners.pddl.plan_texts`).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import queue
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bt_raider.errors import BtRaiderError
from bt_raider.planners import pddl, sexp
from bt_raider.planners.engines import (
    MEMORY_CAP,
    MEMORY_SIGNS,
    PYPERPLAN_FEATURES,
    descendants,
    installed_engines,
    kill_all,
)
from bt_raider.planners.writing import closed_world_writes

#: Says what the child does now: ``phase("grounding")``.
Phase = Callable[[str], None]
#: What the machine raises, never the PDDL: a library that cannot load, memory refused.
_RESOURCE_ERRORS = (ImportError, MemoryError, OSError)
#: Seconds Fast Downward's own limit keeps clear of the parent's, so it answers before a kill.
FD_MARGIN = 0.3


def memory_limit() -> None:
    """Cap this process's address space (Fast Downward inherits it): a search that would fill
    the machine stops with an error instead. ``BT_RAIDER_PLANNER_MEMORY`` (bytes, 0 = no cap of
    our own) overrides the default of half the machine's memory, at most
    :data:`~bt_raider.planners.engines.MEMORY_CAP`.

    Only ever lowers: a limit already in force (``ulimit -v``) stays when it is smaller, and the
    hard limit is never touched (an unprivileged process may not raise it back).
    """
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
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    caps = [c for c in (limit if limit > 0 else None, soft, hard) if c not in (None, -1)]
    caps = [c for c in caps if c != resource.RLIM_INFINITY]
    if caps and min(caps) != soft:
        resource.setrlimit(resource.RLIMIT_AS, (min(caps), hard))


# ---------------------------------------------------------------------------- UP, lighter
#: What UP's modules name at import time but planning never uses: ConfigSpace's class (the
#: return type of ``Engine.get_configuration_space``, which loads scipy.stats, ~1.5 s of CPU)
#: and networkx's ``DiGraph`` (annotations; ~0.4 s). The rest of each module on first use.
DEFERRED = {"ConfigSpace": "ConfigurationSpace", "networkx": "DiGraph"}


def _stand_in(name: str, cls_name: str) -> types.ModuleType:
    """A module named ``name`` that imports the real one on first use: an attribute other
    than ``cls_name``, or a call of its ``cls_name`` (which stands in until then)."""
    stand_in = types.ModuleType(name)

    def real() -> types.ModuleType:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        module = importlib.import_module(name)
        vars(stand_in).update(vars(module))  # who holds the stand-in gets the real names
        return module

    def new(_cls: type, *args: Any, **kwargs: Any) -> Any:
        return getattr(real(), cls_name)(*args, **kwargs)

    setattr(stand_in, cls_name, type(cls_name, (), {"__new__": new, "__module__": name}))

    def attribute(attr: str) -> Any:
        # What the import system (``__path__``) and introspection (``__file__``) ask of every
        # module: not a use.
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(real(), attr)

    stand_in.__getattr__ = attribute  # type: ignore[method-assign]
    return stand_in


@contextmanager
def _deferred() -> Iterator[None]:
    """Stand-ins for :data:`DEFERRED` while UP's modules import, the real modules after."""
    added = {}
    for name, cls_name in DEFERRED.items():
        if name not in sys.modules and importlib.util.find_spec(name) is not None:
            added[name] = sys.modules[name] = _stand_in(name, cls_name)
    try:
        yield
    finally:
        for name, stand_in in added.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


def _import_up() -> Any:
    """UP's global environment, its engines loaded: what every request that uses UP needs."""
    with _deferred():
        import unified_planning.io  # noqa: F401
        import unified_planning.shortcuts  # noqa: F401
        from unified_planning.environment import get_environment

        env = get_environment()  # its engine factory imports every installed engine
    env.credits_stream = None  # UP's banner must not reach the answer stream
    return env


# ---------------------------------------------------------------------------- the engines
def _steps(names: list[list[str]]) -> list[str]:
    return ["(" + " ".join(parts) + ")" for parts in names]


def _pyperplan_task(domain_text: str, problem_text: str, phase: Phase) -> tuple[Any, Any]:
    """pyperplan's parsed problem and grounded task; a str when it cannot read the PDDL."""
    from pyperplan.pddl.parser import Parser
    from pyperplan.planner import _ground

    phase("parsing")
    parser = Parser(None)
    parser.domInput, parser.probInput = domain_text, problem_text
    try:
        domain = parser.parse_domain(read_from_file=False)
        problem = parser.parse_problem(domain, read_from_file=False)
    except Exception as exc:  # pyperplan raises ValueError, ParseError, SemanticError, ...
        return f"pyperplan cannot read the PDDL: {exc}", None
    phase("grounding")
    return problem, _ground(problem)


def _pyperplan(request: dict[str, Any], phase: Phase = lambda _: None) -> dict[str, Any]:
    # pyperplan's own parser and search: UP's pyperplan engine runs the same grounding and
    # search (weighted A* with h_add) on the same STRIPS problem.
    from pyperplan.planner import HEURISTICS, SEARCHES, _search

    problem, task = _pyperplan_task(request["domain"], request["problem"], phase)
    if isinstance(problem, str):
        return {"status": "error", "message": problem}
    phase("searching with pyperplan")
    solution = _search(task, SEARCHES["wastar"], HEURISTICS["hadd"](task))
    if solution is None:
        return {"status": "unsolvable", "problem": problem.name, "message": "UNSOLVABLE_PROVEN"}
    return {"status": "solved", "problem": problem.name, "plan": [op.name for op in solution]}


def _fast_downward(
    request: dict[str, Any], problem: Any = None, timeout: float | None = None
) -> dict[str, Any]:
    import warnings

    env = _import_up()
    from unified_planning.engines import PlanGenerationResultStatus as S
    from unified_planning.exceptions import UPException
    from unified_planning.io import PDDLReader, PDDLWriter

    # The global environment: UP's compilers build parts of the problem in it. This process
    # only plans, so its flags are ours to set; so is UP's writer, which the engine uses to
    # hand Fast Downward the problem: it must not enumerate every false fact.
    if not getattr(PDDLWriter._write_problem, "closed_world", False):
        PDDLWriter._write_problem = closed_world_writes(PDDLWriter._write_problem)
    if problem is None:
        env.error_used_name = not request.get("shared_names")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem = PDDLReader(env).parse_problem_string(request["domain"], request["problem"])
        timeout = request.get("timeout")
    options = {} if timeout is None else {"timeout": float(timeout)}
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


# ---------------------------------------------------------------------------- a whole plan
def _parse(request: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
    """UP's problem, or the answer saying which file it cannot read and why."""
    # Imported first: a library that cannot load (under a tight ulimit -v) is no PDDL error.
    _import_up()

    shared = bool(request.get("shared_names"))
    try:
        return pddl._parse(request["domain"], request["problem"], shared), None
    except _RESOURCE_ERRORS:
        raise
    except Exception as exc:  # the reader raises pyparsing, SyntaxError and UP errors alike
        error = exc
    culprit = "domain"
    try:  # if the domain reads alone, the problem is at fault
        pddl._parse(request["domain"], None, shared)
        culprit = "problem"
    except _RESOURCE_ERRORS:
        raise
    except Exception as exc:
        error = exc
    return None, {"status": "invalid", "culprit": culprit, "message": pddl._reader_message(error)}


def _valid_strips(task: Any, plan: list[str]) -> bool:
    """The plan applied to pyperplan's grounded task: every step applicable, the goal reached."""
    operators = {op.name: op for op in task.operators}
    state = task.initial_state
    for text in plan:
        op = operators.get(text)
        if op is None or not op.applicable(state):
            return False
        state = op.apply(state)
    return bool(task.goal_reached(state))


def _plan(request: dict[str, Any], phase: Phase) -> dict[str, Any]:
    """Parse, choose the engine, ground, search and validate, all under this child's limits."""
    start = time.monotonic()
    timeout = request.get("timeout")
    engine = str(request.get("engine") or "auto")
    validate = bool(request.get("validate"))
    for culprit in ("domain", "problem"):
        # Unbalanced parentheses or no (define ...): said at once, not after UP's import.
        try:
            sexp._define(request[culprit], f"PDDL {culprit}")
        except BtRaiderError as exc:
            return {"status": "invalid", "culprit": culprit, "message": str(exc)}
    problem = None
    if engine != "pyperplan":  # auto needs the problem's kind; Fast Downward reads it with UP
        phase("parsing")
        problem, refused = _parse(request)
        if refused is not None:
            return refused
        try:
            engine = pddl.choose_engine(problem, engine)
        except BtRaiderError as exc:
            return {"status": "refused", "problem": problem.name, "message": str(exc)}
    task = None
    if engine == "pyperplan":
        from pyperplan.planner import HEURISTICS, SEARCHES, _search

        parsed, task = _pyperplan_task(request["domain"], request["problem"], phase)
        if isinstance(parsed, str):
            return {"status": "error", "engine": engine, "message": parsed}
        phase("searching with pyperplan")
        solution = _search(task, SEARCHES["wastar"], HEURISTICS["hadd"](task))
        name = parsed.name
        if solution is None:
            answer = {"status": "unsolvable", "problem": name, "message": "UNSOLVABLE_PROVEN"}
        else:
            answer = {"status": "solved", "problem": name, "plan": [op.name for op in solution]}
    else:
        phase(f"searching with {engine}")
        left = None if timeout is None else max(0.1, timeout - (time.monotonic() - start))
        answer = _fast_downward(request, problem, None if left is None else left - FD_MARGIN)
    answer["engine"] = engine
    if answer["status"] == "solved" and validate:
        phase("validating")
        if task is not None:  # pyperplan's STRIPS task: stepping it is cheap and exact
            answer["valid"] = _valid_strips(task, answer["plan"])
        elif (
            problem is not None
            and set(problem.kind.features) <= PYPERPLAN_FEATURES
            and "pyperplan" in installed_engines()
        ):
            _, task = _pyperplan_task(request["domain"], request["problem"], lambda _: None)
            answer["valid"] = task is not None and _valid_strips(task, answer["plan"])
        elif problem is not None:
            answer["valid"] = pddl.validate(problem, pddl.to_plan(problem, answer["plan"]))
    return answer


def _load(engine: Any) -> dict[str, Any]:
    if engine == "pyperplan":
        import pyperplan.pddl.parser  # noqa: F401
        import pyperplan.planner  # noqa: F401
    elif engine == "fast-downward":
        env = _import_up()
        import up_fast_downward  # noqa: F401

        env.factory.engine("fast-downward")  # the engine factory: what auto's choice reads
    return {"status": "loaded"}


def _handle(request: dict[str, Any], phase: Phase) -> dict[str, Any]:
    engine = request.get("engine")
    if request.get("op") == "load":
        return _load(engine)
    if request.get("op") == "plan":
        return _plan(request, phase)
    if engine == "pyperplan":
        return _pyperplan(request, phase)
    if engine == "fast-downward":
        return _fast_downward(request)
    return {"status": "error", "message": f"unknown planning engine {engine!r}"}


# ---------------------------------------------------------------------------- the loop
def _read_requests(requests: queue.Queue[str]) -> None:
    # The parent gone (its end of the pipe closed, even by SIGKILL) ends the child at once,
    # a search in progress and whatever it started included: nobody will read the answer.
    for line in sys.stdin:
        requests.put(line)
    kill_all(descendants(os.getpid()))
    os._exit(0)


def main() -> None:
    """The child: answer each request line on stdin with one JSON line; exit at end of input."""
    memory_limit()
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever an engine prints must not mix with the answers
    requests: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read_requests, args=(requests,), daemon=True).start()
    while True:
        line = requests.get()
        if not line.strip():
            continue
        request = json.loads(line)
        rid = request.get("id")

        def phase(what: str, rid: Any = rid) -> None:
            out.write(json.dumps({"id": rid, "phase": what}) + "\n")
            out.flush()

        try:
            answer = _handle(request, phase)
        except MemoryError:
            # Under the address-space cap: the parent names the limit in one line.
            answer = {"status": "memory", "message": "out of memory"}
        except Exception as exc:  # report it; the parent decides what it means
            message = f"{type(exc).__name__}: {exc}"
            memory = any(sign in message for sign in MEMORY_SIGNS)
            answer = {"status": "memory" if memory else "error", "message": message}
        answer["id"] = rid
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
