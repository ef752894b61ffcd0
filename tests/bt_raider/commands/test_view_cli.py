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
    assert err.startswith("bt-raider view: error: cannot read trace") and err.count("\n") == 1
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
