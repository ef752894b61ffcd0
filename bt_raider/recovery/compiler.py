"""The compiler from an accepted recovery program to a py_trees subtree: ask, say and wait_for
become interaction behaviours, every other action an ActionBehaviour of the robot.
"""

from __future__ import annotations

import py_trees

from bt_raider.recovery.safecode import Arg, Program, Ref
from bt_raider.runtime.actions import ActionBehaviour, Robot, Var
from bt_raider.runtime.human import AskBehaviour, HumanInterface, SayBehaviour, WaitFor


def compile_program(
    program: Program,
    robot: Robot,
    human: HumanInterface,
    *,
    name: str = "Recovery",
) -> py_trees.composites.Sequence:
    """Turn an accepted program into a ``Sequence(memory=True)`` of behaviours.

    ``x = ask(q)`` becomes an :class:`~bt_raider.runtime.human.AskBehaviour` writing the answer to
    ``/bt_raider/vars/x``; ``say`` a :class:`~bt_raider.runtime.human.SayBehaviour`; ``wait_for`` a
    :class:`~bt_raider.runtime.human.WaitFor`; every other action an
    :class:`~bt_raider.runtime.actions.ActionBehaviour` whose :class:`~bt_raider.runtime.actions.Var`
    arguments are read from the blackboard when it starts.
    """

    def value(arg: Arg):
        return Var(arg.name) if isinstance(arg, Ref) else arg

    root = py_trees.composites.Sequence(name=name, memory=True)
    for step in program.steps:
        label = f"{step.to_code()[:70]}"
        args = [value(a) for a in step.args]
        if step.action == "ask":
            node: py_trees.behaviour.Behaviour = AskBehaviour(
                args[0], human, var=step.target, name=label
            )
        elif step.action == "say":
            node = SayBehaviour(args[0], human, name=label)
        elif step.action == "wait_for":
            node = WaitFor(args[0], human, name=label)
        else:
            node = ActionBehaviour(step.action, args, robot, name=label)
        root.add_child(node)
    return root
