"""A GBNF reader for tests: turns a non-recursive GBNF grammar into a Python regular expression.

Only for checking in tests that what a grammar admits is what our parsers read; llama.cpp is the
real decoder. Supports literals, character classes, rule references, groups, ``|`` and the
quantifiers ``* + ? {m} {m,n}``.
"""

from __future__ import annotations

import json
import re

_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:[^"\\]|\\.)*")|(?P<cls>\[(?:[^\]\\]|\\.)*\])|(?P<name>[a-zA-Z][a-zA-Z0-9-]*)'
    r"|(?P<op>[()|*+?])|(?P<rep>\{\d+(?:,\d*)?\}))"
)


def _rules(text: str) -> dict[str, str]:
    rules: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip():
            name, _, body = line.partition("::=")
            rules[name.strip()] = body.strip()
    return rules


def to_regex(text: str, start: str = "root") -> str:
    """The regular expression equivalent to ``text``'s rule ``start`` (non-recursive grammars)."""
    rules = _rules(text)
    cache: dict[str, str] = {}

    def expand(name: str, depth: int = 0) -> str:
        if depth > 50:
            raise ValueError(f"rule {name!r} is recursive")
        if name not in cache:
            body, out, pos = rules[name], [], 0
            while pos < len(body):
                m = _TOKEN.match(body, pos)
                if m is None or m.end() == pos:
                    if body[pos:].strip() == "":
                        break
                    raise ValueError(f"cannot read rule {name!r} at {body[pos:]!r}")
                pos = m.end()
                if m["lit"]:
                    out.append(re.escape(json.loads(m["lit"])))
                elif m["cls"]:
                    out.append(m["cls"])
                elif m["name"]:
                    out.append("(?:" + expand(m["name"], depth + 1) + ")")
                elif m["op"] == "(":
                    out.append("(?:")
                else:
                    out.append(m["op"] or m["rep"])
            cache[name] = "".join(out)
        return cache[name]

    return expand(start)


def admits(grammar: str, text: str) -> bool:
    """Whether ``grammar`` admits exactly ``text``."""
    return re.fullmatch(to_regex(grammar), text, flags=re.DOTALL) is not None
