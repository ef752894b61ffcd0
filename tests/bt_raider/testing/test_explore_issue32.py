"""Issue 32's classes, as the explorer found them on the code before the fix (main 801bbfc),
shrunk: each case is an episode of the default tree and robot, judged by the oracle.

The tests (and parameters) marked ``OLD`` FAIL ON 801bbfc (the finding) and pass with the
fixes of issue 32 (items 1-4: one reader of referring expressions, speaker frames, the
designation checked at release, unique guard ids, a verifier that carries the hand); what the
old code did is said above each. The others held on 801bbfc too and guard the fixes.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bt_raider.testing.explore import check_case
from bt_raider.testing.explore_lang import Pick, Say
from bt_raider.testing.explore_world import Case, Thing

ROOT = Path(__file__).resolve().parents[3]
RED_BLUE = (Thing("red", False, "left"), Thing("blue", False, "right"))


def clean(case: Case, runs: int = 1) -> None:
    for _ in range(runs):
        episode = check_case(case, replay=False)
        assert episode.violations == [], [str(v) for v in episode.violations]


@pytest.mark.parametrize("style", range(8))
def test_negation_and_exclusion_in_an_instruction(style):
    # OLD (801bbfc): "pick the box that is not red" (and isn't, ", not", except, other than, but
    # not, rather than, instead of) checked none, grounded to the red box, which was picked.
    clean(
        Case(kind="Box", things=RED_BLUE, form="said", said=Say(Pick(), Pick("red"), style=style))
    )


def test_the_speakers_left_with_her_heading_is_read_in_her_frame():
    # OLD (801bbfc): "pick the box on my left", she facing the robot: asked where the box was
    # (P9), or took the robot's left.
    said = Say(Pick(side="left", frame="my"))
    clean(Case(kind="Box", things=RED_BLUE, form="said", said=said, speaker="facing"))


def test_the_speakers_left_without_her_heading_is_asked_about():
    # OLD (801bbfc): checked none and picked the robot's left box (P15).
    said = Say(Pick(side="left", frame="my"))
    clean(Case(kind="Box", things=RED_BLUE, form="said", said=said, speaker="unknown"))


@pytest.mark.parametrize(
    "answer",
    [
        Say(exclude=Pick(at="Sink")),  # "not the one in the sink"
        Say(Pick(at="Sink")),  # "the one in the sink"
        Say(Pick(colour="gold"), style=1),  # "the golden one"
        Say(Pick(side="left", frame="my")),  # OLD: "the one on my left" (she faces the robot)
    ],
)
def test_reply_forms_that_instructions_accept(answer):
    # The issue saw a second reader of replies: "the one in the sink" unclear, "not the one in
    # the sink" fitting both, "the golden one" not gold; on 801bbfc these three held in this
    # episode. OLD: "the one on my left", from a person facing the robot, was the robot's left.
    things = (Thing("gold", False, "left", at="Sink"), Thing("blue", False, "right"))
    case = Case(kind="Mug", things=things, person="says", answer=answer, speaker="facing")
    clean(case)


@pytest.mark.parametrize(
    "planner",
    ["swap_type", "swap_excluded", "full_hand"],
)  # OLD: the swaps
def test_a_recovery_never_swaps_the_object_nor_picks_with_a_full_hand(planner):
    # OLD (801bbfc): a plan picking a knife for the cup passed verification and the user's
    # pick node picked the knife; a plan picking the cup the words do not designate was
    # released. (A knife first, then the cup, was refuted on 801bbfc already: kept as a guard.)
    clean(Case(things=RED_BLUE, form="natural", person="colour", planner=planner))


@pytest.mark.parametrize("names", ["same", "dotted"])
def test_two_guards_with_one_name_keep_their_own_objects(names):
    # OLD (801bbfc): the guards "fetch" and "fetch" (or "fetch/cup" and "fetch.cup") shared
    # /bt_raider/resolved/fetch: the cup branch's later node put the box in the bowl.
    clean(Case(things=(Thing("red"),), tree="sequence", names=names))


def test_a_coordination_is_not_acted_on_as_one():
    # OLD (801bbfc): "pick the red box or the blue box" picked the red box without asking.
    said = Say(Pick(colour="red"), alt=Pick(colour="blue"))
    clean(Case(kind="Box", things=RED_BLUE, form="said", said=said))


@pytest.mark.parametrize("odd", ["wobbly", "unless it is cold"])
def test_a_word_left_over_is_asked_about(odd):
    # OLD (801bbfc): "pick the wobbly red box" checked none and picked the red box. Then (at
    # b77b230) it asked "Which Box_1 should I pick up?" (P7): now the boxes, as a person
    # tells them apart, after what was not understood.
    said = Say(Pick(colour="red", odd=odd))
    clean(Case(kind="Box", things=RED_BLUE, form="said", said=said))


# ------------------------------------------- shrunk by the suite's exploration on 801bbfc
# `benchmarks/explore.py --suite --against <801bbfc>` (300 episodes, seed 24): each broken
# property's shrunk case, as printed. All OLD. FloorPlan1 comes from ../shared (else skipped).
def _floorplan() -> dict[str, str]:
    from tests.shared_data import KITCHEN, require

    return {"floorplan1": str(require(KITCHEN))}


SHRUNK = {
    # The guards of a Parallel both named "fetch": the box branch's later node put the cup.
    "P1 two guards named alike": Case(
        room="floorplan1",
        things=(
            Thing(colour="black", dirty=False, side="right", far=True, at="Kettle"),
            Thing(colour="light blue", dirty=True, side="left", far=False, at="Sink"),
        ),
        form="goto_place",
        person="nearest",
        tree="parallel",
        when=3,
        running=True,
        names="same",
    ),
    # "pick the cup that is not red" of one blue cup: asked where the cup was (needless).
    "P9 an exclusion": Case(
        room="floorplan1",
        things=(Thing(colour="blue", dirty=True, side="left", far=False),),
        form="said",
        person="other_object",
        words="raider",
        when=2,
        said=Say(exclude=Pick(colour="red")),
    ),
    # "... the cup that is my sister's": picked the cup without asking.
    "P12 a possessive": Case(
        room="floorplan1",
        things=(Thing(colour="red", dirty=False, side="left", far=False),),
        form="said",
        person="other_object",
        words="raider",
        disturbance="left",
        when=3,
        said=Say(Pick(odd="my sister's"), style=36),
    ),
    # "grab the chipped green mug": checked none, picked it.
    "P13 an unknown modifier": Case(
        room="floorplan1",
        kind="Mug",
        things=(
            Thing(colour="green", dirty=False, side="left", far=False),
            Thing(colour="red", dirty=False, side="front", far=True),
        ),
        form="said",
        person="colour",
        other=1,
        when=2,
        planner="scripted",
        running=True,
        model="made_up",
        said=Say(Pick(colour="green", odd="chipped"), style=10),
    ),
    # "... the gold box or the dirty box": went to and picked one of them, asking nobody.
    "P14 a coordination": Case(
        room="floorplan1",
        kind="Box",
        things=(
            Thing(colour="red", dirty=True, side="left", far=False),
            Thing(colour="blue", dirty=False, side="left", far=False),
            Thing(colour="gold", dirty=False, side="left", far=True),
        ),
        target=1,
        form="said",
        person="self_correcting",
        words="raider",
        blocked=True,
        disturbance="moved",
        when=2,
        running=True,
        said=Say(Pick(colour="gold"), alt=Pick(state="dirty"), style=45),
    ),
}


@pytest.mark.parametrize("name", sorted(SHRUNK))
def test_the_suites_shrunk_findings_on_801bbfc(name):
    rooms = _floorplan()
    for _ in range(3 if SHRUNK[name].tree == "parallel" else 1):  # a Parallel's timing varies
        episode = check_case(SHRUNK[name], rooms, replay=False)
        assert episode.violations == [], [str(v) for v in episode.violations]


# -------------------------------- found on the fixes themselves (reader + intent, at b77b230)
# The explorer's findings on the merge of the reader and intent branches, 15:15 UTC: each is a
# property the product still breaks there, reported to the lead. Strict xfail: when a fix
# lands, the test passes, the mark fails the suite, and the mark is to be removed.
RED_BLUE_CUPS = (Thing("red", False, "left"), Thing("blue", False, "right"))
THREE_CUPS = tuple(Thing(colour, True, "left") for colour in ("green", "red", "blue"))
OPEN: dict[str, Any] = {
    # "grab the cup that isn't light blue", one light-blue cup: picked it (a multi-word colour
    # in an exclusion is not excluded).
    "P1 a multi-word colour excluded": Case(
        things=(Thing(colour="light blue", dirty=True, side="left"),),
        form="said",
        words="raider",
        said=Say(exclude=Pick(colour="light blue"), style=9),
    ),
    # "grab the second apple from the left", a yellow apple on the left and two black ones
    # straight ahead: picked the yellow one (the first from the left).
    "P1 an ordinal along a side": Case(
        room="medicine",
        kind="Apple",
        things=(
            Thing(colour="yellow", dirty=True, side="left", at="Plate"),
            Thing(colour="black", side="front", at="Kettle"),
            Thing(colour="black", side="front", at="Kettle"),
        ),
        target=2,
        form="said",
        person="vague",
        when=3,
        planner="scripted",
        running=True,
        model="clears",
        said=Say(Pick(frame="my"), select="second", style=45),
    ),
    # The same words, the black ones apart (one far on the right): the second from the left is
    # the near black one by offset and by angle alike, yet the robot asked which (P9).
    "P9 an ordinal along a side asked about": None,  # below: the same, the black ones apart
}

#: Found on reader+intent at b77b230 and fixed since (issue 32's intent branch): they hold.


def _not_red_of(colour: str) -> Case:
    """ "pick the <colour> cup or the red cup" of three cups, answered "the one that is not
    red" (seed 402's two shrunk cases)."""
    return Case(
        room="floorplan1",
        things=THREE_CUPS,
        form="said",
        person="says",
        words="raider",
        running=True,
        said=Say(Pick(colour=colour), alt=Pick(colour="red"), style=41),
        answer=Say(exclude=Pick(colour="red"), style=44),
    )


FIXED: dict[str, Case] = {
    # "pick the wobbly red box": asked "Which Box_1 should I pick up?" (P7), three times.
    "P7 an internal label in the question about a word left over": Case(
        kind="Box", things=RED_BLUE, form="said", said=Say(Pick(colour="red", odd="wobbly"))
    ),
    # "grab the cup that isn't dirty and gray" (explore seed 7, 60 episodes, model "clears"):
    # 'and gray' left over, asked "Which Cup_1 should I pick up?" (P7).
    "P7 an internal label after an exclusion": Case(
        things=(
            Thing(colour="red", dirty=False, side="left"),
            Thing(colour="grey", dirty=True, side="right", at="Kettle"),
            Thing(colour="green", dirty=True, side="left", at="Plate"),
        ),
        target=2,
        form="said",
        person="ordinal",
        tree="sequence",
        other=1,
        words="raider",
        disturbance="moved",
        when=3,
        running=True,
        model="clears",
        said=Say(exclude=Pick(colour="grey", state="dirty"), style=1),
    ),
    # "pick any cup in the sink": pick('any cup in the sink') reached the robot (P3).
    "P3 a quantifier's phrase reaches the robot": Case(
        things=(Thing("red", at="Sink"), Thing("red", side="left", at="Sink")),
        form="said",
        words="raider",
        said=Say(Pick(at="Sink"), quant="any"),
    ),
    # The same on FloorPlan1 ("... any cup in the sink you choose", the made-up model, a
    # mistaken person; `benchmarks/explore.py --suite` on the intent branch, shrunk).
    "P3 a quantifier's phrase reaches the robot, FloorPlan1": Case(
        room="floorplan1",
        things=(Thing("red", at="Sink"), Thing("red", side="left", at="Sink")),
        form="said",
        person="mistaken",
        words="raider",
        disturbance="hangs",
        when=2,
        running=True,
        model="made_up",
        said=Say(Pick(frame="your", at="Sink"), quant="any", style=2),
    ),
    # "pick the cup other than the black one", three red cups on FloorPlan1, asked which, the
    # person said "that one over there": read as the cup "above" the others (P12, seed 102).
    "P12 pointing words read as a relation": Case(
        room="floorplan1",
        things=(
            Thing(colour="red", dirty=True, side="left"),
            Thing(colour="red", dirty=True, side="left", size=0.08),
            Thing(colour="red", dirty=False, side="left"),
        ),
        form="said",
        person="vague",
        words="raider",
        said=Say(Pick(), exclude=Pick(colour="black"), style=0),
    ),
    # "pick the wobbly cup", one cup: "... I see only the cup.", the person said "that one
    # over there": taken as yes, the cup picked (P1/P12, seed 202, shrunk).
    "P1 pointing at the only candidate": Case(
        room="floorplan1",
        things=(Thing(colour="red", dirty=False, side="left"),),
        form="said",
        person="vague",
        words="raider",
        said=Say(Pick(odd="wobbly"), style=0),
    ),
    # The same, a mistaken person's bare "that one": taken as yes (P12, seed 302, shrunk).
    "P12 a bare 'that one' for the only candidate": Case(
        room="floorplan1",
        things=(Thing(colour="red", dirty=False, side="left"),),
        form="said",
        person="mistaken",
        words="raider",
        said=Say(Pick(odd="wobbly"), style=0),
    ),
    # "please pick up the cup" of two, a plan picking the blue one without asking: released,
    # since the designation held both (an ambiguity settled by the recovery, not the person).
    "P12 a recovery settles an ambiguity": Case(
        things=RED_BLUE_CUPS, form="natural", person="colour", planner="swap_excluded"
    ),
    # "The cup, please." (a handover: the person wants the cup) over the user's pick node
    # (`benchmarks/explore.py --episodes 5000`, seeds 401 and 402, 3 times; shrunk): the
    # recovery picked the cup and went to her, the handover's re-check passed, and the guard
    # released the pick node, which picked with the hand full (P10). The guard now refuses a
    # node that does another kind of action than the words ask, before anything moves; the
    # explorer's "verbless" form now puts a node that hands the cup over under those words,
    # and "wrong_node" keeps the user's mistake (refused: no call at all).
    "P10 a pick node under words for a handover": Case(
        room="floorplan1",
        things=(Thing(colour="red"),),
        form="wrong_node",
        person="says",
        words="raider",
        answer=Say(Pick(), select="nearest", near="my"),
        speaker="facing",
    ),
    # "pick up the cup to your right now" (seed 401, 4 times): the parse stripped "right now"
    # as a time phrase, 'your' was left over, and the robot asked about its only cup (P9).
    "P9 'right now' after a frame": Case(
        room="floorplan1",
        things=(Thing(colour="red", side="right"),),
        form="said",
        words="raider",
        said=Say(Pick(side="right", frame="your"), style=15),
    ),
    # "... the green cup or the red cup", asked "the green cup or the red cup?", answered "the
    # one that is not red" (seed 402, episode 4,195): the robot picked the green cup, rightly;
    # the explorer's person dropped the instruction's designation when it looked again, and
    # the oracle read the reply over all three cups (P1, P12).
    "P1 a reply read against the options offered": _not_red_of("green"),
    "P12 a reply read against the options offered": _not_red_of("blue"),
    # "pick the blue cup or the dirty cup" of three cups (seed 501, episode 2,464, shrunk):
    # asked "the red cup or the blue cup?", the person answered "the one in front of you",
    # meaning the third cup, in front, not offered; read among the two, the farther left one
    # (more in front than the other) was picked (P1, P12). A reply that fits a thing not
    # offered better than the offered ones is now asked again.
    "P1 a reply that fits a cup not offered": Case(
        room="floorplan1",
        things=(
            Thing(colour="red", dirty=True, side="left"),
            Thing(colour="blue", side="left", far=True),
            Thing(colour="red", side="front"),
        ),
        target=2,
        form="said",
        words="raider",
        said=Say(Pick(colour="blue"), alt=Pick(state="dirty")),
    ),
    # Three cups, one on the left and two straight ahead one behind the other (seed 602,
    # episode 262, shrunk): "the second one on the left from the left": the second from the
    # left is a tie of the two ahead, and "on the left" then narrowed the tie to the one cup
    # on the left, picked (P1, P12). A tie in an ordinal is now unclear: asked again.
    "P1 an ordinal's tie narrowed by a side": Case(
        room="floorplan1",
        things=(Thing(colour="red", side="left"), Thing(colour="red"), Thing(colour="red")),
        form="said",
        person="says",
        words="raider",
        said=Say(Pick(), exclude=Pick(at="Plate")),
        answer=Say(Pick(side="left"), select="second"),
    ),
    # Three cups, one light blue (seed 702, episode 1,998, shrunk): the robot asked "Could you
    # bring the Cup_1 closer to me, please?": a shade's space kept "light blue" out of the
    # words that tell the cups apart (P7).
    "P7 a shade names the cup": Case(
        room="medicine",
        things=(
            Thing(colour="light blue", far=True),
            Thing(colour="red"),
            Thing(colour="red", side="left", far=True),
        ),
        form="structured",
        words="raider",
    ),
    # Found by the oracle that reads a reply against the question: a model's question offered
    # all three cups ("... the green cup or the red cup or the blue cup?") for an ambiguity of
    # two, "the one that is not red" was read among the two, and the green cup picked (P1,
    # P12): the person may have meant the blue one. Now asked again.
    "P1 an exclusion among more options than candidates": Case(
        things=THREE_CUPS,
        form="said",
        person="says",
        words="raider",
        planner="scripted",
        said=Say(Pick(colour="green"), alt=Pick(colour="red"), style=41),
        answer=Say(exclude=Pick(colour="red"), style=44),
    ),
}


_HANDOVER = FIXED["P10 a pick node under words for a handover"]
# The same words over a node that hands the cup over: one pick, then the handover.
FIXED["P10 the same words over a handover node"] = replace(_HANDOVER, form="verbless")
# Seed 401's second: the same inside a py_trees Parallel, beside a guarded pick of a box.
FIXED["P10 a pick node under words for a handover, in a Parallel"] = replace(
    _HANDOVER, tree="parallel", words="user"
)


@pytest.mark.parametrize("name", sorted(FIXED))
def test_findings_fixed_since(name):
    case = FIXED[name]
    rooms = _floorplan() if case.room == "floorplan1" else None
    if case.room == "medicine":  # the medicine-delivery demo's scene, shipped with bt_raider
        from bt_raider.examples.medicine_delivery import scenario

        rooms = {"medicine": str(scenario.SCENE)}
    for _ in range(2):
        episode = check_case(case, rooms, replay=False)
        assert episode.violations == [], [str(v) for v in episode.violations]
        if case.form == "wrong_node":  # refused at the first verdict: nothing moved for it
            # (in a Parallel, the box's branch may have started before the refusal stopped it)
            cups = [c for c in episode.calls if any("Cup|" in str(a) for a in c[1])]
            assert episode.status == "FAILURE" and cups == [], episode.calls
            assert "ask for a handover" in episode.reason, episode.reason


OPEN["P9 an ordinal along a side asked about"] = replace(
    OPEN["P1 an ordinal along a side"],
    things=(
        Thing(colour="yellow", dirty=True, side="left", at="Plate"),
        Thing(colour="black", dirty=True, side="right", far=True, at="Plate"),
        Thing(colour="black", side="front", at="Kettle"),
    ),
)


#: Fixed since (the reader's side): a multi-word colour read as one colour, the check's choice
#: among "any" members resolved to its objectId, "from the left" after an ordinal no source.
READER_FIXED = {
    "P1 a multi-word colour excluded",
    "P3 a quantifier's phrase reaches the robot",
    "P1 an ordinal along a side",
    "P9 an ordinal along a side asked about",
}


@pytest.mark.parametrize(
    "name",
    [
        name
        if name in READER_FIXED
        else pytest.param(
            name,
            marks=pytest.mark.xfail(
                strict=True, reason="found by the explorer on reader+intent at b77b230"
            ),
        )
        for name in sorted(OPEN)
    ],
)
def test_open_findings_on_the_fixes(name):
    case = OPEN[name]
    if case.room == "kitchen":
        clean(case)
        return
    from bt_raider.testing.explore import default_rooms

    rooms = {
        **default_rooms(),
        "medicine": str(ROOT / "examples" / "medicine_delivery" / "scene.json"),
    }
    episode = check_case(case, rooms, replay=False)
    assert episode.violations == [], [str(v) for v in episode.violations]


# ------------------------------------- the grammar's newer shapes (the reader's helper, 17:30)
@pytest.mark.parametrize("bowl", ["red", "white", "blue"])
@pytest.mark.parametrize("style", [0, 2, 3])
def test_a_compound_instruction_with_an_excluded_destination(bowl, style):
    # The "... put it in the bowl, not the red one" (placed in the red bowl on
    # 801bbfc): a white and a red bowl; excluding blue leaves both, and the robot must ask.
    said = Say(Pick(colour="red"), into=Say(exclude=Pick(colour=bowl), style=style))
    clean(Case(kind="Cup", things=RED_BLUE, form="said", words="raider", said=said))


@pytest.mark.parametrize("select", ["biggest", "smallest"])
@pytest.mark.parametrize(
    "sizes",
    [(0.08, 0.16), (0.1, 0.1), (0.0, 0.16), (0.1, 0.11)],
    ids=["apart", "alike", "one unknown", "close"],
)
def test_sizes_where_the_scene_gives_them(select, sizes):
    things = tuple(replace(t, size=s) for t, s in zip(RED_BLUE, sizes, strict=True))
    clean(Case(kind="Cup", things=things, form="said", said=Say(select=select, style=1)))


def test_a_hidden_cup_is_asked_for_never_replaced_by_the_rooms_mug():
    # Shrunk by `benchmarks/explore.py --episodes 2000` (reader branch, 17:45 UTC): the red cup
    # elsewhere, FloorPlan1's own mug in sight; "pick the cup that is not red" (and "pick the
    # cup") grounded to the mug, and the cup's node picked it (P1, P12).
    case = Case(
        room="floorplan1",
        things=(Thing(colour="red", dirty=False, side="left", far=False, at=""),),
        form="said",
        words="raider",
        hidden=True,
        said=Say(exclude=Pick(colour="red")),
    )
    for one in (case, replace(case, form="natural", said=None)):
        episode = check_case(one, _floorplan(), replay=False)
        assert episode.violations == [], [str(v) for v in episode.violations]


# Shrunk by `benchmarks/explore.py --episodes 2000 --seed 7` (reader branch, 18:40 UTC); both
# were the explorer's own: a later user node of a colliding-names tree put the cup in its own
# bowl after the guarded compound had put it in the one the words allowed (and the box's put
# was judged by the cup's words), and "the nearest cup" 10.6 cm nearer was counted sure by the
# oracle (its distance band is now 0.2 m, the reader asks below 0.15 m).
EXPLORERS = {
    # "pick the clean cup" of a red and two green cups (one dirty), asked "the red cup or the
    # green cup?", answered "the biggest green one": the robot picked the clean green cup,
    # right; the oracle read the reply among all three cups, not the clean ones the words
    # left open, and flagged it (P1/P12, seed 801, episode 4,192, shrunk). Oracle fixed.
    "P12 a reply read among what the instruction left open (state)": Case(
        room="floorplan1",
        things=(
            Thing(colour="red", dirty=False, side="left"),
            Thing(colour="green", dirty=False, side="left"),
            Thing(colour="green", dirty=True, side="left"),
        ),
        form="state",
        person="says",
        words="raider",
        answer=Say(Pick(colour="green"), select="biggest"),
    ),
    # "pick the cup on the right" (two there, one on the plate), asked "the cup on the plate or
    # the rightmost cup?", answered "the one that is not on the plate" (P1/P12, seed 802,
    # episode 4,481, shrunk): the same oracle fault, the side's.
    "P12 a reply read among what the instruction left open (side)": Case(
        room="floorplan1",
        things=(
            Thing(colour="red", dirty=False, side="left"),
            Thing(colour="red", dirty=False, side="right", at="Plate"),
            Thing(colour="red", dirty=False, side="right"),
        ),
        target=2,
        form="side",
        person="says",
        words="raider",
        answer=Say(exclude=Pick(at="Plate")),
    ),
    "P1 a later node's own bowl": Case(
        room="floorplan1",
        things=(Thing(colour="red", dirty=False, side="left"),),
        form="said",
        tree="sequence",
        words="raider",
        said=Say(into=Say(exclude=Pick(colour="white"))),
        names="same",
    ),
    "P9 the nearest, 10.6 cm nearer": Case(
        room="floorplan1",
        things=(Thing(colour="red", side="left"), Thing(colour="red", side="left")),
        form="said",
        words="raider",
        said=Say(select="nearest"),
    ),
}


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_the_explorers_own_findings_on_the_new_grammar(name):
    episode = check_case(EXPLORERS[name], _floorplan(), replay=False)
    assert episode.violations == [], [str(v) for v in episode.violations]


@pytest.mark.parametrize("tree", ["parallel", "sequence"])
def test_a_compound_that_says_which_bowl_in_a_tree_of_colliding_names(tree):
    # Seen by `benchmarks/explore.py --episodes 600 --seed 11 --no-shrink` (18:44 UTC): the
    # explorer's own tree raised (P6) when one branch had no later node.
    from bt_raider.testing.explore import default_rooms

    rooms = {**default_rooms(), "medicine": str(ROOT / "examples/medicine_delivery/scene.json")}
    case = Case(
        room="medicine",
        kind="Apple",
        things=(Thing("green", True, "right"), Thing("yellow", True, "left", at="Sink")),
        target=1,
        form="said",
        person="action",
        tree=tree,
        words="raider",
        said=Say(into=Say(exclude=Pick(colour="blue"), style=32), style=16),
        names="same",
    )
    episode = check_case(case, rooms, replay=False)
    assert episode.violations == [], [str(v) for v in episode.violations]


def test_a_reply_near_a_boundary_lets_the_robot_act_on_what_it_may_mean():
    # Seen by the same run (P1 and P12 at 142): "the one in front of you" of a mug straight
    # ahead and one 38 degrees to the right is vague to the oracle; the robot took the one
    # ahead, which the oracle's reading of replies (unlike its reading of instructions) did not
    # allow.
    case = Case(
        room="floorplan1",
        kind="Mug",
        things=(Thing("gold", True, "front", size=0.16), Thing("grey", True, "right")),
        form="pddl",
        person="says",
        tree="sequence",
        other=1,
        words="user-small",
        planner="scripted",
        answer=Say(Pick(side="front", frame="your"), style=39),
    )
    episode = check_case(case, _floorplan(), replay=False)
    assert episode.violations == [], [str(v) for v in episode.violations]


# ------------------------------------------ a reply is read against the question it answers
@pytest.mark.parametrize(
    ("question", "offered"),
    [
        ("Which cup should I pick up: the green cup or the red cup?", {"g", "r"}),
        ("Which cup do you mean: the green cup or the red cup or the blue cup?", {"g", "r", "b"}),
        (
            "I did not understand 'x'. Which cup should I pick up: the blue cup, the red cup?",
            {"b", "r"},
        ),
        ("Which cup should I pick up? I see only the cup.", None),  # no options
        ("Which cup should I pick up: the cup on the left or the red cup?", None),  # a side
        ("Which cup: the dirty cup or the clean cup?", None),  # two are dirty: not told apart
    ],
)
def test_the_oracle_reads_the_options_a_question_offered(question, offered):
    from bt_raider.testing.explore_judge import offered as read_offered

    def cup(oid: str, colour: str, dirty: bool) -> dict[str, Any]:
        return {"objectId": oid, "objectType": "Cup", "color": colour, "isDirty": dirty}

    scene = {"objects": [cup("g", "green", True), cup("r", "red", True), cup("b", "blue", False)]}
    found = read_offered(question, "Cup", scene, ["g", "r", "b"])
    assert (None if found is None else set(found)) == offered
