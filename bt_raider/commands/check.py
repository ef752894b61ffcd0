"""``bt-raider check``: check one action in a scene and print the verdict as JSON.

stdout carries exactly the JSON object of ``docs/scene-format.md`` section 4 (one line), so it
stays parseable with or without ``--trace``: the trace (the Ground / Ask / Answer / Issue
conversation, or an LLM backend's messages) goes to **stderr**.

Exit status: 0 for any verdict (an object the scene lacks is a ``not_present`` verdict), 2 with
one line on stderr for bad input (unreadable or malformed scene, empty query, unknown action).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from bt_raider.checking.contract import Query
from bt_raider.checking.registry import BACKENDS, make_checker
from bt_raider.commands import HELP
from bt_raider.errors import QueryError
from bt_raider.perception.scene import Scene


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def add_parser(sub: argparse._SubParsersAction, argv: Sequence[str] = ()) -> None:
    """Add the ``check`` sub-command to ``sub`` (``argv``: the words after its name)."""
    parser = sub.add_parser(
        "check",
        help=HELP["check"],
        description=(
            "Ground the query in the scene, ask and answer its preconditions with the "
            "perception tools, and print the verdict as one JSON object on stdout. "
            'Examples: "pick(Apple)", "(pick tiago medicine counter)", '
            '"Can you please open the microwave?".'
        ),
    )
    parser.add_argument("--scene", required=True, metavar="SCENE.json", help="scene file")
    parser.add_argument(
        "--backend",
        default="symbolic",
        choices=BACKENDS,
        help="reasoner: symbolic (default, offline), openai (any OpenAI-compatible endpoint) "
        "or transformers (a local model)",
    )
    parser.add_argument("--model", help="model name or path (openai/transformers backends)")
    parser.add_argument("--base-url", help="endpoint of an OpenAI-compatible server")
    parser.add_argument("--api-key", help="API key for the openai backend")
    parser.add_argument(
        "--time-limit",
        type=_positive_seconds,
        metavar="S",
        help="give up after S seconds (the verdict is then 'unknown')",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="print the Ground/Ask/Answer/Issue conversation on stderr",
    )
    parser.add_argument("query", help="the action to check")
    parser.set_defaults(run=run)


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options :func:`bt_raider.checking.contract.make_checker` gets from the command line."""
    options: dict[str, Any] = {}
    if args.backend != "symbolic":
        for key in ("model", "base_url", "api_key"):
            value = getattr(args, key, None)
            if value is not None:
                options[key] = value
    if args.time_limit is not None:
        options["time_limit"] = args.time_limit
    return options


def format_trace(trace: list[dict[str, Any]]) -> str:
    """One block per message: ``[role] content`` (a system prompt is shortened)."""
    lines = []
    for msg in trace:
        role = str(msg.get("role", "?"))
        content = msg.get("content")
        if content is None and msg.get("tool_calls"):
            content = json.dumps(msg["tool_calls"], default=str)
        text = str(content if content is not None else "")
        if role == "system":
            first = text.strip().splitlines()[0] if text.strip() else ""
            text = f"{first} ... ({len(text.splitlines())} lines)"
        label = f"[{role}]"
        body = text.splitlines() or [""]
        lines.append(f"{label:10} {body[0]}")
        lines.extend(f"{'':10} {line}" for line in body[1:])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    scene = Scene.load(args.scene)
    if not args.query.strip():
        raise QueryError(f"a query must be a non-empty string, got {args.query!r}")
    checker = make_checker(args.backend, **backend_options(args))
    if args.time_limit is not None and hasattr(checker, "time_limit"):
        # --time-limit bounds the command: reading the scene and loading the backend (the
        # openai SDK takes a second to import) come out of it.
        checker.time_limit = max(args.time_limit - (time.monotonic() - started), 1e-3)
    verdict = checker.check(scene, Query(args.query))
    if args.trace:
        print(format_trace(verdict.trace), file=sys.stderr)
        if verdict.questions:
            print(f"{'[questions]':10} " + " | ".join(verdict.questions), file=sys.stderr)
        print(f"{'[elapsed]':10} {verdict.elapsed_s * 1000:.1f} ms", file=sys.stderr)
    print(verdict.dumps())
    return 0
