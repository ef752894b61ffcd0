"""``bt-raider``: the command line.

Each sub-command lives in its own module under :mod:`bt_raider.commands`, exposing
``add_parser(subparsers, argv)`` and ``run(args) -> int``. Only the module of the sub-command
being run is imported (the others are listed by their help line), and it imports its heavy
dependencies (a reasoner, torch, unified-planning, zenoh) inside ``run``.

Exit status: 0 on success (any verdict), 2 with a one-line message on stderr for bad input
(a usage error, or any :class:`~bt_raider.errors.BtRaiderError` or :class:`OSError` a command
raises: bad input is turned into one of these where it is read), 1 when the reader of stdout
went away (``bt-raider check ... | head -c 10``), 130 on Ctrl-C. Anything else is a bug of
ours and keeps its traceback.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from bt_raider.commands import HELP
from bt_raider.errors import BtRaiderError, UsageError
from bt_raider.files import unicode_text


class CommandLineError(UsageError):
    """A command line argparse cannot parse (reported by :func:`main` as one line, exit 2)."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block), raised to :func:`main`."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self.prog, message)


class _Version(argparse.Action):
    """``--version``: the installed distribution's version, looked up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        # importlib.metadata costs ~20 ms to import: not on the path of every command.
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = version("bt_raider")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            text = "unknown (not installed)"
        print(f"bt-raider {text}")
        parser.exit(0)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The ``bt-raider`` parser, complete for the sub-command ``argv`` names.

    Args:
        argv: the command line (without the program name); its first word that is not an
            option selects the sub-command whose module is imported and whose options are
            added. When it names one, the others are left out: their parsers (a few
            milliseconds of argparse and gettext lookups) would never be used. Otherwise (no
            command, an unknown one, ``--help``) every sub-command is listed by name and help
            line.
    """
    argv = list(argv)
    parser = _Parser(
        prog="bt-raider",
        description="Check, explain and recover robot actions before they run.",
        epilog="A query or argument that starts with '-' goes after '--': "
        "bt-raider check --scene S.json -- '-pick'.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    chosen = next((i for i, word in enumerate(argv) if not word.startswith("-")), None)
    name = argv[chosen] if chosen is not None else None
    if chosen is not None and name in HELP:
        module = importlib.import_module(f"bt_raider.commands.{name}")
        module.add_parser(sub, argv[chosen + 1 :])
        return parser
    for command, help_text in HELP.items():
        sub.add_parser(command, help=help_text)
    return parser


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of its sub-commands' parsers."""
    found: set[str] = set()
    stack = [parser]
    while stack:
        p = stack.pop()
        for action in p._actions:  # noqa: SLF001 - argparse keeps no public list
            found.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                stack.extend(action.choices.values())
    return found


def _dash_hint(argv: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """A hint when a word looks like an option but is none (a query such as ``-pick``)."""
    words = list(argv[: argv.index("--")] if "--" in argv else argv)
    known = _options(parser)
    strays = [
        w for w in words if w.startswith("-") and w != "-" and w.split("=", 1)[0] not in known
    ]
    if not strays:
        return ""
    return (
        f" ({strays[0]!r} is not an option: put a query or argument that starts with '-' "
        f"after '--', e.g. bt-raider check --scene S.json -- {strays[0]!r})"
    )


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again.

    The recipe of the Python docs' note on SIGPIPE (``signal`` module): the reader of a pipe
    went away; exit quietly instead of with a traceback or "Exception ignored" on stderr.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a file (captured in tests)
        pass


#: Commands whose console process ends without the interpreter's clean-up (see _exit_now).
EXIT_NOW = frozenset({"check", "demo"})


def _exit_now(code: int) -> NoReturn:
    """End the console process at once, past the interpreter's clean-up.

    A command of :data:`EXIT_NOW` has written and closed everything when it returns. What
    the interpreter would still do is tear down every module and object one by one, which
    frees nothing the process is not about to give back (15 ms after a check, 0.1 s after
    the demo), and wait for threads that have nothing more to write: after ``check
    --time-limit`` possibly one abandoned in the middle of an HTTP read or of importing the
    SDK, which would hold the exit for a second or more past the promised limit. The
    ``atexit`` handlers still run (the planner's idle children are stopped there).
    """
    atexit._run_exitfuncs()  # noqa: SLF001 - the handlers interpreter exit would run
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or the reader went away: nothing to save
            pass
    os._exit(code)


#: Arguments that are text a command reads as words (not paths: a file name may be any bytes).
TEXT_ARGUMENTS = ("query", "information", "goal", "text", "metadata", "outcome", "reason")


def _check_texts(args: argparse.Namespace) -> None:
    """Refuse text arguments that are not valid Unicode, naming the byte and its offset.

    A byte that is not UTF-8 on the command line reaches Python as a lone surrogate
    (``surrogateescape``), which no tokenizer, model or JSON writer accepts.

    Raises:
        InputFileError: the first such argument (one line).
    """
    for key in TEXT_ARGUMENTS:
        value = getattr(args, key, None)
        if isinstance(value, str):
            unicode_text(value, what=key.upper(), source="the command line")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bt-raider`` console script.

    The one place where errors become exit statuses: a usage error (``SystemExit(2)``, as
    argparse does), a :class:`~bt_raider.errors.BtRaiderError` (a missing extra too, even
    while the command's parser is built) or an :class:`OSError` is one
    line on stderr and exit 2; a closed stdout pipe is exit 1, silently; Ctrl-C is 130. Other exceptions are bugs
    and propagate with their traceback.
    """
    console = argv is None
    if console:
        # Start-up makes thousands of objects (modules, classes, parsers) and frees none: the
        # collector's passes over them are wasted (~25 ms of the demo's start).
        gc.disable()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv)
    except BtRaiderError as exc:  # a command that cannot even be set up: a missing extra
        command = next((word for word in argv if not word.startswith("-")), "")
        print(f"bt-raider {command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except CommandLineError as exc:
        msg = _one_line(exc) + _dash_hint(argv, parser)
        print(f"{exc.prog}: error: {msg} (see {exc.prog} --help)", file=sys.stderr)
        raise SystemExit(2) from None  # as argparse exits on a usage error
    if console:
        gc.freeze()  # what start-up made lives to the end: later passes skip it
        if not (args.command == "check" and args.backend == "symbolic"):
            gc.enable()  # a symbolic check is one short computation: no collector at all
    name = f"bt-raider {args.command}"
    try:
        _check_texts(args)
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
        if console and args.command in EXIT_NOW:
            _exit_now(code)
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except BtRaiderError as exc:
        print(f"{name}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine refused: a file, a disk, a socket; never our logic
        print(f"{name}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
