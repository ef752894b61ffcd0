"""The viewer page in a real browser (headless Chromium through selenium; skipped without it).

The medicine-delivery run is served and explored as a user would: every node drawn, the five
issues on the timeline, the slider moving the statuses tick by tick, a click on a guard
showing its Ground/Ask/Answer/Issue trace and its recovery; the demo's ``--view`` followed
live; the static page opened from ``file://``; a 10,000-tick trace loaded. Screenshots go to a
tmp folder, or to $BT_RAIDER_SCREENSHOTS.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.viewer.page import static_page
from bt_raider.viewer.recorder import TraceRecorder
from bt_raider.viewer.server import ViewerServer
from tests.bt_raider.viewer.test_recorder import replay

#: The five issues of RAIDER's section 5.2, as the timeline shows them.
ISSUES = [
    ("obstructed", "blocked by a Chair"),
    ("ambiguity", "matches 2 objects: Medicine_1"),
    ("out_of_reach", "beyond the robot's reach"),
    ("not_present", "Adriana is not recognised"),
    ("wrong_state", "Adriana is not looking at the robot"),
]
CHAIR_GUARD = "Guard (approach tiago home medicine_counter)"


def _open(driver: Any, url: str, timeout: float = 30.0) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return !!(window.btViewer && window.btViewer.ready)")
    )


def _drawn(driver: Any) -> dict[str, str]:
    """Node name -> the status it is drawn with."""
    return driver.execute_script(
        "var out = {}; document.querySelectorAll('#nodes g.node').forEach(function (g) {"
        " out[g.getAttribute('data-name')] = g.getAttribute('data-status'); }); return out;"
    )


def _tick(driver: Any) -> int:
    return int(driver.find_element("id", "slider").get_attribute("value"))


def _issue_rows(driver: Any) -> list[str]:
    return [row.text for row in driver.find_elements("css selector", "#events .ev.issue")]


def _row(driver: Any, kind: str, contains: str) -> Any:
    for row in driver.find_elements("css selector", f"#events .ev.k-{kind}"):
        if contains in row.text:
            return row
    raise AssertionError(f"no {kind} event containing {contains!r}")


@pytest.fixture
def served(demo_run):
    _result, trace = demo_run
    with ViewerServer(trace) as server:
        yield server.url


def test_the_run_explored_in_the_page(browser, served, demo_run, screenshots):
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    result, trace = demo_run
    states = replay(trace)
    last = trace["tick_count"]
    _open(browser, served)
    # Every node of the final tree is drawn, recovery subtrees included, with its status.
    assert _tick(browser) == last
    assert _drawn(browser) == {name: status for name, (status, _fb) in states[last].items()}
    recovery_roots = browser.find_elements("css selector", "#regions rect.region")
    assert len(recovery_roots) == 4  # each guard's last recovery, where it was grafted
    # The five issues are on the timeline, in the order they arose.
    rows = _issue_rows(browser)
    assert len(rows) == 5
    for row, (category, words) in zip(rows, ISSUES, strict=True):
        assert category in row and words in row
    # Moving the slider, tick by tick from the first, draws each tick's statuses.
    slider = browser.find_element("id", "slider")
    slider.send_keys(Keys.HOME)
    assert _tick(browser) == 0
    assert set(_drawn(browser).values()) == {"INVALID"}
    for tick in range(1, last + 1):
        slider.send_keys(Keys.ARROW_RIGHT)
        assert _tick(browser) == tick
        assert _drawn(browser) == {name: s for name, (s, _fb) in states[tick].items()}, tick
    # The play button runs through the ticks, and pauses.
    slider.send_keys(Keys.HOME)
    play = browser.find_element("id", "play")
    play.click()
    WebDriverWait(browser, 20).until(lambda d: _tick(d) >= 3)
    play.click()
    paused_at = _tick(browser)
    time.sleep(0.5)
    assert _tick(browser) == paused_at and play.text == "play"
    assert _drawn(browser) == {name: s for name, (s, _fb) in states[paused_at].items()}
    # Clicking the first guard shows its checks (with the reasoning) and its recovery.
    browser.find_element("css selector", f'#nodes g.node[data-name="{CHAIR_GUARD}"]').click()
    details = browser.find_element("id", "details").text
    assert CHAIR_GUARD in details
    assert "obstructed (unfeasibility)" in details and "none (none)" in details
    assert "Ground / Ask / Answer / Issue" in details
    roles = {e.text for e in browser.find_elements("css selector", "#details table.trace td.role")}
    assert {"ground", "ask", "answer", "issue"} <= roles
    assert "ask('Could you move the Chair out of the way, please?')" in details
    assert f"Recovery {CHAIR_GUARD}" in details  # the subtree the code compiled to
    # The chair recovery as it runs: click its event on the timeline.
    _row(browser, "recovery", "Could you move the Chair").click()
    guard = browser.find_element("css selector", f'#nodes g.node[data-name="{CHAIR_GUARD}"]')
    assert guard.get_attribute("data-phase") == "recovering"
    assert "selected" in guard.get_attribute("class")
    browser.save_screenshot(str(screenshots / "chair_recovery.png"))
    # The handover: the robot's last action.
    _row(browser, "action", "handover(").click()
    handover = next(n for n in result.root.children if n.name.startswith("Guard (handover"))
    assert _drawn(browser)[handover.name] == "SUCCESS"
    browser.find_element("css selector", f'#nodes g.node[data-name="{handover.name}"]').click()
    assert "wrong_state (unfeasibility)" in browser.find_element("id", "details").text
    browser.save_screenshot(str(screenshots / "handover.png"))


def test_the_static_page_opens_from_a_file(browser, demo_run, tmp_path):
    _result, trace = demo_run
    page = tmp_path / "tree.html"
    page.write_text(static_page(trace), encoding="utf-8")
    _open(browser, page.as_uri())
    last = trace["tick_count"]
    assert _drawn(browser) == {name: s for name, (s, _fb) in replay(trace)[last].items()}
    assert len(_issue_rows(browser)) == 5


def test_the_demo_watched_live(browser, tmp_path, screenshots):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bt_raider.cli",
            "demo",
            "medicine-delivery",
            "--no-memory",
            "--view",
            "--no-browser",
            "--out",
            str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = None
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            if line.startswith("viewer: http://127.0.0.1:"):
                url = line.split()[1]
        assert url, "the demo printed no viewer URL"
        _open(browser, url)
        while not browser.execute_script("return window.btViewer.finished"):
            assert time.monotonic() < deadline, "the run did not finish"
            time.sleep(0.2)
        # The run waited for the page: it came with tick 0 only, every other tick came live.
        loaded, updates, last = browser.execute_script(
            "var v = window.btViewer; return [v.loadedTicks, v.liveUpdates, v.state.maxTick];"
        )
        assert loaded == 0 and updates >= 2 and _tick(browser) == last > 10
        rows = _issue_rows(browser)
        assert [category for category, _w in ISSUES] == [r.split()[2].rstrip(":") for r in rows]
        assert browser.find_element("id", "root-status").text == "tree: SUCCESS"
        assert not browser.find_element("id", "live").is_displayed()
        browser.save_screenshot(str(screenshots / "live_finished.png"))
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "medicine handed over to Adriana: yes" in out
    assert json.loads((tmp_path / "out" / "trace.json").read_text())["tick_count"] == last


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


def long_trace(ticks: int) -> dict[str, Any]:
    """A run of ``ticks`` ticks of a 31-node tree where something changes every tick."""
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
    tree = py_trees.trees.BehaviourTree(root)
    recorder = TraceRecorder(tree, title=f"{ticks} ticks")
    for tick in range(ticks):
        tree.tick()
        if tick % 10 == 0:
            recorder.event("note", f"tick {tick + 1} done", node=branches[tick % 6])
    recorder.finish()
    return recorder.to_json()


def test_ten_thousand_ticks_load_in_the_page(browser, tmp_path):
    trace = long_trace(10_000)
    assert trace["tick_count"] == 10_000
    with ViewerServer(trace) as server:
        _open(browser, server.url, timeout=60)
        load_ms = browser.execute_script("return window.btViewer.loadMs")
        print(f"\n10,000-tick trace ({len(trace['ticks'])} entries): page ready {load_ms:.0f} ms")
        assert load_ms < 10_000  # does not hang; the figure is benchmarks/viewer.py's
        assert browser.find_element("id", "slider").get_attribute("max") == "10000"
        assert len(browser.find_elements("css selector", "#nodes g.node")) == 31
        browser.execute_script("window.btViewer.setTick(5000)")
        drawn = _drawn(browser)
        expected = {name: s for name, (s, _fb) in replay_at(trace, 5000).items()}
        assert drawn == expected


def replay_at(trace: dict[str, Any], tick: int) -> dict[str, tuple[str, str]]:
    """The statuses at one tick (replaying only the entries up to it)."""
    cut = dict(trace, ticks=[e for e in trace["ticks"] if e["tick"] <= tick], tick_count=tick)
    return replay(cut)[tick]
