"""The user's tree, as a user writes it, for the explorer's default episodes.

Plain py_trees behaviours with the user's own vocabulary (:class:`UserAction`: ``GoTo``,
``Grab``, ``Put``, ``Give``, ``Open``), each keeping its own target and taking what a guard
resolved through ``retarget``; a compound instruction's child is a :class:`Steps` sequence
that hands each step its part of the resolution. :func:`default_tree` puts a
:class:`~bt_raider.runtime.guards.RaiderGuard` around each, alone, in a sequence or in a
parallel (several guards alive at once).

:class:`ScriptedPlanner` writes recovery code the way a language model does: it asks into a
variable called ``choice``, says something, then acts on ``choice``; for anything but an
ambiguity it defers to the symbolic planner.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionState
from bt_raider.runtime.guards import RaiderGuard, _accepts_cancel
from bt_raider.testing.explore_people import describe
from bt_raider.testing.explore_world import (
    BOWL,
    DECOYS,
    HOSTILE,
    USER,
    Case,
    Group,
    Truth,
)

#: ``on_release(kind, verb, args)``: a guard released the node for ``kind`` with ``args``.
Release = Callable[[str, str, list[Any]], None]
#: ``on_verdict(kind, query, category)``: a guard's checker judged ``query``.
Judged = Callable[[str, str, str], None]


@dataclass
class TreeSpec:
    """What a tree factory gets for one episode.

    Attributes:
        case: the episode's case.
        truth: the generator's truth (each group's instruction is ``truth.groups[i].query``).
        robot: the robot to act on (the recording proxy; ``robot.view(kind)`` tags calls).
        person: the person who answers.
        recovery: a fresh :class:`~bt_raider.recovery.pipeline.Recovery` in the robot's words.
        on_release: tell the oracle what a guard released a node with (``(kind, verb,
            args)``; P12); a user's tree may call it from its nodes.
        on_verdict: tell the oracle a check's verdict (``(kind, query, category)``; P13).
    """

    case: Case
    truth: Truth
    robot: Any
    person: Any
    recovery: Recovery
    on_release: Release | None = None
    on_verdict: Judged | None = None


class UserAction(py_trees.behaviour.Behaviour):
    """A user's action node: ``robot.start(name, args)``, then poll until it ends.

    Args:
        name: the user's action name (``Grab``).
        verb: the RAIDER verb it performs (``pick``), to find its part of a resolution.
        args: its own arguments (what it acts on when nothing is resolved).
        robot: the user's robot.
    """

    def __init__(
        self,
        name: str,
        verb: str,
        args: list[str],
        robot: Any,
        *,
        release: Callable[[str, list[Any]], None] | None = None,
        key: str | None = None,
    ) -> None:
        super().__init__(f"{name} {' '.join(args)}")
        self.action, self.verb, self.args, self.robot = name, verb, list(args), robot
        self.resolved: Any = None
        self.handle: Any = None
        self.release = release
        self.key = key

    def retarget(self, resolved: Any) -> None:
        """Take what a guard resolved (None: back to its own arguments)."""
        self.resolved = resolved
        if resolved is not None and self.release is not None and self.key is None:
            self.release(self.verb, [str(a) for a in getattr(resolved, "args", ())])

    def initialise(self) -> None:
        """Start the action on the robot (a refusal is this node's FAILURE)."""
        args = list(self.args)
        if self.key is not None:
            # A user who reads the guard's resolution off the blackboard, by the guard's key.
            try:
                found = py_trees.blackboard.Blackboard.get(self.key)
            except KeyError:
                found = None
            args_read = list(found.get("args") or []) if isinstance(found, dict) else []
            if args_read:
                args = [str(args_read[0]), *args[1:]]  # the object; a destination stays
                if self.release is not None:
                    self.release(self.verb, args)
        if self.resolved is not None and list(getattr(self.resolved, "args", ())):
            args = [str(a) for a in self.resolved.args][: max(len(args), 1)]
        self.handle = None
        self.feedback_message = f"{self.action}({', '.join(args)})"
        try:
            self.handle = self.robot.start(self.action, args)
        except Exception as exc:  # a user's node reports its robot's refusal as FAILURE
            self.feedback_message = f"{self.action} refused: {exc}"

    def update(self) -> Status:
        """Poll the robot."""
        if self.handle is None:
            return Status.FAILURE
        progress = self.robot.poll(self.handle)
        if progress.state is ActionState.RUNNING:
            return Status.RUNNING
        self.feedback_message = progress.message or self.feedback_message
        return Status.SUCCESS if progress.state is ActionState.SUCCEEDED else Status.FAILURE

    def terminate(self, new_status: Status) -> None:
        """Cancel a running action when the tree moves on."""
        if new_status is Status.INVALID and self.handle is not None:
            self.robot.cancel(self.handle)


class Steps(py_trees.composites.Sequence):
    """A user's sequence for a compound instruction: each step gets its part of a resolution.

    A resolution with ``steps`` gives step *i* the *i*-th; one without gives each step the
    resolution whose action is its own verb, else nothing (the step keeps its own target).
    """

    def __init__(self, name: str, children: list[UserAction]) -> None:
        super().__init__(name, memory=True, children=list(children))
        self.steps = list(children)

    def retarget(self, resolved: Any) -> None:
        """Hand the resolution on, step by step."""
        parts = list(getattr(resolved, "steps", None) or []) if resolved is not None else []
        for i, step in enumerate(self.steps):
            if resolved is None:
                step.retarget(None)
            elif len(parts) == len(self.steps):
                step.retarget(parts[i])
            elif getattr(resolved, "action", None) == step.verb or i == 0:
                step.retarget(resolved)
            else:
                step.retarget(None)


class HostilePlanner:
    """Recovery code that must never get through: it changes what the action acts on.

    ``swap_type`` picks an object of another type (a knife for the cup); ``swap_excluded``
    picks an object of the kind the words do not designate (the one they exclude);
    ``full_hand`` picks knives until the hand is full, then the target. Actions of other
    guards, and what these plans cannot be written for, go to the symbolic planner.

    Args:
        kind: ``swap_type``, ``swap_excluded`` or ``full_hand``.
        truth: the groups (which object the words leave out).
        words: RAIDER verb -> the robot's name.
        arms: how many things the robot can hold.
    """

    def __init__(self, kind: str, truth: Truth, words: dict[str, str], arms: int = 1) -> None:
        self.kind, self.truth, self.words, self.arms = kind, truth, words, arms
        self.fallback = SymbolicRecoveryPlanner()

    def propose(self, request: Any, *, cancel: threading.Event | None = None) -> str:
        """The hostile plan for the first guard's pick, else the symbolic planner's."""
        first = self.truth.groups[0]
        text = str(request.action).lower()
        if first.action != "pick" or first.kind.lower() not in text:
            return str(self.fallback.propose(request, cancel=cancel))
        grab = self.words.get("pick", "pick")
        allowed = first.allowed or frozenset()
        if self.kind == "swap_type":
            return f"{grab}({DECOYS[0]!r})"
        if self.kind == "swap_excluded":
            others = [i for i in first.ids if i not in allowed and i != first.target]
            return f"{grab}({(others or [first.target])[0]!r})"
        target = next(iter(sorted(allowed)), first.target)
        robot = getattr(getattr(request, "scene", None), "robot", None)
        arms = int(robot.get("arms", self.arms)) if isinstance(robot, dict) else self.arms
        picks = [f"{grab}({d!r})" for d in DECOYS[: max(1, arms)]]
        go = self.words.get("move_to", "move_to")
        # A remark last, so the target's pick runs in the plan itself, with the hand full.
        done = "say('Here it is.')"
        return "\n".join([*picks, f"{go}({target!r})", f"{grab}({target!r})", done])


class Recorded:
    """A checker whose every verdict is told to the oracle (``on_verdict(kind, query,
    category)``), then returned as it is.

    Args:
        checker: the guard's checker.
        kind: the kind its guard's node works on.
        on_verdict: the oracle's ear.
    """

    def __init__(self, checker: Any, kind: str, on_verdict: Judged) -> None:
        self.checker, self.kind, self.on_verdict = checker, kind, on_verdict

    def check(self, scene: Any, query: Any, *, cancel: threading.Event | None = None) -> Any:
        """The checker's verdict, told to the oracle."""
        if _accepts_cancel(self.checker.check):
            verdict = self.checker.check(scene, query, cancel=cancel)
        else:
            verdict = self.checker.check(scene, query)
        text = getattr(query, "text", query)
        category = getattr(getattr(verdict, "category", None), "value", "")
        self.on_verdict(self.kind, str(text), str(category))
        return verdict


class ScriptedPlanner:
    """Recovery code as a language model writes it: ``choice = ask(...)``, a remark, the act.

    Args:
        truth: the groups, to describe the candidates in a person's words.
        words: RAIDER verb -> the robot's name.
    """

    def __init__(self, truth: Truth, words: dict[str, str]) -> None:
        self.truth, self.words = truth, words
        self.fallback = SymbolicRecoveryPlanner()

    def propose(self, request: Any, *, cancel: threading.Event | None = None) -> str:
        """An ambiguity's code in a model's style; anything else: the symbolic planner's."""
        category = getattr(request.verdict.category, "value", "")
        group = self._group(str(request.action))
        if category != "ambiguity" or group is None or group.action != "pick":
            return str(self.fallback.propose(request, cancel=cancel))
        options = [describe(group, i) or f"the {group.kind.lower()}" for i in range(len(group.ids))]
        noun = group.kind.lower()
        question = (
            f"Which {noun} do you mean: {' or '.join(o.replace('one', noun) for o in options)}?"
        )
        grab = self.words.get("pick", "pick")
        return "\n".join(
            [f"choice = ask({question!r})", "say('Thank you, one moment.')", f"{grab}(choice)"]
        )

    def _group(self, action: str) -> Group | None:
        text = action.lower()
        for group in self.truth.groups:
            if group.kind.lower() in text:
                return group
        return None


def _child(
    group: Group, case: Case, robot: Any, words: dict[str, str], release: Any = None
) -> py_trees.behaviour.Behaviour:
    view = robot.view(group.kind) if hasattr(robot, "view") else robot
    name = {
        verb: words.get(verb, verb) for verb in ("pick", "place", "move_to", "open", "handover")
    }
    act = functools.partial(UserAction, robot=view, release=release)
    if case.form == "appliance" and group is not None and group.action == "open":
        return act(name["open"], "open", ["Microwave"])
    if group.action == "approach":
        return act(name["move_to"], "approach", [group.place or group.kind])
    if group.action == "handover":
        return act(name["handover"], "handover", [group.kind, USER])
    grab = act(name["pick"], "pick", [group.kind])
    into = case.form == "said" and case.said is not None and case.said.into is not None
    if (case.form == "compound" and group.query.endswith("in the bowl")) or (
        into and group.kind == case.kind
    ):  # the first guard's
        put = act(name["place"], "place", [group.kind, BOWL])
        return Steps(f"{group.kind} to the bowl", [grab, put])
    return grab


def colliding(case: Case) -> bool:
    """Whether the case's two guards have names that collide (:data:`NAMES`)."""
    return case.names != "distinct" and case.tree != "single"


def guard_name(case: Case, group: Group, index: int) -> str:
    """A guard's display name: its instruction, or names that collide (``case.names``)."""
    first = case.kind.lower()
    if case.names == "same" and case.tree != "single":
        return "fetch"
    if case.names == "dotted" and case.tree != "single":
        return f"fetch/{first}" if index == 0 else f"fetch.{first}"
    return f"check {group.query}"


#: What each scripted model of :data:`~bt_raider.testing.explore_world.MODELS` always writes.
MODEL_REPLIES = {
    "clears": '{"final_response": "none", "category": "none", "explanation": "It can be done."}',
    "alarms": (
        '{"final_response": "unfeasibility", "category": "out_of_reach", '
        '"explanation": "It is too far away."}'
    ),
    "made_up": 'call_tool{"tool": "robot_holding", "args": []}\n'
    '{"final_response": "none", "category": "none", "explanation": "The hand is free."}',
    "prose": "The robot can do that.",
}


class SaysAlways:
    """A chat model written for the explorer: the same reply on every turn (plain text, which
    the agent takes from any model)."""

    native_tools = False

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def complete(
        self, messages: list[dict[str, Any]], *, tools: Any = None, timeout: float | None = None
    ) -> str:
        """The reply, whatever was said."""
        return self.reply


def checker_for(model: str) -> Any:
    """The guards' checker for a case's ``model``: the reasoner, or a model under the hybrid."""
    if model == "absent":
        return SymbolicReasoner()
    from bt_raider.checking.agent import RaiderAgent
    from bt_raider.checking.hybrid import HybridChecker

    # Any: ChatModel's complete() returns a ChatReply, which lives in bt_raider.llm (a floor
    # this one may not import); the agent reads plain text from a lenient model as well.
    chat: Any = SaysAlways(MODEL_REPLIES[model])
    return HybridChecker(RaiderAgent(chat, time_limit=5.0, max_turns=3))


def default_tree(spec: TreeSpec) -> py_trees.behaviour.Behaviour:
    """The user's tree for ``spec``: one guard per group, alone, in a sequence or a parallel."""
    guards: list[py_trees.behaviour.Behaviour] = []
    later: list[py_trees.behaviour.Behaviour | None] = []
    for index, group in enumerate(spec.truth.groups):
        hear = spec.on_release
        release = None if hear is None else functools.partial(hear, group.kind)
        child = _child(group, spec.case, spec.robot, spec.truth.words, release)
        checker = checker_for(spec.case.model)
        if spec.on_verdict is not None:
            checker = Recorded(checker, group.kind, spec.on_verdict)
        guard = RaiderGuard(
            child,
            group.query,
            checker,
            scene=spec.robot.observe,
            recovery=spec.recovery,
            name=guard_name(spec.case, group, index),
            deadline=10.0,
        )
        guards.append(guard)
        said = spec.case.said if spec.case.form == "said" else None
        if colliding(spec.case) and said and said.into and group.kind == spec.case.kind:
            later.append(None)  # a compound that says which bowl has put it there already
        elif colliding(spec.case):
            # Names that collide: a later, unguarded node of the branch puts the object in the
            # bowl, reading what its guard resolved off the blackboard by the guard's key, as
            # a user wiring nodes by keys does.
            view = spec.robot.view(group.kind)
            put = spec.truth.words.get("place", "place")
            node = UserAction(put, "place", [group.kind, BOWL], view, release=release)
            node.key = str(guard.resolved_key)
            later.append(node)
    if len(guards) == 1:
        return guards[0]
    if spec.case.tree == "parallel":
        branches = guards
        if any(later):
            branches = [
                py_trees.composites.Sequence(
                    f"branch {i}", memory=True, children=[g] if p is None else [g, p]
                )
                for i, (g, p) in enumerate(zip(guards, later, strict=True))
            ]
        return py_trees.composites.Parallel(
            "both at once",
            policy=py_trees.common.ParallelPolicy.SuccessOnAll(),
            children=branches,
        )
    return py_trees.composites.Sequence(
        "one then the other", memory=True, children=[*guards, *(p for p in later if p)]
    )


def make_recovery(case: Case, truth: Truth, robot: Any, person: Any) -> Recovery:
    """The recovery a user sets up: the case's planner, the robot's own action names."""
    planner: Any = SymbolicRecoveryPlanner()
    if case.planner == "scripted":
        planner = ScriptedPlanner(truth, truth.words)
    elif case.planner in HOSTILE:
        arms = 2 if case.tree != "single" else 1
        planner = HostilePlanner(case.planner, truth, truth.words, arms)
    return Recovery(planner, robot, person, actions=dict(truth.words))


#: ``tree_factory(spec) -> root``: how :func:`~bt_raider.testing.explore.explore` builds trees.
TreeFactory = Callable[[TreeSpec], py_trees.behaviour.Behaviour]

__all__ = [
    "HostilePlanner",
    "Recorded",
    "ScriptedPlanner",
    "guard_name",
    "Steps",
    "TreeFactory",
    "TreeSpec",
    "UserAction",
    "default_tree",
    "make_recovery",
]
