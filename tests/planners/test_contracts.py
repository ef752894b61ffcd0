"""Issue 34, "Argument roles are guessed by position": roles come from the PDDL domain.

The care home's ``(navigate-to ?r ?from ?to ?door)`` puts the destination second and the door
third. On main the check took the last argument, matched ``ana_door`` to the resident Ana and
passed ("approach Ana: path free"). With the domain's derived contract the check reads the
destination, and a door is never matched to a person.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from unified_planning.io import PDDLReader

import bt_raider
from bt_raider import RaiderGuard, SymbolicReasoner
from bt_raider.checking.action_contract import ActionContracts
from bt_raider.errors import QueryError
from bt_raider.planners.contracts import declare_missing, derive_contracts
from bt_raider.planners.pddl import Step
from bt_raider.planners.tree import ActionRegistry, plan_to_tree, raider_guards
from tests.bt_raider.domain.care_home import Act, CareRobot, Status, lounge, person, thing, tick

DOMAIN = Path(__file__).resolve().parents[2] / "examples" / "care_home" / "domain.pddl"


@pytest.fixture(scope="module")
def problem():
    return PDDLReader().parse_problem(str(DOMAIN))


def test_roles_are_derived_from_types_and_effects(problem):
    contracts = derive_contracts(problem)
    go = contracts.get("navigate-to")
    assert go.kind == "approach"
    assert [(p.name, p.role) for p in go.params] == [
        ("r", "robot"),
        ("from", "origin"),
        ("to", "destination"),
        ("door", "via"),
    ]
    give = contracts.get("hand-to")
    assert give.kind == "handover" and give.role("p") == "recipient" and give.role("i") == "object"
    assert contracts.query("(navigate-to tiago corridor lounge ana_door)") == "navigate-to(lounge)"
    assert (
        contracts.query("(hand-to tiago bernadette pills lounge)") == "hand-to(pills, bernadette)"
    )


def test_a_role_that_cannot_be_derived_is_refused_in_one_line_naming_the_parameter(tmp_path):
    domain = DOMAIN.read_text().replace(
        "(:action open-door\n    :parameters (?r - robot ?d - door ?x - room)\n"
        "    :precondition (at ?r ?x)",
        "(:action open-door\n    :parameters (?r - robot ?d - door ?x - room)\n"
        "    :precondition (open ?d)",
    )
    path = tmp_path / "domain.pddl"
    path.write_text(domain)
    problem = PDDLReader().parse_problem(str(path))
    with pytest.raises(QueryError) as err:
        derive_contracts(problem)
    message = str(err.value)
    assert message.startswith("open-door: the role of ?x (type room) cannot be derived")
    assert "\n" not in message
    fixed = derive_contracts(problem, declared={"open-door": {"x": "origin"}})
    assert fixed.get("open-door").role("x") == "origin"
    assert declare_missing(fixed, "open-door", x="via").role("x") == "via"


def scene():
    return lounge(
        people=[person("h1", "Ana", 0.6, 0.6, role="resident")],
        objects=[thing("Door|ana", "Door", 1.5, 1.0, openable=True, isOpen=True)],
    )


def test_without_the_contract_the_door_was_taken_for_the_destination():
    """The behaviour the contract replaces: the last argument, a door, never the room."""
    verdict = bt_raider.check(scene(), "(navigate-to tiago corridor lounge ana_door)")
    assert verdict.grounding.get("ana_door") != ["h1"]  # never Ana, at least
    assert "lounge" not in verdict.grounding


def test_a_guarded_plan_checks_the_destination_by_role(problem):
    robot = CareRobot(scene())
    contracts = derive_contracts(problem)
    registry = ActionRegistry(fallback=lambda step: Act(step.name, list(step.args), robot))
    plan = [
        Step("navigate-to", ["tiago", "lounge", "corridor", "ana_door"]),
        Step("navigate-to", ["tiago", "corridor", "lounge", "ana_door"]),
    ]
    guard = raider_guards(SymbolicReasoner(), scene=robot.observe, contracts=contracts)
    root = plan_to_tree(plan, registry, guard=guard)
    statuses = tick(root)
    assert statuses[-1] is Status.SUCCESS
    first, second = root.children
    assert first.verdict.grounding == {"corridor": ["corridor"]} or "corridor" in str(
        first.verdict.explanation
    )
    assert "Ana" not in first.verdict.explanation and "Ana" not in second.verdict.explanation
    assert "lounge" in second.verdict.explanation
    # The user's node drives to what the check resolved: the corridor, then the lounge (on
    # main: to Ana, then to the corridor's door).
    assert robot.log == [("navigate-to", ["corridor"]), ("navigate-to", ["lounge"])]


def test_an_action_registry_declares_the_contract_next_to_the_action():
    registry = ActionRegistry()

    @registry.action("GiveTo", kind="handover", recipient="person", object="item")
    def give(step):
        return Act(step.name, list(step.args), CareRobot(lounge()))

    contract = registry.contracts.get("giveto")
    assert contract.kind == "handover" and contract.role("recipient") == "recipient"
    assert registry.contracts.query("GiveTo(Ana, Pills)") == "GiveTo(Pills, Ana)"


def test_declared_python_contracts_give_the_recipient_by_role():
    contracts = ActionContracts()
    contracts.declare("GiveTo", "handover", recipient="person", object="item")
    # GiveTo means handover (its name says so too): the user's name stays, roles reorder.
    assert (
        contracts.query("GiveTo(Bernadette, PillOrganiser)") == "GiveTo(PillOrganiser, Bernadette)"
    )
    with pytest.raises(QueryError, match="no argument has the role recipient"):
        ActionContracts().declare("GiveTo", "handover", object="item").query(["x"])


def test_a_plain_guard_on_a_pddl_step_never_acts_on_the_last_argument(problem):
    """Found by the domain explorer (D5): a RaiderGuard given the raw PDDL step, its checker
    reading it by the derived roles, passed on the corridor and retargeted the user's node to
    the last argument, the door named after Ana. Now it acts on the corridor or not at all."""
    robot = CareRobot(scene())
    node = Act("navigate-to", ["tiago", "lounge", "corridor", "ana_door"], robot)
    checker = SymbolicReasoner(contracts=derive_contracts(problem))
    guard = RaiderGuard(
        node, "(navigate-to tiago lounge corridor ana_door)", checker, scene=robot.observe
    )
    statuses = tick(guard)
    assert statuses[-1] in (Status.SUCCESS, Status.FAILURE)
    assert all(args == ["corridor"] for _, args in robot.log), robot.log
    assert statuses[-1] is Status.SUCCESS or guard.feedback_message
