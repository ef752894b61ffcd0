"""Kitchen half of ``foresight.py``: step plans in FloorPlan1, changed under the robot.

Each plan is a list of queries the embedded symbolic reasoner checks one by one ("go to the
fridge", "open the fridge", "pick the egg", ...). The scene is the shared FloorPlan1 kitchen
with one person added (Marta, by the island, looking at the robot, hands free) so that plans
may hand things over. A plan is grounded once, on the unchanged kitchen (each step's action
and objectIds); a plan that does not pass there, in the checker and in
:class:`~bt_raider.simulation.simworld.SimWorld`, is dropped with a message.

A trial changes the world just before step ``t`` (:meth:`SimWorld.inject`):

- ``moved``: an object a later step picks is put away in one of the closed base cabinets, or
  on the counter farthest from it;
- ``closed``: something the plan opened is closed again (a plan that opened nothing yet gets
  an unrelated drawer opened instead);
- ``hands``: someone hands the robot a sponge (its one hand is then full), or, when the robot
  already holds something, the person's hands get full;
- ``blocked``: a stool blocks the way to a later step's destination;
- ``stowed``: two changes at once: an object a later step picks is put away in a closed base
  cabinet and a stool left in front of that cabinet.

The truth is what SimWorld does with the plan's grounded actions from there: the first action
it refuses (or none). Look-ahead is :func:`bt_raider.runtime.lookahead.forecast_scene`, asked
at each step from ``t`` on with the scene the world is in then.
"""

from __future__ import annotations

import copy
import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foresight_pddl import Trial

KINDS = ("moved", "closed", "hands", "blocked", "stowed")
MARTA = {
    "id": "person_1",
    "name": "Marta",
    "position": {"x": 1.0, "y": 0.0, "z": -0.2},
    "looking_at_robot": True,
    "hands_free": True,
}
PLANS: dict[str, list[str]] = {
    "egg_to_pan": [
        "go to the fridge",
        "open the fridge",
        "pick the egg",
        "go to the pan",
        "put the egg in the pan",
    ],
    "apple_to_sink": [
        "go to the apple",
        "pick the apple",
        "go to the sink",
        "put the apple in the sink basin",
    ],
    "tomato_to_bowl": [
        "go to the tomato",
        "pick the tomato",
        "go to the bowl",
        "put the tomato in the bowl",
    ],
    "slice_tomato": [
        "go to Drawer_9",
        "open Drawer_9",
        "pick the knife",
        "go to the tomato",
        "slice the tomato",
    ],
    "bread_to_microwave": [
        "go to the microwave",
        "open the microwave",
        "go to the bread",
        "pick the bread",
        "go to the microwave",
        "put the bread in the microwave",
    ],
    "coffee": [
        "go to the mug",
        "pick the mug",
        "go to the coffee machine",
        "put the mug in the coffee machine",
        "turn on the coffee machine",
    ],
    "lettuce_to_fridge": [
        "go to the fridge",
        "open the fridge",
        "go to the lettuce",
        "pick the lettuce",
        "go to the fridge",
        "put the lettuce in the fridge",
    ],
    "apple_to_marta": [
        "go to the apple",
        "pick the apple",
        "go to Marta",
        "give the apple to Marta",
    ],
    "potato_to_pot": [
        "go to the potato",
        "pick the potato",
        "go to the pot",
        "put the potato in the pot",
    ],
    "card_to_marta": [
        "go to the credit card",
        "pick the credit card",
        "go to Marta",
        "give the credit card to Marta",
    ],
}
#: Where things are put away: the closed base cabinets; what blocks a way: a stool.
CABINETS = (
    "Cabinet|+00.68|+00.50|-02.20",
    "Cabinet|-01.18|+00.50|-02.20",
    "Cabinet|-01.55|+00.50|+00.38",
    "Cabinet|-01.55|+00.50|-01.97",
)
STOOL = "Stool|+00.70|+00.00|-00.51"
SPONGE = "DishSponge|-01.94|+00.75|-01.71"
COUNTERS = (
    "CounterTop|+00.69|+00.95|-02.48",
    "CounterTop|-00.08|+01.15|00.00",
    "CounterTop|-01.87|+00.95|-01.21",
)
#: Actions that need the robot's one hand free.
FREE_HAND = {"pick", "open", "close", "turnon", "turnoff"}


@dataclass
class Plan:
    name: str
    queries: list[str]
    actions: list[tuple[str, list[str]]]  # grounded (action, args) per step


def kitchen(path: Path) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    data["humans"] = [dict(MARTA)]
    return data


def ground(scene_dict: dict[str, Any], checker: Any) -> tuple[list[Plan], list[str]]:
    """The plans that pass on the unchanged kitchen, grounded; and why others were dropped."""
    from bt_raider.checking.parse import parse_query
    from bt_raider.checking.steps import apply_effects
    from bt_raider.errors import ActionFailed
    from bt_raider.perception.scene import Scene
    from bt_raider.simulation.simworld import SimWorld

    plans, dropped = [], []
    for name, queries in PLANS.items():
        scene, world = Scene(copy.deepcopy(scene_dict)), SimWorld(scene_dict)
        actions = []
        for q in queries:
            verdict = checker.check(scene, q)
            parsed = parse_query(q)
            roles = {a.role: list(verdict.grounding.get(a.text, [])) for a in parsed.args}
            args = [ids[0] for ids in roles.values() if len(ids) == 1]
            if verdict.category.value != "none" or len(args) != len(roles):
                dropped.append(f"{name}: {q!r}: {verdict.explanation}")
                break
            apply_effects(scene, verdict.action, roles)
            try:
                world.execute(verdict.action, args)
            except ActionFailed as exc:
                dropped.append(f"{name}: {q!r}: {exc}")
                break
            actions.append((verdict.action, args))
        else:
            plans.append(Plan(name, list(queries), actions))
    return plans, dropped


def replay(scene_dict: dict[str, Any], plan: Plan, upto: int) -> Any:
    """A SimWorld after the plan's first ``upto`` steps."""
    from bt_raider.simulation.simworld import SimWorld

    world = SimWorld(scene_dict)
    for action, args in plan.actions[:upto]:
        world.execute(action, args)
    return world


def _far_counter(world: Any, oid: str) -> tuple[str, tuple[float, float]]:
    pos = world.scene.by_id(oid).position
    best = max(
        COUNTERS,
        key=lambda c: math.hypot(
            world.scene.by_id(c).position[0] - pos[0], world.scene.by_id(c).position[2] - pos[2]
        ),
    )
    p = world.scene.by_id(best).position
    return best, (float(p[0]), float(p[2]))


def change(world: Any, plan: Plan, kind: str, at: int, rng: random.Random) -> str | None:
    """Make one ``kind`` change in ``world`` (the state before step ``at``); its text."""
    later = plan.actions[at + 1 :]
    done = plan.actions[:at]
    holding = [o.id for o in world.scene.holding]
    if kind == "moved":
        picks = [args[0] for act, args in later if act == "pick" and args[0] not in holding]
        if not picks:
            return None
        oid = rng.choice(picks)
        if rng.random() < 0.5:
            cabinet = rng.choice(CABINETS)
            world.move_object(oid, world.scene.by_id(cabinet).position, parent=cabinet)
            return f"{world.scene.name_of(oid)} put away in {world.scene.name_of(cabinet)}"
        counter, xz = _far_counter(world, oid)
        world.move_object(oid, xz, parent=counter)
        return f"{world.scene.name_of(oid)} moved to {world.scene.name_of(counter)}"
    if kind == "closed":
        opened = [args[0] for act, args in done if act == "open"]
        opened = [o for o in opened if world.scene.by_id(o).flag("isOpen")]
        if opened:
            oid = rng.choice(opened)
            world.set_state(oid, "isOpen", False)
            return f"{world.scene.name_of(oid)} closed"
        named = {a for _, args in plan.actions for a in args}
        drawers = [o.id for o in world.scene.of_type("Drawer") if o.id not in named]
        oid = rng.choice(sorted(drawers))
        world.set_state(oid, "isOpen", True)
        return f"{world.scene.name_of(oid)} opened (unrelated)"
    if kind == "hands":
        if not holding:
            if not any(act in FREE_HAND for act, _ in later):
                return None
            world.inject(_hand_over(SPONGE), label="given a sponge")
            return "the robot's hand filled (a sponge)"
        if not any(act == "handover" for act, _ in later):
            return None
        world.set_human(MARTA["id"], hands_free=False)
        return "Marta's hands full"
    if kind == "blocked":
        targets = [args[0] for act, args in later if act == "approach"]
        if not targets:
            return None
        target = rng.choice(targets)
        world.block(target, STOOL)
        return f"the way to {world.scene.name_of(target)} blocked"
    if kind == "stowed":
        picks = [args[0] for act, args in later if act == "pick" and args[0] not in holding]
        if not picks:
            return None
        oid, cabinet = rng.choice(picks), rng.choice(CABINETS)
        world.move_object(oid, world.scene.by_id(cabinet).position, parent=cabinet)
        world.block(cabinet, STOOL)
        return f"{world.scene.name_of(oid)} put away in {world.scene.name_of(cabinet)}, a stool in front"
    raise ValueError(f"unknown kind {kind!r}: expected one of {', '.join(KINDS)}")


def _hand_over(oid: str) -> Any:
    """A world event: someone puts ``oid`` in the robot's hand (AI2-THOR's inventory)."""

    def give(world: Any) -> None:
        obj = world.scene.by_id(oid)
        for pid in obj.parents:
            parent = world.scene.by_id(pid)
            parent.raw["receptacleObjectIds"] = [c for c in parent.children if c != oid]
        obj.raw["parentReceptacles"] = None
        obj.raw["isPickedUp"] = True
        inventory = world.scene.data.setdefault("inventoryObjects", [])
        inventory.append({"objectId": oid, "objectType": obj.type})

    return give


def trials(
    scene_dict: dict[str, Any], plans: list[Plan], seed: int, count: int
) -> list[tuple[Trial, Plan, Any]]:
    """Per plan, a control and ``count`` changed worlds: (trial, plan, world before step t)."""
    out = []
    for p, plan in enumerate(plans):
        rng = random.Random(f"{seed}:{plan.name}")
        n = len(plan.queries)
        out.append((Trial(plan.name, "none", "", 0, n), plan, replay(scene_dict, plan, 0)))
        made, tries = 0, 0
        while made < count and tries < 20 * count:
            tries += 1
            kind = KINDS[(made + p) % len(KINDS)]  # each kind in turn; one may not apply at t
            at = rng.randrange(0, n - 1)
            world = replay(scene_dict, plan, at)
            state = rng.getstate()
            text = change(world, plan, kind, at, rng)
            if text is not None:
                trial = Trial(plan.name, kind, text, at, n)
                trial.extra["rng"] = state  # to make the same change again (completion part)
                out.append((trial, plan, world))
                made += 1
    return out


def run_trial(
    plan: Plan, world: Any, trial: Trial, forecast: Any, checker: Any, depth: int | None
) -> Trial:
    """Run the plan from step ``trial.at`` in ``world``; ask look-ahead at every step."""
    from bt_raider.errors import ActionFailed

    for i in range(trial.at, len(plan.actions)):
        if trial.seen_at is None:
            scene = world.observe()
            t0 = time.perf_counter()
            fc = forecast(scene, plan.queries, checker=checker, start=i, depth=depth)
            trial.ms.append((time.perf_counter() - t0) * 1000)
            if fc is not None:
                trial.seen_at, trial.said, trial.failed = i, int(fc.step), tuple(fc.failed)
                trial.extra["category"] = fc.category
        action, args = plan.actions[i]
        try:
            world.execute(action, args)
        except ActionFailed as exc:
            trial.fails = i
            trial.extra["reason"] = getattr(exc, "reason", "")
            break
    return trial
