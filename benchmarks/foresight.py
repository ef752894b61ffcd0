"""Foresight benchmark: does look-ahead see a failure coming, and does verified recovery stop
a fix that cannot work?

The world changes under a running plan at a random step (fixed seeds): in the shared PDDL
domains a fact an upcoming step needs is deleted, or moved to another object, or an unrelated
fact is added (:mod:`foresight_pddl`); in the FloorPlan1 kitchen an object is moved, a door
closed, the robot's or the person's hands filled, a way blocked, or an object put away in a
cabinet with a stool left in front (:mod:`foresight_scenes`). The truth is the first step the
simulated world (PddlWorld, SimWorld) then refuses. Five parts:

1. **PDDL look-ahead** (:class:`bt_raider.planners.lookahead.PddlForecaster`, what
   ``forecast_pddl`` runs, one per run as ``LookAhead`` holds one) and
2. **kitchen look-ahead** (:func:`bt_raider.runtime.lookahead.forecast_scene` with the
   symbolic reasoner), asked at every step from the change on with the state the world is in:

   - *early*: of the changes that break a later step (not the very step that comes next,
     which that step's own guard sees: *now*), the share forecast before that step comes,
     naming it; *lead*: how many steps before it (mean), against the most possible (*max*:
     from the step of the change);
   - *false alarms*: a forecast on the unchanged plan (*ctl*), after a change that breaks
     nothing (*harmless*), or naming another step than the one that fails (*wrong*). A
     forecast made while the current step itself is the one that fails (*now*) is about the
     steps after it once its guard fixed it; it is neither scored nor a false alarm;
   - *ms p50/p95*: wall time of one look-ahead (one call, at one step, over the steps left).

3. **Verified recovery**: for each kitchen failure the checker sees, the recovery plan
   (SymbolicRecoveryPlanner) that plain recovery (``Recovery(verify=False)``) would start, and
   whether the verifier (``SceneVerifier``, what ``Recovery(verify=True)`` asks) rejects it;
   whether that plan really restores the step is judged by running it in a copy of the world
   with a cooperative person, then the failed action (*rej&fails*: a right rejection;
   *rej&works*: a wrong one; *acc&fails*: a bad plan let through; *waits*: accepted up to an
   ask, verified again after the answer). What ``Recovery(verify=True)`` starts instead:
   another plan (*other*) or nothing (*none*: it reports the action cannot be recovered).
4. **Task completion**, same seeds and changes: the kitchen plan runs as a py_trees tree of
   guarded actions in SimWorld (:func:`bt_raider.testing.run_tree`), with look-ahead
   (``LookAhead`` around the plan, policy ``recover``) and verified recovery each on or off:
   *done* (the root succeeds), *wasted* (robot actions that served nothing: those after the
   change in a run that fails, those beyond the plan's own in one that succeeds, and every
   action the world refused; mean per run), *refused*, *extra* (actions minus the plan's
   steps), *refuted* (recovery plans the verifier rejected), *err* (runs that crashed).
5. **PDDL task completion**, the same way in a PddlWorld for the first changes per domain
   that break a later step: guards with ``PddlChecker``, ``Recovery(PddlRecoveryPlanner)``, and
   look-ahead with policy ``replan`` (``Replanner``: the plan is stopped when the failure is
   foreseen and a new one planned from the current state); *done* also needs the goal.

Usage::

    python3 benchmarks/foresight.py            # default size (about 4 minutes when idle)
    python3 benchmarks/foresight.py --quick    # a small run (under 30 s)
    python3 benchmarks/foresight.py --seed 3 --depth 3

Exits 2 with one line when ``../shared`` (the PDDL domains, the FloorPlan1 kitchen) is absent.
Timings depend on the machine's load: compare runs made on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import foresight_pddl as fp
import foresight_scenes as fs
from foresight_pddl import Trial

HERE = Path(__file__).resolve().parent
#: ``BT_RAIDER_SHARED=/nonexistent`` runs it as a clone without ../shared (as the tests do).
SHARED = Path(os.environ.get("BT_RAIDER_SHARED") or HERE.parents[1] / "shared")
PDDL = SHARED / "pddl"
KITCHEN = SHARED / "scenes" / "floorplan1_kitchen.json"


# ---------------------------------------------------------------------------- scoring


def _p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


def score(rows: list[Trial]) -> dict[str, Any]:
    """Early detection, leads and false alarms of a group of trials."""
    ctl = [t for t in rows if t.kind == "none"]
    changed = [t for t in rows if t.kind != "none"]
    harmless = [t for t in changed if t.fails is None]
    later = [t for t in changed if t.fails is not None and t.fails > t.at]
    at_once = [t for t in changed if t.fails is not None and t.fails == t.at]
    early = [
        t for t in later if t.seen_at is not None and t.seen_at < t.fails and t.said == t.fails
    ]
    wrong = [t for t in later if t.seen_at is not None and t.said != t.fails]
    ms = [m for t in rows for m in t.ms]
    return {
        "trials": len(changed),
        "later": len(later),
        "at_once": len(at_once),
        "harmless": len(harmless),
        "early": len(early),
        "lead": statistics.mean(t.fails - t.seen_at for t in early) if early else float("nan"),
        "lead_max": statistics.mean(t.fails - t.at for t in later) if later else float("nan"),
        "fa_ctl": sum(t.seen_at is not None for t in ctl),
        "ctl": len(ctl),
        "fa_harmless": sum(t.seen_at is not None for t in harmless),
        "fa_wrong": len(wrong),
        "calls": len(ms),
        "p50": _p(ms, 0.5),
        "p95": _p(ms, 0.95),
    }


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:5.1f}%" if b else "    -"


def detection_table(title: str, groups: dict[str, list[Trial]], steps: dict[str, int]) -> dict:
    print(f"\n{title}")
    print(
        f"{'plan':20} {'steps':>5} {'chg':>4} {'later':>5} {'early':>6} {'rate':>6} "
        f"{'lead':>5} {'max':>5} {'now':>4} {'ok':>4} {'FA ctl':>6} {'harmless':>8} "
        f"{'wrong':>5} {'ms p50':>7} {'ms p95':>7}"
    )
    every = [t for rows in groups.values() for t in rows]
    for name, rows in [*groups.items(), ("ALL", every)]:
        s = score(rows)
        print(
            f"{name:20} {steps.get(name, 0) or '':>5} {s['trials']:4d} {s['later']:5d} "
            f"{s['early']:6d} {_pct(s['early'], s['later']):>6} {s['lead']:5.2f} "
            f"{s['lead_max']:5.2f} {s['at_once']:4d} {s['harmless']:4d} "
            f"{s['fa_ctl']:>3d}/{s['ctl']:<2d} {s['fa_harmless']:>4d}/{s['harmless']:<3d} "
            f"{s['fa_wrong']:5d} {s['p50']:7.2f} {s['p95']:7.2f}"
        )
    return score(every)


# ---------------------------------------------------------------------------- parts


def pddl_part(args: argparse.Namespace) -> tuple[dict, list]:
    names = fp.classical_domains(PDDL)
    if args.quick:
        names = names[1::2]  # two of the four
    groups: dict[str, list[Trial]] = {}
    steps: dict[str, int] = {}
    runs = []
    for name in names:
        dom = fp.load_domain(PDDL, name)
        steps[name] = len(dom.steps)
        groups[name] = [
            fp.run_trial(dom, trial, state, args.depth)
            for trial, state in fp.trials(dom, args.seed, args.pddl_trials)
        ]
        later = [t for t in groups[name] if t.fails is not None and t.fails > t.at]
        runs += [(dom, t) for t in later[: args.pddl_runs]]
    s = detection_table(
        f"1. PDDL look-ahead (PddlForecaster, depth {args.depth or 'all'}; "
        f"{args.pddl_trials} changes per domain + 1 control)",
        groups,
        steps,
    )
    return s, runs


def scene_part(args: argparse.Namespace, scene_dict: dict, plans: list, checker: Any) -> tuple:
    from bt_raider.runtime.lookahead import forecast_scene

    groups: dict[str, list[Trial]] = {}
    failed: list[tuple[Trial, Any, Any]] = []
    for trial, plan, world in fs.trials(scene_dict, plans, args.seed, args.scene_trials):
        fs.run_trial(plan, world, trial, forecast_scene, checker, args.depth)
        groups.setdefault(plan.name, []).append(trial)
        if trial.fails is not None:
            failed.append((trial, plan, world))  # the world stays before the failing step
    s = detection_table(
        f"2. Kitchen look-ahead (forecast_scene + symbolic reasoner, depth "
        f"{args.depth or 'all'}; {args.scene_trials} changes per plan + 1 control)",
        groups,
        {p.name: len(p.queries) for p in plans},
    )
    return s, failed, [t for rows in groups.values() for t in rows]


def recovery_part(failed: list[tuple[Trial, Any, Any]], checker: Any) -> dict:
    import foresight_runs as fr

    rows = [fr.verify_case(trial, plan, world, checker) for trial, plan, world in failed]
    print(
        "\n3. Verified recovery on the kitchen failures (SymbolicRecoveryPlanner, cooperative person)"
    )
    print(
        f"{'change':10} {'fail':>4} {'seen':>4} {'started':>7} {'rejected':>8} {'rate':>6} "
        f"{'rej&fails':>9} {'rej&works':>9} {'acc&fails':>9} {'waits':>5} {'other':>5} "
        f"{'none':>4}"
    )
    total: dict[str, int] = {}
    for kind in [*fs.KINDS, "ALL"]:
        sel = [r for r in rows if kind in ("ALL", r["kind"])]
        if not sel:
            continue
        started = [r for r in sel if r["started"]]
        rej = [r for r in started if r["rejected"]]
        acc = [r for r in started if not r["rejected"]]
        total = {
            "started": len(started),
            "rejected": len(rej),
            "rej_fails": sum(r["works"] is False for r in rej),
            "rej_works": sum(r["works"] is True for r in rej),
            "acc_fails": sum(r["works"] is False for r in acc),
        }
        print(
            f"{kind:10} {len(sel):4d} {sum(r['seen'] for r in sel):4d} {len(started):7d} "
            f"{len(rej):8d} {_pct(len(rej), len(started)):>6} {total['rej_fails']:9d} "
            f"{total['rej_works']:9d} {total['acc_fails']:9d} "
            f"{sum(bool(r.get('waits')) for r in acc):5d} "
            f"{sum(r.get('instead') not in (None, 'same') for r in rej):5d} "
            f"{sum(r.get('instead') is None for r in rej):4d}"
        )
    for r in rows:
        if r["rejected"]:
            code = "; ".join(r["code"].splitlines())
            print(f"  e.g. {r['change']}: {code!r} rejected: {r['reason'][:140]}")
            break
    return total


def _completion_rows(title: str, results: dict[tuple[bool, bool], list[dict]]) -> None:
    print(title)
    print(
        f"{'look-ahead':10} {'verify':6} {'runs':>4} {'done':>6} {'wasted':>6} {'refused':>7} "
        f"{'extra':>5} {'refuted':>7} {'err':>3} {'ticks p50':>9} {'s p50':>6}"
    )
    for (look, verify), rows in results.items():
        ok = [r for r in rows if not r.get("error")]
        print(
            f"{'on' if look else 'off':10} {'on' if verify else 'off':6} {len(rows):4d} "
            f"{_pct(sum(r['done'] for r in rows), len(rows)):>6} "
            f"{statistics.mean(r['wasted'] for r in ok) if ok else float('nan'):6.2f} "
            f"{sum(r['refused'] for r in rows):7d} "
            f"{statistics.mean(r['extra'] for r in ok) if ok else float('nan'):5.2f} "
            f"{sum(r.get('refuted', 0) for r in ok):7d} {len(rows) - len(ok):3d} "
            f"{statistics.median(r['ticks'] for r in ok) if ok else 0:9.0f} "
            f"{statistics.median(r['s'] for r in ok) if ok else 0:6.2f}"
        )


def completion_part(args: argparse.Namespace, scene_dict: dict, trials: list, checker: Any) -> dict:
    import foresight_runs as fr

    changed = [t for t in trials if t.kind != "none"]
    plans = {p.name: p for p in fs.ground(scene_dict, checker)[0]}
    results = {
        (look, verify): [
            fr.run_plan(
                scene_dict, plans[t.where], t, checker, look, verify, args.timeout, args.depth
            )
            for t in changed
        ]
        for look in (False, True)
        for verify in (False, True)
    }
    _completion_rows(
        f"\n4. Kitchen task completion in SimWorld, the same {len(changed)} changed runs "
        "(guards + SymbolicRecoveryPlanner; look-ahead policy 'recover')",
        results,
    )
    return results


def pddl_completion_part(args: argparse.Namespace, runs: list) -> dict:
    results = {
        (look, verify): [
            fp.run_plan(dom, t, look, verify, args.timeout, args.depth) for dom, t in runs
        ]
        for look in (False, True)
        for verify in (False, True)
    }
    _completion_rows(
        f"\n5. PDDL task completion in PddlWorld, {len(runs)} changed runs that break a later "
        "step (guards + PddlRecoveryPlanner; look-ahead policy 'replan')",
        results,
    )
    return results


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (under 30 s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the changes (default 0)")
    parser.add_argument("--depth", type=int, default=None, help="look-ahead depth (default all)")
    parser.add_argument("--pddl-trials", type=int, help="changes per PDDL domain")
    parser.add_argument("--scene-trials", type=int, help="changes per kitchen plan")
    parser.add_argument(
        "--pddl-runs", type=int, help="PDDL trees run per domain (changes that break a later step)"
    )
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per tree run")
    parser.add_argument(
        "--part",
        action="append",
        choices=("pddl", "scene", "verify", "complete", "complete-pddl"),
        help="run only these parts (repeatable; default all)",
    )
    args = parser.parse_args(argv)
    if args.pddl_trials is None:
        args.pddl_trials = 6 if args.quick else 40
    if args.scene_trials is None:
        args.scene_trials = 2 if args.quick else 8
    if args.pddl_runs is None:
        args.pddl_runs = 0 if args.quick else 2
    missing = [p for p in (PDDL, KITCHEN) if not p.exists()]
    if missing:
        print(f"foresight.py: needs {missing[0]} (../shared), missing", file=sys.stderr)
        return 2
    parts = set(args.part or ("pddl", "scene", "verify", "complete", "complete-pddl"))
    t0 = time.perf_counter()
    from bt_raider.checking.symbolic import SymbolicReasoner

    checker = SymbolicReasoner()
    scene_dict = fs.kitchen(KITCHEN)
    plans, dropped = fs.ground(scene_dict, checker)
    for why in dropped:
        print(f"dropped plan {why}")
    if args.quick:
        plans = plans[:5]
    summary = []
    runs: list = []
    if parts & {"pddl", "complete-pddl"}:
        s, runs = pddl_part(args)
        summary.append(f"PDDL early {_pct(s['early'], s['later']).strip()} lead {s['lead']:.1f}")
        summary.append(f"FA {s['fa_ctl'] + s['fa_harmless'] + s['fa_wrong']}")
    failed: list = []
    trials: list = []
    if parts & {"scene", "verify", "complete"}:
        s, failed, trials = scene_part(args, scene_dict, plans, checker)
        summary.append(f"kitchen early {_pct(s['early'], s['later']).strip()} lead {s['lead']:.1f}")
        summary.append(f"FA {s['fa_ctl'] + s['fa_harmless'] + s['fa_wrong']}")
        summary.append(f"look-ahead p95 {s['p95']:.1f} ms")
    if "verify" in parts:
        v = recovery_part(failed, checker)
        summary.append(f"verify rejects {v['rejected']}/{v['started']} started plans")
    if "complete" in parts:
        c = completion_part(args, scene_dict, trials, checker)
        for look, verify in ((False, False), (True, True)):
            rows = c[(look, verify)]
            summary.append(
                f"done {'on' if look else 'off'}/{'on' if verify else 'off'} "
                f"{_pct(sum(r['done'] for r in rows), len(rows)).strip()}"
            )
    if "complete-pddl" in parts and runs:
        c = pddl_completion_part(args, runs)
        for look, verify in ((False, False), (True, True)):
            rows = c[(look, verify)]
            summary.append(
                f"PDDL done {'on' if look else 'off'}/{'on' if verify else 'off'} "
                f"{_pct(sum(r['done'] for r in rows), len(rows)).strip()}"
            )
    print(f"\nsummary (seed {args.seed}, {time.perf_counter() - t0:.0f} s): " + "; ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
