"""Hostile files through ``bt-raider view`` and ``bt-raider plan``, and a 100 MB trace served
to 8 readers at once.

Every case runs the real console script in a subprocess with a timeout (a hang is a case that
neither ends nor serves within ``HANG_S``):

- **traces** (``view``): bytes that are not UTF-8, UTF-16/UTF-32, nesting 100,000 deep, an
  integer of 5,000 digits, ``NaN``/``Infinity``/``1e400``, a key twice, truncated or empty
  JSON, the wrong schema, ticks out of order, node ids of 5,000 digits, a FIFO, ``/dev/zero``,
  a directory, a symlink to a device, a sparse file over the cap... each run twice: serving
  (``--no-browser``; a served trace is stopped with Ctrl-C) and ``--html`` (nothing may be
  written on a refusal);
- **PDDL** (``plan --engine pyperplan``): the same families for a domain or a problem;
- **memory**: a 100 MB trace served by ``bt-raider view``; its resident memory (psutil) before
  8 concurrent readers fetch ``/trace.json`` twice each, and its peak while they do.

Targets: 0 tracebacks, 0 hangs, 0 files written on a refusal, every bad file refused in one
line with exit 2, the server's memory growth with 8 readers under a quarter of the trace's size
(one copy per reader would be 8 times the trace).

Usage::

    python3 benchmarks/reliability_files.py            # everything (a few minutes)
    python3 benchmarks/reliability_files.py --quick    # no 100 MB trace (a smoke run)

``run(args)`` returns ``(what, measured, target)`` rows for ``benchmarks/reliability.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[1]
PDDL = ROOT / "tests" / "data" / "pddl" / "two_rooms"
#: Seconds after which a case that neither ended nor served counts as a hang.
HANG_S = 60.0
#: ``--timeout`` given to ``plan`` (the search of the valid control takes well under it).
PLAN_TIMEOUT_S = 10


# ----------------------------------------------------------------------------- the trace cases
def base_trace() -> dict[str, Any]:
    """A small valid trace, as the recorder writes one (a root, a guard, three ticks)."""
    return {
        "format": "bt_raider.trace",
        "version": 1,
        "title": "bench",
        "started": "2026-01-01T00:00:00+00:00",
        "tick_count": 2,
        "finished": True,
        "ticks": [
            {
                "tick": 0,
                "t": 0.0,
                "add": [
                    {"id": 0, "name": "root", "type": "Sequence", "shape": "sequence",
                     "parent": None},
                    {"id": 1, "name": "pick", "type": "Running", "shape": "behaviour",
                     "parent": 0},
                ],
            },
            {"tick": 1, "t": 0.1, "status": {"0": "RUNNING", "1": "RUNNING"},
             "feedback": {"1": "picking"}, "events": [{"kind": "note", "text": "go"}]},
            {"tick": 2, "t": 0.2, "status": {"0": "SUCCESS", "1": "SUCCESS"}},
        ],
    }  # fmt: skip


def _text(edit: Callable[[dict[str, Any]], Any] | None = None) -> str:
    data = base_trace()
    if edit is not None:
        edit(data)
    return json.dumps(data)


def _sub(old: str, new: str) -> bytes:
    text = _text()
    assert old in text, old
    return text.replace(old, new, 1).encode("utf-8", "surrogatepass")


def _nested(depth: int) -> Any:
    out: Any = []
    for _ in range(depth):
        out = [out]
    return out


#: Special paths: made in the case's folder by :func:`make_special`.
SPECIAL = "special:"

TRACE_CASES: dict[str, bytes | str] = {
    "valid (control)": _text().encode(),
    "byte 0xff in a string": _sub('"bench"', '"ben\udcffch"'),
    "Latin-1 title": _sub('"bench"', '"caf\u00e9"').decode().encode("latin-1"),
    "UTF-16 with BOM": _text().encode("utf-16"),
    "UTF-16-LE without BOM": _text().encode("utf-16-le"),
    "UTF-32": _text().encode("utf-32"),
    "nesting 100,000 deep (arrays)": b"[" * 100_000 + b"]" * 100_000,
    "nesting 100,000 deep (objects)": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "nesting 150 deep in an event": _text(
        lambda d: d["ticks"][1]["events"][0].update(extra=_nested(150))
    ).encode(),
    "integer of 5,000 digits": _sub('"tick_count": 2', '"tick_count": ' + "9" * 5000),
    "integer of 400 digits in a tick": _sub('"tick": 2', '"tick": 1' + "0" * 399),
    "t NaN": _sub('"t": 0.1', '"t": NaN'),
    "t Infinity": _sub('"t": 0.1', '"t": Infinity'),
    "t -Infinity": _sub('"t": 0.1', '"t": -Infinity'),
    "t 1e400": _sub('"t": 0.1', '"t": 1e400'),
    "NaN in an event's own field": _sub('"text": "go"', '"text": "go", "score": NaN'),
    "a key twice": _sub('"title": "bench"', '"title": "bench", "title": "other"'),
    "truncated in half": _text().encode()[: len(_text()) // 2],
    "truncated to one byte": b"{",
    "empty file": b"",
    "whitespace only": b" \n\t\n",
    "an array, not an object": b"[1, 2, 3]",
    "wrong format": _sub('"bt_raider.trace"', '"other.trace"'),
    "wrong version": _sub('"version": 1', '"version": 2'),
    "ticks missing": json.dumps({k: v for k, v in base_trace().items() if k != "ticks"}).encode(),
    "ticks out of order": _sub('"tick": 2', '"tick": 1'),
    "node used before it is added": _sub('"1": "picking"', '"7": "picking"'),
    "node id of 5,000 digits": _sub('"1": "picking"', '"' + "1" * 5000 + '": "picking"'),
    "node id '1\\n'": _sub('"1": "picking"', '"1\\n": "picking"'),
    "status not a status": _sub('"0": "SUCCESS"', '"0": "DONE"'),
    "negative t": _sub('"t": 0.1', '"t": -0.1'),
    "tick_count below the last tick": _sub('"tick_count": 2', '"tick_count": 1'),
    "binary garbage": bytes(range(256)) * 8,
    "NUL bytes": b"\x00" * 64,
    "named pipe (FIFO)": SPECIAL + "fifo",
    "/dev/zero": "/dev/zero",
    "/dev/null": "/dev/null",
    "directory": SPECIAL + "directory",
    "missing file": SPECIAL + "missing",
    "symlink to /dev/zero": SPECIAL + "link-zero",
    "symlink loop": SPECIAL + "loop",
    "sparse 300 MB (over the 256 MiB cap)": SPECIAL + "sparse-300M",
}

PDDL_DOMAIN = (PDDL / "domain.pddl").read_bytes()
PDDL_PROBLEM = (PDDL / "problem.pddl").read_bytes()

#: name -> (domain, problem): bytes, a special, or None for the valid file.
PDDL_CASES: dict[str, tuple[bytes | str | None, bytes | str | None]] = {
    "valid (control)": (None, None),
    "domain starts \\xff\\xfe": (b"\xff\xfe(define", None),
    "domain in Latin-1": (PDDL_DOMAIN.replace(b"robby", "r\u00f6bby".encode("latin-1")), None),
    "problem in UTF-16": (None, PDDL_PROBLEM.decode().encode("utf-16")),
    "problem with a byte 0x80": (None, PDDL_PROBLEM + b"\x80"),
    "NUL bytes": (None, b"\x00" * 64),
    "FIFO domain": (SPECIAL + "fifo", None),
    "FIFO problem": (None, SPECIAL + "fifo"),
    "/dev/zero domain": ("/dev/zero", None),
    "/dev/null problem": (None, "/dev/null"),
    "directory domain": (SPECIAL + "directory", None),
    "missing problem": (None, SPECIAL + "missing"),
    "symlink to /dev/zero": (SPECIAL + "link-zero", None),
    "sparse 1 TiB problem": (None, SPECIAL + "sparse-1T"),
    "sparse 20 MB problem (over the 16 MiB cap)": (None, SPECIAL + "sparse-20M"),
    "truncated domain": (PDDL_DOMAIN[: len(PDDL_DOMAIN) // 2], None),
    "10,000 '(' left open": (None, b"(" * 10_000),
    "parentheses 100,000 deep": (None, b"(" * 100_000 + b")" * 100_000),
    "empty domain": (b"", None),
    "binary garbage": (bytes(range(256)) * 8, None),
    "number of 5,000 digits": (None, PDDL_PROBLEM.replace(b"ball3)", b"ball3 " + b"9" * 5000 + b")")),
    "object name of 10,000 characters": (None, PDDL_PROBLEM.replace(b"ball3", b"b" * 10_000)),
    "undeclared predicate": (None, PDDL_PROBLEM.replace(b"(free left)", b"(shiny left)")),
    "durative requirement": (PDDL_DOMAIN.replace(b"(:requirements", b"(:requirements :durative-actions"), None),
    "domain given as problem": (None, PDDL_DOMAIN),
    "comments only": (b"; nothing here\n; at all\n", None),
}  # fmt: skip


def make_special(kind: str, folder: Path, name: str) -> str:
    """A path that is no regular file (or too big a one), made in ``folder``."""
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "link-zero":
        path.symlink_to("/dev/zero")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind.startswith("sparse-"):
        size = {"sparse-300M": 300 * 10**6, "sparse-20M": 20 * 10**6, "sparse-1T": 2**40}[kind]
        with open(path, "wb") as f:
            f.truncate(size)
    return str(path)


def place(content: bytes | str, folder: Path, name: str) -> str:
    if isinstance(content, bytes):
        path = folder / name
        path.write_bytes(content)
        return str(path)
    if content.startswith(SPECIAL):
        return make_special(content.removeprefix(SPECIAL), folder, name)
    return content


# ----------------------------------------------------------------------------- running
@dataclass
class Outcome:
    family: str
    name: str
    mode: str
    kind: str  # refusal, served, planned, traceback, hang, broken, written
    seconds: float
    detail: str


def _command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "bt_raider.cli", *argv]


def _classify(code: int | None, out: str, err: str) -> tuple[str, str]:
    if "Traceback" in err or "Traceback" in out:
        return "traceback", err.strip().splitlines()[-1] if err.strip() else out[-200:]
    errors = [line for line in err.splitlines() if not line.startswith("planning: ")]
    if code == 2 and out == "" and len(errors) == 1 and ": error: " in errors[0]:
        return "refusal", errors[0]
    return "broken", f"exit {code}; out {out[:120]!r}; err {err[:200]!r}"


def run_view_served(path: str) -> tuple[str, float, str]:
    """``view PATH --no-browser``: served (then Ctrl-C), refused, or a hang."""
    start = time.monotonic()
    proc = subprocess.Popen(
        _command("view", path, "--no-browser"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout=HANG_S)
    if not ready:
        proc.kill()
        proc.communicate()
        return "hang", time.monotonic() - start, f"nothing within {HANG_S:g} s"
    first = proc.stdout.readline()
    if first.startswith("viewer: http://127.0.0.1:"):
        seconds = time.monotonic() - start
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=HANG_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return "hang", seconds, "did not stop on Ctrl-C"
        if proc.returncode == 0 and "Traceback" not in err:
            return "served", seconds, first.strip()
        return _classify(proc.returncode, first, err)[0], seconds, err[-200:]
    try:
        rest, err = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return "hang", time.monotonic() - start, "printed but did not end"
    kind, detail = _classify(proc.returncode, first + rest, err)
    return kind, time.monotonic() - start, detail


def run_once(argv: list[str]) -> tuple[str, float, str, int | None, str]:
    start = time.monotonic()
    try:
        proc = subprocess.run(
            _command(*argv), capture_output=True, text=True, timeout=HANG_S, errors="replace"
        )
    except subprocess.TimeoutExpired:
        return "hang", time.monotonic() - start, f"not ended within {HANG_S:g} s", None, ""
    kind, detail = _classify(proc.returncode, proc.stdout, proc.stderr)
    return kind, time.monotonic() - start, detail, proc.returncode, proc.stdout


def trace_outcomes(tmp: Path, verbose: bool) -> list[Outcome]:
    outcomes = []
    for i, (name, content) in enumerate(TRACE_CASES.items()):
        folder = tmp / f"trace{i}"
        folder.mkdir()
        path = place(content, folder, "trace.json")
        kind, seconds, detail = run_view_served(path)
        outcomes.append(Outcome("trace", name, "serve", kind, seconds, detail))
        page = folder / "page.html"
        kind, seconds, detail, code, _out = run_once(["view", path, "--html", str(page)])
        if kind == "broken" and code == 0 and page.exists():
            kind, detail = "served", f"page: {page}"
        elif kind == "refusal" and page.exists():
            kind, detail = "written", f"{page} written on a refusal"
        outcomes.append(Outcome("trace", name, "html", kind, seconds, detail))
        if verbose:
            print(f"  trace {name[:45]:45} {outcomes[-2].kind:9} {outcomes[-1].kind:9} "
                  f"{outcomes[-2].detail[:90]}")  # fmt: skip
    return outcomes


def pddl_outcomes(tmp: Path, verbose: bool) -> list[Outcome]:
    outcomes = []
    for i, (name, (domain, problem)) in enumerate(PDDL_CASES.items()):
        folder = tmp / f"pddl{i}"
        folder.mkdir()
        d = place(PDDL_DOMAIN if domain is None else domain, folder, "domain.pddl")
        p = place(PDDL_PROBLEM if problem is None else problem, folder, "problem.pddl")
        argv = ["plan", d, p, "--engine", "pyperplan", "--timeout", str(PLAN_TIMEOUT_S)]
        kind, seconds, detail, code, out = run_once(argv)
        if kind == "broken" and code == 0 and "plan:" in out:
            kind, detail = "planned", out.splitlines()[1] if "\n" in out else out
        outcomes.append(Outcome("pddl", name, "plan", kind, seconds, detail))
        if verbose:
            print(f"  pddl  {name[:45]:45} {kind:9} {seconds:5.1f} s  {detail[:100]}")
    return outcomes


# ----------------------------------------------------------------------------- memory
def write_big_trace(path: Path, target_bytes: int) -> int:
    """A valid trace of about ``target_bytes``: 50 nodes, statuses, feedback and an event per
    tick; returns its size."""
    nodes = [
        {"id": i, "name": f"node {i}", "type": "Sequence" if i == 0 else "Running",
         "shape": "sequence" if i == 0 else "behaviour", "parent": None if i == 0 else 0}
        for i in range(50)
    ]  # fmt: skip
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"format":"bt_raider.trace","version":1,"title":"big","started":')
        f.write('"2026-01-01T00:00:00+00:00","finished":true,"ticks":[')
        f.write(json.dumps({"tick": 0, "t": 0.0, "add": nodes}, separators=(",", ":")))
        n, size = 0, 0
        while size < target_bytes:
            n += 1
            entry = {
                "tick": n,
                "t": round(n * 0.1, 4),
                "status": {str(i): "RUNNING" if (n + i) % 2 else "SUCCESS" for i in range(1, 50, 3)},
                "feedback": {str(i): f"step {n} of node {i}: waiting" for i in range(1, 50, 5)},
                "events": [{"kind": "note", "text": f"tick {n}: something happened"}],
            }  # fmt: skip
            text = "," + json.dumps(entry, separators=(",", ":"))
            f.write(text)
            size += len(text)
        f.write(f'],"tick_count":{n}}}')
    return path.stat().st_size


def memory_with_readers(tmp: Path, readers: int = 8, rounds: int = 2) -> dict[str, float]:
    import psutil

    path = tmp / "big.json"
    size = write_big_trace(path, 100 * 10**6)
    start = time.monotonic()
    proc = subprocess.Popen(
        _command("view", str(path), "--no-browser"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("viewer: "):
            raise RuntimeError(f"the viewer did not start: {line!r} {proc.stderr.read()[-300:]!r}")
        ready_s = time.monotonic() - start
        url = line.split()[1] + "trace.json"
        server = psutil.Process(proc.pid)
        time.sleep(1.0)  # settle after loading
        before = server.memory_info().rss
        peak = before
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, server.memory_info().rss)
                time.sleep(0.02)

        received: list[int] = []

        def read() -> None:
            for _ in range(rounds):
                n = 0
                with urlopen(url, timeout=300) as response:
                    while chunk := response.read(1 << 20):
                        n += len(chunk)
                received.append(n)

        sampler = threading.Thread(target=sample)
        sampler.start()
        t0 = time.monotonic()
        threads = [threading.Thread(target=read) for _ in range(readers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        read_s = time.monotonic() - t0
        done.set()
        sampler.join()
        after = server.memory_info().rss
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    return {
        "size": size,
        "ready_s": ready_s,
        "before": before,
        "peak": peak,
        "after": after,
        "read_s": read_s,
        "complete": float(len(received) == readers * rounds and min(received) == max(received)),
        "body": float(received[0]) if received else 0.0,
    }


# ----------------------------------------------------------------------------- summary
def measure(quick: bool = False, verbose: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bt_raider_files_") as name:
        tmp = Path(name)
        outcomes = trace_outcomes(tmp, verbose) + pddl_outcomes(tmp, verbose)
        memory = None if quick else memory_with_readers(tmp)
    return {"outcomes": outcomes, "memory": memory}


def _target(value: float, limit: float, at_most: bool = True) -> str:
    ok = value <= limit if at_most else value >= limit
    return f"{'<=' if at_most else '>='} {limit:g} ({'ok' if ok else 'MISSED'})"


def summarise(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    outcomes: list[Outcome] = result["outcomes"]
    rows = []
    for family, label, good in (("trace", "malformed traces through view", "served"),
                                ("pddl", "malformed PDDL through plan", "planned")):  # fmt: skip
        mine = [o for o in outcomes if o.family == family]
        kinds = Counter(o.kind for o in mine)
        names = {o.name for o in mine}
        bad_kinds = len(names) - 1  # the valid control is not malformed
        least = 30 if family == "trace" else 20
        controls = [o for o in mine if o.name == "valid (control)"]
        good_controls = sum(o.kind == good for o in controls)
        # Some hostile inputs are still legal (a name of 10,000 characters): those may plan.
        accepted = {o.name for o in mine if o.kind == good and o.name != "valid (control)"}
        broken = kinds["broken"] + kinds["written"]
        rows += [
            (f"{label}: kinds", f"{bad_kinds}", _target(bad_kinds, least, at_most=False)),
            (f"{label}: runs", f"{len(mine)}", ""),
            (f"{label}: one-line refusals (exit 2)", f"{kinds['refusal']}", ""),
            (f"{label}: kinds accepted as legal input", f"{len(accepted)}", ""),
            (f"{label}: tracebacks", f"{kinds['traceback']}", _target(kinds["traceback"], 0)),
            (f"{label}: hangs (> {HANG_S:g} s)", f"{kinds['hang']}", _target(kinds["hang"], 0)),
            (f"{label}: other contract breaks", f"{broken}", _target(broken, 0)),
            (f"{label}: valid control {good}", f"{good_controls}/{len(controls)}",
             f"all ({'ok' if good_controls == len(controls) else 'MISSED'})"),
            (f"{label}: slowest (s)", f"{max(o.seconds for o in mine):.1f}", ""),
        ]  # fmt: skip
    memory = result["memory"]
    if memory is not None:
        mb = 10**6
        growth = (memory["peak"] - memory["before"]) / mb
        rows += [
            ("100 MB trace: size (MB)", f"{memory['size'] / mb:.1f}", ""),
            ("100 MB trace: read, checked, served in (s)", f"{memory['ready_s']:.1f}", ""),
            ("100 MB trace: server RSS before readers (MB)", f"{memory['before'] / mb:.0f}", ""),
            ("100 MB trace: server RSS peak, 8 readers x 2 (MB)", f"{memory['peak'] / mb:.0f}", ""),
            ("100 MB trace: server RSS after (MB)", f"{memory['after'] / mb:.0f}", ""),
            ("100 MB trace: RSS growth with 8 readers (MB)", f"{growth:.1f}",
             _target(growth, round(memory["size"] / mb / 4))),
            ("100 MB trace: 16 full bodies received in (s)", f"{memory['read_s']:.1f}", ""),
            ("100 MB trace: every reader got the whole body", "yes" if memory["complete"] else "no",
             "yes (ok)" if memory["complete"] else "yes (MISSED)"),
        ]  # fmt: skip
    return rows


def report(result: dict[str, Any]) -> None:
    bad = [o for o in result["outcomes"] if o.kind not in ("refusal", "served", "planned")]
    for o in bad:
        print(
            f"  {o.kind.upper()}: {o.family}/{o.mode}: {o.name} ({o.seconds:.1f} s) {o.detail[:200]}"
        )
    served = [
        o for o in result["outcomes"] if o.kind in ("served", "planned") and "control" not in o.name
    ]
    for o in served:
        print(f"  accepted: {o.family}/{o.mode}: {o.name}")


def run(args: Any = None) -> list[tuple[str, str, str]]:
    """For ``benchmarks/reliability.py``: run, print the detail, return the rows."""
    quick = bool(getattr(args, "quick", False))
    result = measure(quick=quick, verbose=bool(getattr(args, "verbose", False)))
    report(result)
    return summarise(result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="no 100 MB trace (a smoke run)")
    parser.add_argument("--verbose", action="store_true", help="one line per case")
    args = parser.parse_args(argv)
    rows = run(args)
    print()
    width = max(len(r[0]) for r in rows)
    for what, value, goal in rows:
        print(f"{what:{width}}  {value:>10}  {goal}")
    return 1 if any("MISSED" in r[2] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
