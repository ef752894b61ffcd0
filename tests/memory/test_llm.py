"""The paper's LLM extractor behind a duck-typed chat model (scripted replies)."""

from __future__ import annotations

from dataclasses import dataclass

import jinja2
import pytest

from bt_raider.errors import BackendError
from bt_raider.memory import VectorMemory
from bt_raider.memory.extract import SymbolicExtractor
from bt_raider.memory.llm import LLMExtractor, render


@dataclass
class Reply:
    content: str


class Scripted:
    """Replays replies in order and keeps the conversations it was sent."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict]] = []

    def complete(self, messages):
        self.seen.append([dict(m) for m in messages])
        return Reply(self.replies.pop(0))


def test_prompt_carries_the_papers_rules_and_the_sentence():
    text = LLMExtractor(Scripted()).prompt("turn off the radio")
    assert text.startswith("You are a cautious language assistant.")
    assert "predicate phrases that appear similar but actually have opposite meanings" in text
    assert "turn_on" in text and "Sentence: turn off the radio" in text


def test_template_is_strict_about_missing_variables():
    with pytest.raises(jinja2.UndefinedError):
        render(sentence="x", operations=["take"])  # examples missing


def test_reply_becomes_canonical_actions():
    chat = Scripted(
        'Sure: {"actions": [{"operation": "turn_off", "object": "the hall lights", '
        '"location": null, "negated": false}, {"operation": "put", "object": "TV remote", '
        '"location": "coffee table", "negated": true}]}'
    )
    a, b = LLMExtractor(chat).extract(
        "turn off the hall lights and don't put the tv remote on the coffee table"
    )
    assert a.key == ("turn_off", "lamp")  # same vocabulary as the symbolic extractor
    assert (b.key, b.location, b.negated) == (("put", "remote"), "table", True)


def test_unusable_reply_is_fed_back_once_then_accepted():
    chat = Scripted(
        '{"actions": [{"operation": "yeet", "object": "ball"}]}',
        '{"actions": [{"operation": "put", "object": "ball"}]}',
    )
    extractor = LLMExtractor(chat)
    assert [a.key for a in extractor.extract("throw the ball")] == [("put", "ball")]
    second = chat.seen[1]
    assert second[-1]["role"] == "user" and "unknown operation 'yeet'" in second[-1]["content"]
    assert extractor.calls == 2
    extractor.extract("throw the ball")  # cached: no third call
    assert extractor.calls == 2


def test_still_unusable_falls_back_or_raises():
    fallback = LLMExtractor(Scripted("no idea", "still no idea"), fallback=SymbolicExtractor())
    assert [a.key for a in fallback.extract("open the fridge")] == [("open", "fridge")]
    strict = LLMExtractor(Scripted("[not json", "{}"))
    with pytest.raises(BackendError, match="no usable action list"):
        strict.extract("open the fridge")
    with pytest.raises(BackendError, match="no complete"):
        LLMExtractor(object())


def test_memory_with_the_llm_extractor(tmp_path, hash_embedder):
    on = '{"actions": [{"operation": "turn_on", "object": "light", "location": null, "negated": false}]}'
    off = '{"actions": [{"operation": "turn_off", "object": "light", "location": null, "negated": false}]}'
    chat = Scripted(on, off, on)
    with VectorMemory(
        tmp_path / "m.db", embedder=hash_embedder, extractor=LLMExtractor(chat)
    ) as memory:
        memory.record_many(
            [
                {"information": "set the hall lights on", "goal": "On"},
                {"information": "set the hall lights off", "goal": "Off"},
            ]
        )
        assert memory.get(memory.search("set the hall lights on", 1)[0].id).extractor == "llm"
        res = memory.resolve("set the hall lights on now", k=2, trim=False)
        assert [c.information for c in res.conflicts] == ["set the hall lights off"]
