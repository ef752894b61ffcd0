"""The viewer on a long run: recording 10,000 ticks, the trace's size, and the page's load time.

A 31-node py_trees tree (a Parallel of six memory Sequences of four leaves that each run for
2-6 ticks) is ticked ``--ticks`` times under a ``TraceRecorder`` -- some node changes status on
every tick, and every tenth tick adds an event. Printed: the recording cost per tick (against
the same tree unrecorded), the trace's entries and JSON size, then the time headless Chromium
takes to show it (navigation start to the page ready: tree drawn, timeline and events built),
``--loads`` times, served by ``ViewerServer`` on 127.0.0.1. The browser part needs Debian's
chromium + chromium-driver and selenium; without them it says so and prints the rest.

    python3 benchmarks/viewer.py [--ticks 10000] [--loads 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time

import py_trees
from py_trees.common import Status

from bt_raider.viewer.recorder import TraceRecorder
from bt_raider.viewer.server import ViewerServer

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1600,1000",
)


class Cycle(py_trees.behaviour.Behaviour):
    """RUNNING for ``period - 1`` ticks, then SUCCESS; again from the start."""

    def __init__(self, name: str, period: int) -> None:
        super().__init__(name)
        self.period = period
        self.count = 0

    def update(self) -> Status:
        self.count += 1
        self.feedback_message = f"{self.count % self.period}/{self.period}"
        return Status.SUCCESS if self.count % self.period == 0 else Status.RUNNING


def build_tree() -> tuple[py_trees.trees.BehaviourTree, list[py_trees.behaviour.Behaviour]]:
    branches = [
        py_trees.composites.Sequence(
            f"branch {b}",
            memory=True,
            children=[Cycle(f"step {b}.{i}", 2 + (b + i) % 5) for i in range(4)],
        )
        for b in range(6)
    ]
    root = py_trees.composites.Parallel(
        "root", policy=py_trees.common.ParallelPolicy.SuccessOnAll(), children=branches
    )
    return py_trees.trees.BehaviourTree(root), branches


def run(ticks: int, record: bool) -> tuple[float, dict | None]:
    tree, branches = build_tree()
    recorder = TraceRecorder(tree, title=f"{ticks} ticks") if record else None
    start = time.perf_counter()
    for tick in range(ticks):
        tree.tick()
        if recorder is not None and tick % 10 == 0:
            recorder.event("note", f"tick {tick + 1} done", node=branches[tick % 6])
    elapsed = time.perf_counter() - start
    if recorder is None:
        return elapsed, None
    recorder.finish()
    return elapsed, recorder.to_json()


def browser_loads(trace: dict, loads: int) -> list[float] | str:
    missing = [n for n in ("chromium", "chromedriver") if shutil.which(n) is None]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        missing.append("selenium")
    if missing:
        return f"skipped: {', '.join(missing)} not installed"
    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="bt_raider-bench-")
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = shutil.which("chromium")
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    times = []
    try:
        with ViewerServer(trace) as server:
            for _ in range(loads):
                driver.get("about:blank")
                driver.get(server.url)
                WebDriverWait(driver, 120).until(
                    lambda d: d.execute_script(
                        "return !!(window.btViewer && window.btViewer.ready)"
                    )
                )
                times.append(driver.execute_script("return window.btViewer.loadMs"))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ticks", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()

    bare, _ = run(args.ticks, record=False)
    recorded, trace = run(args.ticks, record=True)
    assert trace is not None
    size = len(json.dumps(trace, separators=(",", ":")))
    print(f"ticks: {args.ticks:,} of a 31-node tree")
    print(
        f"recording: {recorded / args.ticks * 1e6:.0f} us/tick with the recorder, "
        f"{bare / args.ticks * 1e6:.0f} us/tick without"
    )
    print(f"trace: {len(trace['ticks']):,} entries, {size / 1e6:.2f} MB of JSON")
    loads = browser_loads(trace, args.loads)
    if isinstance(loads, str):
        print(f"page load: {loads}")
        return
    print(
        f"page load (navigation start to ready, {len(loads)} loads): median "
        f"{statistics.median(loads):.0f} ms, min {min(loads):.0f} ms, max {max(loads):.0f} ms"
    )


if __name__ == "__main__":
    main()
