"""The explorer's worlds: a generated case, the scene it builds, the truth it knows, the robot.

A :class:`Case` is plain data (a frozen dataclass, so its ``repr`` is a line of Python a test
can paste): which room, which objects of which kind (colour, clean or dirty, left, right or in
front of the robot, in or beyond reach), which one the person means, how the instruction is
phrased, who answers, what goes wrong during the run, how the user's tree is shaped and which
action names the user's robot has. :func:`build_world` turns a case into an AI2-THOR scene plus
the :class:`Truth` the oracle judges by, without asking the checker anything.

The :class:`UserRobot` is the user's robot as a user writes it: its own action names (``GoTo``,
``Grab``, ``Put``), its own ``executed`` list of tuples, a simulated world underneath.
:class:`RecordingRobot` is the recording proxy around any user's robot: every call reaches the
oracle first, then the disturbance, then the robot.
"""

from __future__ import annotations

import copy
import json
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bt_raider.errors import ActionFailed, UsageError
from bt_raider.files import MAX_SCENE_BYTES, read_json
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.testing.explore_judge import Designation, designate
from bt_raider.testing.explore_lang import BOWL_COLOURS, Say, render
from bt_raider.testing.explore_stage import (
    DECOY_KIND,
    DECOYS,
    HANDING,
    HOSTILE,
    NAMES,
    PLANNERS,
    SPEAKERS,
    USER,
    _frame,
    _landmarks,
    _object,
    _person,
    _speaker,
    two_cups,
)

#: Colours the generator paints objects with.
COLOURS = ("red", "blue", "green", "yellow", "white", "black", "gold", "grey", "light blue")
#: Kinds of object the person's target can be (all pickupable, no two alike).
KINDS = ("Cup", "Box", "Apple", "Mug")
#: Where an object stands, seen from the robot.
SIDES = ("left", "right", "front")
#: Instruction forms the generator writes (the checker accepts each of them).
FORMS = (
    "structured",
    "natural",
    "verbless",
    "pddl",
    "colour",
    "side",
    "state",
    "compound",
    "me",
    "goto",
    "approach",
    "goto_place",
    "approach_place",
    "appliance",
    "said",
    "wrong_node",
)
#: The user's robot vocabularies: RAIDER's verbs, the user's own names, the user's names
#: without ``Open``/``Close`` (a robot that cannot open anything).
WORDS: dict[str, dict[str, str]] = {
    "raider": {
        v: v for v in ("move_to", "pick", "place", "open", "close", "turnon", "turnoff", "handover")
    },
    "user": {
        "move_to": "GoTo",
        "pick": "Grab",
        "place": "Put",
        "open": "Open",
        "close": "Close",
        "turnon": "SwitchOn",
        "turnoff": "SwitchOff",
        "handover": "Give",
    },
    "user-small": {"move_to": "GoTo", "pick": "Grab", "place": "Put", "handover": "Give"},
}
#: Disturbances during a run, applied just before the robot's ``when``-th action starts.
DISTURBANCES = (
    "none",
    "moved",
    "removed",
    "blocker",
    "closed",
    "left",
    "fails",
    "hangs",
    "nan",
)
#: Tree shapes: one guard; two guards in a sequence; two guards in a parallel.
TREES = ("single", "sequence", "parallel")
#: A language model under each guard's checker: ``absent`` (the symbolic reasoner alone), or a
#: scripted model under :class:`~bt_raider.checking.hybrid.HybridChecker` that always clears
#: the action, always finds an issue, writes a made-up tool result, or writes only prose.
MODELS = ("absent", "clears", "alarms", "made_up", "prose")
#: Polls a hanging action stays RUNNING before it fails.
HANG_POLLS = 40
#: objectId of the chair the generator puts in the way.
CHAIR = "Chair|explore|block"
#: objectId of the stool a ``blocker`` disturbance puts in the way.
STOOL = "Stool|explore|late"
#: The dish destination of compound instructions.
BOWL = "Bowl|explore|dest"
#: The second bowl of an instruction that says which bowl ("... in the bowl, not the red one").
BOWL_TWO = "Bowl|explore|two"


@dataclass(frozen=True)
class Thing:
    """One generated object of the case's kind.

    Attributes:
        colour: its ``color`` key.
        dirty: ``isDirty`` (it is ``dirtyable``).
        side: ``left``, ``right`` or ``front``, from the robot's view.
        far: beyond the robot's reach (by 0.3 to 0.5 m), else within it.
        at: a landmark kind of :data:`~bt_raider.testing.explore_lang.LANDMARKS` it is in,
            on or next to ("" : none).
        size: the edge of its ``axisAlignedBoundingBox`` (m, a cube); 0: the scene does not
            give its size.
    """

    colour: str = "red"
    dirty: bool = False
    side: str = "front"
    far: bool = False
    at: str = ""
    size: float = 0.0


@dataclass(frozen=True)
class Case:
    """One episode, as data: everything the run does follows from it.

    Attributes:
        room: a room name of the exploration's ``rooms``.
        kind: the objectType of the generated objects.
        things: the generated objects of ``kind`` (the room's own are removed).
        target: the index in ``things`` of the one the person means.
        form: how the instruction is phrased (:data:`FORMS`).
        person: the person's strategy (:data:`bt_raider.testing.explore_people.PEOPLE`).
        tree: the user's tree shape (:data:`TREES`); ``sequence`` and ``parallel`` add a
            second guard over two objects of a second kind, ``other``.
        other: the index the person means among the second kind's two objects.
        words: the user's robot vocabulary (a key of :data:`WORDS`).
        blocked: a chair blocks the route to the target (the scene's ``blocked``).
        disturbance: what goes wrong during the run (:data:`DISTURBANCES`).
        when: before which robot action (1 = the first) the disturbance happens.
        planner: ``symbolic`` (bt_raider's) or ``scripted`` (an LLM-style plan that asks into
            ``choice``, says something, then acts: what a model writes), or a hostile plan
            (:data:`~bt_raider.testing.explore_stage.PLANNERS`).
        running: for the ``appliance`` form: the microwave is on (``isToggled``).
        hidden: the target's kind is not in the scene at all: the robot must ask where it is
            (the person names the room's place for it, when the room has named places).
        model: the language model in the guards' checker (:data:`MODELS`; the default tree's).
        said: the instruction as a program (form ``said``).
        answer: what the ``says`` person answers, as a program (a reply).
        speaker: where the person stands and whether her heading is given
            (:data:`~bt_raider.testing.explore_stage.SPEAKERS`).
        names: the guards' display names in a two-guard tree
            (:data:`~bt_raider.testing.explore_stage.NAMES`).
    """

    room: str = "kitchen"
    kind: str = "Cup"
    things: tuple[Thing, ...] = (Thing("red", False, "left"), Thing("blue", True, "right"))
    target: int = 0
    form: str = "natural"
    person: str = "cooperative"
    tree: str = "single"
    other: int = 0
    words: str = "user"
    blocked: bool = False
    disturbance: str = "none"
    when: int = 1
    planner: str = "symbolic"
    running: bool = False
    hidden: bool = False
    model: str = "absent"
    said: Say | None = None
    answer: Say | None = None
    speaker: str = "none"
    names: str = "distinct"

    def __post_init__(self) -> None:
        if not self.things or not 0 <= self.target < len(self.things):
            raise UsageError(f"target {self.target} is not an index of {len(self.things)} things")
        for name, value, options in (
            ("kind", self.kind, KINDS),
            ("form", self.form, FORMS),
            ("tree", self.tree, TREES),
            ("words", self.words, tuple(WORDS)),
            ("disturbance", self.disturbance, DISTURBANCES),
            ("planner", self.planner, PLANNERS),
            ("speaker", self.speaker, SPEAKERS),
            ("names", self.names, NAMES),
            ("model", self.model, MODELS),
        ):
            if value not in options:
                raise UsageError(f"{name} {value!r}: expected one of {', '.join(options)}")


@dataclass
class Group:
    """The objects one guard's instruction is about, and which of them the truth designates.

    Attributes:
        kind: their objectType.
        ids: their objectIds, in the case's order.
        things: their generated attributes, in the same order.
        target: the objectId the person means.
        by_instruction: the objectId the instruction alone designates (one match), else None.
        query: the guard's instruction.
        action: the RAIDER verb of the guard's child (``pick``, ``approach``, ...).
        place: the named place the instruction goes to (``goto_place`` forms), else None.
        said: the instruction's program (form ``said``), else None.
        designation: what the instruction designates, by the oracle's own reading.
        into: what the instruction's destination designates among the bowls ("put it in the
            bowl, not the red one"), by the oracle's own reading; None: no such step.
        asks: the verb the words ask for when the child does another (``wrong_node``).
    """

    kind: str
    ids: list[str]
    things: list[Thing]
    target: str
    by_instruction: str | None
    query: str
    action: str
    place: str | None = None
    said: Say | None = None
    designation: Designation | None = None
    into: Designation | None = None
    asks: str | None = None

    @property
    def allowed(self) -> frozenset[str] | None:
        """The objects the instruction alone lets the robot act on (None: it must ask)."""
        if self.designation is not None:
            return self.designation.allowed
        return None if self.by_instruction is None else frozenset({self.by_instruction})


@dataclass
class Truth:
    """What the generator knows, independent of the checker.

    Attributes:
        groups: per guard, its :class:`Group` (the first guard's is ``groups[0]``).
        words: the user's robot vocabulary, RAIDER verb -> the robot's name.
        labels: internal labels a person cannot use (display names with ``_``, objectIds).
        names: objectId -> its display name (what a robot's question may call it).
        plain: True when the instruction alone designates an object that needs nothing done
            first, and nothing goes wrong: the run needs no question.
        needs_free_route: location -> True for places the scene marks blocked.
        place: the room's named place a person says things are at (a blocked one first).
        speaker: the id of the person who speaks, when the scene has one.
        plain_kinds: kinds whose instruction (a program) designates exactly one object that
            needs nothing done first: a question naming the kind is needless (P9).
    """

    groups: list[Group]
    words: dict[str, str]
    labels: set[str] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)
    plain: bool = False
    needs_free_route: dict[str, bool] = field(default_factory=dict)
    place: str | None = None
    speaker: str | None = None
    plain_kinds: set[str] = field(default_factory=set)


def load_room(room: Any) -> dict[str, Any]:
    """A room as an AI2-THOR dict: a path, a dict, or anything with ``to_dict()``."""
    if isinstance(room, (str, Path)):
        # Through bt_raider.files: a FIFO or /dev/zero is refused at once, never read for ever.
        data = read_json(room, what="room", max_bytes=MAX_SCENE_BYTES, finite=False)
    elif isinstance(room, Mapping):
        data = copy.deepcopy(dict(room))
    elif callable(getattr(room, "to_dict", None)):
        data = room.to_dict()
    else:
        raise UsageError(f"a room must be a path, a dict or a Scene, got {type(room).__name__}")
    if not isinstance(data, dict) or not isinstance(data.get("objects"), list):
        raise UsageError("a room must be AI2-THOR metadata with an 'objects' list")
    return data


def _agent(data: dict[str, Any]) -> tuple[float, float, float, float]:
    agent = data.get("agent") or {}
    pos = agent.get("position") or {"x": 0.0, "y": 0.9, "z": 0.0}
    yaw = float((agent.get("rotation") or {}).get("y", 0.0))
    return float(pos["x"]), float(pos.get("y", 0.9)), float(pos["z"]), yaw


def _drop(data: dict[str, Any], kinds: set[str]) -> None:
    """Remove the room's own objects of ``kinds`` and every reference to them."""
    gone = {o["objectId"] for o in data["objects"] if o.get("objectType") in kinds}
    data["objects"] = [o for o in data["objects"] if o["objectId"] not in gone]
    for o in data["objects"]:
        for key in ("receptacleObjectIds", "parentReceptacles"):
            if isinstance(o.get(key), list):
                o[key] = [i for i in o[key] if i not in gone]
    blocked = data.get("blocked")
    if isinstance(blocked, dict):
        data["blocked"] = {
            k: [i for i in v if i not in gone] for k, v in blocked.items() if k not in gone
        }
    inventory = data.get("inventoryObjects")
    if isinstance(inventory, list):
        data["inventoryObjects"] = [i for i in inventory if i.get("objectId") not in gone]


def _designates(form: str, things: tuple[Thing, ...], target: int) -> bool:
    """Whether the instruction's own words pick out the target among ``things``."""
    if len(things) == 1:
        return True
    mine = things[target]
    others = [t for i, t in enumerate(things) if i != target]
    if form == "colour":
        return all(t.colour != mine.colour for t in others)
    if form == "side":
        return all(t.side != mine.side for t in others)
    if form == "state":
        return all(t.dirty != mine.dirty for t in others)
    return False


def phrase(form: str, kind: str, thing: Thing, words: dict[str, str]) -> tuple[str, str]:
    """The instruction of ``form`` about an object of ``kind``, and the RAIDER verb it asks."""
    noun = kind.lower()
    side = {"left": "on the left", "right": "on the right", "front": "in front of you"}
    forms = {
        "structured": (f"pick({kind})", "pick"),
        "natural": (f"please pick up the {noun}", "pick"),
        "verbless": (f"The {noun}, please.", "handover"),  # the person wants it
        "pddl": (f"(pick robot_1 {noun})", "pick"),
        "colour": (f"pick the {thing.colour} {noun}", "pick"),
        "side": (f"pick the {noun} {side[thing.side]}", "pick"),
        "state": (f"pick the {'dirty' if thing.dirty else 'clean'} {noun}", "pick"),
        "compound": (f"pick the {noun} and put it in the bowl", "pick"),
        "me": (f"bring me the {noun}", "handover"),
        "goto": (f"go to the {noun}", "approach"),
        "approach": (f"approach({kind})", "approach"),
    }
    return forms[form]


def build_world(case: Case, room: dict[str, Any]) -> tuple[dict[str, Any], Truth]:
    """The scene a case makes from ``room`` (a copy), and the truth the oracle judges by."""
    data = _copy(room)
    second = next(k for k in KINDS if k != case.kind)
    two = case.tree != "single"
    marks = {t.at for t in case.things if t.at}
    hostile = case.planner in HOSTILE
    _drop(
        data,
        ({case.kind, second} if two else {case.kind})
        | marks
        | ({DECOY_KIND} if hostile else set())
        | ({"Bowl"} if case.form == "said" and case.said and case.said.into else set()),
    )
    ax, ay, az, yaw = _agent(data)
    (hx, hz), (rx, rz) = _frame(yaw)
    robot = data.setdefault("robot", {})
    reach = float(robot.get("reach", 1.1))
    if two:
        robot["arms"] = max(2, int(robot.get("arms", 1)))  # both guards may hold at once
    words = WORDS[case.words]
    groups: list[Group] = []

    def place(thing: Thing, i: int, lane: float) -> tuple[float, float]:
        ahead = (reach + 0.3 + 0.1 * i) if thing.far else (0.45 + 0.08 * i)
        offset = {"left": -0.35, "right": 0.35, "front": 0.0}[thing.side] * (1 + 0.2 * i)
        return ax + hx * ahead + rx * (offset + lane), az + hz * ahead + rz * (offset + lane)

    def add_group(
        kind: str, things: tuple[Thing, ...], target: int, lane: float, form: str
    ) -> None:
        ids = [f"{kind}|explore|{i}" for i in range(len(things))]
        made = []
        for i, (object_id, thing) in enumerate(zip(ids, things, strict=True)):
            x, z = place(thing, i, lane)
            made.append(
                _object(
                    object_id,
                    kind,
                    x,
                    ay,
                    z,
                    pickupable=True,
                    dirtyable=True,
                    isDirty=thing.dirty,
                    color=thing.colour,
                )
            )
            if thing.size > 0:
                edge = {"x": thing.size, "y": thing.size, "z": thing.size}
                centre = dict(made[-1]["position"])
                made[-1]["axisAlignedBoundingBox"] = {"center": centre, "size": edge}
        if not (case.hidden and not groups):  # hidden: somewhere else, not in what it sees
            data["objects"].extend(made)
        else:
            shadow.extend(made)
        if form == "said" and case.said is not None:
            query, action = render(case.said, kind.lower()), "pick"
        else:
            query, action = phrase(form, kind, things[target], words)
        sole = ids[target] if _designates(form, things, target) else None
        groups.append(Group(kind, ids, list(things), ids[target], sole, query, action))

    shadow: list[dict[str, Any]] = []

    form = case.form if case.form in FORMS[:11] else "goto" if "place" in case.form else "natural"
    if case.form == "said":
        form = "said" if case.said is not None else "natural"
    add_group(case.kind, case.things, case.target, 0.0, form)
    mine = [o for o in data["objects"] + shadow if o["objectType"] == case.kind]
    _landmarks(data, case.kind, case.things, ay, mine, (hx, hz))
    speaker = _speaker(data, case.speaker, case.form, (ax, az, yaw))
    if two:
        pair = (Thing("green", False, "left"), Thing("yellow", True, "right"))
        add_group(second, pair, case.other, 0.12, "natural")
    truth = Truth(groups, dict(words))
    truth.place = _place_to_go(data)
    truth.speaker = speaker
    first = groups[0]
    if hostile:
        for n, decoy in enumerate(DECOYS):
            dx, dz = place(Thing(side="left"), n, -0.25)
            data["objects"].append(
                _object(decoy, DECOY_KIND, dx, ay, dz, pickupable=True, color="grey")
            )
    into = case.said.into if case.form == "said" and case.said is not None else None
    if case.form in ("compound", "appliance") or (case.names != "distinct" and two) or into:
        bx, bz = place(Thing(side="front"), 0, -0.6)
        white, red = BOWL_COLOURS
        data["objects"].append(_object(BOWL, "Bowl", bx, ay, bz, receptacle=True, color=white))
        if into is not None:
            bx, bz = place(Thing(side="front"), 0, -1.0)
            data["objects"].append(
                _object(BOWL_TWO, "Bowl", bx, ay, bz, receptacle=True, color=red)
            )
    if case.form in HANDING:
        data["humans"] = [_person(*place(Thing(side="front"), 0, 0.0), case.speaker, yaw)]
    if case.form in ("goto_place", "approach_place"):
        where = _place_to_go(data)
        if where is not None:
            words_ = where.replace("_", " ")
            first.query = (
                f"go to the {words_}" if case.form == "goto_place" else f"approach({where})"
            )
            first.action, first.by_instruction = "approach", None
            first.place = where
    if case.form == "wrong_node":  # the words of "verbless" over the node of "natural"
        first.query, first.asks = f"The {case.kind.lower()}, please.", "handover"
    if case.form == "appliance":
        _appliance(data, case, place(Thing(side="front"), 0, 0.6), ay)
        first.query, first.action = "open the microwave", "open"
        first.by_instruction = None
    if case.blocked:
        cx, cz = place(Thing(side="front"), 0, 0.2)
        data["objects"].append(_object(CHAIR, "Chair", cx, 0.0, cz, moveable=True))
        data.setdefault("blocked", {})[first.target] = [CHAIR]
    if case.disturbance == "blocker":
        sx, sz = place(Thing(side="front"), 0, -0.3)
        data["objects"].append(_object(STOOL, "Stool", sx, 0.0, sz, moveable=True))
    for name in data.get("locations") or {}:
        truth.needs_free_route[name] = bool((data.get("blocked") or {}).get(name))
    truth.labels, truth.names = _labels(data)
    if first.said is None and form == "said" and case.said is not None:
        first.said = case.said
        seen = {**{o["objectId"]: o for o in shadow}, **{o["objectId"]: o for o in data["objects"]}}
        judged = designate(
            case.said, case.kind, {**data, "objects": list(seen.values())}, speaker=speaker
        )
        first.designation = judged
        first.by_instruction = next(iter(judged.sure)) if judged.mode == "one" else None
        if case.said.into is not None:
            first.into = designate(case.said.into, "Bowl", data, speaker=speaker)
    sole = first.by_instruction
    target = case.things[first.ids.index(sole)] if sole in first.ids else None
    truth.plain = (
        case.tree == "single"
        and case.form in ("colour", "side", "state", "structured", "natural", "pddl", "said")
        and target is not None
        and not target.far
        and not case.blocked
        and not case.hidden
        and case.disturbance == "none"
        and (first.into is None or first.into.mode == "one")
    )
    quiet = case.disturbance == "none" and not (case.blocked or case.hidden)
    if case.form == "said" and target is not None and not target.far and quiet:
        # In any tree a question about it is needless (unless the bowl is left open).
        if first.into is None or first.into.mode == "one":
            truth.plain_kinds.add(case.kind)
    return data, truth


def _place_to_go(data: dict[str, Any]) -> str | None:
    """The room's named place to go to: a blocked one first (the harder case), else any."""
    places = sorted(data.get("locations") or {})
    blocked = data.get("blocked") or {}
    for name in places:
        if blocked.get(name):
            return name
    return places[0] if places else None


def _appliance(data: dict[str, Any], case: Case, at: tuple[float, float], y: float) -> None:
    """A microwave within reach, closed, on when the case says so (the room's own removed)."""
    _drop(data, {"Microwave"})
    data["objects"].append(
        _object(
            "Microwave|explore|0",
            "Microwave",
            at[0],
            y,
            at[1],
            openable=True,
            isOpen=False,
            toggleable=True,
            isToggled=case.running,
            receptacle=True,
        )
    )


def _copy(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of JSON-like scene data (a JSON round trip: several times deepcopy's speed)."""
    try:
        copied: dict[str, Any] = json.loads(json.dumps(data))
    except (TypeError, ValueError):  # numbers JSON cannot hold, tuples kept as such
        return copy.deepcopy(data)
    return copied


def _labels(data: dict[str, Any]) -> tuple[set[str], dict[str, str]]:
    """Names a person cannot use (objectIds, display names and places with ``_``), and each
    objectId's display name."""
    from bt_raider.perception.scene import Scene

    # A Scene adds a default agent to a scene without one: only then is a copy needed.
    scene = Scene(data if "agent" in data else _copy(data))
    names = {o.id: o.name for o in scene.objects}
    labels = set(names)
    labels |= {n for n in names.values() if "_" in n}
    labels |= {n for n in (data.get("locations") or {}) if "_" in n}
    return labels, names


@dataclass
class Call:
    """One call the user's tree made on the robot.

    Attributes:
        action: the robot's own action name.
        args: the arguments as given.
        tag: the kind the calling user node works on (None: a recovery subtree's call).
        scene: what the robot observed just before the call (a dict).
        index: 1 for the first call.
    """

    action: str
    args: tuple[Any, ...]
    tag: str | None
    scene: dict[str, Any]
    index: int


def scene_dict(observed: Any) -> dict[str, Any]:
    """A scene as a dict (a copy): a :class:`~bt_raider.perception.scene.Scene` or a dict."""
    if callable(getattr(observed, "to_dict", None)):
        data: dict[str, Any] = observed.to_dict()
        return data
    return copy.deepcopy(dict(observed))


class UserRobot:
    """A robot as a user writes one: its own action names over a simulated world.

    Args:
        world: a :class:`~bt_raider.simulation.simworld.SimWorld` (``execute(verb, args)``,
            ``scene``); disturbances edit it.
        words: RAIDER verb -> the robot's name for it.

    Attributes:
        executed: ``(action, args)`` tuples, as a user's robot keeps them.
    """

    def __init__(self, world: Any, words: Mapping[str, str]) -> None:
        self.world = world
        self.verbs = {name: verb for verb, name in words.items()}
        self.executed: list[tuple[str, tuple[Any, ...]]] = []
        self._handles: dict[int, list[Any]] = {}
        self._next = 0

    def start(self, action: str, args: Any) -> int:
        """Start ``action(*args)``; raises ActionFailed for a name the robot does not have."""
        verb = self.verbs.get(action)
        if verb is None:
            raise ActionFailed(
                f"unknown action {action!r}: expected one of {', '.join(sorted(self.verbs))}"
            )
        self._next += 1
        try:
            self.world.execute(verb, [str(a) for a in args])
        except ActionFailed as exc:
            self._handles[self._next] = ["failed", str(exc)]
            return self._next
        self.executed.append((action, tuple(args)))
        self._handles[self._next] = ["moving", 1]
        return self._next

    def poll(self, handle: int) -> Progress:
        """RUNNING once, then SUCCEEDED; FAILED with the world's reason."""
        state = self._handles.get(handle)
        if state is None:
            return Progress(ActionState.FAILED, f"no action {handle}")
        if state[0] == "failed":
            return Progress(ActionState.FAILED, state[1])
        state[1] -= 1
        if state[1] >= 0:
            return Progress(ActionState.RUNNING, "moving")
        return Progress(ActionState.SUCCEEDED, "done")

    def cancel(self, handle: int) -> None:
        """Stop an action (nothing to undo in the simulation)."""
        self._handles.pop(handle, None)

    def observe(self) -> Any:
        """The world's scene."""
        return self.world.scene


class RecordingRobot:
    """A recording proxy around the user's robot: every call reaches the oracle first.

    It also plays the robot-side disturbances: the next action fails, or hangs for
    :data:`HANG_POLLS` polls and then fails; perception reports NaN for the generated objects.

    Args:
        robot: the user's robot (``start``, ``poll``, ``cancel``, ``observe``).
        on_call: called with every :class:`Call` before the robot sees it.
        disturb: called with the call's index before the call runs.

    Attributes:
        calls: every :class:`Call`, in order.
    """

    def __init__(
        self,
        robot: Any,
        on_call: Callable[[Call], None] | None = None,
        disturb: Callable[[int], None] | None = None,
    ) -> None:
        self.robot = robot
        self.on_call = on_call
        self.disturb = disturb
        self.calls: list[Call] = []
        self.fail_next = False
        self.hang_next = False
        self.nan = False
        self._lock = threading.Lock()
        self._fake: dict[Any, list[Any]] = {}

    @property
    def executed(self) -> Any:
        """The user's robot's own record of what it did."""
        return getattr(self.robot, "executed", None)

    @property
    def world(self) -> Any:
        """The user's robot's world, when it has one."""
        return getattr(self.robot, "world", None)

    def view(self, tag: str) -> TaggedRobot:
        """The robot as a user node working on ``tag`` calls it (calls say who made them)."""
        return TaggedRobot(self, tag)

    def start(self, action: str, args: Any, tag: str | None = None) -> Any:
        """Record the call, let the oracle see it, play a disturbance, then start it."""
        with self._lock:
            call = Call(str(action), tuple(args), tag, self.snapshot(), len(self.calls) + 1)
            self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)
        if self.disturb is not None:
            self.disturb(call.index)
        if self.hang_next or self.fail_next:
            kind = "hang" if self.hang_next else "fail"
            self.hang_next = self.fail_next = False
            handle = ("disturbed", call.index)
            self._fake[handle] = [kind, HANG_POLLS]
            return handle
        return self.robot.start(action, list(args))

    def poll(self, handle: Any) -> Progress:
        """The user's robot's progress, or the disturbed action's."""
        fake = self._fake.get(handle)
        if fake is None:
            progress: Progress = self.robot.poll(handle)
            return progress
        if fake[0] == "hang" and fake[1] > 0:
            fake[1] -= 1
            return Progress(ActionState.RUNNING, "still moving")
        return Progress(ActionState.FAILED, "the action did not finish: the arm stalled")

    def cancel(self, handle: Any) -> None:
        """Cancel on the user's robot (a disturbed action just stops)."""
        if self._fake.pop(handle, None) is None:
            self.robot.cancel(handle)

    def snapshot(self) -> dict[str, Any]:
        """What the user's robot observes now, as a dict."""
        return scene_dict(self.robot.observe())

    def observe(self) -> dict[str, Any]:
        """What perception reports; after a ``nan`` disturbance, NaN in generated objects."""
        data = self.snapshot()
        if self.nan:
            for obj in data["objects"]:
                if "|explore|" in obj["objectId"]:
                    obj["position"]["x"] = math.nan
        return data


class TaggedRobot:
    """The robot seen from one user node: its calls carry the node's kind."""

    def __init__(self, robot: RecordingRobot, tag: str) -> None:
        self.robot, self.tag = robot, tag

    def start(self, action: str, args: Any) -> Any:
        """Start, tagged with the node's kind."""
        return self.robot.start(action, args, tag=self.tag)

    def poll(self, handle: Any) -> Progress:
        """Poll on the proxy."""
        return self.robot.poll(handle)

    def cancel(self, handle: Any) -> None:
        """Cancel on the proxy."""
        self.robot.cancel(handle)

    def observe(self) -> dict[str, Any]:
        """Observe through the proxy."""
        return self.robot.observe()


__all__ = [
    "BOWL",
    "BOWL_TWO",
    "CHAIR",
    "DECOYS",
    "DECOY_KIND",
    "HOSTILE",
    "NAMES",
    "PLANNERS",
    "SPEAKERS",
    "USER",
    "COLOURS",
    "DISTURBANCES",
    "FORMS",
    "KINDS",
    "SIDES",
    "STOOL",
    "TREES",
    "WORDS",
    "Call",
    "Case",
    "RecordingRobot",
    "TaggedRobot",
    "UserRobot",
    "Group",
    "Thing",
    "Truth",
    "build_world",
    "load_room",
    "phrase",
    "scene_dict",
    "two_cups",
]
