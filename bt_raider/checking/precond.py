"""Baselines RAIDER is compared with. :class:`PrecondBaseline` is the paper's *Precond*.

*Action Model Precondition Check* (RAIDER App. B.1, Table B.3): every action has a fixed,
nested list of precondition checks, translated by hand into sentences for the explanation.
The first failing check is the issue; when none fails, the explanation lists the checks
that passed.

=======================  ===========================================================
action(args)             preconditions (checked in this order)
=======================  ===========================================================
pick(object, location)   is_present object; robot_holding none;
                         if is_openable location: is_open location
place(object, location)  is_present object; robot_holding object;
                         if is_openable location: is_open location
open(receptacle)         is_present; robot_holding none; is_openable; is_closed
close(receptacle)        is_present; robot_holding none; is_openable; is_open
turnon(object)           is_present; robot_holding none; is_toggeable; is_turned_off
turnoff(object)          is_present; robot_holding none; is_toggeable; is_turned_on
slice(object)            is_present; robot_holding knife; is_sliceable; not_sliced
=======================  ===========================================================

Implemented honestly, so comparisons are fair: it shares the query parser and the perception
tools with :class:`~bt_raider.checking.symbolic.SymbolicReasoner`, but grounds an argument only by
exact objectId, display name or object type of its head noun (the first such object when
several match: it has no notion of ambiguity), ignores categories, spatial relations and
state adjectives, checks no distance or obstruction, and has no model for ``approach`` or
``handover`` (nothing to check, so it lets them run).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

from bt_raider.checking.contract import Query, as_query
from bt_raider.checking.parse import parse_query
from bt_raider.checking.phrases import ArgPhrase
from bt_raider.checking.tool_runner import ToolFailure, ToolRunner
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import Cancelled
from bt_raider.perception.scene import Scene, SceneObject
from bt_raider.perception.tools import default_tools
from bt_raider.perception.toolset import ToolSet

#: Object types that count as a knife for ``robot_holding knife`` (exact types only).
KNIFE_TYPES = frozenset({"Knife", "ButterKnife"})


def _squash(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(text)).lower()


class PrecondBaseline:
    """RAIDER's *Precond* baseline: fixed precondition checks per action (Table B.3).

    Args:
        tools: the perception tools the checks read (default: ``default_tools()``).
    """

    def __init__(self, tools: ToolSet | None = None, **_ignored: Any) -> None:
        self.tools = tools if tools is not None else default_tools()

    def check(
        self, scene: Scene, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """Run the action's fixed checks; the first failing one is the issue.

        Raises:
            QueryError: an empty query, an unknown action or the wrong number of arguments.
        """
        start = time.monotonic()
        q = as_query(query)
        parsed = parse_query(q.text, q.bindings)
        runner = ToolRunner(scene, self.tools, cancel=cancel)
        run = _PrecondRun(scene, runner, parsed.action, parsed.args)
        try:
            verdict = run.execute()
        except (Cancelled, ToolFailure) as exc:
            verdict = Verdict.unknown(str(exc), tool_calls=list(runner.calls), action=parsed.action)
        verdict.elapsed_s = time.monotonic() - start
        return verdict


class _PrecondRun:
    def __init__(
        self, scene: Scene, runner: ToolRunner, action: str, args: list[ArgPhrase]
    ) -> None:
        self.scene = scene
        self.runner = runner
        self.action = action
        self.args = {a.role: a for a in args}
        self.passed: list[str] = []
        self.questions: list[str] = []
        self.grounding: dict[str, list[str]] = {}
        self.objects: list[str] = []

    # ------------------------------------------------------------------ exact grounding
    def find(self, phrase: ArgPhrase | None) -> SceneObject | None:
        """The first object whose objectId, display name or type is the phrase's head."""
        if phrase is None:
            return None
        names = self.runner.call("object_detection") or []
        objs = []
        for n in names:
            try:
                objs.append(self.scene.resolve(n))
            except Exception:
                continue
        text = re.sub(r"^(?:the|a|an)\s+", "", phrase.text.strip(), flags=re.IGNORECASE)
        for o in objs:
            if o.id == text or o.name.lower() == text.lower():
                return o
        head = _squash(phrase.head)
        for o in objs:
            if _squash(o.type) == head or _squash(o.name) == head:
                return o
        return None

    def held(self) -> list[SceneObject]:
        out = []
        for n in self.runner.call("robot_holding") or []:
            try:
                out.append(self.scene.resolve(n))
            except Exception:
                continue
        return out

    # ------------------------------------------------------------------ checks
    def execute(self) -> Verdict:
        checks: dict[str, Callable[[], Verdict | None]] = {
            "pick": self.pick,
            "place": self.place,
            "open": lambda: self.receptacle("openable", "open", False),
            "close": lambda: self.receptacle("openable", "open", True),
            "turnon": lambda: self.receptacle("toggleable", "on", False),
            "turnoff": lambda: self.receptacle("toggleable", "on", True),
            "slice": self.slice,
        }
        rule = checks.get(self.action)
        if rule is None:
            return self.verdict(
                Category.NONE,
                f"Precond has no precondition model for {self.action}: nothing to check.",
            )
        failed = rule()
        if failed is not None:
            return failed
        return self.verdict(
            Category.NONE,
            f"All preconditions to {self.describe()} hold: " + "; ".join(self.passed) + ".",
        )

    def verdict(self, category: Category, explanation: str) -> Verdict:
        if category is not Category.NONE:
            # The hand translation of a failed check says which action it blocks.
            explanation = f"Cannot {self.describe()}: {explanation[:1].lower()}{explanation[1:]}"
        return Verdict(
            category,
            explanation,
            grounding=dict(self.grounding),
            objects=list(dict.fromkeys(self.objects)),
            tool_calls=list(self.runner.calls),
            questions=list(self.questions),
            trace=[{"role": "precond", "content": q} for q in self.questions],
            action=self.action,
        )

    def describe(self) -> str:
        """``pick the Apple``, ``place the Apple in the Bowl`` (names as far as grounded)."""
        verbs = {"turnon": "turn on", "turnoff": "turn off"}
        parts = [verbs.get(self.action, self.action)]
        for role in ("object", "source", "destination"):
            phrase = self.args.get(role)
            if phrase is None:
                continue
            ids = self.grounding.get(phrase.text)
            name = self.scene.name_of(ids[0]) if ids else _bare(phrase.text)
            prep = {"source": "from ", "destination": "in "}.get(role, "")
            parts.append(f"{prep}the {name}")
        return " ".join(parts)

    def present(self, role: str = "object") -> SceneObject | Verdict:
        phrase = self.args.get(role)
        self.questions.append(f"is_present {phrase.text if phrase else role}")
        obj = self.find(phrase)
        if phrase is not None:
            self.grounding[phrase.text] = [obj.id] if obj else []
        if obj is None:
            what = phrase.text if phrase else role
            return self.verdict(Category.NOT_PRESENT, f"The {_bare(what)} is not present.")
        self.objects.append(obj.id)
        self.passed.append(f"the {obj.name} is present")
        return obj

    def hand_empty(self) -> Verdict | None:
        self.questions.append("robot_holding none")
        held = self.held()
        if held:
            self.objects.extend(o.id for o in held)
            return self.verdict(Category.ROBOT_STATE, f"The robot is holding the {held[0].name}.")
        self.passed.append("the robot is holding nothing")
        return None

    def location_open(self) -> Verdict | None:
        phrase = self.args.get("source") or self.args.get("destination")
        if phrase is None:
            return None
        loc = self.find(phrase)
        self.grounding[phrase.text] = [loc.id] if loc else []
        if loc is None:
            return None
        self.objects.append(loc.id)
        self.questions.append(f"if is_openable {loc.name}: is_open {loc.name}")
        props = self.runner.call("get_obj_properties", loc.name) or {}
        if props.get("openable"):
            state = self.runner.call("get_obj_state", loc.name) or {}
            if not state.get("open"):
                return self.verdict(Category.WRONG_STATE, f"The {loc.name} is not open.")
            self.passed.append(f"the {loc.name} is open")
        else:
            self.passed.append(f"the {loc.name} is not openable")
        return None

    def pick(self) -> Verdict | None:
        obj = self.present()
        if isinstance(obj, Verdict):
            return obj
        return self.hand_empty() or self.location_open()

    def place(self) -> Verdict | None:
        obj = self.present()
        if isinstance(obj, Verdict):
            return obj
        self.questions.append(f"robot_holding {obj.name}")
        if obj.id not in {o.id for o in self.held()}:
            return self.verdict(Category.ROBOT_STATE, f"The robot is not holding the {obj.name}.")
        self.passed.append(f"the robot is holding the {obj.name}")
        return self.location_open()

    def receptacle(self, capability: str, word: str, needed_value: bool) -> Verdict | None:
        obj = self.present()
        if isinstance(obj, Verdict):
            return obj
        failed = self.hand_empty()
        if failed is not None:
            return failed
        check_name = "is_openable" if capability == "openable" else "is_toggeable"
        self.questions.append(f"{check_name} {obj.name}")
        props = self.runner.call("get_obj_properties", obj.name) or {}
        if not props.get(capability):
            return self.verdict(Category.WRONG_PROPERTY, f"The {obj.name} is not {capability}.")
        self.passed.append(f"the {obj.name} is {capability}")
        state = self.runner.call("get_obj_state", obj.name) or {}
        needed = {("open", False): "closed", ("open", True): "open"}.get(
            (word, needed_value), "turned on" if needed_value else "turned off"
        )
        self.questions.append(f"is_{needed.replace(' ', '_')} {obj.name}")
        if bool(state.get(word, False)) != needed_value:
            return self.verdict(Category.WRONG_STATE, f"The {obj.name} is not {needed}.")
        self.passed.append(f"the {obj.name} is {needed}")
        return None

    def slice(self) -> Verdict | None:
        obj = self.present()
        if isinstance(obj, Verdict):
            return obj
        self.questions.append("robot_holding knife")
        if not any(o.type in KNIFE_TYPES for o in self.held()):
            return self.verdict(Category.ROBOT_STATE, "The robot is not holding a knife.")
        self.passed.append("the robot is holding a knife")
        self.questions.append(f"is_sliceable {obj.name}")
        props = self.runner.call("get_obj_properties", obj.name) or {}
        if not props.get("sliceable"):
            return self.verdict(Category.WRONG_PROPERTY, f"The {obj.name} is not sliceable.")
        self.passed.append(f"the {obj.name} is sliceable")
        self.questions.append(f"not_sliced {obj.name}")
        state = self.runner.call("get_obj_state", obj.name) or {}
        if state.get("sliced"):
            return self.verdict(Category.WRONG_STATE, f"The {obj.name} is already sliced.")
        self.passed.append(f"the {obj.name} is not sliced")
        return None


def _bare(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text.strip(), flags=re.IGNORECASE)
