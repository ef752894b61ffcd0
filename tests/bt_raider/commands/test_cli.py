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


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; {code}; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {m.strip(" '") for m in out.stdout.strip()[1:-1].split(",")}


def test_building_the_cli_imports_no_demo_and_no_reasoner():
    loaded = _modules_after("from bt_raider.cli import build_parser; build_parser(['--help'])")
    assert not {m for m in loaded if m.startswith("bt_raider.commands.")}
    loaded = _modules_after(
        "from bt_raider.cli import build_parser; "
        "build_parser(['check', '--scene', 's.json', 'pick(Apple)'])"
    )
    assert "bt_raider.commands.check" in loaded
    assert not {m for m in loaded if m.startswith(("bt_raider.examples", "bt_raider.planners"))}
    assert "bt_raider.checking.symbolic" not in loaded and "bt_raider.checking.agent" not in loaded
    assert "bt_raider.commands.demo" not in loaded and "bt_raider.commands.memory" not in loaded


def test_a_demo_imports_only_its_own_scenario():
    loaded = _modules_after(
        "from bt_raider.cli import build_parser; "
        "build_parser(['demo', 'medicine-delivery', '--no-memory'])"
    )
    assert "bt_raider.examples.medicine_delivery.demo" in loaded
    assert not {m for m in loaded if m.startswith("bt_raider.examples.cooperative_table")}


def test_the_chosen_command_parses_its_options_after_lazy_building():
    args = build_parser(["demo", "cooperative-table", "--seed", "3"]).parse_args(
        ["demo", "cooperative-table", "--seed", "3"]
    )
    assert args.command == "demo" and args.demo == "cooperative-table" and args.seed == 3
