"""The bt-raider entry point: sub-commands listed, errors as one line with exit 2."""

import subprocess
import sys
from pathlib import Path

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


def test_no_command_imports_unified_planning_or_torch_to_build_its_parser():
    # UP's Environment pulls its engine factory and, through ConfigSpace, scipy: over a second.
    heavy = ("unified_planning", "scipy", "networkx", "torch", "jinja2")
    for argv in (
        ["plan", "d.pddl", "p.pddl"],
        ["demo", "medicine-delivery", "--no-memory"],
        ["check", "--scene", "s.json", "pick(Apple)"],
    ):
        loaded = _modules_after(f"from bt_raider.cli import build_parser; build_parser({argv!r})")
        assert not {m for m in loaded if m.split(".")[0] in heavy}, argv


def test_importing_the_registry_does_not_load_the_scene_model():
    loaded = _modules_after("import bt_raider.checking.registry")
    assert "bt_raider.perception.scene" not in loaded and "numpy" not in loaded


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


def test_version_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"bt-raider {version('bt_raider')}\n"


def test_a_usage_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--scene"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert err.startswith("bt-raider check: error: argument --scene: expected one argument")


def test_a_query_that_looks_like_an_option_gets_a_hint_to_use_the_separator(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--scene", "s.json", "-pick"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert "'-pick' is not an option" in err and "after '--'" in err


def test_the_separator_lets_a_query_start_with_a_dash(capsys, tmp_path):
    scene = tmp_path / "s.json"
    scene.write_text('{"objects": []}')
    # Parsed as the query: "-pick" is no action, so a one-line QueryError, not a usage error.
    assert main(["check", "--scene", str(scene), "--", "-pick"]) == 2
    assert "unknown action '-pick'" in capsys.readouterr().err


def test_help_documents_the_separator(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert '"--"' in out and "--max-scene-bytes" in out and "2,000 characters" in out


def test_our_own_bugs_keep_their_traceback(monkeypatch):
    import bt_raider.commands.check as check

    def broken(args):
        raise ZeroDivisionError("a bug of ours")

    monkeypatch.setattr(check, "run", broken)
    with pytest.raises(ZeroDivisionError):
        main(["check", "--scene", "s.json", "pick(Apple)"])


def test_an_os_error_is_one_line(monkeypatch, capsys):
    import bt_raider.commands.check as check

    def full_disk(args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(check, "run", full_disk)
    assert main(["check", "--scene", "s.json", "pick(Apple)"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err


#: Packages ``bt-raider check`` never needs: numpy's import alone costs more than a whole check
#: on the symbolic backend, and scipy and unified-planning (planning) several times that.
NOT_FOR_CHECK = ("numpy", "scipy", "unified_planning", "torch", "transformers", "openai")


def test_check_runs_to_its_verdicts_without_numpy_scipy_or_unified_planning():
    from bt_raider.examples import medicine_delivery
    from bt_raider.testing.scenes import KITCHEN_PATH

    medicine = Path(medicine_delivery.__file__).with_name("scene.json")
    # Each kind of reasoning the symbolic checker does: reach, state, relations (left of,
    # near, closest), several steps, a near-miss name, PDDL syntax, places and people.
    runs = [
        (KITCHEN_PATH, "open the fridge"),
        (KITCHEN_PATH, "put the apple in the fridge"),
        (KITCHEN_PATH, "pick up the knife left of the sink"),
        (KITCHEN_PATH, "pick the mug near the kettle"),
        (KITCHEN_PATH, "pick the closest stool"),
        (KITCHEN_PATH, "pick the bread then put it in the bowl"),
        (KITCHEN_PATH, "pick up the tomatoe"),
        (KITCHEN_PATH, "(pick robot apple countertop)"),
        (medicine, "approach the medicine_counter"),
        (medicine, "give the medicine to Adriana"),
    ]
    code = (
        "import contextlib, io, json, sys\n"
        "from bt_raider.cli import main\n"
        f"for scene, query in {[(str(s), q) for s, q in runs]!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "        assert main(['check', '--scene', scene, query]) == 0, query\n"
        "    print(json.loads(out.getvalue())['final_response'])\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {NOT_FOR_CHECK!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    *verdicts, loaded = proc.stdout.splitlines()
    assert len(verdicts) == len(runs) and set(verdicts) >= {"none", "unfeasibility", "ambiguity"}
    assert loaded == "[]", f"bt-raider check imported {loaded}"


def test_the_medicine_demo_runs_without_numpy_scipy_or_unified_planning(tmp_path):
    # It plans in a child process (pyperplan) and moves its robot with plain floats.
    code = (
        "import contextlib, io, sys\n"
        "from bt_raider.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    code = main(['demo', 'medicine-delivery', '--no-memory', '--out', {str(tmp_path)!r}])\n"
        "print(code, 'medicine handed over to Adriana: yes' in out.getvalue())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{(*NOT_FOR_CHECK, 'pyperplan')!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["0 True", "[]"], proc.stdout


def _console(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """``bt-raider ARGV`` as the console script runs it, with an atexit handler and a line
    after ``main()`` that only a normal interpreter exit would reach."""
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('atexit ran, gc', gc.isenabled(), file=sys.stderr))\n"
        "from bt_raider.cli import main\n"
        f"sys.argv = ['bt-raider', *{argv!r}]\n"
        "code = main()\n"
        "print('after main', code, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )


def test_a_console_check_exits_past_the_clean_up_with_its_verdict_and_atexit(tmp_path):
    from bt_raider.testing.scenes import KITCHEN_PATH

    proc = _console(["check", "--scene", str(KITCHEN_PATH), "open the fridge"], tmp_path)
    # A symbolic check is one short computation: it runs without the garbage collector.
    assert proc.returncode == 0 and proc.stderr == "atexit ran, gc False\n", proc.stderr[-2000:]
    assert proc.stdout.endswith("}\n") and '"final_response"' in proc.stdout
    # Bad input keeps the usual path: one line, exit 2, the interpreter's own exit.
    proc = _console(["check", "--scene", str(tmp_path / "missing.json"), "x"], tmp_path)
    assert proc.returncode == 2 and "after main 2" in proc.stderr


def test_a_console_demo_exits_past_the_clean_up_with_every_file_written(tmp_path):
    proc = _console(["demo", "medicine-delivery", "--no-memory", "--out", "out"], tmp_path)
    # The collector is back on for a run that may last (--view serves until Ctrl-C).
    assert proc.returncode == 0 and proc.stderr == "atexit ran, gc True\n", proc.stderr[-2000:]
    assert proc.stdout.rstrip().endswith(f"trace: {Path('out') / 'trace.json'}")
    trace = (tmp_path / "out" / "trace.json").read_text()
    assert trace.rstrip().endswith("}")  # complete, not cut by the exit
    assert (tmp_path / "out" / "medicine_delivery_tree.html").stat().st_size > 0
