"""Facts a PDDL plan states about the scene (the user message's preconditions), checked against
what the perception tools observe: the symbolic reasoner's answer to a plan's preconditions.
"""

from __future__ import annotations

import re
from typing import Any

from bt_raider.checking.phrases import parse_phrase
from bt_raider.checking.tool_runner import ToolFailure
from bt_raider.checking.verdict import Category
from bt_raider.checking.wording import (
    STATE_TEXT,
    display,
    listing,
    metres,
    reach_text,
    tool_name,
)
from bt_raider.errors import Cancelled
from bt_raider.perception.scene import Human, SceneObject
from bt_raider.perception.tools import Place

#: Unverifiable facts: predicate pattern -> category (first match wins; default wrong_state).
_FACT_CATEGORIES: list[tuple[re.Pattern[str], Category]] = [
    (re.compile(r"hand|arm|gripper|holding|holds|carry|grasp|free$|^free"), Category.ROBOT_STATE),
    (re.compile(r"clear|block|path|obstruct"), Category.OBSTRUCTED),
    (re.compile(r"able$|receptacle"), Category.WRONG_PROPERTY),
    (re.compile(r"visible|present|exist|detected|recogni|identif|insight"), Category.NOT_PRESENT),
    (re.compile(r"(^|_)at($|_)|^at|location|near|reach|close"), Category.OUT_OF_REACH),
]


#: Predicates about an object's state: pattern -> (get_obj_state word, value when true).
_STATE_PREDICATES: list[tuple[re.Pattern[str], str, bool]] = [
    (re.compile(r"^(is)?(open|opened)$"), "open", True),
    (re.compile(r"^(is)?(closed|shut)$"), "open", False),
    (re.compile(r"^(is)?(on|toggled|turnedon|switchedon|poweredon|active|running)$"), "on", True),
    (re.compile(r"^(is)?(off|turnedoff|switchedoff|poweredoff)$"), "on", False),
    (re.compile(r"^(is)?sliced$"), "sliced", True),
    (re.compile(r"^(is)?(unsliced|whole)$"), "sliced", False),
    (re.compile(r"^(is)?(clean|cleaned|washed)$"), "dirty", False),
    (re.compile(r"^(is)?dirty$"), "dirty", True),
    (re.compile(r"^(is)?(cooked|hot|heated)$"), "cooked", True),
    (re.compile(r"^(is)?(filled|full)$"), "filled", True),
    (re.compile(r"^(is)?broken$"), "broken", True),
]


_CAPABILITY_PREDICATES = {
    "pickupable": "pickupable",
    "graspable": "pickupable",
    "openable": "openable",
    "toggleable": "toggleable",
    "togglable": "toggleable",
    "sliceable": "sliceable",
    "receptacle": "receptacle",
    "isreceptacle": "receptacle",
}


class PlanFacts:
    """Turn a plan step's PDDL preconditions into questions the tools answer."""

    def __init__(self, check: Any) -> None:  # a _Check of bt_raider.checking.symbolic
        self.c = check
        self.parsed = check.parsed
        self.unsatisfied = {_norm_fact(f) for f in check.query.unsatisfied}
        self.robots = {r.lower() for r in self.parsed.pddl_robots}

    def check(self) -> None:
        facts = list(dict.fromkeys([*self.c.query.preconditions, *self.c.query.unsatisfied]))
        for fact in facts:
            self.c.runner.checkpoint()
            planner_false = _norm_fact(fact) in self.unsatisfied
            self.one(fact, planner_false)

    def one(self, fact: str, planner_false: bool) -> None:
        parsed = _parse_fact(fact)
        c = self.c
        if parsed is None:
            if planner_false:
                self.planner_says(fact, Category.WRONG_STATE)
            return
        negated, pred, args = parsed
        key = re.sub(r"[\s_\-]+", "", pred.lower())
        robot_args = [a for a in args if a.lower() in self.robots]
        other = [a for a in args if a.lower() not in self.robots]
        c.ask(f"Plan precondition {fact}: does it hold?")
        verdict = self.verify(key, negated, robot_args, other)
        if verdict is None:
            if planner_false:
                self.planner_says(fact, self.category_for(key))
            else:
                c.say("answer", f"no tool can check {fact}; the planner says it holds")
            return
        holds, why, category, ids = verdict
        if holds:
            if planner_false:
                c.say(
                    "note",
                    f"the planner thinks {fact} is false, but perception shows it holds ({why})",
                )
            c.fine(why)
        else:
            c.found(category, f"The plan needs {fact}, but {why}.", *ids)

    def planner_says(self, fact: str, category: Category) -> None:
        self.c.found(
            category,
            f"The plan's precondition {fact} does not hold in the planner's state.",
        )

    def category_for(self, key: str) -> Category:
        """The category of a fact no tool can check, from its predicate's name."""
        if any(pattern.search(key) for pattern, _w, _v in _STATE_PREDICATES):
            return Category.WRONG_STATE
        for pattern, cat in _FACT_CATEGORIES:
            if pattern.search(key):
                return cat
        return Category.WRONG_STATE

    def referent(self, pddl_name: str) -> Any:
        """The object, person or place a PDDL argument stands for, or None."""
        name = self.parsed.pddl_names.get(pddl_name, pddl_name)
        for g in self.c.grounded.values():
            if g.phrase.text in (name, pddl_name) and g.unique is not None:
                return g.unique
        try:
            g = self.c.grounder.ground(parse_phrase(name, pddl=True), "target")
        except (ToolFailure, Cancelled):
            raise
        except Exception:
            return None
        return g.unique

    def verify(
        self, key: str, negated: bool, robot_args: list[str], other: list[str]
    ) -> tuple[bool, str, Category, list[str]] | None:
        """``(holds, what perception shows, category if not, objectIds)`` or None."""
        c = self.c
        refs = [self.referent(a) for a in other]
        person = next((r for r in refs if isinstance(r, Human)), None)
        objs = [r for r in refs if isinstance(r, SceneObject)]
        # People: gaze, hands, recognition.
        if person is not None and re.search(r"look|gaze|attent|ready|aware", key):
            ok = bool(c.runner.call("detect_human_gaze", tool_name(person)))
            why = f"{display(person)} is {'' if ok else 'not '}looking at the robot"
            return self._out(ok, negated, why, Category.WRONG_STATE, [person.id])
        if person is not None and re.search(r"hand|free|receive", key) and not robot_args:
            ok = bool(c.runner.call("human_hands_free", tool_name(person)))
            why = f"{display(person)}'s hands are {'' if ok else 'not '}free"
            return self._out(ok, negated, why, Category.WRONG_STATE, [person.id])
        # The robot's hand.
        if re.search(
            r"handempty|handfree|freehand|emptyhand|armempty|armfree|gripperfree", key
        ) or (key in ("free", "empty") and (robot_args or not other)):
            held = c.grounder.held()
            ok = len(held) < c.arms
            why = (
                "the robot's hand is free"
                if ok
                else f"the robot is holding the {listing([o.name for o in held])}"
            )
            return self._out(ok, negated, why, Category.ROBOT_STATE, [o.id for o in held])
        if re.search(r"holdsany|holdingany", key):
            held = c.grounder.held()
            ok = bool(held)
            why = (
                f"the robot is holding the {listing([o.name for o in held])}"
                if held
                else "the robot's hand is empty"
            )
            return self._out(ok, negated, why, Category.ROBOT_STATE, [o.id for o in held])
        if re.search(r"holding|holds|carry|carrying|grasped|inhand", key) and objs:
            held = {o.id for o in c.grounder.held()}
            obj = objs[0]
            ok = obj.id in held
            why = f"the robot is {'' if ok else 'not '}holding the {obj.name}"
            return self._out(ok, negated, why, Category.ROBOT_STATE, [obj.id])
        # Object states and capabilities.
        for pattern, word, value in _STATE_PREDICATES:
            if pattern.search(key) and objs:
                obj = objs[0]
                st = c.state(obj)
                if word not in st:
                    return None
                ok = bool(st[word]) == value
                why = f"the {obj.name} is {STATE_TEXT[word][bool(st[word])]}"
                return self._out(ok, negated, why, Category.WRONG_STATE, [obj.id])
        cap = _CAPABILITY_PREDICATES.get(key) or _CAPABILITY_PREDICATES.get(key.removeprefix("is"))
        if cap and objs:
            obj = objs[0]
            ok = bool((c.runner.call("get_obj_properties", obj.name) or {}).get(cap))
            why = f"the {obj.name} is {'' if ok else 'not '}{cap}"
            return self._out(ok, negated, why, Category.WRONG_PROPERTY, [obj.id])
        # Obstruction.
        if re.search(r"clear|pathfree|freepath|unblocked|accessible", key) and refs and refs[0]:
            ref = refs[0]
            if isinstance(ref, SceneObject):
                names = c.runner.call("check_obj_relationship", "blocking", ref.name) or []
            else:
                names = (c.runner.call("check_free_path", tool_name(ref)) or {}).get("blockers", [])
            ok = not names
            why = (
                f"nothing blocks the {display(ref)}"
                if ok
                else f"the {display(ref)} is blocked by {listing(list(names))}"
            )
            return self._out(ok, negated, why, Category.OBSTRUCTED, [ref.id])
        # Where the robot is: close enough to act. Being "at" a counter means reaching what
        # the action works on (a large receptacle's centre says little), and "near" a person
        # means the handover distance.
        located = re.search(r"(^|_)at($|_)|^at|at$|atlocation|near|closeto|reach", key)
        if located and robot_args and refs and refs[-1] is not None:
            if c.action == "approach":
                return None  # moving needs the robot nowhere in particular
            ref = refs[-1]
            if isinstance(ref, Human):
                dist = float(c.runner.call("dist_robot_to_human", tool_name(ref)))
                limit = c.handover_distance
            else:
                main = c.one("destination") if c.action == "place" else c.one("object")
                ref = main if isinstance(main, (SceneObject, Place)) else ref
                dist = float(c.runner.call("dist_to_target", tool_name(ref)))
                limit = c.reach
            ok = dist <= limit
            the = display(ref) if isinstance(ref, Human) else f"the {display(ref)}"
            why = f"{the} is {metres(dist)} from the robot (limit {reach_text(limit)})"
            return self._out(ok, negated, why, Category.OUT_OF_REACH, [ref.id])
        # Where an object is: it must be in the scene (and in or on a receptacle named).
        if located or re.search(r"inreceptacle|objectat|itemat|^in$|^on$", key):
            if objs and not robot_args:
                obj = objs[0]
                present = {o.id for o in c.grounder.present()}
                ok = obj.id in present
                holder = objs[1] if len(objs) > 1 else None
                if ok and holder is not None:
                    ok = obj.id in {o.id for o in c.grounder.related("from", holder)}
                    why = f"the {obj.name} is {'' if ok else 'not '}in or on the {holder.name}"
                else:
                    why = f"the {obj.name} is {'' if ok else 'not '}in the scene"
                return self._out(ok, negated, why, Category.NOT_PRESENT, [obj.id])
        if re.search(r"visible|present|exist|detected", key) and objs:
            present = {o.id for o in c.grounder.present()}
            ok = objs[0].id in present
            why = f"the {objs[0].name} is {'' if ok else 'not '}in the scene"
            return self._out(ok, negated, why, Category.NOT_PRESENT, [objs[0].id])
        return None

    @staticmethod
    def _out(
        ok: bool, negated: bool, why: str, category: Category, ids: list[str]
    ) -> tuple[bool, str, Category, list[str]]:
        return (ok != negated, why, category, ids)


def _norm_fact(fact: str) -> str:
    return " ".join(fact.lower().replace("(", " ( ").replace(")", " ) ").split())


def _parse_fact(fact: str) -> tuple[bool, str, list[str]] | None:
    """``(not (holding r x))`` -> ``(True, "holding", ["r", "x"])``; None for compound facts."""
    tokens = fact.replace("(", " ( ").replace(")", " ) ").split()
    negated = False
    if tokens[:2] == ["(", "not"] and tokens[-1] == ")":
        negated = True
        tokens = tokens[2:-1]
    if len(tokens) < 3 or tokens[0] != "(" or tokens[-1] != ")":
        return None
    inner = tokens[1:-1]
    if not inner or "(" in inner or ")" in inner:
        return None
    pred = inner[0]
    if pred.lower() in ("and", "or", "forall", "exists", "imply", "=", "when"):
        return None
    return negated, pred, inner[1:]
