"""resolve_action: from a passing verdict to the arguments a child acts on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bt_raider.checking.contract import Query
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.robot.retarget import ResolvedAction, Retargetable, resolve_action, resolved_key


def ok(grounding: dict[str, list[str]], action: str | None = "pick") -> Verdict:
    return Verdict(Category.NONE, "fine", grounding=grounding, action=action)


def test_each_argument_becomes_the_one_object_it_grounded_to() -> None:
    got = resolve_action(
        ok({"Mug": ["Mug|1"], "the table": ["Table|1", "Table|2"]}, action="place"),
        Query("place(Mug, the table)"),
    )
    assert got.action == "place" and got.phrases == ("Mug", "the table")
    assert got.args == ("Mug|1", "the table")  # two tables: the phrase stays as written
    assert not got.recovered and got.bindings == {}
    assert got.as_dict() == {
        "action": "place",
        "args": ["Mug|1", "the table"],
        "grounding": {"Mug": ["Mug|1"], "the table": ["Table|1", "Table|2"]},
        "bindings": {},
        "query": "place(Mug, the table)",
        "phrases": ["Mug", "the table"],
        "recovered": False,
    }


def test_grounding_keys_in_another_case_and_text_the_parser_cannot_split() -> None:
    assert resolve_action(ok({"mug": ["Mug|1"]}), Query("pick(Mug)")).args == ("Mug|1",)
    # An LLM checker may check what our parser does not know: its grounding order is used.
    got = resolve_action(ok({"the red lever": ["Lever|3"]}, action=None), Query("yank it hard"))
    assert got.args == ("Lever|3",) and got.phrases == ("the red lever",) and got.action is None


def test_pddl_bindings_after_a_recovery_map_parameters_to_the_chosen_object() -> None:
    asked = Query(
        "(pick-up tiago cup1 counter)", bindings={"r": "tiago", "o": "Cup", "l": "CounterTop"}
    )
    got = resolve_action(ok({"Cup_2": ["Cup|2"]}), Query("pick(Cup_2)"), asked=asked)
    assert got.recovered and got.args == ("Cup|2",)
    assert got.bindings == {"r": "tiago", "o": "Cup|2", "l": "CounterTop"}


def test_the_protocol_is_one_method_any_object_may_have() -> None:
    class Child:
        def retarget(self, resolved: ResolvedAction | None) -> None: ...

    assert isinstance(Child(), Retargetable) and not isinstance(object(), Retargetable)
    assert resolved_key("Guard a/b") == "/bt_raider/resolved/Guard a_b"


phrase = st.text(st.characters(codec="utf-8", exclude_characters="(),\n"), min_size=1, max_size=12)


@given(
    st.lists(phrase, min_size=1, max_size=3),
    st.dictionaries(phrase, st.lists(phrase, max_size=3), max_size=4),
)
def test_every_argument_is_its_phrase_or_the_single_object_it_grounded_to(
    phrases: list[str], grounding: dict[str, list[str]]
) -> None:
    query = Query(f"pick({', '.join(phrases)})")
    got = resolve_action(ok(grounding), query)
    assert len(got.args) == len(got.phrases)
    for arg, said in zip(got.args, got.phrases, strict=True):
        matches = [
            ids
            for key, ids in grounding.items()
            if key.strip().casefold() == said.strip().casefold()
        ]
        assert arg == said or (matches and [arg] in matches)


def test_a_compound_instruction_is_cut_where_check_cuts_it() -> None:
    from bt_raider.robot.retarget import compound_steps

    assert compound_steps(Query("pick the tomato and put it in the bowl")) == (
        "pick the tomato",
        "put it in the bowl",
    )
    assert compound_steps(Query("pick the tomato")) == ()
    assert compound_steps(Query("pick(Tomato)")) == ()
    # A PDDL step is one action, whatever its text.
    assert (
        compound_steps(Query("pick the tomato and put it in the bowl", bindings={"?x": "a"})) == ()
    )


@given(st.lists(st.sampled_from(["pick", "place", "open"]), min_size=1, max_size=4))
def test_each_step_resolves_on_its_own_and_the_first_speaks_for_the_whole(verbs: list[str]) -> None:
    from bt_raider.robot.retarget import resolve_steps

    steps = [
        (f"{v}(Thing{i})", ok({f"Thing{i}": [f"Thing|{i}"]}, action=v)) for i, v in enumerate(verbs)
    ]
    whole = ok({}, action=verbs[-1])
    got = resolve_steps(whole, Query("a, then b"), steps, {0})

    assert [s.args for s in got.steps] == [(f"Thing|{i}",) for i in range(len(verbs))]
    assert [s.recovered for s in got.steps] == [i == 0 for i in range(len(verbs))]
    assert (got.action, got.args, got.verdict, got.query) == (
        verbs[0],
        ("Thing|0",),
        whole,
        "a, then b",
    )
    assert [s["args"] for s in got.as_dict()["steps"]] == [
        [f"Thing|{i}"] for i in range(len(verbs))
    ]
    for verb in set(verbs):
        first = verbs.index(verb)
        assert got.for_action(verb) is got.steps[first]
        assert got.for_action(verb, 2) is None  # no step of that action has two arguments
    assert got.for_action("slice") is None
