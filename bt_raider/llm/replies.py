"""Reading what a model replied: the one home for model-reply parsing.

Every parser here reads text a model wrote and either returns data or raises ``ValueError`` with a
reason short enough to feed back to the model (smolagents style). Nothing here executes the text:
JSON is read by :mod:`json`, code is only re-laid-out for :mod:`bt_raider.recovery`'s ``ast``
parser.

- :func:`parse_json_reply`: the JSON object in a reply (REVECA's relevance, planning and
  trajectory answers);
- :func:`json_in_reply`: the JSON object or array spanning a reply (CDR memory's LLM extractor);
- :func:`clean_code`: the recovery code in a reply (RAIDER's recovery planner);
- :func:`parse_tool_calls`, :func:`find_final`, :func:`loads_lenient`: the RAIDER agent's text
  protocol (``call_tool{...}`` and the final ``{"final_response": ...}``), JSON as models write it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in a model's reply (a code fence or text around it is tolerated).

    Raises:
        ValueError: no JSON object can be read; the message is fed back to the model.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the reply was empty")
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    candidates = [fenced.group(1)] if fenced else []
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for c in candidates:
        try:
            value = json.loads(c)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError(f"the reply holds no JSON object: {text.strip()[:120]!r}")


def json_in_reply(text: str) -> Any:
    """The JSON value from the first ``{``/``[`` to the last ``}``/``]`` of a reply.

    Raises:
        ValueError: there is none, or it is not valid JSON (the message names the position).
    """
    match = re.search(r"\{.*\}|\[.*\]", text, re.S)
    if match is None:
        raise ValueError("no JSON object found in the reply")
    try:
        return json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg} at position {exc.pos})") from exc


_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\s*\n(.*?)```", re.DOTALL)
_LABEL = re.compile(r"^\s*(?:corrective actions|recovery plan|plan|code)\s*:\s*", re.IGNORECASE)


def clean_code(text: str) -> str:
    """Model output -> code: the first fenced block if any, no label, no indentation.

    Only layout is changed; what is left is still parsed strictly by
    :func:`~bt_raider.recovery.safecode.parse_recovery`.
    """
    if not isinstance(text, str):
        return text
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    lines = [line.strip() for line in text.strip().splitlines()]
    if lines:
        lines[0] = _LABEL.sub("", lines[0])
    return "\n".join(line for line in lines if line)


_CALL_RE = re.compile(r"call_tool\s*:?\s*\(?\s*(?=\{)")


#: ``final_response`` used as a key (``"final_response": ...``), not merely mentioned in prose.
_FINAL_RE = re.compile(r"final_response[\"']?\s*:")


def _match_brace(text: str, start: int) -> int | None:
    """Index just past the ``}`` closing the ``{`` at ``start``; None when unbalanced.

    Double-quoted strings are skipped; a closer that does not match its opener ends the search.
    """
    pairs = {"}": "{", "]": "["}
    stack: list[str] = []
    in_str = False
    i = start
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


#: Bare words that are JSON or Python literals ("none" stays a word: it is a final_response).
_BARE = {
    "true": "true",
    "false": "false",
    "null": "null",
    "True": "true",
    "False": "false",
    "None": "null",
}


def _relax(text: str) -> str:
    """Rewrite near-JSON into JSON: single-quoted strings, bare words, Python literals."""
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    text = text.replace("\u2018", "'").replace("\u2019", "'")
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif c == "'":
            j = i + 1
            buf = []
            while j < n and text[j] != "'":
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                buf.append(text[j])
                j += 1
            out.append(json.dumps("".join(buf)))
            i = j + 1
        elif c in "{}[],:" or c.isspace():
            out.append(c)
            i += 1
        else:
            j = i
            while j < n and text[j] not in "{}[],:\"'\n":
                j += 1
            token = text[i:j].strip()
            tail = text[i:j][len(text[i:j].rstrip()) :]
            try:
                json.loads(token)
                is_number = not token.isalpha()
            except json.JSONDecodeError:
                is_number = False
            if is_number:
                out.append(token)
            elif token in _BARE:
                out.append(_BARE[token])
            else:
                out.append(json.dumps(token))
            out.append(tail)
            i = j
    return re.sub(r",\s*([}\]])", r"\1", "".join(out))


def loads_lenient(text: str) -> Any:
    """Parse JSON as models write it: strict first, then relaxed (never ``eval``).

    Raises:
        ValueError: the text cannot be read even leniently.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return json.loads(_relax(text))
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg}): {text[:120]!r}") from None


@dataclass
class TextCall:
    """A ``call_tool{...}`` found in a reply; ``error`` says why it could not be read."""

    name: str
    args: Any
    raw: str
    error: str | None = None


def _unescape(text: str) -> str:
    # Markdown-trained models escape underscores: call\_tool, robot\_holding.
    return text.replace("\\_", "_")


def parse_tool_calls(text: str) -> tuple[list[TextCall], list[tuple[int, int]]]:
    """Find the paper's text tool calls ``call_tool{"tool": ..., "args": [...]}`` in ``text``.

    Returns:
        The calls in order of appearance, and the ``(start, end)`` spans they occupy in the
        (underscore-unescaped) text.
    """
    text = _unescape(text)
    calls: list[TextCall] = []
    spans: list[tuple[int, int]] = []
    for m in _CALL_RE.finditer(text):
        start = m.end()
        end = _match_brace(text, start)
        if end is None:
            eol = text.find("\n", start)
            eol = len(text) if eol < 0 else eol
            raw = text[m.start() : eol]
            calls.append(TextCall("", None, raw, "its braces or brackets do not match"))
            spans.append((m.start(), eol))
            continue
        raw = text[start:end]
        spans.append((m.start(), end))
        try:
            obj = loads_lenient(raw)
        except ValueError as exc:
            calls.append(TextCall("", None, raw, str(exc)))
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("tool"), str) or not obj["tool"]:
            calls.append(TextCall("", None, raw, 'it has no "tool" name'))
            continue
        calls.append(TextCall(obj["tool"].strip(), obj.get("args", []), raw))
    return calls, spans


def find_final(
    text: str, skip: Sequence[tuple[int, int]] = ()
) -> tuple[dict[str, Any] | None, bool]:
    """The last JSON object with a ``final_response`` key in ``text``, outside ``skip`` spans.

    Returns:
        ``(answer, attempted)``: the object (None when none could be read) and whether a
        ``final_response`` key appears outside the spans (an attempted final response).
    """
    text = _unescape(text)

    def outside(i: int) -> bool:
        return not any(a <= i < b for a, b in skip)

    mentioned = any(outside(m.start()) for m in _FINAL_RE.finditer(text))
    if not mentioned:
        return None, False
    found: dict[str, Any] | None = None
    for i, c in enumerate(text):
        if c != "{" or not outside(i):
            continue
        end = _match_brace(text, i)
        if end is None or "final_response" not in text[i:end]:
            continue
        try:
            obj = loads_lenient(text[i:end])
        except ValueError:
            continue
        if isinstance(obj, dict) and "final_response" in obj:
            found = obj
    return found, True
