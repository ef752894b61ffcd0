"""``bt-raider memory`` names the machine's reason when it is not the input's: a full disk, an
address-space limit; an answer is printed only once the memory closed cleanly."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys

import pytest

from bt_raider.cli import main
from bt_raider.commands.memory import real_cause
from bt_raider.memory import VectorMemory
from bt_raider.memory.store import full_disk

pytestmark = [pytest.mark.slow, pytest.mark.torch]  # the real bundled MiniLM embeds


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "robot.db"
    assert (
        main(["memory", "add", "turn on the light", "--goal", "On(light)", "--db", str(path)]) == 0
    )
    return path


def test_stats_prints_nothing_when_closing_the_memory_fails_on_a_full_disk(db, capsys, monkeypatch):
    capsys.readouterr()

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(VectorMemory, "close", full)
    for argv in (["stats", "--json"], ["stats"]):
        code = main(["memory", *argv, "--db", str(db)])
        out, err = capsys.readouterr()
        assert code == 2 and out == ""  # not the answer, then an error
        assert len(err.strip().splitlines()) == 1 and "disk is full" in err
    monkeypatch.undo()
    assert main(["memory", "stats", "--json", "--db", str(db)]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == 1


def test_a_full_disk_is_named_whatever_sqlite_calls_it(tmp_path):
    import sqlite3

    path = tmp_path / "m.db"
    assert "disk is full" in full_disk(path, OSError(errno.ENOSPC, "No space left"))
    assert "disk is full" in full_disk(path, sqlite3.OperationalError("database or disk is full"))
    # A disk I/O error on a disk with room is not blamed on a full disk.
    assert full_disk(path, sqlite3.OperationalError("disk I/O error")) is None
    assert full_disk(path, sqlite3.DatabaseError("file is not a database")) is None


def test_out_of_memory_names_the_address_space_limit_not_a_reinstall(monkeypatch):
    monkeypatch.setattr(resource, "getrlimit", lambda which: (600 * 2**20, resource.RLIM_INFINITY))
    wrapped = RuntimeError("libtorch_cpu.so: failed to map segment from shared object")
    for exc in (MemoryError(), OSError(errno.ENOMEM, "Cannot allocate memory"), wrapped):
        cause = real_cause(exc)
        assert cause is not None and "ulimit -v" in cause and "600 MiB" in cause
    assert real_cause(RuntimeError("a bug")) is None
    assert real_cause(ValueError("bad value")) is None


def test_under_a_small_address_space_limit_the_command_says_so_in_one_line(db):
    limit = 700 * 2**20

    def small() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "-m", "bt_raider.cli", "memory", "query", "turn off the light",
         "--db", str(db)],
        preexec_fn=small, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("bt-raider")]
    assert len(lines) == 1 and "address-space limit (ulimit -v)" in lines[0]
    assert "Traceback" not in done.stderr and "prepare" not in lines[0]
    assert "reinstall" not in lines[0] and "pip install" not in lines[0]
