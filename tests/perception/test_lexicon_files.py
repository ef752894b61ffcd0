"""A lexicon file is read as every file is (bt_raider.files): not a regular file, not UTF-8,
a key twice, too deep: one LexiconFileError (a LexiconError) naming the file."""

from __future__ import annotations

import os

import pytest

from bt_raider.errors import InputFileError
from bt_raider.perception.lexicon import CategoryLexicon, LexiconError, LexiconFileError


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b'{"fruit": ["Apple"], "fruit": ["Pear"]}', "the key 'fruit' appears twice"),
        (b'{"fruit": ["Apple"]}\xff', "byte 0xff at offset 20"),
        (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
        (b'{"fruit": NaN}', "NaN is not a finite number"),
    ],
)
def test_a_bad_lexicon_file_is_one_lexicon_file_error(tmp_path, content, fragment):
    path = tmp_path / "lexicon.json"
    path.write_bytes(content)
    with pytest.raises(LexiconFileError) as err:
        CategoryLexicon.load(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: ") and fragment in msg and "\n" not in msg
    assert isinstance(err.value, LexiconError) and isinstance(err.value, InputFileError)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "lexicon.json"
    os.mkfifo(fifo)
    with pytest.raises(LexiconFileError, match="named pipe"):
        CategoryLexicon.load(fifo)
