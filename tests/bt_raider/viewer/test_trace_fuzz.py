"""Fuzzing trace files with Hypothesis, through :func:`load_trace` and through ``bt-raider
view``'s loading path (the real server bound and stopped; no browser): every input is a trace
or a one-line refusal.

Inputs: a recorded trace with one field replaced by a hostile value (NaN, infinities, numbers
of thousands of digits, deep nesting, wrong types, duplicate keys), the trace's bytes truncated,
with bytes flipped or garbage inserted, re-encoded as UTF-16 or Latin-1. For each:

- :func:`load_trace` returns a dict that is a trace (the schema and order checks pass) holding
  only finite numbers, or raises :class:`TraceError` with one line naming the file;
- ``bt-raider view --no-browser`` serves it (exit 0, the URL printed, nothing on stderr) or
  exits 2 with one line on stderr and nothing on stdout; ``--html`` writes nothing on refusal;
- never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any
from unittest import mock

import py_trees
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.cli import main
from bt_raider.viewer.recorder import TraceRecorder
from bt_raider.viewer.trace import TraceError, check_trace, load_trace

FUZZ = settings(
    max_examples=60,
    deadline=None,
    database=None,  # nothing written into the repository
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def recorded_trace() -> dict[str, Any]:
    """A real recording: a sequence of a counter and a success, three ticks, an event."""
    counter = py_trees.behaviours.StatusQueue(
        "count", queue=[py_trees.common.Status.RUNNING] * 2, eventually=None
    )
    root = py_trees.composites.Sequence(
        "root", memory=True, children=[counter, py_trees.behaviours.Success("done")]
    )
    recorder = TraceRecorder(root)
    for _ in range(3):
        recorder.tick()
    recorder.event("note", "three ticks")
    recorder.finish()
    return recorder.to_json()


BASE = recorded_trace()
BASE_TEXT = json.dumps(BASE)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += paths(item, (*prefix, i))
    return out


PATHS = paths(BASE)[1:]


class Raw:
    """JSON text put in place of a value as it is (what json.dumps cannot write)."""

    def __init__(self, text: str) -> None:
        self.text = text


HOSTILE = st.sampled_from(
    [
        math.nan,
        math.inf,
        -math.inf,
        Raw("1e400"),
        Raw("9" * 5000),
        Raw("-" + "1" * 400),
        Raw("[" * 5000 + "]" * 5000),
        Raw('{"k": 1, "k": 2}'),
        None,
        True,
        -1,
        0.5,
        "",
        "RUNNING",
        "\udcff",
        [],
        {},
        {"99999999999999999999999": "RUNNING"},
        [[[[[[[[[[]]]]]]]]]],
    ]
)


def with_value(path: tuple[Any, ...], value: Any) -> str:
    """The trace's JSON text with the value at ``path`` replaced."""
    data = json.loads(BASE_TEXT)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    marker = "@@RAW@@"
    parent[path[-1]] = marker if isinstance(value, Raw) else value
    text = json.dumps(data)  # NaN and Infinity are written as JSON's forbidden words
    return text.replace(f'"{marker}"', value.text) if isinstance(value, Raw) else text


@st.composite
def trace_bytes(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["value", "truncate", "flip", "insert", "encode"]))
    valid = BASE_TEXT.encode()
    if kind == "value":
        text = with_value(draw(st.sampled_from(PATHS)), draw(HOSTILE))
        return text.encode("utf-8", "surrogatepass")
    if kind == "truncate":
        return valid[: draw(st.integers(0, len(valid)))]
    if kind == "flip":
        at = draw(st.integers(0, len(valid) - 1))
        return valid[:at] + bytes([draw(st.integers(0, 255))]) + valid[at + 1 :]
    if kind == "insert":
        at = draw(st.integers(0, len(valid)))
        return valid[:at] + draw(st.binary(min_size=1, max_size=8)) + valid[at:]
    return BASE_TEXT.encode(draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "utf-8-sig"])))


def finite_json(data: Any) -> bool:
    """The oracle for finite numbers: the standard library's strict writer."""
    try:
        json.dumps(data, allow_nan=False)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("trace-fuzz")


def view(*argv: str) -> tuple[int, str, str]:
    """``bt-raider view`` in-process; its serving loop ends at once as Ctrl-C would end it."""
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


def test_the_base_trace_is_served():
    assert check_trace(BASE) == [] and finite_json(BASE)


@FUZZ
@given(content=trace_bytes())
def test_load_trace_gives_a_finite_trace_or_one_line(workdir, content):
    path = workdir / "trace.json"
    path.write_bytes(content)
    try:
        data = load_trace(path)
    except TraceError as exc:
        msg = str(exc)
        assert "\n" not in msg and str(path) in msg and len(msg) < 1000, msg
        return
    assert check_trace(data) == [] and finite_json(data)


@FUZZ
@given(content=trace_bytes())
def test_view_serves_or_refuses_in_one_line(workdir, content):
    path = workdir / "trace.json"
    path.write_bytes(content)
    page = workdir / "page.html"
    page.unlink(missing_ok=True)
    code, out, err = view(str(path), "--no-browser")
    assert "Traceback" not in err
    if code == 0:
        assert err == "" and out.startswith("viewer: http://127.0.0.1:"), (out, err)
        assert view(str(path), "--html", str(page))[0] == 0 and page.exists()
    else:
        assert code == 2 and out == "", (code, out, err)
        assert err.startswith("bt-raider view: error: ") and err.count("\n") == 1, err
        code, out, err = view(str(path), "--html", str(page))
        assert code == 2 and err.count("\n") == 1 and not page.exists()
