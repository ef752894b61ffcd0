"""``bt-raider plan DOMAIN PROBLEM``: solve a PDDL problem, show the plan and its tree, run it.

With ``--run`` the tree runs in a simulated :class:`~bt_raider.planners.world.PddlWorld` until
it succeeds or fails; each step and the outcome are printed. ``--timeout`` bounds the command's
planning whatever the engine and the problem's size: reading the PDDL, grounding, searching
and validating run in a child process that is stopped then, under its memory cap (a run then
reads the problem here to simulate it). The interpreter's start-up counts against
``--timeout`` too. Planning that takes more than a second says what it does on stderr
("planning: grounding... 1 s"), then every few seconds. Exit status: 0 when the plan was found
(and, with ``--run``, the goal was reached), 1 when a run ends short of the goal, 2 with a
one-line message for bad input (unreadable or invalid PDDL, no engine for the problem) and when
no plan is found (unsolvable, or none within ``--timeout``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, cast

import py_trees

from bt_raider.commands import HELP
from bt_raider.errors import PlanningError, installed, need
from bt_raider.files import MAX_PDDL_BYTES, byte_count
from bt_raider.robot.actions import Executor, SyncRobot

ENGINE_CHOICES = ("auto", "fast-downward", "pyperplan")


#: The longest --timeout (a week): beyond it a limit is no limit (``inf``, ``1e308``).
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    if not value <= MAX_TIMEOUT_S:  # inf, 1e308: no limit at all, which --timeout never means
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_TIMEOUT_S:g} seconds (a week), got {text!r}"
        )
    return value


def _ticks(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of ticks, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 tick, got {text!r}")
    return value


def _byte_count(text: str) -> int:
    try:
        return byte_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: Seconds of --timeout kept for stopping the planner and exiting.
EXIT_MARGIN = 0.2


def _started_ago() -> float:
    """Seconds since this process started, when it was started as ``bt-raider plan`` (its
    interpreter's start-up counts against --timeout); 0 when ``main()`` is called from a
    longer-lived program, or where ``/proc`` does not say."""
    if sys.argv[1:2] != ["plan"]:
        return 0.0
    try:
        with open("/proc/self/stat", "rb") as stat:
            # "pid (comm) state ...": starttime, field 22, is the 20th after the comm.
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as uptime:
            now = float(uptime.read().split()[0])
        return max(0.0, now - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def _progress(what: str, seconds: float) -> None:
    print(f"planning: {what}... {seconds:.0f} s", file=sys.stderr, flush=True)


class _NotRun:
    """The executor of a tree built to be shown: running it is a defined failure."""

    def execute(self, action: str, args: Sequence[Any]) -> Any:
        raise PlanningError(
            f"cannot run {action}: this tree was built to be shown (bt-raider plan --run runs it)"
        )

    def observe(self) -> None:
        return None


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
        "--max-ticks", type=_ticks, default=None, metavar="N", help="stop a run after N ticks"
    )
    parser.add_argument(
        "--max-bytes",
        type=_byte_count,
        default=MAX_PDDL_BYTES,
        metavar="N",
        help=f"refuse a PDDL file larger than N bytes (default {MAX_PDDL_BYTES // 2**20}M; "
        "suffixes K, M, G)",
    )
    parser.set_defaults(run=run)
    _prepare(argv)


def _prepare(argv: Sequence[str]) -> None:
    """Start the planner's child now, importing its engine while this process reads the
    command line and the files, so a first plan does not wait for both in turn."""
    words = [w for w in argv if not w.startswith("-")]
    if len(words) < 2 or {"-h", "--help"} & set(argv):
        return
    if not installed("unified_planning"):
        return  # run() says which extra is missing, in the command's own words
    from bt_raider.planners import engines

    found = engines.installed_engines()
    engine = "auto"
    for i, word in enumerate(argv):
        if word == "--engine" and i + 1 < len(argv):
            engine = argv[i + 1]
        elif word.startswith("--engine="):
            engine = word.split("=", 1)[1]
    if engine == "auto" and found:
        engine = found[0]
    limit = engines.address_limit()
    if engine in found and (limit is None or limit >= engines.MIN_MEMORY):
        engines.prepare(engine)


def run(args: argparse.Namespace) -> int:
    """Run ``bt-raider plan``: solve the problem and print (or run) the plan."""
    # The planners need the pddl extra: without it, one line naming it (--help still works).
    need("pddl", "bt-raider plan")
    from bt_raider.planners import pddl
    from bt_raider.planners.tree import plan_to_tree, robot_actions

    # Reading, grounding, searching and validating all run in the planner's child process:
    # --timeout bounds them (and the memory cap covers them), whatever the problem's size.
    found = pddl.plan_paths(
        args.domain,
        args.problem,
        args.engine,
        args.timeout,
        progress=_progress,
        allow_shared_names=args.allow_shared_names,
        validate=True,
        max_bytes=args.max_bytes,
        spent=_started_ago() + EXIT_MARGIN,
    )
    steps = found.steps
    print(f"problem: {found.problem} (domain {args.domain})")
    print(
        f"engine: {found.engine}, {len(steps)} steps in {found.seconds:.2f} s, "
        f"valid: {'unknown' if found.valid is None else 'yes' if found.valid else 'no'}"
    )
    print("plan:")
    for i, step in enumerate(steps, 1):
        print(f"  {i:>3}. {step.text}")

    # Only a run reads the problem here: the simulated world keeps its state in UP's model.
    if args.execute:
        from bt_raider.planners.world import PddlWorld

        problem = pddl.load(
            args.domain,
            args.problem,
            allow_shared_names=args.allow_shared_names,
            max_bytes=args.max_bytes,
        )
        world: PddlWorld | None = PddlWorld(problem)
        executor = cast(Executor, world)
    else:
        world, executor = None, cast(Executor, _NotRun())
    # cast: a PddlWorld has no scene to observe (observe() gives None, not the Scene an Executor
    # promises); nothing in this plain plan tree observes, it only executes the steps.
    root = plan_to_tree(steps, robot_actions(SyncRobot(executor)), name=found.problem)
    print("tree:")
    print(py_trees.display.unicode_tree(root))
    if world is None:
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
