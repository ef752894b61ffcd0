"""What a passing check resolved an action to, and how any py_trees behaviour learns it.

A check grounds each argument of the action it checks to objects of the scene ("the clean cup"
-> ``Cup|+00.20|+00.90|+00.50``); after a recovery the arguments may be new altogether (the
person said which cup). A :class:`~bt_raider.runtime.guards.RaiderGuard` hands that
:class:`ResolvedAction` to its child in two ways, after every passing check and before it ticks
the child:

* ``child.retarget(resolved)`` when the child implements :class:`Retargetable` (one method;
  :class:`~bt_raider.robot.actions.ActionBehaviour` does). At the guard's next run it calls
  ``child.retarget(None)``: act on your own arguments again. ::

      class Pick(py_trees.behaviour.Behaviour):
          def retarget(self, resolved):
              self.resolved = resolved  # None: back to self.target

          def initialise(self):
              target = self.resolved.args[0] if self.resolved else self.target
              ...

* on the blackboard at ``/bt_raider/resolved/<guard id>`` (``guard.resolved_key``), as
  :meth:`ResolvedAction.as_dict`, for behaviours that implement nothing (and for later nodes:
  what did the guarded pick pick?).

A compound instruction ("pick the tomato and put it in the bowl", see
:func:`compound_steps`) resolves step by step: :attr:`ResolvedAction.steps` holds one
:class:`ResolvedAction` per step, in order (``steps[1].args == (Tomato id, Bowl id)``), and
the compound's own fields are its first step's, so a child that reads ``resolved.args`` acts on
the first step, never on the unparsed sentence. :meth:`ResolvedAction.for_action` finds the
step of an action. A single action has no ``steps``: nothing changes for it.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bt_raider.errors import BtRaiderError, UsageError

# The instruction parser and the reader of referring expressions load with the first check
# that needs them: a process that only numbers guards (a robot of the cooperative demo, whose
# SharedGoalGuards check no instruction) starts without them.
if TYPE_CHECKING:
    from bt_raider.checking.contract import Query
    from bt_raider.checking.verdict import Verdict

#: Namespace of each guard's resolved action: ``/bt_raider/resolved/<guard id>``.
RESOLVED_NAMESPACE = "/bt_raider/resolved"

_GUARD_NUMBERS = itertools.count(1)
_GUARD_NUMBERS_LOCK = threading.Lock()


def new_guard_id(name: str) -> str:
    """A guard's id, unique in the process whatever its display name: ``<name>#<n>``, the name
    with ``/`` and ``.`` written ``_`` (a ``/`` would nest blackboard namespaces; py_trees reads
    a ``.`` as an attribute of the value) and ``n`` a number no other guard has. Two guards
    named ``fetch/cup`` and ``fetch.cup``, or two left at one default name, get two ids, so
    they never share a blackboard key, a trace entry or a report line.
    """
    with _GUARD_NUMBERS_LOCK:
        number = next(_GUARD_NUMBERS)
    return f"{name.replace('/', '_').replace('.', '_')}#{number}"


def guard_named(name: str, within: Any) -> Any:
    """The one guard (a node with a ``guard_id``) named ``name`` in the tree of ``within``
    (any node of it: the asking node itself, say).

    Raises:
        UsageError: no guard of that tree has that name, or several do (the message names
            their ids: ask the guard itself, ``guard.resolved_key``).
    """
    root = within
    while getattr(root, "parent", None) is not None:
        root = root.parent
    found = [
        node
        for node in root.iterate()
        if node.name == name and isinstance(getattr(node, "guard_id", None), str)
    ]
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageError(f"no guard of the tree {root.name!r} is named {name!r}")
    ids = ", ".join(node.guard_id for node in found)
    raise UsageError(
        f"{len(found)} guards are named {name!r} ({ids}): a name cannot tell them apart; "
        "use the guard's own keys (guard.resolved_key, guard.key)"
    )


def resolved_for(guard_name: str, within: Any) -> dict[str, Any] | None:
    """What the guard named ``guard_name`` in the tree of ``within`` resolved its action to
    (its blackboard dict, see :meth:`ResolvedAction.as_dict`), or None while it holds
    nothing: for a later node that knows its guard only by name ("what did the guarded pick
    pick?"; ``resolved_for("check pick the cup", self)``).

    Raises:
        UsageError: no guard, or several guards, of that tree have that name
            (:func:`guard_named`).
    """
    import py_trees

    key = guard_named(guard_name, within).resolved_key
    try:
        value = py_trees.blackboard.Blackboard.get(key)
    except KeyError:
        return None
    return dict(value) if isinstance(value, dict) else None


def resolved_key(guard_id: str) -> str:
    """The blackboard key of a guard's resolved action (``guard.resolved_key``), from its id
    (:func:`new_guard_id`; ``/`` and ``.`` are written ``_``)."""
    return f"{RESOLVED_NAMESPACE}/{guard_id.replace('/', '_').replace('.', '_')}"


@dataclass(frozen=True)
class ResolvedAction:
    """The action a passing check let run, with its arguments resolved to objectIds.

    Attributes:
        action: the action's name as the check understood it (``pick``), when known.
        args: one per argument of the checked query, in order: the objectId the check grounded
            it to when that is exactly one object, else the argument as written.
        grounding: the verdict's grounding: argument phrase -> objectIds.
        bindings: for a PDDL query with bindings, parameter -> objectId (or the value as
            given when the check grounded it to no single object, e.g. the robot).
        verdict: the passing verdict.
        query: the query text that was checked (after a recovery: the refined one).
        phrases: the checked query's argument phrases, in the order of ``args``.
        recovered: True when a recovery chose the arguments (e.g. the person's answer).
        steps: for a compound instruction, one resolution per step, in order (the fields
            above are then the first step's, ``verdict`` and ``query`` the whole
            instruction's); empty for a single action.
    """

    action: str | None
    args: tuple[str, ...]
    grounding: dict[str, list[str]]
    bindings: dict[str, str]
    verdict: Verdict = field(repr=False)
    query: str = ""
    phrases: tuple[str, ...] = ()
    recovered: bool = False
    steps: tuple[ResolvedAction, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the blackboard (the verdict itself is under ``/bt_raider/verdicts``).

        A compound instruction adds ``"steps"``: each step's dict, in order.
        """
        out: dict[str, Any] = {
            "action": self.action,
            "args": list(self.args),
            "grounding": {k: list(v) for k, v in self.grounding.items()},
            "bindings": dict(self.bindings),
            "query": self.query,
            "phrases": list(self.phrases),
            "recovered": self.recovered,
        }
        if self.steps:
            out["steps"] = [step.as_dict() for step in self.steps]
        return out

    def for_action(self, action: str, arity: int | None = None) -> ResolvedAction | None:
        """The resolution of ``action`` (``pick``, ``Pick``, ``pick-up``...): this one, or for a
        compound instruction its first step of that action (with ``arity`` arguments, when
        given); None when there is none.
        """
        from bt_raider.checking.parse import action_for_name, same_action

        for step in self.steps or (self,):
            if not same_action(action_for_name(action) or action, step.action):
                continue
            if arity is None or len(step.args) == arity:
                return step
        return None


@runtime_checkable
class Retargetable(Protocol):
    """A behaviour that acts on what its guard's check resolved (any py_trees behaviour may)."""

    def retarget(self, resolved: ResolvedAction | None) -> None:
        """Act on ``resolved`` from now on; None: act on your own arguments again.

        Called on the tree's thread, so it must return at once.
        """
        ...


#: ``pick(Cup, the table)``: the structured form, whose arguments the parser keeps as written.
_STRUCTURED = re.compile(r"\s*([A-Za-z][\w\-]*)\s*\((.*)\)\s*[.!?]?\s*", re.DOTALL)


@lru_cache(maxsize=4096)
def _steps(text: str) -> tuple[str, ...]:
    from bt_raider.checking.steps import split_steps

    try:
        found = split_steps(text)
    except BtRaiderError:
        return ()
    return tuple(found) if len(found) > 1 else ()


def compound_steps(query: Query) -> tuple[str, ...]:
    """The steps of a compound instruction ("open the fridge, take the egg and close it" ->
    three), or ``()`` for one action (a PDDL query with preconditions or bindings is one).

    Cut where :func:`bt_raider.checking.steps.split_steps` cuts (where ``check`` does); cached.
    """
    if query.preconditions or query.bindings:
        return ()
    return _steps(query.text)


@lru_cache(maxsize=4096)
def _split(text: str, bindings: tuple[tuple[str, Any], ...]) -> tuple[str | None, tuple[str, ...]]:
    from bt_raider.checking.parse import action_for_name, split_action

    match = _STRUCTURED.fullmatch(text)
    if match:  # a regex, not the whole parser: 100 guards may pass on one tick
        args = (a.strip().strip("'\"") for a in match.group(2).split(","))
        name = match.group(1)
        return action_for_name(name) or name.lower(), tuple(a for a in args if a)
    name, found = split_action(text, dict(bindings) or None)
    return name, tuple(found)


def argument_phrases(query: Query) -> tuple[str | None, tuple[str, ...]]:
    """The action name and argument phrases of ``query``.

    Cached: the guard calls it on the worker after each check, so the tick finds it parsed.
    """
    return _split(query.text, tuple(query.bindings.items()))


def _grounded(phrase: str, grounding: dict[str, list[str]], checked: Sequence[str] = ()) -> str:
    """The one objectId ``phrase`` resolved to, else the phrase itself.

    A phrase that designates several of which any will do ("any cup in the sink") keeps them
    all in the grounding (the designation); the check says which one it checked by listing
    only that one among the verdict's ``objects`` (``checked``): the robot acts on it, never
    on the words.
    """
    ids = grounding.get(phrase)
    if ids is None:  # a checker may key its grounding in another case
        folded = phrase.strip().casefold()
        ids = next((v for k, v in grounding.items() if k.strip().casefold() == folded), None)
    if ids and len(ids) > 1 and accepts_any(phrase):
        # "any cup": every member will do; the robot gets the one the check checked.
        mine = [i for i in ids if i in checked]
        return str((mine or ids)[0])
    if ids and len(ids) == 1:
        return str(ids[0])
    return phrase  # several, or nothing: as written (the release check decides)


@lru_cache(maxsize=512)
def accepts_any(phrase: str) -> bool:
    """Whether the words of ``phrase`` accept any object they allow ("any cup", "either one",
    "whichever", "you choose"), read by the one reader of referring expressions."""
    from bt_raider.perception import reference

    return reference.read(phrase).quantifier == "any"


def _any_grounded(phrases: tuple[str, ...], grounding: dict[str, list[str]]) -> bool:
    folded = {k.strip().casefold() for k in grounding}
    return any(p.strip().casefold() in folded for p in phrases)


def resolve_action(verdict: Verdict, query: Query, *, asked: Query | None = None) -> ResolvedAction:
    """What ``verdict`` (passing) resolved ``query`` to.

    Args:
        verdict: the passing verdict of ``query``.
        query: the query checked.
        asked: the query the guard was given, when a recovery replaced it by ``query`` (its
            PDDL bindings still name the parameters).
    """
    name, phrases = argument_phrases(query)
    grounding = {str(k): list(v) for k, v in verdict.grounding.items()}
    if not phrases:  # text the parser cannot split: the checker's own phrases, in its order
        phrases = tuple(grounding)
    elif (
        query.text.lstrip().startswith("(") and grounding and not _any_grounded(phrases, grounding)
    ):
        # A PDDL step the checker read by its contract's roles (the destination, not the door
        # last): the arguments it grounded are the action's, never the last by position.
        phrases = tuple(grounding)
    checked = [str(o) for o in verdict.objects]
    args = tuple(_grounded(p, grounding, checked) for p in phrases)
    source = asked if asked is not None else query
    bindings: dict[str, str] = {}
    if source.bindings:
        source_phrases = argument_phrases(source)[1] if asked is not None else phrases
        by_phrase = (
            dict(zip(source_phrases, args, strict=True)) if len(source_phrases) == len(args) else {}
        )
        for param, value in source.bindings.items():
            if value is None or not str(value):
                continue
            text = str(value)
            bindings[str(param)] = by_phrase.get(text) or _grounded(text, grounding, checked)
    return ResolvedAction(
        action=verdict.action or name,
        args=args,
        grounding=grounding,
        bindings=bindings,
        verdict=verdict,
        query=query.text,
        phrases=phrases,
        recovered=asked is not None,
    )


def resolve_steps(
    verdict: Verdict,
    query: Query,
    steps: list[tuple[str, Verdict]],
    recovered: frozenset[int] | set[int] = frozenset(),
) -> ResolvedAction:
    """What a passing check of a compound instruction resolved each of its steps to.

    Args:
        verdict: the passing verdict of the whole instruction.
        query: the instruction checked.
        steps: per step, the query text checked (pronouns replaced: "put Tomato in the bowl")
            and its passing verdict.
        recovered: the indexes of the steps a recovery chose the arguments of.

    Returns:
        The first step's resolution, with ``steps`` (all of them), the whole ``verdict`` and
        ``query``.
    """
    from bt_raider.checking.contract import Query

    resolved = tuple(
        replace(resolve_action(v, Query(text)), recovered=i in recovered)
        for i, (text, v) in enumerate(steps)
    )
    if not resolved:
        return resolve_action(verdict, query)
    return replace(resolved[0], verdict=verdict, query=query.text, steps=resolved)
