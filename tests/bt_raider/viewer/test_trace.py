"""The trace format: the demo's trace meets the JSON Schema, our small validator agrees with
``jsonschema`` on valid and broken traces, and bad files are clear errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bt_raider.viewer.trace import (
    FORMAT,
    SCHEMA_PATH,
    TraceError,
    check_trace,
    load_trace,
    schema,
    validate,
)

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra")


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(schema())
    assert json.loads(SCHEMA_PATH.read_text()) == schema()


def test_the_demo_trace_meets_the_schema(demo_run, tmp_path):
    result, _trace = demo_run
    summary = result.to_json()
    summary.pop("events")
    path = result.recorder.write(tmp_path / "trace.json", indent=1, **summary)
    data = json.loads(path.read_text())
    jsonschema.validate(data, schema())
    assert validate(data) == [] and check_trace(data) == []
    assert data["format"] == FORMAT and data["tick_count"] == result.ticks
    assert data["outcome"]["delivered"] is True  # the demo's own keys stay
    assert load_trace(path) == data


def test_the_demo_command_writes_the_trace_and_the_page(tmp_path, capsys):
    import shutil

    from bt_raider.cli import main

    assert main(["demo", "medicine-delivery", "--no-memory", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    trace = load_trace(tmp_path / "trace.json")
    jsonschema.validate(trace, schema())
    assert trace["outcome"]["delivered"] is True and "events" not in trace
    page = (tmp_path / "medicine_delivery_tree.html").read_text()
    assert '<script id="bt-trace" type="application/json">' in page
    assert f"tree (html): {tmp_path / 'medicine_delivery_tree.html'}" in printed
    if shutil.which("dot"):
        assert (tmp_path / "medicine_delivery_tree.png").read_bytes()[:4] == b"\x89PNG"


def _small_trace() -> dict[str, Any]:
    return {
        "format": "bt_raider.trace",
        "version": 1,
        "title": "t",
        "started": "2026-01-01T00:00:00+00:00",
        "tick_count": 2,
        "finished": True,
        "ticks": [
            {
                "tick": 0,
                "t": 0.0,
                "add": [
                    {
                        "id": 0,
                        "name": "root",
                        "type": "Sequence",
                        "shape": "sequence",
                        "parent": None,
                    },
                    {
                        "id": 1,
                        "name": "g",
                        "type": "RaiderGuard",
                        "shape": "decorator",
                        "parent": 0,
                        "guard": True,
                    },
                ],
                "guards": {"1": {"phase": "idle", "attempts": 0, "query": None}},
            },
            {
                "tick": 2,
                "t": 0.5,
                "status": {"0": "RUNNING", "1": "RUNNING"},
                "feedback": {"1": "checking"},
                "guards": {"1": {"phase": "checking"}},
                "events": [
                    {"kind": "check", "node": 1, "text": "check pick(Cup)", "query": "pick(Cup)"},
                    {
                        "kind": "verdict",
                        "node": 1,
                        "text": "none: fine",
                        "verdict": {
                            "category": "none",
                            "final_response": "none",
                            "explanation": "fine",
                            "trace": [{"role": "ground", "content": "Cup -> Cup_1"}],
                            "tool_calls": [
                                {"tool": "object_detection", "args": [], "result": ["Cup"]}
                            ],
                        },
                    },
                ],
            },
        ],
    }


# A mutation: a path into the trace and a new value (or a deletion).
BAD_VALUES = st.sampled_from(
    [None, True, 0, -1, 1.5, "", "RUNNING", "x y", [], {}, {"unexpected": 1}, [1, "a"]]
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


PATHS = _paths(_small_trace())[1:]


@settings(max_examples=300, deadline=None)
@given(
    path=st.sampled_from(PATHS),
    value=BAD_VALUES,
    delete=st.booleans(),
    extra=st.sampled_from([None, "surplus"]),
)
def test_our_validator_agrees_with_jsonschema(path, value, delete, extra):
    data = _small_trace()
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(value)
    if extra and isinstance(parent, dict):
        parent[extra] = 1
    official = not list(jsonschema.Draft202012Validator(schema()).iter_errors(data))
    ours = validate(data) == []
    assert ours == official, validate(data)


def test_errors_name_the_field():
    data = _small_trace()
    data["ticks"][1]["status"]["0"] = "DONE"
    (error,) = validate(data)
    assert error.startswith("$.ticks[1].status.0: 'DONE' is not one of")


def test_what_the_schema_cannot_say_is_checked_too():
    data = _small_trace()
    data["ticks"][1]["tick"] = 0
    assert check_trace(data) == ["$.ticks[1].tick: 0 does not follow tick 0"]
    data = _small_trace()
    data["ticks"][1]["status"]["7"] = "SUCCESS"
    assert check_trace(data) == ["$.ticks[1].status: node 7 is not in the tree"]
    data = _small_trace()
    data["tick_count"] = 1
    assert check_trace(data) == ["$.tick_count: 1 is below the last tick 2"]


def test_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(TraceError, match=r"missing.json: cannot read trace file \(No such file"):
        load_trace(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TraceError, match=r"bad.json: not JSON \(.* at line 1\)"):
        load_trace(bad)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"scenario": "medicine-delivery", "steps": []}))
    with pytest.raises(TraceError, match="not a bt_raider trace .*missing required field 'format'"):
        load_trace(old)
