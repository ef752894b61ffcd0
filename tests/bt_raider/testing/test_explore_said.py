"""Issue 32's properties of the oracle (P12-P15, and P1/P10 for hostile recovery), each with a
wrong tree written here (plain py_trees behaviours on the test's robot): the oracle flags
exactly what the tree breaks, and the right tree passes clean."""

from __future__ import annotations

from typing import Any

import py_trees

from bt_raider.testing.explore_lang import Pick, Say
from bt_raider.testing.explore_tree import guard_name
from bt_raider.testing.explore_world import DECOYS, Case, Thing, build_world
from bt_raider.testing.scenes import small_kitchen
from tests.bt_raider.testing.test_explore_oracle import Act, ListRobot, episode

S = py_trees.common.Status
BOXES = (Thing("red", False, "left"), Thing("blue", False, "right"))


def said(say: Say, **kw: Any) -> Case:
    return Case(kind="Box", things=BOXES, form="said", said=say, **kw)


def grab(box: str) -> Any:
    return lambda s: Act(s.robot.view("Box"), "Grab", [box])


def test_the_box_that_is_not_red_is_the_blue_one():
    case = said(Say(Pick(), exclude=Pick(colour="red"), style=1))
    wrong, right = episode(case, grab("Box|explore|0")), episode(case, grab("Box|explore|1"))

    assert build_world(case, small_kitchen().to_dict())[1].groups[0].query == (
        "pick the box that isn't red"
    )
    assert wrong.props == {"P1"} and "designated is Box|explore|1" in str(wrong.violations[0])
    assert right.props == set(), right.violations


class Released(py_trees.behaviour.Behaviour):
    """A user's node told what its guard released it with (as RaiderGuard's retarget does)."""

    def __init__(self, spec: Any, box: str) -> None:
        super().__init__("released")
        self.spec, self.box = spec, box

    def update(self) -> S:
        self.spec.on_release("Box", "pick", [self.box])
        self.feedback_message = "told"
        return S.FAILURE


def test_a_release_outside_the_designation_breaks_p12():
    case = said(Say(Pick(), exclude=Pick(colour="red")))
    outside = episode(case, lambda s: Released(s, "Box|explore|0"))
    inside = episode(case, lambda s: Released(s, "Box|explore|1"))
    knife = episode(case, lambda s: Released(s, DECOYS[0]))

    assert outside.props == {"P12"} and inside.props == set()
    assert knife.props == {"P12"} and "not Knife" in str(knife.violations[0])


def test_acting_without_asking_on_words_that_leave_it_open():
    several = said(Say(Pick(colour="red"), alt=Pick(colour="blue")))
    unheaded = said(Say(Pick(side="left", frame="my")), speaker="unknown")
    headed = said(Say(Pick(side="left", frame="my")), speaker="facing")
    odd = said(Say(Pick(colour="red", odd="wobbly")))

    assert episode(several, grab("Box|explore|0")).props == {"P14"}
    assert episode(unheaded, grab("Box|explore|0")).props == {"P15"}
    # She faces the robot: her left is the robot's right, the blue box.
    assert episode(headed, grab("Box|explore|1")).props == set()
    assert episode(headed, grab("Box|explore|0")).props == {"P1"}
    assert episode(odd, grab("Box|explore|0")).props == {"P13"}


def test_after_asking_a_guess_is_p1_again():
    case = said(Say(Pick(colour="red"), alt=Pick(colour="blue")), person="option0")
    ep = episode(
        case,
        lambda s: Act(s.robot.view("Box"), "Grab", ["Box|explore|0"], ask=(s.person, "Which box?")),
    )
    assert ep.props == {"P1"}


def test_a_recovery_taking_a_decoy_and_a_pick_with_a_full_hand():
    case = Case(things=(Thing("red"),), planner="full_hand")
    taken = episode(case, lambda s: Act(s.robot, "Grab", [DECOYS[0]]))

    class Holding(ListRobot):
        def observe(self) -> dict[str, Any]:
            return {**self.scene, "inventoryObjects": [{"objectId": DECOYS[0]}]}

    from bt_raider.testing.explore import run_case

    full = run_case(
        Case(things=(Thing("red"),), form="colour"),
        {"kitchen": small_kitchen().to_dict()},
        tree_factory=lambda s: Act(s.robot.view("Cup"), "Grab", ["Cup|explore|0"]),
        world_factory=Holding,
    )
    assert taken.props == {"P1"} and "recovery took a Knife" in str(taken.violations[0])
    assert full.props == {"P10"} and "full hand" in str(full.violations[0])


def test_colliding_names_are_drawn_for_two_guards_only():
    two = Case(tree="parallel", names="dotted")
    world = build_world(two, small_kitchen().to_dict())[1]
    names = [guard_name(two, g, i) for i, g in enumerate(world.groups)]
    assert names == ["fetch/cup", "fetch.cup"]
    assert guard_name(Case(names="same"), world.groups[0], 0) == f"check {world.groups[0].query}"


def test_words_for_a_handover_over_a_pick_node_let_nothing_run():
    # The explorer's wrong_node form: "The box, please." (the person wants it handed over)
    # over the user's pick node. Releasing the node, or any call on the box, is flagged;
    # a tree that does nothing, and the same words over a handover node, are clean.
    wrong = Case(kind="Box", things=BOXES[:1], form="wrong_node")
    truth = build_world(wrong, small_kitchen().to_dict())[1]
    assert truth.groups[0].query == "The box, please." and truth.groups[0].asks == "handover"
    assert truth.groups[0].action == "pick"

    released = episode(wrong, lambda s: Released(s, "Box|explore|0"))
    grabbed = episode(wrong, grab("Box|explore|0"))
    idle = episode(wrong, lambda s: py_trees.behaviours.Failure("refused"))
    assert released.props == {"P12"} and "ask for a handover" in str(released.violations[0])
    assert grabbed.props == {"P1"} and "asks for a handover, not a pick" in str(grabbed.violations)
    assert idle.props == set(), idle.violations

    handing = Case(kind="Box", things=BOXES[:1], form="verbless")
    truth = build_world(handing, small_kitchen().to_dict())[1]
    assert truth.groups[0].action == "handover" and truth.groups[0].asks is None
    give = episode(
        handing, lambda s: Act(s.robot.view("Box"), "Give", ["Box|explore|0", "person_explore"])
    )
    assert give.props == set(), give.violations
