"""The explorer's oracle, people and generator, each with a robot and a tree written here.

Each wrong tree below is a plain py_trees behaviour driving a robot written in this file; the
oracle must flag exactly the property the tree breaks, and a correct tree must pass clean.
"""

from __future__ import annotations

import ast
import math
from typing import Any

import py_trees
import pytest
from hypothesis import HealthCheck, given, settings

from bt_raider.perception.scene import Scene
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.testing.explore import Episode, cases, check_case, pytest_text, run_case
from bt_raider.testing.explore_oracle import PROPERTIES, Oracle
from bt_raider.testing.explore_people import PEOPLE, ExplorePerson, describe
from bt_raider.testing.explore_tree import TreeSpec
from bt_raider.testing.explore_world import CHAIR, Call, Case, Thing, build_world, load_room
from bt_raider.testing.scenes import small_kitchen

S = py_trees.common.Status
KITCHEN = small_kitchen().to_dict()
ROOMS = {"kitchen": KITCHEN}
#: Two cups, red on the left (the one meant) and blue on the right, dirty.
TWO = (Thing("red", False, "left"), Thing("blue", True, "right"))


class ListRobot:
    """A user's robot: every action succeeds at the second poll; it keeps its scene dict."""

    def __init__(self, scene: dict[str, Any], words: dict[str, str]) -> None:
        self.scene, self.words = scene, words
        self.executed: list[tuple[str, tuple[Any, ...]]] = []
        self.polls: dict[int, int] = {}

    def start(self, action: str, args: Any) -> int:
        self.executed.append((action, tuple(args)))
        self.polls[len(self.executed)] = 2
        return len(self.executed)

    def poll(self, handle: int) -> Progress:
        self.polls[handle] -= 1
        return Progress(ActionState.SUCCEEDED if self.polls[handle] <= 0 else ActionState.RUNNING)

    def cancel(self, handle: int) -> None:
        self.polls.pop(handle, None)

    def observe(self) -> dict[str, Any]:
        return self.scene


class Act(py_trees.behaviour.Behaviour):
    """A user's node that does one thing on the robot, with no guard: what the oracle judges."""

    def __init__(self, robot: Any, action: str, args: list[Any], *, ask: Any = None) -> None:
        super().__init__(f"{action} {args}")
        self.robot, self.action, self.args, self.ask = robot, action, args, ask
        self.handle: Any = None

    def initialise(self) -> None:
        if self.ask is not None:
            self.ask[0].ask(self.ask[1])
        self.handle = self.robot.start(self.action, self.args)

    def update(self) -> S:
        done = self.robot.poll(self.handle).state is ActionState.SUCCEEDED
        self.feedback_message = "done" if done else "moving"
        return S.SUCCESS if done else S.RUNNING


def episode(case: Case, make: Any, **kw: Any) -> Episode:
    """Run ``case`` with the tree ``make(spec)`` on the test's robot."""
    return run_case(case, ROOMS, tree_factory=make, world_factory=ListRobot, **kw)


def test_a_tree_that_picks_the_cup_nobody_meant_breaks_p1_and_nothing_else():
    wrong = episode(Case(things=TWO), lambda s: Act(s.robot.view("Cup"), "Grab", ["Cup|explore|1"]))
    right = episode(
        Case(things=TWO, form="colour"),  # "pick the red cup": the words designate Cup 0
        lambda s: Act(s.robot.view("Cup"), "Grab", ["Cup|explore|0"]),
    )

    assert wrong.status == "SUCCESS" and right.status == "SUCCESS"
    assert wrong.props == {"P1"}, wrong.violations
    assert "nothing designated" in wrong.violations[0].message
    assert right.props == set(), right.violations


def test_after_a_clear_answer_only_the_answered_cup_may_be_picked():
    def after_asking(target: str) -> Any:
        return lambda s: Act(
            s.robot.view("Cup"), "Grab", [target], ask=(s.person, "Which cup, the red or the blue?")
        )

    good = episode(Case(things=TWO, person="colour"), after_asking("Cup|explore|0"))
    bad = episode(Case(things=TWO, person="colour"), after_asking("Cup|explore|1"))
    unclear = episode(Case(things=TWO, person="option0"), after_asking("Cup|explore|0"))

    assert good.answers == ["the red one"] and good.props == set()
    assert bad.props == {"P1"} and "designated is Cup|explore|0" in bad.violations[0].message
    assert unclear.answers == ["option 0"] and unclear.props == {"P1"}


def test_a_node_acting_on_another_kind_is_caught_even_on_the_right_object():
    case = Case(things=TWO, tree="parallel", person="colour")
    ep = episode(case, lambda s: Act(s.robot.view("Cup"), "Grab", ["Box|explore|0"]))

    assert ep.props == {"P1"}
    assert "the node for the Cup acted on a Box" in ep.violations[0].message


def test_recovery_calls_outside_the_robots_words_break_p2_the_users_own_calls_do_not():
    untagged = episode(Case(things=(TWO[0],)), lambda s: Act(s.robot, "Fly", ["Cup|explore|0"]))
    own = episode(
        Case(things=(TWO[0],)), lambda s: Act(s.robot.view("Cup"), "Fly", ["Cup|explore|0"])
    )

    assert untagged.props == {"P2"}
    assert "the robot has no 'Fly'" in untagged.violations[0].message
    assert own.props == set()


def test_text_in_a_robot_call_breaks_p3():
    ep = episode(
        Case(things=(TWO[0],)), lambda s: Act(s.robot.view("Cup"), "Grab", ["the red cup"])
    )

    assert ep.props == {"P3"}
    assert "'the red cup' is not an objectId" in ep.violations[0].message


def test_moving_to_a_blocked_target_breaks_p4_until_the_chair_is_moved():
    case = Case(things=(TWO[0],), form="goto", blocked=True)
    blocked = episode(case, lambda s: Act(s.robot.view("Cup"), "GoTo", ["Cup|explore|0"]))

    def cleared(spec: TreeSpec) -> Any:
        spec.robot.robot.scene["blocked"] = {}
        return Act(spec.robot.view("Cup"), "GoTo", ["Cup|explore|0"])

    assert blocked.props == {"P4"} and CHAIR in blocked.violations[0].message
    assert episode(case, cleared).props == set()


def test_a_tree_that_never_ends_breaks_p5_and_one_that_raises_breaks_p6():
    class Forever(py_trees.behaviour.Behaviour):
        def update(self) -> S:
            return S.RUNNING

    class Broken(py_trees.behaviour.Behaviour):
        def update(self) -> S:
            raise KeyError("the user's bug")

    hung = episode(Case(things=(TWO[0],)), lambda s: Forever("forever"), max_ticks=20)
    raised = episode(Case(things=(TWO[0],)), lambda s: Broken("broken"))

    assert hung.props == {"P5"} and hung.status == "RUNNING"
    assert raised.props == {"P6"} and "KeyError" in raised.violations[0].message


def test_a_failure_without_a_reason_breaks_p5():
    class Quiet(py_trees.behaviour.Behaviour):
        def update(self) -> S:
            return S.FAILURE

    class Says(py_trees.behaviour.Behaviour):
        def update(self) -> S:
            self.feedback_message = "the cup is gone"
            return S.FAILURE

    assert episode(Case(things=(TWO[0],)), lambda s: Quiet("quiet")).props == {"P5"}
    assert episode(Case(things=(TWO[0],)), lambda s: Says("says")).props == set()


def test_questions_with_internal_labels_break_p7_words_do_not():
    def asking(question: str) -> Any:
        return lambda s: Act(
            s.robot.view("Cup"), "Grab", ["Cup|explore|0"], ask=(s.person, question)
        )

    labels = episode(Case(things=TWO), asking("Which cup: Cup_1 or Cup_2?"))
    ids = episode(Case(things=TWO), asking("Is it Cup|explore|0?"))
    words = episode(Case(things=TWO), asking("Which cup: the red one on the left or the blue one?"))

    assert "P7" in labels.props and "P7" in ids.props
    assert words.props == set(), words.violations


def test_opening_a_running_microwave_breaks_p10_an_idle_one_does_not():
    def open_it(spec: TreeSpec) -> Any:
        return Act(spec.robot.view("Cup"), "Open", ["Microwave|explore|0"])

    assert episode(Case(form="appliance", running=True), open_it).props == {"P10"}
    assert episode(Case(form="appliance", running=False), open_it).props == set()


def test_oracle_reads_the_robots_words_in_recovery_code():
    _, truth = build_world(Case(), KITCHEN)
    oracle = Oracle(truth)
    oracle.on_code("choice = ask('Which cup (the red one)?')\nGrab(choice)")
    assert oracle.violations == []
    oracle.on_code("approach('Cup|explore|0')")
    assert [v.prop for v in oracle.violations] == ["P2"]


def test_a_move_is_judged_against_the_scene_of_the_moment():
    data, truth = build_world(Case(things=TWO, form="colour", blocked=True), KITCHEN)
    oracle = Oracle(truth)
    chair = next(o for o in data["objects"] if o["objectId"] == CHAIR)
    oracle.on_call(Call("GoTo", ("Cup|explore|0",), None, data, 1))
    chair["isPickedUp"] = True
    oracle.on_call(Call("GoTo", ("Cup|explore|0",), None, data, 2))
    chair["isPickedUp"], chair["position"]["x"] = False, math.nan
    oracle.on_call(Call("GoTo", ("Cup|explore|0",), None, data, 3))

    # Blocked, then carried away (free), then back where nobody can place it: still blocked.
    assert [(v.prop, v.message[:6]) for v in oracle.violations] == [
        ("P4", "call #"),
        ("P4", "call #"),
    ]
    assert "#3" in oracle.violations[1].message


# ---------------------------------------------------------------------------- people
@pytest.mark.parametrize(
    ("strategy", "answer", "designates"),
    [
        ("cooperative", "the red one", "Cup|explore|0"),
        ("state", "the clean one", "Cup|explore|0"),
        ("place", "the one on the left", "Cup|explore|0"),
        ("negating", "not the blue one", "Cup|explore|0"),
        ("self_correcting", "The blue one, sorry, I meant the other one.", "Cup|explore|0"),
        ("mistaken", "the blue one", "Cup|explore|1"),
        ("option0", "option 0", None),
        ("several", "the dirty one or the clean one", None),
        ("refusing", "I'd rather not say.", None),
    ],
)
def test_each_person_says_what_they_say_and_the_oracle_learns_what_it_designates(
    strategy, answer, designates
):
    _, truth = build_world(Case(things=TWO), KITCHEN)
    group, reply = ExplorePerson(strategy, truth.groups, truth.names).reply(
        "Which cup should I pick up: the red cup or the blue cup?"
    )
    assert group.kind == "Cup"
    assert (reply.text, reply.designates, reply.clear) == (
        answer,
        designates,
        designates is not None,
    )


def test_an_ordinal_follows_the_order_the_question_gave():
    _, truth = build_world(Case(things=TWO, target=1), KITCHEN)
    person = ExplorePerson("ordinal", truth.groups, truth.names)
    _, red_first = person.reply("Which cup: the red cup or the blue cup?")
    _, blue_first = person.reply("Which cup: the blue cup or the red cup?")
    _, unknown = person.reply("Which cup: this one or that one?")
    assert (red_first.text, blue_first.text) == ("the second one", "the first one")
    assert red_first.designates == blue_first.designates == "Cup|explore|1"
    assert unknown.designates is None


def test_a_silent_person_and_one_who_left_give_no_answer():
    _, truth = build_world(Case(things=TWO), KITCHEN)
    person = ExplorePerson("cooperative", truth.groups, truth.names)
    person.left = True
    with pytest.raises(Exception, match="said nothing"):
        person.ask("Which cup?")
    assert describe(truth.groups[0], 0) == "the red one"


# ---------------------------------------------------------------------------- the generator
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(cases(("kitchen",)))
def test_every_generated_world_is_a_valid_scene_with_the_truth_in_it(case):
    data, truth = build_world(case, KITCHEN)
    scene = Scene(data)  # the scene contract's own validation
    group = truth.groups[0]
    ids = {o.id for o in scene.objects}
    assert set(group.ids) <= ids or case.hidden
    assert group.target in group.ids
    if case.form == "said":  # the oracle's own reading decides which one the words mean
        assert group.designation is not None and group.designation.possible <= set(group.ids)
        assert group.by_instruction is None or group.designation.sure == {group.by_instruction}
    else:
        assert (group.by_instruction is None) or group.by_instruction == group.target
    assert all("_" not in w or w in truth.labels for w in truth.names.values())
    assert len([o for o in scene.objects if o.type == case.kind]) == (
        0 if case.hidden else len(case.things)
    )


def test_the_printed_test_is_python_that_rebuilds_the_same_case():
    ep = episode(
        Case(things=TWO, person="vague"),
        lambda s: Act(s.robot.view("Cup"), "Grab", ["Cup|explore|1"]),
    )
    text = pytest_text("P1", ep)
    tree = ast.parse(text)  # valid Python, never run here
    (test,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    (call,) = [
        n for n in ast.walk(test) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Case"
    ]
    assert ast.unparse(call) == ast.unparse(ast.parse(repr_case(ep.case)).body[0].value)  # type: ignore[attr-defined]
    assert "def test_explore_p1_cup_natural_vague():" in text
    assert "check_case(Case(person='vague'), replay=False)" in text
    assert "# P1: call #1 Grab('Cup|explore|1',): nothing designated one Cup yet" in text
    assert set(PROPERTIES) >= {"P1", "P11"} and set(PEOPLE) >= {"negating", "silent"}


def repr_case(case: Case) -> str:
    """The case with only the fields that differ from the defaults, as the explorer prints it."""
    default = Case()
    changed = {k: v for k, v in vars(case).items() if getattr(default, k) != v}
    return f"Case({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


def test_room_files_and_dicts_load_alike(tmp_path):
    path = tmp_path / "room.json"
    path.write_text(__import__("json").dumps(KITCHEN))
    assert load_room(path) == load_room(KITCHEN) == load_room(small_kitchen())
    assert (
        check_case(Case(things=(TWO[0],), form="colour"), {"kitchen": path}, replay=True).props
        == set()
    )
