"""Action contracts derived from a PDDL domain: each parameter's role from its type and the effects.

:func:`derive_contracts` reads every action of a unified-planning problem:

- the **robot** is a parameter of a robot-like type (``robot``, ``agent``, ``gripper``...);
- an effect that puts the robot somewhere, ``(at ?r ?to)`` or ``(near ?r ?p)``, makes ``?to``
  the **destination** (the kind ``approach``); the place it leaves, ``(not (at ?r ?from))``, is
  the **origin**;
- an effect that makes the robot hold something, ``(holding ?r ?o)``, makes ``?o`` the
  **object** (``pick``); what it held and no longer does is the object of ``place`` or
  ``handover``, where it ends, ``(in ?o ?c)``, the **destination**, and a person who then has
  it, ``(has ?p ?o)``, the **recipient**;
- ``(open ?d)``/``(not (closed ?d))`` makes ``?d`` the object of ``open``, and so on for close
  and turning on or off;
- a parameter only the preconditions mention is passed **via** (a door), or a **tool**, by
  its type.

A parameter none of these rules reaches is refused in one line naming it and how to declare it
(:func:`declare_missing`): never a role guessed from the argument's position.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bt_raider.checking.action_contract import ActionContract, ActionContracts, Param
from bt_raider.checking.parse import action_for_name
from bt_raider.errors import QueryError

_ROBOT_TYPES = re.compile(r"^(robot|agent|gripper|hand|arm|manipulator|mobile_?robot|tiago)s?$")
_PERSON_TYPES = re.compile(r"^(person|people|human|resident|patient|staff|user|agent_person)s?$")
_VIA_TYPES = re.compile(r"(door|gate|doorway|corridor|passage|lift|elevator)s?$")
_PLACE_TYPES = re.compile(r"(location|room|place|waypoint|area|zone|spot)s?$")
_TOOL_TYPES = re.compile(r"(tool|knife|key)s?$")
_AT = re.compile(r"^(at|robot_at|robot-at|in_room|in-room|location|is_at|near|next_to|by)$")
_HOLD = re.compile(r"^(holding|carrying|carry|has|have|grasped|in_hand|in-hand|held)$")
_PUT = re.compile(r"^(in|on|inside|on_top|at|item_at|object_at|obj_at|located|placed)$")
_STATE = {"open": "open", "opened": "open", "closed": "close", "on": "turnon", "off": "turnoff"}


def _t(param: Any) -> str:
    return str(getattr(param.type, "name", param.type)).lower()


def derive_contracts(
    problem: Any, *, declared: Mapping[str, Mapping[str, str]] | None = None
) -> ActionContracts:
    """The contract of every action of ``problem`` (a unified-planning Problem).

    Args:
        problem: the planning problem (``bt_raider.planners.pddl.load(...)``).
        declared: roles the domain does not say, given by hand: action -> parameter -> role
            (``{"navigate-to": {"door": "via"}}``); they take precedence.

    Raises:
        QueryError: one line naming the action and the parameter whose role cannot be derived.
    """
    out = ActionContracts()
    for action in problem.actions:
        out.add(_derive(action, dict((declared or {}).get(action.name, {}))))
    return out


def _derive(action: Any, declared: dict[str, str]) -> ActionContract:
    params = list(action.parameters)
    roles: dict[str, str] = {}
    kinds: list[str] = []
    for p in params:
        if _ROBOT_TYPES.match(_t(p)):
            roles[p.name] = "robot"
    robots = {n for n, r in roles.items() if r == "robot"}
    person = {p.name for p in params if _PERSON_TYPES.match(_t(p))}
    for effect in action.effects:
        fluent = effect.fluent
        name = fluent.fluent().name.lower()
        args = [a.parameter().name for a in fluent.args if a.is_parameter_exp()]
        positive = effect.value.is_true()
        others = [a for a in args if a not in robots]
        with_robot = any(a in robots for a in args)
        if with_robot and _AT.match(name) and len(others) == 1:
            roles.setdefault(others[0], "destination" if positive else "origin")
            if positive:
                kinds.append("approach")
        elif _HOLD.match(name) and len(args) == 2 and (with_robot or args[0] in person):
            holder, thing = args
            if holder in robots:
                roles.setdefault(thing, "object")
                kinds.append("pick" if positive else "release")
            elif holder in person and positive:
                roles.setdefault(holder, "recipient")
                roles.setdefault(thing, "object")
                kinds.append("handover")
        elif _PUT.match(name) and len(others) == 2 and not with_robot:
            thing, where = others
            roles.setdefault(thing, "object")
            # Taken from a place (a room, a location) is where the robot stands, not a surface.
            left = "origin" if _PLACE_TYPES.search(_t(_param(params, where))) else "surface"
            roles.setdefault(where, "destination" if positive else left)
            if positive:
                kinds.append("place")
        elif name in _STATE and len(others) == 1:
            roles.setdefault(others[0], "object")
            state = _STATE[name]
            kinds.append(state if positive else {"open": "close", "close": "open"}.get(state, ""))
    for fact in _facts(action.preconditions):
        # Where the robot must stand to act, (at ?r ?x): the place it acts from.
        name = fact.fluent().name.lower()
        args = [a.parameter().name for a in fact.args if a.is_parameter_exp()]
        others = [a for a in args if a not in robots]
        if _AT.match(name) and len(others) == 1 and len(args) == 2:
            roles.setdefault(others[0], "origin")
    for p in params:
        if p.name in roles:
            continue
        if _VIA_TYPES.search(_t(p)):
            roles[p.name] = "via"
        elif _TOOL_TYPES.search(_t(p)):
            roles[p.name] = "tool"
    roles.update(declared)
    kind = _kind(action.name, kinds)
    missing = [p for p in params if p.name not in roles]
    if missing:
        p = missing[0]
        raise QueryError(
            f"{action.name}: the role of ?{p.name} (type {_t(p)}) cannot be derived from its type "
            f"or the effects; declare it: derive_contracts(problem, declared={{"
            f"{action.name!r}: {{{p.name!r}: 'via'}}}}) (roles: object, destination, origin, "
            "via, recipient, tool, surface, robot)"
        )
    if kind is None:
        raise QueryError(
            f"{action.name}: its kind cannot be told from its name or effects; declare it as a "
            "new kind with its preconditions (docs/domain.md)"
        )
    return ActionContract(
        action.name,
        kind,
        tuple(Param(p.name, roles[p.name], _t(p)) for p in params),
        source="derived",
    )


def _param(params: list[Any], name: str) -> Any:
    return next(p for p in params if p.name == name)


def _facts(nodes: Any) -> list[Any]:
    """The positive fluent facts of preconditions (through ``and``)."""
    out: list[Any] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.is_and():
            stack.extend(node.args)
        elif node.is_fluent_exp():
            out.append(node)
    return out


def _kind(name: str, kinds: list[str]) -> str | None:
    """The kind the effects say (a release with a destination is a place), else the name's."""
    said = [k for k in kinds if k]
    if "handover" in said:
        return "handover"
    if "place" in said or ("release" in said and "pick" not in said):
        return "place"
    for k in ("pick", "approach", "open", "close", "turnon", "turnoff"):
        if k in said:
            return k
    return action_for_name(name)


def declare_missing(contracts: ActionContracts, name: str, **roles: str) -> ActionContract:
    """A derived contract with some roles changed by hand: ``declare_missing(c, "go", door="via")``."""
    contract = contracts.get(name)
    if contract is None:
        raise QueryError(f"{name!r} is not in the action contract")
    params = tuple(Param(p.name, roles.get(p.name, p.role), p.type) for p in contract.params)
    return contracts.add(ActionContract(contract.name, contract.kind, params, source="declared"))
