"""A testing kit for users' trees: run a tree to completion in a test and assert on it.

::

    from bt_raider.testing import run_tree, small_kitchen

    result = run_tree(root, world=SimWorld(small_kitchen()), answers=["the red one"])
    assert result.status is py_trees.common.Status.SUCCESS
    assert result.recovered("ambiguity")

- :func:`~bt_raider.testing.run.run_tree` and its :class:`~bt_raider.testing.run.RunResult`
  (statuses per tick, verdicts, recoveries, transcript, the world);
- :func:`~bt_raider.testing.scenes.small_kitchen`: a small kitchen of the project's own, in
  AI2-THOR format, for tests that need a scene;
- ``from bt_raider.testing.explore import explore``: the explorer: generated worlds, people
  and faults against a tree, judged by a world oracle, failures shrunk to a pytest test (the
  ``explore`` extra); :class:`~bt_raider.testing.explore_world.Case`,
  :func:`~bt_raider.testing.explore.run_case` and the report are also here, loaded on first
  use; ``explore(domain=UserDomain(...))`` explores the user's own domain (their room, action
  names, guard, people, words; :mod:`bt_raider.testing.explore_domain`);
- :mod:`bt_raider.testing.plugin`: the pytest plugin (installed with bt_raider through the
  ``pytest11`` entry point) with the fixtures ``bt_raider_run``, ``sim_world``,
  ``scripted_human``, ``clean_blackboard`` and ``bt_raider_explore``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bt_raider.testing.run import RecoveryRun, RunResult, run_tree
    from bt_raider.testing.scenes import KITCHEN_PATH, small_kitchen

#: Every name, imported on first use: pytest loads the plugin (bt_raider.testing.plugin) in
#: each test run of a project where bt_raider is installed, and the run kit loads the runtime
#: (the explorer's names load recovery and the planners' kin).
_LAZY = {
    "RecoveryRun": "bt_raider.testing.run",
    "RunResult": "bt_raider.testing.run",
    "run_tree": "bt_raider.testing.run",
    "KITCHEN_PATH": "bt_raider.testing.scenes",
    "small_kitchen": "bt_raider.testing.scenes",
    "run_case": "bt_raider.testing.explore",
    "check_case": "bt_raider.testing.explore",
    "ExploreReport": "bt_raider.testing.explore",
    "Case": "bt_raider.testing.explore_world",
    "Thing": "bt_raider.testing.explore_world",
    "UserDomain": "bt_raider.testing.explore_domain",
    "PROPERTIES": "bt_raider.testing.explore_oracle",
}


def __getattr__(name: str) -> Any:
    """The kit's names, loaded when first used."""
    if name not in _LAZY:
        raise AttributeError(f"module 'bt_raider.testing' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_LAZY[name]), name)


__all__ = [
    "KITCHEN_PATH",
    "PROPERTIES",
    "Case",
    "ExploreReport",
    "RecoveryRun",
    "RunResult",
    "Thing",
    "UserDomain",
    "check_case",
    "run_case",
    "run_tree",
    "small_kitchen",
]
