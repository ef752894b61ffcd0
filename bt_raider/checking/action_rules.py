"""The symbolic reasoner's rules: the questions each action asks, and how answers are judged.

:class:`~bt_raider.checking.symbolic.SymbolicReasoner` runs one check per query: it grounds the
arguments, then asks the questions of the query's action (the table of
:mod:`~bt_raider.checking.symbolic`) and issues the verdict. The questions live here: the ones
actions share (is the hand free, is it within reach, is anything blocking it) and one rule per
action (``pick``, ``place``, ``open``/``close``/``turnon``/``turnoff``, ``slice``,
``approach``, ``handover``). Each asks its question through the check's
:class:`~bt_raider.checking.tool_runner.ToolRunner` and records a fact that holds or a finding
of its issue category.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

from bt_raider.checking.grounding import Grounder
from bt_raider.checking.tool_runner import ToolFailure, ToolRunner
from bt_raider.checking.verdict import Category
from bt_raider.checking.wording import (
    STATE_TEXT,
    VERBS,
    article,
    display,
    listing,
    metres,
    reach_text,
    tool_name,
    verb_it,
)
from bt_raider.perception import relations
from bt_raider.perception.lexicon import CategoryLexicon
from bt_raider.perception.scene import Human, Scene, SceneObject
from bt_raider.perception.tools import Place

#: For open/close/turnon/turnoff: (capability, get_obj_state word, the value once done).
TOGGLES = {
    "open": ("openable", "open", True),
    "close": ("openable", "open", False),
    "turnon": ("toggleable", "on", True),
    "turnoff": ("toggleable", "on", False),
}


class _Owner(Protocol):
    """What the rules read of the reasoner that runs the check."""

    lexicon: CategoryLexicon
    single_slot: frozenset[str]


class _ActionRules:
    """The questions of each action, mixed into the symbolic reasoner's check (``_Check``).

    The check sets the attributes below, and records with ``ask`` (a question), ``fine`` (a
    fact that holds) and ``found`` (an issue); ``one`` is the one referent of a role.

    Attributes:
        scene: the scene the check looks at.
        owner: the reasoner running the check (its lexicon and single-slot types).
        action: the query's action (``pick``, ``place``, ...).
        runner: the check's tool runner.
        grounder: the check's grounder (what the robot holds, what rests in or on what).
        reach: the robot's reach, in metres.
        handover_distance: how near a person must be for a handover, in metres.
        arms: how many things the robot can hold at once.
    """

    scene: Scene
    owner: _Owner
    action: str
    runner: ToolRunner
    grounder: Grounder
    reach: float
    handover_distance: float
    arms: int

    if TYPE_CHECKING:

        def ask(self, question: str) -> None: ...

        def found(self, category: Category, explanation: str, *objects: str) -> None: ...

        def fine(self, fact: str) -> None: ...

        def one(self, role: str) -> Any: ...

    # -- shared questions
    def hand_free(self, obj: SceneObject | None) -> None:
        self.ask("Is the robot's hand free?")
        held = self.grounder.held()
        if len(held) < self.arms:
            self.fine("the hand is free")
            return
        names = [o.name for o in held]
        verb = VERBS[self.action][0]
        if obj is not None and obj.name in names and self.action == "pick":
            self.found(
                Category.ROBOT_STATE,
                f"The robot is already holding the {obj.name}: its hand is not free.",
                obj.id,
            )
            return
        what = f"the {obj.name}" if obj is not None else "it"
        self.found(
            Category.ROBOT_STATE,
            f"The robot cannot {verb} {what}: its hand is busy holding the {listing(names)}.",
            *[o.id for o in held],
        )

    def capability(self, obj: SceneObject, cap: str) -> bool:
        self.ask(f"Is the {obj.name} {cap}?")
        props = self.runner.call("get_obj_properties", obj.name) or {}
        return bool(props.get(cap, False))

    def state(self, obj: SceneObject) -> dict[str, bool]:
        result = self.runner.call("get_obj_state", obj.name)
        return dict(result) if isinstance(result, dict) else {}

    def within_reach(self, ref: SceneObject | Place, role: str = "") -> None:
        name = display(ref)
        self.ask(f"Is the {name} within the robot's reach ({reach_text(self.reach)})?")
        dist = self._finite_distance(self.runner.call("dist_to_target", tool_name(ref)), name)
        if dist > self.reach:
            self.found(
                Category.OUT_OF_REACH,
                f"The {name} is {metres(dist)} away, beyond the robot's reach of "
                f"{reach_text(self.reach)}.",
                ref.id,
            )
        else:
            self.fine(f"the {name} is within reach ({metres(dist)})")

    @staticmethod
    def _finite_distance(value: Any, name: str) -> float:
        """A tool's distance as a float; one that is not a finite number ends the check."""
        try:
            dist = float(value)
        except (TypeError, ValueError):
            dist = math.nan
        if not math.isfinite(dist) or dist < 0:
            # NaN > reach is False: reasoning on with it would approve the action.
            raise ToolFailure(f"the distance to the {name} is {value!r}, not a finite number")
        return dist

    def reported_blockers(self, obj: SceneObject) -> None:
        """What perception's obstruction report lists for ``obj`` (not what rests in it)."""
        self.ask(f"Is anything blocking the {obj.name}?")
        listed = self._resolve_all(self.runner.call("check_obj_relationship", "blocking", obj.name))
        listed = [b for b in listed if b.id != obj.id]  # never its own obstacle
        blockers = [b for b in listed if not relations.rests_on(b, obj)]
        resting = [b for b in listed if relations.rests_on(b, obj)]
        if blockers:
            self.found(
                Category.OBSTRUCTED,
                f"The {obj.name} cannot be {VERBS[self.action][1]}: it is blocked by "
                f"{listing([article(b.name) for b in blockers])}.",
                obj.id,
                *[b.id for b in blockers],
            )
        elif resting:
            # The tool lists what rests in or on it too; say why that is no obstacle here.
            where = "in" if relations.is_container(obj) else "on"
            self.fine(
                f"nothing blocks the {obj.name} (the {listing([b.name for b in resting])} "
                f"{where} it {'is' if len(resting) == 1 else 'are'} no obstacle)"
            )
        else:
            self.fine(f"nothing blocks the {obj.name}")

    def running(self, appliance: SceneObject, doing: str) -> None:
        """An appliance that is running (``isToggled``) must be turned off before ``doing``
        ("open it", "place the Bowl in it"): it heats, spins or pours meanwhile."""
        if appliance.type not in relations.RUNNING_APPLIANCE_TYPES:
            return
        self.ask(f"Is the {appliance.name} running?")
        if self.state(appliance).get("on", False):
            self.found(
                Category.WRONG_STATE,
                f"The {appliance.name} is running (turned on): turn it off first, then {doing}.",
                appliance.id,
            )
        else:
            self.fine(f"the {appliance.name} is not running")

    def _resolve_all(self, names: Any) -> list[SceneObject]:
        out = []
        for n in names or []:
            try:
                out.append(self.scene.resolve(n))
            except Exception:  # a blocker perception reports but cannot describe
                continue
        return out

    # -- actions
    def pick(self) -> None:
        obj = self.one("object")
        self.hand_free(obj)
        if not self.capability(obj, "pickupable"):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {obj.name} cannot be picked: it is not pickupable.",
                obj.id,
            )
        else:
            self.fine(f"the {obj.name} is pickupable")
        self.closed_container(obj)
        self.ask(f"Is anything on, in or blocking the {obj.name}?")
        blockers = self._resolve_all(
            self.runner.call("check_obj_relationship", "blocking", obj.name)
        )
        held = {o.id for o in self.grounder.held()}
        blockers = [b for b in blockers if b.id not in held and b.id != obj.id]
        if blockers:
            parts = []
            for b in blockers:
                if relations.rests_on(b, obj):
                    where = "inside" if relations.is_container(obj) else "on top of"
                    parts.append(f"{article(b.name)} is {where} it")
                else:
                    parts.append(f"it is blocked by {article(b.name)}")
            self.found(
                Category.OBSTRUCTED,
                f"The {obj.name} cannot be picked: {listing(parts)}.",
                obj.id,
                *[b.id for b in blockers],
            )
        else:
            self.fine(f"nothing is on, in or blocking the {obj.name}")
        if obj.id not in held:
            self.within_reach(obj)

    def closed_container(self, obj: SceneObject) -> None:
        """Taking from a closed openable receptacle needs it opened first."""
        holders = []
        for pid in obj.parents:
            try:
                parent = self.scene.by_id(pid)
            except Exception:  # a parent perception does not list
                continue
            if parent.type in relations.RUNNING_APPLIANCE_TYPES:
                self.running(parent, f"take the {obj.name} out")
            if parent.flag("openable"):
                holders.append(parent)
        for p in holders:
            self.ask(f"Is the {p.name} that holds the {obj.name} open?")
            if obj not in self.grounder.related("from", p):
                continue
            st = self.state(p)
            if "open" in st and not st["open"]:
                self.found(
                    Category.WRONG_STATE,
                    f"The {obj.name} is inside the {p.name}, which is closed: the {p.name} "
                    "must be opened first.",
                    obj.id,
                    p.id,
                )
            else:
                self.fine(f"the {p.name} is open")

    def place(self) -> None:
        obj, dest = self.one("object"), self.one("destination")
        self.ask(f"Is the robot holding the {display(obj)}?")
        held = self.grounder.held()
        if obj.id not in {o.id for o in held}:
            holds = (
                f"it holds the {listing([o.name for o in held])}" if held else "it holds nothing"
            )
            self.found(
                Category.ROBOT_STATE,
                f"The robot cannot place the {display(obj)}: it is not holding it ({holds}).",
                obj.id,
                *[o.id for o in held],
            )
        else:
            self.fine(f"the robot holds the {display(obj)}")
        if isinstance(dest, Place):
            self.within_reach(dest)
            return
        if not self.capability(dest, "receptacle"):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {display(obj)} cannot be placed in the {dest.name}: the {dest.name} is "
                "not a receptacle.",
                dest.id,
            )
        else:
            self.fine(f"the {dest.name} is a receptacle")
        st = self.state(dest)
        if "open" in st:
            self.ask(f"Is the {dest.name} open?")
            if not st["open"]:
                self.found(
                    Category.WRONG_STATE,
                    f"The {dest.name} is closed: the {display(obj)} cannot be placed in it "
                    "until it is opened.",
                    dest.id,
                )
            else:
                self.fine(f"the {dest.name} is open")
        self.running(dest, f"place the {display(obj)} in it")
        if dest.type in self.owner.single_slot:
            self.ask(f"Is the {dest.name} free? (it holds one item at a time)")
            inside = self._resolve_all(
                self.runner.call("check_obj_relationship", "inside", dest.name)
            )
            inside = [o for o in inside if o.id != obj.id]
            if inside:
                self.found(
                    Category.OBSTRUCTED,
                    f"The {dest.name} is occupied by {listing([article(o.name) for o in inside])}: "
                    "it holds one item at a time.",
                    dest.id,
                    *[o.id for o in inside],
                )
            else:
                self.fine(f"the {dest.name} is free")
        self.reported_blockers(dest)
        self.within_reach(dest)

    def toggle(self) -> None:
        obj = self.one("object")
        cap, word, done_value = TOGGLES[self.action]
        verb, done = VERBS[self.action]
        self.hand_free(obj)
        if not self.capability(obj, cap):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {obj.name} cannot be {done}: it is not {cap}.",
                obj.id,
            )
        else:
            self.fine(f"the {obj.name} is {cap}")
            already = STATE_TEXT[word][done_value]
            self.ask(f"Is the {obj.name} already {already}?")
            if bool(self.state(obj).get(word, False)) == done_value:
                self.found(
                    Category.WRONG_STATE,
                    f"The {obj.name} is already {already}: to {verb_it(verb)} would change "
                    "nothing.",
                    obj.id,
                )
            else:
                self.fine(f"the {obj.name} is {STATE_TEXT[word][not done_value]}")
                if self.action == "open":
                    self.running(obj, "open it")
        self.reported_blockers(obj)
        self.within_reach(obj)

    def slice(self) -> None:
        obj = self.one("object")
        self.ask("Is the robot holding a knife?")
        held = self.grounder.held()
        knives = self.owner.lexicon.types_for("knife") or {"Knife"}
        if not any(o.type in knives for o in held):
            holds = (
                f"it holds the {listing([o.name for o in held])}" if held else "its hand is empty"
            )
            self.found(
                Category.ROBOT_STATE,
                f"The robot cannot slice the {obj.name}: it is not holding a knife ({holds}).",
                obj.id,
                *[o.id for o in held],
            )
        else:
            self.fine("the robot holds a knife")
        if not self.capability(obj, "sliceable"):
            self.found(
                Category.WRONG_PROPERTY,
                f"The {obj.name} cannot be sliced: it is not sliceable.",
                obj.id,
            )
        else:
            self.fine(f"the {obj.name} is sliceable")
            self.ask(f"Is the {obj.name} already sliced?")
            if self.state(obj).get("sliced", False):
                self.found(
                    Category.WRONG_STATE,
                    f"The {obj.name} is already sliced: slicing would change nothing.",
                    obj.id,
                )
            else:
                self.fine(f"the {obj.name} is not sliced yet")
        self.reported_blockers(obj)
        self.within_reach(obj)

    def approach(self) -> None:
        target = self.one("target")
        name = display(target)
        self.ask(f"Is the path to {name if isinstance(target, Human) else 'the ' + name} free?")
        path = self.runner.call("check_free_path", tool_name(target)) or {}
        listed = list(path.get("blockers") or [])
        # The destination is never its own obstacle (a report that files it under itself).
        blockers = [b for b in listed if b != name and self._id_of(b) != target.id]
        if listed and not blockers:
            self.fine(f"the path to {name} is free (the {name} itself is no obstacle)")
            return
        if not path.get("free", not blockers):
            what = listing([article(b) for b in blockers]) if blockers else "an obstacle"
            the = name if isinstance(target, Human) else f"the {name}"
            self.found(
                Category.OBSTRUCTED,
                f"The path to {the} is blocked by {what}: it cannot be approached.",
                target.id,
                *[self._id_of(b) for b in blockers],
            )
        else:
            self.fine(f"the path to {name} is free")

    def _id_of(self, name: str) -> str:
        try:
            return self.scene.resolve(name).id
        except Exception:
            return name

    def handover(self) -> None:
        obj, person = self.one("object"), self.one("person")
        who = display(person)
        self.ask(f"Is the robot holding the {obj.name}?")
        held = self.grounder.held()
        if obj.id not in {o.id for o in held}:
            holds = (
                f"it holds the {listing([o.name for o in held])}" if held else "it holds nothing"
            )
            self.found(
                Category.ROBOT_STATE,
                f"The robot cannot hand over the {obj.name}: it is not holding it ({holds}).",
                obj.id,
            )
        else:
            self.fine(f"the robot holds the {obj.name}")
        self.ask(f"Is {who} looking at the robot?")
        if not self.runner.call("detect_human_gaze", tool_name(person)):
            self.found(
                Category.WRONG_STATE,
                f"{who} is not looking at the robot: the {obj.name} cannot be handed over "
                "until they pay attention.",
                person.id,
            )
        else:
            self.fine(f"{who} is looking at the robot")
        self.ask(f"Are {who}'s hands free?")
        if not self.runner.call("human_hands_free", tool_name(person)):
            self.found(
                Category.WRONG_STATE,
                f"{who}'s hands are not free: they cannot take the {obj.name}.",
                person.id,
            )
        else:
            self.fine(f"{who}'s hands are free")
        self.ask(f"Is {who} within the handover distance ({reach_text(self.handover_distance)})?")
        dist = self._finite_distance(
            self.runner.call("dist_robot_to_human", tool_name(person)), who
        )
        if dist > self.handover_distance:
            self.found(
                Category.OUT_OF_REACH,
                f"{who} is {metres(dist)} away, farther than the handover distance of "
                f"{reach_text(self.handover_distance)}.",
                person.id,
            )
        else:
            self.fine(f"{who} is {metres(dist)} away, close enough for a handover")
