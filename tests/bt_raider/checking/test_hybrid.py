"""The hybrid checker: the model proposes, the symbolic reasoner disposes, failing closed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bt_raider.checking.hybrid import HybridChecker, decide
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.testing import small_kitchen

categories = st.sampled_from(list(Category))


@given(categories, categories)
def test_the_model_never_clears_what_the_reasoner_has_not_cleared(model, reasoner):
    out = decide(Verdict(model, "model says"), Verdict(reasoner, "reasoner says"))
    if out.category is Category.NONE:
        assert reasoner is Category.NONE
    if reasoner not in (Category.UNKNOWN, model):
        assert out.category is reasoner and "the model said" in out.explanation
    if reasoner is Category.UNKNOWN and model not in (Category.NONE, Category.UNKNOWN):
        assert out.category is model and out.explanation == "model says"
    if reasoner is model:
        assert out.explanation == "reasoner says"


class _SaysNone:
    """A model-driven checker written for the test: it clears every action."""

    def __init__(self) -> None:
        self.calls = 0

    def check(self, scene, query, *, cancel=None):
        self.calls += 1
        return Verdict(Category.NONE, "looks fine to me")


def test_a_model_clearing_an_ambiguous_pick_is_overruled_by_the_reasoner():
    scene = small_kitchen()
    model = _SaysNone()
    hybrid = HybridChecker(model, SymbolicReasoner())
    # Two counter tops: "the counter top" is ambiguous whatever the model says.
    verdict = hybrid.check(scene, "go to the counter top")
    assert model.calls == 1
    assert verdict.category is Category.AMBIGUITY
    assert hybrid.last is not None and hybrid.last[0].category is Category.NONE
    # Where both agree (the tomato is within reach), the reasoner's explanation is kept.
    agreed = hybrid.check(scene, "pick(Tomato)")
    assert hybrid.last[0].category is agreed.category is Category.NONE
    assert agreed.explanation == hybrid.last[1].explanation != "looks fine to me"
