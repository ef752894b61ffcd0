"""bt_raider.files: the one input discipline. Regular files only (refused from ``stat`` before
opening, and again from the opened descriptor), a size cap checked before reading and while
reading, UTF-8 with the offset of a bad byte, JSON of bounded depth and integer size, finite
numbers, duplicate keys refused. Every refusal is one InputFileError naming the file."""

from __future__ import annotations

import json
import math
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider import files
from bt_raider.errors import BtRaiderError, InputFileError, UsageError

FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def one_line(exc: BaseException, path: Path | str) -> str:
    """The message, checked to be one line that starts with the file's name."""
    msg = str(exc)
    assert "\n" not in msg and msg.startswith(f"{path}: ") and len(msg) < 400, msg
    return msg


def within(call: Any, seconds: float = 10.0) -> BaseException | None:
    """Run ``call`` on a thread: the exception it raised (None: it returned); fails if it
    blocks (a FIFO read would block forever, so the test must not)."""
    box: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            box.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"{call} blocked for {seconds} s"
    return box[0]


# ----------------------------------------------------------------------------- what a file is
def test_a_regular_file_is_read_and_named_errors_are_input_file_errors(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'{"a": [1, 2.5, "x"]}')
    assert files.regular_file(path, what="trace", max_bytes=100) == path
    assert files.read_bytes(path, what="trace", max_bytes=100) == path.read_bytes()
    assert files.read_json(path, what="trace", max_bytes=100) == {"a": [1, 2.5, "x"]}
    assert issubclass(InputFileError, BtRaiderError) and issubclass(InputFileError, ValueError)


def test_a_missing_file_names_the_file_what_it_is_and_why(tmp_path):
    missing = tmp_path / "nope.pddl"
    with pytest.raises(InputFileError) as err:
        files.read_text(missing, what="PDDL domain", max_bytes=100)
    msg = one_line(err.value, missing)
    assert "cannot read PDDL domain file (No such file or directory)" in msg
    assert err.value.path == str(missing) and err.value.what == "PDDL domain"


def test_a_nul_in_the_path_is_a_refusal_not_a_value_error_from_os(tmp_path):
    with pytest.raises(InputFileError, match="cannot read trace file"):
        files.read_bytes(str(tmp_path) + "/a\0b", what="trace", max_bytes=10)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(InputFileError) as err:
        files.read_bytes(tmp_path, what="scene", max_bytes=10)
    assert "it is a directory, not a file" in one_line(err.value, tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_named_pipe_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    exc = within(lambda: files.read_json(fifo, what="trace", max_bytes=10))
    assert isinstance(exc, InputFileError)
    assert "it is a named pipe (FIFO), not a file" in one_line(exc, fifo)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_device_is_refused_without_reading_it(device):
    exc = within(lambda: files.read_bytes(device, what="trace", max_bytes=10))
    assert isinstance(exc, InputFileError)
    assert "it is a character device, not a file" in one_line(exc, device)


def test_a_symlink_to_a_device_is_refused(tmp_path):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    link = tmp_path / "scene.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputFileError, match="character device"):
        files.read_bytes(link, what="scene", max_bytes=10)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets")
def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(InputFileError, match="it is a socket, not a file"):
            files.read_bytes(path, what="trace", max_bytes=10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_path_swapped_for_a_fifo_after_the_check_neither_blocks_nor_is_read(
    tmp_path, monkeypatch
):
    regular = tmp_path / "regular"
    regular.write_bytes(b"{}")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # The check saw a regular file; by the time it is opened the path is a FIFO.
    real_stat = os.stat
    monkeypatch.setattr(
        files.os, "stat", lambda p, *a, **k: real_stat(regular if Path(p) == fifo else p)
    )
    exc = within(lambda: files.read_bytes(fifo, what="trace", max_bytes=10))
    assert isinstance(exc, InputFileError)
    assert "it is a named pipe (FIFO), not a file" in one_line(exc, fifo)


# ----------------------------------------------------------------------------- size
def test_an_absurd_size_is_refused_before_the_file_is_opened(tmp_path, monkeypatch):
    sparse = tmp_path / "huge.json"
    with open(sparse, "wb") as f:
        f.truncate(8 * 2**30)  # 8 GiB, sparse: nothing on disk
    opened: list[Any] = []
    monkeypatch.setattr(files.os, "open", lambda *a, **k: opened.append(a) or -1)
    with pytest.raises(InputFileError) as err:
        files.read_bytes(sparse, what="trace", max_bytes=2**20, fix="--max-bytes")
    msg = one_line(err.value, sparse)
    assert "the trace file is 8192.0 MiB, over the limit of 1.0 MiB" in msg
    assert "(raise it with --max-bytes)" in msg
    assert opened == []


def test_the_cap_is_exact(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert len(files.read_bytes(path, what="trace", max_bytes=100)) == 100
    with pytest.raises(InputFileError, match="over the limit of 99 bytes"):
        files.read_bytes(path, what="trace", max_bytes=99)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="no /proc")
def test_a_file_that_reports_size_0_is_still_read_at_most_to_the_cap():
    # /proc files are regular files of size 0 whatever they hold: the cap bounds the read.
    with pytest.raises(InputFileError, match="over the limit of 16 bytes"):
        files.read_bytes("/proc/self/maps", what="config", max_bytes=16)


@pytest.mark.parametrize("cap", [-1, 1.5, "10", True, None])
def test_a_cap_that_is_not_a_byte_count_is_our_callers_bug(tmp_path, cap):
    path = tmp_path / "f"
    path.write_bytes(b"{}")
    with pytest.raises(UsageError, match="max_bytes must be a non-negative int"):
        files.read_bytes(path, what="trace", max_bytes=cap)


@pytest.mark.parametrize(
    "text, expected",
    [("67108864", 67108864), ("64M", 64 * 2**20), ("64MiB", 64 * 2**20), ("1g", 2**30)],
)
def test_byte_count_reads_sizes_with_units(text, expected):
    assert files.byte_count(text) == expected


@pytest.mark.parametrize("text", ["0", "-5", "lots", "12Q", "nan", "1.5M", ""])
def test_byte_count_refuses_what_is_no_size(text):
    with pytest.raises(ValueError, match="expected a positive number of bytes"):
        files.byte_count(text)


# ----------------------------------------------------------------------------- text
@pytest.mark.parametrize(
    "raw, fragment",
    [
        (b'{"a": 1}\xff', "byte 0xff at offset 8 is not UTF-8"),
        (b"\xc3(", "byte 0xc3 at offset 0"),
        ("\ufeff{}".encode("utf-16"), "looks like UTF-16 or UTF-32"),
        ("{}".encode("utf-32-le"), "looks like UTF-16 or UTF-32"),
        (b"\xff\xfe(define", "looks like UTF-16 or UTF-32"),
    ],
)
def test_text_that_is_not_utf8_names_the_byte(tmp_path, raw, fragment):
    path = tmp_path / "d.pddl"
    path.write_bytes(raw)
    with pytest.raises(InputFileError) as err:
        files.read_text(path, what="PDDL domain", max_bytes=100)
    assert fragment in one_line(err.value, path)


def test_a_utf8_byte_order_mark_is_allowed_and_dropped(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b"\xef\xbb\xbf" + '{"\u00e9": 1}'.encode())
    assert files.read_json(path, what="trace", max_bytes=100) == {"\u00e9": 1}


# ----------------------------------------------------------------------------- JSON
def _refused(text: str, **kwargs: Any) -> str:
    with pytest.raises(InputFileError) as err:
        files.loads_json(text, what="trace", source="t.json", **kwargs)
    return one_line(err.value, "t.json")


@pytest.mark.parametrize("depth", [100_000, 1_000, 101])
def test_deep_nesting_is_refused_before_parsing(depth, monkeypatch):
    parsed: list[str] = []
    monkeypatch.setattr(files.json, "loads", lambda *a, **k: parsed.append("x"))
    msg = _refused("[" * depth + "]" * depth)
    assert "nested too deeply" in msg and "at most 100 levels" in msg
    assert parsed == []


def test_nesting_up_to_the_limit_is_read():
    assert files.loads_json("[" * 100 + "]" * 100, what="trace") is not None
    assert files.loads_json('{"a":' * 50 + "1" + "}" * 50, what="trace", max_depth=50)


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"s": "[" * 500 + '\\"{{' + "]" * 3})
    assert files.json_depth(text) == 1
    assert files.loads_json(text, what="trace") == json.loads(text)


def json_values(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    leaves = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(alphabet=st.sampled_from('ab"\\[]{}\u00e9\n'))
    )
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.text(alphabet=st.sampled_from('k"\\[{'), max_size=3), inner, max_size=4
            )
        ),
        max_leaves=max_leaves,
    )


def reference_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((reference_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((reference_depth(v) for v in value.values()), default=0)
    return 0


@FUZZ
@given(value=json_values(), indent=st.sampled_from([None, 1]))
def test_depth_is_measured_as_the_parser_nests(value, indent):
    text = json.dumps(value, indent=indent)
    assert files.json_depth(text) == reference_depth(value)
    assert files.json_depth(text.encode()) == reference_depth(value)


@FUZZ
@given(value=json_values())
def test_a_document_within_bounds_reads_as_json_does(value):
    text = json.dumps(value)
    assert files.loads_json(text, what="trace", max_depth=1000, max_int_digits=4000) == value


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('{"n": ' + "9" * 5000 + "}", "line 1: an integer of 5000 digits is out of range"),
        ('{"n": -' + "9" * 309 + "}", "an integer of 309 digits"),
        ('{\n"t": NaN}', "line 2: NaN is not a finite number"),
        ('{"t": Infinity}', "Infinity is not a finite number"),
        ('{"t": -Infinity}', "-Infinity is not a finite number"),
        ('{"t": 1e400}', "the number 1e400 is too large"),
        ('{"t": -1e400}', "the number -1e400 is too large"),
        ('{"a": 1, "a": 2}', "the key 'a' appears twice in one object"),
        ('{"a": 1', "not JSON (Expecting ',' delimiter at line 1)"),
        ("", "not JSON (Expecting value at line 1)"),
        ("[1] [2]", "not JSON (Extra data at line 1)"),
    ],
)
def test_json_out_of_bounds_is_one_line(text, fragment):
    assert fragment in _refused(text)


def test_308_digits_are_read():
    assert files.loads_json("[" + "9" * 308 + "]", what="trace") == [int("9" * 308)]


def test_non_finite_numbers_come_back_as_floats_for_a_reader_that_names_the_field():
    data = files.loads_json("[NaN, Infinity, -Infinity, 1e400]", what="scene", finite=False)
    assert math.isnan(data[0]) and data[1:] == [math.inf, -math.inf, math.inf]


def test_duplicate_keys_are_refused_unless_the_last_is_asked_for():
    assert "appears twice" in _refused('{"x": {"k": 1, "k": 1}}')
    assert files.loads_json('{"k": 1, "k": 2}', what="scene", duplicates="last") == {"k": 2}


@FUZZ
@given(text=st.text(alphabet=st.sampled_from('{}[]",:01-eE.NaInfinity \\u\n'), max_size=60))
def test_any_text_is_a_document_or_one_refusal(text):
    try:
        files.loads_json(text, what="trace", source="t.json")
    except InputFileError as exc:
        one_line(exc, "t.json")


@FUZZ
@given(raw=st.binary(max_size=80))
def test_any_bytes_are_a_document_or_one_refusal(tmp_path, raw):
    path = tmp_path / "b.json"
    path.write_bytes(raw)
    try:
        files.read_json(path, what="trace", max_bytes=64)
    except InputFileError as exc:
        one_line(exc, path)
