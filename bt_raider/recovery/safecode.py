"""Recovery code from a model, parsed against a whitelist and compiled to a py_trees subtree.

RAIDER's recovery planner writes its plan as Python-looking code (``item = ask("Which item?")``,
``pick(item)``) so the answer of an interaction can be used by later actions. That code is
untrusted: it is **never** passed to ``exec``/``eval``/``compile``. :func:`parse_recovery`
reads it with :func:`ast.parse` (which only builds a syntax tree) and accepts a tiny language:

* a module of at most :attr:`Limits.max_statements` statements, one per line;
* each statement is a bare call ``action(arg, ...)`` of an action in the :class:`Vocabulary`,
  or an assignment ``name = ask("question")``. Only ``ask`` returns something meaningful
  (the person's answer), so only ``ask`` may be assigned; assigning a robot action is rejected;
* arguments are string or number constants (a leading minus is allowed on numbers) or names
  assigned by an earlier ``ask``; no keywords, no ``*args``, no nested calls or expressions.

Everything else (imports, attributes, subscripts, control flow, definitions, lambdas,
comprehensions, f-strings, walrus, dunder or private names, unknown actions, use before
definition, wrong arity, oversized literals or source) is rejected with a
:class:`~bt_raider.errors.RecoveryCodeError` whose message names the line, the construct and
what is allowed, so it can be fed back to the model.

:func:`~bt_raider.recovery.compiler.compile_program` turns an accepted :class:`Program` into a
``Sequence(memory=True)`` of :class:`~bt_raider.robot.human.AskBehaviour`,
:class:`~bt_raider.robot.human.SayBehaviour`, :class:`~bt_raider.robot.human.WaitFor` and
:class:`~bt_raider.robot.actions.ActionBehaviour` nodes.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from bt_raider.errors import RecoveryCodeError

if TYPE_CHECKING:
    pass

#: Actions compiled to interaction behaviours; their arity is fixed.
INTERACTION_ACTIONS = ("ask", "say", "wait_for")

#: RAIDER's vocabulary (Fig. 7 plus the assistive actions of section 5.2):
#: name -> (allowed argument counts, how the prompt shows it).
DEFAULT_ACTIONS: dict[str, tuple[tuple[int, ...], str]] = {
    "ask": ((1,), 'ask("question")'),
    "say": ((1,), 'say("statement")'),
    "move_to": ((1,), "move_to(location)"),
    "pick": ((1,), "pick(object)"),
    "place": ((1, 2), "place(object) or place(object, destination)"),
    "open": ((1,), "open(object)"),
    "close": ((1,), "close(object)"),
    "turnon": ((1,), "turnon(object)"),
    "turnoff": ((1,), "turnoff(object)"),
    "slice": ((1,), "slice(object)"),
    "approach": ((1,), "approach(target)"),
    "handover": ((2,), "handover(object, person)"),
    "wait_for": ((1,), 'wait_for("event") or wait_for(seconds)'),
}

_BUILTIN_NAMES = frozenset(dir(builtins))
#: One parse at a time: CPython 3.11 keeps the AST builder's recursion depth in state shared by
#: threads, and two guards' recoveries parsed at once (a garbage collection switching threads
#: mid-parse) fail with "SystemError: AST constructor recursion depth mismatch".
_PARSE_LOCK = threading.Lock()


def _check_action_name(name: str) -> None:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise RecoveryCodeError(f"action name {name!r} is not a Python identifier")
    if name.startswith("_"):
        raise RecoveryCodeError(f"action name {name!r} must not start with an underscore")


class Vocabulary:
    """The actions recovery code may call, with their allowed argument counts.

    Args:
        actions: extra or replacement actions: name -> arity (an int or several ints).
        defaults: start from RAIDER's vocabulary (:data:`DEFAULT_ACTIONS`).

    Example:
        >>> vocab = Vocabulary().register("wipe", 1, usage="wipe(surface)")
        >>> vocab.arities("place")
        (1, 2)
    """

    def __init__(
        self,
        actions: Mapping[str, int | Iterable[int]] | None = None,
        *,
        defaults: bool = True,
    ) -> None:
        self._actions: dict[str, tuple[tuple[int, ...], str]] = {}
        if defaults:
            self._actions.update(DEFAULT_ACTIONS)
        else:
            # The interaction actions are always known: compilation relies on them.
            self._actions.update({k: DEFAULT_ACTIONS[k] for k in INTERACTION_ACTIONS})
        for name, arity in (actions or {}).items():
            self.register(name, arity)

    def register(
        self, name: str, arity: int | Iterable[int], *, usage: str | None = None
    ) -> Vocabulary:
        """Allow ``name`` with the given argument count(s); returns ``self`` for chaining.

        Raises:
            RecoveryCodeError: for a name that is not an identifier, starts with ``_``, or
                would change one of the interaction actions (``ask``, ``say``, ``wait_for``).
        """
        _check_action_name(name)
        if name in INTERACTION_ACTIONS:
            raise RecoveryCodeError(
                f"action {name!r} is an interaction action with a fixed form; "
                f"register other names (interaction actions: {', '.join(INTERACTION_ACTIONS)})"
            )
        counts = (arity,) if isinstance(arity, int) else tuple(sorted(set(arity)))
        if not counts or any(not isinstance(c, int) or c < 0 or c > 8 for c in counts):
            raise RecoveryCodeError(
                f"arity of {name!r} must be one or more integers in 0..8, got {arity!r}"
            )
        if usage is None:
            usage = f"{name}({', '.join(f'arg{i + 1}' for i in range(max(counts)))})"
        self._actions[name] = (counts, usage)
        return self

    def __contains__(self, name: object) -> bool:
        return name in self._actions

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._actions)

    def arities(self, name: str) -> tuple[int, ...]:
        return self._actions[name][0]

    def usage(self) -> list[str]:
        """How each action is written, for prompts (``place(object) or ...``)."""
        return [usage for _, usage in self._actions.values()]

    def describe(self) -> str:
        """``ask(1), say(1), ..., place(1-2)`` for error messages."""
        parts = []
        for name, (counts, _) in self._actions.items():
            if len(counts) > 1 and counts == tuple(range(counts[0], counts[-1] + 1)):
                parts.append(f"{name}({counts[0]}-{counts[-1]})")
            else:
                parts.append(f"{name}({'/'.join(map(str, counts))})")
        return ", ".join(parts)

    def copy(self) -> Vocabulary:
        out = Vocabulary(defaults=False)
        out._actions = dict(self._actions)
        return out


@dataclass(frozen=True)
class Limits:
    """Size limits that keep a hostile snippet from costing time or memory.

    Attributes:
        max_source: characters of source (checked before parsing).
        max_statements: statements in the program.
        max_string: characters of one string constant.
        max_number: largest absolute value of a number constant.
        max_name: characters of a variable name.
        max_wait_s: longest ``wait_for(seconds)``.
    """

    max_source: int = 4000
    max_statements: int = 30
    max_string: int = 300
    max_number: float = 1e6
    max_name: int = 40
    max_wait_s: float = 120.0


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Ref:
    """A use of a variable assigned by an earlier ``ask``."""

    name: str

    def __str__(self) -> str:
        return self.name


Arg: TypeAlias = "str | int | float | Ref"


@dataclass(frozen=True)
class CodeStep:
    """One accepted statement: ``target = action(*args)`` (target only for ``ask``)."""

    action: str
    args: tuple[Arg, ...]
    line: int
    target: str | None = None

    def to_code(self) -> str:
        call = f"{self.action}({', '.join(_arg_code(a) for a in self.args)})"
        return f"{self.target} = {call}" if self.target else call

    def __str__(self) -> str:
        return self.to_code()


def _arg_code(arg: Arg) -> str:
    return arg.name if isinstance(arg, Ref) else repr(arg)


@dataclass(frozen=True)
class Program:
    """An accepted recovery program: its steps in order and the source it came from."""

    steps: tuple[CodeStep, ...]
    source: str = ""

    @property
    def variables(self) -> tuple[str, ...]:
        """Names assigned by ``ask``, in order of first assignment."""
        seen: dict[str, None] = {}
        for step in self.steps:
            if step.target:
                seen.setdefault(step.target, None)
        return tuple(seen)

    @property
    def only_says(self) -> bool:
        """True when the program only tells the person something (RAIDER's "unfeasible, because")."""
        return bool(self.steps) and all(s.action == "say" for s in self.steps)

    def to_code(self) -> str:
        """The program in canonical form, one statement per line."""
        return "\n".join(s.to_code() for s in self.steps)

    def __len__(self) -> int:
        return len(self.steps)


# ---------------------------------------------------------------------------- parsing

#: Human-readable names of the constructs that are rejected.
_CONSTRUCTS: dict[type, str] = {
    ast.Import: "import",
    ast.ImportFrom: "from ... import",
    ast.For: "for loop",
    ast.AsyncFor: "async for loop",
    ast.While: "while loop",
    ast.If: "if statement",
    ast.With: "with block",
    ast.AsyncWith: "async with block",
    ast.Try: "try block",
    ast.FunctionDef: "function definition (def)",
    ast.AsyncFunctionDef: "async function definition",
    ast.ClassDef: "class definition",
    ast.Return: "return",
    ast.Delete: "del statement",
    ast.AugAssign: "augmented assignment (+=)",
    ast.AnnAssign: "annotated assignment",
    ast.Global: "global statement",
    ast.Nonlocal: "nonlocal statement",
    ast.Raise: "raise",
    ast.Assert: "assert",
    ast.Pass: "pass",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.Lambda: "lambda",
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
    ast.NamedExpr: "walrus assignment (:=)",
    ast.JoinedStr: "f-string",
    ast.FormattedValue: "f-string",
    ast.Attribute: "attribute access (a.b)",
    ast.Subscript: "subscript (a[b])",
    ast.Starred: "starred argument (*args)",
    ast.BinOp: "arithmetic or string operation",
    ast.UnaryOp: "unary operation",
    ast.BoolOp: "boolean operation (and/or)",
    ast.Compare: "comparison",
    ast.IfExp: "conditional expression (a if b else c)",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.Dict: "dict literal",
    ast.List: "list literal",
    ast.Tuple: "tuple (several values separated by commas)",
    ast.Set: "set literal",
    ast.Call: "nested call",
    ast.Slice: "slice",
    ast.Name: "name (not a call)",
    ast.Constant: "constant",
}
for _name, _label in (("Match", "match statement"), ("TryStar", "try/except* block")):
    if hasattr(ast, _name):
        _CONSTRUCTS[getattr(ast, _name)] = _label


def _construct(node: ast.AST) -> str:
    return _CONSTRUCTS.get(type(node), f"{type(node).__name__} expression")


ALLOWED = (
    'one call per line: action(arg, ...) or name = ask("question"); arguments are string or '
    "number constants or names assigned by an earlier ask"
)


class _Parser:
    def __init__(self, source: str, vocabulary: Vocabulary, limits: Limits) -> None:
        self.source = source
        self.vocab = vocabulary
        self.limits = limits
        self.defined: set[str] = set()

    # -- errors
    def _snippet(self, node: ast.AST) -> str:
        try:
            text = ast.get_source_segment(self.source, node) or ""
        except Exception:  # get_source_segment is best-effort on odd positions
            text = ""
        text = " ".join(text.split())
        return f" in `{text[:60]}{'...' if len(text) > 60 else ''}`" if text else ""

    def reject(self, node: ast.AST, what: str, hint: str = "") -> RecoveryCodeError:
        line = getattr(node, "lineno", "?")
        decorators = getattr(node, "decorator_list", None)
        if decorators:  # a decorated def/class starts at its first decorator
            line = min(d.lineno for d in decorators)
            what = f"decorated {what}"
        tail = hint or f"allowed: {ALLOWED}"
        return RecoveryCodeError(f"line {line}: {what}{self._snippet(node)} is not allowed; {tail}")

    # -- statements
    def program(self, module: ast.Module) -> Program:
        body = module.body
        if not body:
            raise RecoveryCodeError(f"recovery code is empty; expected {ALLOWED}")
        if len(body) > self.limits.max_statements:
            raise RecoveryCodeError(
                f"recovery code has {len(body)} statements, more than the limit of "
                f"{self.limits.max_statements}; write a shorter plan"
            )
        return Program(tuple(self.statement(stmt) for stmt in body), self.source)

    def statement(self, stmt: ast.stmt) -> CodeStep:
        if isinstance(stmt, ast.Expr):
            if not isinstance(stmt.value, ast.Call):
                raise self.reject(stmt, f"a bare {_construct(stmt.value)}")
            return self.call(stmt.value, target=None)
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                raise self.reject(stmt, "chained assignment (a = b = ...)")
            target = stmt.targets[0]
            if not isinstance(target, ast.Name):
                raise self.reject(
                    stmt, f"assignment to a {_construct(target)}", 'assign one name: x = ask("...")'
                )
            self.variable_name(target, target.id)
            if not isinstance(stmt.value, ast.Call):
                raise self.reject(
                    stmt,
                    f"assigning a {_construct(stmt.value)}",
                    'only the answer of ask may be assigned: x = ask("question")',
                )
            step = self.call(stmt.value, target=target.id)
            if step.action != "ask":
                raise self.reject(
                    stmt,
                    f"assigning the result of {step.action}()",
                    "only ask() returns a value; call other actions on their own line",
                )
            # Defined after the call is read, so ``x = ask(x)`` is a use before definition.
            self.defined.add(target.id)
            return step
        raise self.reject(stmt, _construct(stmt))

    def variable_name(self, node: ast.AST, name: str) -> None:
        if name.startswith("_"):
            raise self.reject(node, f"name {name!r} (dunder or private names)")
        if name in self.vocab:
            raise self.reject(node, f"assigning to {name!r}, the name of an action")
        if name in _BUILTIN_NAMES:
            raise self.reject(node, f"assigning to {name!r}, a Python builtin")
        if len(name) > self.limits.max_name:
            raise self.reject(
                node,
                f"a name of {len(name)} characters",
                f"names have at most {self.limits.max_name}",
            )

    # -- calls and arguments
    def call(self, call: ast.Call, target: str | None) -> CodeStep:
        func = call.func
        if not isinstance(func, ast.Name):
            raise self.reject(call, f"calling through a {_construct(func)}")
        name = func.id
        if name.startswith("__") or name.startswith("_"):
            raise self.reject(call, f"name {name!r} (dunder or private names)")
        if name not in self.vocab:
            raise self.reject(
                call,
                f"unknown action {name!r}",
                f"expected one of {', '.join(self.vocab.names)}",
            )
        if call.keywords:
            kw = call.keywords[0]
            label = f"keyword argument {kw.arg}=" if kw.arg else "**kwargs"
            raise self.reject(call, label, f"pass arguments by position: {self.vocab.describe()}")
        args = tuple(self.argument(call, arg) for arg in call.args)
        counts = self.vocab.arities(name)
        if len(args) not in counts:
            want = " or ".join(map(str, counts))
            raise RecoveryCodeError(
                f"line {call.lineno}: {name}() takes {want} argument(s), got {len(args)}"
                f"{self._snippet(call)}; actions: {self.vocab.describe()}"
            )
        if name == "wait_for" and isinstance(args[0], (int, float)):
            if not 0 < args[0] <= self.limits.max_wait_s:
                raise self.reject(
                    call,
                    f"waiting {args[0]} s",
                    f"wait_for(seconds) takes 0 < seconds <= {self.limits.max_wait_s:g}",
                )
        return CodeStep(name, args, call.lineno, target)

    def argument(self, call: ast.Call, arg: ast.expr) -> Arg:
        if isinstance(arg, ast.Constant):
            return self.constant(arg, arg.value)
        if (
            isinstance(arg, ast.UnaryOp)
            and isinstance(arg.op, (ast.USub, ast.UAdd))
            and isinstance(arg.operand, ast.Constant)
            and type(arg.operand.value) in (int, float)
        ):
            value = self.constant(arg.operand, arg.operand.value)
            return -value if isinstance(arg.op, ast.USub) else value  # type: ignore[operator]
        if isinstance(arg, ast.Name):
            if arg.id.startswith("_"):
                raise self.reject(arg, f"name {arg.id!r} (dunder or private names)")
            if arg.id not in self.defined:
                raise self.reject(
                    arg,
                    f"using {arg.id!r} before it is assigned",
                    f'assign it first with {arg.id} = ask("...") or quote a name as a string '
                    f'("{arg.id}")',
                )
            return Ref(arg.id)
        raise self.reject(arg, f"{_construct(arg)} as an argument")

    def constant(self, node: ast.Constant, value: object) -> Arg:
        if isinstance(value, str):
            if len(value) > self.limits.max_string:
                raise self.reject(
                    node,
                    f"a string of {len(value)} characters",
                    f"strings have at most {self.limits.max_string} characters",
                )
            return value
        if type(value) in (int, float):
            if not math.isfinite(value) or abs(value) > self.limits.max_number:  # type: ignore[arg-type]
                raise self.reject(
                    node,
                    "a number this large",
                    f"numbers are at most {self.limits.max_number:g} in size",
                )
            return value  # type: ignore[return-value]
        kind = "None" if value is None else type(value).__name__
        raise self.reject(node, f"a {kind} constant", "arguments are strings, numbers or names")


def parse_recovery(
    code: str, vocabulary: Vocabulary | None = None, *, limits: Limits = DEFAULT_LIMITS
) -> Program:
    """Parse untrusted recovery code into a :class:`Program` (nothing is executed).

    Args:
        code: the code, one statement per line.
        vocabulary: the allowed actions (RAIDER's by default).
        limits: size limits.

    Raises:
        RecoveryCodeError: naming the line, the rejected construct and what is allowed.
    """
    vocab = vocabulary or Vocabulary()
    if not isinstance(code, str):
        raise RecoveryCodeError(f"recovery code must be a string, got {type(code).__name__}")
    if len(code) > limits.max_source:
        raise RecoveryCodeError(
            f"recovery code has {len(code)} characters, more than the limit of "
            f"{limits.max_source}; write a shorter plan"
        )
    if "\x00" in code:
        line = code[: code.index("\x00")].count("\n") + 1
        raise RecoveryCodeError(f"line {line}: a NUL byte is not allowed; expected {ALLOWED}")
    try:
        with _PARSE_LOCK:
            module = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise RecoveryCodeError(f"{where}syntax error ({exc.msg}); expected {ALLOWED}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise RecoveryCodeError(
            f"recovery code cannot be parsed ({type(exc).__name__}: {exc}); expected {ALLOWED}"
        ) from None
    return _Parser(code, vocab, limits).program(module)
