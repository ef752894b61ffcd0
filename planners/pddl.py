"""PDDL in, plan out: read a domain and problem, solve, validate, and name the steps.

Everything goes through unified-planning (UP): :class:`~unified_planning.io.PDDLReader` reads,
a ``OneshotPlanner`` solves (pyperplan always, Fast Downward when ``up-fast-downward`` is
installed), ``PlanValidator`` checks. A plan's steps come out as :class:`Step` objects that the
rest of bt_raider speaks: ``Step("pick", ["tiago", "medicine", "counter"])`` and its PDDL text
``(pick tiago medicine counter)``.

Engine choice (``engine="auto"``, the default): the first installed engine, pyperplan before
Fast Downward, whose supported problem kind covers the problem's — so pyperplan plans by default
and Fast Downward takes what pyperplan cannot (ADL features such as ``forall`` and conditional
effects), or whatever it is asked for by name. Two kind features describe declarations
rather than what the search needs (:data:`LENIENT_FEATURES`); an engine lacking only those is
still tried, and its own error is reported if it fails.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unified_planning.engines import PlanGenerationResultStatus, ValidationResultStatus
from unified_planning.exceptions import UPException
from unified_planning.io import PDDLReader
from unified_planning.plans import ActionInstance, SequentialPlan
from unified_planning.shortcuts import OneshotPlanner, PlanValidator, get_environment

from bt_raider.checking.verdict import Category
from bt_raider.errors import PlanningError, QueryError, require

if TYPE_CHECKING:
    from unified_planning.model import Action, FNode, Object, Problem

# UP prints a credits banner on stdout each time an engine starts; a CLI must not.
get_environment().credits_stream = None

#: Engines bt_raider drives, in the order ``auto`` tries them.
ENGINES: tuple[str, ...] = ("pyperplan", "fast-downward")
ENGINE_CHOICES: tuple[str, ...] = ("auto", "pyperplan", "fast-downward")
#: Optional engines: engine name -> (module, PyPI package, bt_raider extra).
_OPTIONAL = {"fast-downward": ("up_fast_downward", "up-fast-downward", "fd")}
#: Engines that honour a time limit (pyperplan runs until it is done).
_TIMEOUT_ENGINES = frozenset({"fast-downward"})

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

_SOLVED = (
    PlanGenerationResultStatus.SOLVED_SATISFICING,
    PlanGenerationResultStatus.SOLVED_OPTIMALLY,
)
_UNSOLVABLE = (
    PlanGenerationResultStatus.UNSOLVABLE_PROVEN,
    PlanGenerationResultStatus.UNSOLVABLE_INCOMPLETELY,
)
# An empty ``(:functions)`` block is valid PDDL (PlanSys2 writes one) but UP's grammar rejects it.
_EMPTY_FUNCTIONS = re.compile(r"\(\s*:functions\s*\)", re.IGNORECASE)


# ---------------------------------------------------------------------------- reading
def _read(path: str | Path, what: str) -> str:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanningError(f"{p}: cannot read the PDDL {what} ({exc.strerror or exc})") from exc


def _normalise(text: str) -> str:
    """Blank out empty ``(:functions)`` blocks, keeping every line and column in place."""
    return _EMPTY_FUNCTIONS.sub(lambda m: re.sub(r"\S", " ", m.group(0)), text)


def _reader_message(exc: Exception) -> str:
    msg = " ".join(str(exc).split()) or type(exc).__name__
    if "invalid expression" in msg:
        # UP reads the domain's actions before the problem's objects, so a name the domain uses
        # without declaring it under :constants fails here.
        msg += " (a name used in the domain but not declared in its :constants?)"
    return msg


def load(domain: str | Path, problem: str | Path | None = None) -> Problem:
    """Read a PDDL domain and problem into a UP problem.

    Args:
        domain: path of the domain file.
        problem: path of the problem file; None reads the domain alone (no objects, no goal).

    Raises:
        PlanningError: a file cannot be read or is not PDDL UP understands; the message names
            the file and carries the reader's message (with line and column).
    """
    domain_text = _normalise(_read(domain, "domain"))
    problem_text = None if problem is None else _normalise(_read(problem, "problem"))
    try:
        return _parse(domain_text, problem_text)
    except Exception as exc:  # the reader raises pyparsing, SyntaxError and UP errors alike
        error = exc
    # Say which file is at fault: if the domain reads alone, the problem is.
    culprit = Path(domain)
    if problem is not None:
        try:
            _parse(domain_text, None)
            culprit = Path(problem)
        except Exception as exc:
            error = exc
    raise PlanningError(f"{culprit}: not valid PDDL: {_reader_message(error)}") from error


def _parse(domain_text: str, problem_text: str | None) -> Problem:
    with warnings.catch_warnings():
        # UP's reader calls pyparsing APIs that newer pyparsing marks deprecated.
        warnings.simplefilter("ignore", DeprecationWarning)
        return PDDLReader().parse_problem_string(domain_text, problem_text)


# ---------------------------------------------------------------------------- engines
def installed_engines() -> list[str]:
    """The engines of :data:`ENGINES` that UP can load here, in ``auto`` order."""
    available = set(get_environment().factory.engines)
    return [name for name in ENGINES if name in available]


def _engine_class(name: str) -> Any:
    return get_environment().factory.engine(name)


def missing_features(problem: Problem, engine: str) -> list[str]:
    """Kind features of ``problem`` that ``engine`` does not declare support for (sorted)."""
    supported = _engine_class(engine).supported_kind()
    return sorted(set(problem.kind.features) - set(supported.features))


def describe_features(features: Iterable[str]) -> str:
    """``CONTINUOUS_TIME (durative actions), INT_TYPE_DURATIONS (action durations)`` for messages."""
    out = []
    for f in features:
        words = FEATURE_WORDS.get(f)
        out.append(f"{f} ({words})" if words else f)
    return ", ".join(out)


def _require_engine(engine: str) -> None:
    if engine not in ENGINE_CHOICES:
        raise PlanningError(
            f"unknown planning engine {engine!r}: expected one of {', '.join(ENGINE_CHOICES)}"
        )
    if engine in _OPTIONAL and engine not in installed_engines():
        module, package, extra = _OPTIONAL[engine]
        require(module, extra, package)  # raises MissingDependencyError with the install hint
        raise PlanningError(f"{package} is installed but UP does not list engine {engine!r}")


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


def solve(problem: Problem, engine: str = "auto", timeout: float | None = 60.0) -> SequentialPlan:
    """Plan for ``problem`` with a real engine.

    Args:
        problem: a UP problem (see :func:`load`).
        engine: ``"pyperplan"``, ``"fast-downward"`` or ``"auto"`` (see :func:`choose_engine`).
        timeout: seconds for engines that honour a limit (Fast Downward); pyperplan has none.

    Returns:
        The sequential plan (empty when the goal already holds).

    Raises:
        PlanningError: no engine applies, the problem is unsolvable, time ran out, or the
            engine failed (the message carries the end of its log).
    """
    name = choose_engine(problem, engine)
    kwargs: dict[str, Any] = {}
    if timeout is not None and name in _TIMEOUT_ENGINES:
        kwargs["timeout"] = timeout
    try:
        with OneshotPlanner(name=name) as planner:
            planner.skip_checks = True  # choose_engine checked the kind; skip UP's warning
            result = planner.solve(problem, **kwargs)
    except (UPException, NotImplementedError, AssertionError) as exc:
        # Engines signal an unsupported construct with any of these.
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise PlanningError(f"{name} cannot solve problem {problem.name!r}: {reason}") from exc
    if result.status in _SOLVED and result.plan is not None:
        return result.plan
    if result.status in _UNSOLVABLE:
        raise PlanningError(
            f"problem {problem.name!r} has no plan: {name} proved the goal unreachable "
            f"({result.status.name})"
        )
    if result.status is PlanGenerationResultStatus.TIMEOUT:
        raise PlanningError(f"{name} found no plan for {problem.name!r} within {timeout} s")
    log = " ".join(" ".join(m.message.split()) for m in (result.log_messages or []))
    raise PlanningError(
        f"{name} failed on problem {problem.name!r} ({result.status.name}): {log[-400:] or 'no log'}"
    )


def validate(problem: Problem, plan: SequentialPlan) -> bool:
    """True when ``plan`` is applicable from the initial state and reaches the goal."""
    # By name: selecting by kind would refuse the lenient features solve() accepts.
    with PlanValidator(name="sequential_plan_validator") as validator:
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
    instances = []
    for step in steps:
        action, objects = resolve(problem, parse_step(step) if isinstance(step, str) else step)
        instances.append(ActionInstance(action, tuple(objects)))
    return SequentialPlan(instances)


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
