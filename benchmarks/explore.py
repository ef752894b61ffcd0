"""The explorer at scale: generated episodes over four rooms, every person and disturbance.

Runs :func:`bt_raider.testing.explore.explore` (Hypothesis-generated cases, the world oracle on
every robot call and question, shrinking of what fails) over the rooms:

- ``kitchen``: the testing kit's small kitchen;
- ``medicine``: the medicine-delivery demo's scene (named places, a blocked route, a person);
- ``studio``: a user's own scene: the README's two cups on an otherwise empty floor;
- ``floorplan1``: AI2-THOR's FloorPlan1 kitchen from ``../shared`` (left out when absent).

It prints episodes per second, violations per property (target 0 for each), the time spent
shrinking, each shrunk finding as a ready-to-paste pytest test, and the issue classes the
violations belong to, with the episode that first showed each.

``--room care_home`` (or the example's folder, or its scene file) explores a user's own
domain instead: ``explore(domain=...)`` with the example's ``explored()`` (its lounge, action
names, guard, people, words, PDDL plan and button), judged by D1-D7, and prints issue 34's
classes with the episode that first showed each. Against a tree without the example (an
earlier commit), the same room, names, people and words are explored through the guard the
example's user wrote on that code (:func:`care_home_before`).

``--against /tmp/prefix`` runs the same explorer against another checkout of bt_raider (a
``git worktree`` of an earlier commit, kept read-only: no bytecode is written): that tree's
packages are imported instead of this one's, and only the explorer's own modules
(``bt_raider/testing/explore*.py``) come from here, loaded by file path. ``--suite`` explores
exactly what the test suite does (``tests/bt_raider/testing/test_explore.py``), to show a
class is found within the suite's episodes.

Usage::

    python3 benchmarks/explore.py                          # 10,000 episodes, four rooms
    python3 benchmarks/explore.py --episodes 500 --no-shrink
    python3 benchmarks/explore.py --suite --against /tmp/prefix   # the suite's run, pre-fix code
    python3 benchmarks/explore.py --room care_home --episodes 5000  # the user's own domain
    python3 benchmarks/explore.py --room care_home --suite --against /tmp/prefix
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BT_RAIDER_SHARED") or ROOT.parent / "shared")
EXPLORER = (
    "explore_domain",
    "explore_bounds",
    "explore_lang",
    "explore_judge",
    "explore_stage",
    "explore_world",
    "explore_people",
    "explore_oracle",
    "explore_report",
    "explore_tree",
    "explore",
)
#: The suite's exploration (tests/bt_raider/testing/test_explore.py uses the same numbers).
SUITE_EPISODES = 300
SUITE_SEED = 24

#: The suite's care-home exploration (tests/bt_raider/testing/test_explore_domain.py).
SUITE_DOMAIN_EPISODES = 400
SUITE_DOMAIN_SEED = 0

#: Issue 34's classes (its "Why"), as the domain explorer's violations show them.
CLASSES_34 = (
    "the pills go to whoever answers",
    "a missing target becomes whoever answers",
    "argument roles guessed by position",
    "a typo in blocked clears a hazard",
    "questions a person should not be asked",
    "only nine action kinds (the user's PressButton)",
    "no words of the user's ('glasses' read as a glass)",
    "a robot call outside the user's action names",
)

#: Issue 24's classes, and how a violation shows each.
CLASSES = (
    "replies: negation",
    "replies: option 0 / out of range",
    "replies: several candidates",
    "replies: self-correction",
    "shared recovery variables in a Parallel",
    "colour and left/right queries",
    "compound instruction in a guard",
    "'go to X' vs approach(X)",
    "user action names in shown code",
    "blocked route in recovery",
    "internal labels in questions",
    "plugin crash on tuple executed",
    "microwave judgements",
)
#: Issue 32's classes (its "Why"), and the grammar's own.
CLASSES_32 = (
    "negation and exclusion in instructions",
    "speaker frames",
    "reply forms instructions accept",
    "recovery swaps the object / second pick with a full hand",
    "two guards with one name",
    "coordination acted on as one",
    "a word left over read as none",
    "an excluded destination in a compound instruction",
    "sizes",
    "words for another action than the node's",
)


def rooms(root: Path = ROOT) -> dict[str, Any]:
    """The rooms explored: the kit's kitchen, the demo's scene, a user's, FloorPlan1 if present."""
    # This tree's explorer module (loaded by load_explorer, also over another tree).
    from bt_raider.testing.explore_world import two_cups

    out: dict[str, Any] = {
        "kitchen": root / "bt_raider" / "testing" / "data" / "kitchen.json",
        "medicine": root / "examples" / "medicine_delivery" / "scene.json",
        "studio": two_cups(),
    }
    floorplan = SHARED / "scenes" / "floorplan1_kitchen.json"
    if floorplan.is_file():
        out["floorplan1"] = floorplan
    return out


def classes_32(case: Any, prop: str, msg: str) -> str | None:
    """Which of issue 32's classes a violation shows, else None (the first that fits)."""
    said, answer = getattr(case, "said", None), getattr(case, "answer", None)
    planner = getattr(case, "planner", "")
    if getattr(case, "form", "") == "wrong_node" and prop in ("P1", "P10", "P12"):
        return CLASSES_32[-1]  # "The cup, please." (a handover) over the user's pick node
    if prop == "P1" and "the node for the" in msg and getattr(case, "names", "") != "distinct":
        if "Knife" not in msg:
            return "two guards with one name"
    if planner in ("swap_type", "swap_excluded", "full_hand") and prop in ("P1", "P10", "P12"):
        if "Knife" in msg or planner == "swap_excluded":
            return "recovery swaps the object / second pick with a full hand"
    if prop == "P13":
        return "a word left over read as none"
    if prop == "P14":
        return "coordination acted on as one"
    clean = [s for s in (said, answer) if s is not None and not s.odd()]
    if prop == "P15" or (prop in ("P1", "P9", "P12") and any("my" in s.frames() for s in clean)):
        return "speaker frames"
    if prop in ("P1", "P9") and said is not None and getattr(said, "into", None) is not None:
        if "bowl" in msg.lower():
            return "an excluded destination in a compound instruction"
    if prop in ("P1", "P9", "P12") and said is not None and said.exclude is not None:
        return "negation and exclusion in instructions"
    if prop in ("P1", "P9", "P12") and said is not None and said.select in ("biggest", "smallest"):
        return "sizes"
    if prop in ("P1", "P12") and answer is not None and case.person == "says":
        return "reply forms instructions accept"
    return None


def classes_of(episode: Any) -> set[str]:
    """Which of issue 24's and 32's classes an episode's violations show (``other: ...``
    otherwise)."""
    case, out = episode.case, set()
    # A release outside the designation (P12) comes with the act it leads to: it shows the
    # same class as the episode's other violations, when they show one.
    named = {classes_32(case, v.prop, v.message) for v in episode.violations} - {None}
    for v in episode.violations:
        msg = v.message
        found = classes_32(case, v.prop, msg)
        if found is None and v.prop == "P12" and named:
            continue
        if found is not None:
            out.add(found)
            continue
        if v.prop == "P1":
            if "the node for the" in msg:
                out.add("shared recovery variables in a Parallel")
            elif case.person == "negating":
                out.add("replies: negation")
            elif case.person in ("option0", "out_of_range"):
                out.add("replies: option 0 / out of range")
            elif case.person == "several":
                out.add("replies: several candidates")
            elif case.person == "self_correcting":
                out.add("replies: self-correction")
            elif case.form in ("side", "colour", "state"):
                out.add("colour and left/right queries")
            elif case.form == "compound":
                out.add("compound instruction in a guard")
            else:
                out.add(f"other: P1 ({case.person}, {case.form})")
        elif v.prop == "P9" and case.form in ("colour", "side", "state"):
            out.add("colour and left/right queries")
        elif case.form == "compound" and v.prop in ("P3", "P6"):
            out.add("compound instruction in a guard")
        elif v.prop == "P3" and case.form in ("side", "colour"):
            out.add("colour and left/right queries")
        elif v.prop == "P11":
            out.add("'go to X' vs approach(X)")
        elif v.prop == "P2":
            out.add("user action names in shown code")
            if "'approach'" in msg:  # the obstructed GoTo shown as approach(...)
                out.add("'go to X' vs approach(X)")
        elif v.prop == "P4":
            out.add("blocked route in recovery")
        elif v.prop == "P7":
            out.add("internal labels in questions")
        elif v.prop == "P6" and "tuple found" in msg:
            out.add("plugin crash on tuple executed")
        elif v.prop == "P10":
            out.add("microwave judgements")
        else:
            out.add(f"other: {v.prop} {msg.split(':')[0][:60]}")
    return out


def classes_34(outcome: Any) -> set[str]:
    """Which of issue 34's classes a domain episode's violations show (``other: ...``
    otherwise)."""
    ep, out = outcome.episode, set()
    for prop in outcome.violations:
        if prop == "D1":
            out.add(CLASSES_34[0] if ep.form == "handover" else CLASSES_34[1])
        elif prop == "D5" and ep.plan:
            out.add(CLASSES_34[2])
        elif prop == "D6" and ep.typo:
            out.add(CLASSES_34[3])
        elif prop == "D2":
            out.add(CLASSES_34[4])
        elif prop == "D7":
            out.add(CLASSES_34[5])
        elif prop == "D5" and ep.form == "fetch":
            out.add(CLASSES_34[6])
        elif prop == "D3":
            out.add(CLASSES_34[7])
        else:
            out.add(f"other: {prop} ({ep.form})")
    return out


def care_home_before(root: Path = ROOT) -> Any:
    """The care home on a tree without issue 34 (``--against`` an earlier commit): the room,
    action names, people, words, plan and button of this tree's example (its files and
    ``home.py``'s constants, read as data), through the guard its user wrote on that code:
    ``SymbolicReasoner()`` and ``Recovery(actions=...)`` with the robot's own action names (that
    code took no contract, lexicon or policy)."""
    from bt_raider import RaiderGuard, Recovery, SymbolicReasoner, SymbolicRecoveryPlanner
    from bt_raider.testing.explore_domain import UserDomain, words_of

    here = root / "examples" / "care_home"
    const: dict[str, Any] = {}
    for node in ast.parse((here / "home.py").read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper() and isinstance(node.value, (ast.Dict, ast.Tuple, ast.Constant)):
                const[name] = ast.literal_eval(node.value)

    def guard(node: Any, query: str, robot: Any, human: Any) -> Any:
        actions = list(const["ACTIONS"])
        recovery = Recovery(SymbolicRecoveryPlanner(), robot, human, actions=actions)
        return RaiderGuard(node, query, SymbolicReasoner(), scene=robot.observe, recovery=recovery)

    return UserDomain(
        here / "scene.json",
        const["KINDS"],
        guard,
        people=const["PEOPLE"],
        places=const["PLACES"],
        words=words_of(here / "lexicon.json", types=const["WORD_TYPES"]),
        plan=const["PLAN"],
        button=const["BUTTON"],
        label="care_home (its user's guard on the tree explored)",
    )


def domain_of(room: str) -> Any:
    """The user's domain a ``--room`` names (an example of this tree with ``explored()``: its
    name, folder or scene file), else None."""
    path = Path(room)
    name = path.parent.name if path.suffix == ".json" else path.name
    if not (ROOT / "examples" / name / "__init__.py").is_file():
        return None
    try:
        return importlib.import_module(f"bt_raider.examples.{name}").explored()
    except (ImportError, AttributeError):  # a tree without it (--against an earlier commit)
        return care_home_before() if name == "care_home" else None


def run_domain(explore: ModuleType, domain: Any, episodes: int, seed: int, every: int) -> None:
    """Explore a user's domain; print the report and issue 34's classes with first episodes."""
    first: dict[str, int] = {}
    seen = [0]
    began = time.monotonic()

    def progress(outcome: Any) -> None:
        seen[0] += 1
        for name in classes_34(outcome):
            first.setdefault(name, seen[0])
        if seen[0] % every == 0:
            rate = seen[0] / (time.monotonic() - began)
            print(f"  ... {seen[0]} episodes, {rate:.1f}/s", flush=True)

    report = explore.explore(domain=domain, episodes=episodes, seed=seed, on_episode=progress)
    print(report.text())
    print(f"\nissue 34's classes found (first episode, of {report.episodes}):")
    for name in CLASSES_34:
        where = first.get(name)
        print(f"  {'found at ' + str(where) if where else 'not found':>16}  {name}")
    for name in sorted(set(first) - set(CLASSES_34)):
        print(f"  {'found at ' + str(first[name]):>16}  {name}")


class _Prefix(importlib.abc.MetaPathFinder):
    """Imports bt_raider and its mapped packages from another checkout, before anything else."""

    def __init__(self, root: Path) -> None:
        self.map = {
            "bt_raider": root / "bt_raider",
            "bt_raider.examples": root / "examples",
            "bt_raider.memory": root / "memory",
            "bt_raider.perception": root / "perception",
            "bt_raider.planners": root / "planners",
        }

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        folder = self.map.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def load_explorer(against: Path | None) -> ModuleType:
    """The explorer module: this tree's, or this explorer over the package at ``against``."""
    if against is None:
        import bt_raider.testing.explore as explore

        return explore
    if "bt_raider" in sys.modules:
        raise SystemExit("load the other tree before importing bt_raider")
    sys.dont_write_bytecode = True  # the other checkout stays read-only
    sys.meta_path.insert(0, _Prefix(against))
    import bt_raider.testing  # noqa: F401  (the other tree's kit, the explorer's parent)

    here = ROOT / "bt_raider" / "testing"
    for name in EXPLORER:
        full = f"bt_raider.testing.{name}"
        spec = importlib.util.spec_from_file_location(full, here / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
    import bt_raider

    where = Path(bt_raider.__file__).resolve().parent.parent
    if where != against.resolve():
        raise SystemExit(f"bt_raider came from {where}, not {against}")
    return sys.modules["bt_raider.testing.explore"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--suite", action="store_true", help="the test suite's exploration")
    parser.add_argument("--against", type=Path, help="another checkout of bt_raider (read-only)")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--shrink-budget", type=float, default=30.0, help="seconds per property")
    parser.add_argument("--trace-dir", type=Path, help="write each finding's trace there")
    parser.add_argument(
        "--room",
        action="append",
        help="explore only these rooms; an example's name, folder or scene (care_home): its domain",
    )
    parser.add_argument(
        "--model",
        action="append",
        help="only these guard models (absent, clears, alarms, made_up, prose; default all)",
    )
    parser.add_argument("--quiet", action="store_true", help="no shrunk tests, only the figures")
    parser.add_argument("--every", type=int, default=500, help="print progress every N episodes")
    args = parser.parse_args(argv)
    explore = load_explorer(args.against)
    root = args.against or ROOT
    code = "against " + str(args.against) if args.against else "this tree"
    domains = {room: domain_of(room) for room in args.room or ()}
    for room, domain in domains.items():
        if domain is None:
            continue
        episodes, seed = (
            (SUITE_DOMAIN_EPISODES, SUITE_DOMAIN_SEED) if args.suite else (args.episodes, args.seed)
        )
        print(f"bt_raider explorer on {code}: the user's domain {room}; seed {seed}")
        run_domain(explore, domain, episodes, seed, args.every)
    args.room = [room for room, domain in domains.items() if domain is None]
    if domains and not args.room:
        return 0
    chosen = rooms(root)
    if args.suite:
        args.episodes, args.seed = SUITE_EPISODES, SUITE_SEED
    if args.room:
        chosen = {k: v for k, v in chosen.items() if k in args.room}
    first: dict[str, int] = {}
    seen = [0]
    counts: dict[str, int] = {}
    began = time.monotonic()

    def progress(episode: Any) -> None:
        seen[0] += 1
        for name in classes_of(episode):
            first.setdefault(name, seen[0])
        for prop in sorted(episode.props):
            counts[prop] = counts.get(prop, 0) + 1
            if counts[prop] == 1:  # a run cut short still says what each first finding was
                said = next(str(v) for v in episode.violations if v.prop == prop)
                print(f"  first {prop} at {seen[0]}: {said[:160]}", flush=True)
        if seen[0] % args.every == 0:  # a run cut short still has its figures so far
            rate = seen[0] / (time.monotonic() - began)
            shown = " ".join(
                f"{p}={n}" for p, n in sorted(counts.items(), key=lambda kv: int(kv[0][1:]))
            )
            print(f"  ... {seen[0]} episodes, {rate:.1f}/s; {shown or 'no violation'}", flush=True)

    started = time.monotonic()
    report = explore.explore(
        rooms=chosen,
        episodes=args.episodes,
        seed=args.seed,
        shrink=not args.no_shrink,
        shrink_budget=args.shrink_budget,
        trace_dir=args.trace_dir,
        on_episode=progress,
        **({"models": tuple(args.model)} if args.model else {}),
    )
    print(f"bt_raider explorer on {code}: rooms {', '.join(chosen)}; seed {args.seed}")
    print(report.text() if not args.quiet else report.text().split("\n\n")[0])
    print(f"\nshrinking: {report.shrink_s:.1f} s in all; total {time.monotonic() - started:.1f} s")
    print(f"\nissue classes found (first episode, of {report.episodes}):")
    for name in (*CLASSES_32, *CLASSES):
        where = first.get(name)
        print(f"  {'found at ' + str(where) if where else 'not found':>16}  {name}")
    for name in sorted(set(first) - set(CLASSES) - set(CLASSES_32)):
        print(f"  {'found at ' + str(first[name]):>16}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
