"""REVECA's trajectory-based validation: how likely a collaborator has already achieved a
sub-goal, inferred from what I know of its trajectory, by rules or by a chat model
(prompt reveca_validation.j2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.cooperation.observations import (
    CollaboratorInfo,
    ObjectInfo,
    Relevance,
    SubGoal,
    WorldMap,
)
from bt_raider.cooperation.planning import collaborator_view
from bt_raider.cooperation.relevance import ask_json
from bt_raider.errors import BackendError

if TYPE_CHECKING:
    from bt_raider.llm.chat import ChatModel


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
        # jinja2 only when a model is asked: a robot without one starts faster.
        from bt_raider.llm.prompts import render

        info = ctx.info
        rules = SymbolicTrajectory()
        people = []
        for c in ctx.collaborators:
            view = collaborator_view(c, ctx.world)
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
