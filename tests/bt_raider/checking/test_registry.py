"""Query and make_checker: validation and backend selection."""

import pytest

from bt_raider.checking.contract import Checker, Query, as_query
from bt_raider.checking.registry import make_checker
from bt_raider.errors import QueryError


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_empty_query_is_rejected(bad):
    with pytest.raises(QueryError, match="non-empty"):
        Query(bad)


def test_as_query_wraps_text_and_keeps_queries():
    q = Query("(pick tiago medicine counter)", preconditions=("(at tiago counter)",))
    assert as_query(q) is q
    assert as_query("pick(Apple)").text == "pick(Apple)"


def test_unknown_backend_names_the_options():
    with pytest.raises(QueryError, match="symbolic, openai, transformers"):
        make_checker("gpt-magic")


def test_a_checker_object_passes_through():
    class Always:
        def check(self, scene, query, *, cancel=None):
            return None

    c = Always()
    assert isinstance(c, Checker)
    assert make_checker(c) is c


def test_public_names_resolve_lazily():
    import bt_raider

    for name in bt_raider.__all__:
        assert getattr(bt_raider, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bt_raider.nope  # noqa: B018
