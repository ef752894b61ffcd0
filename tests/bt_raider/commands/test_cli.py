"""The bt-raider entry point: sub-commands listed, errors as one line with exit 2."""

import subprocess
import sys

import pytest

from bt_raider.cli import build_parser, main


def test_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in ("check", "plan", "demo", "memory"):
        assert name in out


def test_missing_subcommand_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_console_script_module_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "bt_raider.cli", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "bt-raider" in proc.stdout


def test_parser_builds_every_command():
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # noqa: SLF001
    assert {"check", "plan", "demo", "memory"} <= set(choices)
