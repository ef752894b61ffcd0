"""Verified recovery: prove a recovery plan restores the failed condition before any of it runs.

A recovery plan that parses is not yet a plan that works: ``pick('Apple')`` written for an
out-of-reach apple leaves the apple out of reach, and ``pick('Bowl')`` with a full hand fails.
Before :class:`~bt_raider.recovery.pipeline.Recovery` accepts a plan it asks a
:class:`Verifier` for a :class:`Proof`:

* :class:`SceneVerifier` (the default) applies the symbolic effects of the plan's robot actions
  (:func:`bt_raider.checking.steps.apply_effects`) to a copy of the request's scene, checks each
  action on the state the earlier ones lead to, and at the end re-checks the recovered action
  (the plan's resume step, else the original query) with the same checker;
* ``bt_raider.planners.pddl_recovery.PddlVerifier`` simulates the steps with the PDDL domain
  (unified-planning's ``SequentialSimulator``); it is injected through this protocol (recovery
  does not import planners), and ``PddlRecoveryPlanner`` offers it as its ``verifier``.

``ask``, ``say`` and ``wait_for`` are observations, not actions. ``say`` changes nothing; an
``ask`` whose answer a later robot action uses, a request to the person (``ask`` without a
variable) and ``wait_for`` stop the up-front proof there (``Proof.waits_on_answer``): what
follows depends on the answer or on what the person does. :meth:`Recovery.compile
<bt_raider.recovery.pipeline.Recovery.compile>` puts an :class:`AnswerCheck` after every such
``ask`` that has robot actions after it: once the answer is on the blackboard, the plan is
verified again with the answer bound, on a worker, before the next robot action starts.

The condition counts as restored when the final re-check finds no issue, or an issue of another
category (the cup the person chose is out of reach: the next recovery handles that); it fails
when the same category of issue is still there or the check cannot decide (``unknown``) —
except ``not_present`` after the plan moves the robot: what it will see where it goes is not in
the scene yet (RAIDER's "where can I find it?" then ``move_to``). A plan
that only ``say``\\ s why the action is impossible restores nothing and claims nothing: it passes.

**Nothing can be fixed.** When every proposal is refuted, ``Recovery.plan`` raises
:class:`Unrecoverable` (a :class:`~bt_raider.errors.RecoveryCodeError`) with the reason, and
``Recovery.unrecoverable`` holds it (also when the accepted plan only says why the action is
impossible); a replanner (``bt_raider.planners.replan``) reads either to plan around the step.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import py_trees
from py_trees.common import Status

from bt_raider.checking.contract import Query
from bt_raider.checking.parse import action_for_name
from bt_raider.checking.steps import apply_effects
from bt_raider.checking.verdict import Category
from bt_raider.checking.vocabulary import MIN_ARGS, ROLES
from bt_raider.errors import BtRaiderError, RecoveryCodeError
from bt_raider.perception.scene import Scene
from bt_raider.recovery.contract import Proof
from bt_raider.recovery.robot_actions import verb_for_name
from bt_raider.recovery.safecode import INTERACTION_ACTIONS, CodeStep, Ref
from bt_raider.robot import worker
from bt_raider.robot.actions import Var
from bt_raider.robot.designation import RECOVERY_KINDS, GuardIntent, outside, step_kind
from bt_raider.robot.retarget import ResolvedAction

if TYPE_CHECKING:
    from bt_raider.checking.contract import Checker
    from bt_raider.recovery.contract import RecoveryPlan, RecoveryRequest

#: Seconds a verification after an answer may take on its worker before it fails closed.
ANSWER_CHECK_DEADLINE = 30.0


@runtime_checkable
class Verifier(Protocol):
    """Anything that proves (or refutes) a recovery plan before it runs."""

    def verify(
        self,
        plan: RecoveryPlan,
        request: RecoveryRequest,
        answers: dict[str, str] | None = None,
    ) -> Proof:
        """Verify ``plan`` for ``request``; ``answers`` binds the variables of answered asks."""
        ...


class Unrecoverable(RecoveryCodeError):
    """Every recovery proposed for an action was proved unable to restore its condition.

    Attributes:
        reason: the last refutation (which step fails and why).
        action: the action that cannot be recovered.
    """

    def __init__(self, message: str, *, reason: str, action: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.action = action


# ----------------------------------------------------------------------------- plan walking


def answer_dependent(plan: RecoveryPlan) -> set[str]:
    """Variables of ``plan`` whose value a robot action (or the resume step) uses."""
    return {
        a.name
        for step in plan.program.steps
        if step.action not in INTERACTION_ACTIONS
        for a in step.args
        if isinstance(a, Ref)
    }


def observation_stop(step: CodeStep, used: set[str], answers: dict[str, str]) -> str | None:
    """Why verification cannot go past ``step`` yet, or None when it can.

    An ask whose answer is used and not known, a request to the person (an ``ask`` with no
    variable: the person acts in the world) and ``wait_for`` stop it; ``say`` does not.
    """
    if step.action == "ask":
        if step.target is None:
            return f"waits on the person: {step.to_code()[:80]}"
        if step.target in used and step.target not in answers:
            return f"waits on the answer to {step.to_code()[:80]}"
    elif step.action == "wait_for":
        return f"waits for the person: {step.to_code()[:80]}"
    return None


def step_label(plan: RecoveryPlan, step: CodeStep) -> str:
    """``step 2, pick('Apple_1')``: the step's place in the plan and its code."""
    index = next((i for i, s in enumerate(plan.program.steps, start=1) if s is step), step.line)
    return f"step {index}, {step.to_code()[:80]}"


def walk_robot_steps(
    plan: RecoveryPlan, answers: dict[str, str], act: Callable[[CodeStep], str | None]
) -> Proof | int:
    """Run ``act`` on each robot step of ``plan`` in order (``say`` and answered ``ask`` steps
    pass; see :func:`observation_stop`): ``act`` checks a step, applies its effects and says
    why it fails (None: it does not).

    Returns:
        A :class:`Proof` when the walk stops (a step fails, or waits on the person), else the
        number of robot steps checked.
    """
    used = answer_dependent(plan)
    checked = 0
    for step in plan.run.steps:
        stop = observation_stop(step, used, answers)
        if stop is not None:
            return Proof(True, f"{step_label(plan, step)} {stop}", checked, True)
        if step.action in INTERACTION_ACTIONS:
            continue
        failure = act(step)
        if failure is not None:
            return Proof(False, failure, checked)
        checked += 1
    return checked


def value_of(arg: Any, answers: dict[str, str]) -> str | None:
    """A step argument's value: the literal, or the answer bound to its variable (None: unknown)."""
    if isinstance(arg, Ref):
        value = answers.get(arg.name)
        return None if value is None else str(value)
    return str(arg)


def resume_values(plan: RecoveryPlan, answers: dict[str, str], checked: int) -> Proof | list[str]:
    """The values of ``plan.resume``'s arguments, or the :class:`Proof` that waits on an answer
    one of them uses (``plan.resume`` must be set)."""
    assert plan.resume is not None
    values = [value_of(a, answers) for a in plan.resume.args]
    if any(v is None for v in values):
        label = step_label(plan, plan.resume)
        return Proof(True, f"{label} waits on an answer it uses", checked, True)
    return [str(v) for v in values]


def one_line(code: str, limit: int = 200) -> str:
    """Recovery ``code`` on one line (statements joined by ``; ``), cut to ``limit`` characters."""
    text = "; ".join(line.strip() for line in code.splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----------------------------------------------------------------------------- scene level


class SceneVerifier:
    """Verify a plan on a copy of the request's scene with the scene-level checker.

    Each robot action of the plan is mapped to the checker's action (the robot's own names
    through ``request.actions``), checked on the state the earlier actions lead to, and its
    effects applied to the copy; ``move_to`` moves the robot, and fails only when the way to an
    object, a person or a named place is blocked (the scene's ``blocked`` report, which a step
    that picks the blocker up clears). Then the recovered action is re-checked.

    Args:
        checker: the :class:`~bt_raider.checking.contract.Checker` to check with (anything
            with ``check(scene, query)``); the embedded symbolic reasoner by default — the
            guard's own checker works too, but an LLM checker costs model calls per step.

    A request without a :class:`~bt_raider.perception.scene.Scene` (a PDDL world, no scene)
    cannot be verified here: the proof passes with ``checked_steps=0`` and says so. An action
    the checker does not know (a robot's own action named like no RAIDER verb) fails the
    proof: its effects are unknown.
    """

    def __init__(self, checker: Checker | None = None) -> None:
        self._checker = checker
        self._lock = threading.Lock()

    @property
    def checker(self) -> Checker:
        with self._lock:
            if self._checker is None:
                from bt_raider.checking.symbolic import SymbolicReasoner

                self._checker = SymbolicReasoner()
            return self._checker

    def verify(
        self,
        plan: RecoveryPlan,
        request: RecoveryRequest,
        answers: dict[str, str] | None = None,
    ) -> Proof:
        answers = dict(answers or {})
        if plan.gives_up:
            return Proof(True, "the plan only says why the action cannot be done")
        if not isinstance(request.scene, Scene):
            return Proof(True, "not verified: the request has no scene to verify against")
        # The scene the check just read (validated when it was made): a dry run's copy needs
        # no second validation, a third of a copy's cost.
        work = request.scene.copy(validate=False)
        verbs: list[str] = []  # of the robot steps walked, for the final judgement
        walked = walk_robot_steps(
            plan, answers, lambda step: self._do(work, plan, request, step, answers, verbs)
        )
        if isinstance(walked, Proof):
            return walked
        return self._final(work, plan, request, answers, walked, looks="move_to" in verbs)

    # -- one robot step
    def _do(
        self,
        work: Scene,
        plan: RecoveryPlan,
        request: RecoveryRequest,
        step: CodeStep,
        answers: dict[str, str],
        verbs: list[str],
    ) -> str | None:
        """Check ``step`` on ``work`` and apply its effects; the reason it fails, or None.

        The step's verb is appended to ``verbs``.
        """
        label = step_label(plan, step)
        verb = _verb(step.action, request)
        if verb is None:
            return (
                f"{label}: I cannot tell what {step.action} does to the scene, so I cannot "
                "verify the plan; use the robot's actions that pick, place, open, close, "
                "turn on or off, slice, hand over or move"
            )
        verbs.append(verb)
        values = [value_of(a, answers) for a in step.args]
        # What the robot receives: the plan's aliases (display name or PDDL name -> objectId).
        refs = [_ref(work, plan.aliases.get(v, v)) for v in values if v is not None]
        designation = request.designation
        if designation is not None:
            recovered = _verb(request.action_name or "", request)
            if step_kind(verb, refs, designation, work, action=recovered) is None:
                return _substitute(label, refs, designation)
        if verb == "move_to":
            if not refs:
                return f"{label}: it names no place to go to"
            if not _known(work, refs[0]):
                # Never a made-up destination: an answer read as "red mug" is no place.
                return (
                    f"{label}: {refs[0]!r} is no object, person or place of the scene, so the "
                    "robot cannot go there"
                )
            # An object, a person or a named place: the way there must be free (perception's
            # ``blocked`` report); a move along a route the scene marks blocked never starts.
            try:
                verdict = self.checker.check(work, f"approach({refs[0]})")
            except BtRaiderError:
                verdict = None
            if verdict is not None and verdict.category is Category.OBSTRUCTED:
                return f"{label}: obstructed: {_clean(verdict.explanation)}"
            apply_effects(work, "approach", {"target": [refs[0]]})
            return None
        roles = ROLES[verb]
        if len(refs) >= MIN_ARGS[verb]:
            text = f"{verb}({', '.join(refs[: len(roles)])})"
            try:
                verdict = self.checker.check(work, text)
            except BtRaiderError as exc:
                return f"{label}: the check raised {type(exc).__name__}: {exc}"
            if not verdict.ok:
                what = verdict.category.value.replace("_", " ")
                return f"{label}: {what}: {_clean(verdict.explanation)}"
        # Effects on the objects the step names (a place with no destination only releases).
        apply_effects(work, verb, {roles[i]: [r] for i, r in enumerate(refs[: len(roles)])})
        if verb == "pick" and refs:
            _unblock(work, refs[0])
        return None

    # -- the recovered action
    def _final(
        self,
        work: Scene,
        plan: RecoveryPlan,
        request: RecoveryRequest,
        answers: dict[str, str],
        checked: int,
        *,
        looks: bool,
    ) -> Proof:
        if plan.resume is not None:
            values = resume_values(plan, answers, checked)
            if isinstance(values, Proof):
                return values
            if request.designation is not None:
                designation = request.designation
                for value in answers.values():  # the person chose among the designated
                    designation = designation.chosen_as(_ref(work, str(value)))
                refused = _resume_outside(work, plan, request, designation, values, answers)
                if refused is not None:
                    return Proof(False, refused, checked)
            query: Query | str = f"{plan.resume.action}({', '.join(values)})"
        else:
            query = Query(request.action, bindings=dict(request.bindings))
        shown = query if isinstance(query, str) else query.text
        try:
            verdict = self.checker.check(work, query)
        except BtRaiderError as exc:
            return Proof(
                False, f"after the plan, checking {shown} raised {type(exc).__name__}: {exc}"
            )
        caused = self._caused(request, query, verdict.category, checked)
        if caused is not None:
            return Proof(False, f"{caused}: {_clean(verdict.explanation)}", checked)
        return judge_final(
            shown, request, verdict.category, _clean(verdict.explanation), checked, looks=looks
        )

    def _caused(
        self, request: RecoveryRequest, query: Query | str, after: Category, checked: int
    ) -> str | None:
        """Why the plan's own steps leave the recovered action unable to run, or None.

        The robot's state is carried from step to step (hands, what it holds, where it stands,
        what is open), so a new issue after the plan that the action did not have before it
        (a hand the plan filled: "pick the apple" recovered by ``pick(Knife)`` first) is the
        plan's doing, not a next recovery's: the plan is refused.
        """
        if checked == 0 or after in (Category.NONE, Category.UNKNOWN, request.verdict.category):
            return None
        assert isinstance(request.scene, Scene)
        try:
            before = self.checker.check(request.scene.copy(validate=False), query).category
        except BtRaiderError:
            return None
        if before is after:
            return None  # the action had that issue before the plan: the next recovery's
        shown = query if isinstance(query, str) else query.text
        what = after.value.replace("_", " ")
        return (
            f"after the plan's {checked} step(s), {shown} cannot run ({what}), caused by the plan"
        )


def _substitute(label: str, refs: list[str], designation: GuardIntent) -> str:
    allowed = ", ".join(sorted(designation.all_allowed())) or "nothing in sight yet"
    kinds = "; ".join(v for k, v in RECOVERY_KINDS.items() if k != "designated")
    return (
        f"{label}: {', '.join(refs)} is not what the instruction designates ({allowed}), and "
        f"the step is none of what a recovery may do with another object ({kinds}); never act "
        "on something else in place of what was asked"
    )


def _in_sight(scene: Scene, ref: str) -> bool:
    """Whether ``ref`` is an object of ``scene`` that perception reports as visible."""
    try:
        obj = scene.by_id(ref)
    except BtRaiderError:
        return False
    return obj.raw.get("visible", True) is not False


def _resume_outside(
    work: Scene,
    plan: RecoveryPlan,
    request: RecoveryRequest,
    designation: GuardIntent,
    values: list[str],
    answers: dict[str, str],
) -> str | None:
    """Why the resume step's arguments are not what the instruction designates, or None.

    A phrase that matched nothing in sight (open) allows no object in sight; a name not in
    sight yet passes here (the guard reads the words again where the robot looks, at release).
    """
    assert plan.resume is not None
    label = step_label(plan, plan.resume)
    refs = tuple(_ref(work, plan.aliases.get(v, v)) for v in values)
    actions = []
    for one in designation.actions:
        allowed = list(one.allowed)
        for i, ref in enumerate(refs[: len(allowed)]):
            if allowed[i] is not None:
                continue
            if _in_sight(work, ref):
                return (
                    f"{label}: {ref} is in sight and {one.phrases[i]!r} matched nothing in "
                    "sight; never act on something else in place of what was asked"
                )
            allowed[i] = frozenset({ref})
        actions.append(replace(one, allowed=tuple(allowed)))
    released = ResolvedAction(plan.resume.action, refs, {}, {}, request.verdict)
    # An ask whose answer is not in yet may still settle which of several is meant.
    waiting = any(v not in answers for v in plan.program.variables)
    problems = outside(
        replace(designation, actions=tuple(actions)), released, work, settled=not waiting
    )
    return f"{label}: {'; '.join(problems)}" if problems else None


def judge_final(
    action: str,
    request: RecoveryRequest,
    category: Category,
    explanation: str,
    checked: int,
    *,
    looks: bool = False,
) -> Proof:
    """The proof for the recovered action's re-check after the plan (see the module docstring).

    ``looks``: the plan moves the robot somewhere; what it will see there (an object the scene
    does not have yet) cannot be predicted, so a ``not_present`` that remains is no refutation.
    """
    issue = request.verdict.category
    if category is Category.NONE:
        return Proof(True, f"after {checked} step(s), {action} can run: {explanation}", checked)
    if category is Category.UNKNOWN:
        return Proof(
            False, f"after the plan I cannot tell whether {action} can run: {explanation}", checked
        )
    what = category.value.replace("_", " ")
    if category is issue is Category.NOT_PRESENT and looks:
        return Proof(
            True,
            f"the plan goes to look; whether {action} finds what is missing there cannot be "
            f"known before ({explanation})",
            checked,
        )
    if category is issue:
        return Proof(
            False,
            f"after the plan, {action} would still fail ({what}): {explanation}",
            checked,
        )
    return Proof(
        True,
        f"the plan fixes the {issue.value.replace('_', ' ')} issue; {action} then has another "
        f"({what}): {explanation}",
        checked,
    )


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _verb(name: str, request: RecoveryRequest) -> str | None:
    """RAIDER's verb for a step's action (the robot's ``grasp`` -> ``pick``), or None."""
    verb = request.actions.verb_of(name) if request.actions is not None else None
    verb = verb or verb_for_name(name) or name
    if verb == "move_to":
        return verb
    if verb in ROLES:
        return verb
    found = action_for_name(verb)
    if found == "approach" and name.lower() != "approach":
        return "move_to"  # navigate, go_to...: a move, not approaching a person
    return found


def _unblock(scene: Scene, ref: str) -> None:
    """What the robot picked up blocks nothing any more (perception's ``blocked`` report)."""
    blocked = scene.data.get("blocked")
    if not isinstance(blocked, dict):
        return
    names = {ref.lower()}
    try:
        names.add(scene.by_id(ref).name.lower())
    except BtRaiderError:
        pass
    scene.data["blocked"] = {
        target: [b for b in blockers if str(b).lower() not in names]
        for target, blockers in blocked.items()
        if isinstance(blockers, list)
    }


def _known(scene: Scene, ref: str) -> bool:
    """Whether ``ref`` (from :func:`_ref`) is a place, an object or a person of ``scene``."""
    if ref in (scene.data.get("locations") or {}):
        return True
    for find in (scene.by_id, scene.human):
        try:
            find(ref)
        except BtRaiderError:
            continue
        return True
    return False


def _ref(scene: Scene, value: str) -> str:
    """The objectId a name stands for (exact matches only); places and people stay as named."""
    if value in (scene.data.get("locations") or {}):
        return value
    try:
        return scene.by_id(value).id
    except BtRaiderError:
        pass
    low = value.strip().lower()
    for o in scene.objects:
        if o.name.lower() == low:
            return o.id
    typed = scene.of_type(value.replace(" ", ""))
    return typed[0].id if len(typed) == 1 else value


# ----------------------------------------------------------------------------- after an answer


class AnswerCheck(py_trees.behaviour.Behaviour):
    """Verify the rest of a recovery plan once an answer is in, before the next robot action.

    Reads the answers of the asks before it from the blackboard (``/bt_raider/vars/<scope>/<var>``),
    submits ``verifier.verify(plan, request, answers)`` to a worker in ``initialise`` and polls
    in ``update`` (a tick never waits). SUCCESS when the proof holds; FAILURE with the reason
    when it does not (``final`` is set: the plan cannot work with this answer, and ``proof``
    has it), or when verification raised or passed its deadline (fails closed).

    Args:
        verifier: the :class:`Verifier`.
        plan: the plan being run.
        request: the request it answers.
        variables: the variables bound so far (the asks before this node).
        on_refuted: called with the proof when the plan is refuted (on the tick).
        deadline: seconds the verification may take.
        name: node name.
        scope: the recovery run whose variables it reads (as the compiler's ``scope``).
    """

    def __init__(
        self,
        verifier: Verifier,
        plan: RecoveryPlan,
        request: RecoveryRequest,
        variables: list[str],
        *,
        on_refuted: Any = None,
        deadline: float = ANSWER_CHECK_DEADLINE,
        name: str | None = None,
        scope: str = "",
    ) -> None:
        super().__init__(name or f"verify the plan with {', '.join(variables)}")
        self.scope = scope
        self.verifier = verifier
        self.plan = plan
        self.request = request
        self.variables = list(variables)
        self.on_refuted = on_refuted
        self.deadline = deadline
        self.proof: Proof | None = None
        self.final = False
        self._pending: worker.Pending[Proof] | None = None
        self._error: str | None = None
        self._vars = self.attach_blackboard_client(name=f"{self.name}/vars")
        for var in self.variables:
            self._vars.register_key(key=Var(var, scope).key, access=py_trees.common.Access.READ)

    @property
    def pending(self) -> worker.Pending[Proof] | None:
        """The background verification, while there is one."""
        return self._pending

    def initialise(self) -> None:
        self.proof = None
        self.final = False
        self._error = None
        answers: dict[str, str] = {}
        for var in self.variables:
            try:
                answers[var] = str(self._vars.get(Var(var, self.scope).key))
            except KeyError:
                continue  # not answered (e.g. an ask only the guard's re-check uses)
        self.feedback_message = f"verifying the plan with {answers}"
        self._pending = worker.submit(
            self._job, answers, deadline=self.deadline if self.deadline else None
        )

    def _job(self, answers: dict[str, str], *, cancel: threading.Event) -> Proof:
        return self.verifier.verify(self.plan, self.request, answers)

    def update(self) -> Status:
        pending = self._pending
        if pending is None:
            self.feedback_message = self._error or "no verification was started"
            return Status.FAILURE
        if not pending.done():
            if pending.overdue():
                pending.abandon()
                self._pending = None
                self.feedback_message = (
                    f"verifying the plan passed its deadline of {self.deadline:g} s: failing closed"
                )
                return Status.FAILURE
            return Status.RUNNING
        self._pending = None
        exc = pending.exception()
        if exc is not None:
            self.feedback_message = f"verifying the plan failed: {type(exc).__name__}: {exc}"
            return Status.FAILURE
        proof = pending.result()
        self.proof = proof
        if proof.ok:
            self.feedback_message = f"verified: {proof.reason}"
            return Status.SUCCESS
        self.final = True
        self.feedback_message = f"the plan cannot work with this answer: {proof.reason}"
        if callable(self.on_refuted):
            self.on_refuted(proof)
        return Status.FAILURE

    def terminate(self, new_status: Status) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
