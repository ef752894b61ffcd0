"""``bt-raider demo cooperative-table``: robots set a table together with REVECA validation.

Prints every decision, action and message of one seeded episode, then what it cost: steps,
distance walked, false plans (attempts at a sub-goal a collaborator had already taken),
messages and characters sent.
"""

from __future__ import annotations

import argparse

from bt_raider.errors import BtRaiderError
from bt_raider.examples.cooperative_table.episode import Episode
from bt_raider.examples.cooperative_table.policies import POLICIES
from bt_raider.simulation.multirobot import GOALS, ROBOT_NAMES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the demo's options to ``bt-raider demo cooperative-table``'s parser."""
    parser.add_argument("--seed", type=int, default=0, help="episode seed (default 0)")
    parser.add_argument("--robots", type=int, default=2, help="how many robots (default 2)")
    parser.add_argument("--noisy", action="store_true", help="add dummy objects (Noisy-C-WAH)")
    parser.add_argument(
        "--dummies", type=int, default=20, help="dummy objects with --noisy (default 20)"
    )
    parser.add_argument(
        "--policy",
        default="reveca",
        choices=sorted(POLICIES),
        help="which parts of REVECA the robots use (default reveca)",
    )
    parser.add_argument(
        "--goal",
        default=None,
        help="goal template: afternoon-tea or dinner-table (default: by seed)",
    )
    parser.add_argument("--horizon", type=int, default=250, help="step limit (default 250)")
    parser.add_argument("--quiet", action="store_true", help="print the summary only")
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        metavar="N",
        help="run N robot processes (+ a world process) that talk only over Zenoh on 127.0.0.1",
    )
    parser.add_argument(
        "--join-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="with --processes: seconds every robot has to join; past it the run stops and "
        "names the robot(s) missing (default 60)",
    )
    parser.add_argument(
        "--unsigned",
        action="store_true",
        help="with --processes: robots do not sign their messages (by default each signs with "
        "its own key and drops what the team's keyring does not verify)",
    )


def run(args: argparse.Namespace) -> int:
    """Run one episode (in this process, or one process per robot with ``--processes``)."""
    if args.processes:
        # One process per robot needs the zenoh extra: imported only when asked for.
        from bt_raider.examples.cooperative_table.processes import run_demo

        return run_demo(args)
    if not 2 <= args.robots <= len(ROBOT_NAMES):
        raise BtRaiderError(f"--robots must be 2..{len(ROBOT_NAMES)}, got {args.robots}")
    if args.goal is not None and args.goal not in GOALS:
        raise BtRaiderError(f"--goal {args.goal!r} is unknown: expected one of {', '.join(GOALS)}")
    if args.dummies < 0 or args.horizon <= 0:
        raise BtRaiderError("--dummies must be >= 0 and --horizon > 0")

    def log(step: int, robot: str, text: str) -> None:
        if not args.quiet:
            print(f"step {step:3d}  {robot:6s} {text}")

    episode = Episode(
        args.seed,
        robots=args.robots,
        noisy=args.noisy,
        dummies=args.dummies,
        policy=args.policy,
        horizon=args.horizon,
        goal=args.goal,
        log=log,
    )
    sim = episode.sim
    print(f"goal: {sim.goal.text}")
    print(f"policy: {args.policy} ({POLICIES[args.policy].description})")
    print(
        f"robots: {', '.join(f'{r.name} in the {r.room}' for r in sim.robots.values())}; "
        f"{sum(t.kind == 'object' for t in sim.things.values())} objects"
        + (f" ({sum(t.dummy for t in sim.things.values())} dummies)" if args.noisy else "")
    )
    result = episode.run()
    print(
        f"{'done' if result.success else 'NOT done'} after {result.steps} steps; "
        f"travel {result.travel:.1f} m; false plans {result.false_plans}; "
        f"messages {result.messages} ({result.characters} characters; "
        f"{result.requests} validation requests)"
    )
    return 0 if result.success else 1
