"""REVECA's planning step: the options open to a robot (its next sub-goal, or wait) and the
planners that choose one, greedily or with a chat model (prompt reveca_planning.j2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.cooperation.observations import (
    CollaboratorInfo,
    InformationError,
    ObjectInfo,
    Relevance,
    SubGoal,
    WorldMap,
)
from bt_raider.cooperation.proximity import Proximity, Ranked, collaborator_place, retrieve
from bt_raider.cooperation.relevance import ask_json
from bt_raider.cooperation.reveca_memory import RevecaMemory
from bt_raider.errors import BackendError

if TYPE_CHECKING:
    from bt_raider.llm.chat import ChatModel


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

        def explore_rank(o: PlanOption) -> tuple[tuple[int, float], str]:
            assert o.subgoal is not None  # every explore option has its room's subgoal
            return (o.proximity.rank if o.proximity else (0, 0.0), o.subgoal.target)

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
            key=explore_rank,
            reverse=True,
        )

        def actionable(r: Ranked) -> PlanOption | None:
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
        # jinja2 only when a model is asked: a robot without one starts faster.
        from bt_raider.llm.prompts import render

        with memory.lock:
            return render(
                "reveca_planning",
                agent=memory.me,
                goal=memory.goal.text,
                step=memory.step,
                room=memory.room or None,
                held=[f"{n} ({i})" for i, n in memory.held.items()],
                completed=memory.history.completed[-5:],
                collaborators=[collaborator_view(c, memory.world) for c in memory.collaborators],
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


def collaborator_view(c: CollaboratorInfo, world: WorldMap) -> dict[str, Any]:
    """What a prompt says of a collaborator: where it is, what it holds, what it did, said."""
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
