"""The explorer in the user's world (issue 34): the care-home example, explored in its own terms.

Runs :func:`bt_raider.testing.explore_domain.explore_domain` on the care home
(``bt_raider.examples.care_home``): its lounge, action names, words, people and policy, with
its own guard (checker in its words and contract, recovery with its actions and policy), and
prints the episodes, the violations of D1-D4 and the time.

Usage::

    python3 benchmarks/explore_domain.py                 # 5,000 episodes
    python3 benchmarks/explore_domain.py --episodes 500 --seed 7
"""

from __future__ import annotations

import argparse
import collections
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from bt_raider.examples import care_home
    from bt_raider.testing.explore_domain import PROPERTIES, explore_domain

    names = {
        "handover": "HandTo",
        "approach": "NavigateTo",
        "pick": "PickUp",
        "open": "OpenDoor",
        "place": "PutDown",
    }

    ends: collections.Counter[tuple[str, str]] = collections.Counter()
    start = time.monotonic()
    report = explore_domain(
        care_home.SCENE,
        names,
        care_home.guard,
        count=args.episodes,
        seed=args.seed,
        words=("PillOrganiser", "pill box", "pills"),
        on_outcome=lambda o: ends.update([(o.episode.form, o.status.value)]),
    )
    took = time.monotonic() - start
    print(f"care home: {report.episodes} episodes in {took:.0f} s (seed {args.seed})")
    for prop, what in PROPERTIES.items():
        print(f"  {prop} {report.violations[prop]:5d} violations  {what}")
    for (form, status), n in sorted(ends.items()):
        print(f"  {form:12} {status:8} {n}")
    for prop, outcome in report.findings.items():
        print(f"first {prop}: {outcome.violations[prop]}  {outcome.episode}")
    return 1 if any(report.violations.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
