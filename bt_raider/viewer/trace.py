"""The trace format: its JSON Schema, a validator for it, and loading a trace file.

``trace.schema.json`` (shipped next to this module) documents every field. :func:`validate`
checks data against it with a small validator for the subset of JSON Schema the file uses
(``type``, ``const``, ``enum``, ``required``, ``properties``, ``patternProperties``,
``additionalProperties``, ``items``, ``minimum``, ``pattern``, ``$ref`` into ``$defs``), so
loading a trace needs no third-party package; :func:`check_trace` adds what a schema cannot
say (ticks in order, nodes known before they are used).

:func:`load_trace` reads the file through :mod:`bt_raider.files` (a regular file of at most
:data:`~bt_raider.files.MAX_TRACE_BYTES`, UTF-8, nesting, integer size and duplicate keys
bounded, finite numbers only) before it checks the document: a page can parse every trace the
viewer serves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from bt_raider import files
from bt_raider.errors import BtRaiderError, InputFileError

#: The ``format`` field of every trace.
FORMAT = "bt_raider.trace"
#: The version of the format this code writes and reads.
VERSION = 1
#: Top-level keys the format owns (a scenario's extra keys must use other names).
RESERVED_KEYS = frozenset(
    {"format", "version", "title", "started", "tick_count", "finished", "ticks"}
)
SCHEMA_PATH = Path(__file__).resolve().with_name("trace.schema.json")


class TraceError(BtRaiderError, ValueError):
    """A trace file is unreadable or not in the trace format (names the file and the field)."""


class TraceFileError(InputFileError, TraceError):
    """A trace file cannot be read: an :class:`~bt_raider.errors.InputFileError` (not a regular
    file, too big, not UTF-8, nested too deeply, a number that is not finite) that is also a
    :class:`TraceError`."""


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The trace's JSON Schema (``trace.schema.json``)."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


#: A place in the document, built only when an error names it: (parent place, key) or "$".
_Place = Any


def _render(place: _Place) -> str:
    keys: list[Any] = []
    while place != "$":
        place, key = place
        keys.append(key)
    return "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in reversed(keys))


@lru_cache(maxsize=64)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


#: A compiled rule: checks a value at a place, reporting through ``fail``.
_Check = Callable[[Any, _Place, Callable[[_Place, str], None]], None]


class _Compiler:
    """The schema's rules turned into closures once: a 100 MB trace is millions of values, and
    looking each keyword up in the rule for each value cost most of the time."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.done: dict[int, _Check] = {}

    def rule(self, rule: dict[str, Any]) -> _Check:
        key = id(rule)
        if key not in self.done:
            # A $ref may lead back here while it is built: that one looks it up when it runs.
            self.done[key] = lambda value, place, fail: self.done[key](value, place, fail)
            self.done[key] = self._build(rule)
        return self.done[key]

    def _build(self, rule: dict[str, Any]) -> _Check:  # noqa: C901 - one branch per keyword
        steps: list[_Check] = []
        if "$ref" in rule:
            ref = rule["$ref"]
            if not ref.startswith("#/$defs/"):
                raise ValueError(f"unsupported $ref {ref!r}: only '#/$defs/<name>'")
            target = self.rule(self.root["$defs"][ref.removeprefix("#/$defs/")])
            if set(rule) <= {"$ref", "description"}:
                return target
            steps.append(target)
        kinds = rule.get("type")
        tests = [_TYPES[k] for k in ([kinds] if isinstance(kinds, str) else kinds or [])]
        expected = " or ".join([kinds] if isinstance(kinds, str) else kinds or [])
        if "const" in rule:
            const = rule["const"]

            def check_const(v: Any, p: _Place, f: Callable[[_Place, str], None]) -> None:
                if not _same(v, const):
                    f(p, f"expected {const!r}, got {v!r}")

            steps.append(check_const)
        if "enum" in rule:
            options = rule["enum"]
            text = ", ".join(repr(o) for o in options)
            strings = frozenset(o for o in options if isinstance(o, str))
            only_strings = len(strings) == len(options)

            def check_enum(v: Any, p: _Place, f: Callable[[_Place, str], None]) -> None:
                if only_strings and isinstance(v, str):
                    if v not in strings:
                        f(p, f"{v!r} is not one of {text}")
                elif not any(_same(v, o) for o in options):
                    f(p, f"{v!r} is not one of {text}")

            steps.append(check_enum)
        if "minimum" in rule:
            low = rule["minimum"]

            def check_minimum(v: Any, p: _Place, f: Callable[[_Place, str], None]) -> None:
                if _TYPES["number"](v) and v < low:
                    f(p, f"{v!r} is below the minimum {low}")

            steps.append(check_minimum)
        if "pattern" in rule:
            pattern, source = _pattern(rule["pattern"]), rule["pattern"]

            def check_pattern(v: Any, p: _Place, f: Callable[[_Place, str], None]) -> None:
                if isinstance(v, str) and not pattern.search(v):
                    f(p, f"{v!r} does not match {source!r}")

            steps.append(check_pattern)
        required = tuple(rule.get("required", ()))
        props = {k: self.rule(sub) for k, sub in rule.get("properties", {}).items()}
        patterns = [
            (_pattern(k), self.rule(sub)) for k, sub in rule.get("patternProperties", {}).items()
        ]
        extra = rule.get("additionalProperties", True)
        extra_check = self.rule(extra) if isinstance(extra, dict) else None
        if required or props or patterns or extra is not True:

            def check_object(v: Any, p: _Place, f: Callable[[_Place, str], None]) -> None:
                if not isinstance(v, dict):
                    return
                for key in required:
                    if key not in v:
                        f(p, f"missing required field {key!r}")
                for key, item in v.items():
                    matched = False
                    sub = props.get(key)
                    if sub is not None:
                        matched = True
                        sub(item, (p, key), f)
                    for pattern, sub in patterns:
                        if pattern.search(key):
                            matched = True
                            sub(item, (p, key), f)
                    if not matched:
                        if extra is False:
                            f(p, f"unexpected field {key!r}")
                        elif extra_check is not None:
                            extra_check(item, (p, key), f)

            steps.append(check_object)
        if "items" in rule:
            items = self.rule(rule["items"])

            def check_items(v: Any, p: _Place, f: Callable[[_Place, str], None]) -> None:
                if isinstance(v, list):
                    for i, item in enumerate(v):
                        items(item, (p, i), f)

            steps.append(check_items)

        def check(v: Any, p: _Place, f: Callable[[_Place, str], None]) -> None:
            if tests and not any(test(v) for test in tests):
                f(p, f"expected {expected}, got {_kind(v)}")
                return
            for step in steps:
                step(v, p, f)

        return check


class _Enough(Exception):
    """Stops a validation that has found ``limit`` errors."""


def validate(data: Any, root: dict[str, Any] | None = None, limit: int = 20) -> list[str]:
    """The ways ``data`` breaks the schema (``root``: the trace schema), as ``path: reason``.

    Returns at most ``limit`` errors; an empty list means valid. The schema is compiled to
    closures once per call, and a value's path is put into words only when an error names it.
    """
    root = schema() if root is None else root
    errors: list[str] = []

    def fail(place: _Place, reason: str) -> None:
        errors.append(f"{_render(place)}: {reason}")
        if len(errors) >= limit:
            raise _Enough

    try:
        _Compiler(root).rule(root)(data, "$", fail)
    except _Enough:
        pass
    return errors[:limit]


def _kind(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__


def check_trace(data: Any) -> list[str]:
    """Schema errors, then what the schema cannot say: ticks in order, nodes used once known."""
    errors = validate(data)
    if errors:
        return errors
    known: set[int] = set()
    alive: set[int] = set()
    last = -1
    for i, entry in enumerate(data["ticks"]):
        where = f"$.ticks[{i}]"
        if entry["tick"] <= last:
            errors.append(f"{where}.tick: {entry['tick']} does not follow tick {last}")
        last = entry["tick"]
        for node in entry.get("add", []):
            nid = node["id"]
            if nid in known:
                errors.append(f"{where}.add: node id {nid} is added twice")
            if node["parent"] is not None and node["parent"] not in alive:
                errors.append(f"{where}.add: node {nid}'s parent {node['parent']} is unknown")
            known.add(nid)
            alive.add(nid)
        for field in ("status", "feedback", "guards"):
            ids, bad = _node_keys(entry, field, where)
            errors += bad
            for nid in ids:
                if nid not in alive:
                    errors.append(f"{where}.{field}: node {nid} is not in the tree")
        for nid in entry.get("remove", []):
            if nid not in alive:
                errors.append(f"{where}.remove: node {nid} is not in the tree")
            alive.discard(nid)
        if len(errors) >= 20:
            break
    if data["tick_count"] < last:
        errors.append(f"$.tick_count: {data['tick_count']} is below the last tick {last}")
    if data["ticks"] and data["ticks"][0]["tick"] != 0:
        errors.append("$.ticks[0].tick: the first entry is tick 0 (the tree before it ran)")
    return errors[:20]


def _node_keys(entry: dict[str, Any], field: str, where: str) -> tuple[list[int], list[str]]:
    """The node ids of a tick's ``field`` mapping, and errors for keys that are no node id.

    The schema's pattern lets ``"12\n"`` (Python's ``$``) and digit strings longer than any id
    through; neither may reach ``int`` (over 4,300 digits it raises).
    """
    ids: list[int] = []
    errors: list[str] = []
    for key in entry.get(field, {}):
        if not (key.isascii() and key.isdigit() and len(key) <= _MAX_ID_DIGITS):
            errors.append(f"{where}.{field}: {key[:30]!r} is not a node id")
        else:
            ids.append(int(key))
    return ids, errors


#: Most digits of a node id (ids count the nodes of one run).
_MAX_ID_DIGITS = 18


def finite_errors(data: Any, limit: int = 20) -> list[str]:
    """Where ``data`` holds a number that is not finite, or a value JSON cannot hold.

    Walks without recursion (a deep document cannot overflow the stack); a trace built in
    Python (``ViewerServer(dict)``) gets the check a trace read from a file has had.
    """
    errors: list[str] = []
    stack: list[tuple[Any, str]] = [(data, "$")]
    while stack and len(errors) < limit:
        value, path = stack.pop()
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                errors.append(f"{path}: {value!r} is not a finite number")
        elif isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    errors.append(f"{path}: the key {key!r} is not a string")
                stack.append((item, f"{path}.{key}"))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
        elif not (value is None or isinstance(value, (str, int, bool))):
            errors.append(f"{path}: a {type(value).__name__} is not JSON")
    return errors


def trace_problems(data: Any) -> list[str]:
    """Everything wrong with trace ``data`` built in Python: non-finite numbers, then
    :func:`check_trace`'s schema and order errors (an empty list: a trace to serve)."""
    return finite_errors(data) or check_trace(data)


def refuse(source: str, errors: list[str]) -> TraceError:
    """The one-line error for a document that is not a trace, naming its first errors."""
    shown = "; ".join(errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return TraceError(
        f"{source} is not a bt_raider trace (format {FORMAT!r}, version {VERSION}, "
        f"schema bt_raider/viewer/trace.schema.json): {shown}{more}"
    )


def load_trace(path: str | Path, *, max_bytes: int = files.MAX_TRACE_BYTES) -> dict[str, Any]:
    """Read and check a trace file.

    Args:
        path: the trace file.
        max_bytes: the largest file read (default :data:`~bt_raider.files.MAX_TRACE_BYTES`;
            ``bt-raider view --max-bytes`` raises it).

    Raises:
        TraceFileError: the file cannot be read: missing, not a regular file (a FIFO, a
            device, a directory), over ``max_bytes``, not UTF-8, not JSON, nested too
            deeply, an integer of too many digits, ``NaN`` or ``Infinity``, a key twice.
        TraceError: the document is not a trace (the first errors named).
    """
    try:
        data = files.read_json(
            path,
            what="trace",
            max_bytes=max_bytes,
            fix="--max-bytes, or load_trace(path, max_bytes=...)",
        )
    except InputFileError as exc:
        error = TraceFileError(str(exc))
        error.path, error.what = exc.path, exc.what
        raise error from None
    errors = check_trace(data)
    if errors:
        raise refuse(repr(str(path)), errors)
    return data
