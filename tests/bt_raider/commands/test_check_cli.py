"""``bt-raider check``: JSON on stdout, --trace on stderr, exit 2 for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bt_raider.cli import main

KITCHEN = (
    Path(__file__).resolve().parents[3].parent / "shared" / "scenes" / "floorplan1_kitchen.json"
)
KEYS = ["final_response", "category", "explanation", "grounding", "objects", "tool_calls"]


def run(capsys, *argv):
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_the_verdict_json(capsys):
    code, out, err = run(capsys, "--scene", str(KITCHEN), "pick(Bowl)")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert list(data) == KEYS
    assert data["category"] == "none" and data["final_response"] == "none"
    assert data["grounding"] == {"Bowl": ["Bowl|+00.27|+01.10|-00.75"]}
    assert data["tool_calls"][-1] == {"tool": "dist_to_target", "args": ["Bowl"], "result": 0.57}


def test_issue_verdict_from_a_scene_variant(capsys, tmp_path, kitchen_dict):
    mug = next(o for o in kitchen_dict["objects"] if o["objectType"] == "Mug")
    kitchen_dict["inventoryObjects"] = [{"objectId": mug["objectId"], "objectType": "Mug"}]
    scene = tmp_path / "holding.json"
    scene.write_text(json.dumps(kitchen_dict))
    code, out, _ = run(capsys, "--scene", str(scene), "Could you pick up the tomato?")
    data = json.loads(out)
    assert code == 0
    assert (data["final_response"], data["category"]) == ("unfeasibility", "robot_state")
    assert "Mug" in data["explanation"]


def test_absent_object_is_a_verdict_not_an_error(capsys):
    code, out, err = run(capsys, "--scene", str(KITCHEN), "pick the banana")
    assert code == 0 and err == ""
    assert json.loads(out)["category"] == "not_present"


def test_trace_goes_to_stderr_and_stdout_stays_json(capsys):
    code, out, err = run(capsys, "--scene", str(KITCHEN), "--trace", "Grab the knife")
    assert code == 0
    assert json.loads(out)["category"] == "wrong_state"
    for label in ("[user]", "[ground]", "[ask]", "[tool]", "[answer]", "[issue]"):
        assert label in err
    assert "check_obj_relationship('inside', 'Drawer_9')" in err


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--scene", str(KITCHEN), "dance(Apple)"], "unknown action 'dance'"),
        (["--scene", str(KITCHEN), ""], "non-empty"),
        (["--scene", str(KITCHEN), "   "], "non-empty"),
        (["--scene", "/nonexistent/scene.json", "pick(Apple)"], "cannot read scene file"),
        (["--scene", str(KITCHEN), "place(Mug)"], "place needs 2 argument"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("not json", "not JSON"),
        ('{"objects": [{"objectId": 3}]}', "objects[0].objectId"),
        ('{"agent": {}}', "missing key 'objects'"),
    ],
)
def test_malformed_scene_exits_2(capsys, tmp_path, content, fragment):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, out, err = run(capsys, "--scene", str(bad), "pick(Apple)")
    assert code == 2 and out == ""
    assert fragment in err and str(bad) in err


def test_time_limit_option_reaches_the_reasoner(capsys):
    code, out, _ = run(capsys, "--scene", str(KITCHEN), "--time-limit", "1e-9", "pick(Bowl)")
    data = json.loads(out)
    assert code == 0 and data["category"] == "unknown"
    assert data["final_response"] == "unfeasibility"


def test_console_script_subprocess():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bt_raider.cli",
            "check",
            "--scene",
            str(KITCHEN),
            "(pick tiago apple counter)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["category"] == "out_of_reach"
