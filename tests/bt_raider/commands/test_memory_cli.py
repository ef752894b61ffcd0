"""``bt-raider memory``: add, query, stats, calibrate, trim, delete, and bad input."""

from __future__ import annotations

import json
import os
import random

import pytest

from bt_raider.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.torch]  # the real MiniLM embeds (once per process)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "robot.db"
    records = tmp_path / "records.jsonl"
    records.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "information": "turn on the hall light",
                    "goal": "Active(HallLight)",
                    "record_id": "on",
                },
                {
                    "information": "turn off the hall light",
                    "goal": "~Active(HallLight)",
                    "record_id": "off",
                },
                {"information": "open the fridge", "goal": "Open(fridge)", "record_id": "fridge"},
                {
                    "information": "pick up the apple",
                    "goal": "Holding(apple)",
                    "record_id": "apple",
                },
            ]
        )
    )
    assert main(["memory", "add", "--db", str(path), "--file", str(records)]) == 0
    return path


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_single_and_idempotent(db, capsys):
    code, out, _ = run(
        capsys,
        "memory",
        "add",
        "close the fridge",
        "--goal",
        "~Open(fridge)",
        "--id",
        "close",
        "--metadata",
        '{"robot": "tiago"}',
        "--db",
        str(db),
    )
    assert code == 0 and out.splitlines() == ["close", "# 1 new record(s)"]
    code, out, _ = run(
        capsys,
        "memory",
        "add",
        "close the fridge",
        "--goal",
        "~Open(fridge)",
        "--id",
        "close",
        "--metadata",
        '{"robot": "tiago"}',
        "--db",
        str(db),
    )
    assert code == 0 and out.splitlines()[-1] == "# 0 new record(s)"


def test_query_drops_the_conflict_and_json_lists_it(db, capsys):
    code, out, _ = run(
        capsys,
        "memory",
        "query",
        "please turn on the hall light",
        "-k",
        "2",
        "--db",
        str(db),
        "--json",
        "--no-trim",
    )
    assert code == 0
    data = json.loads(out)
    assert data["examples"][0]["id"] == "on"
    assert [c["id"] for c in data["conflicts"]] == ["off"]
    assert data["conflicts"][0]["rule"] == "phi1" and data["cuts_added"] == 0
    code, out, _ = run(
        capsys,
        "memory",
        "query",
        "please turn on the hall light",
        "--naive",
        "-k",
        "2",
        "--db",
        str(db),
    )
    assert "turn off the hall light" in out  # the naive list keeps it
    code, out, _ = run(capsys, "memory", "query", "please turn on the hall light", "--db", str(db))
    assert "dropped as conflicting" in out and "links cut: 0" not in out


def test_stats_calibrate_trim_delete(db, tmp_path, capsys):
    code, out, _ = run(capsys, "memory", "stats", "--db", str(db), "--json")
    stats = json.loads(out)
    assert code == 0 and stats["live"] == 4 and stats["journal_mode"] == "wal"
    assert stats["theta_source"] == "default"

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "\n".join(
            json.dumps(p)
            for p in [
                {"a": "turn on the hall light", "b": "turn off the hall light", "conflict": True},
                {"a": "open the fridge", "b": "close the fridge", "conflict": True},
                {"a": "pass me an apple", "b": "pass me a bottle", "conflict": True},
                {"a": "open the fridge", "b": "open the fridge please", "conflict": False},
                {"a": "pick up the apple", "b": "grab the apple", "conflict": False},
                {"a": "open the fridge", "b": "slice the bread", "conflict": False},
            ]
        )
    )
    code, out, _ = run(capsys, "memory", "calibrate", str(pairs), "--db", str(db))
    assert code == 0 and out.startswith("theta = ") and "AUC" in out
    theta = float(out.split()[2])
    code, out, _ = run(capsys, "memory", "stats", "--db", str(db), "--json")
    assert json.loads(out)["theta"] == pytest.approx(theta, abs=1e-4)
    assert json.loads(out)["theta_source"] == "roc-youden"

    code, out, _ = run(capsys, "memory", "trim", "--db", str(db), "-k", "3")
    assert code == 0 and "4 queries" in out
    queries = tmp_path / "q.txt"
    queries.write_text("turn on the hall light please\n\n")
    code, out, _ = run(
        capsys, "memory", "trim", "--db", str(db), "--queries", str(queries), "--json"
    )
    assert json.loads(out)["queries"] == 1

    code, out, _ = run(capsys, "memory", "delete", "off", "--db", str(db), "--reason", "wrong")
    assert code == 0 and "deleted (kept in the history)" in out
    code, out, _ = run(capsys, "memory", "stats", "--db", str(db), "--json")
    assert json.loads(out)["deleted"] == 1 and json.loads(out)["records"] == 4


def test_bad_input_gives_a_clear_error_and_exit_2(db, tmp_path, capsys):
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_text("not a database at all" * 50)
    code, _, err = run(capsys, "memory", "stats", "--db", str(corrupt))
    assert code == 2 and "cannot open memory database" in err and "corrupt.db" in err

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"name": "r", "when": {"room": "same"}}]}))
    code, _, err = run(
        capsys, "memory", "query", "open the fridge", "--db", str(db), "--rules", str(rules)
    )
    assert code == 2 and "unknown slot 'room'" in err and "operation" in err

    code, _, err = run(capsys, "memory", "stats", "--db", str(tmp_path / "missing.db"))
    assert code == 2 and "no memory database" in err
    code, _, err = run(capsys, "memory", "add", "open the door", "--db", str(db))
    assert code == 2 and "--goal" in err
    code, _, err = run(capsys, "memory", "delete", "nope", "--db", str(db))
    assert code == 2 and "no record with id 'nope'" in err
    bad_pairs = tmp_path / "bad.jsonl"
    bad_pairs.write_text('{"a": "x", "b": "y", "conflict": true}\nnot json\n')
    code, _, err = run(capsys, "memory", "calibrate", str(bad_pairs), "--db", str(db))
    assert code == 2 and "line 2: invalid JSON" in err
    assert corrupt.read_text() == "not a database at all" * 50  # nothing lost


# -- every sub-command fails closed on bad files: one line on stderr, exit 2, nothing written

SUBCOMMANDS = {
    "add": ["add", "open the door", "--goal", "Open(door)"],
    "query": ["query", "open the fridge"],
    "stats": ["stats"],
    "calibrate": ["calibrate", "PAIRS"],
    "trim": ["trim"],
    "delete": ["delete", "on"],
}


def one_line_error(code: int, err: str, *names: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bt-raider memory: error: "), err
    assert "Traceback" not in err
    for name in names:
        assert name in lines[0], (name, lines[0])


def bad_database(tmp_path, db, kind: str):
    path = tmp_path / f"{kind}.db"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text('{"information": "open the fridge"}\n')
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:  # damaged: the header and schema page survive, every later page is garbage
        data = bytearray(db.read_bytes())
        page = int.from_bytes(data[16:18], "big")
        rng = random.Random(3)
        data[page:] = bytes(rng.randrange(256) for _ in range(len(data) - page))
        path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("kind", ["empty", "text", "directory", "fifo", "damaged"])
@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_a_bad_database_is_one_line_and_exit_2_for_every_subcommand(
    db, tmp_path, capsys, command, kind
):
    path = bad_database(tmp_path, db, kind)
    before = path.read_bytes() if path.is_file() else None
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"a": "open the fridge", "b": "close the fridge", "conflict": true}\n')
    argv = [str(pairs) if a == "PAIRS" else a for a in SUBCOMMANDS[command]]
    code, _, err = run(capsys, "memory", *argv, "--db", str(path))
    one_line_error(code, err, path.name)
    if before is not None:
        assert path.read_bytes() == before  # nothing written over it
    assert not (tmp_path / f"{kind}.db.hnsw").exists()


@pytest.mark.parametrize("kind", ["binary", "directory", "fifo", "missing"])
@pytest.mark.parametrize(
    "argv",
    [
        ["add", "--file", "INPUT"],
        ["calibrate", "INPUT"],
        ["trim", "--queries", "INPUT"],
    ],
    ids=["add", "calibrate", "trim"],
)
def test_a_bad_input_file_is_one_line_and_exit_2(db, tmp_path, capsys, argv, kind):
    bad = tmp_path / f"input-{kind}"
    if kind == "binary":
        bad.write_bytes(bytes(range(256)) * 16)
    elif kind == "directory":
        bad.mkdir()
    elif kind == "fifo":
        os.mkfifo(bad)  # reading it would block forever: it must be refused first
    before = db.read_bytes()
    argv = [str(bad) if a == "INPUT" else a for a in argv]
    code, _, err = run(capsys, "memory", *argv, "--db", str(db))
    one_line_error(code, err, bad.name)
    assert db.read_bytes() == before
    # A new database is not even created for input that cannot be read.
    fresh = tmp_path / "fresh.db"
    code, _, err = run(capsys, "memory", *argv, "--db", str(fresh))
    one_line_error(code, err)
    assert not fresh.exists()


def test_read_only_query_and_stats_write_nothing(db, capsys):
    before = db.read_bytes()
    db.chmod(0o444)
    code, out, _ = run(capsys, "memory", "query", "please turn on the hall light", "--db", str(db))
    assert code == 0 and "dropped as conflicting" in out and "links cut: 0" in out
    code, out, _ = run(capsys, "memory", "stats", "--db", str(db), "--json")
    assert code == 0 and json.loads(out)["live"] == 4
    code, _, err = run(capsys, "memory", "delete", "on", "--db", str(db))
    one_line_error(code, err, "read-only", "file mode 0444")
    db.chmod(0o644)
    code, _, err = run(capsys, "memory", "delete", "on", "--db", str(db), "--read-only")
    one_line_error(code, err, "read-only", "read_only=True")
    assert db.read_bytes() == before


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_a_damaged_database_says_so_in_one_line_and_names_the_fix(db, tmp_path, capsys, command):
    path = bad_database(tmp_path, db, "damaged")
    before = path.read_bytes()
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"a": "open the fridge", "b": "close the fridge", "conflict": true}\n')
    argv = [str(pairs) if a == "PAIRS" else a for a in SUBCOMMANDS[command]]
    code, out, err = run(capsys, "memory", *argv, "--db", str(path))
    one_line_error(code, err, "'" + str(path) + "' is damaged", "restore it from a backup")
    assert out == "" and path.read_bytes() == before
