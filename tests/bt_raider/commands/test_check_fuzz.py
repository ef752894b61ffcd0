"""Fuzzing ``bt-raider check`` with Hypothesis: every input is a verdict or a one-line refusal.

Inputs: AI2-THOR-like scenes generated with random and extreme numbers, missing keys and wrong
types; real scenes (the project's small kitchen, and FloorPlan1 when ../shared is there) with
one field replaced; byte garbage and truncated JSON; random queries. For each:

- exit 0 with exactly one JSON object on stdout (and nothing on stderr), or exit 2 with
  exactly one line on stderr (and nothing on stdout); never a traceback;
- within 5 s;
- never a ``none`` verdict on a scene holding a number the format forbids (not finite, or
  geometry beyond 1e4 m).

Most examples call :func:`bt_raider.cli.main` in-process with stdout and stderr captured (a
subprocess costs a second); a few run the real console script.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.cli import main
from bt_raider.testing.scenes import KITCHEN_PATH
from tests.shared_data import KITCHEN

KEYS = ["final_response", "category", "explanation", "grounding", "objects", "tool_calls"]
#: Seconds one example may take (in-process; generous for a loaded 2-core machine).
LIMIT_S = 5.0
#: The format's bound on geometry (perception/values.py's MAX_MAGNITUDE), restated here so
#: the oracle does not trust the code under test.
BOUND = 1e4
FUZZ = settings(
    max_examples=40,
    deadline=None,  # the 5 s bound is asserted per example below, with a clear message
    database=None,  # nothing written into the repository
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------- running the CLI


def run_check(scene_path: Path | str, query: str, *extra: str) -> tuple[int, str, str, float]:
    """``bt-raider check`` in-process: (exit status, stdout, stderr, seconds)."""
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["check", "--scene", str(scene_path), *extra, "--", query])
        except SystemExit as exc:  # usage errors exit like argparse
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start


def assert_contract(code: int, out: str, err: str, seconds: float, data: Any = None) -> None:
    """The ``check`` contract of docs/scene-format.md section 4, and fail-closed."""
    assert seconds < LIMIT_S, f"took {seconds:.1f} s"
    assert "Traceback" not in err
    if code == 0:
        assert err == "" and out.endswith("\n") and out.count("\n") == 1, (out, err)
        verdict = json.loads(out)
        assert isinstance(verdict, dict) and list(verdict) == KEYS
        if data is not None and forbidden_number(data):
            assert verdict["category"] != "none", f"fail-open: {verdict['explanation']}"
    else:
        assert code == 2, (code, err)
        assert out == "" and err.endswith("\n") and err.count("\n") == 1, err
        assert err.startswith("bt-raider check: error: ")


def forbidden_number(data: Any) -> bool:
    """Whether the scene holds a number the format forbids: not finite anywhere, geometry
    beyond :data:`BOUND`, or a reach or handover distance that is not positive."""
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, geometry = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            geo = geometry or key in ("position", "center", "size", "cornerPoints", "locations")
            if isinstance(value, (dict, list)):
                stack.append((value, geo))
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            elif isinstance(value, float) and not math.isfinite(value):
                return True
            elif abs(value) > sys.float_info.max or (geo and abs(value) > BOUND):
                return True
    robot = data.get("robot") if isinstance(data, dict) else None
    if isinstance(robot, dict):
        for key in ("reach", "handover_distance"):
            value = robot.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
                return True
    return False


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def write(workdir: Path, content: bytes | str) -> Path:
    path = workdir / "scene.json"
    path.write_bytes(
        content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    )
    return path


# --------------------------------------------------------------------------- strategies
EXTREMES = [0.0, -0.0, 1e4, -1e4, 1e4 + 1, 1e308, -1e308, 5e-324, math.nan, math.inf, -math.inf]
numbers = st.one_of(
    st.floats(min_value=-3.0, max_value=3.0),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(EXTREMES),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.integers(min_value=-(10**400), max_value=10**400),
)
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=8),
    st.just([]),
    st.just({}),
    st.lists(numbers, max_size=3),
    numbers,
)
TYPES = ["Apple", "Bowl", "Mug", "Fridge", "CounterTop", "Knife", "Tomato", "CoffeeMachine"]


@st.composite
def xyz(draw: st.DrawFn) -> dict[str, Any]:
    point = {k: draw(numbers) for k in ("x", "y", "z")}
    if draw(st.booleans()):
        point[draw(st.sampled_from(["x", "y", "z"]))] = draw(junk)
    if draw(st.integers(0, 9)) == 0:
        point.pop(draw(st.sampled_from(["x", "y", "z"])))
    return point


@st.composite
def thor_object(draw: st.DrawFn, index: int) -> dict[str, Any]:
    otype = draw(st.sampled_from(TYPES))
    obj: dict[str, Any] = {
        "objectId": f"{otype}|{index}",
        "objectType": otype,
        "position": draw(xyz()),
        "pickupable": draw(st.booleans()),
        "openable": draw(st.booleans()),
        "isOpen": draw(st.booleans()),
        "toggleable": draw(st.booleans()),
        "receptacle": draw(st.booleans()),
        "parentReceptacles": None,
    }
    if draw(st.booleans()):
        obj["axisAlignedBoundingBox"] = {"center": draw(xyz()), "size": draw(xyz())}
    if draw(st.booleans()):
        obj["distance"] = draw(numbers)
    return obj


@st.composite
def generated_scenes(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(0, 5))
    data: dict[str, Any] = {
        "objects": [draw(thor_object(i)) for i in range(n)],
        "agent": {"position": draw(xyz()), "rotation": {"y": draw(numbers)}},
        "inventoryObjects": [],
    }
    if draw(st.booleans()):
        data["robot"] = {
            "reach": draw(numbers),
            "handover_distance": draw(numbers),
            "arms": draw(st.one_of(st.integers(-1, 3), numbers)),
        }
    if draw(st.booleans()):
        data["humans"] = [
            {
                "id": "person_1",
                "name": draw(st.sampled_from(["Adriana", None])),
                "position": draw(xyz()),
                "looking_at_robot": draw(st.one_of(st.booleans(), junk)),
                "hands_free": draw(st.booleans()),
            }
        ]
    if draw(st.booleans()):
        data["locations"] = {"counter": draw(xyz())}
    # Wrong types and missing keys at the top.
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(["objects", "agent", "robot", "humans", "blocked", "extra"]))
        if draw(st.booleans()):
            data.pop(key, None)
        else:
            data[key] = draw(junk)
    return data


queries = st.one_of(
    st.sampled_from(
        [
            "pick(Apple)",
            "open the fridge",
            "pick the apple to the left of the bowl",
            "place(Mug, CoffeeMachine)",
            "(pick tiago apple counter)",
            "hand the apple to Adriana",
            "approach(counter)",
            "-pick",
            "--",
            "-",
        ]
    ),
    st.text(max_size=60),
    st.builds(
        lambda unit, n: unit * n,
        st.sampled_from(["pick the apple ", "on the bowl ", "x"]),
        st.integers(0, 2100),
    ),
)


def _leaves(data: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every value in a scene, for mutating one."""
    out: list[tuple[Any, Any]] = []
    stack = [data]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            out.append((node, key))
            if isinstance(value, (dict, list)):
                stack.append(value)
    return out


REAL_SCENES = [KITCHEN_PATH] + ([KITCHEN] if KITCHEN.exists() else [])
_REAL_TEXT = {p: p.read_text() for p in REAL_SCENES}


# --------------------------------------------------------------------------- the properties
@FUZZ
@given(data=generated_scenes(), query=queries)
def test_generated_scenes_and_queries(workdir, data, query):
    path = write(workdir, json.dumps(data))  # NaN and Infinity as JSON's common extensions
    code, out, err, seconds = run_check(path, query)
    assert_contract(code, out, err, seconds, data)


@FUZZ
@given(
    scene=st.sampled_from(REAL_SCENES),
    pick=st.integers(min_value=0),
    value=junk,
    delete=st.booleans(),
    query=st.sampled_from(["pick(Bowl)", "pick the apple", "open the fridge", "pick a fruit"]),
)
def test_real_scenes_with_one_field_replaced(workdir, scene, pick, value, delete, query):
    data = json.loads(_REAL_TEXT[scene])
    leaves = _leaves(data)
    node, key = leaves[pick % len(leaves)]
    if delete and isinstance(node, dict):
        del node[key]
    else:
        node[key] = value
    path = write(workdir, json.dumps(data))
    code, out, err, seconds = run_check(path, query)
    assert_contract(code, out, err, seconds, data)


@FUZZ
@given(
    content=st.one_of(
        st.binary(max_size=3000),
        st.builds(
            lambda text, cut: text[:cut],
            st.sampled_from([_REAL_TEXT[KITCHEN_PATH]]),
            st.integers(0, 4000),
        ),
        st.builds(lambda n: "[" * n + "]" * n, st.integers(0, 200_000)),
        st.builds(lambda n: '{"objects": [], "n": ' + "9" * n + "}", st.integers(1, 6000)),
        st.text(max_size=200).map(lambda t: t.encode("utf-16")),
    ),
)
def test_byte_garbage_and_truncated_json(workdir, content):
    path = write(workdir, content)
    code, out, err, seconds = run_check(path, "pick(Apple)")
    assert_contract(code, out, err, seconds)


@settings(FUZZ, max_examples=25)
@given(query=st.text(max_size=2500))
def test_any_query_on_the_small_kitchen(query):
    code, out, err, seconds = run_check(KITCHEN_PATH, query)
    assert_contract(code, out, err, seconds)


@pytest.mark.parametrize(
    "content",
    [
        bytes(range(256)) * 8,
        b'{"objects": [], "agent": {"position": {"x": NaN, "z": 0}}}',
        b"[" * 100_000,
    ],
    ids=["binary", "nan-agent", "deep"],
)
def test_the_real_console_script_keeps_the_contract(tmp_path, content):
    path = tmp_path / "scene.json"
    path.write_bytes(content)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "bt_raider.cli", "check", "--scene", str(path), "pick(Apple)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_contract(proc.returncode, proc.stdout, proc.stderr, 0.0)
    assert proc.returncode == 2 and time.monotonic() - start < 60
