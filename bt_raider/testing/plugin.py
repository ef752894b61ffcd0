"""The pytest plugin of bt_raider (registered through the ``pytest11`` entry point).

Fixtures for testing a tree:

- ``bt_raider_run``: :func:`~bt_raider.testing.run.run_tree`, with a clean py_trees blackboard;
  when the test fails, pytest's report shows a summary of each run (verdicts, recoveries,
  the transcript, what the world executed).
- ``sim_world``: a fresh :class:`~bt_raider.simulation.simworld.SimWorld` over the kit's small
  kitchen.
- ``scripted_human``: ``scripted_human(answers, **kw)`` makes a
  :class:`~bt_raider.robot.human.ScriptedHuman`.
- ``clean_blackboard``: the py_trees blackboard, cleared before and after the test (the other
  fixtures use it; py_trees keeps one blackboard per process).
- ``bt_raider_explore``: :func:`~bt_raider.testing.explore.explore`, the explorer.

Nothing here runs for a test that uses none of these fixtures.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pluggy import Result

_RESULTS = pytest.StashKey[list[Any]]()


@pytest.fixture
def clean_blackboard() -> Iterator[Any]:
    """The py_trees blackboard, empty at the start of the test and cleared after it."""
    import py_trees

    py_trees.blackboard.Blackboard.clear()
    yield py_trees.blackboard.Blackboard
    py_trees.blackboard.Blackboard.clear()


@pytest.fixture
def bt_raider_run(request: pytest.FixtureRequest, clean_blackboard: Any) -> Callable[..., Any]:
    """``bt_raider_run(tree, **options) -> RunResult``: :func:`bt_raider.testing.run_tree`."""
    from bt_raider.testing.run import run_tree

    results: list[Any] = []
    request.node.stash[_RESULTS] = results

    def run(tree: Any, **options: Any) -> Any:
        result = run_tree(tree, **options)
        results.append(result)
        return result

    return run


@pytest.fixture
def sim_world(clean_blackboard: Any) -> Any:
    """A fresh SimWorld over the kit's small kitchen."""
    from bt_raider.simulation.simworld import SimWorld
    from bt_raider.testing.scenes import small_kitchen

    return SimWorld(small_kitchen())


@pytest.fixture
def bt_raider_explore(clean_blackboard: Any) -> Callable[..., Any]:
    """``bt_raider_explore(tree_factory=None, world_factory=None, **options) -> ExploreReport``.

    :func:`bt_raider.testing.explore.explore` (needs the ``explore`` extra); assert
    ``report.ok, report.text()`` to see each shrunk finding as a pytest test.
    """
    from bt_raider.testing.explore import explore

    return explore


@pytest.fixture
def scripted_human() -> Callable[..., Any]:
    """``scripted_human(answers, on_answer=None, **kw) -> ScriptedHuman``."""
    from bt_raider.robot.human import ScriptedHuman

    return ScriptedHuman


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    """A failing test's report shows each bt_raider run it made (verdicts, recoveries, dialogue)."""
    outcome = yield
    report = outcome.get_result()
    results = item.stash.get(_RESULTS, None)
    if results and report.when == "call" and report.failed:
        for i, result in enumerate(results, 1):
            try:
                text = result.summary()
            except Exception as exc:  # never crash the test run over a report
                text = f"(the run's summary could not be made: {type(exc).__name__})"
            report.sections.append((f"bt_raider run {i} of {len(results)}", text))
