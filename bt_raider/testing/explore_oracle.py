"""The explorer's world oracle: the truth from the generator, judged on every robot call.

The :class:`Oracle` never asks the checker. It knows, from the case, which object each
instruction designates (or that it leaves the choice open), hears what every reply designates
(from :class:`~bt_raider.testing.explore_people.ExplorePerson`), and sees every call the tree
makes on the user's robot (through :class:`~bt_raider.testing.explore_world.RecordingRobot`)
with the scene just before it. It records a :class:`Violation` of a property in
:data:`PROPERTIES` the moment one happens.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from bt_raider.testing.explore_people import Reply
from bt_raider.testing.explore_world import Call, Group, Truth

#: The properties, by id.
PROPERTIES: dict[str, str] = {
    "P1": "acts only on the object the instruction and the person's answers designate",
    "P2": "calls only action names the user's robot has",
    "P3": "no unparsed text reaches a robot call (objectIds, people and places only)",
    "P4": "never moves along a route the scene marks blocked",
    "P5": "ends SUCCESS or FAILURE, with a reason, within the tick bound",
    "P6": "no exception escapes into the user's tree or the test run",
    "P7": "questions name things in words a person can use, never an internal label",
    "P8": "an episode replays identically from its case",
    "P9": "asks nothing the instruction already answers",
    "P10": "no action the contract forbids (open a running appliance, a second dish in one)",
    "P11": "'go to X' and approach(X) get the same check and the same questions",
}

#: Appliances that hold one dish (the contract's one-slot receptacles).
ONE_SLOT = frozenset({"Microwave", "CoffeeMachine", "Toaster"})
_STRINGS = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\"""")
_LABEL = re.compile(r"\b[A-Z][A-Za-z]*_\d+\b|\w+\|[\w.+-]+")


@dataclass(frozen=True)
class Violation:
    """A property broken once.

    Attributes:
        prop: the property's id (``P1`` ... ``P10``).
        message: what happened, naming the call, object or question.
    """

    prop: str
    message: str

    def __str__(self) -> str:
        return f"{self.prop}: {self.message}"


@dataclass
class Oracle:
    """Judges an episode against the truth, call by call.

    Args:
        truth: what the generator knows.

    Attributes:
        designated: per kind, the objectId the instruction or the person's latest clear
            answer designates (None: nothing yet, acting on any of them is a guess).
        violations: every violation so far, in order.
        questions: every question the person was asked.
    """

    truth: Truth
    designated: dict[str, str | None] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.designated = {g.kind: g.by_instruction for g in self.truth.groups}
        self._owner = {i: g for g in self.truth.groups for i in g.ids}
        self._verbs = {name: verb for verb, name in self.truth.words.items()}
        self._lock = threading.Lock()

    def flag(self, prop: str, message: str) -> None:
        """Record a violation of ``prop``."""
        with self._lock:
            self.violations.append(Violation(prop, message))

    def on_reply(self, group: Group, reply: Reply) -> None:
        """A person answered: a clear answer designates from now on (P1)."""
        if reply.clear and reply.designates is not None:
            self.designated[group.kind] = reply.designates

    def on_question(self, question: str) -> None:
        """The robot asked ``question`` (P7, P9)."""
        self.questions.append(question)
        shown = f"question {question!r}"
        labels = [x for x in self.truth.labels if _names(question, x)]
        if labels or _LABEL.search(question):
            found = ", ".join(sorted(labels)) or _LABEL.search(question).group(0)  # type: ignore[union-attr]
            self.flag("P7", f"{shown} names internal labels ({found})")
        if self.truth.plain:
            self.flag("P9", f"{shown} although the instruction designates one object")

    def on_call(self, call: Call) -> None:
        """The tree called the robot (P1, P2, P3, P4, P10)."""
        shown = f"call #{call.index} {call.action}{call.args!r}"
        verb = self._verbs.get(call.action)
        # The user's own nodes call what the user wrote; recovery must keep to the robot's words.
        if verb is None and call.tag is None:
            self.flag(
                "P2",
                f"{shown}: the robot has no {call.action!r} "
                f"(it has {', '.join(sorted(self._verbs))})",
            )
        names = _known_names(call.scene)
        for arg in call.args:
            if not isinstance(arg, str) or arg not in names:
                self.flag("P3", f"{shown}: {arg!r} is not an objectId, person or place")
        for arg in call.args:
            group = self._owner.get(arg) if isinstance(arg, str) else None
            if group is None:
                continue
            if call.tag is not None and call.tag != group.kind:
                self.flag("P1", f"{shown}: the node for the {call.tag} acted on a {group.kind}")
                continue
            want = self.designated.get(group.kind)
            if want is None:
                self.flag("P1", f"{shown}: nothing designated one {group.kind} yet (a guess)")
            elif arg != want:
                self.flag("P1", f"{shown}: the {group.kind} designated is {want}")
        if verb in ("move_to", "approach") and call.args:
            blockers = _blockers(call.scene, str(call.args[0]))
            if blockers:
                self.flag("P4", f"{shown}: the route is blocked by {', '.join(blockers)}")
        if verb == "open" and call.args:
            obj = _object(call.scene, call.args[0])
            if obj is not None and obj.get("toggleable") and obj.get("isToggled"):
                self.flag("P10", f"{shown}: the {obj['objectType']} is running")
        if verb == "place" and len(call.args) >= 2:
            dest = _object(call.scene, call.args[-1])
            if dest is not None and dest.get("objectType") in ONE_SLOT:
                if dest.get("receptacleObjectIds"):
                    self.flag("P10", f"{shown}: the {dest['objectType']} already holds a dish")

    def on_code(self, code: str) -> None:
        """A recovery's accepted code, as shown to the user (P2: only the robot's words)."""
        allowed = set(self._verbs) | {"ask", "say", "wait_for"}
        bare = _STRINGS.sub("''", code)  # words inside a question or remark are not calls
        for name in re.findall(r"\b([A-Za-z_]\w*)\s*\(", bare):
            if name not in allowed:
                self.flag("P2", f"recovery code calls {name!r}, not the robot's: {code!r}")

    def finish(self, status: str, reason: str, *, timed_out: bool) -> None:
        """The run ended (P5)."""
        if timed_out or status not in ("SUCCESS", "FAILURE"):
            self.flag("P5", f"the run did not end: {status} (timed out: {timed_out})")
        elif status == "FAILURE" and not reason.strip():
            self.flag("P5", "the run failed without a reason")


def _names(question: str, label: str) -> bool:
    return re.search(rf"(?<![\w|]){re.escape(label)}(?![\w|])", question, re.IGNORECASE) is not None


def _known_names(scene: dict[str, Any]) -> set[str]:
    names = {o["objectId"] for o in scene.get("objects") or []}
    for person in scene.get("humans") or []:
        names.add(person.get("id"))
        if person.get("name"):
            names.add(person["name"])
    names |= set(scene.get("locations") or {})
    return {n for n in names if isinstance(n, str)}


def _object(scene: dict[str, Any], ref: Any) -> dict[str, Any] | None:
    for obj in scene.get("objects") or []:
        if obj["objectId"] == ref:
            return dict(obj)
    return None


def _blockers(scene: dict[str, Any], target: str) -> list[str]:
    """Blockers the scene lists for ``target`` that still stand in the way."""
    blocked = scene.get("blocked") or {}
    listed = [v for k, v in blocked.items() if k.lower() == target.lower()]
    inventory = {i.get("objectId") for i in scene.get("inventoryObjects") or []}
    out = []
    for ids in listed:
        for blocker in ids:
            obj = _object(scene, blocker)
            # Only a blocker gone or in a hand no longer blocks: one we cannot place (NaN)
            # still does (fail closed).
            if obj is None or obj.get("isPickedUp") or blocker in inventory:
                continue
            out.append(blocker)
    return out


__all__ = ["ONE_SLOT", "PROPERTIES", "Oracle", "Violation"]
