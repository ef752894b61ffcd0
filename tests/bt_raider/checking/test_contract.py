"""The query contract: Query validation, as_query, the Checker protocol."""

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


def test_a_checker_object_passes_through():
    class Always:
        def check(self, scene, query, *, cancel=None):
            return None

    c = Always()
    assert isinstance(c, Checker)
    assert make_checker(c) is c


def test_the_contract_imports_no_reasoner():
    import subprocess
    import sys

    code = (
        "import sys, bt_raider.checking.contract, bt_raider.checking.registry;"
        "print(sorted(m for m in sys.modules if m.startswith('bt_raider.checking.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bt_raider.checking.contract', 'bt_raider.checking.registry']"
