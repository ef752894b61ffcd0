"""The care home's contract, words, checker and recovery, built from the files beside this module.

- :data:`DOMAIN`: the home's PDDL domain; its roles are derived
  (:func:`~bt_raider.planners.contracts.derive_contracts`);
- :data:`LEXICON`: the home's words, merged over bt_raider's
  (:meth:`~bt_raider.perception.lexicon.CategoryLexicon.load`);
- :data:`SCENE`: the lounge, with residents, staff and the ``policy``;
- :func:`contracts`: the robot's own actions, declared with their roles, and ``PressButton``,
  a new kind with its preconditions and effects (with ``pddl=True``, the domain's actions too);
- :func:`explored`: all of it as the explorer takes it
  (:class:`~bt_raider.testing.explore_domain.UserDomain`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from bt_raider.checking.action_contract import ActionContracts
from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.runtime.guards import RaiderGuard
from bt_raider.testing.explore_domain import UserDomain, words_of

HERE = Path(__file__).resolve().parent
#: The home's PDDL domain (``navigate-to ?r ?from ?to ?door``).
DOMAIN = HERE / "domain.pddl"
#: The home's words.
LEXICON = HERE / "lexicon.json"
#: The lounge.
SCENE = HERE / "scene.json"
#: The robot's action names, as its action servers call them.
ACTIONS = ("NavigateTo", "PickUp", "PutDown", "HandTo", "OpenDoor", "PressButton")
#: RAIDER's kind -> the home's action (the explorer's ``names``).
KINDS = {
    "approach": "NavigateTo",
    "pick": "PickUp",
    "place": "PutDown",
    "handover": "HandTo",
    "open": "OpenDoor",
    "press": "PressButton",
}
#: Who, where and what the home's instructions name; its plan's step that goes to a place; its
#: button (the explorer's episodes draw from these).
PEOPLE = ("Bernadette", "Ana")
PLACES = ("corridor",)
WORD_TYPES = ("PillOrganiser", "ReadingGlasses")
PLAN = "(navigate-to tiago {origin} {destination} {via})"
BUTTON = ("call button", "CallButton")


def contracts(pddl: bool = False) -> ActionContracts:
    """The robot's actions with their kinds and roles (declared next to them), and PressButton;
    with ``pddl``, the domain's actions with their derived roles instead where the names meet
    (``navigate-to`` is ``NavigateTo`` with four arguments; the ``pddl`` extra)."""
    out = ActionContracts()
    out.declare("NavigateTo", "approach", destination="place")
    out.declare("PickUp", "pick", object="item")
    out.declare("PutDown", "place", object="item", destination="surface")
    out.declare("HandTo", "handover", object="item", recipient="person")
    out.declare("OpenDoor", "open", object="door")
    out.declare(
        "PressButton",
        "press",
        object="button",
        preconditions=["reachable", "route_free", "off"],
        effects=["on"],
    )
    for derived in _derived() if pddl else ():
        out.add(derived)
    return out


@functools.cache
def _derived() -> ActionContracts:
    from bt_raider.planners.contracts import derive_contracts
    from bt_raider.planners.pddl import load

    return derive_contracts(load(DOMAIN))


@functools.cache
def lexicon() -> CategoryLexicon:
    """bt_raider's lexicon with the home's words merged over it (read once: every guard of the
    home reads the same words)."""
    return CategoryLexicon.load(LEXICON)


def checker() -> SymbolicReasoner:
    """The symbolic check in the home's words and actions."""
    return SymbolicReasoner(lexicon=lexicon(), contracts=contracts())


def recovery(robot: Any, human: Any, **kw: Any) -> Recovery:
    """Symbolic recovery with the robot's own actions, the home's words and contract; who may be
    asked what comes from the scene's ``policy`` (or ``policy=`` here)."""
    return Recovery(
        SymbolicRecoveryPlanner(),
        robot,
        human,
        actions=list(ACTIONS),
        lexicon=lexicon(),
        contracts=contracts(),
        **kw,
    )


def guard(node: Any, query: str, robot: Any, human: Any) -> RaiderGuard:
    """The home's guard around one of its nodes: its checker, its recovery, the robot's view; a
    step of the PDDL plan (``(navigate-to ...)``) is read by the domain's derived roles, as
    ``raider_guards(..., contracts=)`` reads it (``navigate-to(corridor)``)."""
    if query.lstrip().startswith("("):
        query = contracts(pddl=True).query(query)
    return RaiderGuard(node, query, checker(), scene=robot.observe, recovery=recovery(robot, human))


def explored() -> UserDomain:
    """The home as the explorer takes it: the lounge, its actions, people, words, plan, button."""
    return UserDomain(
        SCENE,
        KINDS,
        guard,
        people=PEOPLE,
        places=PLACES,
        words=words_of(LEXICON, types=WORD_TYPES),
        plan=PLAN,
        button=BUTTON,
        label="care_home",
    )
