"""The compiler from an accepted recovery program to a py_trees subtree: ask, say and wait_for
become interaction behaviours, every other action an ActionBehaviour of the robot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import py_trees

from bt_raider.recovery.answers import read_request_reply
from bt_raider.recovery.safecode import INTERACTION_ACTIONS, Arg, Program, Ref
from bt_raider.robot.actions import ActionBehaviour, Robot, Var
from bt_raider.robot.human import (
    AskBehaviour,
    GroundedAsk,
    HumanInterface,
    SayBehaviour,
    WaitFor,
)


def compile_program(
    program: Program,
    robot: Robot,
    human: HumanInterface,
    *,
    name: str = "Recovery",
    answers: Mapping[str, Callable[[str], Any]] | None = None,
    aliases: Mapping[str, str] | None = None,
    because: str = "",
    max_asks: int = 3,
    scope: str = "",
) -> py_trees.composites.Sequence:
    """Turn an accepted program into a ``Sequence(memory=True)`` of behaviours.

    ``x = ask(q)`` becomes a :class:`~bt_raider.robot.human.GroundedAsk` when ``answers`` has a
    reader for ``x`` (the reply must ground to one candidate; ``because`` answers "why?"), and
    also — failing closed — when a robot action uses ``x`` but there is no reader; otherwise an
    :class:`~bt_raider.robot.human.AskBehaviour` writing the answer to
    ``/bt_raider/vars/<scope>/x`` (:func:`~bt_raider.robot.actions.vars_key`; every variable
    of the program, written and read, lives in ``scope``: a guard gives each recovery run its
    own, so two recoveries alive at once never read each other's answers).
    ``say`` becomes a :class:`~bt_raider.robot.human.SayBehaviour`; ``wait_for`` a
    :class:`~bt_raider.robot.human.WaitFor`; every other action an
    :class:`~bt_raider.robot.actions.ActionBehaviour` whose :class:`~bt_raider.robot.actions.Var`
    arguments are read from the blackboard when it starts and whose names become what the
    robot receives through ``aliases`` (display name -> objectId).
    """
    answers = dict(answers or {})
    used_by_robot = {
        a.name
        for step in program.steps
        if step.action not in INTERACTION_ACTIONS
        for a in step.args
        if isinstance(a, Ref)
    }

    # Any: ask/say/wait_for take their argument as the code gives it (the parser checks only
    # how many there are), a robot action any of them.
    def value(arg: Arg) -> Any:
        return Var(arg.name, scope) if isinstance(arg, Ref) else arg

    root = py_trees.composites.Sequence(name=name, memory=True)
    for step in program.steps:
        label = f"{step.to_code()[:70]}"
        args = [value(a) for a in step.args]
        if step.action == "ask":
            if step.target is not None and (step.target in answers or step.target in used_by_robot):
                node: py_trees.behaviour.Behaviour = GroundedAsk(
                    args[0],
                    human,
                    var=step.target,
                    read=answers.get(step.target),
                    because=because,
                    max_asks=max_asks,
                    name=label,
                    scope=scope,
                )
            elif step.target is None:
                # A request ("could you move the chair?"): a refusal ends the recovery at once.
                node = GroundedAsk(
                    args[0],
                    human,
                    read=read_request_reply,
                    because=because,
                    max_asks=max_asks,
                    name=label,
                )
            else:
                node = AskBehaviour(args[0], human, var=step.target, name=label, scope=scope)
        elif step.action == "say":
            node = SayBehaviour(args[0], human, name=label)
        elif step.action == "wait_for":
            node = WaitFor(args[0], human, name=label)
        else:
            node = ActionBehaviour(step.action, args, robot, name=label, aliases=aliases)
        root.add_child(node)
    return root
