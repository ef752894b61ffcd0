"""Reading what a model replied: the one home for model-reply parsing.

Every parser here reads text a model wrote and either returns data or raises ``ValueError`` with a
reason short enough to feed back to the model (smolagents style). Nothing here executes the text:
JSON is read by :mod:`json`, code is only re-laid-out for :mod:`bt_raider.recovery`'s ``ast``
parser.

- :func:`parse_json_reply`: the JSON object in a reply (REVECA's relevance, planning and
  trajectory answers);
- :func:`json_in_reply`: the JSON object or array spanning a reply (CDR memory's LLM extractor);
- :func:`clean_code`: the recovery code in a reply (RAIDER's recovery planner).
"""

from __future__ import annotations

import json
import re
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
