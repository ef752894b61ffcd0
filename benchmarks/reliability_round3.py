"""Fail closed, round 3: every row of issue 35 (items 2-6) refused in one line, exit 2, no
traceback, no hang; and the figures behind the rows that are about time.

Each command-line case runs the real console script in a subprocess with a timeout (``HANG_S``):
it must exit 2 with one line on stderr starting ``bt-raider`` (the machine's warnings apart),
nothing on stdout, no ``Traceback``. Library cases (``explore(rooms=...)``, ``plan_observed``,
look-ahead over repeated facts, the viewer under slow senders) run in-process on a thread that
is joined with the same timeout.

- files through the one door: ``memory --rules`` a FIFO, ``/dev/zero``, JSON 5,000 levels deep;
  an ``--embedder`` folder whose ``config.json`` is a FIFO; ``explore(rooms=...)`` a FIFO or
  ``/dev/zero``;
- text that is not Unicode: ``memory add --file`` with a lone surrogate (``"\\ud800"``), a
  non-UTF-8 byte in ``memory add`` / ``query`` / ``check`` arguments;
- limits: ``plan --max-ticks 0`` / ``-5``, ``--timeout inf`` / ``1e308``; a 60 MB
  ``objectType`` inside the 64 MiB scene cap (and how long the refusal takes);
- the machine's causes: ``memory query`` under ``ulimit -v`` 700 MiB; ``memory stats`` and
  ``query --read-only`` on a full disk (a 600 KiB tmpfs: needs root, else the rows say
  skipped); a ``memory prepare`` killed with SIGKILL mid-export, then run again (its
  ``.prepare-*`` folder must be gone);
- ``plan_observed`` with an ``observe`` that raises; 200,000 repeated facts to an all-clear;
- the viewer: 16 local sockets sending one byte every 10 s while a reader fetches the trace.

Usage::

    python3 benchmarks/reliability_round3.py            # everything (a few minutes)
    python3 benchmarks/reliability_round3.py --quick    # no prepare export, no 10 s trickle

``run(args)`` returns ``(what, measured, target)`` rows for ``benchmarks/reliability.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PDDL = ROOT / "tests" / "data" / "pddl" / "two_rooms"
KITCHEN = ROOT / "bt_raider" / "testing" / "data" / "kitchen.json"
MEDICINE = ROOT / "examples" / "medicine_delivery"
#: Seconds after which a case that has not ended counts as a hang.
HANG_S = 120.0
#: Seconds a whole ``memory prepare`` export may take (about a minute on 2 cores).
EXPORT_S = 900.0
BT = [sys.executable, "-m", "bt_raider.cli"]
ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}


def one_line(done: subprocess.CompletedProcess[str] | None) -> tuple[bool, str]:
    """Whether a finished command refused in one line with exit 2; and that line."""
    if done is None:
        return False, "HANG"
    lines = [line for line in done.stderr.splitlines() if line.startswith("bt-raider")]
    ok = (
        done.returncode == 2
        and len(lines) == 1
        and "Traceback" not in done.stderr
        and done.stdout.strip() == ""
    )
    return ok, (lines[0] if lines else done.stderr.strip()[-200:])


def cli(
    argv: list[str], hang_s: float = HANG_S, **kwargs: Any
) -> tuple[subprocess.CompletedProcess[str] | None, float]:
    """Run ``bt-raider ARGV`` bounded by ``hang_s``: (the result or None on a hang, seconds)."""
    start = time.perf_counter()
    try:
        kwargs.setdefault("env", ENV)
        done = subprocess.run(
            [*BT, *argv], capture_output=True, text=True, timeout=hang_s, **kwargs
        )
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - start
    return done, time.perf_counter() - start


def bounded(call: Callable[[], Any], seconds: float = HANG_S) -> tuple[Any, BaseException | None]:
    """``call()`` on a thread joined with ``seconds``: (result, exception); raises on a hang."""
    box: list[tuple[Any, BaseException | None]] = []

    def run() -> None:
        try:
            box.append((call(), None))
        except BaseException as exc:  # noqa: BLE001 - reported as the row
            box.append((None, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if not box:
        raise TimeoutError("HANG")
    return box[0]


Row = tuple[str, str, str]


def row(what: str, ok: bool, measured: str, target: str = "exit 2, one line") -> Row:
    return what, measured[:110], f"{target} ({'ok' if ok else 'MISSED'})"


def refusal_row(what: str, argv: list[str], words: str = "", **kwargs: Any) -> Row:
    done, seconds = cli(argv, **kwargs)
    ok, line = one_line(done)
    ok = ok and words.lower() in line.lower()
    return row(what, ok, f"{seconds:.1f} s: {line}")


# ----------------------------------------------------------------------------- the cases
def file_rows(tmp: Path, db: Path) -> list[Row]:
    fifo = tmp / "rules.fifo"
    os.mkfifo(fifo)
    deep = tmp / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    model = tmp / "model"
    model.mkdir()
    os.mkfifo(model / "config.json")
    query = ["memory", "query", "turn off the lamp", "--db", str(db)]
    rows = [
        refusal_row("memory --rules a FIFO", [*query, "--rules", str(fifo)], "named pipe"),
        refusal_row("memory --rules /dev/zero", [*query, "--rules", "/dev/zero"], "device"),
        refusal_row("memory --rules 5,000 levels deep", [*query, "--rules", str(deep)], "deep"),
        refusal_row(
            "memory --embedder folder, config.json a FIFO",
            [
                "memory",
                "add",
                "a",
                "--goal",
                "b",
                "--db",
                str(tmp / "new.db"),
                "--embedder",
                str(model),
            ],
            "named pipe",
        ),
    ]
    from bt_raider.testing.explore import explore

    for label, room in (("a FIFO", fifo), ("/dev/zero", Path("/dev/zero"))):
        try:
            _, exc = bounded(lambda room=room: explore(rooms={"r": room}, episodes=1), 30.0)
            line = f"{type(exc).__name__}: {exc}" if exc else "accepted"
            ok = exc is not None and "\n" not in str(exc) and str(room) in str(exc)
        except TimeoutError:
            ok, line = False, "HANG"
        rows.append(row(f"explore(rooms=...) {label}", ok, line, "refused in one line"))
    return rows


def text_rows(tmp: Path, db: Path) -> list[Row]:
    surrogate = tmp / "records.jsonl"
    surrogate.write_text('{"information": "turn \\ud800 on", "goal": "On(lamp)"}\n')
    bad = os.fsdecode(b"turn on the \xff lamp")
    return [
        refusal_row(
            "memory add --file, a lone surrogate",
            ["memory", "add", "--file", str(surrogate), "--db", str(db)],
            "offset",
        ),
        refusal_row(
            "memory add, byte 0xff in argv",
            ["memory", "add", bad, "--goal", "On(lamp)", "--db", str(db)],
            "offset 12",
        ),
        refusal_row(
            "memory query, byte 0xff in argv",
            ["memory", "query", bad, "--db", str(db)],
            "offset 12",
        ),
        refusal_row(
            "check, byte 0xff in the query",
            ["check", "--scene", str(KITCHEN), bad],
            "offset 12",
        ),
    ]


def limit_rows(tmp: Path) -> list[Row]:
    plan = ["plan", str(PDDL / "domain.pddl"), str(PDDL / "problem.pddl")]
    rows = [
        refusal_row("plan --max-ticks 0", [*plan, "--run", "--max-ticks", "0"], "--max-ticks"),
        refusal_row("plan --max-ticks -5", [*plan, "--run", "--max-ticks=-5"], "--max-ticks"),
        refusal_row("plan --timeout inf", [*plan, "--timeout", "inf"], "--timeout"),
        refusal_row("plan --timeout 1e308", [*plan, "--timeout", "1e308"], "--timeout"),
    ]
    big = tmp / "big.json"
    scene = json.loads(KITCHEN.read_text())
    scene["objects"][0]["objectType"] = "A" * (60 * 2**20)
    big.write_text(json.dumps(scene))
    done, seconds = cli(["check", "--scene", str(big), "pick the apple"])
    ok, line = one_line(done)
    ok = ok and "characters" in line and seconds < 5.0
    rows.append(row("check, a 60 MB objectType", ok, f"{seconds:.1f} s: {line}", "< 5 s, one line"))
    return rows


def machine_rows(tmp: Path, db: Path, quick: bool) -> list[Row]:
    limit = 700 * 2**20

    def small() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    rows = [
        refusal_row(
            "memory query under ulimit -v 700 MiB",
            ["memory", "query", "turn off the lamp", "--db", str(db)],
            "address-space limit",
            preexec_fn=small,
        )
    ]
    rows += full_disk_rows(tmp, db)
    rows.append(
        prepare_row(tmp)
        if not quick
        else ("memory prepare killed, run again", "", "--quick: skipped")
    )
    return rows


def full_disk_rows(tmp: Path, db: Path) -> list[Row]:
    disk = tmp / "full"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        why = "needs root to mount a small tmpfs"
        return [("memory stats on a full disk", "skipped", why)]
    try:
        for name in (db.name, db.name + ".hnsw", db.name + ".hnsw.json"):
            if (db.parent / name).exists():
                shutil.copy(db.parent / name, disk / name)
        try:
            with open(disk / "fill", "wb") as fill:  # noqa: PTH123 - a benchmark's own file
                while True:
                    fill.write(b"\0" * 4096)
                    fill.flush()
        except OSError:
            pass  # full
        full = disk / db.name
        return [
            refusal_row("memory stats --json on a full disk", ["memory", "stats", "--json",
                        "--db", str(full)], "disk is full"),
            refusal_row("memory query --read-only on a full disk", ["memory", "query", "x",
                        "--read-only", "--db", str(full)], "disk is full"),
        ]  # fmt: skip
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def prepare_row(tmp: Path) -> Row:
    """``memory prepare`` killed with SIGKILL mid-export, then run again."""
    cache = tmp / "cache"
    env = {**ENV, "BT_RAIDER_CACHE": str(cache)}
    process = subprocess.Popen(
        [*BT, "memory", "prepare"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    end = time.monotonic() + HANG_S
    while time.monotonic() < end and not list(cache.glob(".prepare-*/owner.pid")):
        if process.poll() is not None:
            break
        time.sleep(0.05)
    left = list(cache.glob(".prepare-*"))
    process.send_signal(signal.SIGKILL)
    process.wait()
    if not left:
        return ("memory prepare killed, run again", "no work folder seen", "(MISSED)")
    done, seconds = cli(["memory", "prepare"], hang_s=EXPORT_S, env=env)  # a whole export
    gone = not any(p.exists() for p in left) and done is not None and done.returncode == 0
    return row(
        "memory prepare killed (SIGKILL), run again",
        gone,
        f"{len(left)} leftover folder(s), {'removed' if gone else 'STILL THERE'}; "
        f"rerun {seconds:.0f} s",
        "removed, exit 0",
    )


def planning_rows() -> list[Row]:
    from bt_raider.errors import PlanningError
    from bt_raider.planners import pddl
    from bt_raider.planners.lookahead import forecast_pddl
    from bt_raider.planners.replan import ObservedState, plan_observed

    domain = (PDDL / "domain.pddl").read_text()
    problem = (PDDL / "problem.pddl").read_text()

    def observe() -> list[str]:
        raise ConnectionError("the camera node is gone")

    _, exc = bounded(lambda: plan_observed(ObservedState(domain, problem, observe), "pyperplan"))
    ok = isinstance(exc, PlanningError) and "observe() raised ConnectionError" in str(exc)
    rows = [row("plan_observed, observe() raises", ok, f"{type(exc).__name__}: {exc}",
                "PlanningError naming it")]  # fmt: skip
    medicine = pddl.load(MEDICINE / "domain.pddl", MEDICINE / "problem.pddl")
    plan = list(pddl.solve(medicine, engine="pyperplan", timeout=60).actions)
    facts = [str(f) for f in _initial_facts(medicine)]
    start = time.perf_counter()
    result, exc = bounded(lambda: forecast_pddl(medicine, plan, facts * (200_000 // len(facts))))
    took = time.perf_counter() - start
    ok = exc is None and result is None and took < 2.0
    rows.append(row("200,000 repeated facts to an all-clear", ok, f"{took:.2f} s",
                    "all clear, < 2 s (was 10.6 s)"))  # fmt: skip
    return rows


def _initial_facts(problem: Any) -> list[str]:
    """The problem's true initial facts as PDDL text: ``(robot_at tiago home)``."""
    out = []
    for fluent, value in problem.initial_values.items():
        if value.is_true() and fluent.is_fluent_exp():
            args = " ".join(str(a) for a in fluent.args)
            out.append(f"({fluent.fluent().name}{' ' + args if args else ''})")
    return out


def viewer_rows(quick: bool) -> list[Row]:
    from urllib.request import urlopen

    from bt_raider.viewer.server import HEADER_TIMEOUT_S, ViewerServer

    every = 2.0 if quick else 10.0
    trace = {
        "format": "bt_raider.trace", "version": 1, "title": "bench",
        "started": "2026-01-01T00:00:00+00:00", "tick_count": 0, "finished": True, "ticks": [],
    }  # fmt: skip
    stop = threading.Event()
    with ViewerServer(trace) as server:
        slow = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(16)]
        request = b"GET /trace.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"

        def trickle() -> None:
            for i in range(int(40 / every) + 1):
                for sock in slow:
                    try:
                        sock.send(request[i : i + 1])
                    except OSError:
                        pass
                if stop.wait(every):
                    return

        thread = threading.Thread(target=trickle, daemon=True)
        thread.start()
        served, waits, start = 0, [], time.monotonic()
        try:
            time.sleep(0.5)
            while time.monotonic() - start < 2.5 * every:
                t0 = time.perf_counter()
                try:
                    with urlopen(server.url + "trace.json", timeout=5) as answer:
                        served += answer.status == 200
                except OSError:
                    pass
                waits.append(time.perf_counter() - t0)
                time.sleep(every / 4)
            # Every trickler is closed at the header deadline (10 s from its connection).
            time.sleep(max(0.0, start + HEADER_TIMEOUT_S + 1.5 - time.monotonic()))
            closed = 0
            for sock in slow:
                sock.settimeout(0.1)
                try:
                    closed += sock.recv(10) == b""
                except (BlockingIOError, TimeoutError):
                    pass
                except OSError:
                    closed += 1
        finally:
            stop.set()
            thread.join(5)
            for sock in slow:
                sock.close()
    ok = served == len(waits) and max(waits) < 2.0
    return [
        row(f"viewer: reader while 16 sockets trickle (1 byte/{every:g} s)", ok,
            f"{served}/{len(waits)} served (200), slowest {max(waits):.2f} s",
            "all served, < 2 s"),
        row("viewer: trickling sockets closed by the server", closed == 16,
            f"{closed}/16 closed by {time.monotonic() - start:.0f} s (header deadline "
            f"{HEADER_TIMEOUT_S:g} s)", "16/16"),
    ]  # fmt: skip


# ----------------------------------------------------------------------------- run
def make_db(tmp: Path) -> Path:
    db = tmp / "memory.db"
    done, _ = cli(["memory", "add", "turn on the lamp", "--goal", "On(lamp)", "--db", str(db)])
    if done is None or done.returncode != 0:
        raise SystemExit(f"cannot make the memory: {done and done.stderr}")
    return db


def run(args: Any = None) -> list[Row]:
    quick = bool(getattr(args, "quick", False))
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="round3-") as name:
        tmp = Path(name)
        db = make_db(tmp)
        for part in (
            lambda: file_rows(tmp, db),
            lambda: text_rows(tmp, db),
            lambda: limit_rows(tmp),
            lambda: machine_rows(tmp, db, quick),
            planning_rows,
            lambda: viewer_rows(quick),
        ):
            for r in part():
                print(f"  {r[0]:<48} {r[1]}  [{r[2]}]", flush=True)
                rows.append(r)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="no prepare export, 2 s trickle")
    rows = run(parser.parse_args(argv))
    return 1 if any("MISSED" in r[2] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
