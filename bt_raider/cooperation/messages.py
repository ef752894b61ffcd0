"""The messages REVECA robots exchange, built from and answered with a robot's memory: hello,
status, achieved, a validation request and its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from bt_raider.cooperation.messaging import Message, MessageBus, MessageKind, fit
from bt_raider.cooperation.observations import (
    ObjectInfo,
    Relevance,
    SubGoal,
)
from bt_raider.cooperation.proximity import retrieve
from bt_raider.cooperation.reveca_memory import RevecaMemory
from bt_raider.errors import CommunicationError

if TYPE_CHECKING:
    pass


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
