"""The explorer in the user's world: their actions, words, people, policy and rooms (issue 34).

:func:`explore_domain` (also ``explore(domain=...)``) generates episodes from what the user
declares in a :class:`UserDomain`, not from cups and boxes: a room of theirs (a scene file),
their action names, their words (a lexicon file's synonyms), their people and roles (the
policy's roster), and judges each episode against the user's own terms. The episode's world
varies what a newcomer met:

- the person an instruction designates by name is in sight, or absent with a **stranger**
  there who answers "who are you?" with her own name (recognised or not);
- the people in sight are residents or staff;
- a closed door stands on the way to a place, and the scene may misspell that place in its
  ``blocked`` map (``coridor``); an item or a button is within reach or far;
- a place is gone to with the user's PDDL action (``(navigate-to tiago lounge corridor
  zoe_door)``, the destination second, a door named after a person last);
- an item is named by one of the user's words ("glasses": the eyewear, not a glass); a kind
  of the user's own (``PressButton``) is asked for;
- people who give no name answer a question with nothing useful, or with the first option it
  offers.

The user's guard runs each episode (``guard_factory(node, query, robot, human)`` around one
plain py_trees node of the user's action) on a robot that applies each call's effect. The
oracle is this module's own reading of the episode (:func:`judge`): it shares no code with the
reader, the check or the recovery planner. Its properties:

======  ==================================================================================
D1      a person designated by name is never substituted: no call hands to, or goes to,
        anyone else; a target that is missing never becomes a person
D2      a resident is never sent on an errand (fetch, move, open), and nobody is asked to
        do what the robot's own actions do (a closed door on the way, an item out of reach)
D3      every robot call and every recovery step uses the user's action names
D4      the run ends (SUCCESS or FAILURE) with a reason, never hangs
D5      an argument is read by its role and the user's words: a plan's destination is where
        the robot goes (or the door in its way, to open it; never the door it passes, never a
        person), an item is what the user's word means
D6      the robot never drives into a closed door on its way (whatever the scene misspells)
D7      the user's own kind is served by its declaration: pressed when it is off (fetched
        within reach with the robot's own actions), never when it is on
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

from bt_raider.errors import BtRaiderError, UsageError
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
    "D5": "an argument is read by its role and the user's words",
    "D6": "the robot never drives into a closed door on its way",
    "D7": "the user's own kind is served by its declaration",
}
#: Words of a question that sends a person on an errand (the oracle's own reading).
ERRAND_WORDS = ("bring", "move", "open", "closer", "out of the way", "fetch", "clear")
#: The stranger's name: never anyone the instruction designates.
STRANGER = "Zoe"
#: What people answer a question when they do not give a name: nothing useful, or the first of
#: the options the question offers (a helpful person, taking the robot's word for what it means).
REPLIES = ("ok", "The first one.")
#: The item every episode is about, and the button a ``press`` episode presses.
ITEM = "Item|explore"
BUTTON = "Button|explore"
#: What a ``plan`` episode's door is called in the plan: after a person (the issue's ``ana_door``).
VIA = f"{STRANGER.lower()}_door"

GuardFactory = Callable[[Any, Any, Any, Any], Any]


@dataclass(frozen=True)
class UserDomain:
    """The user's own domain, as the explorer takes it.

    Attributes:
        room: the user's scene file (or dict): its objects, ``locations``, ``blocked`` map and
            ``policy`` (whose ``people`` roster gives each person's role).
        names: RAIDER's kind -> the user's action name (``{"handover": "HandTo", "approach":
            "NavigateTo", "pick": "PickUp", "open": "OpenDoor"}``; ``"press"`` for a kind of
            the user's own).
        guard_factory: ``(node, query, robot, human) -> guard``: the user's guard around the
            user's node, with their checker, recovery, words and contract.
        people: the names instructions designate.
        places: the places instructions go to (each a key of the room's ``locations``).
        words: the user's words for things -> the object type each means (a lexicon file's
            ``synonyms`` read as data, :func:`words_of`); the oracle judges picks by it.
        plan: the user's PDDL action that goes to a place, with ``{origin}``,
            ``{destination}`` and ``{via}`` where its arguments go (``"(navigate-to tiago
            {origin} {destination} {via})"``); None: no plan episodes.
        button: the user's word for the thing the ``press`` kind acts on, and its type.
        label: what the report calls it (the room's file name by default).
    """

    room: str | Path | Mapping[str, Any]
    names: Mapping[str, str]
    guard_factory: GuardFactory
    people: Sequence[str] = ("Bernadette", "Ana")
    places: Sequence[str] = ("corridor",)
    words: Mapping[str, str] = field(default_factory=lambda: {"PillOrganiser": "PillOrganiser"})
    plan: str | None = None
    button: tuple[str, str] | None = None
    label: str = ""

    def own(self) -> list[str]:
        """The robot's action names (the user's), with the plan's PDDL action."""
        return [*self.names.values(), *([self.plan_action] if self.plan_action else [])]

    @property
    def plan_action(self) -> str:
        return self.plan.strip("( ").split()[0] if self.plan else ""


def words_of(path: str | Path, types: Sequence[str] = ()) -> dict[str, str]:
    """The user's words -> the type each means, read from a lexicon file's ``synonyms`` (one
    type each; ``types`` keeps only those meaning one of them)."""
    data = read_json(path, what="lexicon", max_bytes=2**20)
    out = {}
    for word, meant in (data.get("synonyms") or {}).items():
        if len(meant) == 1 and (not types or meant[0] in types):
            out[str(word)] = str(meant[0])
    return out


@dataclass(frozen=True)
class Episode:
    """One generated situation, in the user's terms (all the oracle needs to judge it)."""

    form: str  # handover | goto_person | goto_place | goto_thing | fetch | press
    designated: str  # the person's name, the place, or the item's word
    present: bool  # the designated person (goto_thing: the item) is in sight
    stranger: str  # none | recognised | unrecognised
    role: str  # resident | staff: the role of the people in sight
    door_closed: bool
    far: bool
    seed: int
    meant: str = "PillOrganiser"  # the type the item's word means (fetch, handover)
    typo: bool = False  # the scene misspells the place in its ``blocked`` map
    plan: bool = False  # the place is gone to with the user's PDDL action
    on: bool = False  # the button is on already (press)
    reply: str = "ok"  # what anyone answers when no stranger gives her name

    def query(self, domain: UserDomain) -> str:
        """The instruction, in the user's action names."""
        names = domain.names
        if self.form == "handover":
            return f"{names['handover']}({ITEM}, {self.designated})"
        if self.form == "fetch":
            return f"{names['pick']}({self.designated})"
        if self.form == "press":
            return f"{names['press']}({self.designated})"
        if self.plan and domain.plan:
            return domain.plan.format(origin="lounge", destination=self.designated, via=VIA)
        return f"{names['approach']}({self.designated})"

    @property
    def item_id(self) -> str:
        return ITEM


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

    def __init__(self, scene: dict[str, Any], domain: UserDomain) -> None:
        self.scene = scene
        self.names = domain.names
        self.goes = {domain.names["approach"], domain.plan_action} - {""}
        self.log: list[tuple[str, list[str]]] = []

    def start(self, action: str, args: Sequence[Any]) -> int:
        args = [str(a) for a in args]
        self.log.append((action, args))
        objects = {o["objectId"]: o for o in self.scene["objects"]}
        first = args[0] if args else ""
        if action in self.goes:
            where = (self.scene.get("locations") or {}).get(first)
            where = where or (objects.get(first) or {}).get("position")
            for h in self.scene.get("humans") or []:
                if first in (h["id"], h.get("name")):
                    where = h["position"]
            if where is not None:
                self.scene["agent"]["position"] = {"x": where["x"], "y": 0.9, "z": where["z"] - 0.3}
        elif action == self.names["open"] and first in objects:
            objects[first]["isOpen"] = True
        elif action == self.names.get("press") and first in objects:
            objects[first]["isToggled"] = True
        elif action == self.names["pick"] and first in objects:
            self.scene["inventoryObjects"] = [
                {"objectId": first, "objectType": objects[first]["objectType"]}
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


def _misspelt(word: str) -> str:
    """``word`` with one of its doubled letters single (``corridor`` -> ``coridor``), else its
    last letter dropped: a typo one edit away."""
    for i in range(1, len(word)):
        if word[i] == word[i - 1]:
            return word[:i] + word[i + 1 :]
    return word[:-1]


def world_of(
    room: Mapping[str, Any], episode: Episode, roster: Mapping[str, str]
) -> dict[str, Any]:
    """The room as the episode has it: people, the door, the item, the button."""
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
    # The item is the one thing of its type: its word designates it alone.
    data["objects"] = [o for o in data["objects"] if o["objectType"] != episode.meant]
    data["objects"].append(
        {"objectId": ITEM, "objectType": episode.meant, "pickupable": True,
         "position": {"x": item_at[0], "y": 0.8, "z": item_at[1]}}
    )  # fmt: skip
    if episode.form == "goto_thing" and not episode.present:  # a missing target
        data["objects"].pop()
    if episode.form == "handover":
        data["inventoryObjects"] = [{"objectId": ITEM, "objectType": episode.meant}]
        data["objects"][-1]["position"] = {"x": 0.0, "y": 0.8, "z": 0.1}
    if episode.form == "press":
        kind = episode.meant
        data["objects"] = [o for o in data["objects"] if o["objectType"] != kind]
        data["objects"].append(
            {"objectId": BUTTON, "objectType": kind, "toggleable": True, "isToggled": episode.on,
             "position": {"x": item_at[0] - 0.6, "y": 1.0, "z": item_at[1]}}
        )  # fmt: skip
    if episode.plan:  # a door named after a person, open, beside her
        data["objects"].append(
            {"objectId": f"Door|{STRANGER.lower()}", "objectType": "Door", "openable": True,
             "isOpen": True, "position": {"x": 1.5, "y": 0.0, "z": 1.0}}
        )  # fmt: skip
    for o in data["objects"]:
        if o["objectType"].endswith("Door") and o["objectId"] != f"Door|{STRANGER.lower()}":
            o["isOpen"] = not episode.door_closed
    if episode.typo:
        data["blocked"] = {_misspelt(k): v for k, v in (data.get("blocked") or {}).items()}
    policy = dict(data.get("policy") or {})
    policy["people"] = {**dict(policy.get("people") or {}), STRANGER: episode.role}
    data["policy"] = policy
    return data


def judge(outcome: Outcome, domain: UserDomain, room: Mapping[str, Any]) -> dict[str, str]:
    """The oracle: each broken property and the step that broke it (its own reading).

    ``room`` is the user's room as written (its ``blocked`` map is the truth the episode's
    scene may misspell).
    """
    ep, names, own = outcome.episode, domain.names, domain.own()
    goes = {names["approach"], domain.plan_action} - {""}
    blocked = {str(k): [str(d) for d in v] for k, v in (room.get("blocked") or {}).items()}
    opened: set[str] = set()
    out: dict[str, str] = {}
    for i, (action, args) in enumerate(outcome.calls, start=1):
        call = f"call {i}: {action}({', '.join(args)})"
        first = args[0] if args else ""
        if action not in own:
            out.setdefault("D3", f"{call} is not the robot's")
        if action == names["open"]:
            opened.add(first)
        if ep.form in ("handover", "goto_person"):
            at = 1 if action == names["handover"] else 0
            person = args[at] if len(args) > at else ""
            meets = action == names["handover"] or (action in goes and person.startswith("p_"))
            if meets and person not in ("p_designated", ep.designated):
                out.setdefault("D1", f"{call} is not {ep.designated}")
        if ep.form == "goto_thing" and action in goes and first.startswith("p_"):
            out.setdefault("D1", f"{call}: a person, not the {ep.designated}")
        if ep.form == "goto_place" and action in goes:
            if first != ep.designated and first not in blocked.get(ep.designated, []):
                out.setdefault("D5", f"{call} is not the destination {ep.designated}")
            shut = [d for d in blocked.get(first, []) if ep.door_closed and d not in opened]
            if shut:
                out.setdefault("D6", f"{call} drives into {shut[0]}, closed")
        if ep.form == "fetch" and action == names["pick"] and first != ITEM:
            out.setdefault("D5", f"{call}: {ep.designated!r} means the {ep.meant}")
        if ep.form == "press" and action == names.get("press") and (first != BUTTON or ep.on):
            why = "it is on already" if ep.on else f"{ep.designated!r} is {BUTTON}"
            out.setdefault("D7", f"{call}: {why}")
    if ep.form == "press" and not ep.on and (names.get("press"), [BUTTON]) not in outcome.calls:
        out.setdefault(
            "D7", f"{names.get('press')}({BUTTON}) never ran, the run ended {outcome.reason!r}"
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


def run_episode(
    episode: Episode,
    room: Mapping[str, Any],
    domain: UserDomain,
    roster: Mapping[str, str],
    *,
    timeout: float = 20.0,
) -> Outcome:
    """Run one episode with the user's guard (``domain.guard_factory``) and judge it."""
    scene = world_of(room, episode, roster)
    robot = _Robot(scene, domain)
    answers = [f"I'm {STRANGER}." if episode.stranger != "none" else episode.reply] * 3
    human = ScriptedHuman(answers)
    query = episode.query(domain)
    if query.startswith("("):  # a PDDL step: the node calls the action with all its arguments
        action, *args = query.strip("()").split()
    else:
        action = query.split("(", 1)[0]
        args = [a.strip() for a in query.split("(", 1)[1].rstrip(")").split(",")]
    status, reason = Status.FAILURE, ""
    try:
        guard = domain.guard_factory(_Node(action, args, robot), query, robot, human)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            guard.tick_once()
            if guard.status in (Status.SUCCESS, Status.FAILURE):
                break
            time.sleep(0.002)
        status, reason = guard.status, guard.feedback_message
    except BtRaiderError as exc:  # refused in one line before a tick (a scene's typo): defined
        reason = f"{type(exc).__name__}: {exc}"
    dialogue = [(e.kind, e.text, e.answer) for e in human.transcript]
    outcome = Outcome(episode, list(robot.log), dialogue, status, reason)
    outcome.violations = judge(outcome, domain, room)
    return outcome


def draw_episodes(count: int, domain: UserDomain, *, seed: int = 0) -> list[Episode]:
    """``count`` episodes drawn (by ``seed``) from the user's people, places, words and kinds."""
    rng = random.Random(seed)
    forms = ["handover", "goto_person", "goto_place", "goto_thing", "fetch"]
    if domain.button is not None and "press" in domain.names:
        forms.append("press")
    words = sorted(domain.words.items())
    out = []
    for n in range(count):
        form = rng.choice(forms)
        word, meant = rng.choice(words)
        if form == "press" and domain.button is not None:
            word, meant = domain.button
        designated = {
            "handover": rng.choice(list(domain.people)),
            "goto_person": rng.choice(list(domain.people)),
            "goto_place": rng.choice(list(domain.places)),
            "goto_thing": word,
            "fetch": word,
            "press": word,
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
                meant=meant if form in ("goto_thing", "fetch", "press") else "PillOrganiser",
                typo=form == "goto_place" and rng.random() < 0.25,
                plan=form == "goto_place" and domain.plan is not None and rng.random() < 0.4,
                on=form == "press" and rng.random() < 0.25,
                reply=rng.choice(REPLIES),
            )
        )
    return out


@dataclass
class DomainReport:
    """What an exploration of a user's domain found (the shape of
    :class:`~bt_raider.testing.explore_report.ExploreReport`).

    Attributes:
        episodes: episodes run.
        violations: per property id, how many episodes broke it (every id present).
        first: per property id, the first outcome that broke it.
        findings: the same (a domain's episodes are small already: nothing is shrunk).
        first_at: per property id, the number of the episode that first broke it.
        statuses: how many episodes ended in each status.
        elapsed_s: seconds spent.
        problem: why the exploration is not sound, when it is not (no episode reached an
            action).
        label: the domain's name in the text.
    """

    episodes: int = 0
    violations: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PROPERTIES, 0))
    first: dict[str, Outcome] = field(default_factory=dict)
    first_at: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    shrink_s: float = 0.0
    problem: str = ""
    label: str = ""

    @property
    def findings(self) -> dict[str, Outcome]:
        return self.first

    @property
    def ok(self) -> bool:
        """No property was broken, and the exploration explored."""
        return not self.problem and not any(self.violations.values())

    def add(self, outcome: Outcome) -> None:
        self.episodes += 1
        name = outcome.status.value
        self.statuses[name] = self.statuses.get(name, 0) + 1
        for prop in outcome.violations:
            self.violations[prop] += 1
            self.first.setdefault(prop, outcome)
            self.first_at.setdefault(prop, self.episodes)

    def text(self) -> str:
        """A readable account: counts per property, then each first finding and its step."""
        rate = self.episodes / self.elapsed_s if self.elapsed_s else 0.0
        lines = [
            f"{self.label or 'domain'}: {self.episodes} episodes in {self.elapsed_s:.1f} s "
            f"({rate:.1f}/s); {self.statuses}"
        ]
        if self.problem:
            lines.append(f"  NOT OK: {self.problem}")
        for prop, text in PROPERTIES.items():
            lines.append(f"  {prop:>3} {self.violations[prop]:>5}  {text}")
        for prop, outcome in self.first.items():
            lines.append(f"\n{prop} first at episode {self.first_at[prop]}: {outcome.episode}")
            lines.append(f"  {outcome.violations[prop]}")
        return "\n".join(lines)

    def finding_text(self, prop: str, room_path: str | Path, project: str | Path = ".") -> str:
        """The finding as a pytest test naming the property and the step; the room by a path
        relative to the user's project."""
        outcome = self.first[prop]
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
    domain: UserDomain,
    *,
    episodes: int = 200,
    seed: int = 0,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> DomainReport:
    """Run ``episodes`` episodes in the user's room with the user's guard, and judge them.

    Args:
        domain: the user's room, action names, guard, people, places, words, plan and kinds.
        episodes, seed: how many episodes, drawn by ``seed``.
        on_outcome: called with every outcome (progress, benchmarks).
    """
    if not isinstance(episodes, int) or episodes < 1:
        raise UsageError(f"episodes must be an integer >= 1, got {episodes!r}")
    for kind in ("handover", "approach", "pick", "open"):
        if kind not in domain.names:
            raise UsageError(
                f"UserDomain.names has no {kind!r}: give the user's action for each of "
                f"handover, approach, pick, open (and press for a kind of the user's own)"
            )
    room = domain.room
    data = (
        read_json(room, what="room", max_bytes=64 * 2**20)
        if isinstance(room, (str, Path))
        else dict(room)
    )
    roster = {k.lower(): v for k, v in ((data.get("policy") or {}).get("people") or {}).items()}
    label = domain.label or (Path(room).parent.name if isinstance(room, (str, Path)) else "")
    report = DomainReport(label=label)
    start = time.monotonic()
    acted = 0
    for episode in draw_episodes(episodes, domain, seed=seed):
        py_trees.blackboard.Blackboard.clear()
        outcome = run_episode(episode, data, domain, roster)
        report.add(outcome)
        acted += bool(outcome.calls)
        if on_outcome is not None:
            on_outcome(outcome)
    report.elapsed_s = time.monotonic() - start
    if not acted:
        report.problem = (
            f"no episode reached an action ({report.statuses}): the guard explored nothing"
        )
    return report
