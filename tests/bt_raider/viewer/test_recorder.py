"""TraceRecorder: every tick of a py_trees tree, replayable from the changes it keeps.

Plain py_trees trees (random ones, through Hypothesis) check that replaying the recorded
changes gives back, at every tick, each node's status and feedback as the tree had them; a
guard dropped into a user's tree and the medicine-delivery demo check what guards add.
"""

from __future__ import annotations

import time
from typing import Any

import py_trees
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from bt_raider.checking.verdict import Category, Verdict
from bt_raider.runtime.guards import guard_tree
from bt_raider.viewer.recorder import TraceRecorder, walk, world_events
from bt_raider.viewer.trace import check_trace

S, F, R = Status.SUCCESS, Status.FAILURE, Status.RUNNING


def replay(trace: dict[str, Any]) -> dict[int, dict[str, tuple[str, str]]]:
    """tick -> {node name: (status, feedback)} of the nodes in the tree, from the changes."""
    names: dict[int, str] = {}
    status: dict[int, str] = {}
    feedback: dict[int, str] = {}
    entries = {e["tick"]: e for e in trace["ticks"]}
    out = {}
    for tick in range(trace["tick_count"] + 1):
        entry = entries.get(tick, {})
        for node in entry.get("add", []):
            names[node["id"]] = node["name"]
            status[node["id"]], feedback[node["id"]] = "INVALID", ""
        for key, value in entry.get("status", {}).items():
            status[int(key)] = value
        for key, value in entry.get("feedback", {}).items():
            feedback[int(key)] = value
        for nid in entry.get("remove", []):
            del names[nid]
        out[tick] = {names[i]: (status[i], feedback[i]) for i in names}
    return out


def observed(root: py_trees.behaviour.Behaviour) -> dict[str, tuple[str, str]]:
    return {n.name: (n.status.value, n.feedback_message) for n, _p, _g in walk(root)}


# ------------------------------------------------------------------ random plain trees
STATUSES = st.sampled_from([S, F, R])


@st.composite
def trees(draw: Any, depth: int = 0, counter: list[int] | None = None) -> Any:
    counter = counter if counter is not None else [0]
    counter[0] += 1
    name = f"n{counter[0]}"
    if depth >= 3 or draw(st.booleans()):
        queue = draw(st.lists(STATUSES, min_size=1, max_size=6))
        node = py_trees.behaviours.StatusQueue(name=name, queue=queue, eventually=draw(STATUSES))
        return node
    kind = draw(st.sampled_from(["sequence", "selector", "parallel"]))
    children = [
        draw(trees(depth + 1, counter)) for _ in range(draw(st.integers(min_value=1, max_value=3)))
    ]
    if kind == "parallel":
        policy = draw(
            st.sampled_from(
                [
                    py_trees.common.ParallelPolicy.SuccessOnAll(),
                    py_trees.common.ParallelPolicy.SuccessOnOne(),
                ]
            )
        )
        return py_trees.composites.Parallel(name, policy=policy, children=children)
    cls = py_trees.composites.Sequence if kind == "sequence" else py_trees.composites.Selector
    return cls(name, memory=draw(st.booleans()), children=children)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(root=trees(), ticks=st.integers(min_value=1, max_value=15), as_tree=st.booleans())
def test_replaying_the_changes_gives_every_tick_back(root, ticks, as_tree):
    tree = py_trees.trees.BehaviourTree(root) if as_tree else None
    recorder = TraceRecorder(tree if as_tree else root)
    truth = {0: observed(root)}
    for tick in range(1, ticks + 1):
        recorder.tick()
        truth[tick] = observed(root)
    recorder.finish()
    trace = recorder.to_json()
    assert trace["tick_count"] == ticks
    assert check_trace(trace) == []
    assert replay(trace) == truth
    # Only ticks where something changed are written, and each keeps only what changed.
    for entry in trace["ticks"][1:]:
        assert set(entry) - {"tick", "t"}
        before = replay(trace)[entry["tick"] - 1]
        for key, value in entry.get("status", {}).items():
            name = next(
                n["name"] for e in trace["ticks"] for n in e.get("add", []) if n["id"] == int(key)
            )
            assert before[name][0] != value


def test_a_tree_that_settles_writes_nothing_more():
    """10,000 ticks of a tree whose one leaf flips every 1,000 ticks: a handful of entries."""

    class Flip(py_trees.behaviour.Behaviour):
        def __init__(self) -> None:
            super().__init__("flip")
            self.count = 0

        def update(self) -> Status:
            self.count += 1
            return S if (self.count // 1000) % 2 else F

    root = py_trees.composites.Selector(
        "root", memory=False, children=[Flip(), py_trees.behaviours.Running("wait")]
    )
    tree = py_trees.trees.BehaviourTree(root)
    recorder = TraceRecorder(tree)
    for _ in range(10_000):
        tree.tick()
    trace = recorder.to_json()
    assert trace["tick_count"] == 10_000
    assert len(trace["ticks"]) <= 25  # tick 0, the first tick, then one or two per flip
    assert replay(trace)[10_000] == observed(root)


def test_shape_type_and_parent_of_each_node():
    leaf = py_trees.behaviours.Success("leaf")
    inverter = py_trees.decorators.Inverter("not", child=leaf)
    root = py_trees.composites.Selector("root", memory=False, children=[inverter])
    (entry,) = TraceRecorder(root).to_json()["ticks"]
    assert entry["tick"] == 0
    assert [(n["name"], n["type"], n["shape"], n["parent"]) for n in entry["add"]] == [
        ("root", "Selector", "selector", None),
        ("not", "Inverter", "decorator", 0),
        ("leaf", "Success", "behaviour", 1),
    ]


def test_events_go_to_the_tick_they_happen_in_and_finish_keeps_late_ones():
    class Noisy(py_trees.behaviour.Behaviour):
        def update(self) -> Status:
            recorder.event("note", "ticked", node=self, extra=[1, 2])
            return R

    noisy = Noisy("noisy")
    recorder = TraceRecorder(noisy)
    recorder.tick()
    recorder.tick()
    recorder.event("note", "after the run")
    recorder.finish(outcome={"ok": True})
    trace = recorder.to_json()
    events = [
        (e["tick"], ev["text"], ev["node"]) for e in trace["ticks"] for ev in e.get("events", [])
    ]
    assert events == [(1, "ticked", 0), (2, "ticked", 0), (3, "after the run", None)]
    assert trace["ticks"][1]["events"][0]["extra"] == [1, 2]
    assert trace["outcome"] == {"ok": True} and trace["finished"] is True
    with pytest.raises(ValueError, match="ticks"):
        recorder.to_json(ticks=[])


def test_world_log_entries_become_action_and_world_events():
    class Robot:
        """A robot written here: it logs as SimWorld does."""

        def __init__(self) -> None:
            self.log: list[dict[str, Any]] = []

    robot = Robot()
    poll = world_events(robot)
    robot.log.append(
        {
            "kind": "action",
            "action": "pick",
            "args": ["Cup"],
            "ok": True,
            "result": "holding Cup",
            "error": None,
        }
    )
    robot.log.append(
        {
            "kind": "action",
            "action": "open",
            "args": ["Fridge"],
            "ok": False,
            "result": None,
            "error": "locked",
        }
    )
    robot.log.append({"kind": "event", "action": "the door closed"})
    assert [e["text"] for e in poll()] == [
        "pick(Cup) -> holding Cup",
        "open(Fridge) FAILED: locked",
        "the door closed",
    ]
    assert poll() == []  # each entry once


def test_not_a_tree_is_a_type_error():
    with pytest.raises(TypeError, match="BehaviourTree or Behaviour"):
        TraceRecorder("root")


# ------------------------------------------------------------------ guards
class Checker:
    """A checker written here: one issue for the first check, then none."""

    def __init__(self) -> None:
        self.calls = 0

    def check(self, scene: Any, query: Any) -> Verdict:
        self.calls += 1
        if self.calls == 1:
            return Verdict(
                Category.OUT_OF_REACH, "The Cup is too far.", questions=["Is the Cup within reach?"]
            )
        return Verdict(Category.NONE, "The Cup is within reach.")


def test_a_guard_dropped_into_a_users_tree_is_recorded(tmp_path):
    pick = py_trees.behaviours.Success("pick the cup")
    root = py_trees.composites.Sequence("task", memory=True, children=[pick])
    root = guard_tree(root, Checker(), select=lambda n: "pick(Cup)" if n is pick else None)
    tree = py_trees.trees.BehaviourTree(root)
    recorder = TraceRecorder(tree)
    for _ in range(200):
        tree.tick()
        if root.status is not R:
            break
        time.sleep(0.005)
    recorder.finish()
    path = recorder.write(tmp_path / "trace.json")
    trace = recorder.to_json()
    assert check_trace(trace) == []
    guard = next(n for n in trace["ticks"][0]["add"] if n.get("guard"))
    assert guard["name"] == "Guard pick the cup" and guard["type"] == "RaiderGuard"
    kinds = [
        (ev["kind"], ev.get("verdict", {}).get("category"))
        for e in trace["ticks"]
        for ev in e.get("events", [])
    ]
    # No recovery: the issue fails the guard, closed.
    assert kinds == [("check", None), ("verdict", "out_of_reach"), ("result", None)]
    verdict = next(
        ev["verdict"]
        for e in trace["ticks"]
        for ev in e.get("events", [])
        if ev["kind"] == "verdict"
    )
    assert verdict["questions"] == ["Is the Cup within reach?"]
    phases = [
        e["guards"][str(guard["id"])].get("phase")
        for e in trace["ticks"]
        if str(guard["id"]) in e.get("guards", {})
    ]
    assert phases[0] == "idle" and "checking" in phases and phases[-1] == "done"
    assert replay(trace)[trace["tick_count"]]["Guard pick the cup"][0] == "FAILURE"
    assert path.read_text().startswith('{"format":"bt_raider.trace"')


def test_the_demo_records_checks_verdicts_recoveries_dialogue_and_world(demo_run):
    result, trace = demo_run
    assert check_trace(trace) == []
    events = [(e["tick"], ev) for e in trace["ticks"] for ev in e.get("events", [])]
    categories = [ev["verdict"]["category"] for _t, ev in events if ev["kind"] == "verdict"]
    assert categories == [
        "obstructed",
        "none",
        "ambiguity",
        "out_of_reach",
        "none",
        "not_present",
        "none",
        "wrong_state",
        "none",
    ]
    nodes = {n["id"]: n for e in trace["ticks"] for n in e.get("add", [])}
    recoveries = [ev for _t, ev in events if ev["kind"] == "recovery"]
    assert [r["code"] for r in recoveries] == [
        plan for step in result.steps for plan in step.recoveries
    ]
    for rec in recoveries:
        root = nodes[rec["subtree"]]
        assert root["recovery"] is True and nodes[root["parent"]]["guard"] is True
        assert root["parent"] == rec["node"]
        assert [c["name"] for c in rec["compiled"]][0] == root["name"]
    # The pick's first recovery subtree leaves the tree when the second is grafted.
    first, second = [
        r["subtree"] for r in recoveries if nodes[r["node"]]["name"].startswith("Guard (pick")
    ]
    removed_at = next(e["tick"] for e in trace["ticks"] if first in e.get("remove", []))
    added_at = next(
        e["tick"] for e in trace["ticks"] if any(n["id"] == second for n in e.get("add", []))
    )
    assert removed_at == added_at
    asks = [ev for _t, ev in events if ev["kind"] == "ask"]
    assert "It's the medicine that is closest to the plant." in [a["answer"] for a in asks]
    assert all(nodes[a["node"]]["guard"] for a in asks)  # said by the guard recovering
    actions = [ev["call"] for _t, ev in events if ev["kind"] == "action"]
    assert actions == result.world.executed
    assert any("Chair" in ev["text"] for _t, ev in events if ev["kind"] == "world")
    # The final statuses are the tree's.
    final = replay(trace)[trace["tick_count"]]
    for node, _parent, _grafted in walk(result.root):
        assert final[node.name][0] == node.status.value


def test_detach_stops_recording_a_tree():
    tree = py_trees.trees.BehaviourTree(py_trees.behaviours.Running("wait"))
    recorder = TraceRecorder(tree)
    tree.tick()
    recorder.detach()
    tree.tick()
    assert recorder.tick_count == 1 and tree.post_tick_handlers == []


def test_the_old_package_export_still_answers_with_a_deprecation_warning():
    import bt_raider

    with pytest.warns(DeprecationWarning, match="bt_raider.viewer.recorder.TraceRecorder"):
        assert bt_raider.TraceRecorder is TraceRecorder


def test_a_feedback_of_none_or_not_text_is_recorded_once_as_text():
    class Odd(py_trees.behaviour.Behaviour):
        def update(self) -> Status:
            self.feedback_message = None if self.name == "none" else 42  # type: ignore[assignment]
            return R

    root = py_trees.composites.Parallel(
        "root",
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(),
        children=[Odd("none"), Odd("n")],
    )
    recorder = TraceRecorder(root)
    for _ in range(5):
        recorder.tick()
    trace = recorder.to_json()
    assert [e["tick"] for e in trace["ticks"]] == [0, 1]  # nothing changes after the first tick
    assert trace["ticks"][1]["feedback"] == {"2": "42"}
    assert check_trace(trace) == []
