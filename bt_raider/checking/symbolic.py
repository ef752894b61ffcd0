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

The questions of each action, and how their answers are judged, live in
:mod:`~bt_raider.checking.action_rules`; this module runs a check through its steps.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from bt_raider.checking.action_rules import _ActionRules
from bt_raider.checking.contract import Query, as_query
from bt_raider.checking.grounding import Grounded, Grounder
from bt_raider.checking.parse import ParsedQuery, parse_query
from bt_raider.checking.phrases import parse_phrase
from bt_raider.checking.steps import check_steps, split_steps
from bt_raider.checking.tool_runner import ToolFailure, ToolRunner
from bt_raider.checking.verdict import PRIORITY, Category, ToolCall, Verdict
from bt_raider.checking.wording import VERBS, display, listing, natural_key, there_is_no
from bt_raider.errors import Cancelled, SceneError, ToolError
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.perception.reference import speaker_view
from bt_raider.perception.relations import SINGLE_SLOT_TYPES
from bt_raider.perception.scene import Human, Scene
from bt_raider.perception.tools import default_tools
from bt_raider.perception.toolset import ToolSet

if TYPE_CHECKING:
    from bt_raider.checking.action_contract import ActionContract, ActionContracts


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
        contracts: the user's action contract
            (:class:`~bt_raider.checking.action_contract.ActionContracts`): a call of one of its
            actions is checked on the arguments its kind acts on, by role; a new kind by its
            declared preconditions (:mod:`bt_raider.checking.new_actions`).
    """

    def __init__(
        self,
        tools: ToolSet | None = None,
        lexicon: CategoryLexicon | None = None,
        *,
        time_limit: float | None = None,
        single_slot: frozenset[str] | set[str] = SINGLE_SLOT_TYPES,
        contracts: ActionContracts | None = None,
    ) -> None:
        self.contracts = contracts
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
        found = self.contracts.split(q.text) if self.contracts is not None else None
        if found is not None and found[0].new:
            contract, args = found
            picked = contract.picked([q.bindings.get(a, a) for a in args])
            phrases = [parse_phrase(value)._replace(role="object") for _, value, _ in picked]
            parsed = ParsedQuery(contract.name, phrases, "structured", q.text)
            return _Check(self, scene, q, parsed, cancel, deadline, contract).execute()
        if found is not None:
            text = found[0].query([q.bindings.get(a, a) for a in found[1]])
            q = Query(text, q.preconditions, q.unsatisfied)
        parsed = parse_query(q.text, q.bindings, self.lexicon)
        if parsed.request and not scene.humans:
            # "I need the salt shaker" where the scene models nobody: fetching it is the action.
            parsed = parsed.as_pick()
        return _Check(self, scene, q, parsed, cancel, deadline).execute()


# --------------------------------------------------------------------------- one check
class _Check(_ActionRules):
    """The state of one check: trace, questions, findings."""

    def __init__(
        self,
        owner: SymbolicReasoner,
        scene: Scene,
        query: Query,
        parsed: ParsedQuery,
        cancel: threading.Event | None,
        deadline: float | None,
        contract: ActionContract | None = None,
    ) -> None:
        self.owner = owner
        self.contract = contract  # a new kind's declared contract
        self.scene = scene
        self.query = query
        self.parsed = parsed
        self.action = parsed.action
        self.trace: list[dict[str, Any]] = []
        self.questions: list[str] = []
        self.findings: list[Finding] = []
        self.positives: list[str] = []
        self.grounded: dict[str, Grounded] = {}
        self.any_of: dict[str, list[str]] = {}  # "any box": phrase -> every box it allows
        self.runner = ToolRunner(
            scene, owner.tools, cancel=cancel, deadline=deadline, on_call=self._on_call
        )
        self.grounder = Grounder(self.runner, owner.lexicon, literal=parsed.source == "pddl")
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
        # "my left", "near me": from the person who speaks (the one marked user, or the only
        # one); read here so that a bad heading fails closed like any scene value.
        self.grounder.speaker = speaker_view(self.scene)
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
        for role, g in list(self.grounded.items()):
            d = g.designation
            if d is not None and d.unclear:
                # A word nobody read could change what is meant: ask, never act.
                issues.append(
                    Finding(
                        Category.AMBIGUITY,
                        f"The query is ambiguous: {d.unclear} in '{g.phrase.text}'.",
                        g.ids,
                    )
                )
                continue
            if d is not None and d.mode == "several" and g.candidates:
                names = sorted(g.names, key=natural_key)
                issues.append(
                    Finding(
                        Category.AMBIGUITY,
                        f"The query is ambiguous: '{g.phrase.text}' names several objects, "
                        f"not one: {listing(names)}.",
                        g.ids,
                    )
                )
                continue
            if d is not None and d.mode == "any" and len(g.candidates) > 1:
                # "any box": every member will do; the first is the one checked, the grounding
                # keeps them all (the designation), this one first.
                self.grounded[role] = g._replace(candidates=[g.candidates[0]])
                self.any_of[g.phrase.text] = g.ids
                continue
            if len(g.candidates) > 1:
                names = sorted(g.names, key=natural_key)
                why = f" ({g.reason})" if g.reason else ""  # "at a similar angle ..."
                issues.append(
                    Finding(
                        Category.AMBIGUITY,
                        f"The query is ambiguous: '{g.phrase.text}' matches {len(names)} "
                        f"{'people' if g.kind == 'person' else 'objects'}: {listing(names)}"
                        f"{why}.",
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
        # Exactly the designation: for "any box", every box (the one checked first).
        return {
            g.phrase.text: list(dict.fromkeys([*g.ids, *self.any_of.get(g.phrase.text, [])]))
            for g in self.grounded.values()
        }

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
        if self.contract is not None:
            # Imported here: a user's declared kinds (dataclasses, inspect) stay off the path
            # of a check of the built-in nine (bt-raider check's start-up).
            from bt_raider.checking import new_actions

            new_actions.answer(self, self.contract)
        else:
            rules[self.action]()
        if self.query.preconditions or self.query.unsatisfied:
            # Imported for a plan's facts only: its 16 patterns compile at import.
            from bt_raider.checking.plan_facts import PlanFacts

            PlanFacts(self).check()

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
        obj = self.one("object") or self.one("target")
        if self.contract is not None:
            facts = list(dict.fromkeys(self.positives))
            reason = (": " + listing(facts, limit=6)) if facts else ""
            what = f"({display(obj)})" if obj is not None else "()"
            return f"The robot can {self.contract.name}{what}{reason}."
        verb = VERBS[self.action][0]
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
