"""The medicine-delivery scenario: the scene, the PDDL names, and the person in the room.

RAIDER's assistive plan (Izquierdo-Badiola et al., section 5.2 and Appendix D): a robot brings
Adriana her medicine. The plan is four actions — approach the counter, pick her medicine,
approach her, hand it over — and five issues arise on the way:

1. a Chair blocks the path to the counter (``blocked``)         -> she moves the chair
2. two medicines stand on the counter (ambiguity)  -> "It's the medicine that is closest to the plant."
3. her medicine is beyond the robot's reach from the counter     -> she brings it closer
4. the robot does not recognise her (``name`` is null)           -> "I'm Adriana"
5. she is not looking at the robot during the handover           -> she looks

The scene is the real AI2-THOR FloorPlan1 kitchen with what the scenario adds (two Medicine
objects, a Chair, a person, named locations, facts about the user); :func:`build_scene`
derives it from the kitchen and ``scene.json`` is its output, shipped with the package.
Positions are chosen so every issue follows from the format doc's rules (``robot.reach``
1.1 m, ``handover_distance`` 0.5 m) and not from special cases.

:data:`VARIANTS` are the demo's ``--scenario`` choices: ``default`` is the run above;
``second-box`` and ``no-medicine`` change the shipped scene in code (:func:`variant_scene`):
Adriana's box is gone from the counter, with a second box on the shelf or none at all, so
that no recovery can bring it back and the robot replans from what it observes
(:func:`pddl_facts`).
"""

from __future__ import annotations

import copy
import json
import math
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bt_raider.errors import SceneFileError
from bt_raider.perception.scene_file import read_scene_json
from bt_raider.robot.human import ConsoleHuman, ScriptedHuman

HERE = Path(__file__).resolve().parent
DOMAIN = HERE / "domain.pddl"
PROBLEM = HERE / "problem.pddl"
SCENE = HERE / "scene.json"

#: The L-shaped counter by the window (FloorPlan1); the plant stands in its corner.
COUNTER = "CounterTop|-01.87|+00.95|-01.21"
PLANT = "HousePlant|-01.95|+00.89|-02.52"
FLOOR = "Floor|+00.00|+00.00|+00.00"
PERSON = "person_1"
USER_NAME = "Adriana"

#: Where the robot stands to work at the medicine counter (in front of the corner, facing it).
COUNTER_SPOT = {"x": -1.05, "y": 0.0, "z": -1.55, "yaw": 225.0}
#: Adriana's medicine, just in front of the plant: 0.21 m from it, 1.18 m from COUNTER_SPOT
#: (beyond the reach of 1.1 m).
ADRIANAS_MEDICINE_AT = (-1.95, 0.97, -2.31)
#: The other medicine: 0.51 m from the plant, 0.94 m from COUNTER_SPOT (within reach).
OTHER_MEDICINE_AT = (-1.45, 0.97, -2.40)
#: Where Adriana puts her medicine when asked to bring it closer: 0.99 m from COUNTER_SPOT and
#: still the medicine closest to the plant (0.35 m against 0.51 m).
CLOSER_AT = (-1.80, 0.97, -2.20)
#: The chair across the way from the robot's start to the counter, and where she puts it.
CHAIR_AT = (-0.55, 0.0, -1.40)
CHAIR_MOVED_TO = (1.15, 0.0, -1.45)
#: Adriana sits by the island, 3.2 m from the counter; she is not looking at the robot.
ADRIANA_AT = {"x": 1.35, "y": 0.0, "z": 0.55}

#: PDDL object -> the name the robot and the checks use in the scene. ``adrianas_medicine``
#: grounds to the type "Medicine", which two objects share: that is issue 2.
BINDINGS: dict[str, str] = {
    "home": "home",
    "medicine_counter": "medicine_counter",
    "adrianas_medicine": "Medicine",
    "adriana": USER_NAME,
}

USER_INFO = [
    "Adriana takes her medicine at 9:00 every morning, with a glass of water.",
    "Adriana walks with a cane and prefers to stay seated at the kitchen island.",
    "Adriana likes to be handed things rather than have them left on the table.",
    "Adriana's daughter visits on Sundays.",
]


def _thor_id(object_type: str, pos: tuple[float, float, float]) -> str:
    """An AI2-THOR style objectId: ``Type|+xx.xx|+yy.yy|+zz.zz``."""
    return object_type + "".join(f"|{v:+06.2f}" for v in pos)


def _box(center: tuple[float, float, float], size: tuple[float, float, float]) -> dict[str, Any]:
    cx, cy, cz = center
    sx, sy, sz = size
    corners = [
        [cx + dx * sx / 2, cy + dy * sy / 2, cz + dz * sz / 2]
        for dx in (1, -1)
        for dy in (1, -1)
        for dz in (1, -1)
    ]
    return {
        "cornerPoints": corners,
        "center": {"x": cx, "y": cy, "z": cz},
        "size": {"x": sx, "y": sy, "z": sz},
    }


def _new_object(
    template: dict[str, Any],
    object_type: str,
    pos: tuple[float, float, float],
    size: tuple[float, float, float],
    parent: str,
    agent: dict[str, float],
    **flags: Any,
) -> dict[str, Any]:
    """An AI2-THOR object dict with every field a real one has, from a real template."""
    obj = copy.deepcopy(template)
    oid = _thor_id(object_type, pos)
    # Floor-standing objects have their pivot at the bottom, small ones at the centre.
    center = (pos[0], pos[1] + size[1] / 2 if parent == FLOOR else pos[1], pos[2])
    box = _box(center, size)
    obj.update(
        {
            "name": f"{object_type}_{zlib.crc32(oid.encode()):08x}",
            "objectId": oid,
            "objectType": object_type,
            "assetId": f"{object_type}_1",
            "position": {"x": pos[0], "y": pos[1], "z": pos[2]},
            "rotation": {"x": 0.0, "y": 0.0, "z": 0.0},
            "visible": True,
            "isInteractable": True,
            "parentReceptacles": [parent],
            "receptacleObjectIds": None,
            "distance": round(math.hypot(pos[0] - agent["x"], pos[2] - agent["z"]), 4),
            "axisAlignedBoundingBox": box,
            "objectOrientedBoundingBox": {"cornerPoints": box["cornerPoints"]},
            "isMoving": False,
        }
    )
    obj.update(flags)
    return obj


def build_scene(kitchen: dict[str, Any]) -> dict[str, Any]:
    """The scenario's scene dict from the real FloorPlan1 kitchen dict (which is not changed).

    The kitchen's 77 objects stay as they are; the scenario adds two Medicine objects on the
    counter by the plant, a Chair in the way, Adriana, named locations and her facts.
    """
    scene = copy.deepcopy(kitchen)
    objects = scene["objects"]
    by_id = {o["objectId"]: o for o in objects}
    for needed in (COUNTER, PLANT, FLOOR):
        if needed not in by_id:
            raise ValueError(f"build_scene needs FloorPlan1: {needed!r} is missing")
    agent = scene["agent"]["position"]
    bottle = next(o for o in objects if o["objectType"] == "Bottle")
    stool = next(o for o in objects if o["objectType"] == "Stool")
    pill: dict[str, Any] = {"breakable": False, "canFillWithLiquid": False, "mass": 0.05}
    pill["salientMaterials"] = ["Plastic"]
    medicines = [
        _new_object(bottle, "Medicine", p, (0.05, 0.09, 0.05), COUNTER, agent, **pill)
        for p in (ADRIANAS_MEDICINE_AT, OTHER_MEDICINE_AT)
    ]
    chair = _new_object(
        stool, "Chair", CHAIR_AT, (0.45, 0.9, 0.5), FLOOR, agent, mass=5.5, receptacleObjectIds=[]
    )
    for new in (*medicines, chair):
        objects.append(new)
        parent = by_id[new["parentReceptacles"][0]]
        parent["receptacleObjectIds"] = [
            *(parent.get("receptacleObjectIds") or []),
            new["objectId"],
        ]
    scene["sceneName"] = "FloorPlan1_medicine_delivery"
    scene["humans"] = [
        {
            "id": PERSON,
            "name": None,
            "position": dict(ADRIANA_AT),
            "looking_at_robot": False,
            "hands_free": True,
        }
    ]
    scene["blocked"] = {"medicine_counter": [chair["objectId"]]}
    scene["locations"] = {
        "home": {"x": agent["x"], "y": 0.0, "z": agent["z"]},
        "medicine_counter": dict(COUNTER_SPOT),
        "user_position": dict(ADRIANA_AT),
    }
    scene["user_info"] = list(USER_INFO)
    return scene


def medicine_ids() -> tuple[str, str]:
    """(Adriana's medicine, the other one) as objectIds."""
    return _thor_id("Medicine", ADRIANAS_MEDICINE_AT), _thor_id("Medicine", OTHER_MEDICINE_AT)


def chair_id() -> str:
    """The objectId of the chair the scenario puts in the robot's path."""
    return _thor_id("Chair", CHAIR_AT)


def load_scene_dict() -> dict[str, Any]:
    """The shipped ``scene.json`` as a dict, read as every scene is (:func:`read_scene_json`).

    Raises:
        SceneFileError: the file is not a regular UTF-8 JSON file within the scene limits.
    """
    data = read_scene_json(SCENE)
    if not isinstance(data, dict):
        raise SceneFileError(f"{SCENE}: a scene is a JSON object, got {type(data).__name__}")
    return data


def write_scene(kitchen_path: str | Path, out: str | Path = SCENE) -> Path:
    """Rebuild ``scene.json`` from a FloorPlan1 kitchen file (maintainers only)."""
    kitchen = read_scene_json(kitchen_path)
    out = Path(out)
    out.write_text(json.dumps(build_scene(kitchen), indent=1) + "\n", encoding="utf-8")
    return out


# ---------------------------------------------------------------------- the scenarios
#: The top shelf by the window (FloorPlan1), where the second box waits in ``second-box``.
SHELF = "Shelf|+01.75|+00.88|-02.56"
#: The second box of Adriana's medicine on that shelf: 0.79 m from SHELF_SPOT (within reach).
SPARE_MEDICINE_AT = (1.60, 0.93, -2.50)
#: Where the robot stands to take things from the shelf (in front of it, facing it).
SHELF_SPOT = {"x": 1.35, "y": 0.0, "z": -1.75, "yaw": 160.0}
#: The places of the PDDL world and the surface things stand on there (home has none).
SURFACES: dict[str, str | None] = {
    "home": None,
    "medicine_counter": COUNTER,
    "medicine_shelf": SHELF,
}
#: Metres from a place's spot within which the robot counts as at that place.
AT_PLACE_M = 0.25
#: The PDDL item and person the facts name, and the robot.
ITEM, PDDL_PERSON, ROBOT = "adrianas_medicine", "adriana", "tiago"

#: What Adriana answers when asked where her medicine is, once her box is finished.
FINISHED = "That box is finished, I'm afraid: there are none left on the counter."


@dataclass(frozen=True)
class Variant:
    """One ``--scenario`` of the demo.

    Attributes:
        name: the option's value.
        summary: one line for ``--help`` and the demos page (``docs/demos.md``).
        boxes: objectIds of Adriana's medicine (any box of it is hers) in this scene.
        box_gone: her box on the counter is gone, and the other medicine was put away.
        spare: a second box of her medicine stands on the shelf.
        topics: more of Adriana's answers (topic -> (pattern, answer)), after :data:`TOPICS`.
        where_checked: each pick is checked where the plan says the item is ("the Medicine on
            the CounterTop"): with boxes in two places, "the medicine" alone names the far one.
        replans: the plan runs under a Replanning decorator that replans what cannot be
            fixed, with a node that says why the delivery failed (the default keeps today's
            tree: the plan alone).
    """

    name: str
    summary: str
    boxes: tuple[str, ...]
    box_gone: bool = False
    spare: bool = False
    topics: dict[str, tuple[str, str]] = field(default_factory=dict)
    where_checked: bool = False
    replans: bool = False


def spare_id() -> str:
    """The objectId of the second box (``second-box``)."""
    return _thor_id("Medicine", SPARE_MEDICINE_AT)


_WHERE = {"where": (r"\bwhere\b", FINISHED)}
VARIANTS: dict[str, Variant] = {
    "default": Variant(
        "default",
        "RAIDER's five issues, each detected, explained and recovered (section 5.2)",
        (_thor_id("Medicine", ADRIANAS_MEDICINE_AT),),
    ),
    "second-box": Variant(
        "second-box",
        "her box on the counter is gone; the robot replans and brings the second box "
        "from the shelf",
        (spare_id(),),
        box_gone=True,
        spare=True,
        topics=_WHERE,
        where_checked=True,
        replans=True,
    ),
    "no-medicine": Variant(
        "no-medicine",
        "her box is gone and there is no other: no plan exists, the robot says why and the "
        "run fails (exit status 1)",
        (),
        box_gone=True,
        topics=_WHERE,
        where_checked=True,
        replans=True,
    ),
}


def variant(name: str) -> Variant:
    """The :class:`Variant` called ``name``.

    Raises:
        ValueError: an unknown name (the message lists the scenarios).
    """
    try:
        return VARIANTS[name]
    except KeyError:
        raise ValueError(
            f"unknown scenario {name!r}: expected one of {', '.join(VARIANTS)}"
        ) from None


def variant_scene(name: str, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scene dict of scenario ``name``: the shipped scene (or ``base``), changed in code.

    ``default`` is the shipped scene as it is. With ``box_gone`` both medicines leave the
    counter (Adriana's box is finished; the other one was put away); with ``spare`` a second
    box of hers stands on the shelf. The shelf is a named place in both (``medicine_shelf``).
    """
    v = variant(name)
    scene = copy.deepcopy(base) if base is not None else load_scene_dict()
    if name == "default":
        return scene
    objects = scene["objects"]
    if v.box_gone:
        gone = set(medicine_ids())
        scene["objects"] = objects = [o for o in objects if o["objectId"] not in gone]
        for o in objects:
            if o.get("receptacleObjectIds"):
                o["receptacleObjectIds"] = [i for i in o["receptacleObjectIds"] if i not in gone]
    if v.spare:
        bottle = next(o for o in objects if o["objectType"] == "Bottle")
        pill: dict[str, Any] = {"breakable": False, "canFillWithLiquid": False, "mass": 0.05}
        pill["salientMaterials"] = ["Plastic"]
        agent = scene["agent"]["position"]
        box = _new_object(
            bottle, "Medicine", SPARE_MEDICINE_AT, (0.05, 0.09, 0.05), SHELF, agent, **pill
        )
        objects.append(box)
        shelf = next(o for o in objects if o["objectId"] == SHELF)
        shelf["receptacleObjectIds"] = [*(shelf.get("receptacleObjectIds") or []), box["objectId"]]
    scene["locations"]["medicine_shelf"] = dict(SHELF_SPOT)
    scene["sceneName"] = f"FloorPlan1_medicine_delivery_{name.replace('-', '_')}"
    return scene


def places(scene: Any) -> dict[str, str]:
    """The PDDL places the scene knows (name -> ``location``), for replanning."""
    return {name: "location" for name in SURFACES if name in scene.locations}


def pddl_facts(scene: Any, boxes: tuple[str, ...]) -> list[str]:
    """The medicine-delivery domain's facts that hold in ``scene`` now (closed world).

    ``(robot_at tiago P)`` when the robot stands within :data:`AT_PLACE_M` of place P's spot;
    ``(hand_free tiago)`` / ``(holding tiago adrianas_medicine)`` from what it holds;
    ``(item_at adrianas_medicine P)`` for each of her ``boxes`` on P's surface;
    ``(near tiago adriana)`` within the handover distance of her; ``(has adriana
    adrianas_medicine)`` when she holds one of her boxes.
    """
    facts = set()
    robot = scene.agent_position
    for place in places(scene):
        if scene.horizontal_distance(robot, scene.locations[place]) <= AT_PLACE_M:
            facts.add(f"(robot_at {ROBOT} {place})")
    held = {o.id for o in scene.holding}
    if not held:
        facts.add(f"(hand_free {ROBOT})")
    if held & set(boxes):
        facts.add(f"(holding {ROBOT} {ITEM})")
    for obj in scene.objects:
        if obj.id not in boxes or obj.id in held:
            continue
        for place, surface in SURFACES.items():
            if surface is not None and surface in (obj.parents or []) and place in scene.locations:
                facts.add(f"(item_at {ITEM} {place})")
    person = scene.human(PERSON)
    if scene.horizontal_distance(robot, person.position) <= float(scene.robot["handover_distance"]):
        facts.add(f"(near {ROBOT} {PDDL_PERSON})")
    if set(person.raw.get("holding") or []) & set(boxes):
        facts.add(f"(has {PDDL_PERSON} {ITEM})")
    return sorted(facts)


def pick_phrase(place: str, scene: Any) -> str | None:
    """What a pick at ``place`` means in the scene: "Medicine on the CounterTop_3"."""
    surface = SURFACES.get(place)
    if surface is None:
        return None
    return f"{BINDINGS[ITEM]} on the {scene.name_of(surface)}"


# ---------------------------------------------------------------------- the person in the room
#: What the robot's words are about: topic -> (pattern searched case-insensitively, what Adriana
#: answers when asked). The first matching topic wins, in this order: "Could you bring the
#: medicine closer?" is about reach even though it names the medicine.
TOPICS: dict[str, tuple[str, str]] = {
    "closer": (
        r"\bcloser\b|\bbring\b|out of (?:my )?reach",
        "Here you are, I've put it closer to you.",
    ),
    "obstruction": (
        r"\bchair\b|out of the way|clear the way|\bblock|\bobstruct",
        "Of course, I'll move the chair.",
    ),
    # Appendix D's words: "It's the medicine that is closest to the plant."
    "which": (r"\bwhich\b|what medicine", "It's the medicine that is closest to the plant."),
    "identity": (r"who are you|recogni[sz]|your name|introduce|identify", "I'm Adriana."),
    "attention": (r"\blook|attention", "Yes, I'm looking at you now."),
}
#: The answer to anything else.
FALLBACK_ANSWER = "Sorry, I'm not sure what you mean."

_NAME = re.compile(r"\b(?:i'?m|i am|my name is|this is|call me)\s+([A-Za-z][\w\-]*)", re.I)


_REFUSAL = re.compile(r"^\W*(?:no\b|nope\b|not now\b|i can'?t\b|i won'?t\b|i will not\b)", re.I)
#: The robot apologising that it cannot go on: news to her, not a request to act on.
_APOLOGY = re.compile(r"^\W*(?:i'?m|i am) sorry\b", re.I)


def refuses(answer: str | None) -> bool:
    """True when an answer turns the robot down ("No.", "I can't right now")."""
    return bool(answer and _REFUSAL.search(answer))


def topic_of(text: str, topics: Mapping[str, tuple[str, str]] = TOPICS) -> str | None:
    """The topic of ``topics`` (:data:`TOPICS`) a question or statement is about, or None."""
    for topic, (pattern, _answer) in topics.items():
        if re.search(pattern, text, re.IGNORECASE):
            return topic
    return None


def name_in(answer: str | None) -> str | None:
    """The name a person gives: "I'm Adriana." / "My name is Adriana" / "Adriana"."""
    if not answer:
        return None
    match = _NAME.search(answer)
    if match:
        return match.group(1).capitalize()
    words = re.findall(r"[A-Za-z][\w\-]*", answer)
    return words[0].capitalize() if len(words) == 1 else None


class Adriana:
    """What Adriana does in a SimWorld when the robot talks to her.

    She does what she is asked: moves the chair out of the way, brings her medicine closer,
    introduces herself (the robot then recognises her by the name she gives), looks at the
    robot. The same reactions serve the scripted person of the demo and a person typing at a
    console (``--interactive``), so the world changes the same way in both.

    Args:
        world: the SimWorld she lives in.
        topics: more answers (topic -> (pattern, answer)), tried after :data:`TOPICS`.
    """

    def __init__(self, world: Any, topics: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.world = world
        self.topics = {**TOPICS, **(topics or {})}
        self.reactions: list[tuple[str, str]] = []  # (topic, what she did)

    def react(self, text: str, answer: str | None = None) -> str | None:
        """Act on the robot's question or statement ``text`` (and her ``answer``); the topic."""
        topic = topic_of(text, self.topics)
        if refuses(answer) or (answer is None and _APOLOGY.search(text)):
            return topic  # she heard the robot but does nothing
        w = self.world
        adrianas, _other = medicine_ids()
        did = None
        if topic == "obstruction" and w.scene.blocked.get("medicine_counter"):
            w.unblock("medicine_counter")
            w.move_object(chair_id(), CHAIR_MOVED_TO)
            did = "moved the chair out of the way"
        elif (
            topic == "closer"
            and w.scene.has(adrianas)
            and not any(o.id == adrianas for o in w.scene.holding)
        ):
            w.move_object(adrianas, CLOSER_AT)
            did = "put her medicine closer to the robot"
        elif topic == "identity":
            name = name_in(answer) if answer is not None else USER_NAME
            if name:
                w.set_human(PERSON, name=name)
                did = f"introduced herself as {name}"
        elif topic == "attention" and not w.scene.human(PERSON).looking_at_robot:
            w.set_human(PERSON, looking_at_robot=True)
            did = "looks at the robot"
        if did is not None and topic is not None:  # she did something only on a topic
            self.reactions.append((topic, did))
        return topic

    def wait(self, event: str) -> bool:
        """``wait_for(event)``: she does what the event asks for; it then happened."""
        self.react(event)
        return True

    def scripted(self) -> Any:
        """A :class:`bt_raider.robot.human.ScriptedHuman` answering as in RAIDER's Appendix D."""
        answers = {pattern: answer for pattern, answer in self.topics.values()}
        answers[r"."] = FALLBACK_ANSWER
        return ScriptedHuman(
            answers,
            on_answer=lambda question, answer: self.react(question, answer),
            on_say=self.react,
            on_wait=self.wait,
        )

    def console(self, stdin: Any = None, stdout: Any = None) -> Any:
        """A console person (answers typed by a user) whose words act in the world as hers."""
        person = self

        class ConsoleAdriana(ConsoleHuman):
            def ask(self, question: str) -> str:
                answer = super().ask(question)
                person.react(question, answer)
                return answer

            def say(self, text: str) -> None:
                super().say(text)
                person.react(text)

            def wait_for(self, event: str) -> bool:
                ok = super().wait_for(event)
                person.react(event)
                return ok

        return ConsoleAdriana(stdin, stdout)
