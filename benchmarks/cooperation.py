"""REVECA's ablations in the multi-robot household: what validation, relevance and asking cost.

Seeded episodes of two robots setting a table (C-WAH-like; see
``bt_raider.simulation.multirobot``), clean and noisy (20 dummy objects, Noisy-C-WAH), for each
policy -- the same agent with one part switched off or on
(``bt_raider.examples.cooperative_table.policies.POLICIES``):

* ``reveca``: relevance, relative proximity, trajectory-based validation;
* ``no-validation``: commits every plan at once (Table 5 "w/o validation");
* ``always-ask``: asks every collaborator before every plan (the user study's "always ask");
* ``full-comm``: broadcasts what it perceives before every action (Table 5 "full observation");
* ``distance-greedy``: no relevance, information ranked by proximity (Table 5 "w/o relevance").

Printed per variant and policy: success rate and the means of simulation steps to finish,
travel (m, all robots), false plans (commits to a sub-goal whose object a collaborator had
already taken), messages and characters sent, validation requests. Then the targets:

* REVECA cuts false plans by >= 80 % against no-validation;
* REVECA sends <= 30 % of the messages of always-ask;
* on the noisy variant REVECA finishes in fewer steps than no-validation and distance-greedy
  (with the paired difference and its standard error, as the gap to no-validation is small).

Run: ``python3 benchmarks/cooperation.py`` (``--episodes 20`` for a quick look, ``--help``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence

from bt_raider.examples.cooperative_table.episode import EpisodeResult, run_episode
from bt_raider.examples.cooperative_table.policies import POLICIES

FIELDS = ("steps", "travel", "false_plans", "messages", "characters", "requests")


def mean(results: Sequence[EpisodeResult], field: str) -> float:
    return statistics.fmean(getattr(r, field) for r in results)


def paired(a: Sequence[EpisodeResult], b: Sequence[EpisodeResult]) -> tuple[float, float]:
    """Mean and standard error of the per-seed step difference a - b."""
    d = [x.steps - y.steps for x, y in zip(a, b, strict=True)]
    se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")
    return statistics.fmean(d), se


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100, help="seeds 0..N-1 (default 100)")
    parser.add_argument("--robots", type=int, default=2, help="robots per episode (default 2)")
    parser.add_argument("--dummies", type=int, default=20, help="dummies in the noisy variant")
    parser.add_argument(
        "--policies", default=",".join(POLICIES), help="comma-separated (default: all five)"
    )
    args = parser.parse_args(argv)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or args.episodes < 2:
        parser.error(
            f"unknown policies {unknown} or --episodes < 2; policies: {', '.join(POLICIES)}"
        )

    print(
        f"cooperation benchmark: {args.episodes} seeded episodes per variant, {args.robots} robots, "
        f"noisy = {args.dummies} dummy objects"
    )
    print(
        "command: python3 " + " ".join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    )
    results: dict[tuple[str, str], list[EpisodeResult]] = {}
    for variant, noisy in (("clean", False), ("noisy", True)):
        print(f"\n== {variant} ==")
        print(
            f"{'policy':16s} {'success':>7s} {'steps':>7s} {'travel':>7s} {'false':>6s} "
            f"{'msgs':>6s} {'chars':>7s} {'asks':>5s} {'secs':>5s}"
        )
        for policy in policies:
            t0 = time.perf_counter()
            rs = [
                run_episode(
                    seed, policy=policy, noisy=noisy, dummies=args.dummies, robots=args.robots
                )
                for seed in range(args.episodes)
            ]
            results[(variant, policy)] = rs
            print(
                f"{policy:16s} {sum(r.success for r in rs):>3d}/{len(rs):<3d} "
                f"{mean(rs, 'steps'):7.1f} {mean(rs, 'travel'):7.1f} {mean(rs, 'false_plans'):6.2f} "
                f"{mean(rs, 'messages'):6.1f} {mean(rs, 'characters'):7.0f} "
                f"{mean(rs, 'requests'):5.2f} {time.perf_counter() - t0:5.1f}"
            )

    needed = {"reveca", "no-validation", "always-ask", "distance-greedy"}
    if not needed <= set(policies):
        return 0
    print("\n== targets ==")
    ok_all = True

    def report(ok: bool, text: str) -> None:
        nonlocal ok_all
        ok_all &= ok
        print(f"[{'PASS' if ok else 'FAIL'}] {text}")

    for variant in ("clean", "noisy"):
        rv, nv = results[(variant, "reveca")], results[(variant, "no-validation")]
        fr, fn = sum(r.false_plans for r in rv), sum(r.false_plans for r in nv)
        cut = 1 - fr / fn if fn else float("nan")
        report(
            fn > 0 and cut >= 0.8,
            f"{variant}: false plans {fr} (REVECA) vs {fn} (no-validation) in {len(rv)} episodes: "
            f"cut {cut:.0%} (target >= 80%)",
        )
        ma, mr = mean(results[(variant, "always-ask")], "messages"), mean(rv, "messages")
        report(
            mr <= 0.3 * ma,
            f"{variant}: messages {mr:.1f} (REVECA) vs {ma:.1f} (always-ask): {mr / ma:.0%} "
            "(target <= 30%)",
        )
    rv = results[("noisy", "reveca")]
    for other in ("no-validation", "distance-greedy"):
        ov = results[("noisy", other)]
        d, se = paired(rv, ov)
        report(
            mean(rv, "steps") < mean(ov, "steps"),
            f"noisy: steps {mean(rv, 'steps'):.2f} (REVECA) vs {mean(ov, 'steps'):.2f} ({other}); "
            f"paired difference {d:+.2f} +/- {se:.2f} (s.e.)"
            + (" -- within noise (|d| < 2 s.e.)" if abs(d) < 2 * se else ""),
        )
    print("all targets met" if ok_all else "some targets missed (figures above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
