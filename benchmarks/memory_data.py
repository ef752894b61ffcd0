"""Knowledge bases for the memory benchmarks, built from real annotated commands.

Sources (read-only, ``../shared/data``):

* HuRIC: 370 robot commands with frame annotations. Gold actions come from the frames: the
  frame and lexical unit give the operation (``Bringing`` -> bring, ``Change_operational_state``
  with state *off* -> turn_off ...), the Theme (Device, Container_portal ...) head the object
  (its span for compounds: "washing machine", "coffee machine"), the Goal head the location;
  pronoun heads take the previous annotated object.
* ALFRED valid-seen: step instructions (``high_descs``) aligned one to one with their PDDL step
  (``high_pddl``): ``PickupObject(apple)`` -> (take, apple), ``PutObject(apple, fridge)`` ->
  (put, apple, fridge), ``ToggleObject`` -> turn_on, ``SliceObject`` -> slice. A step is kept
  only when its label describes its sentence: the sentence names the step's object
  (``ALFRED_SURFACE``) and states its action (``PDDL_VERBS``), and mentions no open/close
  sub-step the high-level PDDL leaves out. Left out entirely: ``GotoLocation`` (its argument
  is where the agent ends up, often an object the sentence never names), ``Cool/Heat/
  CleanObject`` (annotators spell them out as several actions: "put the apple in the fridge,
  wait, take it out"), and task descriptions (summaries of several steps).

Four HuRIC heads that are not the head of their own annotated span ("the book with the blue
cover" -> cover) are corrected (``HURIC_HEAD_ERRATA``; ``build(errata=False)`` keeps them).
Object names of both sources are folded into one annotation vocabulary (``GOLD_CLASS``: tv ->
television, butterknife -> knife ...), independent of bt_raider's lexicon.

Conflicting variants are derived from these with a known effect on the gold actions: on <-> off,
open <-> close, pick up <-> put down, put X on Y <-> take X from Y, an object swapped for another
object of the same operation, and a negation. Conflict labels between two commands are computed
from these gold actions only (never from bt_raider's extractor): the paper's phi1 (same object,
different operation), phi2 (same operation, different object) and negation, on one-to-one
aligned actions, without the similarity predicate.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
HURIC = SHARED / "huric" / "huric_en_commands.jsonl"
ALFRED = SHARED / "alfred" / "alfred_valid_seen_annotations.jsonl"


def missing_data(script: str) -> str | None:
    """The one line a script prints (then exits 2) when the data sets are not there."""
    missing = [p for p in (HURIC, ALFRED) if not p.is_file()]
    if not missing:
        return None
    return f"{script}: needs {missing[0]} (../shared/data), missing"


@dataclass(frozen=True)
class Gold:
    """One annotated action: operation, object, location, negation."""

    op: str
    obj: str | None
    loc: str | None = None
    neg: bool = False
    word: str | None = field(default=None, compare=False)  # how the sentence names obj


@dataclass
class Command:
    """A command with its gold actions, as stored in the knowledge base."""

    id: str
    text: str
    gold: tuple[Gold, ...]
    source: str  # huric | alfred-step | alfred-task
    kind: str = "original"  # original | on_off | open_close | pick_put | put_take | swap | negation
    parent: str | None = None
    frames: list[dict] = field(default_factory=list)

    @property
    def goal(self) -> str:
        """A goal string for the few-shot pair (information -> goal)."""
        parts = []
        for g in self.gold:
            args = ", ".join(a for a in (g.obj, g.loc) if a)
            parts.append(f"{'~' if g.neg else ''}{g.op}({args})")
        return " & ".join(parts) or "noop()"


# --------------------------------------------------------------------------- gold vocabulary


def singular(word: str) -> str:
    """Plain singular for gold heads (independent of bt_raider's extractor)."""
    w = word.lower()
    if len(w) <= 3 or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith("ves"):
        return w[:-3] + ("fe" if w.endswith("knives") else "f")
    if w.endswith(("sses", "xes", "ches", "shes", "oes")):
        return w[:-2]
    if w.endswith("s"):
        return w[:-1]
    return w


#: ALFRED PDDL object -> the words that name it unambiguously (first: the display word). A
#: step is kept only when its object is named this way in the sentence, so the label is
#: grounded in the text (annotators sometimes describe another object, or say "it").
ALFRED_SURFACE = {
    "alarmclock": ["alarm clock", "clock", "alarmclock"],
    "armchair": ["armchair", "arm chair", "chair"],
    "baseballbat": ["baseball bat", "bat"],
    "basketball": ["basketball", "ball"],
    "bathtubbasin": ["bathtub", "tub", "bath tub"],
    "bread": ["bread", "loaf"],
    "butterknife": ["butter knife", "knife"],
    "cabinet": ["cabinet", "cupboard"],
    "cd": ["cd", "disc", "disk", "compact disc"],
    "cellphone": ["cell phone", "cellphone", "phone", "mobile"],
    "cloth": ["cloth", "rag"],
    "coffeemachine": ["coffee maker", "coffee machine", "coffeemaker"],
    "coffeetable": ["coffee table", "table"],
    "countertop": ["counter", "countertop", "counter top", "island"],
    "creditcard": ["credit card", "card"],
    "desklamp": ["desk lamp", "lamp", "light"],
    "diningtable": ["dining table", "kitchen table", "table"],
    "dishsponge": ["sponge", "dish sponge"],
    "floorlamp": ["floor lamp", "lamp", "light"],
    "fridge": ["fridge", "refrigerator"],
    "garbagecan": [
        "garbage can",
        "trash can",
        "trash bin",
        "garbage bin",
        "trashcan",
        "bin",
        "trash",
        "garbage",
    ],
    "glassbottle": ["glass bottle", "bottle"],
    "handtowel": ["hand towel", "towel"],
    "handtowelholder": ["towel holder", "towel rack", "holder", "rack"],
    "keychain": ["keys", "key chain", "keychain", "key"],
    "laptop": ["laptop", "computer"],
    "mug": ["mug", "coffee mug"],
    "newspaper": ["newspaper", "paper"],
    "pan": ["pan", "frying pan"],
    "remotecontrol": ["remote control", "remote", "controller"],
    "sidetable": ["side table", "end table", "nightstand", "table"],
    "sinkbasin": ["sink", "basin"],
    "soapbar": ["bar of soap", "soap bar", "soap", "bar"],
    "soapbottle": ["soap bottle", "bottle", "soap"],
    "spraybottle": ["spray bottle", "bottle"],
    "stoveburner": ["stove", "burner"],
    "tennisracket": ["tennis racket", "racket"],
    "tissuebox": ["tissue box", "box of tissues", "tissues"],
    "toiletpaper": ["toilet paper", "roll", "paper"],
    "toiletpaperhanger": ["toilet paper holder", "holder", "hanger"],
    "wateringcan": ["watering can", "can"],
    "winebottle": ["wine bottle", "bottle"],
}

#: Annotation classes: ALFRED objects that a sentence cannot tell apart share a class (a
#: "knife" may be a Knife or a ButterKnife), and HuRIC heads are folded onto the same words.
GOLD_CLASS = {
    "alarmclock": "clock",
    "desklamp": "lamp",
    "floorlamp": "lamp",
    "light": "lamp",
    "countertop": "counter",
    "diningtable": "table",
    "coffeetable": "table",
    "sidetable": "table",
    "nightstand": "table",
    "bedstand": "table",
    "sinkbasin": "sink",
    "bathtubbasin": "bathtub",
    "garbagecan": "bin",
    "trash": "bin",
    "garbage": "bin",
    "butterknife": "knife",
    "cellphone": "phone",
    "mobile": "phone",
    "remotecontrol": "remote",
    "controller": "remote",
    "creditcard": "card",
    "keychain": "key",
    "tissuebox": "tissues",
    "soapbottle": "bottle",
    "spraybottle": "bottle",
    "winebottle": "bottle",
    "glassbottle": "bottle",
    "soapbar": "soap",
    "dishsponge": "sponge",
    "handtowel": "towel",
    "handtowelholder": "holder",
    "toiletpaper": "paper",
    "toiletpaperhanger": "holder",
    "stoveburner": "stove",
    "coffeemachine": "coffeemaker",
    "armchair": "chair",
    "baseballbat": "bat",
    "tennisracket": "racket",
    "wateringcan": "can",
    "tv": "television",
    "refrigerator": "fridge",
    "couch": "sofa",
    "computer": "laptop",
    "telephone": "phone",
    "cupboard": "cabinet",
    "rag": "cloth",
    "newspaper": "paper",
    "roll": "paper",
}

#: Word used in a sentence for a class (object swaps write this).
CLASS_WORD = {
    "bin": "garbage can",
    "card": "credit card",
    "remote": "remote control",
    "coffeemaker": "coffee maker",
    "tissues": "tissue box",
}


#: HuRIC annotates heads only; these spans need their modifier to say what they are.
GOLD_COMPOUNDS = {
    "washing machine": "washer",
    "coffee machine": "coffeemaker",
    "living room": "livingroom",
    "dining room": "diningroom",
    "laundry room": "laundryroom",
    "remote control": "remote",
    "toilet paper": "paper",
    "loo roll": "paper",
    "tissue box": "tissues",
}


def gold_class(name: str | None) -> str | None:
    """The annotation class of an ALFRED object name or a HuRIC head (or span words)."""
    if not name:
        return None
    words = [singular(w) for w in name.strip().lower().split()]
    for n in (2,):
        if len(words) >= n and " ".join(words[-n:]) in GOLD_COMPOUNDS:
            return GOLD_COMPOUNDS[" ".join(words[-n:])]
    return GOLD_CLASS.get(words[-1], words[-1])


def surface_in(text: str, pddl: str) -> str | None:
    """The words of ``text`` that name the ALFRED object ``pddl``, if any."""
    forms = ALFRED_SURFACE.get(pddl, []) + [pddl, gold_class(pddl) or pddl]
    for form in sorted(set(forms), key=len, reverse=True):
        for variant in (form, form + "s", form + "es"):
            m = re.search(rf"\b{re.escape(variant)}\b", text, re.I)
            if m:
                return m.group(0)
    return None


# --------------------------------------------------------------------------- HuRIC

#: HuRIC frame -> (operation, role holding the object).
HURIC_FRAMES = {
    "Bringing": ("bring", ("Theme",)),
    "Taking": ("take", ("Theme",)),
    "Placing": ("put", ("Theme",)),
    "Releasing": ("put", ("Theme",)),
    "Giving": ("bring", ("Theme",)),
    "Manipulation": ("take", ("Entity",)),
    "Motion": ("go", ("Goal",)),
    "Arriving": ("go", ("Goal",)),
    "Inspecting": ("inspect", ("Ground",)),
    "Perception_active": ("look", ("Phenomenon",)),
    "Locating": ("find", ("Sought_entity",)),
    "Attaching": ("connect", ("Item", "Goal")),
    "Change_operational_state": ("turn_on", ("Device",)),
    "Closure": ("open", ("Container_portal", "Containing_object")),
}
#: Frames that are not commands to act on an object.
HURIC_SKIP = {"Being_located", "Change_direction"}
#: Annotated heads that name no object (pronouns, function words annotated by mistake).
PRONOUNS = {
    "it",
    "them",
    "that",
    "this",
    "those",
    "these",
    "one",
    "some",
    "yourself",
    "you",
    "me",
    "us",
    "him",
    "her",
    "to",
    "here",
    "there",
}


def huric_op(frame: dict) -> str | None:
    name = frame["frame"]
    if name in HURIC_SKIP or name not in HURIC_FRAMES:
        return None
    op = HURIC_FRAMES[name][0]
    lu = frame["lu"].lower()
    if name == "Change_operational_state":
        state = next(
            (
                (e.get("head") or e.get("span") or "").lower()
                for e in frame["elements"]
                if e["type"] == "Operational_state"
            ),
            "",
        )
        if "off" in state or lu in {"stop", "shut", "deactivate"}:
            return "turn_off"
        return "turn_on"
    if name == "Closure":
        return "close" if lu in {"close", "shut", "lower"} else "open"
    if name == "Attaching":
        return "disconnect" if lu.startswith(("dis", "de", "un")) else "connect"
    return op


_DETS = {
    "the",
    "a",
    "an",
    "my",
    "your",
    "his",
    "her",
    "its",
    "our",
    "their",
    "this",
    "that",
    "these",
    "those",
    "some",
    "one",
    "two",
    "three",
    "four",
    "five",
}


def _span_words(span: str, head: str) -> str | None:
    """The words of an annotated span from its last determiner (or preposition) to its head:
    "of the pack of beer" -> "pack", "the remote controller" -> "remote controller"."""
    words = span.split()
    if head not in words:
        return None
    h = words.index(head)
    start = 0
    for i in range(h):
        if words[i].lower() in _DETS or words[i].lower() in {"of", "to", "in", "on", "from"}:
            start = i + 1
    return " ".join(words[start : h + 1])


#: HuRIC heads that are not the head of their own span, corrected to it (span, annotated head
#: -> head). Found by comparing every annotated object head with the noun before its span's
#: first preposition (12 differ; the other 8 are coordinations, pronouns and compounds that
#: ``_span_words`` and ``GOLD_COMPOUNDS`` already read right). Pass ``errata=False`` to
#: ``build`` to measure against the heads as annotated.
HURIC_HEAD_ERRATA = {
    # a modifier's noun annotated as the head
    ("the beer pack near the kitchen door", "door"): "pack",
    ("the book with the blue cover", "cover"): "book",
    ("the corn can on the kitchen table", "corn"): "can",
    # "a glass of water" is annotated glass: the container is the head here too
    ("the bottle of water on the table", "water"): "bottle",
}


def huric_object(frame: dict, errata: bool = True) -> tuple[str | None, str | None, str | None]:
    """``(object class, goal class, object words)`` of a HuRIC frame (None: unannotated)."""
    roles = HURIC_FRAMES.get(frame["frame"], (None, ()))[1]
    obj = word = None
    for role in roles:
        for e in frame["elements"]:
            if e["type"] == role and (e.get("head") or e.get("span")):
                head = e.get("head") or _span_head(e["span"])  # 5 spans have no head
                if errata:
                    head = HURIC_HEAD_ERRATA.get(((e.get("span") or "").lower(), head), head)
                word = _span_words(e.get("span") or "", head)
                obj = gold_class(word or head)
                break
        if obj:
            break
    goal = None
    if frame["frame"] not in {"Motion", "Arriving"}:
        for e in frame["elements"]:
            if e["type"] == "Goal" and e.get("head"):
                goal = gold_class(e["head"])
                break
    return obj, goal, word


_SPAN_PREPS = {"to", "in", "on", "at", "near", "from", "of", "with", "into", "onto", "by"}


def _span_head(span: str) -> str:
    """The head of an annotated span that HuRIC left without one: its last word before the
    first preposition after the noun ("to the computer" -> computer, "the lights" -> lights)."""
    words = span.lower().split()
    while len(words) > 1 and (words[0] in _SPAN_PREPS or words[0] in _DETS):
        words = words[1:]
    cut = next((i for i, w in enumerate(words) if i and w in _SPAN_PREPS), len(words))
    return words[cut - 1]


def _in_sentence_order(sentence: str, frames: list[dict]) -> list[dict]:
    """Frames in the order their lexical units occur (HuRIC lists "hey robot take the book
    and put it in the oven" as put, take), so pronouns resolve to what was said before."""
    tokens = sentence.lower().split()
    used: set[int] = set()
    keyed = []
    for n, frame in enumerate(frames):
        lu = frame["lu"].lower().split()[0]
        at = next((i for i, t in enumerate(tokens) if t == lu and i not in used), len(tokens) + n)
        used.add(at)
        keyed.append((at, n, frame))
    return [f for _, _, f in sorted(keyed, key=lambda x: x[:2])]


def load_huric(path: Path = HURIC, errata: bool = True) -> list[Command]:
    out = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        gold = []
        for frame in _in_sentence_order(row["sentence"], row["frames"]):
            op = huric_op(frame)
            if op is None:
                continue
            obj, goal, word = huric_object(frame, errata)
            gold.append(Gold(op, obj, goal, word=word))
        out.append(
            Command(
                id=f"huric-{row['id']}",
                text=row["sentence"],
                gold=tuple(_resolve_pronouns(gold)),
                source="huric",
                frames=row["frames"],
            )
        )
    return out


def _resolve_pronouns(gold: list[Gold]) -> list[Gold]:
    """A pronoun (or unannotated) object takes the previous annotated object, as HuRIC's
    heads are the pronouns themselves ("switch it on")."""
    out: list[Gold] = []
    for g in gold:
        if g.obj is None or g.obj in PRONOUNS:
            prev = next((p.obj for p in reversed(out) if p.obj), None)
            g = replace(g, obj=prev, word=None)
        out.append(g)
    return out


# --------------------------------------------------------------------------- ALFRED

#: PDDL steps whose sentence states the action itself. CoolObject, HeatObject and CleanObject
#: are left out with GotoLocation: annotators spell them out as several actions ("put the
#: apple in the fridge, wait, take it out"), so the step label does not describe the sentence.
PDDL_OPS = {
    "PickupObject": "take",
    "PutObject": "put",
    "ToggleObject": "turn_on",
    "SliceObject": "slice",
}

#: The sentence must also state the step's action, in one of these words; this drops steps
#: whose annotator described something else ("turn off the lamp" for a ToggleObject that
#: switches it on, "pull the lettuce forward" for a SliceObject).
PDDL_VERBS = {
    "PickupObject": r"\b(pick|picks|grab|take|get|lift|remove|hold|retrieve|collect)\b",
    "PutObject": r"\b(put|place|set|drop|leave|insert|stand|replace|return|throw|toss|move)\b",
    "ToggleObject": r"\b(turn|switch|toggle|power)\w*\s+(\w+\s+){0,3}?on\b|\bturn on\b",
    "SliceObject": r"\b(slice|cut|chop)\b",
}


def load_alfred(path: Path = ALFRED) -> list[Command]:
    """ALFRED step instructions whose PDDL object is named in the sentence."""
    out = []
    for row in map(json.loads, path.read_text().splitlines()):
        steps = [p for p in row["high_pddl"] if p["action"] != "NoOp"]
        for n, ann in enumerate(row["annotations"]):
            for k, (step, desc) in enumerate(zip(steps, ann["high_descs"], strict=False)):
                op = PDDL_OPS.get(step["action"])
                if op is None or not step["args"]:
                    continue
                text = desc.strip()
                if not re.search(PDDL_VERBS[step["action"]], text, re.I):
                    continue  # the sentence does not state the step's action
                if step["action"] == "ToggleObject" and re.search(r"\boff\b", text, re.I):
                    continue
                if re.search(r"\b(open|opens|close|closes|shut)\b", text, re.I):
                    continue  # open/close sub-steps that the high-level PDDL step leaves out
                word = surface_in(text, step["args"][0])
                if word is None:
                    continue  # the sentence names another object, or "it": no usable label
                loc = gold_class(step["args"][1]) if len(step["args"]) > 1 else None
                out.append(
                    Command(
                        id=f"alfred-{row['task_id']}-{n}-{k}",
                        text=text,
                        gold=(Gold(op, gold_class(step["args"][0]), loc, word=word),),
                        source="alfred-step",
                    )
                )
    return out


# --------------------------------------------------------------------------- conflicts


def align(a: tuple[Gold, ...], b: tuple[Gold, ...]) -> list[tuple[Gold, Gold]]:
    """Pair the actions of two commands one to one, best agreement first (greedy)."""
    scored = []
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            score = 2 * (x.obj is not None and x.obj == y.obj) + (x.op == y.op)
            scored.append((-score, i, j))
    used_a, used_b, pairs = set(), set(), []
    for _, i, j in sorted(scored):
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            pairs.append((a[i], b[j]))
    return pairs


def gold_conflict(a: tuple[Gold, ...], b: tuple[Gold, ...]) -> str | None:
    """The paper's rules on gold actions, without VecSim: which one fires, or None.

    phi1: same object, different operation; phi2: same operation, different object; negation:
    same action, one negated.
    """
    for x, y in align(a, b):
        if x.obj and y.obj and x.obj == y.obj and x.op != y.op and x.neg == y.neg:
            return "phi1"
        if x.op == y.op and x.obj and y.obj and x.obj != y.obj and x.neg == y.neg:
            return "phi2"
        if x.op == y.op and x.obj == y.obj and x.neg != y.neg:
            return "negation"
    return None


# --------------------------------------------------------------------------- derivations

_WORD = r"[A-Za-z]+"
ON_OFF = re.compile(
    r"\b(turn|switch|power|shut)(s|ed|ing)?(\s+(?:it|them|the\s+[a-z]+(?:\s+[a-z]+)?))?\s+(on|off)\b",
    re.I,
)
OPEN_CLOSE = re.compile(r"\b(open|close|shut)\b", re.I)
PICK_UP = re.compile(r"\bpick(\s+up\b|(\s+(?:it|them|the\s+[a-z]+(?:\s+[a-z]+)?))\s+up\b)", re.I)
TAKE_VERB = re.compile(r"\b(take|grab|get|grasp|catch)(\s+(?:out|up))?\b", re.I)
PUT_VERB = re.compile(
    r"\b(put|place|set|leave|release|drop)\s+(.*?)\s+(on top of|onto|on|into|inside|in)\b", re.I
)


def _swap_case(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


def derive(cmd: Command, rng: random.Random, objects: dict[str, list[str]]) -> list[Command]:
    """Conflicting variants of ``cmd`` whose gold actions are known by construction."""
    out: list[Command] = []
    gold = list(cmd.gold)
    ops = [g.op for g in gold]

    def variant(kind: str, text: str, new_gold: list[Gold]) -> None:
        if text != cmd.text:
            out.append(
                Command(
                    id=f"{cmd.id}~{kind}",
                    text=text,
                    gold=tuple(new_gold),
                    source=cmd.source,
                    kind=kind,
                    parent=cmd.id,
                )
            )

    if {"turn_on", "turn_off"} & set(ops):
        m = ON_OFF.search(cmd.text)
        if m:
            flip = {"on": "off", "off": "on"}[m.group(4).lower()]
            text = cmd.text[: m.start(4)] + _swap_case(flip, m.group(4)) + cmd.text[m.end(4) :]
            if m.group(1).lower() == "shut" and flip == "on":  # "shut off" -> "turn on"
                text = text[: m.start(1)] + _swap_case("turn", m.group(1)) + text[m.end(1) :]
            i = next(i for i, o in enumerate(ops) if o in {"turn_on", "turn_off"})
            new = gold.copy()
            new[i] = replace(gold[i], op="turn_off" if gold[i].op == "turn_on" else "turn_on")
            variant("on_off", text, new)
    if {"open", "close"} & set(ops):
        m = OPEN_CLOSE.search(cmd.text)
        if m:
            word = m.group(1).lower()
            flip = "close" if word == "open" else "open"
            text = cmd.text[: m.start(1)] + _swap_case(flip, m.group(1)) + cmd.text[m.end(1) :]
            i = next(i for i, o in enumerate(ops) if o in {"open", "close"})
            new = gold.copy()
            new[i] = replace(gold[i], op="close" if gold[i].op == "open" else "open")
            variant("open_close", text, new)
    if "take" in ops:
        i = ops.index("take")
        m = PICK_UP.search(cmd.text)
        text = None
        if m:
            if m.group(2):  # pick X up -> put X down
                text = (
                    cmd.text[: m.start()]
                    + _swap_case("put", m.group(0))
                    + m.group(2)
                    + " down"
                    + cmd.text[m.end() :]
                )
            else:
                text = (
                    cmd.text[: m.start()] + _swap_case("put down", m.group(0)) + cmd.text[m.end() :]
                )
        else:
            t = TAKE_VERB.search(cmd.text)
            if t:
                text = (
                    cmd.text[: t.start()] + _swap_case("put down", t.group(0)) + cmd.text[t.end() :]
                )
        if text:
            new = gold.copy()
            new[i] = replace(gold[i], op="put", loc=None)
            variant("pick_put", text, new)
    if "put" in ops:
        i = ops.index("put")
        m = PUT_VERB.search(cmd.text)
        if m and len(m.group(2).split()) <= 4:
            text = (
                cmd.text[: m.start()]
                + _swap_case("take", m.group(1))
                + f" {m.group(2)} from"
                + cmd.text[m.end() :]
            )
            new = gold.copy()
            new[i] = replace(gold[i], op="take", loc=None)
            variant("put_take", text, new)
    # Object swap: the object's words replaced by another object of the same operation.
    swappable = [(i, g) for i, g in enumerate(gold) if g.obj and g.word]
    if swappable:
        i, g = swappable[0]
        m = re.search(rf"\b{re.escape(g.word)}\b", cmd.text, re.I)
        pool = [o for o in objects.get(g.op, []) if o != g.obj and o not in cmd.text.lower()]
        if m and pool:
            new_obj = rng.choice(pool)
            new_word = CLASS_WORD.get(new_obj, new_obj)
            before = cmd.text[: m.start()]
            # Keep the article right: "a knife" -> "an apple".
            art = re.search(r"\b(a|an)\s+$", before, re.I)
            if art:
                want = "an" if new_word[0] in "aeiou" else "a"
                before = (
                    before[: art.start(1)] + _swap_case(want, art.group(1)) + before[art.end(1) :]
                )
            rest = re.sub(rf"\b{re.escape(g.word)}\b", new_word, cmd.text[m.end() :], flags=re.I)
            text = before + new_word + rest
            # Every gold action on the swapped object now acts on the new one.
            new = [replace(x, obj=new_obj, word=new_word) if x.obj == g.obj else x for x in gold]
            variant("swap", text, new)
    return out


def negated(cmd: Command) -> Command | None:
    """``don't ...`` of a short imperative command (its first gold action negated)."""
    if not cmd.gold or len(cmd.gold) != 1 or len(cmd.text.split()) > 9:
        return None
    first = cmd.text.split()[0].lower()
    if first in {"please", "could", "can", "robot", "would", "i", "may", "will"}:
        return None
    text = "don't " + cmd.text[0].lower() + cmd.text[1:]
    return Command(
        id=f"{cmd.id}~negation",
        text=text,
        gold=(replace(cmd.gold[0], neg=True),),
        source=cmd.source,
        kind="negation",
        parent=cmd.id,
    )


# --------------------------------------------------------------------------- knowledge base


@dataclass
class Benchmark:
    """A knowledge base, held-out queries and labelled calibration pairs."""

    kb: list[Command]
    queries: list[Command]
    pairs_pool: list[Command]  # KB commands to draw calibration pairs from


def object_pools(commands: Iterable[Command]) -> dict[str, list[str]]:
    """Objects seen per operation (single-word, frequent), for plausible swaps."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for c in commands:
        for g in c.gold:
            if g.obj and g.obj.isalpha() and g.obj not in PRONOUNS:
                counts[g.op][g.obj] += 1
    return {op: sorted(o for o, n in cnt.items() if n >= 2) for op, cnt in counts.items()}


def build(
    seed: int = 0,
    n_queries: int = 320,
    variant_rate: float = 0.5,
    negation_rate: float = 0.1,
    errata: bool = True,
) -> Benchmark:
    """Originals (HuRIC + ALFRED) minus held-out queries, plus derived conflicting variants.

    Args:
        seed: for the query sample and the variants.
        n_queries: held-out original commands used as queries (their variants stay in the KB:
            the hall-light case of the paper, "turn off" stored, "turn on" asked).
        variant_rate: probability of each applicable derivation per original.
        negation_rate: probability of a "don't ..." variant per short original.
        errata: correct the HuRIC heads listed in ``HURIC_HEAD_ERRATA``.
    """
    rng = random.Random(seed)
    originals = [c for c in load_huric(errata=errata) + load_alfred() if c.gold]
    pools = object_pools(originals)
    derived: list[Command] = []
    for c in originals:
        for v in derive(c, rng, pools):
            if rng.random() < variant_rate:
                derived.append(v)
        if rng.random() < negation_rate:
            neg = negated(c)
            if neg is not None:
                derived.append(neg)
    # Queries: originals with at least one object-bearing action, half HuRIC where possible.
    candidates = [c for c in originals if any(g.obj for g in c.gold)]
    huric = [c for c in candidates if c.source == "huric"]
    alfred = [c for c in candidates if c.source != "huric"]
    n_h = min(len(huric), n_queries * 3 // 8)
    queries = rng.sample(huric, n_h) + rng.sample(alfred, n_queries - n_h)
    held = {q.id for q in queries}
    kb = [c for c in originals if c.id not in held] + derived
    rng.shuffle(kb)
    return Benchmark(kb=kb, queries=queries, pairs_pool=[c for c in kb if c.kind == "original"])


# --------------------------------------------------------------------------- scale corpus

_PREFIXES = ["", "please ", "robot, ", "could you ", "can you please ", "now ", "then "]
_SUFFIXES = ["", " please", " now", " for me", " carefully", " again", " quickly"]


def scale_sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct command sentences: real commands, their variants and rephrasings."""
    rng = random.Random(seed)
    base = [" ".join(c.text.split()) for c in load_huric() + load_alfred()]
    bench = build(seed=seed, n_queries=0, variant_rate=1.0, negation_rate=0.3)
    base += [" ".join(c.text.split()) for c in bench.kb if c.kind != "original"]
    pools = sorted({o for objs in object_pools(bench.kb).values() for o in objs})
    seen: set[str] = set()
    out: list[str] = []
    for text in base:
        if text not in seen:
            seen.add(text)
            out.append(text)
    while len(out) < n:
        text = rng.choice(base)
        words = text.split()
        if rng.random() < 0.6:  # swap one noun-looking word for another object
            idx = [i for i, w in enumerate(words) if w.lower().strip(".,") in pools]
            if idx:
                i = rng.choice(idx)
                words[i] = rng.choice(pools)
        text = rng.choice(_PREFIXES) + " ".join(words).rstrip(".") + rng.choice(_SUFFIXES)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out[:n]
