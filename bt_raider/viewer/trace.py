"""The trace format: its JSON Schema, a validator for it, and loading a trace file.

``trace.schema.json`` (shipped next to this module) documents every field. :func:`validate`
checks data against it with a small validator for the subset of JSON Schema the file uses
(``type``, ``const``, ``enum``, ``required``, ``properties``, ``patternProperties``,
``additionalProperties``, ``items``, ``minimum``, ``pattern``, ``$ref`` into ``$defs``), so
loading a trace needs no third-party package; :func:`check_trace` adds what a schema cannot
say (ticks in order, nodes known before they are used).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from bt_raider.errors import BtRaiderError

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


def validate(data: Any, root: dict[str, Any] | None = None, limit: int = 20) -> list[str]:
    """The ways ``data`` breaks the schema (``root``: the trace schema), as ``path: reason``.

    Returns at most ``limit`` errors; an empty list means valid.
    """
    root = schema() if root is None else root
    errors: list[str] = []

    def check(value: Any, rule: dict[str, Any], path: str) -> None:
        if len(errors) >= limit:
            return
        if "$ref" in rule:
            ref = rule["$ref"]
            if not ref.startswith("#/$defs/"):
                raise ValueError(f"unsupported $ref {ref!r}: only '#/$defs/<name>'")
            check(value, root["$defs"][ref.removeprefix("#/$defs/")], path)
        kinds = rule.get("type")
        if kinds is not None:
            kinds = [kinds] if isinstance(kinds, str) else kinds
            if not any(_TYPES[k](value) for k in kinds):
                errors.append(f"{path}: expected {' or '.join(kinds)}, got {_kind(value)}")
                return
        if "const" in rule and not _same(value, rule["const"]):
            errors.append(f"{path}: expected {rule['const']!r}, got {value!r}")
        if "enum" in rule and not any(_same(value, v) for v in rule["enum"]):
            options = ", ".join(repr(v) for v in rule["enum"])
            errors.append(f"{path}: {value!r} is not one of {options}")
        if "minimum" in rule and _TYPES["number"](value) and value < rule["minimum"]:
            errors.append(f"{path}: {value!r} is below the minimum {rule['minimum']}")
        if "pattern" in rule and isinstance(value, str) and not re.search(rule["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {rule['pattern']!r}")
        if isinstance(value, dict):
            for key in rule.get("required", ()):
                if key not in value:
                    errors.append(f"{path}: missing required field {key!r}")
            props = rule.get("properties", {})
            patterns = rule.get("patternProperties", {})
            extra = rule.get("additionalProperties", True)
            for key, item in value.items():
                matched = False
                if key in props:
                    matched = True
                    check(item, props[key], f"{path}.{key}")
                for pattern, sub in patterns.items():
                    if re.search(pattern, key):
                        matched = True
                        check(item, sub, f"{path}.{key}")
                if not matched:
                    if extra is False:
                        errors.append(f"{path}: unexpected field {key!r}")
                    elif isinstance(extra, dict):
                        check(item, extra, f"{path}.{key}")
        if isinstance(value, list) and "items" in rule:
            for i, item in enumerate(value):
                check(item, rule["items"], f"{path}[{i}]")

    check(data, root, "$")
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
            for key in entry.get(field, {}):
                if int(key) not in alive:
                    errors.append(f"{where}.{field}: node {key} is not in the tree")
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


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read and check a trace file.

    Raises:
        TraceError: the file is missing, not JSON, or not a trace (the first errors named).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"cannot read trace {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"trace {str(path)!r} is not JSON: {exc}") from exc
    errors = check_trace(data)
    if errors:
        shown = "; ".join(errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        raise TraceError(
            f"{str(path)!r} is not a bt_raider trace (format {FORMAT!r}, version {VERSION}, "
            f"schema bt_raider/viewer/trace.schema.json): {shown}{more}"
        )
    return data
