"""The user's action contract: per action, its name, its kind and each argument's role and type.

Declared or derived, never guessed. A guard checks an action of the user's vocabulary
(``navigate-to``, ``HandTo``) as one of RAIDER's kinds (``approach``, ``handover``) or as a new
kind declared with its preconditions (:mod:`bt_raider.checking.new_actions`); which argument is
the destination, the object acted on or the recipient comes from the contract, not from the
argument's position. From a PDDL domain the roles are derived from types and effects
(:func:`bt_raider.planners.contracts.derive_contracts`: ``(at ?r ?to)`` makes ``?to`` the
destination); from Python they are declared next to the action
(``registry.action("HandTo", kind="handover", object="item", recipient="person")``).

:meth:`ActionContract.query` turns a call of the user's action into the query the check reads,
with only the arguments the kind acts on, in the kind's order: ``(navigate-to tiago corridor
lounge ana_door)`` -> ``navigate-to(lounge)``; the door the robot passes is never taken for
the place it goes to, nor matched to a person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from bt_raider.checking.verdict import Category
from bt_raider.checking.vocabulary import ACTIONS
from bt_raider.errors import QueryError

#: An argument's role in the action.
ARG_ROLES: tuple[str, ...] = (
    "object",  # what is acted on (picked, placed, opened, handed over, pressed)
    "destination",  # where the robot or the object ends up
    "origin",  # where it starts from
    "via",  # what is passed through on the way (a door)
    "recipient",  # the person something is handed to
    "tool",  # what the robot uses (a knife)
    "surface",  # the surface or container something rests on or in
    "robot",  # the robot itself, or its hand
)

#: The kind's arguments, as the check reads them: RAIDER role <- the contract roles that fill it
#: (the first one present wins), and whether it is required.
KIND_ARGS: dict[str, tuple[tuple[str, tuple[str, ...], bool], ...]] = {
    "pick": (("object", ("object",), True), ("source", ("surface",), False)),
    "place": (("object", ("object",), True), ("destination", ("destination", "surface"), True)),
    "open": (("object", ("object", "via"), True),),
    "close": (("object", ("object", "via"), True),),
    "turnon": (("object", ("object",), True),),
    "turnoff": (("object", ("object",), True),),
    "slice": (("object", ("object",), True),),
    "approach": (("target", ("destination", "recipient"), True),),
    "handover": (("object", ("object",), True), ("person", ("recipient",), True)),
}


#: The conditions a new kind may declare, in the scene contract's terms: name -> (category when
#: it does not hold, what it means).
CONDITIONS: dict[str, tuple[Category, str]] = {
    "reachable": (Category.OUT_OF_REACH, "the object is within the robot's reach"),
    "holding": (Category.ROBOT_STATE, "the robot holds the object"),
    "hand_free": (Category.ROBOT_STATE, "the robot's hand is free"),
    "open": (Category.WRONG_STATE, "the object is open (isOpen)"),
    "closed": (Category.WRONG_STATE, "the object is closed"),
    "on": (Category.WRONG_STATE, "the object is on (isToggled)"),
    "off": (Category.WRONG_STATE, "the object is off"),
    "person_present": (Category.NOT_PRESENT, "someone is recognised in sight"),
    "within_handover": (Category.OUT_OF_REACH, "a person is within the handover distance"),
    "route_free": (Category.OBSTRUCTED, "nothing blocks the way to the object"),
}

#: Effects a new kind may declare, for look-ahead: name -> (flag, value) on the object.
EFFECTS: dict[str, tuple[str, bool]] = {
    "on": ("isToggled", True),
    "off": ("isToggled", False),
    "open": ("isOpen", True),
    "closed": ("isOpen", False),
}


def check_contract(contract: ActionContract) -> ActionContract:
    """``contract`` when its preconditions and effects are known words, else a QueryError."""
    for word in contract.preconditions:
        if word not in CONDITIONS:
            raise QueryError(
                f"{contract.name}: precondition {word!r} is not a condition of the scene "
                f"contract; conditions are {', '.join(CONDITIONS)}"
            )
    for word in contract.effects:
        if word not in EFFECTS and word not in ("holding", "hand_free"):
            raise QueryError(
                f"{contract.name}: effect {word!r} is unknown; effects are "
                f"{', '.join([*EFFECTS, 'holding', 'hand_free'])}"
            )
    return contract


def _squash(name: str) -> str:
    return re.sub(r"[\s_\-?]+", "", str(name).lower())


@dataclass(frozen=True)
class Param:
    """One argument of an action: its name (``to``), role (``destination``) and type (``room``)."""

    name: str
    role: str
    type: str = ""

    def __post_init__(self) -> None:
        if self.role not in ARG_ROLES:
            raise QueryError(
                f"argument {self.name!r}: {self.role!r} is not a role; roles are "
                + ", ".join(ARG_ROLES)
            )


@dataclass(frozen=True)
class ActionContract:
    """What one of the user's actions is.

    Attributes:
        name: the user's name for it (``navigate-to``, ``HandTo``).
        kind: one of RAIDER's kinds (:data:`~bt_raider.checking.vocabulary.ACTIONS`) or a new
            kind's name (``press``): then ``new`` is True and the check reads its declared
            preconditions.
        params: its arguments in order, each with its role and type.
        preconditions: for a new kind, what must hold, in the scene contract's terms
            (:data:`bt_raider.checking.action_contract.CONDITIONS`).
        effects: for a new kind, what holds after it (for look-ahead).
    """

    name: str
    kind: str
    params: tuple[Param, ...]
    preconditions: tuple[str, ...] = ()
    effects: tuple[str, ...] = ()
    source: str = field(default="declared", compare=False)

    @property
    def new(self) -> bool:
        """Whether the kind is none of RAIDER's nine (declared preconditions decide)."""
        return self.kind not in ACTIONS

    def role(self, param: str) -> str | None:
        """The role of parameter ``param`` (``?to`` or ``to``), or None."""
        key = _squash(param)
        return next((p.role for p in self.params if _squash(p.name) == key), None)

    def picked(self, args: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(raider role, value, type)`` of the arguments the kind acts on, in its order.

        Raises:
            QueryError: the wrong number of arguments, or a role the kind needs has no
                parameter (one line naming the action and the role).
        """
        if len(args) != len(self.params):
            raise QueryError(
                f"{self.name} takes {len(self.params)} argument(s) "
                f"({', '.join(p.name for p in self.params)}), got {len(args)}: {list(args)!r}"
            )
        by_role: dict[str, tuple[str, str]] = {}
        for p, value in zip(self.params, args, strict=True):
            by_role.setdefault(p.role, (value, p.type))
        if self.new:
            return [("object", *by_role["object"])] if "object" in by_role else []
        out = []
        for raider_role, roles, required in KIND_ARGS[self.kind]:
            found = next((by_role[r] for r in roles if r in by_role), None)
            if found is None:
                if required:
                    raise QueryError(
                        f"{self.name} ({self.kind}): no argument has the role "
                        f"{' or '.join(roles)}; its arguments are "
                        + ", ".join(f"{p.name} ({p.role})" for p in self.params)
                    )
                continue
            out.append((raider_role, *found))
        return out

    def query(self, args: Sequence[str]) -> str:
        """The query the check reads for a call with ``args`` (scene names), in the user's words.

        ``navigate-to`` with ``[tiago, corridor, lounge, ana_door]`` -> ``navigate-to(lounge)``.
        """
        from bt_raider.checking.parse import action_for_name

        picked = self.picked(args)
        name = self.name if action_for_name(self.name) == self.kind else self.kind
        return f"{name}({', '.join(value for _, value, _ in picked)})"


class ActionContracts:
    """The user's actions by name (compared lower case, without ``-``, ``_`` and spaces).

    Example:
        >>> contracts = ActionContracts()
        >>> _ = contracts.declare("HandTo", "handover", object="item", recipient="person")
        >>> contracts.get("hand_to").query(["PillOrganiser", "Bernadette"])
        'handover(PillOrganiser, Bernadette)'
    """

    def __init__(self, contracts: Iterable[ActionContract] = ()) -> None:
        self._by_key: dict[str, ActionContract] = {}
        for c in contracts:
            self.add(c)

    def add(self, contract: ActionContract) -> ActionContract:
        self._by_key[_squash(contract.name)] = contract
        return contract

    def declare(
        self,
        name: str,
        kind: str,
        *,
        preconditions: Sequence[str] = (),
        effects: Sequence[str] = (),
        **roles: str,
    ) -> ActionContract:
        """Declare ``name`` of ``kind`` with its arguments in order, ``role=type`` each.

        ``declare("HandTo", "handover", object="item", recipient="person")``; a new kind
        (``declare("PressButton", "press", object="button", preconditions=["reachable"],
        effects=["on"])``) gets its preconditions and effects.
        """
        params = tuple(Param(role, role, str(t)) for role, t in roles.items())
        if kind in ACTIONS and (preconditions or effects):
            raise QueryError(
                f"{name}: {kind} is one of RAIDER's kinds, checked by its own rules; "
                "preconditions and effects are declared for a new kind only"
            )
        if kind not in ACTIONS and not re.fullmatch(r"[a-z][a-z_]*", kind):
            raise QueryError(f"{name}: a new kind is a lower-case word, got {kind!r}")
        contract = ActionContract(name, kind, params, tuple(preconditions), tuple(effects))
        if contract.new:
            check_contract(contract)
        return self.add(contract)

    def get(self, name: str) -> ActionContract | None:
        return self._by_key.get(_squash(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _squash(name) in self._by_key

    def __iter__(self) -> Iterator[ActionContract]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def names(self) -> list[str]:
        return [c.name for c in self]

    def split(self, text: str) -> tuple[ActionContract, list[str]] | None:
        """The contract and arguments of a call ``Name(a, b)`` or PDDL instance ``(name a b)``
        of an action in the contract; None for anything else (natural language too)."""
        stripped = text.strip()
        if stripped.startswith("(") and stripped.endswith(")"):
            tokens = stripped[1:-1].split()
            if not tokens:
                return None
            name, args = tokens[0], tokens[1:]
        else:
            match = re.fullmatch(r"\s*([A-Za-z][\w\-]*)\s*\((.*)\)\s*", stripped, re.DOTALL)
            if match is None:
                return None
            name = match.group(1)
            args = [a.strip().strip("'\"") for a in match.group(2).split(",") if a.strip()]
        contract = self.get(name)
        return None if contract is None else (contract, args)

    def query(self, text: str, bindings: Mapping[str, str] | None = None) -> str:
        """The check's query for a PDDL instance ``(name arg ...)`` or a call ``Name(a, b)``.

        Raises:
            QueryError: the action is not in the contract, or its arguments do not fit it.
        """
        found = self.split(text)
        if found is None:
            raise QueryError(
                f"{text[:80]!r} is no call of an action of the contract; its actions are "
                + (", ".join(self.names()) or "none")
            )
        contract, args = found
        names = dict(bindings or {})
        return contract.query([names.get(a, a) for a in args])
