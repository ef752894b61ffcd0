"""MemoryLink: recovery's few-shot examples from the CDR memory, successes recorded off the tick."""

from __future__ import annotations

import threading

import pytest

from bt_raider.checking.verdict import Verdict
from bt_raider.memory.vector import VectorMemory
from bt_raider.recovery.contract import RecoveryRequest
from bt_raider.recovery.fewshot import MemoryLink, record_id
from bt_raider.recovery.llm import LLMRecoveryPlanner
from tests.memory.conftest import HashEmbedder


@pytest.fixture
def memory(tmp_path):
    mem = VectorMemory(tmp_path / "memory.db", embedder=HashEmbedder())
    yield mem
    mem.close()


def test_recorded_successes_come_back_as_examples(memory):
    link = MemoryLink(memory, fallback=None)
    info = "Action: pick(Medicine). Issue: ambiguity. Two medicines match."
    code = 'item = ask("Which medicine?")\npick(item)'
    link.record(info, code)
    link.flush(10)
    assert link.recorded == [record_id(info, code)]
    shots = link.examples("Action: pick(Medicine). Issue: ambiguity. Which medicine?", 3)
    assert (info, code) in shots
    assert link.errors == []


def test_recording_the_same_success_twice_adds_nothing(memory):
    link = MemoryLink(memory, fallback=None)
    link.record("open the fridge failed: hand busy", "place(Apple)\nopen(Fridge)")
    link.record("open the fridge failed: hand busy", "place(Apple)\nopen(Fridge)")
    link.flush(10)
    assert memory.stats()["live"] == 1


def test_record_returns_before_the_memory_has_written(memory):
    gate = threading.Event()
    real = memory.record

    def slow_record(*args, **kwargs):
        assert gate.wait(10)
        return real(*args, **kwargs)

    memory.record = slow_record
    link = MemoryLink(memory, fallback=None)
    link.record("x", "say('y')")  # must not wait for the gate: a guard calls this in a tick
    assert link.recorded == []
    gate.set()
    link.flush(10)
    assert len(link.recorded) == 1


def test_empty_memory_is_topped_up_from_the_builtin_examples(memory):
    link = MemoryLink(memory)
    shots = link.examples("pick the mug: ambiguity, two mugs", 3)
    assert len(shots) == 3 and all(isinstance(g, str) and g for _, g in shots)


def test_a_broken_memory_falls_back_and_says_why():
    class Broken:
        def examples(self, text, k):
            raise OSError("database is locked")

    link = MemoryLink(Broken())
    shots = link.examples("pick the mug", 2)
    assert len(shots) == 2
    assert "database is locked" in link.errors[0]


def test_llm_recovery_prompt_carries_the_memory_examples(memory):
    link = MemoryLink(memory, fallback=None)
    link.record("Action: turnon(LightSwitch). Issue: wrong_state.", "say('It is already on.')")
    link.flush(10)
    planner = LLMRecoveryPlanner(chat=None, examples=link.examples)
    request = RecoveryRequest(
        action="turnon(LightSwitch)",
        verdict=Verdict("wrong_state", "The LightSwitch is already on."),
    )
    assert "say('It is already on.')" in planner.prompt(request)


def test_start_opens_the_memory_on_its_thread_while_records_queue(tmp_path):
    gate = threading.Event()
    opened_on: list[str] = []

    def open_memory() -> VectorMemory:
        opened_on.append(threading.current_thread().name)
        assert gate.wait(10)  # the caller goes on meanwhile
        return VectorMemory(tmp_path / "memory.db", embedder=HashEmbedder())

    link = MemoryLink.start(open_memory, fallback=None)
    link.record("pick(Medicine): two match", 'pick(ask("Which one?"))')  # returns at once
    assert link.recorded == []
    gate.set()
    link.close()
    assert opened_on and opened_on[0].startswith("bt_raider-memory")
    assert link.recorded == [record_id("pick(Medicine): two match", 'pick(ask("Which one?"))')]
    assert link.errors == []


def test_a_memory_that_fails_to_open_is_reported_and_close_returns():
    def open_memory() -> VectorMemory:
        raise OSError("disk gone")

    link = MemoryLink.start(open_memory, fallback=None)
    link.record("info", "code")
    link.close()
    assert link.recorded == []
    assert any("disk gone" in e for e in link.errors)
