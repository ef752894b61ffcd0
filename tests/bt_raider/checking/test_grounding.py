"""Grounding at the four abstraction levels, people and places, through recorded tool calls."""

from __future__ import annotations

import threading

import pytest

from bt_raider.checking.grounding import Grounder
from bt_raider.checking.parse import parse_phrase, parse_query
from bt_raider.checking.tool_runner import ToolFailure, ToolRunner
from bt_raider.errors import Cancelled
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.perception.scene import Scene
from bt_raider.perception.tools import default_tools, household_tools

# Objects of the small kitchen (bt_raider.testing.small_kitchen).
BOWL = "Bowl|+00.30|+00.95|-01.60"
TOMATO = "Tomato|-00.35|+00.96|-01.62"
APPLE = "Apple|+00.40|+00.96|+01.00"
MUG = "Mug|-01.95|+00.93|+00.25"


def obj(d, object_type):
    return next(o for o in d["objects"] if o["objectType"] == object_type)


def grounder(scene, tools=None):
    runner = ToolRunner(scene, tools or default_tools())
    return Grounder(runner, CategoryLexicon.default()), runner


def ground(scene, text, kind="object"):
    g, runner = grounder(scene)
    return g.ground(parse_phrase(text), kind), runner


# --------------------------------------------------------------------------- AS
def test_as_by_type_display_name_and_object_id(small_kitchen):
    found, runner = ground(small_kitchen, "the apple")
    assert (found.ids, found.level) == ([APPLE], "AS")
    assert runner.calls[0].tool == "object_detection"
    cabinets, _ = ground(small_kitchen, "Cabinet_2")
    assert cabinets.names == ["Cabinet_2"]
    by_id, _ = ground(small_kitchen, BOWL)
    assert by_id.ids == [BOWL]


def test_as_type_spelled_out_and_plural(small_kitchen):
    assert ground(small_kitchen, "the coffee machine")[0].names == ["CoffeeMachine"]
    assert ground(small_kitchen, "CoffeeMachine")[0].names == ["CoffeeMachine"]
    assert len(ground(small_kitchen, "the cabinets")[0].candidates) == 3


def test_as_an_exact_type_wins_over_a_synonym(small_kitchen):
    # "knife" names the type Knife; the lexicon's knife synonym also covers ButterKnife.
    assert ground(small_kitchen, "the knife")[0].names == ["Knife"]


def test_as_leading_modifiers_fall_away(small_kitchen_dict):
    small_kitchen_dict["objects"].append(
        {"objectId": "Medicine|1", "objectType": "Medicine", "position": {"x": 0, "y": 1, "z": 0}}
    )
    found, _ = ground(Scene(small_kitchen_dict), "adrianas_medicine")
    assert found.ids == ["Medicine|1"]


def test_as_absent_object_has_a_reason(small_kitchen):
    found, _ = ground(small_kitchen, "the banana")
    assert found.candidates == []
    assert "no banana" in found.reason


def _detecting(names: list[str]):
    """Default tools whose object_detection reports only ``names``, in that order."""
    tools = default_tools()

    def object_detection(scene: Scene) -> list[str]:
        """Identifies the objects in the scene.

        Returns:
            the display names of the objects perception sees.
        """
        return list(names)

    tools.register(object_detection)
    return tools


def test_present_is_what_perception_reports_in_its_order(small_kitchen_dict):
    small_kitchen_dict["inventoryObjects"] = [{"objectId": MUG, "objectType": "Mug"}]
    small_kitchen_dict["objects"].append(  # a type no lexicon knows
        {"objectId": "Gizmo|1", "objectType": "Gizmo", "position": {"x": 0.0, "y": 1.0, "z": 0.0}}
    )
    scene = Scene(small_kitchen_dict)
    everything = [o.id for o in scene.objects]
    g, runner = grounder(scene)
    assert [o.id for o in g.present()] == everything  # every object reported: the scene's
    assert [c.tool for c in runner.calls] == ["object_detection", "robot_holding"]
    names = [scene.by_id(i).name for i in (APPLE, TOMATO)]
    g, runner = grounder(scene, _detecting(names))
    # Only what perception reports, in its order, plus what the robot holds.
    assert [o.id for o in g.present()] == [APPLE, TOMATO, MUG]
    assert [c.tool for c in runner.calls] == ["object_detection", "robot_holding"]
    # An unreported gizmo is absent, yet "gizmo" still names a type of the scene.
    assert g.types_for("gizmo", g.present()) == ({"Gizmo"}, "AS")
    assert g.ground(parse_phrase("the gizmo")).candidates == []
    g, _ = grounder(scene, _detecting([scene.by_id(i).name for i in reversed(everything)]))
    assert [o.id for o in g.present()] == everything[::-1]


PHRASES = [
    "the bowl",
    BOWL,
    "cabinet_2",
    "the Cabinet_2",
    "coffee machine",
    "a fruit",
    "the mugs",
    "the clean mug",
    "the apple on the left of the bowl",
    "the tomato near the bowl",
    "the thing on the counter top",
    "the object inside the fridge",
    "the spaceship",
]


@pytest.mark.parametrize("text", PHRASES)
def test_the_scene_tables_and_a_perception_list_ground_alike(small_kitchen, text):
    """Every object reported: the scene's tables answer; a list perception made itself (the
    same objects, one name twice) is read row by row: the same candidates, reasons, levels."""
    names = [o.name for o in small_kitchen.objects]
    tables, _ = grounder(small_kitchen)
    rows, _ = grounder(small_kitchen, _detecting([*names, names[0]]))
    assert tables.present() == rows.present() == small_kitchen.objects
    a, b = tables.ground(parse_phrase(text)), rows.ground(parse_phrase(text))
    assert (a.candidates, a.level, a.reason) == (b.candidates, b.level, b.reason)


# --------------------------------------------------------------------------- AN
def test_an_category_grounds_through_the_lexicon(small_kitchen):
    fruit, _ = ground(small_kitchen, "a fruit")
    assert (fruit.ids, fruit.level) == ([APPLE], "AN")
    devices, _ = ground(small_kitchen, "the electronic device")
    assert sorted(devices.names) == ["CoffeeMachine", "Microwave", "Toaster"]
    assert devices.level == "AN"


def test_an_user_lexicon_extends_categories(small_kitchen):
    lex = CategoryLexicon.load({"categories": {"breakfast": ["Bread", "Egg"]}})
    g = Grounder(ToolRunner(small_kitchen, default_tools()), lex)
    found = g.ground(parse_phrase("the breakfast"))
    assert sorted(found.names) == ["Bread", "Egg"]


# --------------------------------------------------------------------------- AR
def test_ar_left_right_from_the_robot_viewpoint(small_kitchen):
    # Robot yaw 180: its right vector is -x, so the Tomato (x -0.39) is right of the Bowl (0.27).
    found, runner = ground(small_kitchen, "the vegetable to the right of the bowl")
    assert (found.ids, found.level) == ([TOMATO], "AR")
    rel = [c for c in runner.calls if c.tool == "check_obj_relationship"]
    # Asked among the vegetables' types only: the scene's other objects are not read.
    assert rel[0].args == ["on the right of", "Bowl", "Lettuce, Potato, Tomato"]
    assert "Tomato" in rel[0].result


def test_ar_turning_the_robot_changes_left_and_right(small_kitchen_dict):
    small_kitchen_dict["agent"]["rotation"]["y"] = 0.0
    found, _ = ground(Scene(small_kitchen_dict), "the vegetable to the left of the bowl")
    assert found.ids == [TOMATO]


def test_ar_nothing_matches(small_kitchen):
    found, _ = ground(small_kitchen, "the fruit to the left of the bowl")
    assert found.candidates == []
    assert "Bowl" in found.reason


def test_ar_inside_and_closest(small_kitchen_dict):
    apple, bowl = obj(small_kitchen_dict, "Apple"), obj(small_kitchen_dict, "Bowl")
    apple["parentReceptacles"] = [bowl["objectId"]]
    bowl["receptacleObjectIds"] = [apple["objectId"]]
    scene = Scene(small_kitchen_dict)
    assert ground(scene, "the fruit in the bowl")[0].ids == [APPLE]
    closest, runner = ground(scene, "the vegetable closest to the coffee machine")
    assert closest.names == ["Lettuce"]
    assert {c.tool for c in runner.calls} >= {"dist_between_objs"}


def test_ar_anchor_ambiguity_is_resolved_by_the_relation(small_kitchen):
    g, _ = grounder(small_kitchen)
    parsed = parse_query("pick up the apple from the countertop")
    obj_g, src_g = g.restrict_to_source(g.ground(parsed.args[0]), g.ground(parsed.args[1]))
    assert obj_g.ids == [APPLE]
    assert src_g.names == ["CounterTop_2"]  # three countertops, one holds the apple


def test_ar_source_without_the_object(small_kitchen):
    g, _ = grounder(small_kitchen)
    parsed = parse_query("pick the apple from the fridge")
    obj_g, _ = g.restrict_to_source(g.ground(parsed.args[0]), g.ground(parsed.args[1]))
    assert obj_g.candidates == []
    assert "Fridge" in obj_g.reason and "CounterTop_2" in obj_g.reason


RELATIONAL = (
    "the vegetable to the right of the bowl",
    "the fruit on the counter top",
    "the egg in the fridge",
    "the knife in the drawer",
    "the food near the bowl",
    "the utensil to the left of the bread",
    "the object near the bowl",
    "the mug on the left of the toaster",
)


def _their_own(tools):
    """The tool set with a user's ``check_obj_relationship`` of two arguments."""

    def check_obj_relationship(scene, relationship: str, obj: str) -> list[str]:
        """Objects X with "X <relationship> obj" (a user's own, over every object)."""
        return tools.call(scene, "check_obj_relationship", [relationship, obj])

    theirs = default_tools()
    theirs.register(check_obj_relationship)
    return theirs


@pytest.mark.parametrize("text", RELATIONAL)
def test_ar_among_the_candidates_types_grounds_as_over_every_object(small_kitchen, text):
    # The project's tool is asked among the candidates' types; a user's tool of the same name
    # is asked as ever, over every object. Both ground alike, and every recorded call is what
    # the tool answers to those arguments (the trace holds).
    tools = default_tools()
    ours, runner = grounder(small_kitchen, tools)
    theirs, their_runner = grounder(small_kitchen, _their_own(tools))
    found = ours.ground(parse_phrase(text))
    assert found.ids == theirs.ground(parse_phrase(text)).ids
    asked = [c for c in runner.calls if c.tool == "check_obj_relationship"]
    assert asked
    for c in asked:
        assert tools.call(small_kitchen, c.tool, c.args) == c.result
    scoped = [c for c in asked if len(c.args) == 3]
    assert bool(scoped) == ("object" not in text)  # every type: no restriction to show
    theirs_asked = [c for c in their_runner.calls if c.tool == "check_obj_relationship"]
    assert theirs_asked and all(len(c.args) == 2 for c in theirs_asked)


def test_ar_among_reaches_the_source_of_a_pick(small_kitchen):
    g, runner = grounder(small_kitchen)
    parsed = parse_query("pick up the apple from the countertop")
    obj_g, src_g = g.restrict_to_source(g.ground(parsed.args[0]), g.ground(parsed.args[1]))
    assert (obj_g.ids, src_g.names) == ([APPLE], ["CounterTop_2"])
    asked = [c.args for c in runner.calls if c.tool == "check_obj_relationship"]
    assert ["on top of", "CounterTop_2", "Apple"] in asked


def test_ar_a_nan_refuses_what_rests_on_it_and_nothing_else(small_kitchen_dict):
    # A position that is not a number, after validation (a simulated world moved it): the
    # relation about the apples is refused when an apple's position is the NaN -- the check
    # cannot go on -- and answered when it is the unrelated Mug's, far from the question.
    scene = Scene(small_kitchen_dict)
    scene.by_id(MUG).raw["position"]["x"] = float("nan")
    found, _ = ground(scene, "the fruit to the left of the bread")
    assert found.ids == []  # the Apple is on the other counter: a sure "none"
    assert ground(scene, "the vegetable to the right of the bowl")[0].ids == [TOMATO]
    with pytest.raises(ToolFailure, match="Mug"):
        ground(scene, "the mug near the toaster")  # a number the answer needs
    scene.by_id(APPLE).raw["position"]["z"] = float("inf")
    with pytest.raises(ToolFailure, match="Apple"):
        ground(scene, "the fruit to the left of the bread")


# --------------------------------------------------------------------------- AC
def test_ac_states_filter_through_get_obj_state(small_kitchen_dict):
    scene = Scene(small_kitchen_dict)
    clean, runner = ground(scene, "the clean mug")
    assert (clean.ids, clean.level) == ([MUG], "AC")
    assert any(c.tool == "get_obj_state" and c.args == ["Mug"] for c in runner.calls)
    dirty, _ = ground(scene, "the dirty mug")
    assert dirty.candidates == [] and "the Mug is clean" in dirty.reason
    obj(small_kitchen_dict, "Mug")["isDirty"] = True
    assert ground(Scene(small_kitchen_dict), "the dirty mug")[0].ids == [MUG]


def test_ac_negated_and_lexicon_states(small_kitchen_dict):
    obj(small_kitchen_dict, "Drawer")["isOpen"] = True  # the first drawer in the file
    scene = Scene(small_kitchen_dict)
    assert len(ground(scene, "the open drawer")[0].candidates) == 1
    assert len(ground(scene, "the drawer that is not open")[0].candidates) == 1
    assert ground(scene, "the unsliced tomato")[0].ids == [TOMATO]


# --------------------------------------------------------------------------- people and places
def with_people(d, *people):
    d["humans"] = [
        {
            "id": pid,
            "name": name,
            "position": {"x": 0.0, "y": 0.0, "z": -1.6},
            "looking_at_robot": True,
            "hands_free": True,
        }
        for pid, name in people
    ]
    return Scene(d)


def test_person_by_name_and_generic_words(small_kitchen_dict):
    scene = with_people(small_kitchen_dict, ("p1", "Adriana"), ("p2", "Bob"))
    found, runner = ground(scene, "Adriana", "person")
    assert found.ids == ["p1"]
    assert runner.calls[-1].tool == "recognize_humans"
    assert sorted(ground(scene, "the user", "person")[0].ids) == ["p1", "p2"]
    assert ground(scene, "adriana_user", "person")[0].ids == ["p1"]


def test_unrecognised_person_is_not_present(small_kitchen_dict):
    scene = with_people(small_kitchen_dict, ("person_1", None))
    found, _ = ground(scene, "Adriana", "person")
    assert found.candidates == []
    assert "not recognised" in found.reason and "person_1" in found.reason
    assert [h.id for h in found.unrecognised] == ["person_1"]


def test_target_grounds_places_people_then_objects(small_kitchen_dict):
    small_kitchen_dict["locations"] = {"medicine_counter": {"x": -1.05, "z": -1.55}}
    scene = with_people(small_kitchen_dict, ("p1", "Adriana"))
    assert ground(scene, "medicine_counter", "target")[0].kind == "place"
    assert ground(scene, "the medicine counter", "target")[0].ids == ["medicine_counter"]
    assert ground(scene, "Adriana", "target")[0].kind == "person"
    assert ground(scene, "the fridge", "target")[0].names == ["Fridge"]


# --------------------------------------------------------------------------- tool runner
def test_runner_records_each_call_once_and_caches(small_kitchen):
    runner = ToolRunner(small_kitchen, default_tools())
    first = runner.call("dist_to_target", "Bowl")
    again = runner.call("dist_to_target", "Bowl")
    assert first == again == 0.67
    assert [(c.tool, c.args, c.result) for c in runner.calls] == [
        ("dist_to_target", ["Bowl"], 0.67)
    ]


def test_runner_failures(small_kitchen):
    runner = ToolRunner(small_kitchen, household_tools())
    call = runner.attempt("dist_to_target", "Nothing")
    assert call.error and "Nothing" in call.error
    with pytest.raises(ToolFailure, match="recognize_humans"):
        runner.call("recognize_humans")


def test_runner_honours_cancel_and_deadline(small_kitchen):
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled, match="cancelled"):
        ToolRunner(small_kitchen, default_tools(), cancel=stop).call("object_detection")
    with pytest.raises(Cancelled, match="time limit"):
        ToolRunner(small_kitchen, default_tools(), deadline=0.0).call("object_detection")


def test_parts_and_modifiers_fall_back_to_the_object(small_kitchen):
    assert ground(small_kitchen, "the microwave door")[0].names == ["Microwave"]
    assert ground(small_kitchen, "the red apple")[0].ids == [APPLE]
    # A modifier that names a type absent from the scene does not win over one present.
    assert ground(small_kitchen, "the small_kitchen sink")[0].names[0].startswith("Sink")
