"""Checkers by name: the shipped backends, a third party's, and the errors."""

import pytest

from bt_raider.checking import registry
from bt_raider.checking.registry import make_checker, register_checker
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.errors import UsageError


class ThirdPartyChecker:
    """A checker that lives outside bt_raider (here: in this test module)."""

    def __init__(self, answer: str = "none", **options):
        self.answer = answer
        self.options = options

    def check(self, scene, query, *, cancel=None):
        return None  # never asked here: the tests are about how it is built


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def test_unknown_backend_names_the_options():
    with pytest.raises(UsageError, match="symbolic, openai, transformers"):
        make_checker("gpt-magic")


def test_public_names_resolve_lazily():
    import bt_raider

    for name in bt_raider.__all__:
        assert getattr(bt_raider, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bt_raider.nope  # noqa: B018


def test_the_symbolic_backend_is_built_by_name_with_its_options():
    checker = make_checker("symbolic", single_slot={"Toaster"})
    assert isinstance(checker, SymbolicReasoner)
    assert checker.single_slot == frozenset({"Toaster"})


def test_a_third_party_checker_registers_without_editing_bt_raider(clean_registry):
    register_checker("mine", __name__, "ThirdPartyChecker")
    checker = make_checker("mine", answer="none", threshold=0.3)
    assert isinstance(checker, ThirdPartyChecker)
    assert checker.options == {"threshold": 0.3}
    assert "mine" in registry.checker_names()
    assert registry.checker_names()[:3] == ["symbolic", "openai", "transformers"]


def test_a_registered_name_is_not_silently_replaced(clean_registry):
    register_checker("mine", __name__, "ThirdPartyChecker")
    register_checker("mine", __name__, "ThirdPartyChecker")  # the same entry again is fine
    with pytest.raises(UsageError, match="already registered as .*ThirdPartyChecker"):
        register_checker("mine", "elsewhere", "Other")
    with pytest.raises(UsageError, match="already registered"):
        register_checker("symbolic", __name__, "ThirdPartyChecker")
    register_checker("symbolic", __name__, "ThirdPartyChecker", replace=True)
    assert isinstance(make_checker("symbolic"), ThirdPartyChecker)


@pytest.mark.parametrize("bad", ["", "  ", None])
def test_a_checker_needs_a_name(bad, clean_registry):
    with pytest.raises(UsageError, match="non-empty string"):
        register_checker(bad, __name__, "ThirdPartyChecker")


def test_a_missing_module_is_reported_when_the_checker_is_built(clean_registry):
    register_checker("ghost", "no_such_package.checker", "Checker")
    with pytest.raises(ModuleNotFoundError, match="no_such_package"):
        make_checker("ghost")
