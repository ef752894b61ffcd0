"""Generated hostile recovery plans never get a child released outside the designation.

Hypothesis writes the plans (steps on any object of the kitchen, a resume step on any object
or on the person's answer), the person's reply and whether the verifier is on; of several
designated objects, one is released only after the person answered; the oracle is
this file's own table of what each instruction designates in the kitchen (it shares no code
with the checker, the designation or the verifier).
"""

from __future__ import annotations

import py_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.robot.human import ScriptedHuman
from bt_raider.runtime.guards import RaiderGuard
from tests.bt_raider.runtime.intent_world import (
    APPLE,
    BOWL,
    CLEAN_CUP,
    DIRTY_CUP,
    KNIFE,
    OTHER_APPLE,
    Hostile,
    I,
    MyPick,
    OneArmRobot,
    kitchen,
    run,
)

#: instruction -> (scene options, the objects its words designate there).
DESIGNATES = {
    "pick the cup": ({}, {CLEAN_CUP, DIRTY_CUP}),
    "pick the clean cup": ({"far_clean_cup": True}, {CLEAN_CUP}),
    "pick the dirty cup": ({}, {DIRTY_CUP}),
    "pick the apple": ({"apples": 2}, {APPLE, OTHER_APPLE}),
}
#: A reply -> the object it names (replies naming no single object are left out).
NAMES = {"the clean cup": CLEAN_CUP, "the dirty cup": DIRTY_CUP, OTHER_APPLE: OTHER_APPLE}
REPLIES = [*NAMES, "the first one", "the apple", "the knife"]
OBJECTS = [CLEAN_CUP, DIRTY_CUP, APPLE, OTHER_APPLE, KNIFE, BOWL]


@st.composite
def hostile_plans(draw: st.DrawFn) -> tuple[str, bool]:
    """Recovery code: maybe an ask, up to three robot steps, a resume step; whether it asks."""
    asks = draw(st.booleans())
    lines = ["which = ask('Which one should I pick up?')"] if asks else []
    for _ in range(draw(st.integers(0, 3))):
        verb = draw(st.sampled_from(["pick", "place", "open", "move_to"]))
        obj = draw(st.sampled_from(OBJECTS))
        lines.append(f"place('{obj}', '{BOWL}')" if verb == "place" else f"{verb}('{obj}')")
    target = "which" if asks and draw(st.booleans()) else repr(draw(st.sampled_from(OBJECTS)))
    lines.append(f"pick({target})")
    return "\n".join(lines), asks


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=st.sampled_from(sorted(DESIGNATES)),
    plan=hostile_plans(),
    reply=st.sampled_from(REPLIES),
    verify=st.booleans(),
)
def test_a_hostile_plan_never_gets_the_child_released_outside_the_designation(
    query: str, plan: tuple[str, bool], reply: str, verify: bool
) -> None:
    py_trees.blackboard.Blackboard.clear()
    options, designated = DESIGNATES[query]
    code, asks = plan
    robot = OneArmRobot(kitchen(**options))  # type: ignore[arg-type]
    child = MyPick("my pick", "Cup", robot)
    human = ScriptedHuman([reply] * 3)
    recovery = Recovery(Hostile(code), robot, human, verify=verify)
    guard = RaiderGuard(child, query, SymbolicReasoner(), scene=robot.observe, recovery=recovery)

    rows = run(guard, child, ticks=200)

    released = child.picked
    assert len(released) <= 1
    if not released:
        assert all(c is I for _, c, _ in rows)  # never ticked
        return
    assert released[0] in designated, (code, reply, guard.feedback_message)
    assert guard.resolved is not None and set(guard.resolved.args) <= designated
    answered = [ex for ex in human.transcript if getattr(ex, "answer", None) == reply]
    if len(designated) > 1:  # only the person settles which of several (P12)
        assert asks and answered, (code, reply, guard.feedback_message)
    chosen = NAMES.get(reply)
    if asks and answered and chosen in designated and len(designated) > 1:
        assert released[0] == chosen, (code, reply, guard.feedback_message)
