"""Checkers by name: ``make_checker("symbolic")``, ``make_checker("openai", model=...)``.

In the style of unified-planning's engine factory, the registry maps a name to a module and a
factory inside it, imported on first use: building the CLI or a guard imports no reasoner it does
not run, and a third-party checker registers itself without editing this file::

    from bt_raider.checking.registry import register_checker

    register_checker("mine", "my_package.checker", "MyChecker")
    checker = make_checker("mine", threshold=0.3)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bt_raider.checking.contract import Checker, Query, as_query
from bt_raider.errors import UsageError

if TYPE_CHECKING:
    from bt_raider.checking.verdict import Verdict
    from bt_raider.perception.scene import Scene

#: name -> (module, attribute, fixed options): the attribute is called with the fixed options
#: plus the caller's to build the checker.
_REGISTRY: dict[str, tuple[str, str, dict[str, Any]]] = {
    "symbolic": ("bt_raider.checking.symbolic", "SymbolicReasoner", {}),
    "openai": ("bt_raider.checking.agent", "agent_on", {"backend": "openai"}),
    "transformers": ("bt_raider.checking.agent", "agent_on", {"backend": "transformers"}),
    "llama-cpp": ("bt_raider.checking.agent", "agent_on", {"backend": "llama-cpp"}),
}

#: The names shipped with bt_raider (the registry may hold more at run time).
BACKENDS = tuple(_REGISTRY)


def register_checker(name: str, module: str, factory: str, *, replace: bool = False) -> None:
    """Make ``make_checker(name, **options)`` call ``module.factory(**options)``.

    Args:
        name: the backend name users pass to ``make_checker(name)`` and ``check(..., name)``.
        module: dotted path of the module holding the factory; imported on first use.
        factory: a class or function in ``module``, called with the options.
        replace: allow overriding an existing name (else a clash is an error).
    """
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"a checker name must be a non-empty string, got {name!r}")
    old = _REGISTRY.get(name)
    if old is not None and not replace and old[:2] != (module, factory):
        raise UsageError(
            f"checker {name!r} is already registered as {old[0]}:{old[1]}; "
            "pass replace=True to override it"
        )
    _REGISTRY[name] = (module, factory, {})


def checker_names() -> list[str]:
    """Every registered backend name, shipped ones first."""
    return list(_REGISTRY)


def make_checker(backend: str | Checker = "symbolic", **options: Any) -> Checker:
    """Build a checker by name (``symbolic``, ``openai``, ``transformers``, ``llama-cpp``) or pass
    one through.

    Options are the backend's: ``model``, ``base_url``, ``api_key``, ``time_limit``, ``tools``.
    """
    if not isinstance(backend, str):
        return backend
    entry = _REGISTRY.get(backend)
    if entry is None:
        raise UsageError(f"unknown backend {backend!r}: expected one of {', '.join(_REGISTRY)}")
    module, attribute, fixed = entry
    # A registered factory (by dotted name) returns a Checker; importlib cannot say so.
    checker: Checker = getattr(importlib.import_module(module), attribute)(**fixed, **options)
    return checker


def check(
    scene: Scene | dict[str, Any] | str,
    query: str | Query,
    backend: str | Checker = "symbolic",
    **options: Any,
) -> Verdict:
    """Check one action in a scene.

    Args:
        scene: a :class:`~bt_raider.perception.scene.Scene`, a scene dict, or a path to a file.
        query: the action (structured, PDDL instance or natural language), or a ``Query``.
        backend: ``"symbolic"`` (default), ``"openai"``, ``"transformers"``, any registered name,
            or a Checker.
        **options: passed to the backend (see :func:`make_checker`).
    """
    # The scene model is loaded when a scene is checked, not by make_checker's users.
    from bt_raider.perception.scene import Scene

    if isinstance(scene, str):
        scene = Scene.load(scene)
    elif isinstance(scene, dict):
        scene = Scene.from_dict(scene)
    return make_checker(backend, **options).check(scene, as_query(query))
