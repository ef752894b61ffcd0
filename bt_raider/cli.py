"""``bt-raider``: the command line.

Each sub-command lives in its own module under :mod:`bt_raider.commands`, exposing
``add_parser(subparsers, argv)`` and ``run(args) -> int``. Only the module of the sub-command
being run is imported (the others are listed by their help line), and it imports its heavy
dependencies (a reasoner, torch, unified-planning, zenoh) inside ``run``.

Exit status: 0 on success (any verdict), 2 with a one-line message on stderr for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from bt_raider.commands import HELP
from bt_raider.errors import BtRaiderError


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The ``bt-raider`` parser, complete for the sub-command ``argv`` names.

    Args:
        argv: the command line (without the program name); its first word that is not an
            option selects the sub-command whose module is imported and whose options are
            added. The other sub-commands are listed by name and help line only.
    """
    argv = list(argv)
    parser = argparse.ArgumentParser(
        prog="bt-raider",
        description="Check, explain and recover robot actions before they run.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    chosen = next((i for i, word in enumerate(argv) if not word.startswith("-")), None)
    name = argv[chosen] if chosen is not None else None
    for command, help_text in HELP.items():
        if command == name:
            module = importlib.import_module(f"bt_raider.commands.{command}")
            module.add_parser(sub, argv[chosen + 1 :])
        else:
            sub.add_parser(command, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bt-raider`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv).parse_args(argv)
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
