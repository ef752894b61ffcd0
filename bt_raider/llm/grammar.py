"""GBNF grammars for constrained decoding, generated from the definitions the parsers use.

A local model (see :mod:`bt_raider.llm.local`) can be made to write only text the agent's and
the recovery planner's parsers read: the paper's text tool calls with the registry's tool names
and the scene's names as arguments, the final JSON verdict with the contract's categories, and
recovery code with the whitelisted calls and the user's action names. The grammars come from
the same inputs the parsers check against (the tool set's OpenAI schemas, the categories, the
recovery vocabulary), so they cannot drift apart.

Constraint is not trust: everything a constrained model writes is still read and checked by the
program flow manager and the recovery verifier as if it were free text.

The grammar language is llama.cpp's GBNF: ``rule ::= "literal" | other-rule | [chars]*``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bt_raider.errors import UsageError

#: Longest free text a constrained reply may hold in one string (explanations, questions).
MAX_TEXT = 240
#: At most this many names in one grounding list or tool-call batch.
MAX_ITEMS = 6


@dataclass(frozen=True)
class Grammar:
    """A GBNF grammar and what it is for.

    Attributes:
        text: the grammar in llama.cpp's GBNF, with a ``root`` rule.
        purpose: what the reply is (``"raider-turn"``, ``"recovery-code"``), for messages.
    """

    text: str
    purpose: str

    def __str__(self) -> str:
        return self.text


def literal(text: str) -> str:
    """``text`` as a GBNF string literal (JSON escaping is a subset GBNF reads)."""
    return json.dumps(text, ensure_ascii=False)


def quoted_json(text: str) -> str:
    """A GBNF literal for ``text`` written as a JSON string (with its own quotes)."""
    return literal(json.dumps(text, ensure_ascii=False))


def _alternatives(items: Iterable[str]) -> str:
    out = sorted(set(items))
    if not out:
        raise UsageError("a grammar choice needs at least one alternative, got none")
    return " | ".join(out)


def _free_text(name: str, limit: int = MAX_TEXT) -> str:
    # Characters a JSON string holds without escaping; no newline, no quote, no backslash.
    return f'{name} ::= [^"\\\\\\n\\x00-\\x1f]{{1,{limit}}}'


def _names_rule(names: Sequence[str]) -> str:
    if not names:
        raise UsageError("a grammar over scene names needs at least one name, got none")
    return "name ::= " + _alternatives(quoted_json(n) for n in names)


def _list_of(item: str) -> str:
    return f'"[" ({item} (", " {item}){{0,{MAX_ITEMS - 1}}})? "]"'


def _arg_rule(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "(" + _alternatives(literal(json.dumps(v)) for v in schema["enum"]) + ")"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return '("true" | "false")'
    if kind == "array":
        return _list_of("name")
    return "name"


def _rule_name(tool: str) -> str:
    return "call-" + re.sub(r"[^a-z0-9]+", "-", tool.lower()).strip("-")


def raider_turn(
    tools: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    categories: Mapping[str, str],
    *,
    questions: int = 3,
    final_only: bool = False,
) -> Grammar:
    """The grammar of one model turn of RAIDER's text protocol.

    A turn is either some tool calls (optionally after up to ``questions`` short question lines,
    the paper's ASK step) or one final JSON response; never both, so warning 1 (a made-up tool
    response) cannot be written, though the PFM still looks for it.

    Args:
        tools: the tool set's OpenAI function schemas (``ToolSet.openai_tools()``): tool names
            and their parameters' types, in order.
        names: the scene's names a tool or a grounding may take (objects, people, locations).
        categories: category -> the ``final_response`` it implies (e.g. ``{"not_present":
            "unfeasibility"}``); the pair is written together, so they cannot disagree.
        questions: how many question lines may precede the tool calls.
        final_only: admit only the final response (the agent's last allowed turn, so a small
            model that would call tools until the turn limit still gives a verdict, which the
            PFM then reads like any other).

    Raises:
        UsageError: no tools, no names or no categories.
    """
    if not tools:
        raise UsageError("raider_turn needs the tool set's schemas, got none")
    if not categories:
        raise UsageError("raider_turn needs the categories, got none")
    root = "final" if final_only else f"(question){{0,{questions}}} calls | final"
    rules = [
        f"root ::= {root}",
        'question ::= "Question: " qtext "?\\n"',
        _free_text("qtext", 120),
        f'calls ::= call ("\\n" call){{0,{MAX_ITEMS - 1}}}',
    ]
    call_rules = []
    for schema in tools:
        fn = schema.get("function", schema)
        tool = str(fn["name"])
        params = fn.get("parameters", {}) or {}
        props: Mapping[str, Any] = params.get("properties", {}) or {}
        required = set(params.get("required", props))
        # Optional parameters trail (a positional call may stop before them): each is optional
        # in the grammar, so a model is never made to pass a filter it did not mean.
        body = ""
        for i, p in enumerate(props):
            arg = _arg_rule(props[p])
            if i == 0:
                body = arg if p in required else f"({arg})?"
            elif p in required:
                body += f' ", " {arg}'
            else:
                body += f' (", " {arg})?'
        args = [body] if body else []
        head = literal('call_tool{"tool": ' + json.dumps(tool) + ', "args": [')
        call_rules.append(
            f"{_rule_name(tool)} ::= {head} {body} {literal(']}')}"
            if args
            else f"{_rule_name(tool)} ::= {head} {literal(']}')}"
        )
    rules.append(
        "call ::= " + _alternatives(_rule_name(str(t.get("function", t)["name"])) for t in tools)
    )
    rules.extend(call_rules)
    pairs = [
        quoted_json(response) + ' ", \\"category\\": " ' + quoted_json(category)
        for category, response in categories.items()
    ]
    rules += [
        'final ::= "{\\"final_response\\": " pair ", \\"explanation\\": \\"" explanation '
        '"\\", \\"grounding\\": {" (ground (", " ground){0,3})? "}}"',
        "pair ::= " + _alternatives(pairs),
        _free_text("explanation"),
        'ground ::= "\\"" argtext "\\": " ' + _list_of("name"),
        _free_text("argtext", 60),
        _names_rule(names),
        'number ::= "-"? [0-9]{1,6} ("." [0-9]{1,4})?',
    ]
    return Grammar("\n".join(rules) + "\n", "raider-turn")


def recovery_code(
    actions: Mapping[str, Sequence[int]],
    names: Sequence[str],
    *,
    lines: int = 6,
) -> Grammar:
    """The grammar of recovery code: a few lines of whitelisted calls, asks bound to variables.

    Every line is ``var = ask("question")``, ``say("text")``, ``wait_for("event")`` or an action
    of ``actions`` with its allowed number of arguments, each a scene name (quoted) or a variable
    bound by an earlier ask (any identifier here; the safe-code parser checks it is bound).

    Args:
        actions: action name -> allowed argument counts (the recovery vocabulary, with the
            user's action names).
        names: the scene's names an action may take.
        lines: the longest plan.

    Raises:
        UsageError: no actions or no names.
    """
    if not actions:
        raise UsageError("recovery_code needs the vocabulary's actions, got none")
    rules = [
        f'root ::= line ("\\n" line){{0,{lines - 1}}} "\\n"?',
        "line ::= asked | said | waited | act",
        'asked ::= var " = ask(\\"" text "\\")"',
        'said ::= "say(\\"" text "\\")"',
        'waited ::= "wait_for(\\"" text "\\")"',
        _free_text("text", 120),
        "var ::= [a-z] [a-z0-9_]{0,20}",
        "arg ::= name | var",
        _names_rule(names),
    ]
    acts = []
    for action, counts in sorted(actions.items()):
        if action in ("ask", "say", "wait_for"):
            continue
        shapes = []
        for n in sorted(set(counts)):
            args = ' ", " '.join(["arg"] * n) if n else ""
            shapes.append(f"{literal(action + '(')} {args} {literal(')')}".replace("  ", " "))
        acts.append("(" + " | ".join(shapes) + ")")
    if not acts:
        raise UsageError("recovery_code needs at least one robot action besides ask/say/wait_for")
    rules.append("act ::= " + " | ".join(acts))
    return Grammar("\n".join(rules) + "\n", "recovery-code")
