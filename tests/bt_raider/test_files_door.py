"""bt_raider.files, round 3: the stat -> open window, streaming and SQLite opens, and text that
is not valid Unicode (lone surrogates from JSON escapes or from argv's surrogateescape)."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bt_raider import files
from bt_raider.errors import InputFileError


def _swap(monkeypatch: pytest.MonkeyPatch, seen: Path, real: Path) -> None:
    """``os.stat`` of ``real`` sees ``seen`` (the path changed between the check and open)."""
    stat = os.stat
    monkeypatch.setattr(files.os, "stat", lambda p, *a, **k: stat(seen if Path(p) == real else p))


def test_a_directory_swapped_in_after_the_check_is_refused_naming_the_path(tmp_path, monkeypatch):
    regular, folder = tmp_path / "scene.json", tmp_path / "now_a_folder"
    regular.write_text("{}")
    folder.mkdir()
    _swap(monkeypatch, regular, folder)
    for read in (
        lambda: files.read_bytes(folder, what="scene", max_bytes=100),
        lambda: files.read_json(folder, what="scene", max_bytes=100),
        lambda: files.open_binary(folder, what="index", max_bytes=100),
        lambda: files.read_head(folder, 16, what="memory database"),
    ):
        with pytest.raises(InputFileError) as err:
            read()
        message = str(err.value)
        assert message.startswith(f"{folder}: ") and "a directory, not a file" in message
        assert "\n" not in message and "Errno" not in message


def test_open_binary_and_read_head_stream_a_regular_file_and_refuse_a_fifo(tmp_path):
    data = tmp_path / "index.bin"
    data.write_bytes(b"SQLite format 3\x00" + b"x" * 5000)
    with files.open_binary(data, what="index", max_bytes=10_000) as f:
        assert f.read() == data.read_bytes()
    assert files.read_head(data, 16, what="memory database") == b"SQLite format 3\x00"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def head() -> None:
        try:
            files.read_head(fifo, 16, what="memory database")
        except InputFileError as exc:
            done.append(exc)

    thread = threading.Thread(target=head, daemon=True)
    thread.start()
    thread.join(10)
    assert done and "named pipe" in str(done[0])


def test_connect_sqlite_refuses_what_is_not_a_file_and_creates_a_missing_one(tmp_path):
    fifo = tmp_path / "memory.db"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="named pipe"):
        files.connect_sqlite(fifo, what="memory database")
    fresh = tmp_path / "new.db"
    db = files.connect_sqlite(fresh, what="memory database")
    db.execute("CREATE TABLE t (x)")
    db.close()
    assert fresh.is_file()
    assert isinstance(files.connect_sqlite(fresh, what="memory database"), sqlite3.Connection)


def test_argv_text_that_was_not_utf8_is_refused_naming_the_byte_and_its_offset():
    word = os.fsdecode(b"put the t\xe9a cup")  # Latin-1 in a UTF-8 terminal
    with pytest.raises(InputFileError) as err:
        files.unicode_text(word, what="INFORMATION", source="the command line")
    assert str(err.value) == (
        "the command line: INFORMATION is not valid Unicode text (byte 0xe9 at offset 9 is "
        "not UTF-8)"
    )
    assert files.unicode_text("pick the café cup 😀", what="x") == "pick the café cup 😀"


def test_a_json_escape_of_a_lone_surrogate_is_refused_with_its_line():
    text = '{"information": "ok"}\n{"information": "bad \\ud800 here", "goal": "g"}'
    with pytest.raises(InputFileError) as err:
        files.loads_json(text.splitlines()[1], what="records", source="r.jsonl")
    assert "U+D800" in str(err.value) and "offset 4" in str(err.value)
    # A pair of escapes is one character, and an escaped backslash is no escape at all.
    assert files.loads_json('["\\ud83d\\ude00"]', what="x") == ["😀"]
    assert files.loads_json('["\\\\ud800"]', what="x") == ["\\ud800"]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40), st.binary(min_size=1, max_size=6))
def test_any_argv_text_is_valid_unicode_or_one_line_naming_a_byte(prefix, raw):
    word = prefix + os.fsdecode(raw)
    try:
        ok = files.unicode_text(word, what="TEXT", source="argv")
    except InputFileError as exc:
        message = str(exc)
        assert "\n" not in message and "at offset" in message
        offset = int(message.rsplit("at offset ", 1)[1].split()[0])
        encoded = word.encode("utf-8", "surrogateescape")
        assert 0 <= offset < len(encoded)
        with pytest.raises(UnicodeDecodeError):
            encoded.decode("utf-8")
    else:
        assert ok == word and word.encode("utf-8").decode("utf-8") == word


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 0x10FFFF), max_size=8))
def test_any_json_string_of_escapes_parses_to_valid_unicode_or_is_refused(codes):
    text = '["' + "".join(f"\\u{c:04x}" if c <= 0xFFFF else chr(c) for c in codes) + '"]'
    try:
        value = files.loads_json(text, what="records")
    except InputFileError as exc:
        assert "not valid Unicode" in str(exc) and "\n" not in str(exc)
        assert any(0xD800 <= c <= 0xDFFF for c in codes)
    else:
        value[0].encode("utf-8")  # never a lone surrogate
