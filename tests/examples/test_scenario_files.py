"""The medicine-delivery scenario reads its scene files as every scene is read
(bt_raider.files): a FIFO, a device or a non-UTF-8 file is one SceneFileError, never a hang."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from bt_raider.errors import InputFileError, SceneError, SceneFileError
from bt_raider.examples.medicine_delivery import scenario


def test_the_shipped_scene_loads_as_a_dict():
    data = scenario.load_scene_dict()
    assert isinstance(data, dict) and data["objects"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_in_place_of_the_scene_is_refused_without_blocking(tmp_path, monkeypatch):
    fifo = tmp_path / "scene.json"
    os.mkfifo(fifo)
    monkeypatch.setattr(scenario, "SCENE", fifo)
    box: list[BaseException | None] = []

    def load() -> None:
        try:
            scenario.load_scene_dict()
            box.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(10)
    assert box, "load_scene_dict blocked on a FIFO"
    assert isinstance(box[0], SceneFileError) and "named pipe" in str(box[0])
    assert isinstance(box[0], SceneError) and isinstance(box[0], InputFileError)


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"\xff\xfe{}", "UTF-16"),
        (b'{"objects": [] \x80}', "byte 0x80 at offset 15"),
        (b"[1, 2]", "a scene is a JSON object, got list"),
    ],
)
def test_a_bad_scene_file_is_one_scene_file_error(tmp_path, monkeypatch, content, fragment):
    bad = tmp_path / "scene.json"
    bad.write_bytes(content)
    monkeypatch.setattr(scenario, "SCENE", bad)
    with pytest.raises(SceneFileError) as err:
        scenario.load_scene_dict()
    assert str(err.value).startswith(str(bad)) and fragment in str(err.value)


def test_rebuilding_from_a_device_is_refused(tmp_path):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    out = tmp_path / "scene.json"
    with pytest.raises(SceneFileError, match="character device"):
        scenario.write_scene("/dev/zero", out)
    assert not out.exists()
