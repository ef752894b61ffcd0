"""``bt-raider view``: serve a trace until Ctrl-C, write it as one page, refuse bad traces."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from urllib.request import urlopen

import py_trees
import pytest

from bt_raider.cli import main
from bt_raider.viewer.recorder import TraceRecorder


@pytest.fixture
def trace_file(tmp_path):
    root = py_trees.composites.Sequence(
        "root", memory=True, children=[py_trees.behaviours.Success("step")]
    )
    recorder = TraceRecorder(root)
    recorder.tick()
    recorder.finish()
    return recorder.write(tmp_path / "trace.json")


def test_serves_the_trace_prints_the_url_and_stops_on_ctrl_c(trace_file):
    proc = subprocess.Popen(
        [sys.executable, "-m", "bt_raider.cli", "view", str(trace_file), "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("viewer: http://127.0.0.1:") and "1 ticks" in line
        url = line.split()[1]
        with urlopen(url + "trace.json", timeout=10) as response:
            assert json.load(response) == json.loads(trace_file.read_text())
        with urlopen(url, timeout=10) as response:
            assert b"viewer.js" in response.read()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err


def test_html_writes_one_self_contained_page(trace_file, tmp_path, capsys):
    page = tmp_path / "page" / "run.html"
    assert main(["view", str(trace_file), "--html", str(page)]) == 0
    assert capsys.readouterr().out == f"page: {page}\n"
    text = page.read_text()
    assert '<script id="bt-trace" type="application/json">' in text and "step" in text


def test_a_bad_trace_or_port_is_one_line_and_exit_2(tmp_path, capsys, trace_file):
    assert main(["view", str(tmp_path / "none.json"), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bt-raider view: error: ") and err.count("\n") == 1
    assert "none.json: cannot read trace file (No such file or directory)" in err
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"scenario": "medicine-delivery"}))
    assert main(["view", str(old), "--no-browser"]) == 2
    assert "is not a bt_raider trace" in capsys.readouterr().err
    assert main(["view", str(trace_file), "--no-browser", "--port", "-1"]) == 2
    assert "port must be an integer from 0 to 65535" in capsys.readouterr().err


def test_view_is_listed_and_loads_only_its_own_module():
    out = subprocess.run(
        [sys.executable, "-m", "bt_raider.cli", "--help"], capture_output=True, text=True
    )
    assert "view" in out.stdout
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from bt_raider.cli import build_parser; "
            "build_parser(['view', 'x.json']); print(sorted(sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "bt_raider.commands.view" in loaded
    assert "bt_raider.viewer.server" not in loaded and "bt_raider.examples" not in loaded


def _view(*argv: str) -> tuple[int, str, str]:
    """``bt-raider view`` in-process; the serving loop ends at once, as Ctrl-C ends it."""
    import contextlib
    import io
    from unittest import mock

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        mock.patch("bt_raider.commands.view.time.sleep", side_effect=KeyboardInterrupt),
    ):
        try:
            code = main(["view", *argv])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def _with(trace_file, old: str, new: str) -> bytes:
    """The trace written with ", " and ": " and ``"t": 0.0`` first, one piece replaced."""
    data = json.loads(trace_file.read_text())
    data["ticks"][0]["t"] = 0.0
    text = json.dumps(data)
    assert old in text
    return text.replace(old, new, 1).encode("utf-8", "surrogatepass")


MALFORMED = {
    "non-utf8": lambda f: f.read_bytes()[:-2] + b"\xff}",
    "utf16": lambda f: f.read_text().encode("utf-16"),
    "deep": lambda f: b"[" * 100_000 + b"]" * 100_000,
    "5000-digits": lambda f: _with(f, '"tick_count":', '"n": ' + "9" * 5000 + ', "tick_count":'),
    "nan-t": lambda f: _with(f, '"t": 0.0', '"t": NaN'),
    "infinity": lambda f: _with(f, '"t": 0.0', '"t": Infinity'),
    "1e400": lambda f: _with(f, '"t": 0.0', '"t": 1e400'),
    "duplicate-key": lambda f: _with(f, '"tick_count":', '"title": "again", "tick_count":'),
    "truncated": lambda f: f.read_bytes()[:100],
    "empty": lambda f: b"",
    "wrong-schema": lambda f: b'{"format": "bt_raider.trace", "version": 2}',
    "not-an-object": lambda f: b"[1, 2, 3]",
    "huge-node-key": lambda f: _with(f, '"status": {"0"', '"status": {"' + "0" * 5000 + '"'),
    "negative-t": lambda f: _with(f, '"t": 0.0', '"t": -1'),
}
FRAGMENTS = {
    "non-utf8": "not UTF-8 text (byte 0xff at offset",
    "utf16": "looks like UTF-16",
    "deep": "nested too deeply",
    "5000-digits": "an integer of 5000 digits",
    "nan-t": "NaN is not a finite number",
    "infinity": "Infinity is not a finite number",
    "1e400": "1e400 is too large",
    "duplicate-key": "the key 'title' appears twice",
    "truncated": "not JSON",
    "empty": "not JSON",
    "wrong-schema": "is not a bt_raider trace",
    "not-an-object": "expected object, got array",
    "huge-node-key": "is not a node id",
    "negative-t": "-1 is below the minimum 0",
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_trace_is_one_line_exit_2_and_nothing_written(trace_file, tmp_path, kind):
    bad = tmp_path / "bad.json"
    bad.write_bytes(MALFORMED[kind](trace_file))
    page = tmp_path / "page.html"
    for extra in (["--no-browser"], ["--html", str(page)]):
        code, out, err = _view(str(bad), *extra)
        assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
        assert err.startswith("bt-raider view: error: ") and str(bad) in err
        assert FRAGMENTS[kind] in err and len(err) < 600
    assert not page.exists()


def test_what_is_not_a_file_is_refused_before_it_is_opened(tmp_path):
    import os

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    cases = {str(fifo): "a named pipe (FIFO)", str(tmp_path): "a directory"}
    if os.path.exists("/dev/zero"):
        cases["/dev/zero"] = "a character device"
    for path, kind in cases.items():
        code, out, err = _view(path, "--no-browser")
        assert code == 2 and out == "" and err.count("\n") == 1
        assert f"{path}: cannot read trace file: it is {kind}, not a file" in err


def test_the_size_cap_is_an_option(trace_file):
    size = trace_file.stat().st_size
    code, out, err = _view(str(trace_file), "--no-browser", "--max-bytes", str(size - 1))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"over the limit of {size - 1:,} bytes (raise it with --max-bytes" in err
    code, out, err = _view(str(trace_file), "--no-browser", "--max-bytes", f"{size}")
    assert code == 0 and out.startswith("viewer: http://127.0.0.1:") and err == ""


@pytest.mark.parametrize("bad", ["0", "-5", "lots", "nan"])
def test_a_bad_size_cap_is_a_usage_error(trace_file, bad):
    code, out, err = _view(str(trace_file), "--max-bytes", bad)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--max-bytes" in err
