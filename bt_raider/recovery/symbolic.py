"""Symbolic recovery: RAIDER's recovery templates per issue category, written as safe code
(ask the person which object, move what is in the way, come closer, ...), with no model.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bt_raider.checking.parse import split_action, squash_name
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import BtRaiderError, renamed
from bt_raider.perception.people import PeoplePolicy, is_description, scene_policy
from bt_raider.recovery.answers import AnswerSpace, strip_article
from bt_raider.recovery.contract import (
    RecoveryRequest,
    ambiguity_candidates,
    free_surface,
)
from bt_raider.recovery.robot_actions import RobotActions
from bt_raider.recovery.safecode import (
    DEFAULT_ACTIONS,
)
from bt_raider.recovery.wording import MAX_DESCRIBED, description_of, spoken

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene, SceneObject


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


class _CannotPlan(BtRaiderError):
    """A template needs what the robot or the scene does not offer; the plan says why instead."""


def _the(name: str | _V) -> str:
    """``the X`` without doubling an article the phrase already has."""
    return f"the {strip_article(str(name))}"


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
    free_spot: str | None = None
    args: list[str] = field(default_factory=list)
    actions: RobotActions = field(default_factory=RobotActions.raider)

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

    def said(self, ref: str | _V) -> str:
        """How a question names ``ref`` to a person, never by an internal label: "the clean
        cup" for Cup_2 of several, "the medicine counter" for medicine_counter, else "the X"."""
        text = strip_article(str(ref))
        o = self.obj(text) if not isinstance(ref, _V) else None
        if o is not None and self.scene is not None and re.fullmatch(r".*_\d+", text):
            same = [x for x in self.scene.objects if x.type == o.type]
            if len(same) > 1 and len(same) <= MAX_DESCRIBED:
                space = AnswerSpace.objects(self.scene, [x.id for x in same], describe=False)

                def fits(phrase: str) -> str | None:
                    reading = space.read(phrase)
                    return reading.value if reading.usable else None

                phrase = description_of(self.scene, o, same, fits)
                if phrase is not None:
                    return phrase
            if len(same) == 1:
                return f"the {spoken(o.type)}"
            # Nothing a person sees tells it apart: "the drawer" would leave them guessing
            # which of nine to open, so the name stays (a gap the explorer's P7 reports).
            return _the(text)
        if re.fullmatch(r"[a-z]+(?:_[a-z]+)+", text):  # a location's id: medicine_counter
            return f"the {spoken(text)}"
        return _the(ref)

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
        # The guard runs its own child for the action: the robot's name when it has one.
        return [_call(self.actions.name_for(self.action) or self.action, *args)]

    def people(self) -> bool:
        return bool(self.scene is not None and self.scene.humans)

    @property
    def policy(self) -> PeoplePolicy:
        """Who may be asked what: the request's, else the scene's ``policy``, else the default."""
        if self.request.policy is not None:
            return self.request.policy
        return scene_policy(self.scene.data) if self.scene is not None else PeoplePolicy()

    def may_ask(self, kind: str) -> bool:
        """Whether someone in sight may be asked a question of ``kind`` (an errand needs
        someone there; "which" and "where" go to whoever speaks to the robot)."""
        if self.scene is None:
            return True  # who is there is not known: RAIDER's templates as they were
        humans = self.scene.humans
        if not humans:
            # Nobody in sight: with a declared policy nobody is sent on an errand; RAIDER's
            # default asks the user, wherever they are, as in the paper.
            return not self.policy.prefer_own or kind not in ("fetch", "move", "open", "look")
        return self.policy.anyone_may(humans, kind)

    def unrecognised(self) -> bool:
        """Someone is in sight whose name the robot does not know."""
        return self.scene is not None and any(not h.name for h in self.scene.humans)

    def person_named(self, ref: str) -> bool:
        """Whether ``ref`` names a person: someone in sight, or on the policy's roster."""
        return self.is_person(ref) or self.policy.knows(strip_article(ref))

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

    def obj(self, ref: str) -> SceneObject | None:
        if self.scene is None:
            return None
        try:
            return self.scene.resolve(ref)
        except BtRaiderError:
            return None

    def target_ids(self) -> set[str]:
        out: set[str] = set()
        # The phrases as written key the grounding ("the medicine counter"), not display names.
        for arg in (*self.phrases, *self.args):
            ids = self.verdict.grounding.get(arg) or []
            if len(ids) == 1:
                out.update(ids)
            o = self.obj(arg)
            if o is not None:
                out.add(o.id)
        return out

    def has(self, *verbs: str) -> bool:
        """Whether the robot offers all these RAIDER verbs."""
        return all(self.actions.has(v) for v in verbs)

    def can(self, verb: str, kind: str | None = None) -> bool:
        """Whether the robot has a skill for ``verb`` on an object of type ``kind``."""
        return self.actions.name_for(verb, kind=kind) is not None

    def do(self, verb: str, *args: str | _V | float, kind: str | None = None) -> str:
        """A call of RAIDER's ``verb`` under the robot's own name (the skill for the object's
        type ``kind`` when the robot has several: ``OpenDoor`` for a door).

        Raises:
            _CannotPlan: the robot has no action for ``verb``.
        """
        if kind is None and args and isinstance(args[0], str):
            o = self.obj(args[0])
            kind = o.type if o is not None else None
        name = self.actions.name_for(verb, kind=kind)
        if name is None and verb == "approach":  # a robot without approach moves there
            name = self.actions.name_for("move_to")
        if name is None:
            raise _CannotPlan(f"I have no action to {_VERBS.get(verb, verb)}")
        return _call(name, *args)

    def reach_first(self, ref: str) -> list[str]:
        """``move_to(ref)`` when ``ref`` is beyond the robot's reach (else nothing)."""
        if self.scene is None or not self.has("move_to"):
            return []
        try:
            o = self.obj(ref)
            far = self.scene.distance_to_robot(o.id if o else ref)
            far = far > self.scene.robot["reach"]
        except BtRaiderError:
            return []
        return [self.do("move_to", ref)] if far else []

    @property
    def free(self) -> str:
        """A real free surface of the scene (or the configured spot) to put things down on.

        Raises:
            _CannotPlan: there is none.
        """
        if self.free_spot is not None:
            return self.free_spot
        spot = free_surface(self.scene, exclude=sorted(self.target_ids()))
        if spot is None:
            raise _CannotPlan("I know of no free surface to put things down on")
        return spot.name

    def put_down_held(self, keep: Callable[[str], bool] = lambda _: False) -> list[str]:
        lines: list[str] = []
        for held in self.request.holding:
            if not keep(held):
                lines += [self.do("move_to", self.free), self.do("place", held)]
        return lines


class SymbolicRecoveryPlanner:
    """Deterministic recovery templates per issue category (offline, no model).

    Args:
        free_spot: where objects are put down for a while; None (the default): a real free
            surface of the request's scene near the robot (:func:`~bt_raider.recovery.contract.free_surface`),
            and without one the plan says why instead of inventing a place.

    Only the robot's actions (``request.actions``, RAIDER's by default) are written, under the
    robot's names (``navigate`` for ``move_to``); a template that needs an action the robot does
    not have asks the person or says why.

    The templates, in RAIDER's style (the last line is the recovered action itself):

    ===================  ======================================================================
    ambiguity            ``choice = ask("Which <noun> should I <verb>: A or B?")``, the action on
                         ``choice``; for words left over, what was not understood first and
                         the objects of that kind as options
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

    def __init__(self, *, free_spot: str | None = None) -> None:
        self.free_spot = free_spot

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        name, args = split_action(request.action, request.bindings)
        actions = request.actions or RobotActions.raider()
        ctx = _Ctx(request, request.verdict.action or name, args, self.free_spot, actions=actions)
        handler = {
            Category.AMBIGUITY: self._ambiguity,
            Category.NOT_PRESENT: self._not_present,
            Category.OUT_OF_REACH: self._out_of_reach,
            Category.OBSTRUCTED: self._obstructed,
            Category.WRONG_STATE: self._wrong_state,
            Category.ROBOT_STATE: self._robot_state,
        }.get(request.verdict.category, self._explain)
        try:
            return "\n".join(handler(ctx))
        except _CannotPlan as exc:
            return _call("say", _short(f"{ctx.explanation} I cannot fix this myself: {exc}."))

    # -- templates
    def _explain(self, ctx: _Ctx) -> list[str]:
        return [_call("say", ctx.explanation)]

    def _ambiguity(self, ctx: _Ctx) -> list[str]:
        # Words left over ("the wobbly red box"): the objects of that type are the candidates.
        grounding = ambiguity_candidates(ctx.request)
        # The phrase as the person said it, never a display name ("Which Box_1 ...?").
        index, phrase, ids = 0, ctx.phrases[0] if ctx.phrases else ctx.arg(0), []
        for i, arg in enumerate(ctx.phrases):
            found = grounding.get(arg) or []
            if len(found) >= 2:
                index, phrase, ids = i, arg, found
                break
        else:
            for key, found in grounding.items():
                if len(found) >= 2:
                    phrase, ids = key, found
                    break
        # People by their names (person_1 means nothing to the person asked); objects as a
        # person tells them apart ("the clean cup"), in the order the answer's reader counts.
        names = sorted(dict.fromkeys(ctx.display(i) for i in ids))
        if len(names) < len(ids):  # no scene to name them apart: the objectIds do
            names = list(dict.fromkeys(ids))
        objs = [o for o in map(ctx.obj, ids) if o is not None and o.id in ids]
        alike = ""
        if ctx.scene is not None and len(objs) == len(ids) >= 2:
            names = AnswerSpace.objects(ctx.scene, ids).labels
            if any(re.search(r"_\d+$", n) for n in names):
                # Not all can be told apart by what a person sees: never "Cup_1 or Cup_2?".
                names, alike = [], f" I see {len(ids)}: please describe the one you mean."
        noun = re.sub(r"^(the|a|an)\s+", "", phrase.strip(), flags=re.IGNORECASE) or "object"
        found = ids or grounding.get(phrase) or []
        types = {o.type for o in map(ctx.obj, found) if o is not None}
        if len(types) == 1 and found:  # "Which medicine", not "Which adrianas_medicine"
            noun = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", types.pop()).lower()
        if re.search(r"_\d+\b|\|", noun):  # never an internal label: "Which Box_1?"
            noun = "one"
        only = ctx.obj(found[0]) if not ids and len(found) == 1 else None
        if only is not None:
            # The only one of its kind in sight: the person says whether it is the one.
            alike = f" I see only the {spoken(only.type)}."
        options = f": {_choices(names)}" if names else ""
        if ctx.action == "place" and index == 1:
            question = f"Where should I put {ctx.said(ctx.arg(0))}{options}?"
        elif ctx.action == "handover" and index == 1:
            question = f"Who should I hand {ctx.said(ctx.arg(0))} to{options}?"
        else:
            question = f"Which {noun} should I {ctx.verb()}{options}?"
        question = _unread(ctx.explanation) + question + alike
        return [_assign("choice", "ask", question), *ctx.resume(index, _V("choice"))]

    def _not_present(self, ctx: _Ctx) -> list[str]:
        person_at = {"approach": 0, "handover": 1}.get(ctx.action or "")
        if person_at is not None and len(ctx.args) > person_at:
            ref = ctx.args[person_at]
            unknown = ctx.obj(ref) is None and not ctx.is_location(ref)
            person = (
                ctx.action == "handover"
                or "recogni" in ctx.explanation.lower()  # the check says it is a person
                or ctx.person_named(ref)
                or is_description(ref)
            )
            if unknown and person:
                return self._designated_person(ctx, person_at, ref)
        missing_at = 0
        for i, arg in enumerate(ctx.phrases):
            if arg in ctx.verdict.grounding and not ctx.verdict.grounding[arg]:
                missing_at = i
                break
        missing = ctx.arg(missing_at)
        if not ctx.has("move_to"):
            return [_call("ask", f"Could you bring me {ctx.said(missing)}, please?"), *ctx.resume()]
        return [
            _assign("location", "ask", f"Where can I find {ctx.said(missing)}?"),
            ctx.do("move_to", _V("location")),
            *ctx.resume(),
        ]

    def _designated_person(self, ctx: _Ctx, at: int, ref: str) -> list[str]:
        """The person the action designates is not recognised in sight.

        By description ("the user", "the resident"): ask who is there; the answer is the
        person (the re-check decides whether they can be served). By name: ask only when
        someone in sight is not recognised, and only that name is accepted; otherwise say the
        person is not here, and fail (or wait, when the policy says so). Never a substitute.
        """
        who = strip_article(ref)
        if is_description(ref) or ctx.unrecognised() or ctx.scene is None:
            if ctx.may_ask("identify"):
                return [_assign("name", "ask", "Hello, who are you?"), *ctx.resume(at, _V("name"))]
        seen = [h.name for h in ctx.scene.humans if h.name] if ctx.scene is not None else []
        here = f" I can see only {_choices(seen).replace(' or ', ' and ')}." if seen else ""
        if ctx.policy.absent == "wait":
            return [
                _call("say", f"{who} is not here.{here} I will wait for {who}."),
                _call("wait_for", f"{who} is here"),
                *ctx.resume(),
            ]
        return [_call("say", f"{who} is not here, so I cannot {ctx.verb()} to {who}.{here}")]

    def _out_of_reach(self, ctx: _Ctx) -> list[str]:
        at = 1 if ctx.action in ("place", "handover") and len(ctx.args) > 1 else 0
        target = ctx.arg(at)
        if ctx.action == "handover" or ctx.is_person(target):
            return [ctx.do("approach", target), *ctx.resume()]
        own = ctx.has("move_to") and (ctx.policy.prefer_own or not ctx.may_ask("fetch"))
        if ctx.action == "pick" and (ctx.people() or not ctx.has("move_to")) and not own:
            # The robot's own actions first (a declared policy): a person is asked only what
            # the robot cannot do, and only who may be sent on errands.
            if not ctx.may_ask("fetch"):
                raise _CannotPlan(
                    f"I cannot reach {ctx.said(target)}, and nobody here may fetch it"
                )
            return [
                _call("ask", f"Could you bring {ctx.said(target)} closer to me, please?"),
                *ctx.resume(),
            ]
        return [ctx.do("move_to", target), *ctx.resume()]

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
            if not ctx.may_ask("move"):
                raise _CannotPlan("nobody here may clear the way for me")
            return [
                _call("ask", f"{ctx.explanation} Could you clear the way, please?"),
                *ctx.resume(),
            ]
        closed = [o for o in map(ctx.obj, blockers) if o is not None and _a_closed_door(o)]
        if len(closed) == len(blockers) and all(ctx.can("open", o.type) for o in closed):
            # A closed door on the way: the robot opens it itself, nobody is asked.
            opened: list[str] = []
            for door in closed:
                opened += [*ctx.reach_first(door.name), ctx.do("open", door.name, kind=door.type)]
            return [*opened, *ctx.resume()]
        movable = all((o := ctx.obj(b)) is not None and o.flag("pickupable") for b in blockers)
        try:
            spot = ctx.free if movable else None
        except _CannotPlan:
            spot = None
        if (
            ctx.action in ("approach", "move_to")
            or ctx.request.holding
            or not movable
            or spot is None
            or not ctx.has("pick", "move_to", "place")
        ):
            if not ctx.may_ask("move"):
                raise _CannotPlan("nobody here may move it out of the way for me")
            things = " and ".join(_in_the_way(ctx, blockers))
            return [
                _call("ask", f"Could you move {things} out of the way, please?"),
                *ctx.resume(),
            ]
        lines: list[str] = []
        for b in blockers:  # a blocker out of reach is fetched first
            lines += [*ctx.reach_first(b), ctx.do("pick", b)]
            lines += [ctx.do("move_to", spot), ctx.do("place", b)]
        return [*lines, ctx.do("move_to", target), *ctx.resume()]

    def _wrong_state(self, ctx: _Ctx) -> list[str]:
        text = ctx.explanation.lower()
        if ctx.action == "handover" and len(ctx.args) > 1:
            thing, person = ctx.args[0], ctx.args[1]
            if "look" in text:
                return [
                    _call(
                        "say", f"{person}, please look at me so I can hand you {ctx.said(thing)}."
                    ),
                    _call("wait_for", f"{person} looking at me"),
                    *ctx.resume(),
                ]
            if "hand" in text:
                return [
                    _call(
                        "say",
                        f"{person}, please free your hands so I can give you {ctx.said(thing)}.",
                    ),
                    _call("wait_for", f"{person} has free hands"),
                    *ctx.resume(),
                ]
        if ctx.action in ("pick", "place") and "closed" in text:
            closed = self._closed_receptacle(ctx)
            if closed is not None:
                shut = ctx.obj(closed)
                if (ctx.request.holding and ctx.action == "place") or not ctx.can(
                    "open", shut.type if shut is not None else None
                ):
                    if not ctx.may_ask("open"):
                        raise _CannotPlan(f"nobody here may open {ctx.said(closed)} for me")
                    return [
                        _call("ask", f"Could you open {ctx.said(closed)} for me, please?"),
                        *ctx.reach_first(closed),
                        *ctx.resume(),
                    ]
                lines = ctx.put_down_held()
                # After putting things down the robot is at the free spot: go back.
                go = [ctx.do("move_to", closed)] if lines else ctx.reach_first(closed)
                return [*lines, *go, ctx.do("open", closed), *ctx.resume()]
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
            is_knife: Callable[[str], bool] = lambda name: "knife" in name.lower()  # noqa: E731
            if any(is_knife(h) for h in held):
                return self._explain(ctx)
            lines = ctx.put_down_held()
            if knife is not None:
                lines += [ctx.do("move_to", knife), ctx.do("pick", knife)]
            else:
                lines += [
                    _assign("knife_location", "ask", "Where can I find a knife?"),
                    ctx.do("move_to", _V("knife_location")),
                    ctx.do("pick", "Knife"),
                ]
            return [*lines, ctx.do("move_to", ctx.arg(0)), *ctx.resume()]
        if ctx.action == "place":
            thing = ctx.arg(0)
            if any(squash_name(h) == squash_name(thing) for h in held):
                return self._explain(ctx)
            lines = ctx.put_down_held()
            if ctx.obj(thing) is not None:
                lines += [ctx.do("move_to", thing), ctx.do("pick", thing)]
            else:
                lines += [
                    _assign("location", "ask", f"Where can I find {ctx.said(thing)}?"),
                    ctx.do("move_to", _V("location")),
                    ctx.do("pick", thing),
                ]
            if len(ctx.args) > 1:
                lines.append(ctx.do("move_to", ctx.args[1]))
            return [*lines, *ctx.resume()]
        if ctx.action == "handover" and len(ctx.args) > 1:
            thing = ctx.arg(0)
            if any(squash_name(h) == squash_name(thing) for h in held) or ctx.obj(thing) is None:
                return self._explain(ctx)
            # Not holding what to hand over: fetch it, then go to the person.
            lines = [*ctx.put_down_held(), ctx.do("move_to", thing), ctx.do("pick", thing)]
            return [*lines, ctx.do("approach", ctx.arg(1)), *ctx.resume()]
        if held:
            return [*ctx.put_down_held(), ctx.do("move_to", ctx.arg(0)), *ctx.resume()]
        return self._explain(ctx)

    @staticmethod
    def _knife(ctx: _Ctx) -> str | None:
        if ctx.scene is None:
            return None
        for o in ctx.scene.objects:
            if o.type in ("Knife", "ButterKnife") and not o.flag("isPickedUp"):
                return o.name
        return None


def _unread(explanation: str) -> str:
    """What the check could not read, said to the person first ("I did not understand 'wobbly'
    in 'the wobbly red box'. "), or nothing when the explanation names internal labels."""
    found = re.search(r"ambiguous: (I did not understand .+? in '.+?')\.(?:\s|$)", explanation)
    if found is None or re.search(r"_\d+\b|\|", found.group(1)):
        return ""
    return f"{found.group(1)}. "


def _in_the_way(ctx: _Ctx, blockers: Sequence[str]) -> list[str]:
    """How a question names the blockers: as :meth:`_Ctx.said` does, and a blocker nothing
    a person sees tells apart from its kind's others by where it is ("the cup in my way"),
    never by its internal label (Cup_1)."""
    words: list[str] = []
    unnamed: dict[str, int] = {}
    for b in blockers:
        said = ctx.said(b)
        o = ctx.obj(b)
        if o is not None and strip_article(said) == strip_article(b) and re.search(r"_\d+$", b):
            unnamed[spoken(o.type)] = unnamed.get(spoken(o.type), 0) + 1
        else:
            words.append(said)
    for kind, count in unnamed.items():
        many = kind + ("es" if kind.endswith(("s", "x", "ch", "sh")) else "s")
        words.append(f"the {kind} in my way" if count == 1 else f"the {count} {many} in my way")
    return list(dict.fromkeys(words))


def _a_closed_door(o: SceneObject) -> bool:
    """A closed door or gate: what the robot opens to pass (an open one blocks nothing)."""
    return o.flag("openable") and not o.flag("isOpen") and o.type.lower().endswith(("door", "gate"))


#: The name before 0.2 (a recovery *planner*, passed into ``Recovery``), for one release.
__getattr__ = renamed(
    __name__,
    {
        "SymbolicRecovery": (
            "bt_raider.recovery.symbolic.SymbolicRecoveryPlanner",
            SymbolicRecoveryPlanner,
        )
    },
)
