"""One interface for every reasoner: ``check(scene, query) -> Verdict``.

Backends: ``"symbolic"`` (the default, offline, deterministic), ``"openai"`` (RAIDER's agent on
any OpenAI-compatible endpoint) and ``"transformers"`` (RAIDER's agent on a local model). Any
object with a matching ``check`` method is a :class:`Checker`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.errors import QueryError

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene
    from bt_raider.verdict import Verdict


@dataclass(frozen=True)
class Query:
    """One action to check.

    Attributes:
        text: the query as given: ``pick(Apple)``, ``(pick tiago medicine counter)`` or
            natural language ("Can you please open the microwave?").
        preconditions: the action's PDDL preconditions when it comes from a plan, as
            human-readable strings (``"(at tiago counter)"``), with those already known to be
            unsatisfied in the planner's state listed in ``unsatisfied``.
        unsatisfied: preconditions unified-planning's simulator found false in the current state.
        bindings: for a PDDL action, parameter name -> scene name the user mapped it to.
    """

    text: str
    preconditions: tuple[str, ...] = ()
    unsatisfied: tuple[str, ...] = ()
    bindings: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise QueryError(f"a query must be a non-empty string, got {self.text!r}")

    def __str__(self) -> str:
        return self.text


def as_query(query: str | Query) -> Query:
    return query if isinstance(query, Query) else Query(query)


@runtime_checkable
class Checker(Protocol):
    """Anything that decides whether an action can run in a scene."""

    def check(
        self, scene: Scene, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """Return the verdict for ``query`` in ``scene``; stop early when ``cancel`` is set."""
        ...


BACKENDS = ("symbolic", "openai", "transformers")


def make_checker(backend: str | Checker = "symbolic", **options: Any) -> Checker:
    """Build a checker by name (``symbolic``, ``openai``, ``transformers``) or pass one through.

    Options are the backend's: ``model``, ``base_url``, ``api_key``, ``time_limit``, ``tools``.
    """
    if not isinstance(backend, str):
        return backend
    if backend == "symbolic":
        from bt_raider.symbolic import SymbolicReasoner

        return SymbolicReasoner(**options)
    if backend in ("openai", "transformers"):
        from bt_raider.agent import RaiderAgent
        from bt_raider.chat import make_chat

        agent_opts = {k: options.pop(k) for k in ("time_limit", "tools") if k in options}
        return RaiderAgent(make_chat(backend, **options), **agent_opts)
    raise QueryError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")


def check(
    scene: Scene | dict[str, Any] | str,
    query: str | Query,
    backend: str | Checker = "symbolic",
    **options: Any,
) -> Verdict:
    """Check one action in a scene.

    Args:
        scene: a :class:`~bt_raider.perception.scene.Scene`, a scene dict, or a path to a file.
        query: the action (structured, PDDL instance or natural language).
        backend: ``"symbolic"`` (default), ``"openai"``, ``"transformers"`` or a Checker.
        **options: passed to the backend (see :func:`make_checker`).
    """
    from bt_raider.perception.scene import Scene

    if isinstance(scene, str):
        scene = Scene.load(scene)
    elif isinstance(scene, dict):
        scene = Scene.from_dict(scene)
    return make_checker(backend, **options).check(scene, as_query(query))
