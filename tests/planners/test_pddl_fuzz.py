"""Fuzzing the PDDL files ``bt-raider plan`` reads, with Hypothesis: every input is a plan or a
one-line refusal, never a traceback or a hang.

Inputs: our two-rooms domain and problem with bytes truncated, flipped or inserted, a token
replaced by a hostile one (deep parentheses, a name of 10,000 characters, a number of 5,000
digits, non-ASCII), re-encoded (UTF-16, Latin-1 with accents), or either file swapped for what
is no file (a FIFO, a directory, a device, a missing path). Each runs the command in-process,
on a thread that the test waits for with a bound (a FIFO opened for reading would block it
forever), with a short ``--timeout``:

- exit 0 with the plan printed, or exit 2 with exactly one error line on stderr (progress
  lines, "planning: ...", aside) and no plan on stdout;
- never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.cli import main
from tests.shared_data import OWN_PDDL

pytest.importorskip("unified_planning", reason="the pddl extra is not installed")

DOMAIN = (OWN_PDDL / "two_rooms" / "domain.pddl").read_bytes()
PROBLEM = (OWN_PDDL / "two_rooms" / "problem.pddl").read_bytes()
#: The command's own bound, and the test's wait for it (far above it: a loaded machine).
TIMEOUT_S = 5
WAIT_S = 120
FUZZ = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
HOSTILE_TOKENS = [
    b"(" * 10_000,
    b")" * 50,
    b"x" * 10_000,
    b"9" * 5000,
    "b\u00e4ll".encode(),
    b"\x00",
    b"\xff\xfe",
    b";",
    b"(:requirements :durative-actions)",
]


@st.composite
def pddl_bytes(draw: st.DrawFn, base: bytes) -> bytes:
    kind = draw(st.sampled_from(["same", "truncate", "flip", "insert", "token", "encode"]))
    if kind == "same":
        return base
    if kind == "truncate":
        return base[: draw(st.integers(0, len(base)))]
    if kind == "flip":
        at = draw(st.integers(0, len(base) - 1))
        return base[:at] + bytes([draw(st.integers(0, 255))]) + base[at + 1 :]
    if kind == "insert":
        at = draw(st.integers(0, len(base)))
        return base[:at] + draw(st.binary(min_size=1, max_size=6)) + base[at:]
    if kind == "token":
        words = base.split(b" ")
        at = draw(st.integers(0, len(words) - 1))
        words[at] = draw(st.sampled_from(HOSTILE_TOKENS))
        return b" ".join(words)
    text = base.decode()
    if draw(st.booleans()):
        return text.encode("utf-16")
    return text.replace("ball", "b\u00e4ll").encode("latin-1")


NOT_FILES = ["fifo", "directory", "device", "missing"]


def place(workdir: Path, name: str, content: bytes | str) -> Path:
    """``workdir/name`` holding ``content``, or one of :data:`NOT_FILES` there."""
    path = workdir / name
    if path.is_dir():
        path.rmdir()
    else:
        path.unlink(missing_ok=True)
    if content == "fifo":
        os.mkfifo(path)
    elif content == "directory":
        path.mkdir()
    elif content == "device":
        return Path("/dev/zero")
    elif content != "missing":
        assert isinstance(content, bytes)
        path.write_bytes(content)
    return path


def plan(*argv: str) -> tuple[int, str, str]:
    """``bt-raider plan`` in-process on a thread: (exit status, stdout, stderr); fails the test
    if it does not return within WAIT_S."""
    out, err = io.StringIO(), io.StringIO()
    box: list[Any] = []

    def run() -> None:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                box.append(main(["plan", *argv]))
            except SystemExit as exc:
                box.append(exc.code if isinstance(exc.code, int) else 1)
            except BaseException as exc:  # noqa: BLE001 - a traceback is the failure shown
                box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT_S)
    assert box, f"bt-raider plan {' '.join(argv)} did not return in {WAIT_S} s"
    assert not isinstance(box[0], BaseException), repr(box[0])
    return box[0], out.getvalue(), err.getvalue()


def assert_contract(code: int, out: str, err: str) -> None:
    assert "Traceback" not in err and "Traceback" not in out
    if code == 0:
        assert "plan:" in out and "valid: yes" in out, out
        return
    assert code == 2, (code, out, err)
    assert "plan:" not in out
    errors = [line for line in err.splitlines() if not line.startswith("planning: ")]
    assert len(errors) == 1 and errors[0].startswith("bt-raider plan: error: "), err
    assert len(errors[0]) < 1000


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pddl-fuzz")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
@FUZZ
@given(
    domain=st.one_of(pddl_bytes(DOMAIN), st.sampled_from(NOT_FILES)),
    problem=st.one_of(pddl_bytes(PROBLEM), st.sampled_from(NOT_FILES)),
)
def test_plan_reads_any_pddl_files_into_a_plan_or_one_line(workdir, domain, problem):
    d = place(workdir, "domain.pddl", domain)
    p = place(workdir, "problem.pddl", problem)
    code, out, err = plan(str(d), str(p), "--engine", "pyperplan", "--timeout", str(TIMEOUT_S))
    assert_contract(code, out, err)
