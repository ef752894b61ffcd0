"""PDDL as nested lists: read and write PDDL text, and pick a ``(define ...)`` apart.

:func:`read_sexp` turns PDDL text into nested lists of lower-cased names (comments dropped);
:func:`write_sexp` writes them back. The helpers read what a domain or problem declares: a
typed list (``a b - t c``), a ``(define ...)`` and its sections, the positive atoms of a
conjunction, a file or the text itself. :class:`~bt_raider.planners.replan.ObservedState`
reads its domain and problem with them, without unified-planning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bt_raider import files
from bt_raider.errors import InputFileError, PddlFileError, PlanningError
from bt_raider.files import MAX_PDDL_BYTES

_TOKEN = re.compile(r";[^\n]*|[()]|[^\s()]+")
SExp = list[Any]


def read_sexp(text: str, what: str = "PDDL") -> SExp:
    """The nested lists of a PDDL text (names lower-cased, comments dropped).

    Raises:
        PlanningError: unbalanced parentheses.
    """
    stack: list[SExp] = [[]]
    for token in _TOKEN.findall(text):
        if token.startswith(";"):
            continue
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise PlanningError(f"cannot read the {what}: a ')' closes nothing")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token.lower())
    if len(stack) != 1:
        raise PlanningError(f"cannot read the {what}: {len(stack) - 1} '(' left open")
    return stack[0]


def write_sexp(node: Any) -> str:
    """PDDL text of a nested list (the inverse of :func:`read_sexp`)."""
    if isinstance(node, list):
        return "(" + " ".join(write_sexp(n) for n in node) + ")"
    return str(node)


def _typed(items: Sequence[Any]) -> list[tuple[str, str]]:
    """``a b - t c`` -> ``[(a, t), (b, t), (c, object)]``."""
    out: list[tuple[str, str]] = []
    pending: list[str] = []
    it = iter(items)
    for item in it:
        if item == "-":
            kind = next(it, "object")
            out.extend((name, str(kind)) for name in pending)
            pending = []
        else:
            pending.append(str(item))
    out.extend((name, "object") for name in pending)
    return out


def _define(text: str, kind: str) -> SExp:
    for node in read_sexp(text, kind):
        if isinstance(node, list) and node[:1] == ["define"]:
            return node
    raise PlanningError(f"no (define ...) in the {kind} text {text[:60]!r}")


def _section(define: SExp, key: str) -> SExp | None:
    return next((n for n in define if isinstance(n, list) and n[:1] == [key]), None)


def _atoms(node: Any) -> list[SExp] | None:
    """The positive atoms of a conjunction; None when it is not one (or, forall, ...)."""
    if not isinstance(node, list) or not node:
        return []
    if node[0] == "and":
        out: list[SExp] = []
        for part in node[1:]:
            atoms = _atoms(part)
            if atoms is None:
                return None
            out.extend(atoms)
        return out
    if node[0] in ("not", "="):
        return []  # a delete relaxation ignores them
    if node[0] in ("or", "imply", "forall", "exists", "when", "increase", "decrease"):
        return None
    return [node]


def read_pddl(path: str | Path, what: str, max_bytes: int = MAX_PDDL_BYTES) -> str:
    """The text of a PDDL file, read as every file is (:mod:`bt_raider.files`).

    Args:
        path: the file.
        what: what it is, e.g. ``"domain"``, ``"problem"`` or ``"plan"``.
        max_bytes: the largest file read (``bt-raider plan --max-bytes`` raises it).

    Raises:
        PddlFileError: missing, not a regular file (a FIFO, a device or a directory is refused
            before it is opened), over ``max_bytes``, or not UTF-8; one line naming the file.
    """
    try:
        return files.read_text(
            path, what=f"PDDL {what}", max_bytes=max_bytes, fix="--max-bytes, or max_bytes=..."
        )
    except InputFileError as exc:
        error = PddlFileError(str(exc))
        error.path, error.what = exc.path, exc.what
        raise error from None


def _text(source: str | Path, what: str) -> str:
    if isinstance(source, Path) or "(" not in str(source):
        return read_pddl(source, what)
    return str(source)
