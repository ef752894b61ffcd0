"""``bt-raider check``: check one action in a scene and print the verdict as JSON.

stdout carries exactly the JSON object of ``docs/scene-format.md`` section 4 (one line), so it
stays parseable with or without ``--trace``: the trace (the Ground / Ask / Answer / Issue
conversation, or an LLM backend's messages) goes to **stderr**.

Exit status: 0 for any verdict (an object the scene lacks is a ``not_present`` verdict), 2 with
one line on stderr for bad input: a scene that is not a regular file (a FIFO, device or
directory is refused before it is opened), larger than ``--max-scene-bytes`` (64 MiB by
default), not UTF-8, not JSON, nested too deeply, holding a number that is not finite or out of
range; an empty query, one over 2,000 characters, an unknown action. A query that starts with
``-`` goes after ``--``. When the reader of stdout goes away (``| head -c 10``) the command
exits 1 without a traceback (see :func:`bt_raider.cli.main`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

from bt_raider.checking.contract import MAX_QUERY_CHARS, Query
from bt_raider.checking.registry import BACKENDS, make_checker
from bt_raider.commands import HELP
from bt_raider.errors import need
from bt_raider.files import byte_count
from bt_raider.perception.scene import MAX_SCENE_BYTES, Scene


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:  # "nan" and "inf" parse as floats
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


def _byte_count(text: str) -> int:
    """``67108864``, ``64M``, ``64MiB``, ``1G`` -> a positive number of bytes."""
    try:
        return byte_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], argv: Sequence[str] = ()
) -> None:
    """Add the ``check`` sub-command to ``sub`` (``argv``: the words after its name)."""
    parser = sub.add_parser(
        "check",
        help=HELP["check"],
        description=(
            "Ground the query in the scene, ask and answer its preconditions with the "
            "perception tools, and print the verdict as one JSON object on stdout. "
            'Examples: "pick(Apple)", "(pick tiago medicine counter)", '
            '"Can you please open the microwave?". A query that starts with "-" goes after '
            '"--": bt-raider check --scene S.json -- "-pick". '
            f"Queries are at most {MAX_QUERY_CHARS:,} characters."
        ),
    )
    parser.add_argument("--scene", required=True, metavar="SCENE.json", help="scene file")
    parser.add_argument(
        "--backend",
        default="symbolic",
        choices=BACKENDS,
        help="reasoner: symbolic (default, offline), openai (any OpenAI-compatible endpoint), "
        "transformers (a local model) or llama-cpp (a GGUF model in-process)",
    )
    parser.add_argument(
        "--model", help="model name or path (openai, transformers, llama-cpp backends)"
    )
    parser.add_argument("--base-url", help="endpoint of an OpenAI-compatible server")
    parser.add_argument("--api-key", help="API key for the openai backend")
    parser.add_argument(
        "--time-limit",
        type=_positive_seconds,
        metavar="S",
        help="give up after S seconds (the verdict is then 'unknown')",
    )
    parser.add_argument(
        "--max-scene-bytes",
        type=_byte_count,
        default=MAX_SCENE_BYTES,
        metavar="N",
        help=f"refuse a scene file larger than N bytes (default {MAX_SCENE_BYTES // 2**20}M; "
        "suffixes K, M, G)",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="print the Ground/Ask/Answer/Issue conversation on stderr",
    )
    parser.add_argument("query", help="the action to check")
    parser.set_defaults(run=run)


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options :func:`bt_raider.make_checker` gets from the command line."""
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


#: Seconds past --time-limit the command waits for the checker's own ``unknown`` verdict (with
#: its trace) before it answers for it.
GRACE_S = 0.15


def check_within_limit(args: argparse.Namespace, scene: Scene, query: Query, started: float) -> Any:
    """Build the checker and check; with ``--time-limit``, answer by then whatever happens."""

    def build_and_check() -> Any:
        checker = make_checker(args.backend, **backend_options(args))
        if args.time_limit is not None and hasattr(checker, "time_limit"):
            # --time-limit bounds the command: reading the scene and loading the backend (the
            # openai SDK takes a second to import) come out of it.
            # Spent already: a positive sliver (0 would mean no limit), so the check ends unknown.
            checker.time_limit = max(args.time_limit - (time.monotonic() - started), 1e-9)
        return checker.check(scene, query)

    if args.time_limit is None:
        return build_and_check()
    # Loaded when a limited check runs, not when the parser is built.
    from bt_raider.checking.verdict import Verdict
    from bt_raider.llm.chat import call_within

    # On a daemon thread: at the limit the command prints its verdict and exits, even while the
    # backend still loads (seconds on a busy machine) or a checker ignores its own limit.
    left = args.time_limit - (time.monotonic() - started) + GRACE_S
    try:
        return call_within(build_and_check, left)
    except TimeoutError:
        return Verdict.unknown(
            f"no verdict within the time limit of {args.time_limit:g} s "
            f"(the {args.backend} backend was still loading or checking)"
        )


#: Backend -> the extra it needs (checked before the scene is read; symbolic needs none).
BACKEND_EXTRAS = {"openai": "llm", "transformers": "llm-local", "llama-cpp": "llm-gguf"}


def run(args: argparse.Namespace) -> int:
    """Run ``bt-raider check``: print the verdict as JSON; 0 for any verdict."""
    started = time.monotonic()
    if args.backend in BACKEND_EXTRAS:
        need(BACKEND_EXTRAS[args.backend], f"--backend {args.backend}")
    query = Query(args.query)  # empty or too long: refused before the scene is read
    scene = Scene.load(args.scene, max_bytes=args.max_scene_bytes)
    verdict = check_within_limit(args, scene, query, started)
    if args.trace:
        print(format_trace(verdict.trace), file=sys.stderr)
        if verdict.questions:
            print(f"{'[questions]':10} " + " | ".join(verdict.questions), file=sys.stderr)
        print(f"{'[elapsed]':10} {verdict.elapsed_s * 1000:.1f} ms", file=sys.stderr)
    print(verdict.dumps())
    return 0
