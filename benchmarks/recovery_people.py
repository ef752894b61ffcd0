"""The gold answers and the scripted people of ``benchmarks/recovery.py``.

For each case: what the right recovery ends with (:class:`Gold`, from the case, its scene and
the checker's verdict) and how a person of each kind (:data:`KINDS`) answers the robot's
questions and acts in the world (:class:`Person`). See ``recovery.py`` for the benchmark.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

KINDS = ("cooperative", "vague", "unhelpful", "tricky", "stranger")
#: The stranger's own name: she is not the person the instruction designates (issue 34).
STRANGER = "Zoe"
#: What a tricky person's first reply to "which one?" is, rotating by case (the reply grammar's
#: kinds, :mod:`bt_raider.recovery.reply_forms`); her second reply names the right one.
TRICKY = ("negating", "ordinal_out_of_range", "several", "self_correcting")
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
    candidates: list[str] = field(default_factory=list)  # an ambiguity's objects


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
            gold.candidates = list(cands)
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
    stranger: bool = False  # cooperative, but not who the instruction designates
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
        if topic == "identity" and self.stranger:
            # She answers truthfully with her own name; the world recognises her as Zoe.
            if self.gold.person:
                self.world.set_human(self.gold.person, name=STRANGER)
            return f"I'm {STRANGER}."
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
        if self.kind == "cooperative" or (self.kind == "tricky" and n >= 2):
            return f"{name}, please."
        if self.kind == "tricky":
            return self._tricky(name)
        options = re.findall(r":\s*(.+)\?\s*$", question)
        listed = re.split(r",\s*|\s+or\s+", options[0]) if options else []
        ordinal = None
        at = self._listed_at(listed, name)
        if at is not None and at < len(ORDINALS):
            ordinal = f"the {ORDINALS[at]} one"
        words = g.description or ordinal or name
        if self.style == 0 or n >= 2:
            if n >= 2 and self.style == 2:
                return f"Sorry, I mean {words}."
            return words[0].upper() + words[1:] + "."
        if self.style == 1:
            return "Hmm, that one, over there."
        return f"The {g.noun}."  # names them all: partial

    def _listed_at(self, listed: list[str], name: str) -> int | None:
        """Where the question listed the right one: by its name, or by the words that tell it
        apart in the world ("the clean cup"), as a person who sees the objects would."""
        if name in listed:
            return listed.index(name)
        g = self.gold
        scene = self.world.scene
        if not g.choice or any(_maybe(scene, c) is None for c in g.candidates):
            return None
        from bt_raider.recovery.reply_forms import unique_words

        words = unique_words(scene, g.candidates, g.choice)
        hits = [
            i for i, p in enumerate(listed) if any(w in p.lower().split(" ", 1)[-1] for w in words)
        ]
        return hits[0] if len(hits) == 1 else None

    def _tricky(self, name: str) -> str:
        """A first reply of one of the new classes: negation, "option 0", several, correction."""
        g = self.gold
        scene = self.world.scene
        want = TRICKY[self.style % len(TRICKY)]
        if g.choice and g.candidates and all(_maybe(scene, c) for c in g.candidates):
            from bt_raider.recovery.reply_forms import reply_forms

            forms = [f for f in reply_forms(scene, g.candidates, g.choice) if f.kind == want]
            # One that designates the right one when the grammar has it, else one that names
            # none (the robot must ask again).
            forms.sort(key=lambda f: f.designates != g.choice)
            if forms:
                return forms[0].text
        others = [c for c in g.candidates if c != g.choice]
        other = _name_of(scene, others[0]) if others else "the other one"
        return {
            "negating": f"not {other}",
            "ordinal_out_of_range": "option 0",
            "several": f"{other} or {name}",
            "self_correcting": f"{other}, sorry, I meant {name}",
        }[want]

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


def stranger_gold(gold: Gold, phrase: str | None) -> Gold:
    """The gold when the person in sight is a stranger (issue 34): an instruction that designates
    a person by name cannot be done (she is not that person: FAILURE with a reason, nothing
    handed or approached); one that designates by description ("the user") may be her."""
    if gold.person is None or phrase is None:
        return gold
    words = re.findall(r"[a-z]+", phrase.lower())
    described = bool(words) and all(
        w in ("the", "a", "user", "person", "someone", "me", "resident", "patient") for w in words
    )
    if described:
        gold.person_name = STRANGER
    else:
        gold.recoverable = False
    return gold
