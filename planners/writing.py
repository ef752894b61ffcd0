"""Problems written as PDDL without enumerating what is false.

unified-planning's (UP) ``PDDLWriter`` walks ``problem.initial_values``: every grounding of
every predicate with its default value. A 5-ary predicate over 20 objects is 3.2 million values
(minutes and gigabytes) for one true fact. Where false is every predicate's default, the
explicit facts say the same, and that is what is written here: by
:func:`~bt_raider.planners.pddl.solve` in the caller's process, and by UP's Fast Downward engine
in the planning child (:mod:`bt_raider.planners.child`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from unified_planning.model import Problem


class _ExplicitInit:
    """A problem whose initial values are only those set explicitly (the rest is false)."""

    def __init__(self, problem: Problem) -> None:
        self._problem = problem

    def __getattr__(self, name: str) -> Any:
        return getattr(self._problem, name)

    @property
    def initial_values(self) -> Any:
        return self._problem.explicit_initial_values


def _closed_world(problem: Problem) -> bool:
    """Every fluent is a predicate false unless said true: the explicit facts are the state."""
    defaults = problem.fluents_defaults
    for fluent in problem.fluents:
        if not fluent.type.is_bool_type():
            return False
        default = defaults.get(fluent)
        if default is not None and not (
            default.is_bool_constant() and not default.constant_value()
        ):
            return False
    return True


def closed_world_writes(write: Any) -> Any:
    """UP's ``PDDLWriter._write_problem`` made to write the true facts without enumerating
    every false one.

    UP's writer walks ``problem.initial_values``, every grounding of every predicate with its
    default: a 5-ary predicate over 20 objects is 3.2 million values (minutes, gigabytes) for
    one true fact. Where false is every predicate's default, the explicit facts say the same;
    other problems are written as UP writes them.
    """
    from unified_planning.model.htn import HierarchicalProblem

    def _write_problem(self: Any, out: Any) -> None:
        real = self.problem
        if isinstance(real, HierarchicalProblem) or not _closed_world(real):
            write(self, out)
            return
        self.problem = _ExplicitInit(real)
        try:
            write(self, out)
        finally:
            self.problem = real

    _write_problem.closed_world = True  # type: ignore[attr-defined]
    return _write_problem


def problem_writer(problem: Problem) -> Any:
    """UP's ``PDDLWriter`` for ``problem``, writing its true facts only where that says all
    (see :func:`closed_world_writes`)."""
    from unified_planning.io import PDDLWriter

    class Writer(PDDLWriter):  # type: ignore[misc]
        _write_problem = closed_world_writes(PDDLWriter._write_problem)

    return Writer(problem)
