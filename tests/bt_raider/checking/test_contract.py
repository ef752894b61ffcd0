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


def test_a_query_over_the_length_cap_is_refused_naming_length_and_cap():
    from bt_raider.checking.contract import MAX_QUERY_CHARS

    Query("pick the apple " * 130)  # 1,950 characters: under the cap
    text = "pick the apple " * 7000  # 105 KB, the size that once took over 2 GiB
    with pytest.raises(QueryError) as err:
        Query(text)
    msg = str(err.value)
    assert f"{len(text):,} characters" in msg and f"{MAX_QUERY_CHARS:,}" in msg
    assert len(msg) < 200  # the query itself is not echoed whole


@pytest.mark.parametrize("text", ["x" * 2001, " " * 1999 + "pick(Apple)"])
def test_the_cap_counts_every_character(text):
    with pytest.raises(QueryError, match="over the limit"):
        as_query(text)


def test_a_query_cannot_change_and_replace_checks_the_new_text():
    q = Query("pick(Apple)", preconditions=("(at tiago counter)",), bindings={"?o": "Apple"})
    with pytest.raises(AttributeError, match="cannot change"):
        q.text = "pick(Mug)"
    with pytest.raises(AttributeError, match="cannot change"):
        del q.preconditions
    r = q.replace(text="pick(Mug)")
    assert (r.text, r.preconditions, r.bindings) == ("pick(Mug)", q.preconditions, q.bindings)
    assert q.text == "pick(Apple)"
    with pytest.raises(QueryError, match="non-empty"):
        q.replace(text=" ")


def test_queries_equal_and_hash_by_text_and_preconditions_not_bindings():
    a = Query("pick(Apple)", ("(at tiago counter)",), bindings={"?o": "Apple"})
    b = Query("pick(Apple)", ("(at tiago counter)",), bindings={"?o": "Apple_2"})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Query("pick(Apple)") and a != Query("pick(Apple)", ("(at tiago counter)",), ("x",))
    assert a != "pick(Apple)" and str(a) == "pick(Apple)"


def test_a_query_survives_pickle_and_copy():
    import copy
    import pickle

    q = Query("pick(Apple)", ("(at tiago counter)",), ("(hand-free)",), {"?o": "Apple"})
    for again in (pickle.loads(pickle.dumps(q)), copy.copy(q), copy.deepcopy(q)):
        assert again == q and again.bindings == q.bindings and again.unsatisfied == q.unsatisfied
