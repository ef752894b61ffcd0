"""Recovery benchmark: does recovery fix the issue, with cooperative, vague and unhelpful people?

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

    python3 benchmarks/recovery.py                     # symbolic recovery, three kinds of people
    python3 benchmarks/recovery.py --person vague --show-failures 30
    python3 benchmarks/recovery.py --backend openai --model M --base-url URL   # LLMRecovery

Exits 2 with one line when ``../shared`` (the FloorPlan1 kitchen) is absent.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cases import build_cases

HERE = Path(__file__).resolve().parent
SETS = (
    ("cases", HERE / "cases" / "cases.jsonl", HERE / "cases" / "variants.json"),
    ("heldout", HERE / "cases" / "heldout.jsonl", HERE / "cases" / "heldout_variants.json"),
)
KINDS = ("cooperative", "vague", "unhelpful")
#: Types too big or too generic for a person to point with ("next to the floor").
NO_ANCHOR = {
    "Floor",
    "Wall",
    "CounterTop",
    "Window",
    "Cabinet",
    "Drawer",
    "StoveBurner",
    "StoveKnob",
    "Shelf",
    "ShelvingUnit",
    "LightSwitch",
    "Chair",
    "Stool",
}
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
#: Effects that already hold make the action pointless (action -> flag, value that holds).
ALREADY = {
    "open": ("isOpen", True),
    "close": ("isOpen", False),
    "turnon": ("isToggled", True),
    "turnoff": ("isToggled", False),
    "slice": ("isSliced", True),
}


# ---------------------------------------------------------------------------- gold


@dataclass
class Gold:
    """What the case's person knows, and what a correct run does."""

    action: str
    args: list[str | None]  # right objectId (or person id, location) per argument, None: any
    recoverable: bool
    choice: str | None = None  # the right candidate of an ambiguity
    choice_name: str | None = None
    description: str | None = None  # how a vague person names it
    noun: str = "one"
    person: str | None = None  # id of the person in the scene the case is about
    person_name: str | None = None


def _split_words(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower()


#: A person says "next to X" of something at most this far from X (m, horizontally).
NEXT_TO = 0.5


def _dist(a: Any, b: Any) -> float:
    pa, pb = a.position, b.position
    return math.hypot(pa[0] - pb[0], pa[2] - pb[2])


def describe(scene: Any, candidates: list[str], allowed: list[str]) -> tuple[str, str] | None:
    """The first allowed candidate a person can single out among all by a nearby object."""
    cands = [_maybe(scene, c) for c in candidates]
    if any(c is None for c in cands):  # people: named, not pointed at
        return None
    counts: dict[str, int] = {}
    for o in scene.objects:
        counts[o.type] = counts.get(o.type, 0) + 1
    anchors = [
        o
        for o in scene.objects
        if counts[o.type] == 1
        and o.type not in NO_ANCHOR
        and o.id not in candidates
        and o.type not in {c.type for c in cands}
    ]
    for c in sorted((o for o in cands if o.id in allowed), key=lambda o: o.id):
        for a in sorted(anchors, key=lambda a: _dist(a, c))[:3]:
            if _dist(a, c) > NEXT_TO:
                break
            d = sorted((_dist(a, o), o.id) for o in cands)
            if d[0][1] == c.id and d[1][0] - d[0][0] > 0.15:
                return c.id, f"the one next to the {_split_words(a.type)}"
    return None


#: The property an action needs of its object (AI2-THOR's flags).
NEEDS = {
    "pick": "pickupable",
    "open": "openable",
    "close": "openable",
    "turnon": "toggleable",
    "turnoff": "toggleable",
    "slice": "sliceable",
}


def feasible(scene: Any, action: str, ref: str | None) -> bool:
    """Whether ``action`` on ``ref`` can make sense at all (by the object's own flags)."""
    obj = _maybe(scene, ref) if ref else None
    if obj is None:
        return True
    need = NEEDS.get(action)
    if need and not obj.flag(need):
        return False
    flag = ALREADY.get(action)
    return not (flag and bool(obj.flag(flag[0])) == flag[1])


def gold_for(case: dict[str, Any], scene: Any, verdict: Any, parsed: Any) -> Gold:
    category = case["category"]
    grounding = dict(verdict.grounding)
    for phrase, ids in (case.get("grounding") or {}).items():
        grounding[phrase] = ids
    phrases = list(verdict.grounding) or [a.text for a in parsed.args]
    args: list[str | None] = []
    for p in phrases:
        ids = grounding.get(p) or []
        args.append(ids[0] if len(ids) == 1 else None)
    action = verdict.action or parsed.action
    gold = Gold(action, args, True)
    unnamed = [h for h in scene.humans if not h.name]
    if category == "wrong_property":
        gold.recoverable = False
    elif category == "not_present":
        person_missing = action in ("approach", "handover") and any(
            not (grounding.get(p) or []) for p in phrases[-1:]
        )
        gold.recoverable = bool(person_missing and unnamed)
        if gold.recoverable:
            gold.person, gold.person_name = unnamed[0].id, phrases[-1]
            if not phrases[-1][:1].isupper():  # "the user": she gives her own name
                gold.person_name = "Adriana"
    elif category == "wrong_state":
        flag = ALREADY.get(action)
        target = args[0] if args else None
        if flag and target:
            try:
                obj = scene.by_id(target)
            except Exception:
                obj = None
            if obj is not None and bool(obj.flag(flag[0])) == flag[1]:
                gold.recoverable = False
        if (
            case.get("pddl")
            and case.get("unsatisfied")
            and not any(
                re.search(r"\b(closed|opened|holding|hand_free|robot_at|clear)\b", u)
                for u in case["unsatisfied"]
            )
        ):
            gold.recoverable = False  # e.g. (has_water ...): nothing in the world makes it true
    elif category == "ambiguity":
        at, cands = 0, []
        for i, p in enumerate(phrases):
            if len(grounding.get(p) or []) >= 2:
                at, cands = i, sorted(grounding[p])
                break
        usable = [c for c in cands if feasible(scene, action, c)] if at == 0 else cands
        if action == "place" and at == 1:
            usable = [c for c in cands if (o := _maybe(scene, c)) is None or o.flag("receptacle")]
        if usable:
            found = describe(scene, cands, usable)
            gold.choice, gold.description = found if found else (usable[0], None)
            if len(args) > at:
                args[at] = gold.choice
            gold.choice_name = _name_of(scene, gold.choice)
            gold.noun = parsed.args[at].head if len(parsed.args) > at else "one"
        else:
            gold.recoverable = False
    if category != "ambiguity" and args and not feasible(scene, action, args[0]):
        gold.recoverable = False  # e.g. pick the Microwave while holding an apple
    for h in scene.humans:
        if h.id in args or (h.name and any(h.name == a for a in args)):
            gold.person = gold.person or h.id
    if gold.person is None and scene.humans and action in ("approach", "handover"):
        gold.person = scene.humans[0].id
    return gold


def _name_of(scene: Any, ref: str) -> str:
    try:
        return scene.human(ref).name or ref
    except Exception:
        return scene.name_of(ref)


# ---------------------------------------------------------------------------- people

TOPICS: list[tuple[str, str]] = [
    ("choose", r"^(which|where should i put|who should i hand)\b"),
    ("identity", r"who are you"),
    ("where", r"where can i find"),
    ("closer", r"closer"),
    ("move", r"out of the way|clear the way|move the"),
    ("open", r"\bopen\b.*\bfor me\b"),
    ("attention", r"look at me|looking at me"),
    ("hands", r"free (your )?hands|has free hands"),
]


def topic_of(text: str) -> str | None:
    for topic, rx in TOPICS:
        if re.search(rx, text, re.I):
            return topic
    return None


@dataclass
class Person:
    """A scripted person of one kind who answers from the case's gold and acts in the world."""

    kind: str
    world: Any
    gold: Gold
    style: int
    asked: dict[str, int] = field(default_factory=dict)
    did: list[str] = field(default_factory=list)

    # ---- HumanInterface (through CallbackHuman, which keeps the transcript)
    def ask(self, question: str) -> str:
        topic = topic_of(question) or "other"
        n = self.asked[topic] = self.asked.get(topic, 0) + 1
        if self.kind == "unhelpful":
            return self._unhelpful(question)
        if topic == "choose":
            return self._choose(question, n)
        if topic == "identity":
            name = self.gold.person_name or "Adriana"
            if self.kind == "vague" and n == 1 and self.style != 0:
                return "Just someone who lives here."
            self._act("identity", question)
            return f"I'm {name}." if self.kind == "cooperative" else f"Oh, sorry - it's {name}."
        if topic == "where":
            return (
                "We don't have any, sorry."
                if self.kind == "cooperative"
                else "Hmm, no idea where that would be."
            )
        if topic in ("closer", "move", "open", "attention", "hands"):
            if self.kind == "vague" and self.style == 1 and n == 1:
                return "In a minute, maybe."
            self._act(topic, question)
            return "Of course, done." if self.kind == "cooperative" else "Mm, there."
        return "Sure." if self.kind == "cooperative" else "Whatever you think."

    def say(self, text: str) -> None:
        topic = topic_of(text)
        if topic in ("attention", "hands") and self.kind != "unhelpful":
            n = self.asked[topic] = self.asked.get(topic, 0) + 1
            if not (self.kind == "vague" and self.style == 1 and n == 1):
                self._act(topic, text)

    def wait_for(self, event: str) -> bool:
        if self.kind == "unhelpful":
            return False
        topic = topic_of(event)
        if topic in ("attention", "hands"):
            self._act(topic, event)
        return True

    # ---- answers
    def _choose(self, question: str, n: int) -> str:
        g = self.gold
        name = g.choice_name or "the first one"
        if self.kind == "cooperative":
            return f"{name}, please."
        options = re.findall(r":\s*(.+)\?\s*$", question)
        listed = re.split(r",\s*|\s+or\s+", options[0]) if options else []
        ordinal = None
        if name in listed and listed.index(name) < len(ORDINALS):
            ordinal = f"the {ORDINALS[listed.index(name)]} one"
        words = g.description or ordinal or name
        if self.style == 0 or n >= 2:
            if n >= 2 and self.style == 2:
                return f"Sorry, I mean {words}."
            return words[0].upper() + words[1:] + "."
        if self.style == 1:
            return "Hmm, that one, over there."
        return f"The {g.noun}."  # names them all: partial

    def _unhelpful(self, question: str) -> str:
        style = self.style % 4
        if style == 0:
            return "I don't know."
        if style == 1:
            time.sleep(0.01)
            raise TimeoutError(f"no answer to {question!r} (the person stayed silent)")
        if style == 2:
            return "No. Do it yourself."
        return "Did you see the football last night?"

    # ---- acting in the world
    def _act(self, topic: str, text: str) -> None:
        w, g = self.world, self.gold
        scene = w.scene
        if topic == "identity" and g.person and g.person_name:
            w.set_human(g.person, name=g.person_name)
        elif topic in ("attention", "hands") and g.person:
            if topic == "attention":
                w.set_human(g.person, looking_at_robot=True)
            else:
                w.set_human(g.person, hands_free=True, holding=[])
        elif topic == "closer":
            target = next((a for a in g.args if a and _maybe(scene, a)), None)
            if target is not None and not any(o.id == target for o in scene.holding):
                ax, _, az = scene.agent_position
                hx, hz = scene.heading()
                w.move_object(target, (ax + 0.4 * hx, az + 0.4 * hz))
        elif topic == "open":
            low = text.lower()
            named = [
                o for o in scene.objects if re.search(rf"\b{re.escape(o.name.lower())}\b", low)
            ]
            named = named or [o for o in scene.objects if _split_words(o.type) in low]
            for o in named:
                if o.flag("openable") and not o.flag("isOpen"):
                    w.set_state(o.id, "isOpen", True)
                    break
        elif topic == "move":
            self._clear(text)
        self.did.append(topic)

    def _clear(self, text: str) -> None:
        w = self.world
        scene = w.scene
        low = text.lower()
        named = [
            o
            for o in scene.objects
            if re.search(
                r"\b(" + re.escape(o.name.lower()) + "|" + re.escape(_split_words(o.type)) + r")\b",
                low,
            )
        ]
        named_ids = {o.id for o in named}
        for target, blockers in list(scene.blocked.items()):
            if "clear the way" in low or named_ids & set(blockers):
                w.unblock(target)
        floor = next((o for o in scene.objects if o.type == "Floor"), None)
        gold_ids = {a for a in self.gold.args if a}
        for o in named:
            if o.id in gold_ids or o.flag("isPickedUp"):
                continue
            inside_target = bool(gold_ids & set(o.parents)) or bool(
                gold_ids & set(o.raw.get("receptacleObjectIds") or [])
            )
            if (
                inside_target
                or o.id in {b for bs in scene.blocked.values() for b in bs}
                or (not o.flag("pickupable"))
            ):
                x, _, z = o.position
                w.move_object(o.id, (x + 1.5, z + 1.5), parent=floor.id if floor else None)
            elif any(
                o.id in (scene.by_id(g).raw.get("receptacleObjectIds") or [])
                for g in gold_ids
                if _maybe(scene, g)
            ):
                x, _, z = o.position
                w.move_object(o.id, (x + 1.5, z + 1.5), parent=floor.id if floor else None)
        # What is in/on the right object and was named goes too (an apple in the bowl).
        for g in gold_ids:
            obj = _maybe(scene, g)
            if obj is None:
                continue
            for inner in list(obj.raw.get("receptacleObjectIds") or []):
                if inner in named_ids:
                    x, _, z = scene.by_id(inner).position
                    w.move_object(inner, (x + 1.5, z + 1.5), parent=floor.id if floor else None)


def _maybe(scene: Any, ref: str) -> Any:
    try:
        return scene.by_id(ref)
    except Exception:
        return None


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
    from bt_raider.recovery.symbolic import SymbolicRecovery

    if args.backend == "symbolic":
        return SymbolicRecovery()
    from bt_raider.llm.chat import OpenAIChat
    from bt_raider.recovery.llm import LLMRecovery

    opts = {
        k: v
        for k, v in (("model", args.model), ("base_url", args.base_url), ("api_key", args.api_key))
        if v is not None
    }
    return LLMRecovery(OpenAIChat(**opts))


def _recording_robot() -> type:
    from bt_raider.runtime.actions import SyncRobot

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
    from bt_raider.runtime.actions import ActionBehaviour, SyncRobot
    from bt_raider.runtime.guards import RaiderGuard
    from bt_raider.runtime.human import CallbackHuman
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
    world = SimWorld(scene_dict)
    robot = SyncRobot(world)
    child_robot = _Recording(world)  # the guarded action's own calls, apart from recovery's
    person = Person(kind, world, gold, style)
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
        help="kind of person (repeatable; default: all three)",
    )
    parser.add_argument(
        "--backend",
        default="symbolic",
        choices=("symbolic", "openai"),
        help="recovery planner: SymbolicRecovery or LLMRecovery over a chat model",
    )
    parser.add_argument("--model")
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
    args = parser.parse_args(argv)
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
                    i % 3 if kind != "unhelpful" else i % 4,
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
