"""Hypothesis fuzzers of the files and texts a user gives, round 3: the rules file, embedder
folders, rooms and argv text. Each is read within bounds or refused in one line (a
BtRaiderError), never a hang, a MemoryError, a RecursionError or a TypeError.

Every read runs on a thread joined with a timeout (a FIFO read would block for ever)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.errors import BtRaiderError
from bt_raider.testing.scenes import KITCHEN_PATH

LIMIT_S = 10.0
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def bounded(call: Any) -> tuple[Any, BaseException | None]:
    """``call()`` on a thread: (its result, its exception); fails the test if it blocks."""
    box: list[tuple[Any, BaseException | None]] = []

    def run() -> None:
        try:
            box.append((call(), None))
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box.append((None, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(LIMIT_S)
    assert box, f"{call!r} did not return within {LIMIT_S} s"
    return box[0]


def refused_in_one_line(exc: BaseException | None) -> None:
    if exc is None:
        return
    assert isinstance(exc, BtRaiderError), repr(exc)
    assert "\n" not in str(exc) and str(exc), repr(exc)


#: What a hostile file's bytes may be: garbage, JSON of any shape, deep nesting, bad text.
def _deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


CONTENTS = st.one_of(
    st.binary(max_size=200),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=20,
    ).map(lambda v: json.dumps(v).encode()),
    st.integers(1, 20_000).map(_deep),
    st.sampled_from(
        [b'{"rules": [{"name": "a\\ud800"}]}', b"\xff\xfe{", b'{"a": 1, "a": 2}',
         b'{"n": ' + b"9" * 5000 + b"}", b'{"n": NaN}', b"", b"\x00" * 10]
    ),
)  # fmt: skip


def special(tmp_path: Path, kind: str, name: str) -> Path:
    """A path that is not a regular file: a FIFO, a directory, /dev/zero behind a link."""
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    return path


# ------------------------------------------------------------------------------- rules file
@FUZZ
@given(CONTENTS)
def test_any_rules_file_is_rules_or_one_line(tmp_path, content):
    from bt_raider.memory.rules import RuleSet

    path = tmp_path / f"rules-{uuid.uuid4().hex}.json"
    path.write_bytes(content)
    result, exc = bounded(lambda: RuleSet.load(str(path)))
    refused_in_one_line(exc)
    assert exc is not None or isinstance(result, RuleSet)


@pytest.mark.parametrize("kind", ["fifo", "dir", "zero"])
def test_a_rules_path_that_is_no_file_is_refused_at_once(tmp_path, kind):
    from bt_raider.memory.rules import RuleSet

    path = special(tmp_path, kind, "rules.json")
    _, exc = bounded(lambda: RuleSet.load(str(path)))
    refused_in_one_line(exc)
    assert exc is not None and str(path) in str(exc)


# ------------------------------------------------------------------------------- embedder folders
@FUZZ
@given(CONTENTS, st.sampled_from(["config.json", "tokenizer.json", "vocab.txt"]))
def test_any_embedder_folder_config_is_a_size_or_one_line(tmp_path, content, name):
    from bt_raider.memory.embedder import TransformersEmbedder

    folder = tmp_path / f"model-{uuid.uuid4().hex}"
    folder.mkdir()
    (folder / name).write_bytes(content)
    if name != "config.json":
        (folder / "config.json").write_text('{"hidden_size": 8}')
    result, exc = bounded(lambda: TransformersEmbedder(folder).dim)
    refused_in_one_line(exc)
    assert exc is not None or isinstance(result, int)


@pytest.mark.parametrize("kind", ["fifo", "dir", "zero"])
@pytest.mark.parametrize("name", ["config.json", "tokenizer.json"])
def test_an_embedder_folder_holding_no_file_is_refused_naming_it(tmp_path, kind, name):
    from bt_raider.memory.embedder import TransformersEmbedder, check_model_folder

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 8}') if name != "config.json" else None
    bad = special(folder, kind, name)
    if kind == "dir":  # a sub-folder is no file transformers opens by that name...
        _, exc = bounded(lambda: TransformersEmbedder(folder).dim)
        if name == "config.json":  # ...except config.json itself
            refused_in_one_line(exc)
            assert exc is not None and "config.json" in str(exc)
        return
    _, exc = bounded(lambda: check_model_folder(folder))
    refused_in_one_line(exc)
    assert exc is not None and str(bad) in str(exc)
    _, exc = bounded(lambda: TransformersEmbedder(folder).dim)
    refused_in_one_line(exc)
    assert exc is not None


# ------------------------------------------------------------------------------- rooms
@FUZZ
@given(CONTENTS)
def test_any_room_file_is_a_room_or_one_line(tmp_path, content):
    from bt_raider.testing.explore_world import load_room

    path = tmp_path / f"room-{uuid.uuid4().hex}.json"
    path.write_bytes(content)
    result, exc = bounded(lambda: load_room(path))
    refused_in_one_line(exc)
    assert exc is not None or isinstance(result.get("objects"), list)


@pytest.mark.parametrize("kind", ["fifo", "dir", "zero"])
def test_a_room_that_is_no_file_is_refused_at_once(tmp_path, kind):
    from bt_raider.testing.explore_world import load_room

    path = special(tmp_path, kind, "room.json")
    _, exc = bounded(lambda: load_room(path))
    refused_in_one_line(exc)
    assert exc is not None and str(path) in str(exc)


# ------------------------------------------------------------------------------- argv text
def run_cli(argv: list[str]) -> tuple[int, str, str]:
    from bt_raider.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


ARGV_TEXT = st.tuples(st.text(max_size=30), st.binary(max_size=4), st.text(max_size=10)).map(
    lambda t: t[0] + os.fsdecode(t[1]) + t[2]
)


@FUZZ
@given(ARGV_TEXT)
def test_any_argv_query_is_a_verdict_or_one_line(text):
    code, out, err = bounded(lambda: run_cli(["check", "--scene", str(KITCHEN_PATH), "--", text]))[
        0
    ]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        assert code == 2 and out == "" and "not valid Unicode" in err
        assert len(err.strip().splitlines()) == 1 and "at offset" in err
        return
    if code == 0:
        assert json.loads(out)["category"] and err == ""
    else:
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@FUZZ
@given(ARGV_TEXT, st.sampled_from(["add", "query"]))
def test_any_argv_memory_text_that_is_not_unicode_is_refused_before_anything(
    tmp_path, text, command
):
    db = tmp_path / f"m-{uuid.uuid4().hex}.db"
    argv = ["memory", command, "--db", str(db), "--", text]
    if command == "add":
        argv = ["memory", "add", "--goal", "g", "--db", str(db), "--", text]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        code, out, err = bounded(lambda: run_cli(argv))[0]
        assert code == 2 and out == "" and "not valid Unicode" in err
        assert len(err.strip().splitlines()) == 1
        assert not db.exists()  # refused before the database was made
