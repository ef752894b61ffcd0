"""Verbs outside the extractor's lexicon: mapped to a near lexical unit, or "cannot tell".

A conflict check must not pass what it cannot read: an unknown verb either takes the meaning of
the nearest lexical unit (embedding similarity above a calibrated threshold, the real MiniLM)
or its pairs are judged "cannot tell" and the neighbour is dropped, never kept.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bt_raider.errors import MemoryStoreError
from bt_raider.memory import VectorMemory
from bt_raider.memory.actions import UNKNOWN_OPERATION, Action
from bt_raider.memory.extract import SymbolicExtractor
from bt_raider.memory.rules import CANNOT_TELL, RuleSet
from bt_raider.memory.verbs import (
    DEFAULT_VERB_THRESHOLD,
    VerbLexicon,
    VerbMapper,
    calibrate_verb_threshold,
    without_verbs,
)


@pytest.fixture(scope="module")
def lexicon() -> VerbLexicon:
    return VerbLexicon.load()


# --------------------------------------------------------------------------- extraction
def test_a_word_outside_the_lexicon_where_a_verb_stands_is_an_unknown_verb():
    ex = SymbolicExtractor()
    (action,) = ex.extract("please yank the plate")
    assert action.operation == UNKNOWN_OPERATION
    assert (action.lu, action.object) == ("yank", "plate")
    (up,) = ex.extract("yank up the rug")
    assert (up.operation, up.object) == (UNKNOWN_OPERATION, "rug")
    first, second = ex.extract("yank the cup and put it in the sink")
    assert first.operation == UNKNOWN_OPERATION and second.key == ("put", "cup")


@pytest.mark.parametrize(
    "sentence",
    [
        "i need some cups can you get me some",  # a wish, not an action
        "use the knife to slice the apple",  # an instrument, then the action
        "take the bottle and use it to water the plant",  # a purpose
        "place the plate and spoon down on the table",  # a noun in a coordination
        "turn off the hall light",
    ],
)
def test_words_that_only_look_like_verbs_are_not_unknown_verbs(sentence):
    actions = SymbolicExtractor().extract(sentence)
    assert all(a.operation != UNKNOWN_OPERATION for a in actions)
    assert actions == SymbolicExtractor(open_vocabulary=False).extract(sentence)


def test_without_open_vocabulary_an_unknown_verb_is_ignored_as_before():
    assert SymbolicExtractor(open_vocabulary=False).extract("yank the plate") == []


def test_holding_verbs_out_makes_them_unknown(lexicon):
    reduced = without_verbs(lexicon, ["open"])
    assert "open" not in reduced.verbs and "opened" not in reduced.forms
    (action,) = SymbolicExtractor(reduced).extract("open the fridge")
    assert (action.operation, action.lu) == (UNKNOWN_OPERATION, "open")
    with pytest.raises(MemoryStoreError, match="'fly': not a verb"):
        without_verbs(lexicon, ["fly"])


# --------------------------------------------------------------------------- rules
def test_a_pair_hinging_on_an_unread_verb_is_cannot_tell_not_consistent():
    rules = RuleSet.default()
    unknown = [Action(UNKNOWN_OPERATION, "plate", lu="yank")]
    put = [Action("put", "plate", location="sink", lu="put")]
    j = rules.judge(unknown, put, similarity=0.9, theta=0.1)
    assert not j.conflict and j.undecided and j.rule == CANNOT_TELL
    assert "yank" in j.explain()
    # phi2 (same operation, another object) could fire too, if "yank" meant "open".
    assert rules.judge(unknown, [Action("open", "fridge")], 0.9, theta=0.1).undecided
    # Another object and the other negated: no rule could fire whatever the verb means.
    other = [Action("open", "fridge", negated=True, lu="open")]
    j = rules.judge(unknown, other, similarity=0.9, theta=0.1)
    assert not j.conflict and not j.undecided
    # Below theta no theta rule could fire either.
    assert not rules.judge(unknown, put, similarity=0.0, theta=0.1).undecided


def test_an_unread_operation_is_never_evidence_of_a_conflict_or_an_agreement():
    rules = RuleSet.default()
    a = [Action(UNKNOWN_OPERATION, "plate", lu="yank")]
    b = [Action(UNKNOWN_OPERATION, "plate", lu="snatch")]
    assert not rules.judge(a, b, similarity=1.0, theta=0.0).conflict
    assert not rules.agree(a, b)  # two unread verbs are not "the same action"
    assert rules.calibration_score(a, b, 0.5) == -math.inf


# --------------------------------------------------------------------------- mapping (MiniLM)
def test_an_unknown_verb_with_a_near_synonym_maps_to_it(lexicon, minilm):
    mapper = VerbMapper(lexicon, minilm)
    base = mapper.map("wipe")
    assert base is not None and lexicon.verbs[base]["op"] == "clean"
    (action,) = SymbolicExtractor(lexicon, verb_mapper=mapper).extract("wipe the table")
    assert action.key == ("clean", "table")


def test_an_unknown_verb_with_nothing_near_stays_unknown(lexicon, minilm):
    mapper = VerbMapper(lexicon, minilm)
    base, sim = mapper.nearest("sing")
    assert base is not None and sim < DEFAULT_VERB_THRESHOLD
    assert mapper.map("sing") is None
    (action,) = SymbolicExtractor(lexicon, verb_mapper=mapper).extract("sing the song")
    assert action.operation == UNKNOWN_OPERATION


def test_the_neighbour_of_an_unreadable_command_is_dropped_not_kept(tmp_path, lexicon, minilm):
    extractor = SymbolicExtractor(lexicon, verb_mapper=VerbMapper(lexicon, minilm))
    memory = VectorMemory(tmp_path / "m.db", embedder=minilm, extractor=extractor)
    memory.open()
    try:
        memory.record_many(
            [
                {"information": "put the plate in the sink", "goal": "In(Plate, Sink)"},
                {"information": "don't open the fridge", "goal": "Closed(Fridge)"},
            ]
        )
        res = memory.resolve("sing the plate", k=2, trim=True)
        status = {c.information: c.status for c in res.contexts}
        assert status["put the plate in the sink"] == "undecided"
        assert status["don't open the fridge"] == "kept"  # no rule could fire on it
        assert [c.information for c in res.kept] == ["don't open the fridge"]
        assert memory.store is not None and memory.store.cut_count() == 0  # no cut on a guess
    finally:
        memory.close()


def test_the_threshold_is_calibrated_leaving_each_verb_out(lexicon, minilm):
    threshold, fit = calibrate_verb_threshold(lexicon, minilm)
    assert threshold == pytest.approx(DEFAULT_VERB_THRESHOLD, abs=1e-3)
    assert fit["right"] > 3 * fit["wrong"]
    # Counting a wrong mapping like a right one maps more, and more wrongly.
    loose, loose_fit = calibrate_verb_threshold(lexicon, minilm, wrong_cost=1.0)
    assert loose <= threshold and loose_fit["wrong"] >= fit["wrong"]


class _Broken:
    name = "broken"

    def embed(self, texts):
        return np.full((len(texts), 4), np.nan)


def test_a_mapper_refuses_a_bad_threshold_or_embedding(lexicon):
    with pytest.raises(MemoryStoreError, match="threshold"):
        VerbMapper(lexicon, _Broken(), threshold=2.0)
    with pytest.raises(MemoryStoreError, match="not finite"):
        VerbMapper(lexicon, _Broken())
