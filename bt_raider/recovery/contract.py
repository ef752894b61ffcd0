"""The recovery contract: what a recovery planner is asked (RecoveryRequest), what it answers
(RecoveryPlan) and the RecoveryPlanner protocol, with the helpers that name an action.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from bt_raider.checking.parse import action_name
from bt_raider.checking.verdict import Category, Verdict
from bt_raider.errors import BtRaiderError
from bt_raider.recovery.safecode import (
    CodeStep,
    Program,
)

if TYPE_CHECKING:
    from bt_raider.perception.people import PeoplePolicy
    from bt_raider.perception.scene import Scene, SceneObject
    from bt_raider.recovery.answers import AnswerSpace
    from bt_raider.recovery.robot_actions import RobotActions
    from bt_raider.robot.designation import GuardIntent


#: An examples provider: ``(information, k) -> [(information, goal), ...]``. The CDR memory's
#: ``memory.examples(query, k)`` has this shape.
ExamplesProvider = Callable[[str, int], Sequence[tuple[str, str]]]


#: RAIDER's prompt promises a free table to put things down on; recovery here names a real
#: surface of the scene instead (:func:`free_surface`), never this.
FREE_SPOT = "free_table"

#: Receptacle types an object can be put down on for a while (surfaces, not containers).
SURFACE_TYPES = frozenset(
    {
        "CounterTop",
        "DiningTable",
        "Table",
        "SideTable",
        "CoffeeTable",
        "Desk",
        "Shelf",
        "Dresser",
        "TVStand",
    }
)
#: A surface whose objects cover more than this share of its top has no room.
FULL_SHARE = 0.7


@dataclass
class RecoveryRequest:
    """What the recovery planner is asked (RAIDER Fig. 7's query).

    Attributes:
        action: the checked action as written (structured, PDDL instance or natural language).
        verdict: the issue found, with its explanation.
        holding: display names of what the robot holds.
        examples: extra ``(information, goal)`` examples, e.g. from the CDR memory.
        feedback: why the planner's previous code was rejected (None on the first try).
        scene: the scene the check saw, for planners that look things up (optional).
        bindings: PDDL object -> scene name, for a PDDL action instance.
        actions: the robot's actions (:class:`~bt_raider.recovery.robot_actions.RobotActions`);
            None: RAIDER's vocabulary. Planners must only use these.
        policy: who may be asked what (:class:`~bt_raider.perception.people.PeoplePolicy`); None: the
            scene's ``policy``, else the default.
        designation: what the instruction's words allow for this action
            (:class:`~bt_raider.robot.designation.GuardIntent`, one action), when the guard
            knows it: a plan that acts on anything else in place of it is refused by the
            verifier (:mod:`bt_raider.recovery.verify`).
    """

    action: str
    verdict: Verdict
    holding: list[str] = field(default_factory=list)
    examples: list[tuple[str, str]] = field(default_factory=list)
    feedback: str | None = None
    scene: Scene | None = None
    bindings: dict[str, str] = field(default_factory=dict)
    actions: RobotActions | None = None
    policy: PeoplePolicy | None = None
    designation: GuardIntent | None = None

    @property
    def action_name(self) -> str | None:
        """The action's name (``pick``), from the verdict or the query text."""
        return action_name(self.verdict.action, self.action, self.bindings)

    def information(self) -> str:
        """The query line of the prompt, and the *information* half of a memory example."""
        issue = self.verdict.final_response.value
        if self.verdict.category.value != issue:
            issue = f"{issue} ({self.verdict.category.value})"
        held = ", ".join(self.holding) if self.holding else "none"
        explanation = " ".join(self.verdict.explanation.split())
        return (
            f"query: {self.action}, issue: {issue}, explanation: {explanation} "
            f"robot holding: {held}"
        )


def ambiguity_candidates(request: RecoveryRequest) -> dict[str, list[str]]:
    """The request's grounding as an ambiguity's question offers it: a phrase with words the
    check could not read widened to the scene's objects of its type
    (:func:`~bt_raider.robot.designation.unclear_candidates`)."""
    from bt_raider.perception.scene import Scene
    from bt_raider.robot.designation import unclear_candidates

    verdict = request.verdict
    return unclear_candidates(
        verdict.grounding,
        ambiguity=verdict.category is Category.AMBIGUITY,
        explanation=verdict.explanation,
        scene=request.scene if isinstance(request.scene, Scene) else None,
    )


def free_surface(scene: Scene | None, *, exclude: Sequence[str] = ()) -> SceneObject | None:
    """A real surface of the scene to put something down on for a while, or None.

    The nearest to the robot of the receptacle surfaces (:data:`SURFACE_TYPES`) with room (the
    objects on it cover at most :data:`FULL_SHARE` of its top, when it has a bounding box),
    preferring those within the robot's reach. ``exclude`` names objects (ids or names) not to
    use, e.g. the one being recovered.
    """
    if scene is None:
        return None
    skip = {str(x).lower() for x in exclude}
    reach = float(scene.robot.get("reach", 1.0))
    options = []
    for o in scene.objects:
        if o.type not in SURFACE_TYPES or not o.flag("receptacle"):
            continue
        if o.id.lower() in skip or o.name.lower() in skip:
            continue
        if not _has_room(scene, o):
            continue
        dist = scene.distance_to_robot(o.id)
        options.append((dist > reach, dist, o.name, o))
    return min(options, key=lambda t: t[:3])[3] if options else None


def _has_room(scene: Scene, surface: SceneObject) -> bool:
    box = surface.bbox()
    if box is None:
        return True
    lo, hi = box
    area = max(float((hi[0] - lo[0]) * (hi[2] - lo[2])), 1e-6)
    used = 0.0
    for child in surface.children:
        try:
            cbox = scene.by_id(child).bbox()
        except BtRaiderError:  # an id perception reports but does not describe: no footprint
            continue
        if cbox is not None:
            used += float((cbox[1][0] - cbox[0][0]) * (cbox[1][2] - cbox[0][2]))
    return used / area <= FULL_SHARE


@runtime_checkable
class RecoveryPlanner(Protocol):
    """Anything that writes recovery code for a request."""

    def propose(self, request: RecoveryRequest, *, cancel: threading.Event | None = None) -> str:
        """Return recovery code (one statement per line); stop early when ``cancel`` is set."""
        ...


@dataclass(frozen=True)
class Proof:
    """What a verifier found out about a recovery plan.

    Attributes:
        ok: the plan may start (everything verifiable so far holds).
        reason: why it fails, naming the step (``"step 2, pick('Apple_1'): the robot's hand is
            full"``), or what was proved.
        checked_steps: robot actions verified (applicable in sequence).
        waits_on_answer: verification stopped at an ``ask`` whose answer is not known yet (or
            at something the person is asked to do): the rest is verified after the answer.
    """

    ok: bool
    reason: str
    checked_steps: int = 0
    waits_on_answer: bool = False


@dataclass
class RecoveryPlan:
    """An accepted recovery: the code, its program, what runs and where the guard resumes.

    Attributes:
        request: the request it answers.
        code: the accepted code, canonical (one statement per line).
        program: the whole program.
        run: the steps that run in the subtree (the program without the resume step).
        resume: the last step when it is the recovered action itself, else None.
        proposals: how many times the planner was asked.
        rejected: the reasons earlier proposals were rejected.
        aliases: a name the code gives an object, place or person -> what the robot receives
            (an objectId, a location name, a person's id), read from the request's scene.
        answers: variable -> the :class:`~bt_raider.recovery.answers.AnswerSpace` its ``ask``
            is read against (a reply grounds to one candidate before any action uses it).
        proof: the verifier's :class:`Proof` of the plan (None:
            not verified).
    """

    request: RecoveryRequest
    code: str
    program: Program
    run: Program
    resume: CodeStep | None
    proposals: int = 1
    rejected: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    answers: dict[str, AnswerSpace] = field(default_factory=dict)
    proof: Proof | None = None

    @property
    def gives_up(self) -> bool:
        """True when the plan only says why the action cannot be done (RAIDER's unfeasible case)."""
        return self.program.only_says

    @property
    def variables(self) -> tuple[str, ...]:
        return self.program.variables
