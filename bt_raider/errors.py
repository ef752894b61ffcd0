"""The one exception root of bt_raider and its families.

This module imports nothing, so the ground-floor packages (``bt_raider.perception``,
``bt_raider.memory``) may raise these without importing the rest of the core.

Messages name the thing, its value and the valid options, e.g.
``unknown action 'grap': expected one of pick, place, open``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable


class BtRaiderError(Exception):
    """Root of every error bt_raider raises on purpose."""


class SceneError(BtRaiderError, ValueError):
    """A scene file or dict is malformed (names the file, object index and field)."""


class QueryError(BtRaiderError, ValueError):
    """A query cannot be understood: empty, unknown action, wrong arity."""


class ToolError(BtRaiderError):
    """A perception tool could not answer (bad argument, unknown object).

    Inside an agent loop this is fed back to the model as text (PFM warning 3).
    """


class SceneNumberError(ToolError, SceneError):
    """A number a tool needs is unusable (not finite, out of range): the scene's defect.

    A :class:`ToolError` (the tool could not answer) that is also a :class:`SceneError`: no
    question the model could ask instead would fix it, so a check ends ``unknown``.
    """


class BackendError(BtRaiderError):
    """A chat-model or embedding backend failed: unreachable endpoint, bad reply."""


class MissingDependencyError(BtRaiderError, ImportError):
    """An optional dependency is not installed; the message carries the install hint."""


class RecoveryCodeError(BtRaiderError, ValueError):
    """Recovery code was rejected by the whitelist (the reason goes back to the model)."""


class PlanningError(BtRaiderError):
    """PDDL could not be read, solved or validated, or no engine supports the problem."""


class ActionFailed(BtRaiderError):
    """A robot (or the simulated world) could not execute an action."""


class MemoryStoreError(BtRaiderError):
    """The vector memory's database or index is unusable."""


class CommunicationError(BtRaiderError):
    """A message to a collaborator could not be sent, was malformed, or timed out."""


class UsageError(BtRaiderError, ValueError, TypeError):
    """bt_raider's API was called wrongly: an unknown or clashing name, a bad option.

    The caller's bug, not the robot's situation: nothing a model or a person could answer fixes
    it, so it is never fed back to a model. It is also a ``ValueError`` and a ``TypeError``,
    the built-in errors it replaced, so code that caught those still catches it.
    """


class Cancelled(BtRaiderError):
    """Work was stopped before it finished: its cancel event was set or its deadline passed.

    Raised inside work that runs on a worker (a check, a forecast, a validation) so that it
    unwinds at once; whoever cancelled it does not wait for an answer.
    """


def renamed(module: str, names: dict[str, tuple[str, object]]) -> Callable[[str], object]:
    """A module ``__getattr__`` that still answers to old names, with a DeprecationWarning.

    Args:
        module: the module's ``__name__`` (named in the warning and the AttributeError).
        names: old name -> (its one import path now, e.g.
            ``"bt_raider.recovery.symbolic.SymbolicRecoveryPlanner"``, the object).

    Returns:
        The function to assign to the module's ``__getattr__``.
    """

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        path, value = names[name]
        warnings.warn(
            f"{module}.{name} is deprecated and goes in the next release: use {path}",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__


def require(module: str, extra: str, package: str | None = None):
    """Import an optional dependency lazily, or raise with an install hint.

    Args:
        module: module to import, e.g. ``"zenoh"``.
        extra: the bt_raider extra that installs it, e.g. ``"zenoh"``.
        package: the PyPI name when it differs from ``module``.

    Returns:
        The imported module.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        name = package or module
        raise MissingDependencyError(
            f"{name} is not installed: pip install '{name}' (or pip install 'bt_raider[{extra}]')"
        ) from exc
