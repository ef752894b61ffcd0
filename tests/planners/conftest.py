"""Fixtures for the planners tests: the real PDDL domains of ../shared/pddl (read-only; tests
that need them skip when ../shared is absent)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import pytest

from bt_raider.errors import ActionFailed
from bt_raider.robot.actions import ActionState, Progress
from tests.shared_data import OWN_PDDL, PDDL, ROOT, classical_domains, require

DATA = ROOT / "planners" / "data"
#: Domains with classical (instantaneous) actions and a stored problem (none without ../shared).
CLASSICAL = classical_domains()
ALFRED_PROBLEM = DATA / "alfred_puttask_problem.pddl"


def files(name: str) -> tuple[Path, Path]:
    """The domain and problem of one of our own domains (``tests/data/pddl``) or of a shared
    one (the test skips when ../shared is absent)."""
    own = OWN_PDDL / name
    if own.is_dir():
        return own / "domain.pddl", own / "problem.pddl"
    return require(PDDL / name / "domain.pddl"), require(PDDL / name / "problem.pddl")


def load(name: str):
    from bt_raider.planners.pddl import load as load_pddl

    return load_pddl(*files(name))


@pytest.fixture
def pddl_files():
    """``pddl_files(name) -> (domain, problem)`` paths of an own or a shared domain."""
    return files


@pytest.fixture
def load_problem():
    """``load_problem(name) -> Problem`` for an own or a shared domain."""
    return load


def alfred_domain_text(*, constants: bool = True, total_cost: bool = True) -> str:
    """ALFRED's PutTaskExtended domain with the two edits UP needs (see the problem file).

    ``constants`` declares the type names the actions use; ``total_cost`` renames the cost
    fluent ``totalCost`` to PDDL 3.1's ``total-cost`` so UP reads it as action costs.
    """
    text = require(PDDL / "alfred_puttask_extended" / "domain.pddl").read_text()
    if constants:
        decl = (
            " (:constants SinkBasinType MicrowaveType FridgeType - rtype"
            " KnifeType ButterKnifeType - otype)\n (:predicates"
        )
        assert " (:predicates" in text
        text = text.replace(" (:predicates", decl, 1)
    if total_cost:
        assert "totalCost" in text
        text = text.replace("totalCost", "total-cost")
    return text


@pytest.fixture
def gripper():
    """The project's own gripper-style domain (``tests/data/pddl/two_rooms``): a robot with
    a ``left`` and a ``right`` hand carries ``ball1``..``ball3`` from ``rooma`` to ``roomb``."""
    return load("two_rooms")


@pytest.fixture
def alfred(tmp_path):
    """The patched ALFRED domain and the bundled problem, loaded."""
    from bt_raider.planners.pddl import load as load_pddl

    domain = tmp_path / "alfred_domain.pddl"
    domain.write_text(alfred_domain_text())
    return load_pddl(domain, ALFRED_PROBLEM)


class TwoTickRobot:
    """A Robot over a PddlWorld whose actions take two polls: one RUNNING, then the outcome.

    The action is applied on the second poll, so the world can change between the tick that
    starts an action and the tick that finishes it, as with a real robot.
    """

    def __init__(self, world: Any) -> None:
        self.world = world
        self._actions: dict[int, list[Any]] = {}
        self._next = 0

    def start(self, action: str, args: Sequence[Any]) -> int:
        self._next += 1
        self._actions[self._next] = [action, list(args), 0]
        return self._next

    def poll(self, handle: Hashable) -> Progress:
        entry = self._actions[handle]
        entry[2] += 1
        if entry[2] < 2:
            return Progress(ActionState.RUNNING, f"{entry[0]} under way")
        del self._actions[handle]
        try:
            return Progress(ActionState.SUCCEEDED, self.world.execute(entry[0], entry[1]))
        except ActionFailed as exc:
            return Progress(ActionState.FAILED, str(exc))

    def cancel(self, handle: Hashable) -> None:
        self._actions.pop(handle, None)

    def observe(self) -> None:
        return None


@pytest.fixture
def two_tick_robot():
    """The :class:`TwoTickRobot` class (tests build it over their world)."""
    return TwoTickRobot


@pytest.fixture
def tick_until_done():
    return _tick_until_done


@pytest.fixture
def alfred_text():
    """``alfred_text(constants=True, total_cost=True) -> str``: the (patched) ALFRED domain."""
    return alfred_domain_text


def _tick_until_done(tree, max_ticks: int = 500, sleep: float = 0.005):
    """Tick a BehaviourTree (or root behaviour) until it leaves RUNNING; returns the status."""
    import time

    import py_trees

    root = tree.root if isinstance(tree, py_trees.trees.BehaviourTree) else tree
    for _ in range(max_ticks):
        if isinstance(tree, py_trees.trees.BehaviourTree):
            tree.tick()
        else:
            root.tick_once()
        if root.status in (py_trees.common.Status.SUCCESS, py_trees.common.Status.FAILURE):
            return root.status
        time.sleep(sleep)
    raise AssertionError(f"{root.name} still {root.status} after {max_ticks} ticks")
