"""Recovery: from an issue and its explanation to a py_trees subtree that fixes it.

RAIDER (section 3.5, Fig. 7) hands the checked action, the issue, its explanation and what the
robot holds to a recovery planner, which writes the corrective actions as Python-like code with
the interaction actions ``ask``/``say``. Here:

* a :class:`RecoveryRequest` carries that query;
* a :class:`RecoveryPlanner` (tiny protocol: ``propose(request) -> code``) writes the code:
  :class:`SymbolicRecovery` (deterministic templates per issue category, offline) and
  :class:`LLMRecovery` (RAIDER's few-shot prompt, ``prompts/recovery.j2``, on any chat model);
  ``bt_raider.planners.pddl_recovery.PddlRecovery`` is a PDDL-based one;
* :class:`Recovery` asks the planner, checks the code with :mod:`bt_raider.recovery.safecode` (never
  executing it), feeds a rejected snippet's reason back to the planner a bounded number of
  times, and compiles the accepted program into a subtree.

Plans end with the recovered action itself on the resolved arguments (``pick(item)`` after
``item = ask(...)``), as RAIDER's examples do. That last call is the plan's *resume step*: it is
not run inside the subtree; the guard re-checks the action with those arguments and then runs
its own child (see :class:`~bt_raider.runtime.guards.RaiderGuard`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import py_trees

from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import BtRaiderError, QueryError, RecoveryCodeError
from bt_raider.llm.prompts import render
from bt_raider.llm.replies import clean_code
from bt_raider.recovery.safecode import (
    DEFAULT_ACTIONS,
    DEFAULT_LIMITS,
    INTERACTION_ACTIONS,
    Limits,
    Program,
    Ref,
    Step,
    Vocabulary,
    compile_program,
    parse_recovery,
)

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene
    from bt_raider.runtime.actions import Robot
    from bt_raider.runtime.human import HumanInterface

#: An examples provider: ``(information, k) -> [(information, goal), ...]``. The CDR memory's
#: ``memory.examples(query, k)`` has this shape.
ExamplesProvider = Callable[[str, int], Sequence[tuple[str, str]]]

#: Where RAIDER's prompt says objects can always be put down for a while.
FREE_SPOT = "free_table"


# ---------------------------------------------------------------------------- the request


@dataclass
class RecoveryRequest:
    """What the recovery planner is asked (RAIDER Fig. 7's query).

    Attributes:
        action: the checked action as written (structured, PDDL instance or natural language).
        verdict: the issue found, with its explanation.
        holding: display names of what the robot holds.
        examples: extra ``(information, goal)`` examples, e.g. from the CDR memory.
        feedback: why the planner's previous code was rejected (None on the first try).
        scene: the scene the check saw, for planners that look things up (optional).
        bindings: PDDL object -> scene name, for a PDDL action instance.
    """

    action: str
    verdict: Verdict
    holding: list[str] = field(default_factory=list)
    examples: list[tuple[str, str]] = field(default_factory=list)
    feedback: str | None = None
    scene: Scene | None = None
    bindings: dict[str, str] = field(default_factory=dict)

    @property
    def action_name(self) -> str | None:
        """The action's name (``pick``), from the verdict or the query text."""
        return action_name(self.verdict.action, self.action, self.bindings)

    def information(self) -> str:
        """The query line of the prompt, and the *information* half of a memory example."""
        issue = self.verdict.final_response.value
        if self.verdict.category.value != issue:
            issue = f"{issue} ({self.verdict.category.value})"
        held = ", ".join(self.holding) if self.holding else "none"
        explanation = " ".join(self.verdict.explanation.split())
        return (
            f"query: {self.action}, issue: {issue}, explanation: {explanation} "
            f"robot holding: {held}"
        )


def _squash(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def split_action(text: str, bindings: dict[str, str] | None = None) -> tuple[str | None, list[str]]:
    """``pick(Apple)`` / ``(pick robot apple table)`` / "grab the apple" -> name and arguments.

    Uses :func:`bt_raider.checking.parse.parse_query` when it understands the text (PDDL arguments then
    come back as scene names through ``bindings``); else a purely syntactic split.
    """
    try:
        from bt_raider.checking.parse import parse_query

        parsed = parse_query(text, bindings or None)
        return parsed.action, [a.text for a in parsed.args]
    except (ImportError, QueryError):
        pass
    match = re.fullmatch(r"\s*([A-Za-z][\w\-]*)\s*\((.*)\)\s*[.!?]?\s*", text, re.DOTALL)
    if match:
        args = [a.strip().strip("'\"") for a in match.group(2).split(",")]
        return match.group(1).lower(), [a for a in args if a]
    match = re.fullmatch(r"\s*\(\s*([\w\-]+)((?:\s+[^\s()]+)*)\s*\)\s*", text)
    if match:
        return match.group(1).lower(), match.group(2).split()
    return None, []


def action_name(
    verdict_action: str | None, text: str, bindings: dict[str, str] | None = None
) -> str | None:
    """The action's name: the verdict's grounded action, else the one parsed from ``text``."""
    if verdict_action:
        return verdict_action
    return split_action(text, bindings)[0]


def same_action(a: str | None, b: str | None) -> bool:
    """``pick`` and ``Pick`` and ``pick-up``... compare case and separator blind."""
    return bool(a) and bool(b) and _squash(a) == _squash(b)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- planners


@runtime_checkable
class RecoveryPlanner(Protocol):
    """Anything that writes recovery code for a request."""

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        """Return recovery code (one statement per line); stop early when ``cancel`` is set."""
        ...


# -- built-in examples


def load_examples() -> list[dict[str, str]]:
    """The built-in examples (``bt_raider/recovery/data/recovery_examples.json``)."""
    path = resources.files("bt_raider.recovery") / "data" / "recovery_examples.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return [dict(e) for e in data["examples"]]


_WORD = re.compile(r"[a-z]+")


def builtin_examples(text: str, k: int) -> list[tuple[str, str]]:
    """The ``k`` built-in examples closest to ``text`` by shared words (deterministic).

    An :data:`ExamplesProvider` that needs no model; the CDR memory replaces it when given.
    """
    words = set(_WORD.findall(text.lower()))
    scored = []
    for i, ex in enumerate(load_examples()):
        other = set(_WORD.findall(ex["information"].lower()))
        overlap = len(words & other) / (len(words | other) or 1)
        scored.append((-overlap, i, ex))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [(ex["information"], ex["goal"]) for _, _, ex in scored[: max(0, k)]]


# -- symbolic


@dataclass(frozen=True)
class _V:
    """A variable in generated code (not quoted)."""

    name: str


def _call(action: str, *args: str | _V | float) -> str:
    parts = [a.name if isinstance(a, _V) else repr(a) for a in args]
    return f"{action}({', '.join(parts)})"


def _assign(var: str, action: str, *args: str | _V) -> str:
    return f"{var} = {_call(action, *args)}"


def _short(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _choices(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


_VERBS = {
    "pick": "pick up",
    "place": "put down",
    "turnon": "turn on",
    "turnoff": "turn off",
    "move_to": "go to",
    "handover": "hand over",
}


@dataclass
class _Ctx:
    """What a template needs, read once from the request."""

    request: RecoveryRequest
    action: str | None
    phrases: list[str]
    free: str = FREE_SPOT
    args: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # An argument the check grounded to one object is named by its display name (the
        # person's answer "it's the one by the plant" becomes Medicine_2).
        self.args = []
        for phrase in self.phrases:
            found = self.verdict.grounding.get(phrase) or []
            self.args.append(self.display(found[0]) if len(found) == 1 else phrase)

    def display(self, ref: str) -> str:
        """Display name of an objectId, or a person's recognised name."""
        if self.scene is None:
            return ref
        name = self.scene.name_of(ref)  # the id itself when it is no object's
        if name != ref:
            return name
        try:
            person = self.scene.human(ref)
        except BtRaiderError:
            return ref
        return person.name or person.id

    @property
    def verdict(self) -> Verdict:
        return self.request.verdict

    @property
    def scene(self) -> Scene | None:
        return self.request.scene

    @property
    def explanation(self) -> str:
        return _short(self.verdict.explanation) or "I cannot do that."

    def verb(self) -> str:
        return _VERBS.get(self.action or "", self.action or "do")

    def name(self, object_id: str) -> str:
        if self.scene is not None:
            return self.scene.name_of(object_id)
        return object_id.split("|", 1)[0]

    def arg(self, i: int, default: str = "object") -> str:
        return self.args[i] if len(self.args) > i else default

    def resume(self, replace_at: int | None = None, value: str | _V | None = None) -> list[str]:
        """The recovered action itself, with argument ``replace_at`` replaced by ``value``."""
        if not self.action or not self.args:
            return []
        args: list[str | _V] = list(self.args)
        if replace_at is not None and value is not None and replace_at < len(args):
            args[replace_at] = value
        if self.action in DEFAULT_ACTIONS:  # e.g. pick's optional source is not a robot arg
            args = args[: max(DEFAULT_ACTIONS[self.action][0])]
        return [_call(self.action, *args)]

    def people(self) -> bool:
        return bool(self.scene is not None and self.scene.humans)

    def is_person(self, ref: str) -> bool:
        if self.scene is None:
            return False
        try:
            self.scene.human(ref)
        except BtRaiderError:
            return False
        return True

    def is_location(self, ref: str) -> bool:
        return self.scene is not None and ref in (self.scene.data.get("locations") or {})

    def obj(self, ref: str):
        if self.scene is None:
            return None
        try:
            return self.scene.resolve(ref)
        except BtRaiderError:
            return None

    def target_ids(self) -> set[str]:
        out: set[str] = set()
        for arg in self.args:
            ids = self.verdict.grounding.get(arg) or []
            if len(ids) == 1:
                out.update(ids)
            o = self.obj(arg)
            if o is not None:
                out.add(o.id)
        return out

    def put_down_held(self, keep: Callable[[str], bool] = lambda _: False) -> list[str]:
        lines: list[str] = []
        for held in self.request.holding:
            if not keep(held):
                lines += [_call("move_to", self.free), _call("place", held)]
        return lines


class SymbolicRecovery:
    """Deterministic recovery templates per issue category (offline, no model).

    Args:
        free_spot: where objects are put down for a while (RAIDER's ``free_table``).

    The templates, in RAIDER's style (the last line is the recovered action itself):

    ===================  ======================================================================
    ambiguity            ``choice = ask("Which <noun> should I <verb>: A or B?")``, the action on
                         ``choice``
    not_present          a person: ``name = ask("Hello, who are you?")``, the action on ``name``;
                         an object: ``location = ask("Where can I find the X?")``,
                         ``move_to(location)``, the action
    out_of_reach         a person: ``approach(person)``; someone around: ``ask("Could you bring the
                         X closer to me, please?")``; else ``move_to(X)``; then the action
    obstructed           someone around, a busy hand or no known blocker: ask them to move the
                         blocker; else pick it, put it on the free spot, come back; the action
    wrong_state          a person not looking / hands busy: ``say(...)``, ``wait_for(...)``; a closed
                         receptacle: ``open`` it (or ask to, when the hand is busy); otherwise
                         ``say`` why (e.g. it is already open)
    robot_state          put what is held on the free spot; fetch a knife before slicing; fetch the
                         object before placing it; then the action
    wrong_property       ``say`` why not
    ===================  ======================================================================
    """

    def __init__(self, *, free_spot: str = FREE_SPOT) -> None:
        self.free_spot = free_spot

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        name, args = split_action(request.action, request.bindings)
        ctx = _Ctx(request, request.verdict.action or name, args, self.free_spot)
        handler = {
            Category.AMBIGUITY: self._ambiguity,
            Category.NOT_PRESENT: self._not_present,
            Category.OUT_OF_REACH: self._out_of_reach,
            Category.OBSTRUCTED: self._obstructed,
            Category.WRONG_STATE: self._wrong_state,
            Category.ROBOT_STATE: self._robot_state,
        }.get(request.verdict.category, self._explain)
        return "\n".join(handler(ctx))

    # -- templates
    def _explain(self, ctx: _Ctx) -> list[str]:
        return [_call("say", ctx.explanation)]

    def _ambiguity(self, ctx: _Ctx) -> list[str]:
        index, phrase, ids = 0, ctx.arg(0), []
        for i, arg in enumerate(ctx.phrases):
            found = ctx.verdict.grounding.get(arg) or []
            if len(found) >= 2:
                index, phrase, ids = i, arg, found
                break
        else:
            for key, found in ctx.verdict.grounding.items():
                if len(found) >= 2:
                    phrase, ids = key, found
                    break
        names = sorted(dict.fromkeys(ctx.name(i) for i in ids))
        if len(names) < len(ids):  # no scene to name them apart: the objectIds do
            names = list(dict.fromkeys(ids))
        noun = re.sub(r"^(the|a|an)\s+", "", phrase.strip(), flags=re.IGNORECASE) or "object"
        types = {o.type for o in map(ctx.obj, ids) if o is not None}
        if len(types) == 1 and len(ids) >= 2:  # "Which medicine", not "Which adrianas_medicine"
            noun = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", types.pop()).lower()
        options = f": {_choices(names)}" if names else ""
        if ctx.action == "place" and index == 1:
            question = f"Where should I put the {ctx.arg(0)}{options}?"
        elif ctx.action == "handover" and index == 1:
            question = f"Who should I hand the {ctx.arg(0)} to{options}?"
        else:
            question = f"Which {noun} should I {ctx.verb()}{options}?"
        return [_assign("choice", "ask", question), *ctx.resume(index, _V("choice"))]

    def _not_present(self, ctx: _Ctx) -> list[str]:
        person_at = {"approach": 0, "handover": 1}.get(ctx.action or "")
        if person_at is not None and len(ctx.args) > person_at:
            ref = ctx.args[person_at]
            unknown = ctx.obj(ref) is None and not ctx.is_location(ref)
            if "recogni" in ctx.explanation.lower() or (ctx.people() and unknown):
                return [
                    _assign("name", "ask", "Hello, who are you?"),
                    *ctx.resume(person_at, _V("name")),
                ]
        missing_at = 0
        for i, arg in enumerate(ctx.phrases):
            if arg in ctx.verdict.grounding and not ctx.verdict.grounding[arg]:
                missing_at = i
                break
        missing = ctx.arg(missing_at)
        return [
            _assign("location", "ask", f"Where can I find the {missing}?"),
            _call("move_to", _V("location")),
            *ctx.resume(),
        ]

    def _out_of_reach(self, ctx: _Ctx) -> list[str]:
        at = 1 if ctx.action in ("place", "handover") and len(ctx.args) > 1 else 0
        target = ctx.arg(at)
        if ctx.action == "handover" or ctx.is_person(target):
            return [_call("approach", target), *ctx.resume()]
        if ctx.action == "pick" and ctx.people():
            return [
                _call("ask", f"Could you bring the {target} closer to me, please?"),
                *ctx.resume(),
            ]
        return [_call("move_to", target), *ctx.resume()]

    def _obstructed(self, ctx: _Ctx) -> list[str]:
        at = 1 if ctx.action == "place" and len(ctx.args) > 1 else 0
        target = ctx.arg(at)
        own = ctx.target_ids()
        blockers = [ctx.name(i) for i in ctx.verdict.objects if i not in own]
        if ctx.scene is not None:
            t = ctx.obj(target)
            key = t.id if t is not None else target
            for b in ctx.scene.blocked.get(key, []) + ctx.scene.blocked.get(target, []):
                if b not in own:
                    blockers.append(ctx.name(b))
        blockers = list(dict.fromkeys(blockers))
        if not blockers:
            return [
                _call("ask", f"{ctx.explanation} Could you clear the way, please?"),
                *ctx.resume(),
            ]
        movable = all((o := ctx.obj(b)) is not None and o.flag("pickupable") for b in blockers)
        if (
            ctx.action in ("approach", "move_to")
            or ctx.people()
            or ctx.request.holding
            or not movable
        ):
            things = " and the ".join(blockers)
            return [
                _call("ask", f"Could you move the {things} out of the way, please?"),
                *ctx.resume(),
            ]
        lines: list[str] = []
        for b in blockers:
            lines += [_call("pick", b), _call("move_to", ctx.free), _call("place", b)]
        return [*lines, _call("move_to", target), *ctx.resume()]

    def _wrong_state(self, ctx: _Ctx) -> list[str]:
        text = ctx.explanation.lower()
        if ctx.action == "handover" and len(ctx.args) > 1:
            thing, person = ctx.args[0], ctx.args[1]
            if "look" in text:
                return [
                    _call("say", f"{person}, please look at me so I can hand you the {thing}."),
                    _call("wait_for", f"{person} looking at me"),
                    *ctx.resume(),
                ]
            if "hand" in text:
                return [
                    _call(
                        "say", f"{person}, please free your hands so I can give you the {thing}."
                    ),
                    _call("wait_for", f"{person} has free hands"),
                    *ctx.resume(),
                ]
        if ctx.action in ("pick", "place") and "closed" in text:
            closed = self._closed_receptacle(ctx)
            if closed is not None:
                if ctx.request.holding and ctx.action == "place":
                    return [
                        _call("ask", f"Could you open the {closed} for me, please?"),
                        *ctx.resume(),
                    ]
                return [*ctx.put_down_held(), _call("open", closed), *ctx.resume()]
        return self._explain(ctx)

    @staticmethod
    def _closed_receptacle(ctx: _Ctx) -> str | None:
        candidates = list(ctx.verdict.objects)
        if ctx.action == "place" and len(ctx.args) > 1:
            candidates.insert(0, ctx.args[1])
        target = ctx.obj(ctx.arg(0)) if ctx.action == "pick" else None
        if target is not None:  # what the object to pick is in
            candidates += target.parents
        for ref in candidates:
            o = ctx.obj(ref) if ctx.scene is not None else None
            if o is not None and o.flag("openable") and not o.flag("isOpen"):
                return o.name
        if ctx.scene is None and ctx.action == "place" and len(ctx.args) > 1:
            return ctx.args[1]
        return None

    def _robot_state(self, ctx: _Ctx) -> list[str]:
        held = ctx.request.holding
        if ctx.action == "slice":
            knife = self._knife(ctx)
            is_knife = lambda name: "knife" in name.lower()  # noqa: E731
            if any(is_knife(h) for h in held):
                return self._explain(ctx)
            lines = ctx.put_down_held()
            if knife is not None:
                lines += [_call("move_to", knife), _call("pick", knife)]
            else:
                lines += [
                    _assign("knife_location", "ask", "Where can I find a knife?"),
                    _call("move_to", _V("knife_location")),
                    _call("pick", "Knife"),
                ]
            return [*lines, _call("move_to", ctx.arg(0)), *ctx.resume()]
        if ctx.action == "place":
            thing = ctx.arg(0)
            if any(_squash(h) == _squash(thing) for h in held):
                return self._explain(ctx)
            lines = ctx.put_down_held()
            if ctx.obj(thing) is not None:
                lines += [_call("move_to", thing), _call("pick", thing)]
            else:
                lines += [
                    _assign("location", "ask", f"Where can I find the {thing}?"),
                    _call("move_to", _V("location")),
                    _call("pick", thing),
                ]
            if len(ctx.args) > 1:
                lines.append(_call("move_to", ctx.args[1]))
            return [*lines, *ctx.resume()]
        if held:
            return [*ctx.put_down_held(), _call("move_to", ctx.arg(0)), *ctx.resume()]
        return self._explain(ctx)

    @staticmethod
    def _knife(ctx: _Ctx) -> str | None:
        if ctx.scene is None:
            return None
        for o in ctx.scene.objects:
            if o.type in ("Knife", "ButterKnife") and not o.flag("isPickedUp"):
                return o.name
        return None


# -- LLM


#: RAIDER's contextual notes (Fig. 7), worded for code output.
DEFAULT_NOTES = (
    f"There is always a free table '{FREE_SPOT}' to move to and place objects momentarily or "
    "that are not needed for the instruction.",
    "The robot is initially at the query location.",
    "The robot has a single arm and cannot perform actions while holding an object, except for "
    "placing the held object or slicing if holding a knife.",
    "End with the query action itself on the resolved objects (e.g. pick(item)), unless the "
    "action is impossible: then only say() why.",
)


class LLMRecovery:
    """RAIDER's recovery LLM: the few-shot prompt of Fig. 7 on any chat model.

    Args:
        chat: a :class:`bt_raider.llm.chat.ChatModel` (``complete(messages, *, tools, timeout)``).
        examples: an :data:`ExamplesProvider` (e.g. the CDR memory's ``memory.examples``);
            the built-in examples (:func:`builtin_examples`) when None.
        k: how many examples the provider is asked for.
        vocabulary: the actions offered to the model.
        notes: the prompt's contextual notes (:data:`DEFAULT_NOTES`).
        timeout: seconds per model call.
    """

    def __init__(
        self,
        chat: Any,
        *,
        examples: ExamplesProvider | None = None,
        k: int = 4,
        vocabulary: Vocabulary | None = None,
        notes: Sequence[str] = DEFAULT_NOTES,
        timeout: float | None = None,
    ) -> None:
        self.chat = chat
        self.examples = examples or builtin_examples
        self.k = k
        self.vocabulary = vocabulary or Vocabulary()
        self.notes = list(notes)
        self.timeout = timeout

    def prompt(self, request: RecoveryRequest) -> str:
        """The rendered prompt for ``request``."""
        information = request.information()
        shots = list(request.examples)
        for ex in self.examples(information, self.k):
            pair = (str(ex[0]), str(ex[1]))
            if pair not in shots:
                shots.append(pair)
        return render(
            "recovery",
            actions=self.vocabulary.usage(),
            notes=self.notes,
            examples=shots,
            query=information,
            feedback=request.feedback,
        )

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        if cancel is not None and cancel.is_set():
            raise RecoveryCodeError("recovery planning was cancelled")
        messages = [{"role": "user", "content": self.prompt(request)}]
        reply = self.chat.complete(messages, timeout=self.timeout)
        return str(getattr(reply, "content", "") or "")


# ---------------------------------------------------------------------------- Recovery


@dataclass
class RecoveryPlan:
    """An accepted recovery: the code, its program, what runs and where the guard resumes.

    Attributes:
        request: the request it answers.
        code: the accepted code, canonical (one statement per line).
        program: the whole program.
        run: the steps that run in the subtree (the program without the resume step).
        resume: the last step when it is the recovered action itself, else None.
        proposals: how many times the planner was asked.
        rejected: the reasons earlier proposals were rejected.
    """

    request: RecoveryRequest
    code: str
    program: Program
    run: Program
    resume: Step | None
    proposals: int = 1
    rejected: list[str] = field(default_factory=list)

    @property
    def gives_up(self) -> bool:
        """True when the plan only says why the action cannot be done (RAIDER's unfeasible case)."""
        return self.program.only_says

    @property
    def variables(self) -> tuple[str, ...]:
        return self.program.variables


class Recovery:
    """Ask a planner for recovery code, accept it only through the whitelist, compile it.

    Args:
        planner: a :class:`RecoveryPlanner`.
        robot: runs the robot actions of the plan.
        human: answers ``ask`` and hears ``say``.
        vocabulary: the allowed actions (RAIDER's by default).
        max_retries: how many times rejected code goes back to the planner with the reason.
        limits: size limits for the code.
        on_success: called with ``(information, code)`` when a plan led to the action running
            (the guard's re-check found no issue). It is called on the tick, so it must return
            at once: use :meth:`bt_raider.recovery.fewshot.MemoryLink.record`, which queues the write.
    """

    def __init__(
        self,
        planner: RecoveryPlanner,
        robot: Robot,
        human: HumanInterface,
        *,
        vocabulary: Vocabulary | None = None,
        max_retries: int = 2,
        limits: Limits = DEFAULT_LIMITS,
        on_success: Callable[[str, str], None] | None = None,
    ) -> None:
        if not callable(getattr(planner, "propose", None)):
            raise TypeError(f"planner must have propose(request, *, cancel), got {planner!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        self.planner = planner
        self.robot = robot
        self.human = human
        self.vocabulary = vocabulary or Vocabulary()
        self.max_retries = max_retries
        self.limits = limits
        self.on_success = on_success

    def plan(
        self, request: RecoveryRequest, *, cancel: threading.Event | None = None
    ) -> RecoveryPlan:
        """Get accepted code for ``request`` (thread-safe: nothing touches the tree).

        Raises:
            RecoveryCodeError: every proposal was rejected (the message has the last reason),
                or planning was cancelled.
        """
        rejected: list[str] = []
        current = request
        for attempt in range(1, self.max_retries + 2):
            if cancel is not None and cancel.is_set():
                raise RecoveryCodeError("recovery planning was cancelled")
            code = self.planner.propose(current, cancel=cancel)
            try:
                program = parse_recovery(clean_code(code), self.vocabulary, limits=self.limits)
            except RecoveryCodeError as exc:
                rejected.append(str(exc))
                current = replace(current, feedback=str(exc))
                continue
            return self._split(request, program, attempt, rejected)
        raise RecoveryCodeError(
            f"no acceptable recovery for {request.action!r} after {len(rejected)} proposal(s); "
            f"last rejection: {rejected[-1]}"
        )

    def _split(
        self, request: RecoveryRequest, program: Program, proposals: int, rejected: list[str]
    ) -> RecoveryPlan:
        last = program.steps[-1]
        resume = None
        if last.action not in INTERACTION_ACTIONS and same_action(last.action, request.action_name):
            resume = last
        run = Program(program.steps[:-1] if resume else program.steps, program.source)
        return RecoveryPlan(
            request, program.to_code(), program, run, resume, proposals, list(rejected)
        )

    def compile(
        self, plan: RecoveryPlan, *, name: str | None = None
    ) -> py_trees.behaviour.Behaviour:
        """The subtree of ``plan`` (call on the tree's thread: it registers blackboard clients)."""
        return compile_program(
            plan.run, self.robot, self.human, name=name or f"Recovery {plan.request.action}"
        )

    def build(
        self, request: RecoveryRequest, *, cancel: threading.Event | None = None
    ) -> py_trees.behaviour.Behaviour:
        """:meth:`plan` then :meth:`compile`: the subtree for ``request``."""
        return self.compile(self.plan(request, cancel=cancel))

    def succeeded(self, plan: RecoveryPlan) -> None:
        """Report that ``plan`` worked (the guard calls this); feeds ``on_success``."""
        if self.on_success is not None:
            self.on_success(plan.request.information(), plan.code)


def resolve_resume(step: Step, values: dict[str, Any]) -> list[Any]:
    """The resume step's arguments with variables replaced by their values."""
    return [values[a.name] if isinstance(a, Ref) else a for a in step.args]
