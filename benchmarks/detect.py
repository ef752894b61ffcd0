"""Issue detection benchmark: grounding, detection and explanation success, and latency.

Runs the case set of ``benchmarks/cases`` (built from the real FloorPlan1 kitchen by
``cases/build_cases.py``) through one or more backends and prints RAIDER's metrics (§4):

- **Grnd** (grounding success): over cases that require grounding (they carry
  ``grounding``), the share where every argument phrase grounds to exactly the expected
  objectIds — or, for an ambiguity case, where the ambiguity is detected (the paper's rule).
- **Det** (detection success): the verdict's category is the expected one.
- **Expl** (explanation success), the rule used here: the category is right, the grounding is
  right when the case requires one, the explanation names every object the case lists in
  ``explain`` (its display name, case-insensitively, as a word or spelled out: "CoffeeMachine"
  or "coffee machine"), and it states the category's reason — it matches the category's
  pattern in :data:`REASONS` (e.g. obstructed: "block", "obstruct", "inside it", "occupied").
  The patterns accept any wording a person would read as that reason, not one backend's.
- **p50 / p95**: wall time of ``check`` per case, in milliseconds.

By default the embedded symbolic reasoner and RAIDER's *Precond* baseline run side by side::

    python3 benchmarks/detect.py
    python3 benchmarks/detect.py --backend symbolic --repeat 20      # steadier latency
    python3 benchmarks/detect.py --backend openai --base-url http://127.0.0.1:8000/v1 --model M

``--alfred`` also parses ALFRED's human step descriptions (valid_seen) and scores the action and
its arguments against the annotated high-level PDDL arguments, and HuRIC's frames beside them
(:func:`alfred_records`, :func:`huric_parse_check`). How the comparison is made fair, by rule:

- ALFRED's argument names are AI2-THOR type names in lower case; a phrase names one when a type
  the product's lexicon gives for it, lower cased, is that name (:func:`phrase_types`: the
  longest known sub-phrase, rightmost first, as English compounds end in their head);
- a slice is named by its whole ("tomato" for TomatoSliced); "it" and "a slice" mean what an
  earlier step named or sliced;
- a destination or a walk's end counts through what it is on or in ("on the sponge on the
  counter" is on the counter), and a walk's through what the place holds ("the table with the
  lamp"); never through "left of", "next to";
- ALFRED's GotoLocation to an *object* the next step picks up, slices or toggles ("go to the
  potato") is reported apart: people name that object's place ("walk to the fridge"), which the
  annotations do not give, so those steps cannot be scored fairly either way;
- a fixed fifth of the tasks (sha256 of the task id) is held out: it was never looked at while
  the parser was developed, and its figures are printed beside the rest;
- "all, arguments named" is a breakdown, not the headline: the steps where every annotated
  argument is named by some phrase of the step (:func:`types_named`) or read through "it". In
  the others ALFRED names what the person never said ("go to the sink" annotated as the
  countertop beside it, "the vase" as a GlassBottle), which no parser can read.

``--alfred-misses N`` groups the argument misses of the development tasks by cause (first: the
argument is named nowhere in the step), lists the commonest disagreements of names (the person's
word, read through the lexicon, against ALFRED's type) and shows N examples of each cause.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# The patch format lives with the case generator in cases/, beside this script.
from cases import build_cases

HERE = Path(__file__).resolve().parent
#: ``BT_RAIDER_SHARED`` points at the shared data elsewhere (a worktree has no ../shared).
SHARED = Path(os.environ.get("BT_RAIDER_SHARED") or HERE.parents[1] / "shared")
CASES = HERE / "cases" / "cases.jsonl"

#: What an explanation must say for each category (case-insensitive regular expressions).
REASONS: dict[str, str] = {
    "none": r"\bcan\b|preconditions\b.*\bhold\b|no issue|feasible",
    "ambiguity": r"ambiguous|could (?:be|mean)|matches|which one|several|multiple|more than one",
    "not_present": r"\bno\b|not (?:present|in the scene|in sight|recogni[sz]ed|found|visible)"
    r"|cannot (?:find|see)|absent|nobody",
    "out_of_reach": r"reach|too far|away|distance",
    "obstructed": r"block|obstruct|inside it|on top of it|\bon it\b|\bin it\b|occupied|in the way",
    "wrong_state": r"already|closed|not open|\bis (?:not )?(?:open|on|off|sliced)\b|turned (?:on|off)"
    r"|not looking|attention|hands are not free|not free|does not hold",
    "wrong_property": r"not (?:pickupable|openable|toggleable|sliceable|a receptacle)|property"
    r"|cannot be \w+: it is not",
    "robot_state": r"hold|hand|\barm\b|gripper|knife",
}


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (display name, or its words: CoffeeMachine -> coffee machine)."""
    low = text.lower()
    forms = {name.lower()}
    spelled = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).replace("_", " ").lower()
    forms.add(spelled)
    return any(re.search(r"(?<![\w|])" + re.escape(f) + r"(?![\w|])", low) for f in forms)


def grounding_ok(case: dict[str, Any], verdict: Any) -> bool | None:
    expected = case.get("grounding")
    if expected is None:
        return None
    if case["category"] == "ambiguity":
        return verdict.category.value == "ambiguity"
    got = verdict.grounding
    return all(
        sorted(got.get(phrase, ["<missing>"])) == sorted(ids) for phrase, ids in expected.items()
    )


def explanation_ok(case: dict[str, Any], verdict: Any, det: bool, grnd: bool | None) -> bool:
    if not det or grnd is False:
        return False
    text = verdict.explanation or ""
    if not all(mentions(text, n) for n in case.get("explain", [])):
        return False
    return re.search(REASONS[case["category"]], text, re.IGNORECASE) is not None


def make(backend: str, args: argparse.Namespace) -> Any:
    if backend == "precond":
        from bt_raider.checking.precond import PrecondBaseline

        return PrecondBaseline()
    from bt_raider.checking.registry import make_checker

    opts: dict[str, Any] = {}
    if backend != "symbolic":
        opts.update(
            {
                k: v
                for k, v in (
                    ("model", args.model),
                    ("base_url", args.base_url),
                    ("api_key", args.api_key),
                )
                if v is not None
            }
        )
    if args.time_limit is not None:
        opts["time_limit"] = args.time_limit
    return make_checker(backend, **opts)


def load(
    cases_path: Path, variants_path: Path | None = None
) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    cases = [json.loads(line) for line in cases_path.read_text().splitlines() if line.strip()]
    variants_path = variants_path or cases_path.parent / "variants.json"
    variants = json.loads(variants_path.read_text())
    return cases, variants


def run_backend(
    name: str, checker: Any, cases: list[dict[str, Any]], scenes: dict[str, Any], repeat: int
) -> dict[str, Any]:
    from bt_raider.checking.contract import Query

    rows = []
    for case in cases:
        scene = scenes[case["variant"]]
        query = Query(
            case["query"],
            preconditions=tuple(case.get("preconditions", ())),
            unsatisfied=tuple(case.get("unsatisfied", ())),
            bindings=dict(case.get("bindings", {})),
        )
        times = []
        verdict = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            try:
                verdict = checker.check(scene, query)
            except Exception as exc:  # a backend that raises scores a miss, and says why
                verdict = None
                error = f"{type(exc).__name__}: {exc}"
            times.append(time.perf_counter() - t0)
        if verdict is None:
            rows.append(
                {
                    "case": case,
                    "det": False,
                    "grnd": False if "grounding" in case else None,
                    "expl": False,
                    "ms": statistics.median(times) * 1000,
                    "got": "error",
                    "explanation": error,
                }
            )
            continue
        det = verdict.category.value == case["category"]
        grnd = grounding_ok(case, verdict)
        rows.append(
            {
                "case": case,
                "det": det,
                "grnd": grnd,
                "expl": explanation_ok(case, verdict, det, grnd),
                "ms": statistics.median(times) * 1000,
                "got": verdict.category.value,
                "explanation": verdict.explanation,
                "grounding": verdict.grounding,
            }
        )
    return {"name": name, "rows": rows}


def pct(values: list[bool]) -> str:
    return f"{100.0 * sum(values) / len(values):5.1f}%" if values else "    -"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def report(results: list[dict[str, Any]], show_failures: int) -> None:
    print(
        f"\n{'backend':10} {'cases':>5} {'Grnd':>7} {'Det':>7} {'Expl':>7} {'p50 ms':>8} {'p95 ms':>8}"
    )
    for res in results:
        rows = res["rows"]
        g = [r["grnd"] for r in rows if r["grnd"] is not None]
        ms = [r["ms"] for r in rows]
        print(
            f"{res['name']:10} {len(rows):5d} {pct(g):>7} {pct([r['det'] for r in rows]):>7} "
            f"{pct([r['expl'] for r in rows]):>7} {percentile(ms, 0.5):8.2f} {percentile(ms, 0.95):8.2f}"
        )
    for key, title in (
        ("category", "explanation success by category"),
        ("level", "explanation success by abstraction level"),
        ("form", "explanation success by query form"),
    ):
        groups = sorted({r["case"][key] for r in results[0]["rows"]})
        print(f"\n{title}")
        print(f"{'':16}" + "".join(f"{res['name']:>12}" for res in results))
        for grp in groups:
            line = f"{grp:16}"
            for res in results:
                vals = [r["expl"] for r in res["rows"] if r["case"][key] == grp]
                line += f"{pct(vals):>12}"
            n = sum(1 for r in results[0]["rows"] if r["case"][key] == grp)
            print(line + f"   (n={n})")
    if show_failures:
        for res in results:
            bad = [r for r in res["rows"] if not r["expl"]]
            print(
                f"\n{res['name']}: {len(bad)} explanation failures"
                + (f" (first {show_failures})" if len(bad) > show_failures else "")
            )
            for r in bad[:show_failures]:
                c = r["case"]
                print(
                    f"  {c['id']:18} {c['query']!r}: expected {c['category']}, got {r['got']}"
                    f" -- {r['explanation']}"
                )


ALFRED = SHARED / "data" / "alfred" / "alfred_valid_seen_annotations.jsonl"
ALFRED_ACTIONS = {
    "PickupObject": {"pick"},
    "PutObject": {"place"},
    "OpenObject": {"open"},
    "CloseObject": {"close"},
    "SliceObject": {"slice"},
    "ToggleObject": {"turnon", "turnoff"},
    "GotoLocation": {"approach"},
}


#: The role of each annotated ALFRED argument, per high-level action (in ``args`` order).
ALFRED_ROLES = {
    "PickupObject": ("object",),
    "PutObject": ("object", "destination"),
    "OpenObject": ("object",),
    "CloseObject": ("object",),
    "SliceObject": ("object",),
    "ToggleObject": ("object",),
    "GotoLocation": ("target",),
}
_PRONOUNS = {"it", "them", "this", "that", "one", ""}


def phrase_types(head: str, lexicon: Any) -> set[str]:
    """AI2-THOR types (lowercase) a head noun may name: its longest sub-phrase the lexicon
    knows, the rightmost of equal length, since English compounds end in their head ("the
    black kitchen sink" -> sink -> {sink, sinkbasin}; "the top drawer" is a drawer, not a
    counter top; "the bread knife" a knife), or the squashed words.

    ALFRED's argument names are AI2-THOR's type names in lower case ("countertop",
    "sinkbasin", "diningtable"), so a phrase names an argument when one of these types, lower
    cased, equals it: the comparison goes through the product's lexicon, never a table of
    ALFRED's names."""
    words = head.split()
    for size in range(len(words), 0, -1):
        for i in range(len(words) - size, -1, -1):
            sub = " ".join(words[i : i + size])
            types = lexicon.types_for(sub)
            if types:
                return {t.lower() for t in types}
    return {head.replace(" ", "").lower()} if head else set()


_SLICE_WORDS = {"slice", "slices", "piece", "pieces", "half", "halves", "wedge", "chunk"}


def _bare_slice(head: str, lexicon: Any) -> bool:
    """Whether a head names a slice of nothing said ("a slice", "the chilled slice"): like
    "it", it means what an earlier step sliced (ALFRED names a slice by its whole)."""
    words = head.split()
    return bool(words) and words[-1] in _SLICE_WORDS and not lexicon.types_for(head)


#: Relations by which a thing is at its anchor's place: a thing on or in Y is at Y.
_AT_PLACE = {"on top of", "inside"}


def place_chain(arg: Any) -> list[str]:
    """The heads of a destination phrase and of every anchor it is on or in: placing a slice
    "on the sponge on the counter" puts it on the counter too; walking to "the knife on the
    counter" ends at the counter. Only support and containment count, never "left of". For a
    walk, what the place holds counts too: "the table with the lamp" is where the lamp is."""
    heads = [arg.head]
    if arg.role == "target" and arg.detail is not None:
        heads.append(arg.detail.head)
    while arg.relation in _AT_PLACE and arg.anchor is not None:
        arg = arg.anchor
        heads.append(arg.head)
    return heads


def types_named(text: str, lexicon: Any) -> set[str]:
    """The AI2-THOR types (lower case, a slice by its whole) that any sub-phrase of one to three
    words of ``text`` names through the lexicon: what a person could be read as naming at all."""
    words = re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()
    out: set[str] = set()
    for size in (1, 2, 3):
        for i in range(len(words) - size + 1):
            out |= {t.lower() for t in lexicon.types_for(" ".join(words[i : i + size]))}
    return out | {t.removesuffix("sliced") for t in out}


def alfred_held_out(task_id: str) -> bool:
    """Whether a task is in the held-out fifth: sha256 of its id, modulo 5, is 0 (fixed, so
    the split never depends on what the parser gets right; 55 of valid_seen's 251 tasks)."""
    return int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % 5 == 0


def alfred_records(path: Path = ALFRED) -> list[dict[str, Any]]:
    """Parse ALFRED's human step descriptions; score the action and its arguments, per step.

    Each description goes through :func:`~bt_raider.checking.steps.split_steps` ("Open the
    fridge, put the egg inside and close it" is three steps) and each step through the parser.
    **action**: a step has the annotated high-level action (``ALFRED_ACTIONS``; a route counts
    as an approach to where it ends). **args**: for those, every annotated argument
    (``high_pddl`` args: object, receptacle, destination) is among the types the step's
    phrase names through the lexicon (:func:`phrase_types`); "it" is the last phrase an earlier
    step of the same task named, "a slice" what its last slice step named.

    Returns one record per scored step: ``task``, ``held_out``, ``action`` (ALFRED's), ``text``,
    ``found`` (the action is right), ``args_ok``, and ``args``: per annotated argument its
    ``role``, ``want``, the ``head`` read and the ``types`` it names.
    """
    from bt_raider.checking.parse import parse_query
    from bt_raider.checking.steps import split_steps
    from bt_raider.errors import QueryError
    from bt_raider.perception.lexicon import CategoryLexicon

    lexicon = CategoryLexicon.default()
    records: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        task = json.loads(line)
        held = alfred_held_out(task["task_id"])
        steps = [a for a in task["high_pddl"] if a["action"] != "NoOp"]
        for ann in task["annotations"]:
            if len(ann["high_descs"]) != len(steps):
                continue
            last: list[str] = []  # heads named so far in this task, for "it"
            sliced: list[str] = []  # what the task's slice steps named, for "a slice"
            for k, (step, text) in enumerate(zip(steps, ann["high_descs"], strict=True)):
                want = ALFRED_ACTIONS.get(step["action"])
                parsed = []
                for piece in split_steps(text):
                    try:
                        parsed.append(parse_query(piece))
                    except QueryError:
                        continue
                if want is None:
                    last.extend(a.head for p in parsed for a in p.args if a.head not in _PRONOUNS)
                    continue
                left = left_over_words(parsed)
                name = step["action"]
                found = [p for p in parsed if p.action in want]
                # A route ends at its destination: its last approach; other actions: the first.
                match = (found[-1] if name == "GotoLocation" else found[0]) if found else None
                after = steps[k + 1] if k + 1 < len(steps) else None
                named = types_named(text, lexicon)
                rec: dict[str, Any] = {
                    "task": task["task_id"],
                    "held_out": held,
                    "action": name,
                    # ALFRED's "go to the potato": the next step acts on it; people name its place.
                    "to_object": name == "GotoLocation"
                    and after is not None
                    and after["action"] in ("PickupObject", "SliceObject", "ToggleObject")
                    and after["args"][:1] == step["args"][:1],
                    "text": text,
                    # Every annotated argument is named somewhere in the step (or by "it").
                    "named": all(a.lower() in named for a in step["args"]),
                    "found": match is not None,
                    # Words of its phrases the one reader cannot account for: the check asks.
                    "left_over": left,
                    "args_ok": False,
                    "args": [],
                }
                if match is not None:
                    # "Open the drawer, put the knife in it": earlier pieces count for "it".
                    before = parsed[: parsed.index(match)]
                    context = last + [a.head for p in before for a in p.args]
                    context = [h for h in context if h not in _PRONOUNS]
                    for role, value in zip(ALFRED_ROLES[name], step["args"], strict=False):
                        arg = match.arg(role) or (match.arg("object") if role == "target" else None)
                        head = said = arg.head if arg is not None else ""
                        if _bare_slice(head, lexicon) and sliced:
                            head = sliced[-1]  # "pick up a slice": of what was sliced
                        if head in _PRONOUNS:
                            avoid = (
                                {match.arg("object").head}
                                if role != "object" and match.arg("object")
                                else set()
                            )
                            head = next((h for h in reversed(context) if h not in avoid), "")
                        referred = head != said  # "it", "a slice": what an earlier step named
                        heads = [head]
                        if role != "object" and arg is not None and said not in _PRONOUNS:
                            heads = place_chain(arg)
                        types = set().union(*(phrase_types(h, lexicon) for h in heads))
                        # ALFRED names a slice by its whole ("tomato" for TomatoSliced).
                        types |= {t.removesuffix("sliced") for t in types}
                        rec["args"].append(
                            {
                                "role": role,
                                "want": value.lower(),
                                "said": said,
                                "head": " / ".join(heads),
                                "types": sorted(types),
                                "ok": value.lower() in types,
                                "referred": referred,
                            }
                        )
                    rec["args_ok"] = all(a["ok"] for a in rec["args"])
                    rec["named"] = all(
                        a["ok"] or a["want"] in named or a["referred"] for a in rec["args"]
                    )
                records.append(rec)
                last.extend(a.head for p in parsed for a in p.args if a.head not in _PRONOUNS)
                sliced.extend(p.args[0].head for p in parsed if p.action == "slice")
    return records


def left_over_words(parsed: list[Any]) -> list[tuple[str, tuple[str, ...]]]:
    """``(phrase, words)`` for each object phrase of ``parsed`` queries (natural language) with
    words the one reader (:mod:`bt_raider.perception.reference`) cannot account for: where the
    check now asks ("I did not understand ...") instead of acting."""
    from bt_raider.checking.designation import left_over

    out = []
    for p in parsed:
        if p.source != "natural":
            continue
        for arg in p.args:
            if arg.role == "person" or arg.head in ("me", "it", ""):
                continue
            words = left_over(arg.text)
            if words:
                out.append((arg.text, words))
    return out


def left_over_table(records: list[dict[str, Any]], title: str, examples: int = 0) -> None:
    """The share of steps whose words leave one over (the check asks), with examples."""
    asked = [r for r in records if r["left_over"]]
    print(
        f"  {title:34} {len(records):5d} steps, asked because a word was left over: "
        f"{100.0 * len(asked) / max(1, len(records)):5.1f}% ({len(asked)})"
    )
    if examples:
        counts: dict[str, int] = {}
        for r in asked:
            for _phrase, words in r["left_over"]:
                for w in words:
                    counts[w] = counts.get(w, 0) + 1
        common = sorted(counts.items(), key=lambda kv: -kv[1])[:15]
        print("    commonest words left over: " + ", ".join(f"{w} ({n})" for w, n in common))
        for r in asked[:: max(1, len(asked) // examples)][:examples]:
            phrase, words = r["left_over"][0]
            print(f"    {r['text'][:70]!r}: {phrase!r} -> {', '.join(map(repr, words))}")


def alfred_table(records: list[dict[str, Any]], title: str) -> None:
    """Print the action and argument figures of ``records`` per ALFRED action.

    GotoLocation is also split by what ALFRED names: a place ("go to the countertop") or the
    object the next step picks up, slices or toggles ("go to the potato"), where people name
    the object's place instead ("walk to the fridge"), which the annotations do not give; the
    last line leaves those steps out."""
    print(f"\nALFRED {title}: the annotated action, and its arguments where it is right")
    print("  (args: of those with the right action; both: action and args right, of all)")
    print(f"  {'action':24} {'n':>5} {'action':>8} {'args':>8} {'both':>8}")

    def line(name: str, rows: list[dict[str, Any]]) -> None:
        n, h, a = len(rows), sum(r["found"] for r in rows), sum(r["args_ok"] for r in rows)
        print(
            f"  {name:24} {n:5d} {100.0 * h / max(1, n):7.1f}%"
            f" {100.0 * a / max(1, h):7.1f}% {100.0 * a / max(1, n):7.1f}%"
        )

    for name in sorted({r["action"] for r in records}):
        line(name, [r for r in records if r["action"] == name])
        if name == "GotoLocation":
            goto = [r for r in records if r["action"] == name]
            line("  to a place", [r for r in goto if not r["to_object"]])
            line("  to an object", [r for r in goto if r["to_object"]])
    line("all", records)
    line("all but Goto to an object", [r for r in records if not r["to_object"]])
    line("all, arguments named", [r for r in records if r["named"]])


def alfred_parse_check(path: Path = ALFRED, misses: int = 0) -> None:
    """ALFRED's figures on the development tasks, the held-out fifth and all, then HuRIC's."""
    if not path.exists():
        print(f"ALFRED annotations not found at {path}")
        return
    records = alfred_records(path)
    dev = [r for r in records if not r["held_out"]]
    alfred_table(dev, "development tasks (4/5)")
    alfred_table(
        [r for r in records if r["held_out"]], "held-out tasks (1/5, sha256(task_id) % 5 == 0)"
    )
    alfred_table(records, "valid_seen, all tasks")
    print("\nALFRED: steps the check asks about because a word was left over (the one reader)")
    left_over_table(dev, "development tasks (4/5)")
    left_over_table([r for r in records if r["held_out"]], "held-out tasks (1/5)")
    left_over_table(records, "valid_seen, all tasks", examples=12)
    huric_parse_check()
    if misses:
        alfred_misses(dev, misses)


def alfred_cause(arg: dict[str, Any], lexicon: Any, text: str = "") -> str:
    """Why an argument missed, for the breakdown (a reading aid, not a score). An argument no
    sub-phrase of the step names (:func:`types_named`) is ALFRED's word, not the person's: "go
    to the sink" annotated as the countertop beside it, a vase as a GlassBottle."""
    if text and not arg.get("referred") and arg["want"] not in types_named(text, lexicon):
        return "ALFRED's argument named nowhere in the step"
    if not arg["head"]:
        return "no phrase for the role" if arg["said"] == "" else "pronoun: nothing before it"
    if arg["said"] in _PRONOUNS:
        return "pronoun: resolved to another object"
    if not any(lexicon.types_for(w) for w in arg["head"].split()):
        return "head unknown to the lexicon"
    return "head names another type"


def alfred_misses(records: list[dict[str, Any]], limit: int) -> None:
    """The argument misses of ``records`` grouped by cause and role, with examples."""
    from bt_raider.perception.lexicon import CategoryLexicon

    lexicon = CategoryLexicon.default()
    groups: dict[tuple[str, str, str], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for rec in records:
        if not rec["found"] or rec["args_ok"]:
            continue
        arg = next(a for a in rec["args"] if not a["ok"])
        key = (alfred_cause(arg, lexicon, rec["text"]), rec["action"], arg["role"])
        groups.setdefault(key, []).append((rec, arg))
    n = sum(len(v) for v in groups.values())
    print(f"\nALFRED argument misses on these tasks: {n}, by cause (first failing argument)")
    for key, rows in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(rows):4d}  {key[0]} -- {key[1]} {key[2]}")
        for rec, arg in rows[:limit]:
            print(f"          want {arg['want']!r} read {arg['head']!r}: {rec['text'].strip()!r}")
    pairs: dict[tuple[str, str], int] = {}
    for key, rows in groups.items():
        if key[0] not in ("head names another type", "ALFRED's argument named nowhere in the step"):
            continue
        for _rec, arg in rows:
            pair = (arg["want"], "/".join(arg["types"][:3]))
            pairs[pair] = pairs.get(pair, 0) + 1
    print(
        "\n  commonest disagreements of names (ALFRED's type <- the types the person's word names)"
    )
    for (want, read), count in sorted(pairs.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {count:4d}  {want} <- {read}")


HURIC = SHARED / "data" / "huric" / "huric_en_commands.jsonl"
#: HuRIC frames -> the actions that carry them out, and the element whose head is the object.
HURIC_ACTIONS: dict[str, tuple[set[str], str]] = {
    "Bringing": ({"handover", "approach", "place", "pick"}, "Theme"),
    "Taking": ({"pick"}, "Theme"),
    "Placing": ({"place"}, "Theme"),
    "Releasing": ({"place"}, "Theme"),
    "Giving": ({"handover"}, "Theme"),
    "Change_operational_state": ({"turnon", "turnoff"}, "Device"),
    "Closure": ({"open", "close"}, "Containing_object"),
    "Motion": ({"approach"}, "Goal"),
    "Arriving": ({"approach"}, "Goal"),
    "Manipulation": ({"pick"}, "Entity"),
}


def huric_parse_check(path: Path = HURIC) -> None:
    """HuRIC's commands beside ALFRED: each frame of :data:`HURIC_ACTIONS` is found when a step
    of the sentence has one of its actions; its argument is right when the frame element's
    head is in that step's phrase for the role (the object; the target of an approach)."""
    from bt_raider.checking.parse import parse_query
    from bt_raider.checking.steps import split_steps
    from bt_raider.errors import QueryError

    if not path.exists():
        print(f"HuRIC commands not found at {path}")
        return
    total = hits = args = 0
    sentences: list[dict[str, Any]] = []
    for line in path.read_text().splitlines():
        cmd = json.loads(line)
        parsed = []
        for piece in split_steps(cmd["sentence"]):
            try:
                parsed.append(parse_query(piece))
            except QueryError:
                continue
        sentences.append({"text": cmd["sentence"], "left_over": left_over_words(parsed)})
        for frame in cmd["frames"]:
            spec = HURIC_ACTIONS.get(frame["frame"])
            if spec is None:
                continue
            actions, element = spec
            total += 1
            match = next((p for p in parsed if p.action in actions), None)
            if match is None:
                continue
            hits += 1
            head = next(
                (e.get("head") or "" for e in frame["elements"] if e["type"] == element), ""
            ).lower()
            said = match.args
            if element == "Theme" and match.action == "approach" and match.pick_args:
                said = list(match.pick_args)  # "bring the pillow to the couch": what is carried
            phrase = said[0].text.lower() if said else ""
            args += bool(head) and head in phrase.split()
    print(
        f"  {'HuRIC frames':14} {total:5d} {100.0 * hits / max(1, total):7.1f}%"
        f" {100.0 * args / max(1, hits):7.1f}% {100.0 * args / max(1, total):7.1f}%"
    )
    left_over_table(sentences, "HuRIC commands", examples=6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", type=Path, default=CASES, help="cases.jsonl (variants.json beside it)"
    )
    parser.add_argument(
        "--variants",
        type=Path,
        help="variants.json for the cases (default: variants.json beside --cases)",
    )
    parser.add_argument(
        "--backend",
        action="append",
        choices=("symbolic", "precond", "openai", "transformers"),
        help="backend to run (repeatable; default: symbolic and precond)",
    )
    parser.add_argument("--model")
    parser.add_argument("--base-url")
    parser.add_argument("--api-key")
    parser.add_argument("--time-limit", type=float)
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs per case; latency is their median"
    )
    parser.add_argument(
        "--show-failures",
        type=int,
        default=20,
        metavar="N",
        help="list up to N failing cases per backend (0: none)",
    )
    parser.add_argument("--json", type=Path, help="also write per-case results here")
    parser.add_argument(
        "--alfred",
        action="store_true",
        help="also parse ALFRED's human step descriptions and report how often the parser "
        "finds the annotated action (an out-of-sample check of the query parser)",
    )
    parser.add_argument(
        "--alfred-misses",
        type=int,
        default=0,
        metavar="N",
        help="with --alfred: group the argument misses of the development tasks by cause and "
        "show N of each (the held-out tasks are never shown)",
    )
    args = parser.parse_args(argv)
    if not build_cases.KITCHEN.is_file():  # a clone without ../shared beside it
        print(
            f"detect.py: the cases need {build_cases.KITCHEN} (../shared), missing", file=sys.stderr
        )
        return 2
    if args.alfred:
        alfred_parse_check(misses=args.alfred_misses)

    from bt_raider.perception.scene import Scene

    cases, variants = load(args.cases, args.variants)
    kitchen = build_cases.load_kitchen()
    scenes = {
        v: Scene(build_cases.build_scene(variants, v, kitchen), source=f"variant {v}")
        for v in variants
    }
    n_obj = len(scenes["base"]) if "base" in scenes else 0
    print(
        f"{len(cases)} cases on {len(variants)} variants of the {n_obj}-object FloorPlan1 kitchen"
    )
    backends = args.backend or ["symbolic", "precond"]
    results = []
    for name in backends:
        checker = make(name, args)
        # One untimed pass warms caches (imports, the lexicon) so latency is steady-state.
        run_backend(name, checker, cases[:3], scenes, 1)
        results.append(run_backend(name, checker, cases, scenes, max(1, args.repeat)))
    report(results, args.show_failures)
    if args.json:
        out = [
            {
                "backend": res["name"],
                **{k: v for k, v in r.items() if k != "case"},
                "id": r["case"]["id"],
            }
            for res in results
            for r in res["rows"]
        ]
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
