"""Runs of ``foresight.py``: verified recovery on one failure, and whole plans as trees.

:class:`Helper` is the person in the kitchen, cooperative: asked to move what is in the way,
to bring something closer, to open something or to free her hands, she does it in the world
(from the question's words, never from the recovery's internals), and answers a choice with
the first option.
"""

from __future__ import annotations

import random
import re
from typing import Any

import foresight_scenes as fs
from foresight_pddl import Trial, wasted


class Helper:
    """A cooperative person who acts in a SimWorld as asked (see the module docstring)."""

    def __init__(self, world: Any) -> None:
        self.world = world
        self.asked = 0

    def ask(self, question: str) -> str:
        self.asked += 1
        self._act(question)
        options = re.findall(r":\s*(.+)\?\s*$", question)
        if re.match(r"^\s*(which|where should|who should)\b", question, re.I) and options:
            return re.split(r",\s*|\s+or\s+", options[0])[0] + ", please."
        return "Sure, done."

    def say(self, text: str) -> None:
        self._act(text)

    def wait_for(self, event: str) -> bool:
        self._act(event)
        return True

    def _named(self, text: str) -> list[Any]:
        low = text.lower()
        scene = self.world.scene
        out = [o for o in scene.objects if re.search(rf"\b{re.escape(o.name.lower())}\b", low)]
        return out or [
            o
            for o in scene.objects
            if re.search(rf"\b{re.escape(_words(o.type))}\b", low) and o.type != "Floor"
        ]

    def _act(self, text: str) -> None:
        w, low = self.world, text.lower()
        person = fs.MARTA["id"]
        if re.search(r"out of the way|clear the way|move the", low):
            for key in list((w.scene.data.get("blocked") or {}).keys()):
                w.unblock(key)
        elif "closer" in low:
            held = {o.id for o in w.scene.holding}
            for o in self._named(text):
                if o.flag("pickupable") and o.id not in held:
                    ax, _, az = w.scene.agent_position
                    hx, hz = w.scene.heading()
                    w.move_object(o.id, (ax + 0.4 * hx, az + 0.4 * hz))
                    break
        elif re.search(r"\bopen\b", low) and "for me" in low:
            for o in self._named(text):
                if o.flag("openable") and not o.flag("isOpen"):
                    w.set_state(o.id, "isOpen", True)
                    break
        elif re.search(r"free (your )?hands|hands free", low):
            w.set_human(person, hands_free=True, holding=[])
        elif re.search(r"look(ing)? at me", low):
            w.set_human(person, looking_at_robot=True)


def _words(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower()


def _recovery(world: Any, verify: bool, robot: Any = None) -> tuple[Any, Helper]:
    from bt_raider.recovery.pipeline import Recovery
    from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
    from bt_raider.robot.actions import SyncRobot
    from bt_raider.robot.human import CallbackHuman

    helper = Helper(world)
    human = CallbackHuman(helper.ask, helper.say, helper.wait_for)
    robot = robot or SyncRobot(world)
    return Recovery(SymbolicRecoveryPlanner(), robot, human, verify=verify), helper


# ---------------------------------------------------------------------------- verified recovery


def verify_case(trial: Trial, plan: Any, world: Any, checker: Any) -> dict[str, Any]:
    """Plain and verified recovery for the failing step of one trial (``world`` is just
    before it); whether the plain plan works, run in a copy of the world."""
    from bt_raider.errors import RecoveryCodeError
    from bt_raider.recovery.contract import RecoveryRequest
    from bt_raider.recovery.verify import SceneVerifier
    from bt_raider.simulation.simworld import SimWorld

    k = trial.fails
    row: dict[str, Any] = {"where": trial.where, "kind": trial.kind, "change": trial.change}
    row.update(seen=False, started=False, rejected=False, works=None, code="", reason="")
    scene = world.observe()
    verdict = checker.check(scene, plan.queries[k])
    if verdict.ok:
        return row  # the checker does not see what the world refuses: nothing to recover
    row["seen"] = True
    request = RecoveryRequest(
        plan.queries[k], verdict, holding=[o.name for o in scene.holding], scene=scene
    )
    plain, _ = _recovery(SimWorld(scene), verify=False)
    try:
        got = plain.plan(request)
    except RecoveryCodeError:
        return row  # plain recovery starts nothing either
    row["started"], row["code"] = not got.gives_up, got.code
    if got.gives_up:
        return row
    proof = SceneVerifier(checker).verify(got, request)
    row["rejected"], row["reason"] = not proof.ok, proof.reason
    row["waits"] = proof.waits_on_answer
    verified, _ = _recovery(SimWorld(scene), verify=True)
    try:
        instead = verified.plan(request)
        row["instead"] = "same" if instead.code == got.code else instead.code
    except RecoveryCodeError:
        row["instead"] = None  # nothing starts
    row["works"] = _works(got, plan.actions[k], SimWorld(scene))
    return row


def _works(plan: Any, action: tuple[str, list[str]], world: Any) -> bool | None:
    """Run the plan's steps in ``world`` with the helper, then the failed action: ok?"""
    from bt_raider.errors import ActionFailed
    from bt_raider.recovery.safecode import Ref

    helper = Helper(world)
    try:
        for step in plan.run.steps:
            args = [plan.aliases.get(a, a) if isinstance(a, str) else a for a in step.args]
            if step.action == "ask":
                helper.ask(str(args[0]) if args else "")
            elif step.action == "say":
                helper.say(str(args[0]) if args else "")
            elif step.action == "wait_for":
                helper.wait_for(str(args[0]) if args else "")
            elif any(isinstance(a, Ref) for a in args):
                return None  # what it does depends on an answer: not judged here
            else:
                world.execute(step.action, [str(a) for a in args])
        world.execute(action[0], action[1])
    except ActionFailed:
        return False
    return True


# ---------------------------------------------------------------------------- whole plans


def run_plan(
    scene_dict: dict[str, Any],
    plan: Any,
    trial: Trial,
    checker: Any,
    look: bool,
    verify: bool,
    timeout: float,
    depth: int | None = None,
) -> dict[str, Any]:
    """The plan as a tree of guarded actions in SimWorld, the trial's change injected."""
    import py_trees
    from py_trees.common import Status

    from bt_raider.robot.actions import ActionBehaviour, SyncRobot
    from bt_raider.runtime.guards import RaiderGuard
    from bt_raider.runtime.lookahead import LookAhead, SceneForecaster
    from bt_raider.simulation.simworld import SimWorld
    from bt_raider.testing import run_tree

    world = SimWorld(scene_dict)
    robot = SyncRobot(world)
    recovery, helper = _recovery(world, verify, robot)
    guards = [
        RaiderGuard(
            ActionBehaviour(action, args, robot),
            query,
            checker,
            scene=robot.observe,
            recovery=recovery,
            name=f"step {i + 1} {query}",
        )
        for i, (query, (action, args)) in enumerate(zip(plan.queries, plan.actions, strict=True))
    ]
    root: Any = py_trees.composites.Sequence(name=plan.name, memory=True, children=guards)
    if look:
        forecaster = SceneForecaster(plan.queries, robot.observe, checker)
        root = LookAhead(root, forecaster, policy="recover", depth=depth)
    rng = random.Random()
    rng.setstate(trial.extra["rng"])
    world.schedule(
        lambda w: fs.change(w, plan, trial.kind, trial.at, rng),
        after_actions=trial.at,
        label=trial.change,
    )
    try:
        result = run_tree(root, world=world, timeout=timeout, period=0.002)
    except Exception as exc:  # a crash of the run is counted, and the benchmark goes on
        return {"done": False, "error": f"{type(exc).__name__}: {exc}", "refused": 0}
    acts = len(world.executed)
    done = result.status is Status.SUCCESS
    refused = len(world.failures)
    return {
        "error": None,
        "done": done,
        "acts": acts,
        "refused": refused,
        "extra": acts - len(plan.actions),
        "wasted": wasted(done, acts, trial.at, len(plan.actions), refused),
        "ticks": len(result.ticks),
        "s": result.elapsed_s,
        "asked": helper.asked,
        "refuted": recovery.refuted,
        "feedback": root.feedback_message,
    }
