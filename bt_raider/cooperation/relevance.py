"""REVECA's relevance of information: Strong / Medium / Low / None for the goal at hand, rated by
rules (SymbolicRelevance) or by a chat model (LLMRelevance, prompt reveca_relevance.j2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.cooperation.observations import Goal, InformationError, ObjectInfo, Relevance
from bt_raider.errors import BackendError
from bt_raider.llm.replies import parse_json_reply

if TYPE_CHECKING:
    from bt_raider.llm.chat import ChatModel


@runtime_checkable
class RelevanceEstimator(Protocol):
    """Rates newly acquired information for the goal (REVECA's observation time)."""

    def estimate(self, infos: Sequence[ObjectInfo], goal: Goal) -> list[Relevance]: ...


class SymbolicRelevance:
    """REVECA's relevance levels as rules.

    * Strong: the goal names the object;
    * Medium: the goal location, or a container that can hold goal objects;
    * Low: an object of the same category as a goal object;
    * None: anything else.

    Args:
        categories: what kind of thing each object name is (e.g.
            :data:`bt_raider.simulation.catalogue.CATALOGUE`), to know the goal objects'
            categories.
    """

    def __init__(self, categories: Mapping[str, str]) -> None:
        self.categories = dict(categories)

    def goal_categories(self, goal: Goal) -> set[str]:
        return {self.categories[o] for o in goal.objects if o in self.categories}

    def rate(self, info: ObjectInfo, goal: Goal) -> Relevance:
        if info.kind == "object" and info.name in goal.objects:
            return Relevance.STRONG
        if info.name == goal.location or (goal.location_id and info.id == goal.location_id):
            return Relevance.MEDIUM
        wanted = self.goal_categories(goal)
        if info.kind == "container" and ("*" in info.holds or wanted & set(info.holds)):
            return Relevance.MEDIUM
        category = info.category or self.categories.get(info.name, "")
        if info.kind == "object" and category in wanted:
            return Relevance.LOW
        return Relevance.NONE

    def estimate(self, infos: Sequence[ObjectInfo], goal: Goal) -> list[Relevance]:
        return [self.rate(i, goal) for i in infos]


def ask_json(
    chat: ChatModel,
    prompt: str,
    read: Callable[[dict[str, Any]], Any],
    *,
    retries: int = 1,
    timeout: float | None = None,
) -> Any:
    """Ask ``chat`` for a JSON answer and read it with ``read``.

    A reply that cannot be read (``read`` raises ValueError) is fed back to the model with the
    reason, up to ``retries`` more times (smolagents style: the model's mistakes go back to the
    model; our own bugs raise).

    Raises:
        BackendError: the backend failed, or no usable reply came after the retries.
    """
    from bt_raider.llm.prompts import render  # jinja2 only when a model is asked

    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    problem = ""
    for _ in range(retries + 1):
        reply = chat.complete(messages, timeout=timeout)
        content = reply.content
        try:
            return read(parse_json_reply(content))
        except (ValueError, KeyError, TypeError) as exc:
            problem = str(exc) if not isinstance(exc, KeyError) else f"missing field {exc}"
        messages = [
            *messages,
            {"role": "assistant", "content": content},
            {"role": "user", "content": render("reveca_retry", problem=problem)},
        ]
    raise BackendError(f"the model gave no usable JSON after {retries + 1} tries: {problem}")


class LLMRelevance:
    """REVECA's relevance estimation by a chat model (prompt ``reveca_relevance.j2``).

    All objects acquired at one observation go in one call; the reply is
    ``{"reasoning": ..., "relevance": {"<id>": "Strong|Medium|Low|None", ...}}``.

    Args:
        chat: the model.
        agent: my name (for the prompt).
        fallback: used when the model fails or stays unreadable (``None``: raise BackendError).
        retries: how often an unreadable reply is fed back.
        timeout: seconds per model call.
    """

    def __init__(
        self,
        chat: ChatModel,
        *,
        agent: str = "robot",
        fallback: RelevanceEstimator | None = None,
        retries: int = 1,
        timeout: float | None = 30.0,
    ) -> None:
        self.chat = chat
        self.agent = agent
        self.fallback = fallback
        self.retries = retries
        self.timeout = timeout
        self.failures: list[str] = []

    def prompt(self, infos: Sequence[ObjectInfo], goal: Goal) -> str:
        # jinja2 only when a model is asked: a robot without one starts faster.
        from bt_raider.llm.prompts import render

        return render(
            "reveca_relevance",
            agent=self.agent,
            goal=goal.text,
            objects=[
                {
                    "id": i.id,
                    "name": i.name,
                    "kind": i.kind,
                    "category": i.category,
                    "room": i.room,
                    "actions": list(i.actions),
                    "states": list(i.states),
                    "holds": list(i.holds),
                }
                for i in infos
            ],
        )

    def estimate(self, infos: Sequence[ObjectInfo], goal: Goal) -> list[Relevance]:
        if not infos:
            return []
        ids = [i.id for i in infos]

        def read(reply: dict[str, Any]) -> list[Relevance]:
            scores = reply.get("relevance")
            if not isinstance(scores, dict):
                raise ValueError('"relevance" must be an object mapping each id to a level')
            missing = [i for i in ids if str(i) not in scores]
            if missing:
                raise ValueError(f"no relevance for id(s) {', '.join(missing)}")
            try:
                return [Relevance.parse(scores[str(i)]) for i in ids]
            except InformationError as exc:
                raise ValueError(str(exc)) from None

        try:
            return ask_json(
                self.chat,
                self.prompt(infos, goal),
                read,
                retries=self.retries,
                timeout=self.timeout,
            )
        except BackendError as exc:
            if self.fallback is None:
                raise
            self.failures.append(str(exc))
            return self.fallback.estimate(infos, goal)
