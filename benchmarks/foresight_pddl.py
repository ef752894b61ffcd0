"""PDDL half of ``foresight.py``: perturb a plan's state at a random step, find where it fails.

For each classical domain of ``../shared/pddl`` (a ``problem.pddl`` and actions the sequential
simulator runs) the plan comes from :func:`bt_raider.planners.pddl.solve`. A *trial* picks a
step ``t`` and changes the state just before it (what the world did while the robot was busy
with step ``t - 1``):

- ``deleted``: a precondition of a later step that holds at ``t`` becomes false;
- ``moved``: a fact a later step needs gets another object in one argument, of the same type
  (``(at ball1 rooma)`` -> ``(at ball1 roomb)``, the robot or a ball moved);
- ``added``: a fact that does not hold becomes true (usually harmless: controls for false
  alarms on a changed state).

The truth is what :class:`~bt_raider.planners.world.PddlWorld` does with the plan from there:
the first step it refuses (or none). Look-ahead is :class:`bt_raider.planners.lookahead.PddlForecaster` (what ``forecast_pddl``
runs), asked at every step from ``t`` on with the state the world is in then.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Kinds of change a trial makes.
KINDS = ("deleted", "moved", "added")


@dataclass
class Domain:
    name: str
    problem: Any
    steps: list[Any]
    states: list[Any]  # states[i]: before step i (states[n]: after the plan)


@dataclass
class Trial:
    """One perturbed (or control) run of a plan and what look-ahead said about it."""

    where: str
    kind: str
    change: str
    at: int  # the step before which the state changed
    n: int
    fails: int | None = None  # truth: the first step the world refuses
    seen_at: int | None = None  # the step at which look-ahead first forecast a failure
    said: int | None = None  # the step that forecast named
    failed: tuple[str, ...] = ()
    ms: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def classical_domains(root: Path) -> list[str]:
    """Shared domains with a problem (PlanSys2's is durative: no classical plan)."""
    return sorted(
        d.name
        for d in root.iterdir()
        if (d / "problem.pddl").is_file() and d.name != "plansys2_simple_example"
    )


def load_domain(root: Path, name: str) -> Domain:
    from bt_raider.planners.pddl import load, plan_steps, solve
    from bt_raider.planners.world import PddlWorld

    problem = load(root / name / "domain.pddl", root / name / "problem.pddl")
    steps = plan_steps(solve(problem, timeout=60.0))
    world = PddlWorld(problem)
    states = [world.state]
    for step in steps:
        world.execute(step.name, step.args)
        states.append(world.state)
    return Domain(name, problem, steps, states)


def _facts(problem: Any, state: Any) -> tuple[list[Any], list[Any]]:
    """(true, false) boolean fluent instances of ``state`` that actions change.

    Static fluents (``(gripper left)``, ``(in-city pos1 cit1)``) describe what things are, not
    where: UP's simulator reads them from the problem, not the state, so they are left alone.
    """
    from unified_planning.model.fluent import get_all_fluent_exp

    true, false = [], []
    static = problem.get_static_fluents()
    for fluent in problem.fluents:
        if fluent.type.is_bool_type() and fluent not in static:
            for fe in get_all_fluent_exp(problem, fluent):
                (true if state.get_value(fe).bool_constant_value() else false).append(fe)
    return true, false


def _needed(dom: Domain, start: int) -> list[tuple[int, Any]]:
    """(step index, ground positive precondition) of the steps from ``start`` on."""
    from bt_raider.planners.pddl import conjuncts
    from bt_raider.planners.preconditions import ground_preconditions, resolve

    out = []
    for j in range(start, len(dom.steps)):
        action, objects = resolve(dom.problem, dom.steps[j])
        for part in ground_preconditions(dom.problem, action, objects):
            for atom in conjuncts(part):
                if atom.is_fluent_exp():
                    out.append((j, atom))
    return out


def perturb(dom: Domain, rng: random.Random, kind: str, at: int) -> tuple[Any, str, dict] | None:
    """The state before step ``at`` changed by one ``kind`` change, its text and the change
    (fluent expression -> new value)."""
    from bt_raider.planners.pddl import fact_text

    problem, state = dom.problem, dom.states[at]
    em = problem.environment.expression_manager
    true, false = _facts(problem, state)
    if kind == "added":
        if not false:
            return None
        fe = rng.choice(false)
        change = {fe: em.Bool(True)}
        return state.make_child(change), f"+{fact_text(fe)}", change
    held = {str(fe) for fe in true}  # no static facts: no action changes them, nor the world
    needed = [(j, a) for j, a in _needed(dom, at + 1) if str(a) in held]
    if not needed:
        return None
    _, atom = rng.choice(needed)
    if kind == "deleted":
        change = {atom: em.Bool(False)}
        return state.make_child(change), f"-{fact_text(atom)}", change
    # moved: one argument swapped for another object of its type
    slots = [i for i, a in enumerate(atom.args) if a.is_object_exp()]
    rng.shuffle(slots)
    for i in slots:
        obj = atom.args[i].object()
        others = [o for o in problem.objects(obj.type) if o != obj]
        if not others:
            continue
        args = list(atom.args)
        args[i] = em.ObjectExp(rng.choice(others))
        new = atom.fluent()(*args)
        change = {atom: em.Bool(False), new: em.Bool(True)}
        return state.make_child(change), f"{fact_text(atom)}->{fact_text(new)}", change
    return None


def run_trial(dom: Domain, trial: Trial, state: Any, depth: int | None) -> Trial:
    """Run the plan from step ``trial.at`` in ``state``; look ahead at every step.

    One :class:`~bt_raider.planners.lookahead.PddlForecaster` on the world per trial, as a
    ``LookAhead`` holds one: each call reads the world's state then.
    """
    from bt_raider.planners.lookahead import PddlForecaster
    from bt_raider.planners.world import PddlWorld

    world = PddlWorld(dom.problem, state=state)
    forecaster = PddlForecaster(world, dom.steps)
    for i in range(trial.at, len(dom.steps)):
        if trial.seen_at is None:
            t0 = time.perf_counter()
            fc = forecaster.forecast(i, depth)
            trial.ms.append((time.perf_counter() - t0) * 1000)
            if fc is not None:
                trial.seen_at, trial.said, trial.failed = i, int(fc.step), tuple(fc.failed)
                trial.extra["category"] = fc.category
        step = dom.steps[i]
        if not world.report(step).applicable:  # as execute() decides
            trial.fails = i
            break
        world.execute(step.name, step.args)
    return trial


def trials(dom: Domain, seed: int, count: int) -> list[tuple[Trial, Any]]:
    """A control run and ``count`` perturbed trials (fixed by ``seed`` and the domain)."""
    rng = random.Random(f"{seed}:{dom.name}")
    n = len(dom.steps)
    out = [(Trial(dom.name, "none", "", 0, n), dom.states[0])]
    tries = 0
    while len(out) <= count and tries < 20 * count and n >= 2:
        tries += 1
        kind = KINDS[len(out) % len(KINDS)]
        at = rng.randrange(0, n - 1)
        made = perturb(dom, rng, kind, at)
        if made is not None:
            trial = Trial(dom.name, kind, made[1], at, n)
            trial.extra["change"] = made[2]
            out.append((trial, made[0]))
    return out


def run_plan(
    dom: Domain, trial: Trial, look: bool, verify: bool, timeout: float, depth: int | None = None
) -> dict:
    """The plan as a tree of guarded steps in a PddlWorld, the trial's change made after
    ``trial.at`` actions; look-ahead (policy ``replan``) and verified recovery on or off."""
    from py_trees.common import Status

    from bt_raider.errors import ActionFailed
    from bt_raider.planners.lookahead import PddlForecaster
    from bt_raider.planners.pddl_recovery import PddlRecoveryPlanner, vocabulary
    from bt_raider.planners.preconditions import PddlChecker
    from bt_raider.planners.replan import Replanner
    from bt_raider.planners.tree import plan_to_tree, raider_guards, robot_actions
    from bt_raider.planners.world import PddlWorld
    from bt_raider.recovery.pipeline import Recovery
    from bt_raider.robot.actions import SyncRobot
    from bt_raider.robot.human import ScriptedHuman
    from bt_raider.runtime.lookahead import LookAhead
    from bt_raider.testing import run_tree

    world = PddlWorld(dom.problem)
    count = {"acts": 0, "refused": 0}
    execute = world.execute

    def change() -> None:
        with world.preconditions.lock:
            world.state = world.state.make_child(trial.extra["change"])

    def counted(action: str, args: Any) -> str:  # the world changes after trial.at actions
        try:
            out = execute(action, args)
        except ActionFailed:
            count["refused"] += 1
            raise
        count["acts"] += 1
        if count["acts"] == trial.at:
            change()
        return out

    world.execute = counted  # type: ignore[method-assign]
    if trial.at == 0:
        change()
    robot = SyncRobot(world)
    actions = robot_actions(robot)
    recovery = Recovery(
        PddlRecoveryPlanner(world),
        robot,
        ScriptedHuman([]),
        vocabulary=vocabulary(dom.problem),
        verify=verify,
    )
    guard = raider_guards(PddlChecker(world), scene=None, recovery=recovery, preconditions=world)
    root: Any = plan_to_tree(dom.steps, actions, guard=guard)
    if look:
        root = LookAhead(
            root,
            PddlForecaster(world, dom.steps),
            policy="replan",
            replanner=Replanner(world, actions, guard=guard),
            depth=depth,
        )
    try:
        result = run_tree(root, timeout=timeout, period=0.002)
    except Exception as exc:  # a crash of the run is counted, and the benchmark goes on
        return {"done": False, "error": f"{type(exc).__name__}: {exc}", "refused": 0}
    done = result.status is Status.SUCCESS and world.goal_reached()
    return {
        "error": None,
        "done": done,
        "acts": count["acts"],
        "refused": count["refused"],
        "extra": count["acts"] - len(dom.steps),
        "wasted": wasted(done, count["acts"], trial.at, len(dom.steps), count["refused"]),
        "ticks": len(result.ticks),
        "s": result.elapsed_s,
        "refuted": recovery.refuted,
        "replans": getattr(root, "replans", 0),
        "feedback": root.feedback_message,
    }


def wasted(done: bool, acts: int, at: int, n: int, refused: int) -> int:
    """Robot actions that served nothing: those after the change in a run that does not reach
    the goal, those beyond the plan's own in one that does, and every refused action."""
    return (max(0, acts - n) if done else max(0, acts - at)) + refused
