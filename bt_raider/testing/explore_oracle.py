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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bt_raider.testing.explore_judge import designate, offered
from bt_raider.testing.explore_people import Reply
from bt_raider.testing.explore_world import Call, Group, Thing, Truth, phrase

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
    "P12": "a guard releases its child only with arguments inside the designation",
    "P13": "a word left over is never read as none: the robot asks (an unknown modifier...)",
    "P14": "words that designate several objects are never acted on as one without asking",
    "P15": "'my left' without the speaker's heading is never acted on without asking",
}
#: Verbs that act on their first argument as the object the person means.
ACTS_ON = frozenset({"pick", "handover", "move_to", "approach", "open"})

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
    designated: dict[str, frozenset[str] | None] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    scene: Callable[[], dict[str, Any]] | None = None
    #: The user's robot's own action names, kind -> name (``explore(actions=...)``).
    own: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.designated = {g.kind: g.allowed for g in self.truth.groups}
        self._owner = {i: g for g in self.truth.groups for i in g.ids}
        self._verbs = {name: verb for verb, name in self.truth.words.items()}
        self._verbs.update({name: verb for verb, name in self.own.items()})
        self._lock = threading.Lock()
        self._asked: set[str] = set()
        self._kinds = {g.kind for g in self.truth.groups}

    def _unasked(self, group: Group) -> str:
        """The property acting on ``group`` before anything designated one breaks: why the
        instruction left it open (P13-P15 while nobody was asked about it), else P1."""
        judged = group.designation
        if judged is None or group.kind in self._asked:
            return "P1"
        if judged.mode == "unread":
            return "P15" if "speaker's frame" in judged.why else "P13"
        if judged.mode == "several" and group.said is not None:
            if group.said.alt is not None or group.said.quant == "all":
                return "P14"
        return "P1"

    def flag(self, prop: str, message: str) -> None:
        """Record a violation of ``prop``."""
        with self._lock:
            self.violations.append(Violation(prop, message))

    def on_reply(self, group: Group, reply: Reply) -> None:
        """A person answered: a clear answer designates from now on (P1).

        A reply generated from a program is read by the oracle's own evaluator against the
        question it answers: among the options the question offered ("... the green cup or the
        red cup?": "the one that is not red" is the green one), else among the objects the
        instruction left open (a program's designation, the generator's colour, side or state
        words' matches; all of the kind when it left none).
        """
        if reply.say is not None:
            judged = group.designation
            among = self._left_open(group)
            if judged is not None and judged.mode not in ("unread", "none") and judged.possible:
                among = set(judged.possible)
            scene = self.scene() if self.scene is not None else {}
            shown = offered(reply.question, group.kind, scene, group.ids)
            if shown is not None:
                among = set(shown)
            heard = designate(reply.say, group.kind, scene, among=among, speaker=self.truth.speaker)
            if heard.mode in ("one", "any", "vague"):
                # Vague (near a boundary): asking again and acting on what the words may mean
                # are both fine, as for an instruction.
                self.designated[group.kind] = heard.possible
            return
        if reply.clear and reply.designates is not None:
            self.designated[group.kind] = frozenset({reply.designates})

    def _left_open(self, group: Group) -> set[str]:
        """The objects an instruction in the generator's colour, side or state words leaves
        open ("pick the clean cup": the clean cups), from the generated attributes; all of the
        kind for other words (a program's instruction has its own designation)."""
        mine = group.things[group.ids.index(group.target)]
        tests: dict[str, Callable[[Thing], bool]] = {
            "colour": lambda t: t.colour == mine.colour,
            "side": lambda t: t.side == mine.side,
            "state": lambda t: t.dirty == mine.dirty,
        }
        for form, same in tests.items():
            if group.query == phrase(form, group.kind, mine, self.truth.words)[0]:
                return {i for i, t in zip(group.ids, group.things, strict=True) if same(t)}
        return set(group.ids)

    def on_release(self, kind: str, verb: str, args: list[Any]) -> None:
        """A guard released its child, the node for ``kind``, with ``args`` (P12)."""
        if verb not in ACTS_ON or not args:
            return
        arg = str(args[0])
        group = next((g for g in self.truth.groups if g.kind == kind), None)
        shown = f"released {verb}({', '.join(map(str, args))})"
        if group is not None and group.asks is not None:
            self.flag("P12", f"{shown}: its guard's words ask for a {group.asks}, not a {verb}")
            return
        if group is None or arg == group.place or (group.place and arg in group.place):
            return
        if arg not in group.ids:
            # An objectId of another kind than the node's, where the node takes its own kind
            # (opening the microwave, going to a named place's counter take others).
            if "|" in arg and verb in ("pick", "handover") and group.action == verb:
                self.flag("P12", f"{shown}: the node works on the {kind}, not {arg}")
            return
        want = self.designated.get(kind)
        if want is None:
            self.flag("P12", f"{shown}: nothing designated one {kind} yet")
        elif arg not in want:
            self.flag("P12", f"{shown}: the {kind} designated is {_shown(want)}")

    def on_verdict(self, kind: str, query: str, category: str) -> None:
        """The guard's checker judged ``query`` (P13: no ``none`` with a word left over)."""
        group = next((g for g in self.truth.groups if g.kind == kind), None)
        if group is None or group.designation is None or query.strip() != group.query:
            return
        if group.designation.mode == "unread" and category == "none":
            self.flag(
                "P13" if "speaker's frame" not in group.designation.why else "P15",
                f"{query!r} checked none although {group.designation.why} cannot be read",
            )

    def on_question(self, question: str) -> None:
        """The robot asked ``question`` (P7, P9)."""
        self.questions.append(question)
        q = question.lower()
        if re.search(r"\b(which|where)\b|\bor\b", q):  # asked to choose (not to move a chair)
            named = {g.kind for g in self.truth.groups if re.search(rf"\b{g.kind.lower()}", q)}
            if re.search(r"\bbowls?\b", q):
                named.add("Bowl")  # which bowl to put it in
            self._asked.update(named or {self.truth.groups[0].kind})
        shown = f"question {question!r}"
        labels = [x for x in self.truth.labels if _names(question, x)]
        if labels or _LABEL.search(question):
            found = ", ".join(sorted(labels)) or _LABEL.search(question).group(0)  # type: ignore[union-attr]
            self.flag("P7", f"{shown} names internal labels ({found})")
        needless = [k for k in self.truth.plain_kinds if re.search(rf"\b{k.lower()}s?\b", q)]
        if self.truth.plain or needless:
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
        # The scene's names now, and every objectId the episode began with (an unguarded node
        # may still name an object a disturbance took away: an id, not text).
        names = _known_names(call.scene) | set(self.truth.names)
        for arg in call.args:
            if not isinstance(arg, str) or arg not in names:
                self.flag("P3", f"{shown}: {arg!r} is not an objectId, person or place")
        for arg in call.args:
            group = self._owner.get(arg) if isinstance(arg, str) else None
            if group is None:
                obj = _object(call.scene, arg)
                if obj is None or verb not in ("pick", "handover") or arg != call.args[0]:
                    continue
                kind = obj.get("objectType")
                if call.tag in self._kinds:
                    # The user's node for one kind acting on an object of a kind nobody named.
                    self.flag("P1", f"{shown}: the node for the {call.tag} acted on a {kind}")
                elif call.tag is None and not _in_the_way(call.scene, arg):
                    # A recovery may move what blocks the way; anything else it takes is a
                    # substitute for what the person meant, or fills the hand the action needs.
                    self.flag("P1", f"{shown}: recovery took a {kind} nobody designated")
                continue
            if call.tag is not None and call.tag != group.kind:
                self.flag("P1", f"{shown}: the node for the {call.tag} acted on a {group.kind}")
                continue
            if group.asks is not None:  # words for one action over a node doing another
                self.flag(
                    "P1", f"{shown}: {group.query!r} asks for a {group.asks}, not a {group.action}"
                )
                continue
            want = self.designated.get(group.kind)
            if want is None:
                prop = self._unasked(group)
                self.flag(prop, f"{shown}: nothing designated one {group.kind} yet (a guess)")
            elif arg not in want:
                self.flag("P1", f"{shown}: the {group.kind} designated is {_shown(want)}")
        if verb in ("move_to", "approach") and call.args:
            blockers = _blockers(call.scene, str(call.args[0]))
            if blockers:
                self.flag("P4", f"{shown}: the route is blocked by {', '.join(blockers)}")
        if verb == "open" and call.args:
            obj = _object(call.scene, call.args[0])
            if obj is not None and obj.get("toggleable") and obj.get("isToggled"):
                self.flag("P10", f"{shown}: the {obj['objectType']} is running")
        if verb == "pick" and call.args:
            held = len(call.scene.get("inventoryObjects") or [])
            arms = int((call.scene.get("robot") or {}).get("arms", 1) or 1)
            if held >= arms:
                self.flag("P10", f"{shown}: a pick with a full hand ({held} held, {arms} arm(s))")
        if verb == "place" and len(call.args) >= 2:
            if str(call.args[0]) in self.truth.groups[0].ids:  # what the words said to put
                self._into(shown, str(call.args[-1]))
            dest = _object(call.scene, call.args[-1])
            if dest is not None and dest.get("objectType") in ONE_SLOT:
                if dest.get("receptacleObjectIds"):
                    self.flag("P10", f"{shown}: the {dest['objectType']} already holds a dish")

    def _into(self, shown: str, dest: str) -> None:
        """A place into a bowl the instruction's words said which of (P1, P13, P14)."""
        judged = self.truth.groups[0].into
        if judged is None or not dest.startswith("Bowl|explore|"):
            return
        allowed = judged.allowed
        if "Bowl" in self._asked:
            # After a question about the bowl, whatever the words may mean (the person's
            # answer is about the other kind's groups: the explorer's people know no bowls).
            allowed = judged.possible
        if allowed is None:
            prop = "P13" if judged.mode == "unread" else "P1"
            self.flag(prop, f"{shown}: the words leave the bowl open ({judged.why}) (a guess)")
        elif dest not in allowed:
            self.flag(prop="P1", message=f"{shown}: the bowl designated is {_shown(allowed)}")

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


def _shown(ids: frozenset[str]) -> str:
    return " or ".join(sorted(ids)) if ids else "none of them"


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


def _in_the_way(scene: dict[str, Any], object_id: str) -> bool:
    """Whether the scene lists ``object_id`` as blocking something."""
    return any(object_id in ids for ids in (scene.get("blocked") or {}).values())


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
