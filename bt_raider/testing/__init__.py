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
- :mod:`bt_raider.testing.plugin`: the pytest plugin (installed with bt_raider through the
  ``pytest11`` entry point) with the fixtures ``bt_raider_run``, ``sim_world``,
  ``scripted_human`` and ``clean_blackboard``.
"""

from __future__ import annotations

from bt_raider.testing.run import RecoveryRun, RunResult, run_tree
from bt_raider.testing.scenes import KITCHEN_PATH, small_kitchen

__all__ = ["KITCHEN_PATH", "RecoveryRun", "RunResult", "run_tree", "small_kitchen"]
