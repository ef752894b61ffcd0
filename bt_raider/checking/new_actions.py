"""New action kinds without code of ours: declared preconditions and effects, checked like ours.

A user declares a kind the nine do not cover (``PressButton(call_button)``) with what must hold,
in the scene contract's own terms (:data:`~bt_raider.checking.action_contract.CONDITIONS`), and what holds after it (for look-ahead
and plan verification)::

    contracts = ActionContracts()
    contracts.declare(
        "PressButton", "press", object="button",
        preconditions=["reachable", "hand_free"], effects=["on"],
    )
    checker = SymbolicReasoner(contracts=contracts)

The check grounds the ``object`` argument as it grounds any object, answers each precondition
with the perception tools, and reports the first issue by the same priority and in the same
categories as the built-in actions (``reachable`` -> ``out_of_reach``, ``closed`` ->
``wrong_state``...), so explanation, recovery (``move_to`` before pressing) and look-ahead
treat it like them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bt_raider.checking.action_contract import CONDITIONS, EFFECTS, ActionContract
from bt_raider.checking.verdict import Category

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene


def answer(check: Any, contract: ActionContract) -> None:
    """Ask and answer each declared precondition of ``contract`` in a running check."""
    obj = check.one("object")
    verb = contract.name
    kind = next((p.type for p in contract.params if p.role == "object" and p.type), "")
    if obj is not None and kind and not _of_kind(check, obj.type, kind):
        # Grounded only among objects of the role's kind: a table is no button.
        check.ask(f"Is the {obj.name} a {kind}?")
        check.found(
            Category.WRONG_PROPERTY,
            f"The {obj.name} is no {kind}: {verb} acts on a {kind}.",
            obj.id,
        )
        return
    for word in contract.preconditions:
        category, meaning = CONDITIONS[word]
        if word == "reachable" and obj is not None:
            check.within_reach(obj)
        elif word == "route_free" and obj is not None:
            check.ask(f"Is anything blocking the {obj.name}?")
            listed = check.runner.call("check_obj_relationship", "blocking", obj.name) or []
            if listed:
                check.found(
                    category,
                    f"The {obj.name} cannot be reached for {verb}: it is blocked by "
                    f"{', '.join(map(str, listed))}.",
                    obj.id,
                )
            else:
                check.fine(f"nothing blocks the {obj.name}")
        elif word in ("hand_free", "holding"):
            check.ask("Is the robot's hand free?" if word == "hand_free" else "Is it held?")
            held = check.grounder.held()
            ok = (
                (len(held) < check.arms)
                if word == "hand_free"
                else any(obj is not None and h.id == obj.id for h in held)
            )
            what = f"the {obj.name}" if obj is not None else "it"
            if ok:
                check.fine(meaning.replace("the object", what))
            else:
                check.found(
                    category,
                    f"The robot cannot {verb} {what}: "
                    + (
                        "its hand is busy." if word == "hand_free" else f"it is not holding {what}."
                    ),
                    *[h.id for h in held],
                )
        elif word in ("open", "closed", "on", "off") and obj is not None:
            flag, want = EFFECTS[word]
            check.ask(f"Is the {obj.name} {word}?")
            if obj.flag(flag) == want:
                check.fine(f"the {obj.name} is {word}")
            else:
                check.found(
                    category, f"The {obj.name} is not {word}: {verb} needs it {word}.", obj.id
                )
        elif word in ("person_present", "within_handover"):
            check.ask("Is someone recognised in sight?")
            people = [h for h in check.scene.humans if h.name]
            if not people:
                check.found(
                    Category.NOT_PRESENT, f"Nobody is recognised in sight: {verb} needs someone."
                )
                continue
            if word == "within_handover":
                near = min(check.scene.distance_to_robot(h.id) for h in people)
                if near > check.handover_distance:
                    check.found(
                        category,
                        f"Nobody is within the handover distance ({check.handover_distance:.2f} m)"
                        f" for {verb}.",
                    )
                    continue
            check.fine(meaning)


def _of_kind(check: Any, object_type: str, kind: str) -> bool:
    """Whether an object of ``object_type`` is a ``kind`` (``CallButton`` is a ``button``)."""
    squash = object_type.lower().replace("_", "")
    want = kind.lower().replace("_", "").replace(" ", "")
    return squash.endswith(want) or object_type in check.grounder.lexicon.types_for(kind)


def apply_declared(scene: Scene, contract: ActionContract, object_id: str | None) -> None:
    """Change ``scene`` as the declared effects of ``contract`` on ``object_id`` say."""
    if object_id is None:
        return
    try:
        obj = scene.by_id(object_id)
    except Exception:
        return
    for word in contract.effects:
        if word in EFFECTS:
            flag, value = EFFECTS[word]
            obj.raw[flag] = value
