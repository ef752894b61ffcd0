"""The package's first names, its deprecated names, and the one exception root."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import bt_raider
from bt_raider import errors


def test_the_first_names_resolve_to_their_one_path_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in bt_raider.__all__:
            module = importlib.import_module(bt_raider._EXPORTS[name])
            assert getattr(bt_raider, name) is getattr(module, name)
    assert "RaiderGuard" in dir(bt_raider) and "Recovery" in bt_raider.__all__


def test_the_first_names_are_a_short_list():
    assert 10 <= len(bt_raider.__all__) <= 16


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bt_raider.nope  # noqa: B018


@pytest.mark.parametrize("name", sorted(bt_raider._DEPRECATED))
def test_a_name_exported_before_still_answers_and_says_where_it_lives(name):
    module, real = bt_raider._DEPRECATED[name]
    with pytest.warns(DeprecationWarning, match=f"use {module}.{real}"):
        value = getattr(bt_raider, name)
    assert value is getattr(importlib.import_module(module), real)


@pytest.mark.parametrize(
    "module, old, new",
    [
        ("bt_raider.recovery.symbolic", "SymbolicRecovery", "SymbolicRecoveryPlanner"),
        ("bt_raider.recovery.llm", "LLMRecovery", "LLMRecoveryPlanner"),
        ("bt_raider.planners.pddl_recovery", "PddlRecovery", "PddlRecoveryPlanner"),
    ],
)
def test_recovery_planners_are_named_as_planners_and_the_old_names_warn(module, old, new):
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{module}.{old} is deprecated.*{new}"):
        assert getattr(mod, old) is getattr(mod, new)
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        mod.Nope  # noqa: B018


def test_import_bt_raider_loads_no_subpackage():
    code = (
        "import sys, bt_raider; print(sorted(m for m in sys.modules if m.startswith('bt_raider')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bt_raider']"


def test_usage_and_cancelled_errors_sit_under_the_root():
    assert issubclass(errors.UsageError, errors.BtRaiderError)
    assert issubclass(errors.Cancelled, errors.BtRaiderError)
    # Code that caught the built-in errors a usage error replaced still catches it.
    assert issubclass(errors.UsageError, ValueError) and issubclass(errors.UsageError, TypeError)


def test_every_public_exception_class_of_the_package_is_under_the_root():
    """Each public exception class any bt_raider module defines derives from BtRaiderError.

    (Private control-flow exceptions that never leave their module are not errors to catch.)
    """
    from tests.test_layout import MODULES

    names = sorted(MODULES)
    assert "bt_raider.perception.scene" in names and "bt_raider.robot.worker" in names
    outside = []
    for name in names:
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseException)
                and obj.__module__ == name
                and not attr.startswith("_")
                and not issubclass(obj, errors.BtRaiderError)
            ):
                outside.append(f"{name}.{attr}")
    assert outside == []


def test_every_public_class_and_function_has_a_docstring():
    """The API reference is generated from the docstrings: a public name without one would be
    documented by its signature alone."""
    import inspect

    from tests.test_layout import MODULES

    bare = []
    for name in sorted(MODULES):
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            public = not attr.startswith("_") and getattr(obj, "__module__", None) == name
            if public and (inspect.isclass(obj) or inspect.isfunction(obj)) and not obj.__doc__:
                bare.append(f"{name}.{attr}")
    assert bare == []
