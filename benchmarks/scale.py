"""Check latency as scenes grow: 77 to 10,000 objects with repeated types.

A scene of N objects is the project's kitchen (``../shared/scenes/floorplan1_kitchen.json``, 77
objects) replicated on a grid of kitchens 6 m apart, each copy's objects moved (position and both
bounding boxes) and given fresh AI2-THOR objectIds (``Type|+x.xx|+y.yy|+z.zz``), its receptacle
links renamed to match; the last copy is cut to reach N exactly (links to objects it lost are
dropped). So 3,000 objects hold 39 apples and 39 bowls. The robot stands in the middle copy,
where the kitchen puts it.

Queries, through the symbolic checker (``make_checker("symbolic")``):

- relational: "pick the apple on the left of the bowl", "... right of ...", "... near ...", "pick
  the apple on the counter top" (on), "take the egg in the fridge" (in);
- structured: ``pick(Apple)``;
- category: "pick the fruit".

Every timed run checks a fresh scene state: a new :class:`Scene` over the same (validated)
dicts, re-indexed, so nothing a check could keep about a scene or its objects (no such cache
exists; this makes sure) survives into the next run. What the scene makes when it is indexed
(display names, its objects' rows by type: ids and types change only with a reindex) is part of
the state, as in any check; positions and receptacle links, which change in place, are read
afresh by every check (relational grounding asks ``check_obj_relationship`` among the
candidates' types, so it reads those of the apples, or eggs, and of the anchors: at 3,000
objects 39 apples and 39 bowls, not every object). The relational queries are five distinct
texts, each run in turn.

Before each timed run the garbage collector runs (untimed), so a run does not pay for the
garbage of the fresh states made before it.

Prints p50/p95 (and the best run) latency per size and query kind, and the growth exponent:
the slope of log(p50) -- and of log(best) -- against log(N) fitted from 300 to 10,000 objects
(1.0 is linear). Timings are wall-clock (``--clock cpu``: this process's CPU time); on a shared
machine the best run, and CPU time, are the figures least disturbed by other processes. Re-run
on a quiet machine for figures to quote::

    python3 benchmarks/scale.py                   # all sizes, 20 runs each
    python3 benchmarks/scale.py --sizes 300 3000 --runs 50
    python3 benchmarks/scale.py --clock cpu       # CPU time of this process, for a busy machine
    python3 benchmarks/scale.py --crossover       # plain Python vs numpy index, by size

``--crossover`` times the relational queries with the spatial index forced to plain Python and
forced to numpy (:data:`bt_raider.perception.spatial.NUMPY_FROM`), numpy already imported, at
sizes around the threshold: where numpy starts to win is where the threshold belongs.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KITCHEN = HERE.parents[1] / "shared" / "scenes" / "floorplan1_kitchen.json"
SIZES = (77, 300, 1000, 3000, 10000)
#: Distance (m) between two kitchens of the grid: the kitchen spans about 4.6 m.
SPACING = 6.0

QUERIES: dict[str, list[str]] = {
    "relational": [
        "pick the apple on the left of the bowl",
        "pick the apple on the right of the bowl",
        "pick the apple near the bowl",
        "pick the apple on the counter top",
        "take the egg in the fridge",
    ],
    "structured": ["pick(Apple)"],
    "category": ["pick the fruit"],
}


def _thor_id(otype: str, pos: dict[str, float]) -> str:
    return f"{otype}|{pos['x']:+06.2f}|{pos['y']:+06.2f}|{pos['z']:+06.2f}"


def _moved(raw: dict[str, Any], dx: float, dz: float) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    p = out["position"]
    out["position"] = {"x": p["x"] + dx, "y": p["y"], "z": p["z"] + dz}
    for key in ("axisAlignedBoundingBox", "objectOrientedBoundingBox"):
        box = out.get(key)
        if not isinstance(box, dict):
            continue
        if isinstance(box.get("center"), dict):
            c = box["center"]
            box["center"] = {"x": c["x"] + dx, "y": c["y"], "z": c["z"] + dz}
        if box.get("cornerPoints"):
            box["cornerPoints"] = [[c[0] + dx, c[1], c[2] + dz] for c in box["cornerPoints"]]
    return out


def grid_scene(base: dict[str, Any], n_objects: int) -> dict[str, Any]:
    """``base`` replicated on a square grid until it has ``n_objects`` objects (AI2-THOR format)."""
    per = len(base["objects"])
    copies = math.ceil(n_objects / per)
    side = math.ceil(math.sqrt(copies))
    objects: list[dict[str, Any]] = []
    used: set[str] = set()
    for k in range(copies):
        dx, dz = (k % side) * SPACING, (k // side) * SPACING
        renamed: dict[str, str] = {}
        batch = []
        for raw in base["objects"]:
            moved = _moved(raw, dx, dz)
            new_id = _thor_id(moved["objectType"], moved["position"])
            while new_id in used:  # two objects of one type at one spot: keep ids unique
                new_id += "_"
            used.add(new_id)
            renamed[raw["objectId"]] = new_id
            moved["objectId"] = new_id
            batch.append(moved)
        for moved in batch:
            for key in ("parentReceptacles", "receptacleObjectIds"):
                if moved.get(key):
                    moved[key] = [renamed[i] for i in moved[key] if i in renamed]
        objects.extend(batch)
    objects = objects[:n_objects]
    kept = {o["objectId"] for o in objects}
    for o in objects:
        for key in ("parentReceptacles", "receptacleObjectIds"):
            if o.get(key):
                o[key] = [i for i in o[key] if i in kept]
    middle = (copies - 1) // 2
    agent = copy.deepcopy(base["agent"])
    agent["position"]["x"] += (middle % side) * SPACING
    agent["position"]["z"] += (middle // side) * SPACING
    scene = {k: copy.deepcopy(v) for k, v in base.items() if k not in ("objects", "agent")}
    scene["inventoryObjects"] = []
    scene["objects"] = objects
    scene["agent"] = agent
    return scene


def fresh(scene: Any) -> Any:
    """A new Scene over ``scene``'s dicts (already validated), with new objects and tables."""
    out = copy.copy(scene)
    out.reindex()
    return out


#: What the relational queries ask of the spatial index: (relation, anchor type).
INDEX_WORK = (
    ("left_of", "Bowl"),
    ("right_of", "Bowl"),
    ("near", "Bowl"),
    ("on_top_of", "CounterTop"),
    ("inside", "Fridge"),
)
CROSSOVER_SIZES = (50, 100, 150, 200, 250, 300, 400, 600, 1000)


def crossover(base: dict[str, Any], runs: int) -> None:
    """Print the index's time per size, plain Python against numpy (the NUMPY_FROM threshold)."""
    import numpy  # noqa: F401 -- imported before timing: the threshold is about speed once loaded
    import scipy.spatial  # noqa: F401

    from bt_raider.perception import relations, spatial
    from bt_raider.perception.scene import Scene

    print(
        f"{'objects':>8} {'python ms':>10} {'numpy ms':>10}  faster (threshold now {spatial.NUMPY_FROM})"
    )
    saved = spatial.NUMPY_FROM
    try:
        for n in CROSSOVER_SIZES:
            scene = Scene(grid_scene(base, n), source=f"<grid {n}>")
            times: dict[str, list[float]] = {"python": [], "numpy": []}
            for k in range(runs):
                # Alternate which goes first, so a busy spell falls on both alike.
                order = ("python", "numpy") if k % 2 else ("numpy", "python")
                for label in order:
                    spatial.NUMPY_FROM = sys.maxsize if label == "python" else 0
                    state = fresh(scene)
                    t0 = time.perf_counter()
                    for rel, anchor in INDEX_WORK:
                        with relations.indexed(state):
                            for y in state.of_type(anchor):
                                relations.related(state, rel, y)
                    times[label].append(time.perf_counter() - t0)
            py = statistics.median(times["python"]) * 1000
            npy = statistics.median(times["numpy"]) * 1000
            print(f"{n:>8} {py:>10.2f} {npy:>10.2f}  {'python' if py <= npy else 'numpy'}")
    finally:
        spatial.NUMPY_FROM = saved


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) against log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    den = sum((a - mx) ** 2 for a in lx)
    return num / den


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--runs", type=int, default=20, help="timed runs per query (default 20)")
    ap.add_argument(
        "--crossover", action="store_true", help="time the spatial index: plain Python vs numpy"
    )
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall-clock time (default) or this process's CPU time (less disturbed on a busy "
        "machine)",
    )
    args = ap.parse_args(argv)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    if not KITCHEN.is_file():  # a clone without ../shared beside it
        print(f"scale.py: needs {KITCHEN} (../shared), missing", file=sys.stderr)
        return 2
    if args.crossover:
        crossover(json.loads(KITCHEN.read_text(encoding="utf-8")), args.runs)
        return 0

    from bt_raider.checking.contract import Query
    from bt_raider.checking.registry import make_checker
    from bt_raider.perception.scene import Scene

    base = json.loads(KITCHEN.read_text(encoding="utf-8"))
    checker = make_checker("symbolic")
    p50: dict[str, dict[int, float]] = {kind: {} for kind in QUERIES}
    best: dict[str, dict[int, float]] = {kind: {} for kind in QUERIES}
    print(
        f"{'objects':>8} {'apples':>6} {'kind':<11} {'p50 ms':>8} {'p95 ms':>8} {'best ms':>8}"
        "  verdicts"
    )
    for n in args.sizes:
        scene = Scene(grid_scene(base, n), source=f"<grid {n}>")
        apples = len(scene.of_type("Apple"))
        for kind, queries in QUERIES.items():
            times: list[float] = []
            verdicts: list[str] = []
            for text in queries:
                checker.check(scene, Query(text))  # warm caches (imports, the lexicon)
                for _ in range(args.runs):
                    state = fresh(scene)
                    gc.collect()  # the last state's garbage is not this check's to collect
                    t0 = clock()
                    verdict = checker.check(state, Query(text))
                    times.append(clock() - t0)
                verdicts.append(str(verdict.category))
            p50[kind][n] = _percentile(times, 0.5) * 1000
            # The best run of each query, averaged over the kind's queries.
            runs = [times[i : i + args.runs] for i in range(0, len(times), args.runs)]
            best[kind][n] = statistics.fmean(min(r) for r in runs) * 1000
            print(
                f"{n:>8} {apples:>6} {kind:<11} {p50[kind][n]:>8.2f} "
                f"{_percentile(times, 0.95) * 1000:>8.2f} {best[kind][n]:>8.2f}  "
                f"{', '.join(verdicts)}",
                flush=True,
            )
    print()
    for kind, by_size in p50.items():
        sizes = [n for n in sorted(by_size) if 300 <= n <= 10000]
        if len(sizes) >= 2:
            exp = slope(sizes, [by_size[n] for n in sizes])
            exp_best = slope(sizes, [best[kind][n] for n in sizes])
            print(
                f"growth exponent ({kind}, {sizes[0]}..{sizes[-1]} objects): {exp:.2f} on p50, "
                f"{exp_best:.2f} on the best runs"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
