"""``bt-raider``: the command line.

Each sub-command lives in its own module under :mod:`bt_raider.commands`, exposing
``add_parser(subparsers)`` and ``run(args) -> int``. Modules must stay light to import: heavy
imports (torch, unified-planning, zenoh) go inside ``run``.

Exit status: 0 on success (any verdict), 2 with a one-line message on stderr for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from bt_raider.errors import BtRaiderError

#: Sub-command modules, in the order ``--help`` lists them.
COMMANDS = ("check", "plan", "demo", "memory")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bt-raider",
        description="Check, explain and recover robot actions before they run.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"bt_raider.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"bt_raider.commands.{name}":
                raise
            continue
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bt-raider`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except BtRaiderError as exc:
        msg = " ".join(str(exc).split())
        print(f"bt-raider {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"bt-raider {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
