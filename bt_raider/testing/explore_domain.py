"""The explorer in the user's world: their actions, words, people, policy and rooms (issue 34).

:func:`explore_domain` generates episodes from what the user declares, not from cups and boxes:
a room of theirs (a scene file), their action names (the contract), their words (a lexicon's
synonyms), their people and roles (the policy's roster), and judges each episode against the
user's contract. The episode's world varies what a newcomer met:

- the person an instruction designates by name is in sight, or absent with a **stranger**
  there who answers "who are you?" with her own name (recognised or not);
- the people in sight are residents or staff;
- a closed door stands on the way to a place; an item is within reach or far.

The user's own tree runs each episode (``tree_factory(spec)``, default: one plain py_trees node
of the user's action under a guard), on the user's robot (``robot_factory(scene)``), with the
checker and recovery the user builds (``guard_factory``). The oracle is this module's own
reading of the episode (:func:`judge`): it shares no code with the reader or the recovery
planner. Its properties:

======  ==================================================================================
D1      a person designated by name is never substituted: no call hands to, or goes to,
        anyone else
D2      a resident is never sent on an errand (fetch, move, open), and nobody is asked to
        do what the robot's own actions do (a closed door on the way, an item out of reach)
D3      every robot call and every recovery step uses the user's action names
D4      the run ends (SUCCESS or FAILURE) with a reason, never hangs
======  ==================================================================================

A finding names its property and the step (the robot call or the question) that broke it; its
test text names the room by a path relative to the user's project.
"""

from __future__ import annotations

import copy
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import py_trees

from bt_raider.files import read_json
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.robot.human import ScriptedHuman

Status = py_trees.common.Status

#: The properties judged, and what each says.
PROPERTIES = {
    "D1": "a person designated by name is never substituted",
    "D2": "no resident is sent on an errand, nobody is asked what the robot can do itself",
    "D3": "every robot call uses the user's action names",
    "D4": "the run ends with a reason",
}
#: Words of a question that sends a person on an errand (the oracle's own reading).
ERRAND_WORDS = ("bring", "move", "open", "closer", "out of the way", "fetch", "clear")
#: The stranger's name: never anyone the instruction designates.
STRANGER = "Zoe"


@dataclass(frozen=True)
class Episode:
    """One generated situation, in the user's terms (all the oracle needs to judge it)."""

    form: str  # handover | goto_person | goto_place | fetch
    designated: str  # the person's name, the place, or the item's word
    present: bool  # the designated person is in sight
    stranger: str  # none | recognised | unrecognised
    role: str  # resident | staff: the role of the people in sight
    door_closed: bool
    far: bool
    seed: int

    def query(self, contract: Mapping[str, str]) -> str:
        """The instruction, in the user's action names."""
        if self.form == "handover":
            return f"{contract['handover']}({self.item_id}, {self.designated})"
        if self.form == "fetch":
            return f"{contract['pick']}({self.designated})"
        return f"{contract['approach']}({self.designated})"

    @property
    def item_id(self) -> str:
        return "Item|explore"


@dataclass
class Outcome:
    """What happened: the robot's calls, the dialogue, the status, the violations."""

    episode: Episode
    calls: list[tuple[str, list[str]]]
    dialogue: list[tuple[str, str, str | None]]
    status: Status
    reason: str
    violations: dict[str, str] = field(default_factory=dict)


class _Robot:
    """A robot for the episode: finishes each call at once and applies its effect."""

    def __init__(self, scene: dict[str, Any], names: Mapping[str, str]) -> None:
        self.scene = scene
        self.names = names
        self.log: list[tuple[str, list[str]]] = []

    def start(self, action: str, args: Sequence[Any]) -> int:
        args = [str(a) for a in args]
        self.log.append((action, args))
        objects = {o["objectId"]: o for o in self.scene["objects"]}
        if action == self.names["approach"]:
            where = (self.scene.get("locations") or {}).get(args[0])
            where = where or (objects.get(args[0]) or {}).get("position")
            for h in self.scene.get("humans") or []:
                if args[0] in (h["id"], h.get("name")):
                    where = h["position"]
            if where is not None:
                self.scene["agent"]["position"] = {"x": where["x"], "y": 0.9, "z": where["z"] - 0.3}
        elif action == self.names["open"] and args[0] in objects:
            objects[args[0]]["isOpen"] = True
        elif action == self.names["pick"] and args[0] in objects:
            self.scene["inventoryObjects"] = [
                {"objectId": args[0], "objectType": objects[args[0]]["objectType"]}
            ]
        elif action == self.names["handover"]:
            self.scene["inventoryObjects"] = []
        return len(self.log)

    def poll(self, handle: Any) -> Progress:
        return Progress(ActionState.SUCCEEDED)

    def cancel(self, handle: Any) -> None:
        pass

    def observe(self) -> dict[str, Any]:
        return self.scene


class _Node(py_trees.behaviour.Behaviour):
    """A plain user node: one call of the user's action, on what the guard resolved."""

    def __init__(self, action: str, args: list[str], robot: _Robot) -> None:
        super().__init__(f"{action}{tuple(args)}")
        self.action, self.args, self.robot, self.resolved = action, args, robot, None

    def retarget(self, resolved: Any) -> None:
        self.resolved = resolved

    def initialise(self) -> None:
        self.robot.start(self.action, list(self.resolved.args) if self.resolved else self.args)

    def update(self) -> Status:
        return Status.SUCCESS


def world_of(
    room: Mapping[str, Any], episode: Episode, roster: Mapping[str, str]
) -> dict[str, Any]:
    """The room as the episode has it: people, the door, the item."""
    rng = random.Random(episode.seed)
    data = copy.deepcopy(dict(room))
    data["agent"] = {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}}
    data["inventoryObjects"] = []
    people = []
    if episode.present and episode.form in ("handover", "goto_person"):
        people.append(
            {"id": "p_designated", "name": episode.designated, "role": roster.get(
                episode.designated.lower(), episode.role), "looking_at_robot": True,
             "position": {"x": 0.35, "y": 0.0, "z": 0.3}}
        )  # fmt: skip
    if episode.stranger != "none":
        people.append(
            {"id": "p_stranger", "role": episode.role, "looking_at_robot": True,
             "name": STRANGER if episode.stranger == "recognised" else None,
             "position": {"x": -0.35 + rng.uniform(-0.05, 0.05), "y": 0.0, "z": 0.3}}
        )  # fmt: skip
    data["humans"] = people
    item_at = (2.5, 2.2) if episode.far else (0.3, 0.5)
    # The item is the one thing of its type: "the pill box" designates it alone.
    data["objects"] = [o for o in data["objects"] if o["objectType"] != "PillOrganiser"]
    data["objects"].append(
        {"objectId": episode.item_id, "objectType": "PillOrganiser", "pickupable": True,
         "position": {"x": item_at[0], "y": 0.8, "z": item_at[1]}}
    )  # fmt: skip
    if episode.form == "handover":
        data["inventoryObjects"] = [{"objectId": episode.item_id, "objectType": "PillOrganiser"}]
        data["objects"][-1]["position"] = {"x": 0.0, "y": 0.8, "z": 0.1}
    for o in data["objects"]:
        if o["objectType"].endswith("Door"):
            o["isOpen"] = not episode.door_closed
    policy = dict(data.get("policy") or {})
    policy["people"] = {**dict(policy.get("people") or {}), STRANGER: episode.role}
    data["policy"] = policy
    return data


def judge(outcome: Outcome, names: Mapping[str, str], own: Sequence[str]) -> dict[str, str]:
    """The oracle: each broken property and the step that broke it (its own reading)."""
    ep = outcome.episode
    out: dict[str, str] = {}
    for i, (action, args) in enumerate(outcome.calls, start=1):
        if action not in own:
            out.setdefault("D3", f"call {i}: {action}({', '.join(args)}) is not the robot's")
        if ep.form in ("handover", "goto_person"):
            at = 1 if action == names["handover"] else 0
            person = args[at] if len(args) > at else ""
            goes = action == names["handover"] or (
                action == names["approach"] and person.startswith("p_")
            )
            if goes and person not in ("p_designated", ep.designated):
                out.setdefault(
                    "D1", f"call {i}: {action}({', '.join(args)}) is not {ep.designated}"
                )
    for i, (kind, text, _answer) in enumerate(outcome.dialogue, start=1):
        low = text.lower()
        if kind == "ask" and any(w in low for w in ERRAND_WORDS):
            # Residents are never sent; a door errand is the robot's own when it can open one.
            if ep.role == "resident" or ("door" in low and "open" in names):
                who = "residents" if ep.role == "resident" else "staff"
                out.setdefault("D2", f"question {i}: {text!r} (the people in sight: {who})")
    if outcome.status not in (Status.SUCCESS, Status.FAILURE) or (
        outcome.status is Status.FAILURE and not outcome.reason
    ):
        out.setdefault("D4", f"the run ended {outcome.status.value} with {outcome.reason!r}")
    return out


GuardFactory = Callable[[Any, Any, _Robot, Any], Any]


def run_episode(
    episode: Episode,
    room: Mapping[str, Any],
    names: Mapping[str, str],
    roster: Mapping[str, str],
    guard_factory: GuardFactory,
    *,
    timeout: float = 20.0,
) -> Outcome:
    """Run one episode with the user's guard (``guard_factory(node, query, robot, human)``)."""
    scene = world_of(room, episode, roster)
    robot = _Robot(scene, names)
    answers = [f"I'm {STRANGER}."] * 3 if episode.stranger != "none" else ["ok"] * 3
    human = ScriptedHuman(answers)
    query = episode.query(names)
    action = query.split("(", 1)[0]
    args = [a.strip() for a in query.split("(", 1)[1].rstrip(")").split(",")]
    guard = guard_factory(_Node(action, args, robot), query, robot, human)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        guard.tick_once()
        if guard.status in (Status.SUCCESS, Status.FAILURE):
            break
        time.sleep(0.002)
    dialogue = [(e.kind, e.text, e.answer) for e in human.transcript]
    outcome = Outcome(episode, list(robot.log), dialogue, guard.status, guard.feedback_message)
    outcome.violations = judge(outcome, names, list(names.values()))
    return outcome


def episodes(
    count: int,
    *,
    seed: int = 0,
    people: Sequence[str] = ("Bernadette", "Ana"),
    places: Sequence[str] = ("corridor",),
    words: Sequence[str] = ("PillOrganiser",),
) -> list[Episode]:
    """``count`` episodes drawn (by ``seed``) from the user's people, places and words."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        form = rng.choice(("handover", "goto_person", "goto_place", "fetch"))
        designated = {
            "handover": rng.choice(list(people)),
            "goto_person": rng.choice(list(people)),
            "goto_place": rng.choice(list(places)),
            "fetch": rng.choice(list(words)),
        }[form]
        out.append(
            Episode(
                form=form,
                designated=designated,
                present=rng.random() < 0.4,
                stranger=rng.choice(("none", "recognised", "unrecognised")),
                role=rng.choice(("resident", "staff")),
                door_closed=rng.random() < 0.5,
                far=rng.random() < 0.5,
                seed=seed * 100_003 + n,
            )
        )
    return out


@dataclass
class DomainReport:
    """Episodes run, violations per property, and the first finding of each."""

    episodes: int = 0
    violations: dict[str, int] = field(default_factory=lambda: {p: 0 for p in PROPERTIES})
    findings: dict[str, Outcome] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def add(self, outcome: Outcome) -> None:
        self.episodes += 1
        for prop in outcome.violations:
            self.violations[prop] += 1
            self.findings.setdefault(prop, outcome)

    def finding_text(self, prop: str, room_path: str | Path, project: str | Path = ".") -> str:
        """The finding as a pytest test naming the property and the step; the room by a path
        relative to the user's project."""
        outcome = self.findings[prop]
        try:
            rel = Path(os.path.relpath(Path(room_path).resolve(), Path(project).resolve()))
        except ValueError:  # another drive: the name alone
            rel = Path(Path(room_path).name)
        ep = outcome.episode
        return (
            f"# {prop} ({PROPERTIES[prop]}): {outcome.violations[prop]}\n"
            f"def test_{prop.lower()}_{ep.form}():\n"
            f"    room = json.loads(Path({rel.as_posix()!r}).read_text())\n"
            f"    episode = {ep!r}\n"
            f"    # the run's calls: {outcome.calls!r}\n"
        )


def explore_domain(
    room: str | Path | Mapping[str, Any],
    names: Mapping[str, str],
    guard_factory: GuardFactory,
    *,
    count: int = 200,
    seed: int = 0,
    people: Sequence[str] = ("Bernadette", "Ana"),
    places: Sequence[str] = ("corridor",),
    words: Sequence[str] = ("PillOrganiser",),
    on_outcome: Callable[[Outcome], None] | None = None,
) -> DomainReport:
    """Run ``count`` episodes in the user's room with the user's guard, and judge them.

    Args:
        room: the user's scene file (or dict): its objects, places and ``policy`` (roster).
        names: RAIDER's kind -> the user's action name (``{"handover": "HandTo", "approach":
            "NavigateTo", "pick": "PickUp", "open": "OpenDoor"}``).
        guard_factory: ``(node, query, robot, human) -> guard``: the user's guard around the
            user's node, with their checker, recovery, words and contract.
        count, seed: how many episodes, drawn by ``seed``.
        people, places, words: who and what instructions designate (the user's).
    """
    data = (
        read_json(room, what="room", max_bytes=64 * 2**20)
        if isinstance(room, (str, Path))
        else dict(room)
    )
    roster = {k.lower(): v for k, v in ((data.get("policy") or {}).get("people") or {}).items()}
    report = DomainReport()
    start = time.monotonic()
    for episode in episodes(count, seed=seed, people=people, places=places, words=words):
        py_trees.blackboard.Blackboard.clear()
        outcome = run_episode(episode, data, names, roster, guard_factory)
        report.add(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    report.elapsed_s = time.monotonic() - start
    return report
