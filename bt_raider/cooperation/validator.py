"""REVECA's planning time and validation time, and the messages of its four communication cases.

**Adaptive planning** (:func:`plan_options`, :class:`GreedyPlanner`, :class:`LLMPlanner`): the
top-K information by relevance, ties broken by relative proximity (Algorithm 1), turned into
plan options (fetch a goal object, check a container, explore a room); a planner picks one.

**Trajectory-based validation** (:class:`Validator`): before committing a shared sub-goal,
estimate for each collaborator -- from what I know of them between the step the information
was acquired (alpha) and now (beta) -- whether they have probably done it already: could they
have reached the object in the elapsed steps from their last known place, was it relevant to
them, did their reported rooms include its room, did they announce it
(:class:`SymbolicTrajectory`, or a model with :class:`LLMTrajectory`). If somebody likely did,
ask the most likely collaborator; *confirmed* -> the plan and its stale information are
dropped and the agent replans; *denied* or no answer -> ask the next; nobody left -> commit.
Answers are structured (``data["answer"]`` is ``yes``/``no``/``unknown``), never parsed from
free text.

:func:`answer_request` answers a collaborator's request from my task history; the
``*_message`` builders write REVECA's start-up exchange, requests, answers and announcements
within one frame (:data:`bt_raider.cooperation.messaging.MAX_FRAME_CHARS`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.cooperation.messaging import Message, MessageBus, MessageKind, fit
from bt_raider.cooperation.observations import (
    CollaboratorInfo,
    InformationError,
    ObjectInfo,
    Relevance,
    SubGoal,
    WorldMap,
)
from bt_raider.cooperation.proximity import Proximity, collaborator_place, retrieve
from bt_raider.cooperation.relevance import ask_json
from bt_raider.cooperation.reveca_memory import RevecaMemory
from bt_raider.errors import BackendError, CommunicationError
from bt_raider.llm.prompts import render

if TYPE_CHECKING:
    from bt_raider.llm.chat import ChatModel

#: Validation modes: REVECA's, and the two ablations ("always ask before acting", "w/o
#: validation").
MODES = ("trajectory", "always", "never")

# --------------------------------------------------------------------------- planning

_VERB = {"put": "gograb", "open": "gocheck", "explore": "goexplore"}


@dataclass(frozen=True)
class PlanOption:
    """One thing the agent could do next.

    Attributes:
        subgoal: what it achieves (``None``: wait a step, nothing useful is known).
        info: the information it relies on (``None`` for exploring and waiting).
        relevance: that information's relevance.
        proximity: my distance against the collaborators' (None for waiting).
    """

    subgoal: SubGoal | None
    info: ObjectInfo | None = None
    relevance: Relevance = Relevance.NONE
    proximity: Proximity | None = None

    @property
    def kind(self) -> str:
        """``fetch`` (go grab a goal object), ``deliver`` (go put what I hold), ``check``,
        ``explore`` or ``wait``."""
        if self.subgoal is None:
            return "wait"
        if self.subgoal.action == "put":
            return "fetch" if self.info is not None else "deliver"
        return "check" if self.subgoal.action == "open" else "explore"

    @property
    def label(self) -> str:
        """REVECA-style label, e.g. ``[gograb] <apple> (12)``."""
        if self.subgoal is None:
            return "[wait]"
        verb = _VERB[self.subgoal.action]
        if self.info is not None:
            return f"[{verb}] <{self.info.name}> ({self.info.id})"
        if self.subgoal.action == "put":
            return f"[goput] <{self.subgoal.location}> ({self.subgoal.target})"
        return f"[{verb}] <{self.subgoal.target}>"

    def describe(self) -> str:
        """One line for a planning prompt."""
        parts = [self.label]
        if self.info is not None:
            parts.append(f"in the {self.info.room}, seen at step {self.info.step}")
            parts.append(f"{self.relevance.label} relevance")
        if self.proximity is not None:
            parts.append(f"{self.proximity.phrase} ({self.proximity.mine:.1f} m)")
        return "; ".join(parts)


WAIT = PlanOption(None)


def plan_options(
    memory: RevecaMemory, *, k: int = 3, use_relevance: bool = True
) -> list[PlanOption]:
    """The options a planner chooses from (best first for a greedy planner).

    Goal objects already held give the first option (take them to the goal location). Then the information is
    retrieved K at a time by relevance and relative proximity (Algorithm 1; by proximity only
    without relevance); the options in the first window that has any, plus up to ``k``
    unexplored rooms ranked by relative proximity, are returned. When a window offers nothing
    and every room is explored, the next window is tried; when nothing is left, any closed
    container; then :data:`WAIT`.
    """
    if k < 1:
        raise InformationError(f"k must be >= 1, got {k!r}")
    with memory.lock:
        goal = memory.goal
        remaining = set(memory.remaining())
        me = memory.place
        collaborators = list(memory.collaborators)
        world = memory.world
        options: list[PlanOption] = []
        held = [
            (i, n) for i, n in memory.held.items() if n in goal.objects and n not in memory.done
        ]
        if held:
            # One option delivers everything I hold to the goal location.
            prox = None
            if goal.location_room and goal.location_position is not None:
                prox = memory.proximity(goal.location_room, goal.location_position)
            options.append(
                PlanOption(goal.subgoal(held[0][1], held[0][0]), None, Relevance.STRONG, prox)
            )
        # Information that affords nothing any more (a goal object done or in a collaborator's
        # hands, a container already open) is not worth a slot.
        candidates = [
            i
            for i in memory.observations
            if not (i.kind == "object" and i.name in goal.objects and i.name not in remaining)
            and not (i.kind == "container" and not i.closed)
        ]
        ranked = retrieve(candidates, me, collaborators, world, k=None, use_relevance=use_relevance)
        explore = sorted(
            (
                PlanOption(
                    SubGoal("explore", room),
                    None,
                    Relevance.NONE,
                    memory.proximity(room, world.centre(room)),
                )
                for room in world.rooms
                if room not in memory.explored
            ),
            key=lambda o: (o.proximity.rank if o.proximity else (0, 0.0), o.subgoal.target),
            reverse=True,
        )

        def actionable(r) -> PlanOption | None:
            i = r.info
            if i.kind == "object" and i.name in remaining and "grab" in i.actions:
                return PlanOption(goal.subgoal(i.name, i.id), i, i.relevance, r.proximity)
            if (
                i.kind == "container"
                and "open" in i.actions
                and (not use_relevance or i.relevance >= Relevance.MEDIUM)
            ):
                return PlanOption(
                    SubGoal("open", i.name, object_id=i.id), i, i.relevance, r.proximity
                )
            return None

        if not remaining and not options:
            return [WAIT]
        for start in range(0, max(len(ranked), 1), k):
            found = [o for o in map(actionable, ranked[start : start + k]) if o is not None]
            if found or explore:
                return options + found + explore[:k]
        closed = [
            PlanOption(
                SubGoal("open", r.info.name, object_id=r.info.id),
                r.info,
                r.info.relevance,
                r.proximity,
            )
            for r in retrieve(
                [i for i in candidates if i.kind == "container" and "open" in i.actions],
                me,
                collaborators,
                world,
                k=k,
                use_relevance=False,
            )
        ]
        return options + closed if options or closed else [WAIT]


@runtime_checkable
class Planner(Protocol):
    """Picks the next plan among the options."""

    def choose(self, memory: RevecaMemory, options: Sequence[PlanOption]) -> PlanOption: ...


class GreedyPlanner:
    """Take the best-ranked option (options come ranked by relevance and relative proximity).

    Like REVECA's planner reading "I'm farther than Bob", it leaves to a collaborator what they
    are closer to: the first option no collaborator is known to be closer to wins; only when
    there is none does it take the first option. Holding goal objects, it fetches one more while
    a hand is free and the next goal object is no farther than the goal location; otherwise it
    delivers.

    Args:
        hands: how many objects the robot can carry.
        use_proximity: leave options a collaborator is closer to (False: ignore them, the
            "w/o proximity" ablation).
    """

    def __init__(self, hands: int = 2, *, use_proximity: bool = True) -> None:
        self.hands = hands
        self.use_proximity = use_proximity

    def _first(self, options: Sequence[PlanOption]) -> PlanOption | None:
        if not options:
            return None
        if self.use_proximity:
            for o in options:
                if o.proximity is None or not o.proximity.farther_than:
                    return o
        return options[0]

    def choose(self, memory: RevecaMemory, options: Sequence[PlanOption]) -> PlanOption:
        if not options:
            return WAIT
        deliver = next((o for o in options if o.kind == "deliver"), None)
        rest = [o for o in options if o.kind != "deliver"]
        if deliver is None:
            return self._first(rest) or WAIT
        if len(memory.held) >= self.hands:
            return deliver
        fetch = self._first([o for o in rest if o.kind == "fetch"])
        if (
            fetch is not None
            and fetch.proximity is not None
            and deliver.proximity is not None
            and fetch.proximity.mine <= deliver.proximity.mine
        ):
            return fetch
        return deliver


def _letters(n: int) -> list[str]:
    return [chr(ord("A") + i) if i < 26 else f"Z{i}" for i in range(n)]


class LLMPlanner:
    """REVECA's adaptive planning by a chat model (prompt ``reveca_planning.j2``).

    The prompt holds the goal, my state (room, held objects, completed plans), what I know of
    the collaborators and the lettered options with their relevance and relative proximity
    ("I'm closer than Bob"); the reply is ``{"reasoning": ..., "choice": "B"}``.

    Args:
        chat: the model.
        fallback: used when the model fails or stays unreadable (``None``: raise).
        retries: how often an unreadable reply is fed back.
        timeout: seconds per model call.
    """

    def __init__(
        self,
        chat: ChatModel,
        *,
        fallback: Planner | None = None,
        retries: int = 1,
        timeout: float | None = 30.0,
    ) -> None:
        self.chat = chat
        self.fallback = fallback if fallback is not None else GreedyPlanner()
        self.retries = retries
        self.timeout = timeout
        self.failures: list[str] = []

    def prompt(self, memory: RevecaMemory, options: Sequence[PlanOption]) -> str:
        with memory.lock:
            return render(
                "reveca_planning",
                agent=memory.me,
                goal=memory.goal.text,
                step=memory.step,
                room=memory.room or None,
                held=[f"{n} ({i})" for i, n in memory.held.items()],
                completed=memory.history.completed[-5:],
                collaborators=[_collaborator_view(c, memory.world) for c in memory.collaborators],
                options=[
                    {"letter": letter, "text": o.describe()}
                    for letter, o in zip(_letters(len(options)), options, strict=True)
                ],
            )

    def choose(self, memory: RevecaMemory, options: Sequence[PlanOption]) -> PlanOption:
        if len(options) <= 1:
            return options[0] if options else WAIT
        letters = _letters(len(options))

        def read(reply: dict[str, Any]) -> PlanOption:
            choice = str(reply.get("choice", "")).strip().upper().strip(".)")
            if choice not in letters:
                raise ValueError(
                    f"choice {reply.get('choice')!r} is not one of {', '.join(letters)}"
                )
            return options[letters.index(choice)]

        try:
            return ask_json(
                self.chat,
                self.prompt(memory, options),
                read,
                retries=self.retries,
                timeout=self.timeout,
            )
        except BackendError as exc:
            self.failures.append(str(exc))
            return self.fallback.choose(memory, options)


def _collaborator_view(c: CollaboratorInfo, world: WorldMap) -> dict[str, Any]:
    place = collaborator_place(c, world)
    last = c.last
    return {
        "name": c.name,
        "where": (
            "unknown"
            if last is None or place is None
            else f"{'seen' if last.exact else 'said to be'} in the {last.room} at step {last.step}"
        ),
        "held": [f"{n} ({i})" for i, n in c.held.items()],
        "completed": list(c.completed),
        "messages": [f"step {m.step}: {m.text}" for m in c.messages[-5:]],
    }


# --------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class Likelihood:
    """How likely one collaborator has already done a sub-goal.

    Attributes:
        collaborator: their name.
        probability: 0..1.
        likely: worth asking them.
        known: certain from memory (they announced it, or were seen holding the object): no
            need to ask.
        reason: why, in words.
    """

    collaborator: str
    probability: float
    likely: bool
    known: bool = False
    reason: str = ""


@dataclass(frozen=True)
class ValidationContext:
    """What a trajectory estimator looks at (a consistent snapshot of the memory)."""

    subgoal: SubGoal
    info: ObjectInfo | None
    step: int
    me: str
    room: str
    position: tuple[float, ...]
    collaborators: tuple[CollaboratorInfo, ...]
    world: WorldMap
    goal_text: str


@runtime_checkable
class TrajectoryEstimator(Protocol):
    """Estimates, per collaborator, whether they have probably done the sub-goal already."""

    def estimate(self, ctx: ValidationContext) -> list[Likelihood]: ...


_WEIGHT = {Relevance.STRONG: 1.0, Relevance.MEDIUM: 0.8, Relevance.LOW: 0.3, Relevance.NONE: 0.0}


class SymbolicTrajectory:
    """Trajectory-based validation by rules.

    For collaborator c, information acquired at step alpha, now beta:

    * c announced the sub-goal, or was seen/said holding the object -> certain (1.0);
    * alpha == beta (I see it now) -> 0;
    * c's walk from its last known place (exact, or the centre of the room a message named, at
      step t) to the object plus the grab takes more than beta - t steps -> 0: unreachable;
    * c's reported or seen rooms since alpha, or its last known room, include the object's
      room -> ``room_evidence``;
    * otherwise -> ``wander`` x min(1, spare steps / travel steps): it could have gone there;
    * c's position never known -> ``unknown``;

    each times the information's relevance to the shared goal (Strong 1, Medium 0.8, Low 0.3,
    None 0; a ``put`` sub-goal's object is at least Strong, a container to check at least
    Medium). Likely when >= ``threshold``.
    """

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        room_evidence: float = 0.9,
        wander: float = 0.6,
        unknown: float = 0.5,
    ) -> None:
        self.threshold = threshold
        self.room_evidence = room_evidence
        self.wander = wander
        self.unknown = unknown

    def assess(self, ctx: ValidationContext, c: CollaboratorInfo) -> Likelihood:
        sub, info, now = ctx.subgoal, ctx.info, ctx.step
        who = c.name.capitalize()
        if sub.action == "put":
            if sub.key in c.completed:
                return Likelihood(c.name, 1.0, True, True, f"{who} announced {sub.text}")
            if (info is not None and info.id in c.held) or sub.target in c.held.values():
                return Likelihood(
                    c.name, 1.0, True, True, f"{who} is known to hold the {sub.target}"
                )
        if info is None:
            return Likelihood(c.name, 0.0, False, reason="no stored information to validate")
        implied = Relevance.STRONG if sub.action == "put" else Relevance.MEDIUM
        weight = _WEIGHT[max(info.relevance, implied)]
        alpha = info.step
        if now <= alpha:
            return Likelihood(c.name, 0.0, False, reason=f"I see {info.label} at this very step")
        last = c.last
        if last is None:
            p = self.unknown * weight
            return Likelihood(c.name, p, p >= self.threshold, reason=f"{who}'s position is unknown")
        start = last.position if last.exact else tuple(ctx.world.centre(last.room))
        travel = ctx.world.steps(ctx.world.distance(last.room, start, info.room, info.position)) + 1
        elapsed = now - last.step
        where = f"{'seen' if last.exact else 'said to be'} in the {last.room} at step {last.step}"
        if travel > elapsed:
            return Likelihood(
                c.name,
                0.0,
                False,
                reason=f"{who} ({where}) needs {travel} steps to reach {info.label} in the "
                f"{info.room}; only {elapsed} elapsed",
            )
        if info.room in c.rooms_since(alpha) | {last.room}:
            p = self.room_evidence * weight
            reason = f"{who} was in the {info.room} since step {alpha} ({where})"
        else:
            spare = elapsed - travel
            p = self.wander * weight * min(1.0, spare / max(travel, 1))
            reason = (
                f"{who} ({where}) could have walked to the {info.room} with {spare} steps to spare"
            )
        return Likelihood(c.name, round(p, 3), p >= self.threshold, reason=reason)

    def estimate(self, ctx: ValidationContext) -> list[Likelihood]:
        out = [self.assess(ctx, c) for c in ctx.collaborators]
        return sorted(out, key=lambda x: (-x.probability, x.collaborator))


class LLMTrajectory:
    """Trajectory-based validation by a chat model (prompt ``reveca_validation.j2``).

    The prompt holds the plan, the information it relies on with its acquisition step, now,
    and per collaborator the trail, held objects, messages since then and completed
    sub-goals, with the walking facts computed (steps needed vs elapsed). The reply is
    ``{"reasoning": ..., "collaborators": [{"name": ..., "likelihood": 0..1, "reason": ...}]}``.

    Args:
        chat: the model.
        threshold: likelihood from which a collaborator is asked.
        fallback: used when the model fails or stays unreadable (default: the rules).
        retries: how often an unreadable reply is fed back.
        timeout: seconds per model call.
    """

    def __init__(
        self,
        chat: ChatModel,
        *,
        threshold: float = 0.5,
        fallback: TrajectoryEstimator | None = None,
        retries: int = 1,
        timeout: float | None = 30.0,
    ) -> None:
        self.chat = chat
        self.threshold = threshold
        self.fallback = fallback if fallback is not None else SymbolicTrajectory()
        self.retries = retries
        self.timeout = timeout
        self.failures: list[str] = []

    def prompt(self, ctx: ValidationContext) -> str:
        info = ctx.info
        rules = SymbolicTrajectory()
        people = []
        for c in ctx.collaborators:
            view = _collaborator_view(c, ctx.world)
            alpha = info.step if info else 0
            view["messages"] = [f"step {m.step}: {m.text}" for m in c.messages if m.step >= alpha]
            view["trail"] = [
                f"step {s.step}: {'seen' if s.exact else 'said to be'} in the {s.room}"
                for s in c.trail
                if s.step >= alpha
            ]
            view["facts"] = rules.assess(ctx, c).reason
            people.append(view)
        return render(
            "reveca_validation",
            agent=ctx.me,
            goal=ctx.goal_text,
            plan=ctx.subgoal.text,
            info=(
                None
                if info is None
                else {
                    "label": info.label,
                    "room": info.room,
                    "step": info.step,
                    "relevance": info.relevance.label,
                }
            ),
            step=ctx.step,
            collaborators=people,
        )

    def estimate(self, ctx: ValidationContext) -> list[Likelihood]:
        if not ctx.collaborators:
            return []
        names = [c.name for c in ctx.collaborators]
        certain = {x.collaborator: x for x in SymbolicTrajectory().estimate(ctx) if x.known}

        def read(reply: dict[str, Any]) -> list[Likelihood]:
            rows = reply.get("collaborators")
            if not isinstance(rows, list):
                raise ValueError('"collaborators" must be a list of {name, likelihood, reason}')
            out: dict[str, Likelihood] = {}
            for row in rows:
                if not isinstance(row, dict) or row.get("name") not in names:
                    raise ValueError(
                        f"collaborator {row.get('name') if isinstance(row, dict) else row!r} "
                        f"is not one of {', '.join(names)}"
                    )
                p = row.get("likelihood")
                if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
                    raise ValueError(
                        f"likelihood of {row['name']} must be a number in 0..1, got {p!r}"
                    )
                out[row["name"]] = Likelihood(
                    row["name"], float(p), p >= self.threshold, reason=str(row.get("reason", ""))
                )
            missing = [n for n in names if n not in out]
            if missing:
                raise ValueError(f"no likelihood for {', '.join(missing)}")
            # What memory already makes certain stays certain, whatever the model says.
            out.update(certain)
            return sorted(out.values(), key=lambda x: (-x.probability, x.collaborator))

        try:
            return ask_json(
                self.chat, self.prompt(ctx), read, retries=self.retries, timeout=self.timeout
            )
        except BackendError as exc:
            self.failures.append(str(exc))
            return self.fallback.estimate(ctx)


@dataclass(frozen=True)
class ValidationResult:
    """The outcome of validating one sub-goal.

    Attributes:
        subgoal: what was validated.
        achieved_by: the collaborator who has done it (the plan is false), or None: commit.
        asked: who was asked, in order.
        answers: collaborator -> ``yes``/``no``/``unknown``.
        assessments: the trajectory estimates.
        reason: a one-line explanation.
        step: when it was validated.
    """

    subgoal: SubGoal
    achieved_by: str | None
    asked: tuple[str, ...] = ()
    answers: Mapping[str, str] = field(default_factory=dict)
    assessments: tuple[Likelihood, ...] = ()
    reason: str = ""
    step: int = 0

    @property
    def achieved(self) -> bool:
        return self.achieved_by is not None

    @property
    def commit(self) -> bool:
        return self.achieved_by is None


class ValidationCancelled(Exception):
    """Raised inside a cancelled validation (the guard that started it has gone)."""


class Validator:
    """REVECA's validation module for one agent.

    Args:
        memory: the agent's memory (read, and updated with the answers).
        bus: the agent's connection to its collaborators.
        mode: ``"trajectory"`` (REVECA), ``"always"`` (ask every collaborator before every
            plan), ``"never"`` (commit at once).
        estimator: the trajectory estimator (default :class:`SymbolicTrajectory`).
        timeout: seconds to wait for each answer.
        validated: sub-goal actions the ``trajectory`` mode validates; by default only the
            goal's own ``put`` sub-goals (REVECA validates whether a collaborator completed a
            task goal); other plans are committed at once. ``always`` asks before every plan.

    Attributes:
        results: every validation's result, oldest first.
    """

    def __init__(
        self,
        memory: RevecaMemory,
        bus: MessageBus,
        *,
        mode: str = "trajectory",
        estimator: TrajectoryEstimator | None = None,
        timeout: float = 2.0,
        validated: Sequence[str] = ("put",),
    ) -> None:
        bad = [a for a in validated if a not in SubGoal.ACTIONS]
        if bad:
            raise InformationError(
                f"validated action(s) {', '.join(map(repr, bad))} not among {', '.join(SubGoal.ACTIONS)}"
            )
        self.validated = tuple(validated)
        if mode not in MODES:
            raise InformationError(f"validation mode {mode!r} is not one of {', '.join(MODES)}")
        self.memory = memory
        self.bus = bus
        self.mode = mode
        self.estimator = estimator if estimator is not None else SymbolicTrajectory()
        self.timeout = timeout
        self.results: list[ValidationResult] = []
        self._lock = threading.Lock()

    @property
    def me(self) -> str:
        return self.memory.me

    def context(self, subgoal: SubGoal) -> ValidationContext:
        m = self.memory
        with m.lock:
            return ValidationContext(
                subgoal=subgoal,
                info=m.info_for(subgoal),
                step=m.step,
                me=m.me,
                room=m.room,
                position=tuple(m.position),
                collaborators=tuple(m.snapshot_collaborators()),
                world=m.world,
                goal_text=m.goal.text,
            )

    def assess(self, subgoal: SubGoal) -> list[Likelihood]:
        """The trajectory estimates for ``subgoal`` (no message is sent)."""
        return self.estimator.estimate(self.context(subgoal))

    def validate(
        self, subgoal: SubGoal, *, cancel: threading.Event | None = None
    ) -> ValidationResult:
        """Validate ``subgoal``: estimate, ask the likely collaborators in turn, decide.

        Meant to run on a worker (:func:`bt_raider.runtime.worker.submit` passes ``cancel``): it may
        wait for answers. Confirmation updates the memory (stale information dropped).

        Raises:
            ValidationCancelled: ``cancel`` was set while it ran.
        """
        ctx = self.context(subgoal)
        if self.mode == "never":
            return self._done(
                ValidationResult(subgoal, None, reason="validation off", step=ctx.step)
            )
        if self.mode == "trajectory" and subgoal.action not in self.validated:
            return self._done(
                ValidationResult(
                    subgoal, None, reason=f"{subgoal.action} plans are not validated", step=ctx.step
                )
            )
        assessments = tuple(self.estimator.estimate(ctx))
        for a in assessments:
            if a.known and a.likely:
                self._confirmed(subgoal, ctx.info, a.collaborator, None)
                return self._done(
                    ValidationResult(
                        subgoal, a.collaborator, (), {}, assessments, a.reason, ctx.step
                    )
                )
        if self.mode == "always":
            order = [a.collaborator for a in assessments]
            order += [c.name for c in ctx.collaborators if c.name not in order]
        else:
            order = [a.collaborator for a in assessments if a.likely]
        if not order:
            best = assessments[0].reason if assessments else "no collaborator to consider"
            return self._done(
                ValidationResult(
                    subgoal, None, (), {}, assessments, f"nobody likely: {best}", ctx.step
                )
            )
        asked: list[str] = []
        answers: dict[str, str] = {}
        faults: list[str] = []
        for name in order:
            if cancel is not None and cancel.is_set():
                raise ValidationCancelled(subgoal.text)
            asked.append(name)
            request = request_message(self.memory, name, subgoal, ctx.info)
            try:
                reply = self.bus.request(name, request, self.timeout)
            except CommunicationError as exc:
                # An unreachable collaborator is an unknown answer, as a query timeout is; the
                # fault is kept in the reason.
                answers[name] = "unknown"
                faults.append(f"{name}: {exc}")
                continue
            if cancel is not None and cancel.is_set():
                raise ValidationCancelled(subgoal.text)
            if reply is None:
                answers[name] = "unknown"
                continue
            self.memory.hear(reply)
            answers[name] = str(reply.data.get("answer"))
            if answers[name] == "yes":
                self._confirmed(subgoal, ctx.info, name, reply)
                return self._done(
                    ValidationResult(
                        subgoal,
                        name,
                        tuple(asked),
                        answers,
                        assessments,
                        f"{name} confirmed: {reply.text}",
                        ctx.step,
                    )
                )
        return self._done(
            ValidationResult(
                subgoal,
                None,
                tuple(asked),
                answers,
                assessments,
                "nobody has done it: "
                + ", ".join(f"{n} said {a}" for n, a in answers.items())
                + (f" (faults: {'; '.join(faults)})" if faults else ""),
                ctx.step,
            )
        )

    def _done(self, result: ValidationResult) -> ValidationResult:
        with self._lock:
            self.results.append(result)
        return result

    def _confirmed(
        self, subgoal: SubGoal, info: ObjectInfo | None, who: str, reply: Message | None
    ) -> None:
        """A collaborator has done it: drop the stale information (the plan goes with it)."""
        m = self.memory
        with m.lock:
            c = m.collaborators[who]
            if subgoal.action == "put":
                if info is not None:
                    m.observations.remove(info.id)
                    c.held.setdefault(info.id, subgoal.target)
                if reply is not None and reply.data.get("placed"):
                    m.done[subgoal.target] = who
                    m.taken.pop(subgoal.target, None)
                elif subgoal.target not in m.done:
                    m.taken[subgoal.target] = who
            elif subgoal.action == "open":
                target = m.observations.get(subgoal.object_id or "")
                if target is not None:
                    m.observations.put(
                        replace(target, states=("OPEN",), actions=("put",), step=m.step)
                    )
            else:
                m.explored.add(subgoal.target)


# --------------------------------------------------------------------------- messages


def _held(memory: RevecaMemory) -> list[dict[str, str]]:
    return [{"id": i, "name": n} for i, n in memory.held.items()]


def _names(objects: Sequence[ObjectInfo]) -> str:
    return ", ".join(o.label + (" (closed)" if o.closed else "") for o in objects)


def _around(memory: RevecaMemory) -> list[ObjectInfo]:
    """What I know in my room, most relevant (then nearest) first."""
    with memory.lock:
        ranked = retrieve(
            memory.observations.in_room(memory.room),
            memory.place,
            (),
            memory.world,
            k=None,
            use_relevance=memory.estimator is not None,
        )
    return [r.info for r in ranked]


def hello_message(memory: RevecaMemory, *, kind: MessageKind = MessageKind.HELLO) -> Message:
    """Start-up exchange (case 1): where I am and what I see, as many objects as fit a frame.

    With ``kind=STATUS`` it is the full-communication ablation's per-action broadcast.
    """
    objects = _around(memory)
    me, room, step = memory.me, memory.room, memory.step
    held = _held(memory)
    opening = "Hi, I'm" if kind is MessageKind.HELLO else "Status:"

    def build(n: int) -> Message:
        shown = objects[:n]
        text = f"{opening} {me.capitalize()} in the {room}."
        if held:
            text += f" Holding {', '.join(h['name'] for h in held)}."
        if shown:
            text += f" I see {_names(shown)}."
        return Message(
            kind=kind,
            sender=me,
            step=step,
            text=text,
            room=room or None,
            data={"held": held, "objects": [o.brief() for o in shown]},
        )

    return fit(build, len(objects))


def status_message(memory: RevecaMemory) -> Message:
    """The full-communication ablation's broadcast before every action."""
    return hello_message(memory, kind=MessageKind.STATUS)


def achieved_message(memory: RevecaMemory, subgoal: SubGoal) -> Message:
    """Sub-goal achievement (case 4)."""
    text = f"I did: {subgoal.text}" + (f" ({subgoal.object_id})." if subgoal.object_id else ".")
    return Message(
        kind=MessageKind.SUBGOAL_ACHIEVED,
        sender=memory.me,
        step=memory.step,
        text=text,
        room=memory.room or None,
        data={"subgoal": subgoal.to_dict(), "held": _held(memory)},
    )


def request_message(
    memory: RevecaMemory, to: str, subgoal: SubGoal, info: ObjectInfo | None
) -> Message:
    """Validation request (case 2): "have you already ...?"."""
    who = to.capitalize()
    if subgoal.action == "put":
        what = info.label if info else subgoal.target
        where = f" in the {info.room}" if info else ""
        text = f"{who}, have you already taken the {what}{where}?"
    elif subgoal.action == "open":
        text = f"{who}, have you already checked the {subgoal.target} ({subgoal.object_id})?"
    else:
        text = f"{who}, have you already explored the {subgoal.target}?"
    data: dict[str, Any] = {"subgoal": subgoal.to_dict(), "held": _held(memory)}
    if info is not None:
        data["since"] = info.step
    return Message(
        kind=MessageKind.VALIDATION_REQUEST,
        sender=memory.me,
        step=memory.step,
        text=text,
        to=to,
        room=memory.room or None,
        data=data,
    )


def answer_request(memory: RevecaMemory, request: Message) -> Message:
    """Answer a validation request (case 3) from my task history.

    ``yes`` when I have grabbed the object (``placed`` tells whether it is in place yet),
    opened the container, or been in the room; an opened container's or explored room's
    relevant contents travel with the answer.
    """
    if request.kind is not MessageKind.VALIDATION_REQUEST:
        raise CommunicationError(
            f"cannot answer a {request.kind.value} message: expected a validation_request"
        )
    sub = SubGoal.from_dict(request.data["subgoal"])
    memory.hear(request)
    with memory.lock:
        h = memory.history
        # The requester's clock may be ahead of mine within a step (robots act in turn).
        step, room, me = max(memory.step, request.step), memory.room, memory.me
        objects: list[ObjectInfo] = []
        placed = False
        if sub.action == "put":
            ids = (
                [sub.object_id]
                if sub.object_id
                else [i for i, n in h.grabbed.items() if n == sub.target]
            )
            did = any(i in h.grabbed for i in ids)
            placed = any(i in h.placed for i in ids) and sub.target in memory.done
            yes = f"Yes, I {'put' if placed else 'have'} the {sub.target}" + (
                f" {sub.relation} the {sub.location}." if placed else "."
            )
            no = f"No, I have not taken the {sub.target}."
        elif sub.action == "open":
            did = (sub.object_id or "") in h.opened
            objects = [o for o in memory.observations if o.parent == sub.object_id]
            yes, no = f"Yes, I opened the {sub.target}.", f"No, I have not opened the {sub.target}."
        else:
            did = sub.target in h.visited
            objects = [
                o
                for o in memory.observations.in_room(sub.target)
                if o.relevance >= Relevance.MEDIUM or memory.estimator is None
            ]
            yes, no = (
                f"Yes, I have been in the {sub.target}.",
                f"No, I have not been in the {sub.target}.",
            )
        objects.sort(key=lambda o: (-int(o.relevance), o.id))
        held = _held(memory)

    def build(n: int) -> Message:
        shown = objects[:n] if did else []
        text = (yes if did else no) + (f" There: {_names(shown)}." if shown else "")
        data: dict[str, Any] = {
            "answer": "yes" if did else "no",
            "subgoal": sub.to_dict(),
            "held": held,
        }
        if placed:
            data["placed"] = True
        if shown:
            data["objects"] = [o.brief() for o in shown]
        return request.reply(
            me, step, kind=MessageKind.VALIDATION_ANSWER, text=text, room=room or None, data=data
        )

    return fit(build, len(objects) if did else 0)


def serve_answers(memory: RevecaMemory, bus: MessageBus) -> Callable[[Message], Message | None]:
    """Answer every validation request reaching ``bus`` from ``memory``; returns the handler."""

    def handler(request: Message) -> Message | None:
        if request.kind is not MessageKind.VALIDATION_REQUEST:
            return None
        return answer_request(memory, request)

    bus.serve(handler)
    return handler
