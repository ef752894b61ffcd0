"""Issue 34, "Why": only nine action kinds could be checked (PressButton had to be written as
turnon). A new kind is declared with its preconditions and effects in the scene contract's
terms; the check, the explanation, recovery and verification treat it like the nine."""

from __future__ import annotations

import pytest

from bt_raider import (
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
)
from bt_raider.checking.action_contract import ActionContracts
from bt_raider.checking.verdict import Category
from bt_raider.errors import QueryError
from bt_raider.perception.scene import Scene
from tests.bt_raider.domain.care_home import ACTIONS, Act, CareRobot, Status, lounge, thing, tick


def contracts():
    out = ActionContracts()
    out.declare(
        "PressButton",
        "press",
        object="button",
        preconditions=["reachable", "route_free", "off"],
        effects=["on"],
    )
    return out


def button(x=0.3, z=0.5, **flags):
    return thing("CallButton|1", "CallButton", x, z, toggleable=True, **flags)


def test_pressbutton_is_checked_by_its_declared_preconditions():
    checker = SymbolicReasoner(contracts=contracts())
    near = checker.check(Scene(lounge(objects=[button()])), "PressButton(CallButton)")
    assert near.category is Category.NONE and near.action == "PressButton"
    assert near.grounding == {"CallButton": ["CallButton|1"]}
    assert "within reach" in near.explanation
    far = checker.check(Scene(lounge(objects=[button(3.0, 3.0)])), "PressButton(CallButton)")
    assert far.category is Category.OUT_OF_REACH
    assert far.explanation == "The CallButton is 4.24 m away, beyond the robot's reach of 1.1 m."
    on = checker.check(Scene(lounge(objects=[button(isToggled=True)])), "PressButton(CallButton)")
    assert on.category is Category.WRONG_STATE
    table = checker.check(Scene(lounge(objects=[button()])), "PressButton(Table)")
    assert table.category is Category.WRONG_PROPERTY  # a table is no button


def test_without_the_declaration_it_is_an_unknown_action():
    with pytest.raises(QueryError, match="unknown action 'PressButton'"):
        SymbolicReasoner().check(Scene(lounge(objects=[button()])), "PressButton(CallButton)")


def test_an_unknown_precondition_word_is_refused_when_declared():
    with pytest.raises(QueryError, match="'reachible' is not a condition"):
        ActionContracts().declare("Ring", "ring", object="bell", preconditions=["reachible"])


def test_a_guarded_pressbutton_out_of_reach_is_recovered_with_navigateto():
    robot = CareRobot(lounge(people=[], objects=[button(3.0, 3.0)]))
    node = Act("PressButton", ["CallButton"], robot)
    c = contracts()
    guard = RaiderGuard(
        node,
        "PressButton(CallButton)",
        SymbolicReasoner(contracts=c),
        scene=robot.observe,
        recovery=Recovery(
            SymbolicRecoveryPlanner(), robot, ScriptedHuman([]), actions=ACTIONS, contracts=c
        ),
    )
    statuses = tick(guard)
    assert statuses[-1] is Status.SUCCESS, guard.feedback_message
    assert robot.log == [("NavigateTo", ["CallButton|1"]), ("PressButton", ["CallButton|1"])]


def test_the_look_ahead_applies_a_declared_kinds_effects():
    """Pressing the button twice: after the first press the declared effect (on) holds, so the
    look-ahead foresees the second failing on its precondition (off). Before, a plan with a
    kind of the user's own could not be looked ahead in at all (unknown action)."""
    from bt_raider.runtime.forecast import forecast_scene

    room = Scene(lounge(people=[], objects=[button()]))
    checker = SymbolicReasoner(contracts=contracts())
    twice = ["PressButton(CallButton)", "PressButton(CallButton)"]
    forecast = forecast_scene(room, twice, checker)
    assert forecast is not None and not forecast.unknown
    assert forecast.step == 1 and forecast.category == "wrong_state"
    assert "not off" in forecast.explanation
    assert forecast_scene(room, twice[:1] + ["NavigateTo(corridor)"], checker) is None
    assert room.by_id("CallButton|1").raw.get("isToggled") in (None, False)  # a copy changed
