"""The extractor's verb lexicon: malformed verb entries are refused when loaded."""

import json
from pathlib import Path

import pytest

from bt_raider.errors import MemoryStoreError
from bt_raider.memory.verbs import VerbLexicon


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"op": "take", "particle_alternatives": ["bring"]}, "particle_alternatives"),
        ({"op": "take", "stacked_goal": True}, "stacked_goal True: expected an operation"),
        ({"op": ["take"]}, "verb 'yeet' has op"),
    ],
)
def test_a_malformed_verb_entry_is_refused_when_loaded(tmp_path, entry, message):
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "memory" / "data" / "lexicon.json").read_text()
    )
    data["verbs"]["yeet"] = entry
    path = tmp_path / "lex.json"
    path.write_text(json.dumps(data))
    with pytest.raises(MemoryStoreError, match=message):
        VerbLexicon.load(path)
