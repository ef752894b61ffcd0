"""The static pictures: py_trees' dot graph filled by status with the recovery subtrees, and
the viewer page with the trace inside (always written)."""

from __future__ import annotations

import json
import re
import shutil

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.viewer.page import static_page
from bt_raider.viewer.pictures import STATUS_COLOURS, status_dot, write_pictures
from bt_raider.viewer.recorder import TraceRecorder


def _ran_tree():
    ok = py_trees.behaviours.Success("ok")
    bad = py_trees.behaviours.Failure("bad")
    same = py_trees.behaviours.Success("ok")  # a repeated name: py_trees adds '*'
    never = py_trees.behaviours.Success("never")
    root = py_trees.composites.Sequence("root", memory=False, children=[ok, same, bad, never])
    root.tick_once()
    return root


def _fill(graph, name):
    (node,) = graph.get_node(json.dumps(name)) or graph.get_node(name)
    return node.get("fillcolor")


def test_each_node_is_filled_by_its_status():
    root = _ran_tree()
    graph = status_dot(root)
    assert _fill(graph, "root") == STATUS_COLOURS["FAILURE"]
    assert _fill(graph, "ok") == STATUS_COLOURS["SUCCESS"]
    assert _fill(graph, "ok*") == STATUS_COLOURS["SUCCESS"]
    assert _fill(graph, "bad") == STATUS_COLOURS["FAILURE"]
    assert _fill(graph, "never") == STATUS_COLOURS["INVALID"]


def test_the_demo_picture_shows_each_recovery_where_it_was_grafted(demo_run):
    result, _trace = demo_run
    graph = status_dot(result.root)
    clusters = graph.get_subgraphs()
    guards = [n for n in result.root.iterate() if hasattr(n, "recovery_tree")]
    assert len(clusters) == len(guards) == 4
    text = graph.to_string()
    for guard in guards:
        code = "; ".join(guard.plan.code.splitlines())
        assert code.split("(")[0] in text
        for node in guard.recovery_tree.iterate():
            assert node.name.replace('"', '\\"') in text
    # every node of the delivered tree succeeded
    assert re.findall(r"fillcolor=\"?(#[0-9a-f]{6})", text) and all(
        c == STATUS_COLOURS["SUCCESS"] for c in re.findall(r"fillcolor=\"?(#[0-9a-f]{6})", text)
    )


def test_the_page_is_written_without_graphviz(tmp_path, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    files = write_pictures(_ran_tree(), tmp_path, "tree")
    assert "graphviz" in files.pop("note")
    assert set(files) == {"dot", "html"}
    page = (tmp_path / "tree.html").read_text()
    assert '<script id="bt-trace" type="application/json">' in page


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
def test_png_and_svg_with_graphviz_and_the_page_too(tmp_path):
    files = write_pictures(_ran_tree(), tmp_path, "tree")
    assert set(files) == {"dot", "png", "svg", "html"}
    assert (tmp_path / "tree.png").read_bytes()[:4] == b"\x89PNG"
    svg = (tmp_path / "tree.svg").read_text()
    assert STATUS_COLOURS["FAILURE"] in svg and STATUS_COLOURS["SUCCESS"] in svg


def test_the_page_carries_the_trace_and_nothing_escapes_its_script():
    root = py_trees.behaviours.Success("</script><script>alert(1)</script> <!-- x")
    recorder = TraceRecorder(root)
    recorder.tick()
    trace = recorder.to_json()
    page = static_page(trace)
    match = re.search(r'<script id="bt-trace" type="application/json">(.*?)</script>', page, re.S)
    assert json.loads(match.group(1)) == trace
    assert "<script>alert(1)" not in page and "<!-- x" not in page
    # our own CSS and JS are inlined: no file or network fetch
    assert 'src="viewer.js"' not in page and 'href="viewer.css"' not in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page
    assert root.status is Status.SUCCESS


def _fake_dot(tmp_path, body: str):
    """A ``dot`` on PATH that runs ``body`` (sh) before the real graphviz, or instead of it."""
    script = tmp_path / "bin" / "dot"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
def test_a_graphviz_without_the_gd_plugin_draws_the_plain_png(tmp_path, monkeypatch):
    real = shutil.which("dot")
    seen = tmp_path / "formats"
    fake = _fake_dot(
        tmp_path,
        f'echo "$1" >> {seen}\n'
        'case "$1" in -Tpng:cairo:gd) echo \'Format: "png:cairo:gd" not recognized. '
        "Use one of: png svg' >&2; exit 1;; esac\n"
        f'exec {real} "$@"',
    )
    monkeypatch.setattr("shutil.which", lambda name: fake if name == "dot" else None)
    files = write_pictures(_ran_tree(), tmp_path / "out", "tree")
    assert set(files) == {"dot", "png", "svg", "html"}
    assert seen.read_text().split() == ["-Tpng:cairo:gd", "-Tpng"]
    assert (tmp_path / "out" / "tree.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (tmp_path / "out" / "tree.svg").read_text()


def test_a_failing_graphviz_leaves_the_dot_and_the_page_with_a_note(tmp_path, monkeypatch):
    fake = _fake_dot(tmp_path, "echo 'Error: syntax error in line 1' >&2; exit 3")
    monkeypatch.setattr("shutil.which", lambda name: fake if name == "dot" else None)
    files = write_pictures(_ran_tree(), tmp_path / "out", "tree")
    note = files.pop("note")
    assert "exit status 3" in note and "syntax error in line 1" in note
    assert set(files) == {"dot", "html"}
    assert '<script id="bt-trace"' in (tmp_path / "out" / "tree.html").read_text()


def test_the_callers_writing_runs_while_graphviz_draws(tmp_path):
    seen = []

    def write_mine():
        seen.append((tmp_path / "tree.html").exists())
        (tmp_path / "mine.json").write_text("{}")

    files = write_pictures(_ran_tree(), tmp_path, "tree", while_drawing=write_mine)
    assert seen == [True]  # once, with the page already there
    expected = {"dot", "png", "svg", "html"} if shutil.which("dot") else {"dot", "html", "note"}
    assert set(files) == expected and (tmp_path / "mine.json").read_text() == "{}"


def test_an_error_in_the_callers_writing_surfaces_after_graphviz_is_waited_for(tmp_path):
    def fail():
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_pictures(_ran_tree(), tmp_path, "tree", while_drawing=fail)
    if shutil.which("dot"):  # the drawing was waited for, not left running
        assert (tmp_path / "tree.png").read_bytes()[:4] == b"\x89PNG"
