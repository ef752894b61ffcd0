"""The embedded symbolic reasoner: RAIDER's *Ground, Ask&Answer, Issue* with fixed rules.

It is the offline default behind :func:`bt_raider.check`. Like the LLM agent it grounds the
query's arguments, generates the precondition questions that matter for the action, answers
each one by calling a perception tool, and decides the issue — but every step is a
deterministic rule of ``docs/scene-format.md`` section 3:

======================  ==========================================================
action                  questions (category when the answer is wrong)
======================  ==========================================================
pick X [from S]         hand free (robot_state), pickupable (wrong_property), not in
                        a closed receptacle (wrong_state), nothing on/in/blocking X
                        (obstructed), within reach (out_of_reach)
place X in D            holding X (robot_state), D a receptacle (wrong_property), D not
                        closed (wrong_state), single-slot D free / D not blocked
                        (obstructed), D within reach (out_of_reach)
open/close X            hand free, openable, not already open/closed, not blocked, reach
turnon/turnoff X        hand free, toggleable, not already on/off, not blocked, reach
slice X                 holding a knife, sliceable, not sliced, not blocked, reach
approach T              person recognised (not_present), free path (obstructed)
handover X to P         holding X, P recognised, P looking and hands free
                        (wrong_state), P within the handover distance (out_of_reach)
======================  ==========================================================

A query from a plan also brings its PDDL preconditions: each is mapped to a question the
tools can answer (``hand_free`` -> ``robot_holding``, ``robot_at`` -> a distance,
``opened`` -> ``get_obj_state``...); one no tool can answer counts as the planner says.
When several issues hold the first in :data:`~bt_raider.checking.verdict.PRIORITY` is reported.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from bt_raider.checking.contract import Query, as_query
from bt_raider.checking.grounding import (
    STATE_TEXT,
    Grounded,
    Grounder,
    ToolFailure,
    ToolRunner,
    article,
    display,
    listing,
    metres,
    natural_key,
    reach_text,
    there_is_no,
    tool_name,
)
from bt_raider.checking.parse import ParsedQuery, parse_query
from bt_raider.checking.steps import check_steps, split_steps
from bt_raider.checking.verdict import PRIORITY, Category, ToolCall, Verdict
from bt_raider.errors import Cancelled, SceneError, ToolError
from bt_raider.perception import relations
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.perception.relations import SINGLE_SLOT_TYPES
from bt_raider.perception.scene import Human, Scene, SceneObject
from bt_raider.perception.tools import Place, default_tools
from bt_raider.perception.toolset import ToolSet

#: Destinations that hold one item at a time: occupied means obstructed.

#: How explanations say each action.
VERBS = {
    "pick": ("pick", "picked"),
    "place": ("place", "placed"),
    "open": ("open", "opened"),
    "close": ("close", "closed"),
    "turnon": ("turn on", "turned on"),
    "turnoff": ("turn off", "turned off"),
    "slice": ("slice", "sliced"),
    "approach": ("approach", "approached"),
    "handover": ("hand over", "handed over"),
}


def verb_it(verb: str) -> str:
    """The verb with "it" as its object: "open it", "turn it on" (a particle goes after "it")."""
    head, _, particle = verb.partition(" ")
    return f"{head} it {particle}" if particle else f"{verb} it"


#: For open/close/turnon/turnoff: (capability, get_obj_state word, the value once done).
TOGGLES = {
    "open": ("openable", "open", True),
    "close": ("openable", "open", False),
    "turnon": ("toggleable", "on", True),
    "turnoff": ("toggleable", "on", False),
}


class Finding(NamedTuple):
    """One issue found while answering a question."""

    category: Category
    explanation: str
    objects: Sequence[str] = ()


class SymbolicReasoner:
    """A :class:`~bt_raider.checking.contract.Checker` that follows Ground -> Ask -> Answer -> Issue.

    Args:
        tools: the perception tools the questions are answered with (default:
            :func:`~bt_raider.perception.tools.default_tools`).
        lexicon: nouns, categories and state adjectives (default: the bundled lexicon).
        time_limit: seconds a check may take; past it the verdict is ``unknown``.
        single_slot: object types that hold one item at a time.
    """

    def __init__(
        self,
        tools: ToolSet | None = None,
        lexicon: CategoryLexicon | None = None,
        *,
        time_limit: float | None = None,
        single_slot: frozenset[str] | set[str] = SINGLE_SLOT_TYPES,
    ) -> None:
        self.tools = tools if tools is not None else default_tools()
        self.lexicon = lexicon if lexicon is not None else CategoryLexicon.default()
        self.time_limit = time_limit
        self.single_slot = frozenset(single_slot)

    def check(
        self, scene: Scene, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """The verdict for ``query`` in ``scene``.

        Raises:
            QueryError: an empty query, an unknown action or the wrong number of arguments.
        """
        start = time.monotonic()
        q = as_query(query)
        deadline = start + self.time_limit if self.time_limit else None
        plain = not (q.preconditions or q.unsatisfied or q.bindings)
        steps = split_steps(q.text) if plain else [q.text]
        if len(steps) > 1:
            # "open the fridge, take the egg and close it": one check per step, in order.
            verdict = check_steps(
                lambda sc, text: self._check_one(sc, Query(text), cancel, deadline), scene, steps
            )
        else:
            verdict = self._check_one(scene, q, cancel, deadline)
        verdict.elapsed_s = time.monotonic() - start
        return verdict

    def _check_one(
        self, scene: Scene, q: Query, cancel: threading.Event | None, deadline: float | None
    ) -> Verdict:
        parsed = parse_query(q.text, q.bindings, self.lexicon)
        if parsed.request and not scene.humans:
            # "I need the salt shaker" where the scene models nobody: fetching it is the action.
            parsed = parsed.as_pick()
        return _Check(self, scene, q, parsed, cancel, deadline).execute()


# --------------------------------------------------------------------------- one check
class _Check:
    """The state of one check: trace, questions, findings."""

    def __init__(
        self,
        owner: SymbolicReasoner,
        scene: Scene,
        query: Query,
        parsed: ParsedQuery,
        cancel: threading.Event | None,
        deadline: float | None,
    ) -> None:
        self.owner = owner
        self.scene = scene
        self.query = query
        self.parsed = parsed
        self.action = parsed.action
        self.trace: list[dict[str, Any]] = []
        self.questions: list[str] = []
        self.findings: list[Finding] = []
        self.positives: list[str] = []
        self.grounded: dict[str, Grounded] = {}
        self.runner = ToolRunner(
            scene, owner.tools, cancel=cancel, deadline=deadline, on_call=self._on_call
        )
        self.grounder = Grounder(self.runner, owner.lexicon)
        # Read in execute(), where a value that is not a positive finite number ends as unknown.
        self.reach = self.handover_distance = math.nan
        self.arms = 1

    # ------------------------------------------------------------------ trace
    def say(self, role: str, content: str) -> None:
        self.trace.append({"role": role, "content": content})

    def _on_call(self, call: ToolCall) -> None:
        args = ", ".join(repr(a) for a in call.args)
        if call.error is not None:
            result = f"error: {call.error}"
        elif isinstance(call.result, list) and len(call.result) > 12:
            # The full answer is in tool_calls; the trace stays readable.
            result = repr(call.result[:10])[:-1] + f", ...] ({len(call.result)} items)"
        else:
            result = repr(call.result)
        self.say("tool", f"{call.tool}({args}) -> {result}")

    def ask(self, question: str) -> None:
        self.questions.append(question)
        self.say("ask", question)

    def found(self, category: Category, explanation: str, *objects: str) -> None:
        self.findings.append(Finding(category, explanation, [o for o in objects if o]))
        self.say("answer", f"{category.value}: {explanation}")

    def fine(self, fact: str) -> None:
        self.positives.append(fact)
        self.say("answer", f"ok: {fact}")

    # ------------------------------------------------------------------ run
    def execute(self) -> Verdict:
        text = self.query.text
        if self.query.preconditions:
            text += "\nPDDL preconditions: " + ", ".join(self.query.preconditions)
        if self.query.unsatisfied:
            text += "\nunsatisfied in the planner's state: " + ", ".join(self.query.unsatisfied)
        self.say("user", text)
        try:
            # The robot's pose and build, which every answer depends on, are read first: each is
            # a SceneError unless finite and in range (objects are checked as they are read).
            robot = self.scene.robot
            _ = self.scene.agent_xyz, self.scene.agent_yaw
            self.reach = float(robot["reach"])
            self.handover_distance = float(robot["handover_distance"])
            self.arms = int(robot["arms"])
            early = self.ground()
            if early is not None:
                return early
            self.ask_and_answer()
            return self.issue()
        except (Cancelled, ToolFailure) as exc:
            return self._unknown(str(exc))
        except (SceneError, ToolError) as exc:
            # The scene changed after it was validated (a NaN position, a negative reach):
            # what cannot be reasoned about fails closed.
            return self._unknown(f"the scene cannot be reasoned about: {exc}")

    def _unknown(self, reason: str) -> Verdict:
        self.say("issue", f"unknown: {reason}")
        return Verdict.unknown(
            reason,
            grounding=self._grounding_map(),
            objects=self._objects([]),
            tool_calls=list(self.runner.calls),
            questions=list(self.questions),
            trace=list(self.trace),
            action=self.action,
        )

    # ------------------------------------------------------------------ ground
    def ground(self) -> Verdict | None:
        """Ground every argument; an ambiguous or absent one ends the check (RAIDER step 1)."""
        p = self.parsed
        by_role = {a.role: a for a in p.args}
        kinds = {"person": "person", "target": "target"}
        for arg in p.args:
            if arg.role == "source":
                continue
            g = self.grounder.ground(arg, kinds.get(arg.role, "object"))
            if arg.role == "object" and self.action in ("place", "handover") and len(g.ids) > 1:
                # "put the apple ...": the apple in the robot's hand is the one meant.
                held = {o.id for o in self.grounder.held()}
                mine = [c for c in g.candidates if c.id in held]
                if mine:
                    g = Grounded(g.phrase, g.kind, mine, g.level)
            if arg.role == "destination":
                g = self.grounder.receptacle_part(g)  # "in the sink": in its basin
            self.grounded[arg.role] = g
        if "source" in by_role:
            src = self.grounder.ground(by_role["source"], "source")
            obj, src = self.grounder.restrict_to_source(self.grounded["object"], src)
            self.grounded["object"], self.grounded["source"] = obj, src
        for role, g in self.grounded.items():
            self.say("ground", self._ground_text(role, g))
        issues: list[Finding] = []
        for g in self.grounded.values():
            if len(g.candidates) > 1:
                names = sorted(g.names, key=natural_key)
                issues.append(
                    Finding(
                        Category.AMBIGUITY,
                        f"The query is ambiguous: '{g.phrase.text}' matches {len(names)} "
                        f"{'people' if g.kind == 'person' else 'objects'}: {listing(names)}.",
                        g.ids,
                    )
                )
            elif not g.candidates:
                issues.append(
                    Finding(
                        Category.NOT_PRESENT,
                        g.reason or f"{there_is_no(g.phrase)} in the scene.",
                        [h.id for h in g.unrecognised],
                    )
                )
        if not issues:
            return None
        for f in issues:
            self.findings.append(f)
            self.say("answer", f"{f.category.value}: {f.explanation}")
        return self.issue()

    def _ground_text(self, role: str, g: Grounded) -> str:
        what = listing(g.names) if g.candidates else "nothing"
        return f"{role} '{g.phrase.text}' ({g.level}) -> {what}"

    def _grounding_map(self) -> dict[str, list[str]]:
        return {g.phrase.text: g.ids for g in self.grounded.values()}

    def _objects(self, extra: Sequence[str]) -> list[str]:
        out: list[str] = []
        for role in ("object", "target", "source", "destination", "person"):
            g = self.grounded.get(role)
            if g is not None:
                out.extend(g.ids)
        out.extend(extra)
        return list(dict.fromkeys(out))

    def one(self, role: str) -> Any:
        g = self.grounded.get(role)
        return g.unique if g is not None else None

    # ------------------------------------------------------------------ ask & answer
    def ask_and_answer(self) -> None:
        rules: dict[str, Callable[[], None]] = {
            "pick": self.pick,
            "place": self.place,
            "open": self.toggle,
            "close": self.toggle,
            "turnon": self.toggle,
            "turnoff": self.toggle,
            "slice": self.slice,
            "approach": self.approach,
            "handover": self.handover,
        }
        rules[self.action]()
        if self.query.preconditions or self.query.unsatisfied:
            # Imported for a plan's facts only: its 16 patterns compile at import.
            from bt_raider.checking.plan_facts import PlanFacts

            PlanFacts(self).check()

    # -- shared questions
    def hand_free(self, obj: SceneObject | None) -> None:
        self.ask("Is the robot's hand free?")
        held = self.grounder.held()
        if len(held) < self.arms:
            self.fine("the hand is free")
            return
        names = [o.name for o in held]
        verb = VERBS[self.action][0]
        if obj is not None and obj.name in names and self.action == "pick":
            self.found(
                Category.ROBOT_STATE,
                f"The robot is already holding the {obj.name}: its hand is not free.",
                obj.id,
            )
            return
        what = f"the {obj.name}" if obj is not None else "it"
        self.found(
            Category.ROBOT_STATE,
            f"The robot cannot {verb} {what}: its hand is busy holding the {listing(names)}.",
            *[o.id for o in held],
        )

    def capability(self, obj: SceneObject, cap: str) -> bool:
        self.ask(f"Is the {obj.name} {cap}?")
        props = self.runner.call("get_obj_properties", obj.name) or {}
        return bool(props.get(cap, False))

    def state(self, obj: SceneObject) -> dict[str, bool]:
        result = self.runner.call("get_obj_state", obj.name)
        return dict(result) if isinstance(result, dict) else {}

    def within_reach(self, ref: SceneObject | Place, role: str = "") -> None:
        name = display(ref)
        self.ask(f"Is the {name} within the robot's reach ({reach_text(self.reach)})?")
        dist = self._finite_distance(self.runner.call("dist_to_target", tool_name(ref)), name)
        if dist > self.reach:
            self.found(
                Category.OUT_OF_REACH,
                f"The {name} is {metres(dist)} away, beyond the robot's reach of "
                f"{reach_text(self.reach)}.",
                ref.id,
            )
        else:
            self.fine(f"the {name} is within reach ({metres(dist)})")

    @staticmethod
    def _finite_distance(value: Any, name: str) -> float:
        """A tool's distance as a float; one that is not a finite number ends the check."""
        try:
            dist = float(value)
        except (TypeError, ValueError):
            dist = math.nan
        if not math.isfinite(dist) or dist < 0:
            # NaN > reach is False: reasoning on with it would approve the action.
            raise ToolFailure(f"the distance to the {name} is {value!r}, not a finite number")
        return dist

    def reported_blockers(self, obj: SceneObject) -> None:
        """What perception's obstruction report lists for ``obj`` (not what rests in it)."""
        self.ask(f"Is anything blocking the {obj.name}?")
        listed = self._resolve_all(self.runner.call("check_obj_relationship", "blocking", obj.name))
        blockers = [b for b in listed if not relations.rests_on(b, obj)]
        resting = [b for b in listed if relations.rests_on(b, obj)]
        if blockers:
            self.found(
                Category.OBSTRUCTED,
                f"The {obj.name} cannot be {VERBS[self.action][1]}: it is blocked by "
                f"{listing([article(b.name) for b in blockers])}.",
                obj.id,
                *[b.id for b in blockers],
            )
        elif resting:
            # The tool lists what rests in or on it too; say why that is no obstacle here.
            where = "in" if relations.is_container(obj) else "on"
            self.fine(
                f"nothing blocks the {obj.name} (the {listing([b.name for b in resting])} "
                f"{where} it {'is' if len(resting) == 1 else 'are'} no obstacle)"
            )
        else:
            self.fine(f"nothing blocks the {obj.name}")

    def _resolve_all(self, names: Any) -> list[SceneObject]:
        out = []
        for n in names or []:
            try:
                out.append(self.scene.resolve(n))
            except Exception:  # a blocker perception reports but cannot describe
                continue
        return out

    # -- actions
    def pick(self) -> None:
        obj = self.one("object")
        self.hand_free(obj)
        if not self.capability(obj, "pickupable"):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {obj.name} cannot be picked: it is not pickupable.",
                obj.id,
            )
        else:
            self.fine(f"the {obj.name} is pickupable")
        self.closed_container(obj)
        self.ask(f"Is anything on, in or blocking the {obj.name}?")
        blockers = self._resolve_all(
            self.runner.call("check_obj_relationship", "blocking", obj.name)
        )
        held = {o.id for o in self.grounder.held()}
        blockers = [b for b in blockers if b.id not in held]
        if blockers:
            parts = []
            for b in blockers:
                if relations.rests_on(b, obj):
                    where = "inside" if relations.is_container(obj) else "on top of"
                    parts.append(f"{article(b.name)} is {where} it")
                else:
                    parts.append(f"it is blocked by {article(b.name)}")
            self.found(
                Category.OBSTRUCTED,
                f"The {obj.name} cannot be picked: {listing(parts)}.",
                obj.id,
                *[b.id for b in blockers],
            )
        else:
            self.fine(f"nothing is on, in or blocking the {obj.name}")
        if obj.id not in held:
            self.within_reach(obj)

    def closed_container(self, obj: SceneObject) -> None:
        """Taking from a closed openable receptacle needs it opened first."""
        holders = []
        for pid in obj.parents:
            try:
                parent = self.scene.by_id(pid)
            except Exception:  # a parent perception does not list
                continue
            if parent.flag("openable"):
                holders.append(parent)
        for p in holders:
            self.ask(f"Is the {p.name} that holds the {obj.name} open?")
            if obj not in self.grounder.related("from", p):
                continue
            st = self.state(p)
            if "open" in st and not st["open"]:
                self.found(
                    Category.WRONG_STATE,
                    f"The {obj.name} is inside the {p.name}, which is closed: the {p.name} "
                    "must be opened first.",
                    obj.id,
                    p.id,
                )
            else:
                self.fine(f"the {p.name} is open")

    def place(self) -> None:
        obj, dest = self.one("object"), self.one("destination")
        self.ask(f"Is the robot holding the {display(obj)}?")
        held = self.grounder.held()
        if obj.id not in {o.id for o in held}:
            holds = (
                f"it holds the {listing([o.name for o in held])}" if held else "it holds nothing"
            )
            self.found(
                Category.ROBOT_STATE,
                f"The robot cannot place the {display(obj)}: it is not holding it ({holds}).",
                obj.id,
                *[o.id for o in held],
            )
        else:
            self.fine(f"the robot holds the {display(obj)}")
        if isinstance(dest, Place):
            self.within_reach(dest)
            return
        if not self.capability(dest, "receptacle"):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {display(obj)} cannot be placed in the {dest.name}: the {dest.name} is "
                "not a receptacle.",
                dest.id,
            )
        else:
            self.fine(f"the {dest.name} is a receptacle")
        st = self.state(dest)
        if "open" in st:
            self.ask(f"Is the {dest.name} open?")
            if not st["open"]:
                self.found(
                    Category.WRONG_STATE,
                    f"The {dest.name} is closed: the {display(obj)} cannot be placed in it "
                    "until it is opened.",
                    dest.id,
                )
            else:
                self.fine(f"the {dest.name} is open")
        if dest.type in self.owner.single_slot:
            self.ask(f"Is the {dest.name} free? (it holds one item at a time)")
            inside = self._resolve_all(
                self.runner.call("check_obj_relationship", "inside", dest.name)
            )
            inside = [o for o in inside if o.id != obj.id]
            if inside:
                self.found(
                    Category.OBSTRUCTED,
                    f"The {dest.name} is occupied by {listing([article(o.name) for o in inside])}: "
                    "it holds one item at a time.",
                    dest.id,
                    *[o.id for o in inside],
                )
            else:
                self.fine(f"the {dest.name} is free")
        self.reported_blockers(dest)
        self.within_reach(dest)

    def toggle(self) -> None:
        obj = self.one("object")
        cap, word, done_value = TOGGLES[self.action]
        verb, done = VERBS[self.action]
        self.hand_free(obj)
        if not self.capability(obj, cap):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {obj.name} cannot be {done}: it is not {cap}.",
                obj.id,
            )
        else:
            self.fine(f"the {obj.name} is {cap}")
            already = STATE_TEXT[word][done_value]
            self.ask(f"Is the {obj.name} already {already}?")
            if bool(self.state(obj).get(word, False)) == done_value:
                self.found(
                    Category.WRONG_STATE,
                    f"The {obj.name} is already {already}: to {verb_it(verb)} would change "
                    "nothing.",
                    obj.id,
                )
            else:
                self.fine(f"the {obj.name} is {STATE_TEXT[word][not done_value]}")
        self.reported_blockers(obj)
        self.within_reach(obj)

    def slice(self) -> None:
        obj = self.one("object")
        self.ask("Is the robot holding a knife?")
        held = self.grounder.held()
        knives = self.owner.lexicon.types_for("knife") or {"Knife"}
        if not any(o.type in knives for o in held):
            holds = (
                f"it holds the {listing([o.name for o in held])}" if held else "its hand is empty"
            )
            self.found(
                Category.ROBOT_STATE,
                f"The robot cannot slice the {obj.name}: it is not holding a knife ({holds}).",
                obj.id,
                *[o.id for o in held],
            )
        else:
            self.fine("the robot holds a knife")
        if not self.capability(obj, "sliceable"):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {obj.name} cannot be sliced: it is not sliceable.",
                obj.id,
            )
        else:
            self.fine(f"the {obj.name} is sliceable")
            self.ask(f"Is the {obj.name} already sliced?")
            if self.state(obj).get("sliced", False):
                self.found(
                    Category.WRONG_STATE,
                    f"The {obj.name} is already sliced: slicing would change nothing.",
                    obj.id,
                )
            else:
                self.fine(f"the {obj.name} is not sliced yet")
        self.reported_blockers(obj)
        self.within_reach(obj)

    def approach(self) -> None:
        target = self.one("target")
        name = display(target)
        self.ask(f"Is the path to {name if isinstance(target, Human) else 'the ' + name} free?")
        path = self.runner.call("check_free_path", tool_name(target)) or {}
        blockers = list(path.get("blockers") or [])
        if not path.get("free", not blockers):
            what = listing([article(b) for b in blockers]) if blockers else "an obstacle"
            the = name if isinstance(target, Human) else f"the {name}"
            self.found(
                Category.OBSTRUCTED,
                f"The path to {the} is blocked by {what}: it cannot be approached.",
                target.id,
                *[self._id_of(b) for b in blockers],
            )
        else:
            self.fine(f"the path to {name} is free")

    def _id_of(self, name: str) -> str:
        try:
            return self.scene.resolve(name).id
        except Exception:
            return name

    def handover(self) -> None:
        obj, person = self.one("object"), self.one("person")
        who = display(person)
        self.ask(f"Is the robot holding the {obj.name}?")
        held = self.grounder.held()
        if obj.id not in {o.id for o in held}:
            holds = (
                f"it holds the {listing([o.name for o in held])}" if held else "it holds nothing"
            )
            self.found(
                Category.ROBOT_STATE,
                f"The robot cannot hand over the {obj.name}: it is not holding it ({holds}).",
                obj.id,
            )
        else:
            self.fine(f"the robot holds the {obj.name}")
        self.ask(f"Is {who} looking at the robot?")
        if not self.runner.call("detect_human_gaze", tool_name(person)):
            self.found(
                Category.WRONG_STATE,
                f"{who} is not looking at the robot: the {obj.name} cannot be handed over "
                "until they pay attention.",
                person.id,
            )
        else:
            self.fine(f"{who} is looking at the robot")
        self.ask(f"Are {who}'s hands free?")
        if not self.runner.call("human_hands_free", tool_name(person)):
            self.found(
                Category.WRONG_STATE,
                f"{who}'s hands are not free: they cannot take the {obj.name}.",
                person.id,
            )
        else:
            self.fine(f"{who}'s hands are free")
        self.ask(f"Is {who} within the handover distance ({reach_text(self.handover_distance)})?")
        dist = self._finite_distance(
            self.runner.call("dist_robot_to_human", tool_name(person)), who
        )
        if dist > self.handover_distance:
            self.found(
                Category.OUT_OF_REACH,
                f"{who} is {metres(dist)} away, farther than the handover distance of "
                f"{reach_text(self.handover_distance)}.",
                person.id,
            )
        else:
            self.fine(f"{who} is {metres(dist)} away, close enough for a handover")

    # ------------------------------------------------------------------ issue
    def issue(self) -> Verdict:
        chosen: Finding | None = None
        for cat in PRIORITY:
            chosen = next((f for f in self.findings if f.category is cat), None)
            if chosen is not None:
                break
        extra: Sequence[str]
        if chosen is None:
            category, explanation, extra = Category.NONE, self._all_clear(), []
        else:
            category, explanation, extra = chosen.category, chosen.explanation, chosen.objects
        self.say("issue", f"{category.value}: {explanation}")
        return Verdict(
            category,
            explanation,
            grounding=self._grounding_map(),
            objects=self._objects(extra),
            tool_calls=list(self.runner.calls),
            questions=list(self.questions),
            trace=list(self.trace),
            action=self.action,
        )

    def _all_clear(self) -> str:
        verb = VERBS[self.action][0]
        obj = self.one("object") or self.one("target")
        if self.action == "place":
            what = f"the {display(obj)} in the {display(self.one('destination'))}"
        elif self.action == "handover":
            what = f"the {display(obj)} to {display(self.one('person'))}"
        elif isinstance(obj, Human):
            what = display(obj)
        else:
            what = f"the {display(obj)}"
        facts = list(dict.fromkeys(self.positives))
        reason = (": " + listing(facts, limit=6)) if facts else ""
        return f"The robot can {verb} {what}{reason}."
