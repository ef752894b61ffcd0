"""The pytest plugin never crashes a test run, whatever a user's world keeps as attributes.

A failing run whose world is the user's robot keeping ``executed`` as a list of tuples used to
end in INTERNALERROR (``RunResult.summary`` joined it as strings) and the tests after it never
ran. Here pytester runs a user's failing test, then a passing one: the second runs and the
report shows the executed tuples. Hypothesis throws any attribute value at the summary.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_trees.common import Status

from bt_raider.testing.run import SHOWN_ENTRIES, RunResult

pytest_plugins = ["pytester"]

USER_TESTS = '''
import py_trees

from bt_raider import ActionState, Progress, RaiderGuard, SymbolicReasoner

SCENE = {{
    "agent": {{"position": {{"x": 0.0, "y": 0.9, "z": 0.0}}, "rotation": {{"y": 0.0}}}},
    "objects": [{{"objectId": "Cup|1", "objectType": "Cup", "pickupable": True,
                  "position": {{"x": 0.2, "y": 0.9, "z": 0.4}}}}],
}}


class Loud:
    def __str__(self):
        raise RuntimeError("no str for you")

    def __repr__(self):
        raise RuntimeError("no repr either")


class UserRobot:
    """The user's robot: it keeps its own record of what it did."""

    def __init__(self):
        self.executed = {executed}
        self.failures = {failures}

    def start(self, action, args):
        return 1

    def poll(self, handle):
        return Progress(ActionState.SUCCEEDED)

    def cancel(self, handle):
        pass

    def observe(self):
        return SCENE


class Pick(py_trees.behaviour.Behaviour):
    def update(self):
        return py_trees.common.Status.SUCCESS


def test_first_fails(bt_raider_run):
    robot = UserRobot()
    guard = RaiderGuard(Pick("pick"), "pick the banana", SymbolicReasoner(), scene=robot.observe)
    result = bt_raider_run(guard, robot=robot, world=robot, timeout=20)
    assert result.status is py_trees.common.Status.SUCCESS


def test_second_passes():
    assert True
'''

WORLDS = {
    "tuples": ("[('pick', 'Cup|1'), ('place', 'Cup|1', 'Table|2')]", "[]"),
    "objects": ("[Loud(), 3, None, b'x', ('pick', Loud())]", "[Loud(), {'error': Loud()}]"),
    "huge": ("[('move', i) for i in range(100000)]", "None"),
    "unprintable": ("Loud()", "Loud()"),
    "generator": ("(('pick', i) for i in range(3))", "'refused once'"),
}


@pytest.mark.parametrize("kind", sorted(WORLDS))
def test_a_failing_run_with_a_users_world_never_stops_the_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    executed, failures = WORLDS[kind]
    pytester.makepyfile(test_user=USER_TESTS.format(executed=executed, failures=failures))
    # Our plugin alone, named: the other installed plugins (hypothesis, xdist, ...) would take
    # as much CPU to load as the run itself. tests/bt_raider/testing/test_plugin.py runs a
    # user's session with every plugin, ours through its entry point.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "bt_raider.testing.plugin", "-rA"
    )

    result.assert_outcomes(failed=1, passed=1)  # the second test ran
    out = result.stdout.str()
    assert "INTERNALERROR" not in out
    assert "bt_raider run 1 of 1" in out
    assert "run ended FAILURE" in out  # the run's own account is there
    if kind == "tuples":
        assert "world executed: ('pick', 'Cup|1'), ('place', 'Cup|1', 'Table|2')" in out
    elif kind == "huge":
        assert "('move', 0), ('move', 1)" in out
        assert f"({100000 - SHOWN_ENTRIES} more not shown)" in out
    elif kind in ("objects", "unprintable"):
        assert "that cannot be shown" in out
    else:
        assert "world executed: ('pick', 0), ('pick', 1), ('pick', 2)" in out
        assert "world refused: refused once" in out


class Raises:
    def __str__(self) -> str:
        raise ValueError("str")

    def __repr__(self) -> str:
        raise ValueError("repr")


class World:
    def __init__(self, executed: Any, failures: Any) -> None:
        self.executed = executed
        self.failures = failures


values = st.recursive(
    st.one_of(st.none(), st.integers(), st.floats(), st.text(), st.binary(), st.builds(Raises)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=3), inner, max_size=3),
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(executed=values, failures=values)
def test_the_summary_never_raises(executed: Any, failures: Any) -> None:
    result = RunResult(Status.FAILURE, world=World(executed, failures))

    text = result.summary()

    assert text.startswith("run ended FAILURE")
    if executed is not None:
        assert "world executed: " in text
    if isinstance(executed, list) and executed and all(isinstance(e, str) for e in executed):
        assert f"world executed: {', '.join(executed)}"[:200] in text
