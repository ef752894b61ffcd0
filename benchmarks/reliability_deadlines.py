"""Deadlines under load: hung checks do not hold up other guards; --time-limit bounds wall time.

(a) A tree of 200 guards (each around the user's own step, under one ``Parallel``) on a pool of
    8 threads, the shared pool's size. Each check takes ``--check-s`` (a call that waits on
    I/O); in the second run 50 of them hang (they wait on an event and ignore their cancel
    event, like a call that cannot be interrupted). Printed: the other guards' p50/p95 time to
    their verdict in both runs and the ratio of the p95s (target <= 2x), and when the hung
    guards failed closed against their ``deadline``.
    The same on a cold pool (not warmed up): 8 checks that block first take every thread
    before any check has finished; the 192 quick guards' p95 against the run without them
    (target <= 2x). Before, stand-ins started only once a job had finished: the quick guards
    waited for the blocked ones' deadline (30.5 s).
(c) Round 3: 80 checks that ignore their cancel event on the shared pool's sizes (8 threads, 64
    extra: 72 start, 8 never can), then 20 new guards: every guard ends within its deadline
    (a check's deadline counts from its submission; one that cannot start fails closed).
    Before, the 8 and every later guard stayed RUNNING ("checking ...") for ever.
(d) Round 3: guards whose slow checks (``--slow-s``, ignoring cancel) are stopped, the checks
    then finishing late; then blocked checks and quick guards on the same pool. Printed: the
    quick guards' first verdict against the same tree on a fresh pool (target <= 2x). Before,
    the pool learned from the stopped checks that a job takes 5 s and waited 3x that before
    standing in for the blocked ones (20 s against 0.3 s).
(b) ``bt-raider check --backend openai --time-limit S`` against a server on 127.0.0.1 that
    sends its reply one byte every 0.5 s. Printed: the command's wall time and its overrun
    past S (target <= 1 s; the interpreter's start-up counts).

Run: ``python3 benchmarks/reliability_deadlines.py`` (``--help`` for sizes). ``run(args)``
returns the rows, for ``benchmarks/reliability.py``.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.robot.worker import SHARED_MAX_EXTRA, SHARED_WORKERS, WorkerPool, submit
from bt_raider.runtime.guards import Phase, RaiderGuard

# --------------------------------------------------------------------------- (a) hung checks


class IOCheck:
    """Takes ``seconds`` (waiting, as on a socket), then finds no issue."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        time.sleep(self.seconds)
        return Verdict(Category.NONE, f"{query} can run", action="pick")


class HungCheck:
    """Never returns until ``release`` is set; ignores its cancel event."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        self.release.wait(600)
        return Verdict(Category.NONE, "too late", action="pick")


class Step(py_trees.behaviour.Behaviour):
    """The user's own action: succeeds at once."""

    def update(self) -> Status:
        return Status.SUCCESS


def guard_latencies(
    guards: int,
    hung: int,
    check_s: float,
    deadline: float,
    hz: float,
    *,
    warm: bool = True,
    hung_first: bool = False,
) -> dict[str, Any]:
    """Tick a tree of ``guards`` guards (every ``guards // hung``-th one hung) to the end.

    ``warm``: the pool's threads started before the first tick (else a cold pool, as a robot
    that never warms it). ``hung_first``: the first ``hung`` guards hang, so they take every
    thread of a cold pool before any check has finished; the run then ends when the others
    have their verdicts (the hung ones would fail closed only at ``deadline``).
    """
    pool = WorkerPool(SHARED_WORKERS, max_extra=SHARED_MAX_EXTRA, name="bench")
    if warm:
        pool.warm_up()
    release = threading.Event()
    every = guards // hung if hung else 0
    if hung_first:
        is_hung = [i < hung for i in range(guards)]
    else:
        is_hung = [bool(every) and i % every == 0 and i // every < hung for i in range(guards)]
    nodes = [
        RaiderGuard(
            Step(f"step {i}"),
            f"pick(Object_{i})",
            HungCheck(release) if is_hung[i] else IOCheck(check_s),
            name=f"guard {i}",
            executor=pool,
            deadline=deadline,
        )
        for i in range(guards)
    ]
    root = py_trees.composites.Parallel(
        "plan",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True),
        children=[py_trees.decorators.FailureIsSuccess(f"go on {g.name}", g) for g in nodes],
    )
    verdict_at: list[float | None] = [None] * guards
    ticks: list[float] = []
    start = time.perf_counter()
    try:
        while root.status != Status.SUCCESS:
            t0 = time.perf_counter()
            root.tick_once()
            ticks.append(time.perf_counter() - t0)
            now = time.perf_counter() - start
            for i, g in enumerate(nodes):
                if verdict_at[i] is None and g.phase in (Phase.ACTING, Phase.DONE):
                    verdict_at[i] = now
            if hung_first and all(
                t is not None or h for t, h in zip(verdict_at, is_hung, strict=True)
            ):
                break  # the others are done; the hung ones are the deadline's business
            if now > 10 * deadline + guards * check_s + 60:
                raise SystemExit("the guards did not finish")
            time.sleep(max(0.0, 1.0 / hz - ticks[-1]))
    finally:
        release.set()
    others = [t for t, h in zip(verdict_at, is_hung, strict=True) if not h and t is not None]
    failed = [t for t, h in zip(verdict_at, is_hung, strict=True) if h and t is not None]
    ok = sum(g.status == Status.SUCCESS for g, h in zip(nodes, is_hung, strict=True) if not h)
    result = {
        "others": len(others),
        "others_ok": ok,
        "p50": statistics.median(others),
        "p95": statistics.quantiles(others, n=20)[-1],
        "hung_failed": len(failed),
        "hung_fail_max": max(failed) if failed else None,
        "deadline_msgs": sum("deadline" in g.feedback_message for g in nodes),
        "max_tick": max(ticks),
        "threads": pool.threads,
    }
    pool.shutdown(wait=False)
    return result


# --------------------------------------------------------------------------- (c) (d) round 3


def _tick_until(root: py_trees.behaviour.Behaviour, done: Any, limit_s: float, hz: float) -> None:
    end = time.perf_counter() + limit_s
    while not done():
        if time.perf_counter() > end:
            raise SystemExit("the guards did not finish")
        root.tick_once()
        time.sleep(1.0 / hz)


def exhausted_pool(hung: int, later: int, deadline: float, hz: float) -> dict[str, Any]:
    """``hung`` guards whose checks ignore cancel, then ``later`` new guards, on one pool.

    Returns:
        how many guards of each round ended, the longest time from a guard's first tick to its
        end past its deadline, and the reasons given.
    """
    pool = WorkerPool(SHARED_WORKERS, max_extra=SHARED_MAX_EXTRA, name="bench_cap")
    # A pool that has served quick checks: it covers hung threads within a quarter second, so
    # the hung checks take every thread up to the cap before their deadline.
    submit(lambda *, cancel: None, executor=pool).wait(10)
    release = threading.Event()
    ends: dict[str, float] = {}
    try:
        rounds = []
        for label, n, checker in (("hung", hung, HungCheck(release)), ("later", later, None)):
            nodes = [
                RaiderGuard(
                    Step(f"{label} step {i}"),
                    f"pick(Object_{i})",
                    checker or IOCheck(0.01),
                    name=f"{label} {i}",
                    executor=pool,
                    deadline=deadline,
                )
                for i in range(n)
            ]
            root = py_trees.composites.Parallel(
                label,
                policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True),
                children=[
                    py_trees.decorators.FailureIsSuccess(f"go on {g.name}", g) for g in nodes
                ],
            )
            t0 = time.perf_counter()

            def done(nodes: list[RaiderGuard] = nodes, t0: float = t0) -> bool:
                now = time.perf_counter() - t0
                for g in nodes:
                    if g.name not in ends and g.status in (Status.SUCCESS, Status.FAILURE):
                        ends[g.name] = now
                return len([g for g in nodes if g.name in ends]) == len(nodes)

            _tick_until(root, done, 10 * deadline + 30, hz)
            rounds.append(nodes)
        threads = pool.threads
    finally:
        release.set()
    everyone = [g for nodes in rounds for g in nodes]
    result = {
        "hung_ended": sum(g.name in ends for g in rounds[0]),
        "later_ended": sum(g.name in ends for g in rounds[1]),
        "over": max(ends[g.name] for g in everyone) - deadline,
        "not_started": sum("could not start" in g.feedback_message for g in everyone),
        "failed_closed": sum(g.status == Status.FAILURE for g in everyone),
        "hung_failed": sum(g.status == Status.FAILURE for g in rounds[0]),
        "started": sum(1 for g in rounds[0] if "could not start" not in g.feedback_message),
        "threads": threads,
    }
    pool.shutdown(wait=False)
    return result


class StoppedSlowCheck:
    """Takes ``seconds`` whatever happens (ignores cancel), then finds no issue."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def check(self, scene: Any, query: Query, *, cancel: threading.Event | None = None) -> Verdict:
        time.sleep(self.seconds)
        return Verdict(Category.NONE, "late", action="pick")


def after_stopped_slow(
    slow: int, slow_s: float, blocked: int, quick: int, check_s: float, hz: float, preload: bool
) -> float:
    """The quick guards' median time to their first verdict, with or without a preload.

    The preload: ``slow`` guards start checks taking ``slow_s``, are stopped (halted) at once
    and their checks finish ``slow_s`` later, ignoring the cancel. Then ``blocked`` guards whose
    checks hang start first, and ``quick`` guards with ``check_s`` checks after them.
    """
    pool = WorkerPool(SHARED_WORKERS, max_extra=SHARED_MAX_EXTRA, name="bench_preload")
    pool.warm_up()
    release = threading.Event()
    try:
        if preload:
            checker = StoppedSlowCheck(slow_s)
            nodes = [
                RaiderGuard(Step(f"s{i}"), f"pick(Object_{i})", checker, name=f"slow {i}",
                            executor=pool, deadline=60.0)
                for i in range(slow)
            ]  # fmt: skip
            for g in nodes:
                g.tick_once()
            pending = [g.pending for g in nodes]
            time.sleep(0.2)
            for g in nodes:
                g.stop(Status.INVALID)  # the tree moved on: the checks are cancelled
            for p in pending:
                if p is not None:
                    p.wait(slow_s + 30)
        is_blocked = [i < blocked for i in range(blocked + quick)]
        nodes = [
            RaiderGuard(
                Step(f"step {i}"),
                f"pick(Object_{i})",
                HungCheck(release) if b else IOCheck(check_s),
                name=f"guard {i}",
                executor=pool,
                deadline=60.0,
            )
            for i, b in enumerate(is_blocked)
        ]
        root = py_trees.composites.Parallel(
            "plan",
            policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True),
            children=[py_trees.decorators.FailureIsSuccess(f"go on {g.name}", g) for g in nodes],
        )
        first: dict[int, float] = {}
        t0 = time.perf_counter()

        def done() -> bool:
            now = time.perf_counter() - t0
            for i, g in enumerate(nodes):
                if i not in first and g.phase in (Phase.ACTING, Phase.DONE):
                    first[i] = now
            return all(i in first for i, b in enumerate(is_blocked) if not b)

        _tick_until(root, done, 120.0, hz)
    finally:
        release.set()
    pool.shutdown(wait=False)
    return statistics.median(t for i, t in first.items() if not is_blocked[i])


# --------------------------------------------------------------------------- (b) --time-limit

SCENE = {
    "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
    "objects": [
        {
            "objectId": "Apple|1",
            "objectType": "Apple",
            "position": {"x": 0.3, "y": 0.9, "z": 0.3},
            "visible": True,
            "pickupable": True,
        }
    ],
    "inventoryObjects": [],
}


class TrickleHandler(BaseHTTPRequestHandler):
    """Answers every chat request with a valid completion, one byte every ``every`` s."""

    every = 0.5
    stop = threading.Event()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        message = {"role": "assistant", "content": '{"final_response": "none"}'}
        body = json.dumps(
            {
                "id": "c",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for i in range(len(body)):
                if self.stop.wait(self.every):
                    return
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
        except OSError:
            pass  # the client hung up


def time_limit_overrun(limit: float, runs: int) -> list[tuple[float, float]]:
    """``bt-raider check --time-limit limit`` against a trickling server, once per run.

    Returns:
        (seconds to the verdict on stdout, seconds to the process's exit) per run.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), TrickleHandler)
    server.daemon_threads = True
    TrickleHandler.stop.clear()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    walls = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            scene = Path(tmp) / "scene.json"
            scene.write_text(json.dumps(SCENE))
            command = [sys.executable, "-m", "bt_raider.cli", "check", "--backend", "openai"]
            command += ["--base-url", url, "--model", "m", "--scene", str(scene)]
            command += ["--time-limit", f"{limit:g}", "pick(Apple)"]
            for _ in range(runs):
                t0 = time.perf_counter()
                with subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
                ) as process:
                    assert process.stdout is not None
                    line = process.stdout.readline()  # the verdict: one line
                    printed = time.perf_counter() - t0
                    returncode = process.wait(timeout=600)
                walls.append((printed, time.perf_counter() - t0))
                verdict = json.loads(line)
                if returncode != 0 or verdict["category"] != "unknown":
                    raise SystemExit(f"unexpected result: {returncode} {line}")
    finally:
        TrickleHandler.stop.set()
        server.shutdown()
        server.server_close()
    return walls


# --------------------------------------------------------------------------- rows


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--guards", type=int, default=200, help="guards in the tree (200)")
    p.add_argument("--hung", type=int, default=50, help="checks that hang (50)")
    p.add_argument("--check-s", type=float, default=0.1, help="seconds per check (0.1)")
    # A deadline counts from the submission: it covers the queue too. 200 checks of 0.1 s on
    # 8 threads take 2.5 s, so the guards' deadline is above that (the hung ones fail at it).
    p.add_argument("--deadline", type=float, default=5.0, help="guards' deadline (5.0 s)")
    p.add_argument("--hz", type=float, default=100.0, help="tick rate (100)")
    p.add_argument("--cold-guards", type=int, default=200, help="guards on a cold pool (200)")
    p.add_argument("--cold-blocked", type=int, default=8, help="of them blocked, first (8)")
    p.add_argument(
        "--cold-deadline", type=float, default=30.0, help="their deadline on a cold pool (30 s)"
    )
    p.add_argument("--cap-hung", type=int, default=80, help="checks ignoring cancel (80)")
    p.add_argument("--cap-later", type=int, default=20, help="guards after them (20)")
    p.add_argument("--cap-deadline", type=float, default=5.0, help="their deadline (5 s)")
    p.add_argument("--slow", type=int, default=8, help="stopped slow checks (8)")
    p.add_argument("--slow-s", type=float, default=5.0, help="seconds they take (5)")
    p.add_argument("--time-limit", type=float, default=2.0, help="--time-limit (2 s)")
    p.add_argument("--runs", type=int, default=3, help="bt-raider check runs (3)")
    return p


def run(args: argparse.Namespace | None = None) -> list[dict[str, Any]]:
    """Both measurements as rows: ``{"case", "metric", "value", "target", "ok"}``."""
    defaults = vars(parser().parse_args([]))
    opts = argparse.Namespace(**{**defaults, **vars(args or argparse.Namespace())})
    logging.getLogger("bt_raider.robot.worker").setLevel(logging.ERROR)  # 50 expected warnings
    calm = guard_latencies(opts.guards, 0, opts.check_s, opts.deadline, opts.hz)
    hung = guard_latencies(opts.guards, opts.hung, opts.check_s, opts.deadline, opts.hz)
    ratio = hung["p95"] / calm["p95"]
    case = f"{opts.guards} guards, {opts.hung} hung, {opts.check_s:g} s checks, 8 threads"
    rows = [
        {"case": case, "metric": "other guards p50/p95, none hung (s)",
         "value": f"{calm['p50']:.2f} / {calm['p95']:.2f}", "target": "", "ok": True},
        {"case": case, "metric": f"other guards p50/p95, {opts.hung} hung (s)",
         "value": f"{hung['p50']:.2f} / {hung['p95']:.2f}", "target": "",
         "ok": hung["others_ok"] == hung["others"]},
        {"case": case, "metric": "p95 ratio hung / none hung", "value": f"{ratio:.2f}",
         "target": "<= 2", "ok": ratio <= 2.0},
        {"case": case, "metric": f"hung guards failed closed (deadline {opts.deadline:g} s)",
         "value": f"{hung['hung_failed']}/{opts.hung}, last at {hung['hung_fail_max'] or 0:.2f} s",
         "target": "all, with 'deadline'",
         "ok": hung["hung_failed"] == opts.hung == hung["deadline_msgs"]},
        {"case": case, "metric": "longest tick, none hung / hung (ms)",
         "value": f"{calm['max_tick'] * 1e3:.1f} / {hung['max_tick'] * 1e3:.1f}",
         "target": "", "ok": True},
    ]  # fmt: skip
    # Cold pool: blocked checks take every thread before any check has finished.
    quick = opts.cold_guards - opts.cold_blocked
    alone = guard_latencies(quick, 0, opts.check_s, opts.cold_deadline, opts.hz, warm=False)
    cold = guard_latencies(
        opts.cold_guards,
        opts.cold_blocked,
        opts.check_s,
        opts.cold_deadline,
        opts.hz,
        warm=False,
        hung_first=True,
    )
    ratio = cold["p95"] / alone["p95"]
    case = (
        f"cold pool: {opts.cold_blocked} blocked checks first, {quick} quick guards, "
        f"{opts.check_s:g} s checks, deadline {opts.cold_deadline:g} s, {opts.hz:g} Hz"
    )
    rows += [
        {"case": case, "metric": "quick guards p50/p95, none blocked (s)",
         "value": f"{alone['p50']:.2f} / {alone['p95']:.2f}", "target": "", "ok": True},
        {"case": case, "metric": f"quick guards p50/p95, {opts.cold_blocked} blocked (s)",
         "value": f"{cold['p50']:.2f} / {cold['p95']:.2f}", "target": "",
         "ok": cold["others_ok"] == cold["others"] == quick},
        {"case": case, "metric": "p95 ratio blocked / none blocked", "value": f"{ratio:.2f}",
         "target": "<= 2", "ok": ratio <= 2.0},
    ]  # fmt: skip
    rows += round3_rows(opts)
    runs = time_limit_overrun(opts.time_limit, opts.runs)
    printed = [p for p, _ in runs]
    walls = [w for _, w in runs]
    over = max(walls) - opts.time_limit
    case = f"bt-raider check --time-limit {opts.time_limit:g}, reply 1 byte / 0.5 s"
    rows += [
        {"case": case, "metric": "verdict printed at, median / max (s)",
         "value": f"{statistics.median(printed):.2f} / {max(printed):.2f}", "target": "",
         "ok": True},
        {"case": case, "metric": "process exited at, median / max (s)",
         "value": f"{statistics.median(walls):.2f} / {max(walls):.2f}", "target": "", "ok": True},
        {"case": case, "metric": "overrun past the limit, max (s)", "value": f"{over:.2f}",
         "target": "<= 1", "ok": over <= 1.0},
    ]  # fmt: skip
    return rows


def round3_rows(opts: argparse.Namespace) -> list[dict[str, Any]]:
    """(c) and (d) as rows."""
    cap = exhausted_pool(opts.cap_hung, opts.cap_later, opts.cap_deadline, opts.hz)
    total = opts.cap_hung + opts.cap_later
    case = (
        f"{opts.cap_hung} checks ignoring cancel, then {opts.cap_later} new guards; "
        f"8 threads + 64 extra, deadline {opts.cap_deadline:g} s"
    )
    rows = [
        {"case": case, "metric": "guards that ended (hung / later)",
         "value": f"{cap['hung_ended']}/{opts.cap_hung} / {cap['later_ended']}/{opts.cap_later}",
         "target": "all", "ok": cap["hung_ended"] + cap["later_ended"] == total},
        {"case": case, "metric": "hung checks started / threads at the end",
         "value": f"{cap['started']} / {cap['threads']}", "target": "", "ok": True},
        {"case": case, "metric": "failed closed (all), of them 'could not start'",
         "value": f"{cap['failed_closed']}, {cap['not_started']}", "target": f"{total}",
         "ok": cap["failed_closed"] == total},
        {"case": case, "metric": "latest end past the deadline (s)", "value": f"{cap['over']:.2f}",
         "target": "<= 0.5", "ok": cap["over"] <= 0.5},
    ]  # fmt: skip
    quick = max(1, opts.cold_guards - opts.cold_blocked)
    common = (opts.slow, opts.slow_s, opts.cold_blocked, quick, opts.check_s, opts.hz)
    fresh = after_stopped_slow(*common, preload=False)
    loaded = after_stopped_slow(*common, preload=True)
    ratio = loaded / fresh
    case = (
        f"{opts.slow} stopped checks of {opts.slow_s:g} s finished late, then "
        f"{opts.cold_blocked} blocked checks and {quick} quick guards"
    )
    rows += [
        {"case": case, "metric": "quick guards' first verdict p50, fresh / after (s)",
         "value": f"{fresh:.2f} / {loaded:.2f}", "target": "", "ok": True},
        {"case": case, "metric": "ratio after / fresh", "value": f"{ratio:.2f}",
         "target": "<= 2", "ok": ratio <= 2.0},
    ]  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    rows = run(parser().parse_args(argv))
    width = max(len(r["metric"]) for r in rows)
    case = None
    for r in rows:
        if r["case"] != case:
            case = r["case"]
            print(case)
        target = f"  (target {r['target']})" if r["target"] else ""
        flag = "" if r["ok"] else "  MISSED"
        print(f"  {r['metric']:<{width}}  {r['value']}{target}{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
