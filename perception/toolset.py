"""The tool machinery: a Tool is a typed Python function with a docstring, a ToolSet the tools
one check may call, described to a model as JSON schema and called with checked arguments.

A plain function's parameters and docstring are read off the function itself; ``inspect`` (with
the ``ast``, ``dis`` and ``tokenize`` modules it imports, several milliseconds of every start of
``bt-raider check``) is loaded only for other callables: a ``functools.partial``, a callable
object, a wrapped function.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from bt_raider.errors import ToolError
from bt_raider.perception.scene import Scene

_JSON_TYPES = {"str": "string", "float": "number", "int": "integer", "bool": "boolean"}


class UnknownToolError(ToolError):
    """A tool name that is not in the tool set (the message lists the valid names)."""


# ---------------------------------------------------------------------- tool model
class Param(NamedTuple):
    """One model-facing parameter of a tool.

    Attributes:
        name: the parameter's name.
        type: ``"str"``, ``"float"``, ``"int"`` or ``"bool"``.
        description: what to pass (from the docstring's ``Args:``).
        required: False when the function gives a default.
        choices: the values a model should pass (a JSON schema ``enum``, and the constrained
            decoding grammar's only choices); empty when any value of ``type`` may do. The tool
            itself still reads what it reads (e.g. "on the left of" for ``left_of``).
    """

    name: str
    type: str = "str"
    description: str = ""
    required: bool = True
    choices: tuple[str, ...] = ()


class Tool(NamedTuple):
    """A perception tool: a function of ``(scene, *args)`` plus what a model needs to know."""

    name: str
    func: Callable[..., Any]
    description: str
    params: tuple[Param, ...] = ()
    returns: str = ""

    @classmethod
    def from_function(
        cls, func: Callable[..., Any], name: str | None = None, description: str | None = None
    ) -> Tool:
        """Build a tool from a function whose first parameter is the scene.

        Args:
            func: ``func(scene, arg1, ...)`` with a Google-style docstring.
            name: the tool's name (default: the function's ``__name__``).
            description: overrides the docstring's summary.

        Raises:
            ToolError: when the function takes no scene parameter or has ``*args``.
        """
        tool_name, params = _tool_parameters(func, name)
        hints = _hints(func, params)
        summary, arg_docs, returns = _parse_docstring(_docstring(func))
        model_params = []
        for p in params[1:]:
            model_params.append(
                Param(
                    p.name,
                    _type_name(hints.get(p.name, p.annotation)),
                    arg_docs.get(p.name, ""),
                    p.default is _EMPTY,
                )
            )
        return cls(
            name=tool_name,
            func=func,
            description=description or summary or tool_name.replace("_", " "),
            params=tuple(model_params),
            returns=returns,
        )

    def with_choices(self, param: str, choices: Sequence[str]) -> Tool:
        """This tool with ``param``'s model-facing values limited to ``choices``.

        Raises:
            ToolError: ``param`` is not one of the tool's parameters, or ``choices`` is empty.
        """
        names = [p.name for p in self.params]
        if param not in names:
            raise ToolError(
                f"tool {self.name} has no parameter {param!r}: expected one of {', '.join(names)}"
            )
        if not choices:
            raise ToolError(f"tool {self.name}: the choices of {param!r} are empty")
        params = tuple(
            p._replace(choices=tuple(choices)) if p.name == param else p for p in self.params
        )
        return self._replace(params=params)

    def signature(self) -> str:
        """``name(arg1, arg2)`` as shown to the model."""
        args = ", ".join(p.name if p.required else f"{p.name}?" for p in self.params)
        return f"{self.name}({args})"

    def call(self, scene: Scene, args: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """Run the tool on ``scene``.

        Args:
            scene: the scene the tool looks at.
            args: positional arguments (a list, as RAIDER's ``call_tool`` gives them) or a
                mapping of parameter names (as OpenAI function calling gives them).

        Raises:
            ToolError: wrong number or type of arguments, an unknown object or person, or any
                failure inside the tool (the message says which tool and what went wrong).
        """
        values = self._bind(args)
        try:
            return self.func(scene, *values)
        except ToolError:
            raise
        except Exception as exc:  # a failing tool is reported, never a traceback to the model
            raise ToolError(
                f"tool {self.signature()} failed on {values!r}: {type(exc).__name__}: {exc}"
            ) from exc

    def _bind(self, args: Sequence[Any] | Mapping[str, Any]) -> list[Any]:
        if isinstance(args, Mapping):
            unknown = [k for k in args if k not in {p.name for p in self.params}]
            if unknown:
                raise ToolError(
                    f"tool {self.signature()} has no parameter {unknown[0]!r}; parameters are: "
                    + (", ".join(p.name for p in self.params) or "none")
                )
            missing = [p.name for p in self.params if p.required and p.name not in args]
            if missing:
                raise ToolError(f"tool {self.signature()} is missing argument {missing[0]!r}")
            given = [args[p.name] for p in self.params if p.name in args]
        elif isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
            raise ToolError(
                f"tool {self.signature()}: arguments must be a list, got {type(args).__name__} "
                f"{args!r}"
            )
        else:
            given = list(args)
        low = sum(p.required for p in self.params)
        if not low <= len(given) <= len(self.params):
            want = str(low) if low == len(self.params) else f"{low} to {len(self.params)}"
            raise ToolError(
                f"tool {self.signature()} takes {want} argument(s), got {len(given)}: {given!r}"
            )
        return [_coerce(v, p, self) for v, p in zip(given, self.params, strict=False)]


class _Empty:
    """No default value, or no annotation, in an :class:`_Arg` (as ``inspect.Parameter.empty``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "EMPTY"


_EMPTY: Any = _Empty()


class _Arg(NamedTuple):
    """One parameter of a tool's function: what a :class:`Tool` needs of ``inspect.Parameter``.

    Attributes:
        name: the parameter's name.
        default: its default value, or ``EMPTY``.
        annotation: its annotation as written (a string under ``from __future__ import
            annotations``), or ``EMPTY``.
    """

    name: str
    default: Any = _EMPTY
    annotation: Any = _EMPTY


def _tool_parameters(func: Callable[..., Any], name: str | None) -> tuple[str, list[_Arg]]:
    """The tool name and the parameters of ``func``, or the ToolError that makes it no tool."""
    tool_name = name or getattr(func, "__name__", None)
    # An ASCII identifier: [A-Za-z_][A-Za-z0-9_]*.
    if not (isinstance(tool_name, str) and tool_name.isidentifier() and tool_name.isascii()):
        raise ToolError(f"a tool needs an identifier name, got {tool_name!r}")
    params = _plain_parameters(func)
    if params is None:
        params = _inspected_parameters(func, tool_name)
    if not params:
        raise ToolError(
            f"tool {tool_name!r}: the first parameter must be the scene, e.g. "
            f"def {tool_name}(scene, obj: str)"
        )
    return tool_name, params


# Flags of a code object (inspect.CO_VARARGS, inspect.CO_VARKEYWORDS): *args and **kwargs.
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


def _plain_parameters(func: Callable[..., Any]) -> list[_Arg] | None:
    """The parameters of a plain function with positional parameters only, read off its code
    object; None for anything else (``inspect.signature`` then reads it and says what is
    wrong). What ``inspect.signature`` gives for such a function, in microseconds and without
    importing ``inspect``."""
    if not isinstance(func, types.FunctionType) or hasattr(func, "__wrapped__"):
        return None
    code = func.__code__
    if code.co_kwonlyargcount or code.co_flags & (_CO_VARARGS | _CO_VARKEYWORDS):
        return None
    if "__signature__" in vars(func):
        return None
    names = code.co_varnames[: code.co_argcount]
    defaults = func.__defaults__ or ()
    first_default = len(names) - len(defaults)
    notes = func.__annotations__
    return [
        _Arg(
            n,
            defaults[i - first_default] if i >= first_default else _EMPTY,
            notes.get(n, _EMPTY),
        )
        for i, n in enumerate(names)
    ]


def _inspected_parameters(func: Callable[..., Any], tool_name: str) -> list[_Arg]:
    """The parameters of any other callable, through ``inspect.signature``."""
    import inspect  # several milliseconds: only for callables that are no plain function

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"tool {tool_name!r}: cannot read its signature ({exc})") from exc
    params = list(sig.parameters.values())
    if params and params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        params = []  # no scene parameter: refused by the caller
    for p in params[1:]:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ToolError(f"tool {tool_name!r}: *args/**kwargs are not supported ({p})")
    empty = inspect.Parameter.empty
    return [
        _Arg(
            p.name,
            _EMPTY if p.default is empty else p.default,
            _EMPTY if p.annotation is empty else p.annotation,
        )
        for p in params
    ]


def _docstring(func: Callable[..., Any]) -> str:
    """``inspect.getdoc(func)``, or ``""``: a plain function's own, cleaned, without ``inspect``."""
    if isinstance(func, types.FunctionType) and isinstance(func.__doc__, str):
        return cleandoc(func.__doc__)
    # Without a docstring of its own, inspect looks for an inherited one (a method's, a class's).
    import inspect

    return inspect.getdoc(func) or ""


def cleandoc(doc: str) -> str:
    """``inspect.cleandoc``: tabs expanded, the first line stripped, the least indentation of
    the others removed from each, blank lines at the start and the end dropped."""
    lines = doc.expandtabs().split("\n")
    margin = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.lstrip()), default=0)
    lines = [lines[0].lstrip(), *(line[margin:] for line in lines[1:])]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


_PLAIN_TYPES = (str, float, int, bool)
_PLAIN_NAMES = frozenset(t.__name__ for t in _PLAIN_TYPES)


def _hints(func: Callable[..., Any], params: list[_Arg]) -> dict[str, Any]:
    """The annotations of the model's parameters, forward references resolved.

    ``typing.get_type_hints`` (most of a tool's making) only when one needs it: a parameter
    unannotated, or annotated ``float`` or ``"float"`` (not redefined by its module), means the
    same either way; a default of None made ``float`` Optional before Python 3.11.
    """
    names = getattr(func, "__globals__", {})
    if all(
        p.annotation is _EMPTY
        or (
            p.default is not None
            and (
                p.annotation in _PLAIN_TYPES
                or (
                    isinstance(p.annotation, str)
                    and p.annotation in _PLAIN_NAMES
                    and p.annotation not in names
                )
            )
        )
        for p in params[1:]
    ):
        return {p.name: p.annotation for p in params}
    try:
        return typing.get_type_hints(func)
    except Exception:  # unresolvable forward references: fall back to the raw strings
        return {p.name: p.annotation for p in params}


def _type_name(annotation: Any) -> str:
    if annotation in (float, "float"):
        return "float"
    if annotation in (int, "int"):
        return "int"
    if annotation in (bool, "bool"):
        return "bool"
    return "str"


def _coerce(value: Any, param: Param, tool: Tool) -> Any:
    if param.type == "str":
        if isinstance(value, str):  # the common case first: no message is built for it
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise ToolError(f"{_where(param, tool)}: expected a name (string), got {value!r}")
    if param.type in ("float", "int"):
        try:
            num = float(value)
        except (TypeError, ValueError):
            raise ToolError(f"{_where(param, tool)}: expected a number, got {value!r}") from None
        return int(num) if param.type == "int" else num
    if param.type == "bool":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
        raise ToolError(f"{_where(param, tool)}: expected true or false, got {value!r}")
    return value


def _where(param: Param, tool: Tool) -> str:
    return f"tool {tool.signature()}, argument {param.name!r}"


def _parse_docstring(doc: str) -> tuple[str, dict[str, str], str]:
    """Summary paragraph, ``Args:`` descriptions and ``Returns:`` text of a Google docstring."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in doc.splitlines():
        head, colon, rest = line.partition(":")
        if colon and head in _SECTIONS and not rest.strip():
            current = head
            sections[current] = []
        else:
            sections.setdefault(current, []).append(line)
    # Every paragraph before the first section: RAIDER's descriptions carry examples there.
    summary = " ".join(" ".join(sections[""]).split())
    args: dict[str, str] = {}
    name = None
    for line in sections.get("Args", []) + sections.get("Arguments", []):
        m = _arg_line(line)
        if m and (name is None or len(line) - len(line.lstrip()) <= 4):
            name = m[0]
            args[name] = m[1].strip()
        elif name and line.strip():
            args[name] = f"{args[name]} {line.strip()}"
    returns = " ".join(" ".join(sections.get("Returns", [])).split())
    return summary, args, returns


_SECTIONS = frozenset(("Args", "Arguments", "Returns", "Raises", "Example", "Examples", "Note"))


def _arg_line(line: str) -> tuple[str, str] | None:
    """``(name, text)`` of an ``Args:`` entry ``name: text`` or ``name (type): text``, indented
    at most 8 (the regex ``\\s{0,8}(\\w+)(?:\\s*\\([^)]*\\))?:\\s*(.*)``, with str methods)."""
    body = line.lstrip()
    if len(line) - len(body) > 8:
        return None
    end = 0
    while end < len(body) and (body[end].isalnum() or body[end] == "_"):
        end += 1
    if not end:
        return None
    rest = body[end:]
    typed = rest.lstrip()
    if typed[:1] == "(":
        close = typed.find(")")
        if close > 0 and typed[close + 1 : close + 2] == ":":
            return body[:end], typed[close + 2 :]
    return (body[:end], rest[1:]) if rest[:1] == ":" else None


# ---------------------------------------------------------------------- tool sets
class _Pending:
    """A function registered as a tool, made into its :class:`Tool` when first used.

    Making a Tool reads the function's type hints and docstring: at every start of
    ``bt-raider check`` that was most of building the default tools, of which a check calls a
    few. What makes a function no tool (its name, no scene parameter, ``*args``) is refused when
    it is registered, as before.
    """

    __slots__ = ("func", "name", "description", "tool")

    def __init__(self, func: Callable[..., Any], name: str, description: str | None) -> None:
        self.func = func
        self.name = name
        self.description = description
        self.tool: Tool | None = None

    def made(self) -> Tool:
        tool = self.tool
        if tool is None:  # two threads may both make it: the same Tool either way
            tool = Tool.from_function(self.func, name=self.name, description=self.description)
            self.tool = tool
        return tool


def _made(entry: Tool | _Pending) -> Tool:
    return entry.made() if isinstance(entry, _Pending) else entry


class ToolSet:
    """An ordered set of tools, looked up by name.

    Args:
        tools: tools or plain functions (registered with :meth:`register`).
    """

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool | _Pending] = {}
        for t in tools:
            self.register(t)

    def register(
        self,
        func: Tool | Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> Any:
        """Add a tool; usable as ``@tools.register``, ``@tools.register(name=...)`` or a call.

        The function's first parameter is the scene (hidden from the model); its docstring's
        summary and ``Returns:`` text are what the model reads. A tool with the same name as an
        existing one replaces it (so a team can swap in its own perception).

        Returns:
            The function (so the decorator leaves it usable), or the Tool when given a Tool.
        """
        if func is None:
            return lambda f: self.register(f, name=name, description=description)
        tool: Tool | _Pending
        if isinstance(func, Tool):
            tool = func
            if name or description:
                tool = Tool(
                    name or tool.name,
                    tool.func,
                    description or tool.description,
                    tool.params,
                    tool.returns,
                )
        elif callable(func):
            tool = _Pending(func, _tool_parameters(func, name)[0], description)
        else:
            raise ToolError(f"register() needs a function or a Tool, got {func!r}")
        self._tools[tool.name] = tool
        return func

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter([_made(t) for t in self._tools.values()])

    def __len__(self) -> int:
        return len(self._tools)

    def __or__(self, other: ToolSet) -> ToolSet:
        """The union; on a name clash the right-hand tool wins."""
        if not isinstance(other, ToolSet):
            return NotImplemented
        return self._of({**self._tools, **other._tools})  # tools not made yet stay so

    def __repr__(self) -> str:
        return f"ToolSet({', '.join(self._tools)})"

    @classmethod
    def _of(cls, entries: dict[str, Tool | _Pending]) -> ToolSet:
        tools = cls()
        tools._tools = entries
        return tools

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool:
        """The tool called ``name``.

        Raises:
            UnknownToolError: naming the valid tools (and the closest one).
        """
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is not None:
            return _made(tool)
        if isinstance(name, str):
            key = re.sub(r"[\s\-]+", "_", name.strip()).lower()
            matches = [t for n, t in self._tools.items() if n.lower() == key]
            if len(matches) == 1:
                return _made(matches[0])
        hint = ""
        if isinstance(name, str) and self._tools:
            # rapidfuzz only for a near miss, off the common path of every check.
            from rapidfuzz import process

            best = process.extractOne(name, list(self._tools), score_cutoff=60)
            if best is not None:
                hint = f" (did you mean {best[0]!r}?)"
        raise UnknownToolError(
            f"unknown tool {name!r}{hint}: valid tools are {', '.join(self._tools) or 'none'}"
        )

    def select(self, *names: str) -> ToolSet:
        """A tool set with only the named tools, in the given order."""
        return ToolSet([self.get(n) for n in names])

    def without(self, *names: str) -> ToolSet:
        """A tool set without the named tools (for ablations)."""
        for n in names:
            self.get(n)  # unknown names are an error, not a silent no-op
        return self._of({n: t for n, t in self._tools.items() if n not in names})

    def call(self, scene: Scene, name: str, args: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """Call a tool by name.

        Raises:
            UnknownToolError: for a name not in the set.
            ToolError: for bad arguments or a failure inside the tool.
        """
        return self.get(name).call(scene, args)

    def describe(self) -> str:
        """One ``- name(arg1, arg2): description Returns: ...`` line per tool, for prompts."""
        lines = []
        for t in self:
            text = f"- {t.signature()}: {t.description}"
            if t.returns:
                text += f" Returns: {t.returns}"
            lines.append(text)
        return "\n".join(lines)

    def openai_tools(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function-calling schemas (``tools=`` of chat completions)."""
        out = []
        for t in self:
            props: dict[str, dict[str, Any]] = {
                p.name: {
                    "type": _JSON_TYPES.get(p.type, "string"),
                    "description": p.description or p.name.replace("_", " "),
                }
                for p in t.params
            }
            for p in t.params:
                if p.choices:
                    props[p.name]["enum"] = list(p.choices)
            desc = t.description + (f" Returns: {t.returns}" if t.returns else "")
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": desc,
                        "parameters": {
                            "type": "object",
                            "properties": props,
                            "required": [p.name for p in t.params if p.required],
                            "additionalProperties": False,
                        },
                    },
                }
            )
        return out
