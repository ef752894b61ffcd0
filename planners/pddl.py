"""PDDL in, plan out: read a domain and problem, solve, validate, and name the steps.

unified-planning (UP) reads (:class:`~unified_planning.io.PDDLReader`) and validates
(``PlanValidator``); the search runs in a child process that the time limit stops
(:mod:`bt_raider.planners.engines`): Fast Downward through UP's ``OneshotPlanner``, or
pyperplan. A plan's steps come out as :class:`Step` objects that the rest of bt_raider speaks:
``Step("pick", ["tiago", "medicine", "counter"])`` and its PDDL text
``(pick tiago medicine counter)``.

Engine choice (``engine="auto"``, the default): the first installed engine, Fast Downward
before pyperplan, whose supported problem kind covers the problem's — so Fast Downward plans
when ``up-fast-downward`` is installed, pyperplan otherwise — or whatever it is asked for by
name. Two kind features describe declarations rather than what the search needs
(:data:`LENIENT_FEATURES`); an engine lacking only those is still tried, and its own error is
reported if it fails.

UP is imported only where it is used: its model pulls networkx, and its ``Environment`` the
engine factory, whose ConfigSpace import loads scipy (about a second). :func:`plan_files` plans
PDDL files with pyperplan without either.
"""

from __future__ import annotations

import re
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bt_raider.checking.verdict import Category
from bt_raider.errors import PlanningError, QueryError, need, require
from bt_raider.files import MAX_PDDL_BYTES
from bt_raider.planners import engines
from bt_raider.planners.engines import ENGINE_CHOICES as ENGINE_CHOICES
from bt_raider.planners.engines import ENGINES as ENGINES
from bt_raider.planners.engines import installed_engines as installed_engines
from bt_raider.planners.sexp import read_pddl
from bt_raider.planners.writing import problem_writer

if TYPE_CHECKING:
    from unified_planning.model import Action, FNode, Object, Problem
    from unified_planning.plans import ActionInstance, SequentialPlan

#: Kind features that only say what the problem *declares*: a numeric function left undefined
#: for some objects, real-typed action costs. Engines often cope when the values a plan uses
#: are defined integers, so an engine missing only these is still tried.
LENIENT_FEATURES = frozenset({"UNDEFINED_INITIAL_NUMERIC", "REAL_NUMBERS_IN_ACTIONS_COST"})

#: Plain words for the kind features users meet most, for error messages.
FEATURE_WORDS = {
    "CONTINUOUS_TIME": "durative actions",
    "DISCRETE_TIME": "durative actions",
    "INT_TYPE_DURATIONS": "action durations",
    "REAL_TYPE_DURATIONS": "action durations",
    "DURATION_INEQUALITIES": "duration inequalities",
    "TIMED_EFFECTS": "timed initial literals",
    "TIMED_GOALS": "timed goals",
    "GENERAL_NUMERIC_PLANNING": "numeric fluents",
    "SIMPLE_NUMERIC_PLANNING": "numeric fluents",
    "REAL_FLUENTS": "real-valued fluents",
    "INT_FLUENTS": "integer fluents",
    "NEGATIVE_CONDITIONS": "negative preconditions",
    "DISJUNCTIVE_CONDITIONS": "disjunctive preconditions",
    "UNIVERSAL_CONDITIONS": "forall preconditions",
    "EXISTENTIAL_CONDITIONS": "exists preconditions",
    "CONDITIONAL_EFFECTS": "conditional effects",
    "FORALL_EFFECTS": "forall effects",
    "INCREASE_EFFECTS": "increase effects",
    "UNDEFINED_INITIAL_NUMERIC": "numeric functions undefined for some objects",
    "FINAL_VALUE": "a metric over the final state",
}

# An empty ``(:functions)`` block is valid PDDL (PlanSys2 writes one) but UP's grammar rejects it.
_EMPTY_FUNCTIONS = re.compile(r"\(\s*:functions\s*\)", re.IGNORECASE)


# ---------------------------------------------------------------------------- reading
def _read(path: str | Path, what: str, max_bytes: int = MAX_PDDL_BYTES) -> str:
    # The one input discipline (bt_raider.files): a FIFO, a device, a directory, a huge or
    # non-UTF-8 file is one PddlFileError (a PlanningError) naming it, never a hang.
    return read_pddl(path, what, max_bytes)


def _normalise(text: str) -> str:
    """Blank out empty ``(:functions)`` blocks, keeping every line and column in place."""
    return _EMPTY_FUNCTIONS.sub(lambda m: re.sub(r"\S", " ", m.group(0)), text)


#: UP's message when two elements of a problem (a type and an object, say) share a name.
_SHARED_NAME = re.compile(r"name (\S+) (?:is )?already (?:defined|used)", re.IGNORECASE)


def _reader_message(exc: Exception) -> str:
    msg = " ".join(str(exc).split()) or type(exc).__name__
    if "invalid expression" in msg:
        # UP reads the domain's actions before the problem's objects, so a name the domain uses
        # without declaring it under :constants fails here.
        msg += " (a name used in the domain but not declared in its :constants?)"
    shared = _SHARED_NAME.search(msg)
    if shared:
        msg = (
            f"the name {shared.group(1)!r} is given to two elements (a type and an object, say); "
            "load it with allow_shared_names=True (bt-raider plan --allow-shared-names) to "
            "accept that"
        )
    return msg


def load(
    domain: str | Path,
    problem: str | Path | None = None,
    *,
    allow_shared_names: bool = False,
    max_bytes: int = MAX_PDDL_BYTES,
) -> Problem:
    """Read a PDDL domain and problem into a UP problem.

    Args:
        domain: path of the domain file.
        problem: path of the problem file; None reads the domain alone (no objects, no goal).
        allow_shared_names: accept a type and an object (or a fluent and an action, ...) of
            the same name, which PDDL allows and UP refuses by default (UP's environment flag
            ``error_used_name`` is off while these files are read).
        max_bytes: the largest file read (:data:`~bt_raider.files.MAX_PDDL_BYTES` by default).

    Raises:
        PlanningError: a file cannot be read or is not PDDL UP understands; the message names
            the file and carries the reader's message (with line and column).
        MissingDependencyError: unified-planning is not installed (the ``pddl`` extra).
    """
    # Before the reader is tried: its failures below are taken for the file's.
    need("pddl", "reading PDDL into a UP problem (load)", modules=("unified_planning",))
    domain_text = _normalise(_read(domain, "domain", max_bytes))
    problem_text = None if problem is None else _normalise(_read(problem, "problem", max_bytes))
    try:
        return _parse(domain_text, problem_text, allow_shared_names)
    except Exception as exc:  # the reader raises pyparsing, SyntaxError and UP errors alike
        error = exc
    # Say which file is at fault: if the domain reads alone, the problem is.
    culprit = Path(domain)
    if problem is not None:
        try:
            _parse(domain_text, None, allow_shared_names)
            culprit = Path(problem)
        except Exception as exc:
            error = exc
    raise PlanningError(f"{culprit}: not valid PDDL: {_reader_message(error)}") from error


#: Serialises switching UP's name check off while one problem is read.
_NAME_CHECK = threading.Lock()


def _parse(domain_text: str, problem_text: str | None, allow_shared_names: bool = False) -> Problem:
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import get_environment

    env = get_environment()
    # UP prints a credits banner on stdout each time an engine starts; a CLI must not.
    env.credits_stream = None
    with warnings.catch_warnings(), _NAME_CHECK:
        # UP's reader calls pyparsing APIs that newer pyparsing marks deprecated; with shared
        # names allowed it warns about each one.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        # The global environment, its check off while reading only: UP's grounder (plan
        # validation, simulation) builds actions in the global environment, so a problem
        # living in another one could be read but never validated.
        checking = env.error_used_name
        env.error_used_name = checking and not allow_shared_names
        try:
            return PDDLReader(env).parse_problem_string(domain_text, problem_text)
        finally:
            env.error_used_name = checking


# ---------------------------------------------------------------------------- engines
def supported_features(engine: str) -> frozenset[str]:
    """The problem-kind features ``engine`` supports (pyperplan's without importing UP)."""
    if engine == "pyperplan":
        return engines.PYPERPLAN_FEATURES
    from unified_planning.shortcuts import get_environment

    return frozenset(get_environment().factory.engine(engine).supported_kind().features)


def missing_features(problem: Problem, engine: str) -> list[str]:
    """Kind features of ``problem`` that ``engine`` does not declare support for (sorted)."""
    return sorted(set(problem.kind.features) - supported_features(engine))


def describe_features(features: Iterable[str]) -> str:
    """``CONTINUOUS_TIME (durative actions), INT_TYPE_DURATIONS (action durations)`` for messages."""
    out = []
    for f in features:
        words = FEATURE_WORDS.get(f)
        out.append(f"{f} ({words})" if words else f)
    return ", ".join(out)


#: Said where UP is missing but pyperplan alone would do.
_PYPERPLAN = " (or engine 'pyperplan', which needs only bt_raider[pyperplan])"


def _require_engine(engine: str) -> None:
    if engine not in ENGINE_CHOICES:
        raise PlanningError(
            f"unknown planning engine {engine!r}: expected one of {', '.join(ENGINE_CHOICES)}"
        )
    if engine == "auto":  # the child reads the problem's kind with UP to choose
        need("pddl", "engine 'auto'", modules=("unified_planning",), alternative=_PYPERPLAN)
    elif engine not in installed_engines():
        module, package, extra = engines.MODULES[engine]
        # raises MissingDependencyError with the install hint
        require(module, extra, package, needed_by=f"the {engine} engine")


def _unsupported(problem: Problem, tried: Sequence[str], auto: bool) -> PlanningError:
    lacks = {e: set(missing_features(problem, e)) for e in tried}
    common = sorted(set.intersection(*lacks.values())) if lacks else sorted(problem.kind.features)
    who = "no installed engine supports" if auto else f"{tried[0]} does not support"
    if common:
        needs = f"it needs {describe_features(common)}"
    else:  # each engine lacks something different
        needs = "; ".join(f"{e} lacks {describe_features(sorted(v))}" for e, v in lacks.items())
    hint = ""
    if {"CONTINUOUS_TIME", "DISCRETE_TIME"} & set(common):
        hint = " A temporal planner is needed (e.g. pip install up-tamer)."
    installed = ", ".join(installed_engines()) or "none"
    return PlanningError(
        f"{who} problem {problem.name!r}: {needs}. Installed engines: {installed}.{hint}"
    )


def choose_engine(problem: Problem, engine: str = "auto") -> str:
    """The engine :func:`solve` would use for ``problem``.

    Raises:
        PlanningError: ``engine`` is unknown, or it (for ``auto``: every installed engine)
            lacks a feature the problem needs; the message names the features and engines.
        MissingDependencyError: ``engine`` is optional and not installed (with the hint).
    """
    _require_engine(engine)
    candidates = installed_engines() if engine == "auto" else [engine]
    for strict in (True, False):
        for name in candidates:
            missing = set(missing_features(problem, name))
            if not missing or (not strict and missing <= LENIENT_FEATURES):
                return name
    raise _unsupported(problem, candidates, engine == "auto")


def _answer_error(
    answer: engines.Answer, name: str, engine: str, timeout: float | None, doing: str = ""
) -> PlanningError:
    """The PlanningError for an answer that carries no plan (``doing``: the child's last
    phase, named when the time ran out before the search)."""
    if answer.status == "unsolvable":
        return PlanningError(
            f"problem {name!r} has no plan: {engine} proved the goal unreachable "
            f"({answer.message or 'UNSOLVABLE_PROVEN'})"
        )
    if answer.status == "timeout":
        other = [e for e in installed_engines() if e != engine]
        hint = f", or another engine: {', '.join(other)}" if other else ""
        who = f"{engine} was stopped" if engine in ENGINES else "planning was stopped"
        while_ = f" while {doing}" if doing and not doing.startswith("searching") else ""
        return PlanningError(
            f"no plan for {name!r} within {timeout:g} s: {who} at the time limit{while_} "
            f"(give it more time with timeout= / --timeout{hint})"
        )
    return PlanningError(
        f"{engine} cannot solve problem {name!r}: {answer.message or 'no message'}"
    )


def solve(
    problem: Problem,
    engine: str = "auto",
    timeout: float | None = 60.0,
    *,
    progress: engines.Progress | None = None,
) -> SequentialPlan:
    """Plan for ``problem`` with a real engine, in a child process stopped at ``timeout``.

    Args:
        problem: a UP problem (see :func:`load`).
        engine: ``"pyperplan"``, ``"fast-downward"`` or ``"auto"`` (see :func:`choose_engine`).
        timeout: seconds before the search is stopped, whatever the engine (None: no limit).
        progress: called as ``progress(engine, seconds)`` every few seconds while it searches.

    Returns:
        The sequential plan (empty when the goal already holds).

    Raises:
        PlanningError: no engine applies, the problem is unsolvable, time ran out ("no plan
            for ... within N s"), or the engine failed (the message carries its reason).
    """
    from unified_planning.exceptions import UPException
    from unified_planning.plans import ActionInstance, SequentialPlan

    name = choose_engine(problem, engine)
    # The child reads PDDL: UP writes the problem with names it can map back to its elements.
    writer = problem_writer(problem)
    try:
        domain_text, problem_text = writer.get_domain(), writer.get_problem()
    except (UPException, NotImplementedError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise PlanningError(f"cannot write problem {problem.name!r} as PDDL: {reason}") from exc
    answer = engines.run(name, domain_text, problem_text, timeout=timeout, progress=progress)
    if answer.status != "solved":
        raise _answer_error(answer, problem.name, name, timeout)
    actions = []
    for text in answer.plan:
        step = parse_step(text)
        try:
            action = writer.get_item_named(step.name)
            args = tuple(writer.get_item_named(a) for a in step.args)
        except (KeyError, UPException) as exc:
            raise PlanningError(f"{name} returned a step {text!r} not in {problem.name!r}") from exc
        actions.append(ActionInstance(action, args))
    return SequentialPlan(actions, environment=problem.environment)


@dataclass
class PlanResult:
    """What :func:`plan_texts` found.

    Attributes:
        problem: the problem's name, as the engine read it.
        engine: the engine that planned.
        steps: the plan.
        valid: whether the plan reaches the goal when stepped from the initial state (None:
            not validated).
        seconds: the whole request's wall time (reading, grounding, searching, validating).
    """

    problem: str
    engine: str
    steps: list[Step]
    valid: bool | None
    seconds: float


#: ``(define (problem NAME)``: a problem's name for a message when the child said nothing.
_PROBLEM_NAME = re.compile(r"\(\s*define\s*\(\s*problem\s+([^\s()]+)", re.IGNORECASE)


def plan_texts(
    domain: str,
    problem: str,
    engine: str = "auto",
    timeout: float | None = 60.0,
    *,
    progress: engines.Progress | None = None,
    allow_shared_names: bool = False,
    validate: bool = False,
    names: tuple[str, str] = ("domain", "problem"),
    spent: float = 0.0,
) -> PlanResult:
    """Plan from PDDL text with everything costly in the child process the time limit stops.

    Reading the text (UP's reader or pyperplan's), choosing the engine (``auto``), grounding,
    searching and validating all run in :mod:`bt_raider.planners.child`, under its
    address-space cap: ``timeout`` bounds the call's wall time whatever the problem's size, and
    this process imports no UP.

    Args:
        domain: the domain's PDDL text.
        problem: the problem's PDDL text.
        engine: ``"auto"``, ``"pyperplan"`` or ``"fast-downward"``.
        timeout: seconds for all of it (None: no limit).
        progress: called as ``progress(what, seconds)`` from the first second on
            (``"parsing"``, ``"grounding"``, ``"searching with pyperplan"``, ``"validating"``).
        allow_shared_names: as for :func:`load`.
        validate: step the plan from the initial state to check that it reaches the goal.
        names: the files' names, for messages.
        spent: seconds of ``timeout`` already used by the caller (a command's start-up), so
            that ``timeout`` bounds the caller's whole wall time.

    Raises:
        PlanningError: a text is not PDDL the reader understands (naming the file), no engine
            applies, no plan, time ran out ("no plan for ... within N s"), or the planner ran out
            of memory under its address-space limit (naming the limit).
        MissingDependencyError: ``engine`` is not installed (with the hint).
    """
    _require_engine(engine)
    budget = None if timeout is None else max(timeout - max(spent, 0.0), 0.05)
    request = {
        "op": "plan",
        "engine": engine,
        "domain": _normalise(domain),
        "problem": _normalise(problem),
        "timeout": budget,
        "shared_names": allow_shared_names,
        "validate": validate,
    }
    start = time.monotonic()
    # From the caller's first second on (a command's start-up took part of it), but not at
    # once: a quick answer or refusal stays the command's only output.
    first = max(engines.FIRST_PROGRESS - max(spent, 0.0), 0.3)
    reply, doing = engines.exchange(request, timeout=budget, progress=progress, first_after=first)
    seconds = time.monotonic() - start
    found = _PROBLEM_NAME.search(problem[:4096])
    name = found.group(1).lower() if found else Path(names[1]).stem
    if reply is None:
        used = doing.rsplit(" ", 1)[-1] if doing.startswith("searching with ") else engine
        answer = engines.Answer("timeout", message=f"stopped after {seconds:.1f} s")
        raise _answer_error(answer, name, used, timeout, doing or "starting the planner")
    status = str(reply.get("status"))
    if status == "invalid":
        culprit = names[1] if reply.get("culprit") == "problem" else names[0]
        raise PlanningError(f"{culprit}: not valid PDDL: {reply.get('message')}")
    if status == "refused":
        raise PlanningError(str(reply.get("message")))
    answer = engines.answer_of(reply)
    used = str(reply.get("engine") or engine)
    if status != "solved":
        raise _answer_error(answer, answer.problem or name, used, timeout, doing)
    valid = reply.get("valid")
    return PlanResult(
        answer.problem or name,
        used,
        [parse_step(text) for text in answer.plan],
        None if valid is None else bool(valid),
        seconds,
    )


def plan_paths(
    domain: str | Path,
    problem: str | Path,
    engine: str = "auto",
    timeout: float | None = 60.0,
    *,
    progress: engines.Progress | None = None,
    allow_shared_names: bool = False,
    validate: bool = False,
    max_bytes: int = MAX_PDDL_BYTES,
    spent: float = 0.0,
) -> PlanResult:
    """:func:`plan_texts` for PDDL files: this process reads them, the child does the rest.

    ``max_bytes`` caps each file (:data:`~bt_raider.files.MAX_PDDL_BYTES` by default);
    ``spent`` as for :func:`plan_texts`.

    Raises:
        PlanningError: a file cannot be read (a :class:`~bt_raider.errors.PddlFileError`), or
            as :func:`plan_texts`.
    """
    texts = _read(domain, "domain", max_bytes), _read(problem, "problem", max_bytes)
    return plan_texts(
        *texts,
        engine,
        timeout,
        progress=progress,
        allow_shared_names=allow_shared_names,
        validate=validate,
        names=(str(domain), str(problem)),
        spent=spent,
    )


def plan_files(
    domain: str | Path,
    problem: str | Path,
    engine: str = "pyperplan",
    timeout: float | None = 60.0,
    *,
    progress: engines.Progress | None = None,
    allow_shared_names: bool = False,
) -> list[Step]:
    """The plan for PDDL files as :class:`Step` objects, without reading them into UP here.

    The engine reads the files in its child process (:func:`plan_paths`), so this process
    imports neither UP's model nor its engines (about 1.5 s of start-up): the way for a program
    that only needs the steps, such as the medicine-delivery demo. ``auto`` reads them with UP
    in the child to choose. ``allow_shared_names`` as for :func:`load` (pyperplan accepts
    shared names anyway).

    Raises:
        PlanningError: a file cannot be read or the engine cannot read it, no plan, or time
            ran out (as :func:`solve`).
    """
    return plan_paths(
        domain,
        problem,
        engine,
        timeout,
        progress=progress,
        allow_shared_names=allow_shared_names,
    ).steps


def validate(problem: Problem, plan: SequentialPlan) -> bool:
    """True when ``plan`` is applicable from the initial state and reaches the goal."""
    from unified_planning.engines import ValidationResultStatus

    # By name: selecting by kind would refuse the lenient features solve() accepts.
    factory = problem.environment.factory
    with factory.PlanValidator(name="sequential_plan_validator") as validator:
        validator.skip_checks = True
        result = validator.validate(problem, plan)
    return result.status is ValidationResultStatus.VALID


def simulator(problem: Problem) -> Any:
    """UP's sequential simulator for ``problem`` (used for states, checks and execution).

    Raises:
        PlanningError: the problem has features the simulator cannot execute (durative
            actions, for instance); the message names them.
    """
    # A submodule of UP's engines, loaded only when a simulator is first built.
    from unified_planning.engines.sequential_simulator import UPSequentialSimulator

    missing = set(problem.kind.features) - set(UPSequentialSimulator.supported_kind().features)
    if missing - LENIENT_FEATURES:
        raise PlanningError(
            f"cannot simulate problem {problem.name!r}: UP's sequential simulator does not "
            f"support {describe_features(sorted(missing - LENIENT_FEATURES))}"
        )
    if not missing:
        return UPSequentialSimulator(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return UPSequentialSimulator(problem, error_on_failed_checks=False)


# ---------------------------------------------------------------------------- steps
@dataclass
class Step:
    """One step of a plan in bt_raider's words.

    Attributes:
        name: the action's name, e.g. ``"pick"``.
        args: the object names, e.g. ``["tiago", "medicine", "counter"]``.
        instance: the UP action instance it came from (None when built from text).
    """

    name: str
    args: list[str] = field(default_factory=list)
    instance: ActionInstance | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        return pddl_text(self)

    def __str__(self) -> str:
        return self.text


def _arg_name(node: FNode) -> str:
    return node.object().name if node.is_object_exp() else str(node)


def step_of(instance: ActionInstance) -> Step:
    """The :class:`Step` of one UP action instance."""
    args = [_arg_name(p) for p in instance.actual_parameters]
    return Step(instance.action.name, args, instance)


def plan_steps(plan: SequentialPlan | Iterable[ActionInstance]) -> list[Step]:
    """The steps of a sequential plan, in order."""
    actions = plan.actions if hasattr(plan, "actions") else plan
    return [step_of(a) for a in actions]


def pddl_text(step: Step | ActionInstance) -> str:
    """``(pick tiago medicine counter)``."""
    if not isinstance(step, Step):
        step = step_of(step)
    return "(" + " ".join([step.name, *step.args]) + ")"


def to_plan(problem: Problem, steps: Iterable[Step | str]) -> SequentialPlan:
    """A UP sequential plan of ``steps`` (Steps or their text) in ``problem``.

    Raises:
        QueryError: a step names an unknown action or object, or has the wrong arity.
    """
    from unified_planning.plans import ActionInstance, SequentialPlan

    instances = []
    for step in steps:
        action, objects = resolve(problem, parse_step(step) if isinstance(step, str) else step)
        instances.append(ActionInstance(action, tuple(objects)))
    return SequentialPlan(instances, environment=problem.environment)


def read_plan(path: str | Path) -> list[Step]:
    """The steps of a plan file: one ``(name arg ...)`` per line, ``;`` starts a comment."""
    steps = []
    for line in _read(path, "plan").splitlines():
        line = line.split(";", 1)[0].strip()
        if line:
            steps.append(parse_step(line))
    return steps


_CALL = re.compile(r"^\s*([^\s(),]+)\s*\((.*)\)\s*$", re.DOTALL)


def parse_step(text: str) -> Step:
    """A step from ``(pick a b)`` or ``pick(a, b)`` (quotes around arguments are dropped).

    Raises:
        QueryError: the text is neither form.
    """
    s = text.strip()
    if s.startswith("(") and s.endswith(")"):
        parts = s[1:-1].split()
        if parts and "(" not in s[1:-1] and ")" not in s[1:-1]:
            return Step(parts[0], parts[1:])
    m = _CALL.match(s)
    if m and "(" not in m.group(2):
        args = [a.strip().strip("'\"") for a in m.group(2).split(",") if a.strip()]
        return Step(m.group(1), args)
    raise QueryError(f"cannot read action {text!r}: expected (name arg ...) or name(arg, ...)")


# ---------------------------------------------------------------------------- expressions
def fact_text(node: FNode) -> str:
    """A UP expression as PDDL text: ``(at ball1 rooma)``, ``(not (free left))``."""
    if node.is_fluent_exp():
        return "(" + " ".join([node.fluent().name, *(fact_text(a) for a in node.args)]) + ")"
    if node.is_object_exp():
        return node.object().name
    if node.is_parameter_exp():
        return "?" + node.parameter().name
    if node.is_variable_exp():
        return "?" + node.variable().name
    if node.is_bool_constant():
        return "true" if node.bool_constant_value() else "false"
    ops = {"is_not": "not", "is_and": "and", "is_or": "or", "is_implies": "imply"}
    for test, word in ops.items():
        if getattr(node, test)():
            return "(" + " ".join([word, *(fact_text(a) for a in node.args)]) + ")"
    if node.is_equals() or node.is_iff():
        return "(= " + " ".join(fact_text(a) for a in node.args) + ")"
    if node.is_forall() or node.is_exists():
        word = "forall" if node.is_forall() else "exists"
        params = " ".join(f"?{v.name} - {type_name(v.type)}" for v in node.variables())
        return f"({word} ({params}) {fact_text(node.arg(0))})"
    return str(node)


def type_name(t: Any) -> str:
    """A UP type as PDDL writes it (``receptacle``, not ``receptacle - object``)."""
    return getattr(t, "name", None) or str(t)


def conjuncts(node: FNode) -> list[FNode]:
    """The top-level conjuncts of an expression (the expression itself when not an ``and``)."""
    if node.is_and():
        out: list[FNode] = []
        for arg in node.args:
            out.extend(conjuncts(arg))
        return out
    return [node]


class GroundingError(QueryError):
    """A step names an object the problem lacks, or one of the wrong type.

    Attributes:
        category: the issue category it amounts to (``not_present`` or ``wrong_property``).
    """

    def __init__(self, message: str, category: Category) -> None:
        super().__init__(message)
        self.category = category


def _key(name: str) -> str:
    # UP lowercases PDDL names; recovery code spells pick-up as pick_up (an identifier).
    return name.lower().replace("-", "_")


def _lookup(names: list[str], wanted: str) -> str | None:
    """``wanted`` among ``names``: exactly, else ignoring case and ``-`` versus ``_``."""
    if wanted in names:
        return wanted
    key = _key(wanted)
    return next((n for n in names if _key(n) == key), None)


def resolve(problem: Problem, step: Step) -> tuple[Action, list[Object]]:
    """The UP action and objects a step names.

    Raises:
        QueryError: unknown action or wrong number of arguments (names the valid options).
        GroundingError: an unknown object (``not_present``) or one of the wrong type
            (``wrong_property``).
    """
    action_names = [a.name for a in problem.actions]
    name = _lookup(action_names, step.name)
    if name is None:
        raise QueryError(
            f"unknown action {step.name!r}: expected one of {', '.join(sorted(action_names))}"
        )
    action = problem.action(name)
    params = action.parameters
    if len(params) != len(step.args):
        signature = " ".join(f"?{p.name} - {type_name(p.type)}" for p in params)
        raise QueryError(
            f"{pddl_text(step)}: {name} takes {len(params)} argument(s) ({signature}), "
            f"got {len(step.args)}"
        )
    object_names = [o.name for o in problem.all_objects]
    objects = []
    for param, arg in zip(params, step.args, strict=True):
        found = _lookup(object_names, str(arg))
        if found is None:
            raise GroundingError(
                f"{pddl_text(step)}: no object {arg!r} in problem {problem.name!r}",
                Category.NOT_PRESENT,
            )
        obj = problem.object(found)
        if not param.type.is_compatible(obj.type):
            raise GroundingError(
                f"{pddl_text(step)}: {obj.name} is of type {type_name(obj.type)}, but ?{param.name} "
                f"of {name} must be of type {type_name(param.type)}",
                Category.WRONG_PROPERTY,
            )
        objects.append(obj)
    return action, objects
