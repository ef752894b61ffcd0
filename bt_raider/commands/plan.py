"""``bt-raider plan DOMAIN PROBLEM``: solve a PDDL problem, show the plan and its tree, run it.

With ``--run`` the tree runs in a simulated :class:`~bt_raider.planners.world.PddlWorld` until
it succeeds or fails; each step and the outcome are printed. ``--timeout`` bounds the search
whatever the engine (it runs in a child process that is stopped then); a search that takes more
than a few seconds says so on stderr every few seconds. Exit status: 0 when the plan was found
(and, with ``--run``, the goal was reached), 1 when a run ends short of the goal, 2 with a
one-line message for bad input (unreadable or invalid PDDL, no engine for the problem) and when
no plan is found (unsolvable, or none within ``--timeout``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import cast

import py_trees

from bt_raider.commands import HELP
from bt_raider.errors import need
from bt_raider.robot.actions import Executor, SyncRobot

ENGINE_CHOICES = ("auto", "fast-downward", "pyperplan")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def _progress(engine: str, seconds: float) -> None:
    print(f"planning with {engine}... {seconds:.0f} s", file=sys.stderr, flush=True)


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], argv: Sequence[str] = ()
) -> None:
    """Add the ``plan`` sub-command to ``sub`` (``argv``: the words after its name)."""
    parser = sub.add_parser(
        "plan",
        help=HELP["plan"],
        description="Solve DOMAIN + PROBLEM with a real planner (unified-planning), print the "
        "plan and the py_trees tree built from it; with --run, execute the tree in a simulated "
        "PDDL world until it succeeds or fails.",
    )
    parser.add_argument("domain", metavar="DOMAIN", help="PDDL domain file")
    parser.add_argument("problem", metavar="PROBLEM", help="PDDL problem file")
    parser.add_argument(
        "--engine",
        choices=ENGINE_CHOICES,
        default="auto",
        help="planning engine (auto: Fast Downward when installed and it supports the problem, "
        "else pyperplan)",
    )
    parser.add_argument(
        "--run", dest="execute", action="store_true", help="run the tree in a simulated world"
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="stop the search after S seconds, whatever the engine (default 60)",
    )
    parser.add_argument(
        "--allow-shared-names",
        action="store_true",
        help="accept PDDL in which a type and an object (or two other elements) share a name",
    )
    parser.add_argument(
        "--max-ticks", type=int, default=None, metavar="N", help="stop a run after N ticks"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``bt-raider plan``: solve the problem and print (or run) the plan."""
    # The planners need the pddl extra: without it, one line naming it (--help still works).
    need("pddl", "bt-raider plan")
    from bt_raider.planners import pddl
    from bt_raider.planners.tree import plan_to_tree, robot_actions

    problem = pddl.load(args.domain, args.problem, allow_shared_names=args.allow_shared_names)
    engine = pddl.choose_engine(problem, args.engine)
    start = time.monotonic()
    plan = pddl.solve(problem, engine, args.timeout, progress=_progress)
    elapsed = time.monotonic() - start
    steps = pddl.plan_steps(plan)
    valid = pddl.validate(problem, plan)
    print(f"problem: {problem.name} (domain {args.domain})")
    print(
        f"engine: {engine}, {len(steps)} steps in {elapsed:.2f} s, valid: {'yes' if valid else 'no'}"
    )
    print("plan:")
    for i, step in enumerate(steps, 1):
        print(f"  {i:>3}. {step.text}")

    # The simulated world reads states with UP's model (networkx): imported to run, not to parse.
    from bt_raider.planners.world import PddlWorld

    world = PddlWorld(problem)
    # cast: a PddlWorld has no scene to observe (observe() gives None, not the Scene an Executor
    # promises); nothing in this plain plan tree observes, it only executes the steps.
    robot = SyncRobot(cast(Executor, world))
    root = plan_to_tree(plan, robot_actions(robot), name=problem.name)
    print("tree:")
    print(py_trees.display.unicode_tree(root))
    if not args.execute:
        return 0

    print("run:")
    tree = py_trees.trees.BehaviourTree(root)
    reported: set[int] = set()
    max_ticks = args.max_ticks if args.max_ticks is not None else 10 * len(steps) + 10
    ticks = 0
    while ticks < max_ticks:
        tree.tick()
        ticks += 1
        for i, child in enumerate(root.children, 1):
            if i in reported or child.status not in (
                py_trees.common.Status.SUCCESS,
                py_trees.common.Status.FAILURE,
            ):
                continue
            reported.add(i)
            note = child.feedback_message
            note = "" if not note or note == f"{child.name} done" else f" - {note}"
            print(f"  [tick {ticks}] {i:>3}. {child.name}: {child.status.name}{note}")
        if root.status in (py_trees.common.Status.SUCCESS, py_trees.common.Status.FAILURE):
            break
    reached = world.goal_reached()
    print(
        f"outcome: {root.status.name} after {ticks} tick(s); goal reached: {'yes' if reached else 'no'}"
    )
    if not reached:
        print(f"unsatisfied goals: {', '.join(world.unsatisfied_goals())}")
    return 0 if reached else 1
