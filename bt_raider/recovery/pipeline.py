"""The recovery pipeline: from an issue and its explanation to a py_trees subtree that fixes it.

RAIDER (section 3.5, Fig. 7) hands the checked action, the issue, its explanation and what the
robot holds to a recovery planner, which writes the corrective actions as Python-like code with
the interaction actions ``ask``/``say``. Here:

* a :class:`~bt_raider.recovery.contract.RecoveryRequest` carries that query;
* a :class:`~bt_raider.recovery.contract.RecoveryPlanner` (tiny protocol:
  ``propose(request) -> code``) writes the code:
  :class:`~bt_raider.recovery.symbolic.SymbolicRecoveryPlanner` (deterministic templates per issue
  category, offline) and :class:`~bt_raider.recovery.llm.LLMRecoveryPlanner` (RAIDER's few-shot prompt,
  ``llm/templates/recovery.j2``, on any chat model);
  ``bt_raider.planners.pddl_recovery.PddlRecoveryPlanner`` is a PDDL-based one;
* :class:`Recovery` asks the planner, checks the code with :mod:`bt_raider.recovery.safecode` (never
  executing it), feeds a rejected snippet's reason back to the planner a bounded number of
  times, and compiles the accepted program into a subtree.

The actions a plan may use are the robot's own (``Recovery(..., actions={"move_to": "navigate"})``,
see :mod:`bt_raider.recovery.robot_actions`); a plan calling anything else is rejected before it
starts, and so is a plan naming an object or place the scene does not have. Names become the
objectIds the robot receives (:attr:`RecoveryPlan.aliases`), and each ``x = ask(...)`` whose answer
an action uses is read against the question's candidates (:mod:`bt_raider.recovery.answers`).

Plans end with the recovered action itself on the resolved arguments (``pick(item)`` after
``item = ask(...)``), as RAIDER's examples do. That last call is the plan's *resume step*: it is
not run inside the subtree; the guard re-checks the action with those arguments and then runs
its own child (see :class:`~bt_raider.runtime.guards.RaiderGuard`).

Plans are *verified* before they start (``Recovery(..., verify=True)``, the default; see
:mod:`bt_raider.recovery.verify`): the robot actions must be applicable in sequence and leave
the recovered action's issue fixed, on a copy of the scene (:class:`~bt_raider.recovery.verify.
SceneVerifier`) or in the planner's own model (a planner with a ``verifier`` attribute, e.g.
``PddlRecoveryPlanner``, brings its own). A refuted plan goes back to the planner with the reason; what
depends on an answer is verified again once the answer is in, before the next robot action.
When every proposal is refuted, :meth:`Recovery.plan` raises
:class:`~bt_raider.recovery.verify.Unrecoverable` and :attr:`Recovery.unrecoverable` says why.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import py_trees

from bt_raider.checking.parse import action_for_name, same_action, split_action
from bt_raider.checking.verdict import Category
from bt_raider.errors import BtRaiderError, RecoveryCodeError, UsageError
from bt_raider.llm.replies import clean_code
from bt_raider.perception.people import PeoplePolicy, is_description
from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace, Intent, Reading, strip_article
from bt_raider.recovery.compiler import compile_program
from bt_raider.recovery.contract import (
    Proof,
    RecoveryPlan,
    RecoveryPlanner,
    RecoveryRequest,
    ambiguity_candidates,
    free_surface,
)
from bt_raider.recovery.robot_actions import RobotActions, verb_for_name
from bt_raider.recovery.safecode import (
    DEFAULT_ACTIONS,
    DEFAULT_LIMITS,
    INTERACTION_ACTIONS,
    CodeStep,
    Limits,
    Program,
    Ref,
    Vocabulary,
    parse_recovery,
)
from bt_raider.recovery.verify import (
    AnswerCheck,
    SceneVerifier,
    Unrecoverable,
    Verifier,
    answer_dependent,
    one_line,
)

if TYPE_CHECKING:
    from bt_raider.robot.actions import Robot
    from bt_raider.robot.human import HumanInterface


class Recovery:
    """Ask a planner for recovery code, accept it only through the whitelist, compile it.

    Args:
        planner: a :class:`RecoveryPlanner`.
        robot: runs the robot actions of the plan.
        human: answers ``ask`` and hears ``say``.
        actions: the robot's actions, under its own names: a mapping from RAIDER's verb to the
            robot's name (``{"move_to": "navigate", "pick": "grasp", "place": "put"}``), a list
            of the robot's action names (``registry.names()``, a PDDL domain's operators), an
            ``ActionRegistry`` or a :class:`~bt_raider.recovery.robot_actions.RobotActions`.
            The planner is told them (``request.actions``); code calling another action is
            rejected with the reason, which goes back to the planner. None: RAIDER's vocabulary.
        vocabulary: the allowed actions, when ``actions`` is not given (RAIDER's by default).
        max_retries: how many times rejected code goes back to the planner with the reason.
        limits: size limits for the code.
        on_success: called with ``(information, code)`` when a plan led to the action running
            (the guard's re-check found no issue). It is called on the tick, so it must return
            at once: use :meth:`bt_raider.recovery.fewshot.MemoryLink.record`, which queues the write.
        max_asks: how many times a question is asked before an answer that grounds to nothing
            fails the recovery (a "why?" counts too).
        verify: prove each plan before it starts (and again after each answer a later robot
            action depends on); a refuted plan is rejected with the reason. False: trust a
            plan once it parses (the behaviour before verification, for comparisons).
        contracts: the user's action contract
            (:class:`~bt_raider.checking.action_contract.ActionContracts`): plans ending in a
            new kind (``PressButton``) are verified by its declared preconditions.
        lexicon: the user's words (a :class:`~bt_raider.perception.lexicon.CategoryLexicon`,
            e.g. ``CategoryLexicon.load("lexicon.json")``): replies are read with it, as the
            check reads instructions with ``SymbolicReasoner(lexicon=...)``.
        policy: who may be asked what (a :class:`~bt_raider.perception.people.PeoplePolicy` or its JSON
            form, ``docs/domain.md``); None: the scene's ``policy`` key, else the default
            (residents are never sent on errands).
        verifier: the :class:`~bt_raider.recovery.verify.Verifier`; None: the planner's own
            (``planner.verifier``, e.g. ``PddlRecoveryPlanner``'s PDDL simulation) if it has one, else
            a :class:`~bt_raider.recovery.verify.SceneVerifier` with the symbolic checker.

    Attributes:
        unrecoverable: an :class:`~bt_raider.recovery.verify.Unrecoverable` (``action``,
            ``reason``) when nothing can be fixed, after the latest :meth:`plan`: every
            proposal was refuted (the one raised), the accepted plan only says why the action
            is impossible, or an answer left the plan unable to work; None when the latest
            plan can fix it. A replanner reads it (a Recovery shared by several guards holds
            the latest one: compare ``action`` with the guard's query).
        proved: proposals the verifier accepted; refuted: proposals it rejected (up front and
            after answers).
    """

    def __init__(
        self,
        planner: RecoveryPlanner,
        robot: Robot,
        human: HumanInterface,
        *,
        actions: Any = None,
        vocabulary: Vocabulary | None = None,
        max_retries: int = 2,
        limits: Limits = DEFAULT_LIMITS,
        on_success: Callable[[str, str], None] | None = None,
        max_asks: int = 3,
        verify: bool = True,
        verifier: Verifier | None = None,
        policy: Any = None,
        contracts: Any = None,
        lexicon: Any = None,
    ) -> None:
        if not callable(getattr(planner, "propose", None)):
            raise UsageError(f"planner must have propose(request, *, cancel), got {planner!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise UsageError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if not isinstance(max_asks, int) or isinstance(max_asks, bool) or max_asks < 1:
            raise UsageError(f"max_asks must be an integer >= 1, got {max_asks!r}")
        self.planner = planner
        self.robot = robot
        self.human = human
        self.actions = RobotActions.coerce(actions)
        if vocabulary is None:
            vocabulary = self.actions.vocabulary() if self.actions is not None else Vocabulary()
        self.vocabulary = vocabulary
        self.max_retries = max_retries
        self.limits = limits
        self.on_success = on_success
        self.max_asks = max_asks
        if verifier is not None and not callable(getattr(verifier, "verify", None)):
            raise UsageError(f"verifier must have verify(plan, request, answers), got {verifier!r}")
        self.verifier: Verifier | None = None
        if verify:
            own = getattr(planner, "verifier", None)
            if not callable(getattr(own, "verify", None)):
                own = None
            if verifier is None and own is None and contracts is not None:
                # The user's new kinds (PressButton) are checked by their declared contract.
                from bt_raider.checking.symbolic import SymbolicReasoner

                verifier = SceneVerifier(SymbolicReasoner(contracts=contracts))
            self.verifier = verifier or own or SceneVerifier()
        self.policy = (
            None if policy is None else PeoplePolicy.from_data(policy, "Recovery(policy=)")
        )
        self.lexicon = lexicon
        self.unrecoverable: Unrecoverable | None = None
        self.proved = 0
        self.refuted = 0
        self._count = threading.Lock()

    def plan(
        self, request: RecoveryRequest, *, cancel: threading.Event | None = None
    ) -> RecoveryPlan:
        """Get accepted code for ``request`` (thread-safe: nothing touches the tree).

        Code is rejected (and the reason fed back) when it is not in the whitelist, calls an
        action the robot does not have, names an object or place not in the scene, or (with
        verification) cannot restore the failed condition. A planner that proposes a refuted
        plan again is not asked any more (it has no other candidate).

        Raises:
            Unrecoverable: every proposal was rejected, the last by the verifier.
            RecoveryCodeError: every proposal was rejected (the message has the last reason),
                or planning was cancelled.
        """
        if self.actions is not None and request.actions is None:
            request = replace(request, actions=self.actions)
        if self.policy is not None and request.policy is None:
            request = replace(request, policy=self.policy)
        rejected: list[str] = []
        refuted: dict[str, str] = {}  # code -> why the verifier rejected it
        current = request
        vocabulary = self._parse_vocabulary(request)
        for attempt in range(1, self.max_retries + 2):
            if cancel is not None and cancel.is_set():
                raise RecoveryCodeError("recovery planning was cancelled")
            code = self.planner.propose(current, cancel=cancel)
            try:
                program = parse_recovery(clean_code(code), vocabulary, limits=self.limits)
                plan = self._in_user_names(self._split(request, program, attempt, rejected))
                self._check_actions(plan)
                plan.aliases = scene_aliases(plan, request)
                plan.answers = answer_spaces(plan, request, self.actions)
                if self.lexicon is not None:
                    for space in plan.answers.values():
                        space._lexicon = self.lexicon  # the user's words in replies too
            except RecoveryCodeError as exc:
                reason = self._hint(str(exc))
                rejected.append(reason)
                current = replace(current, feedback=reason)
                continue
            if plan.code in refuted:
                break  # the same plan again: the planner has no other candidate
            proof = self._prove(plan, request)
            if proof is not None and not proof.ok:
                reason = f"the plan {one_line(plan.code)!r} cannot work: {proof.reason}"
                refuted[plan.code] = reason
                rejected.append(reason)
                current = replace(current, feedback=reason)
                continue
            plan.proof = proof
            self.unrecoverable = _gives_up(plan) if plan.gives_up else None
            return plan
        if refuted and rejected[-1] in refuted.values():
            self.unrecoverable = Unrecoverable(
                f"no recovery can make {request.action!r} possible: {len(refuted)} plan(s) "
                f"refuted; {rejected[-1]}",
                reason=rejected[-1],
                action=request.action,
            )
            raise self.unrecoverable
        raise RecoveryCodeError(
            f"no acceptable recovery for {request.action!r} after {len(rejected)} proposal(s); "
            f"last rejection: {rejected[-1]}"
        )

    def _prove(self, plan: RecoveryPlan, request: RecoveryRequest) -> Proof | None:
        """The verifier's proof for ``plan`` (None without verification); fails closed."""
        if self.verifier is None:
            return None
        try:
            proof = self.verifier.verify(plan, request)
        except BtRaiderError as exc:
            proof = Proof(False, f"verification raised {type(exc).__name__}: {exc}")
        if not isinstance(proof, Proof):
            proof = Proof(False, f"the verifier returned {proof!r}, not a Proof")
        self._counted(proof)
        return proof

    def _counted(self, proof: Proof) -> None:
        with self._count:
            if proof.ok:
                self.proved += 1
            else:
                self.refuted += 1

    def _refuted_after_answer(self, plan: RecoveryPlan, proof: Proof) -> None:
        self._counted(proof)
        action = plan.request.action
        self.unrecoverable = Unrecoverable(
            f"the recovery of {action!r} cannot work with the answer given: {proof.reason}",
            reason=proof.reason,
            action=action,
        )

    def _parse_vocabulary(self, request: RecoveryRequest) -> Vocabulary:
        """The whitelist, plus the recovered action itself (the guard's child runs it)."""
        vocab = self.vocabulary
        verb = request.action_name
        if self.actions is None or not verb or verb in vocab:
            return vocab
        name = self.actions.name_for(verb)
        if name is not None and name in vocab:
            return vocab
        vocab = vocab.copy()
        try:
            vocab.register(verb, DEFAULT_ACTIONS.get(verb, ((0, 1, 2, 3), ""))[0])
        except RecoveryCodeError:
            pass  # not an identifier: the plan cannot end with it
        return vocab

    def _check_actions(self, plan: RecoveryPlan) -> None:
        """Every step that runs must be one of the robot's actions."""
        if self.actions is None:
            return
        scene = plan.request.scene if isinstance(plan.request.scene, Scene) else None
        for step in plan.run.steps:
            if step.action not in INTERACTION_ACTIONS and step.action not in self.actions:
                raise RecoveryCodeError(
                    f"line {step.line}: {step.to_code()[:60]} cannot run: "
                    f"{self.actions.missing(step.action)}"
                )
            serves = self.actions.skill_type(step.action)
            if serves is None or scene is None or not step.args or isinstance(step.args[0], Ref):
                continue
            ref = scene_ref(scene, str(step.args[0]))
            kind = None
            if ref is not None:
                try:
                    kind = scene.by_id(ref).type
                except BtRaiderError:
                    kind = None
            if kind is None or not re.sub(r"[\s_-]", "", kind.lower()).endswith(serves):
                # A skill for one type never serves another: a drawer is not a door.
                raise RecoveryCodeError(
                    f"line {step.line}: {step.to_code()[:60]} cannot run: {step.action} serves "
                    f"objects of type {serves}, and {step.args[0]!r} is "
                    + (f"a {kind}" if kind else "no object of the scene")
                )

    def _hint(self, reason: str) -> str:
        """Name the robot's own action when the code used RAIDER's name for it."""
        if self.actions is None or "unknown action" not in reason:
            return reason
        for name in _unknown_names(reason):
            return f"{reason} ({self.actions.missing(name)})"
        return reason

    def _split(
        self, request: RecoveryRequest, program: Program, proposals: int, rejected: list[str]
    ) -> RecoveryPlan:
        last = program.steps[-1]
        resume = None
        if last.action not in INTERACTION_ACTIONS and self._is_action(last.action, request):
            resume = last
        run = Program(program.steps[:-1] if resume else program.steps, program.source)
        return RecoveryPlan(
            request, program.to_code(), program, run, resume, proposals, list(rejected)
        )

    def _in_user_names(self, plan: RecoveryPlan) -> RecoveryPlan:
        """The resume step under the user's name for the action: the code shown is the code run.

        The recovered action itself may be written with RAIDER's verb (``approach`` for a
        query ``GoTo(medicine_counter)``): it becomes the robot's name for the verb
        (``navigate``; ``approach`` -> the robot's ``move_to`` when it has no ``approach``),
        or without ``actions=`` the name the user's query used (``GoTo``).
        """
        resume = plan.resume
        if resume is None:
            return plan
        name = self._user_name(resume.action, plan.request)
        if name == resume.action:
            return plan
        renamed = replace(resume, action=name)
        steps = tuple(renamed if s is resume else s for s in plan.program.steps)
        program = Program(steps, plan.program.source)
        return replace(plan, code=program.to_code(), program=program, resume=renamed)

    def _user_name(self, action: str, request: RecoveryRequest) -> str:
        written = _written_name(request.action)
        if written is not None and not (
            self._is_action(written, request) or (_moves(written) and _moves(action))
        ):
            written = None  # the query names another action: not a name for this one
        if self.actions is None:
            return written or action  # no vocabulary given: the user's query speaks for it
        if written is not None and written in self.actions:
            return written
        if action in self.actions:
            return action
        verb = self.actions.verb_of(action) or verb_for_name(action) or action
        if verb == "approach" and not self.actions.has("approach"):
            verb = "move_to"
        return self.actions.name_for(verb) or written or action

    def _is_action(self, name: str, request: RecoveryRequest) -> bool:
        """Whether ``name`` is the recovered action (RAIDER's name or the robot's for it)."""
        verb = request.action_name
        if same_action(name, verb):
            return True
        if self.actions is not None and self.actions.verb_of(name) is not None:
            return self.actions.verb_of(name) == verb
        return False

    def compile(
        self,
        plan: RecoveryPlan,
        *,
        name: str | None = None,
        scope: str = "",
        observe: Callable[[], Scene] | None = None,
    ) -> py_trees.behaviour.Behaviour:
        """The subtree of ``plan`` (call on the tree's thread: it registers blackboard clients).

        ``scope``: where the plan's variables live on the blackboard
        (``/bt_raider/vars/<scope>/<name>``, see :func:`~bt_raider.robot.actions.vars_key`);
        a guard passes one per recovery run. ``observe``: the scene now (the guard's source);
        with it a reply is read from where the robot stood when it asked, not where it stood
        when the plan was made (see :class:`AskedFrom`). When the plan's proof waited on an
        answer, an :class:`~bt_raider.recovery.verify.AnswerCheck` follows each ``ask`` whose
        answer a later step uses and that robot actions follow: the plan is verified with the
        answer before the next robot action starts.
        """
        answers: dict[str, Callable[[str], Any]] = {
            var: space.read if observe is None else AskedFrom(space, observe)
            for var, space in plan.answers.items()
        }
        tree = compile_program(
            plan.run,
            self.robot,
            self.human,
            name=name or f"Recovery {plan.request.action}",
            answers=answers,
            aliases=plan.aliases,
            because=plan.request.verdict.explanation,
            max_asks=self.max_asks,
            scope=scope,
        )
        if self.verifier is not None and plan.proof is not None and plan.proof.waits_on_answer:
            self._add_answer_checks(tree, plan, scope)
        return tree

    def _add_answer_checks(
        self, tree: py_trees.composites.Sequence, plan: RecoveryPlan, scope: str = ""
    ) -> None:
        steps = plan.run.steps
        if len(tree.children) != len(steps):
            return  # not the compiler's one node per step: nothing to anchor checks to
        used = answer_dependent(plan)
        bound: list[str] = []
        after: list[tuple[int, list[str]]] = []
        for i, step in enumerate(steps):
            if step.action != "ask" or step.target is None:
                continue
            bound.append(step.target)
            later = steps[i + 1 :]
            if step.target in used and any(s.action not in INTERACTION_ACTIONS for s in later):
                after.append((i + 1, list(bound)))
        for index, variables in reversed(after):
            check = AnswerCheck(
                self.verifier,  # type: ignore[arg-type]
                plan,
                plan.request,
                variables,
                on_refuted=partial(self._refuted_after_answer, plan),
                scope=scope,
            )
            tree.insert_child(check, index)

    def build(
        self, request: RecoveryRequest, *, cancel: threading.Event | None = None
    ) -> py_trees.behaviour.Behaviour:
        """:meth:`plan` then :meth:`compile`: the subtree for ``request``."""
        return self.compile(self.plan(request, cancel=cancel))

    def succeeded(self, plan: RecoveryPlan) -> None:
        """Report that ``plan`` worked (the guard calls this); feeds ``on_success``."""
        if self.on_success is not None:
            self.on_success(plan.request.information(), plan.code)


class AskedFrom:
    """Reads a reply from where the robot stood when it asked (sides and "nearest" are its own).

    A plan's answer space holds the scene the check saw; by the time the question is asked the
    robot may have turned (another branch of a Parallel moved it), and a person says "the one
    on the left" as the robot faces then. :meth:`asking` (called as the question is put) takes
    the scene of that moment; the reply is read from it, and from the scene when the reply came:
    if the robot moved in between and the two readings differ, the reply is unclear (asked
    again), never a guess. A scene that cannot be read leaves the plan's own.
    """

    def __init__(self, space: AnswerSpace, observe: Callable[[], Scene]) -> None:
        self.space = space
        self.observe = observe

    def _now(self) -> AnswerSpace:
        try:
            return self.space.seen_from(self.observe())
        except BtRaiderError:  # e.g. a NaN in the scene: the plan's view, as before
            return self.space

    def asking(self) -> Callable[[str], Reading]:
        """The reader for one asking of the question: the scene as it is put."""
        asked = self._now()

        def read(answer: str) -> Reading:
            first = asked.read(answer)
            second = self._now().read(answer)
            if (first.usable, first.value) != (second.usable, second.value):
                return Reading(
                    Intent.UNCLEAR,
                    answer,
                    reason="I moved while you answered, so I cannot tell which one you mean "
                    "from where it is; please say what it looks like.",
                )
            return first

        return read

    def __call__(self, answer: str) -> Reading:
        return self.asking()(answer)


def _gives_up(plan: RecoveryPlan) -> Unrecoverable:
    said = "; ".join(str(s.args[0]) for s in plan.program.steps if s.args)
    action = plan.request.action
    return Unrecoverable(
        f"the recovery plan only says why {action!r} cannot be done: {said}",
        reason=said,
        action=action,
    )


def resolve_resume(step: CodeStep, values: dict[str, Any]) -> list[Any]:
    """The resume step's arguments with variables replaced by their values."""
    return [values[a.name] if isinstance(a, Ref) else a for a in step.args]


#: ``GoTo(medicine_counter)``: a structured query, whose action name the user wrote.
_WRITTEN = re.compile(r"\s*([A-Za-z_]\w*)\s*\(.*\)\s*[.!?]?\s*", re.DOTALL)


def _moves(name: str) -> bool:
    """Whether an action name means going somewhere (``approach``, ``move_to``, ``GoTo``)."""
    verb = verb_for_name(name) or action_for_name(name)
    return verb in ("approach", "move_to")


def _written_name(query: str) -> str | None:
    """The action name a structured query is written with (``GoTo``), else None."""
    match = _WRITTEN.fullmatch(query)
    if match is None or match.group(1) in INTERACTION_ACTIONS:
        return None
    return match.group(1)


def _unknown_names(reason: str) -> list[str]:
    return re.findall(r"unknown action '([^']+)'", reason)


# ---------------------------------------------------------------------------- the scene's names


def scene_ref(scene: Scene, name: str, bindings: dict[str, str] | None = None) -> str | None:
    """What the robot receives for ``name``: an objectId, a location name, a person's id.

    Exact only (objectId, display name, a type with one object, location, person's id or
    name): a near miss or a phrase is None, so no invented place reaches the robot.
    """
    name = (bindings or {}).get(name, name)
    if not isinstance(name, str) or not name.strip():
        return None
    key = name.strip()
    if key in scene.locations:
        return key
    for o in scene.objects:
        if o.id == key or o.name.lower() == key.lower():
            return o.id
    typed = scene.of_type(key.replace(" ", ""))
    if len(typed) == 1:
        return typed[0].id
    for h in scene.humans:
        if h.id.lower() == key.lower() or (h.name or "").lower() == key.lower():
            return h.id
    return None


def scene_aliases(plan: RecoveryPlan, request: RecoveryRequest) -> dict[str, str]:
    """Each name a running step gives the robot -> what the robot receives.

    Raises:
        RecoveryCodeError: a name is no object, place or person of the scene (the message
            names the step and what the scene has near the robot). Without a scene (None, or
            not a :class:`~bt_raider.perception.scene.Scene`, e.g. a PDDL world) nothing is
            checked.
    """
    scene = request.scene
    if not isinstance(scene, Scene):
        return {}
    out: dict[str, str] = {}
    for step in plan.run.steps:
        if step.action in INTERACTION_ACTIONS:
            continue
        for arg in step.args:
            if not isinstance(arg, str):
                continue
            ref = scene_ref(scene, arg, request.bindings)
            several = scene.of_type(arg.replace(" ", "")) if ref is None else []
            if several:
                names = sorted(o.name for o in several)
                raise RecoveryCodeError(
                    f"line {step.line}: {step.to_code()[:60]} names {arg!r}, which is "
                    f"{len(names)} objects ({', '.join(names[:8])}): name one of them"
                )
            if ref is None:
                raise RecoveryCodeError(
                    f"line {step.line}: {step.to_code()[:60]} names {arg!r}, which is no "
                    f"object, place or person in the scene; {_nearby(scene)}"
                )
            out[arg] = ref
    return out


def _nearby(scene: Scene, limit: int = 12) -> str:
    spot = free_surface(scene)
    names = sorted(scene.objects, key=lambda o: scene.distance_to_robot(o.id))[:limit]
    text = "near the robot are " + ", ".join(o.name for o in names)
    if scene.locations:
        text += "; places: " + ", ".join(scene.locations)
    if spot is not None:
        text += f"; to put something down, use the {spot.name}"
    return text


# ---------------------------------------------------------------------------- answers


#: (RAIDER verb, argument index) that take a place or a person, not an object.
_PLACE_ARGS = {("move_to", 0), ("place", 1), ("approach", 0)}
_PERSON_ARGS = {("handover", 1)}


def answer_spaces(
    plan: RecoveryPlan, request: RecoveryRequest, actions: RobotActions | None = None
) -> dict[str, AnswerSpace]:
    """Variable -> what its ``ask`` is read against, for each answer an action uses.

    The ambiguity's candidates when the verdict found several objects for a phrase; else, by
    where the answer goes, the scene's places (and the people the action names), the people,
    or the scene's objects. Without a scene an answer that only the guard's re-check uses is
    passed on (the checker grounds it); one a robot step uses has no space, so its ask fails
    closed.
    """
    scene = request.scene if isinstance(request.scene, Scene) else None
    ambiguous: list[str] = []
    # An ambiguity for words left over offers the objects of their type (what the question
    # lists); one alone when it is the only one of its kind.
    grounding = ambiguity_candidates(request)
    unclear = request.verdict.category is Category.AMBIGUITY and scene is not None
    for phrase, found in sorted(grounding.items(), key=lambda kv: len(kv[1]) < 2):
        quoted = f"'{phrase}'" in request.verdict.explanation
        if len(found) >= 2 or (len(found) == 1 and unclear and quoted):
            ambiguous = list(found)
            break
    names = _people_named(request, scene)
    # The candidates' names when every one is a person (a None: one is not).
    people = [_person_name(scene, ref) for ref in ambiguous] if scene is not None else []
    out: dict[str, AnswerSpace] = {}
    for var in plan.program.variables:
        uses = [
            (step, i)
            for step in plan.program.steps
            if step.action not in INTERACTION_ACTIONS
            for i, arg in enumerate(step.args)
            if arg == Ref(var)
        ]
        if not uses:
            continue
        if scene is None:
            if all(step is plan.resume for step, _ in uses):
                out[var] = AnswerSpace.unverified(ambiguous, what=_what(None, ambiguous))
            continue
        if ambiguous and None not in people:
            out[var] = AnswerSpace.people(scene, [p for p in people if p is not None])
            continue
        if ambiguous:
            out[var] = AnswerSpace.objects(scene, ambiguous, what=_what(scene, ambiguous))
            continue
        roles = set()
        for step, i in uses:
            verb = (actions.verb_of(step.action) if actions else None) or step.action
            verb = verb_for_name(verb) or verb
            roles.add(
                "person"
                if (verb, i) in _PERSON_ARGS
                else "place"
                if (verb, i) in _PLACE_ARGS
                else "object"
            )
        question = next(
            (str(st.args[0]) for st in plan.program.steps if st.target == var and st.args), ""
        )
        if roles == {"person"} or (re.search(r"\bwho\b", question, re.I) and names):
            # "the user" is a description: whoever introduces herself may be it (the re-check
            # decides). "Bernadette" is a name: nobody else is a substitute.
            described = bool(names) and all(is_description(n) for n in names)
            expect = [] if described else names
            out[var] = AnswerSpace.people(scene, names, introductions=described, expect=expect)
        elif "place" in roles:
            out[var] = AnswerSpace.places(scene, people=names)
        else:
            out[var] = AnswerSpace.objects(scene, [o.id for o in scene.objects], what="object")
    # "the first one" counts in the order the question listed them, or names none.
    asked = {st.target: str(st.args[0]) for st in plan.program.steps if st.target and st.args}
    return {var: space.for_question(asked.get(var, "")) for var, space in out.items()}


def _person_name(scene: Scene, ref: str) -> str | None:
    """A person's recognised name (what the re-check grounds), else the id; None: no person."""
    try:
        person = scene.human(ref)
    except BtRaiderError:
        return None
    return person.name or person.id


def _people_named(request: RecoveryRequest, scene: Scene | None) -> list[str]:
    """Arguments of the action that name no object or place: the people it is about."""
    _, args = split_action(request.action, request.bindings)
    out = []
    for arg in args:
        arg = strip_article(arg)
        if scene is not None and not any(
            (h.name or "").lower() == arg.lower() for h in scene.humans
        ):
            if arg in scene.locations or scene_ref(scene, arg) is not None:
                continue
            if scene.of_type(arg.replace(" ", "")):
                continue  # a type with several objects: not a person
        if arg and arg.replace(" ", "").isalpha():
            out.append(arg)
    return out


def _what(scene: Scene | None, ids: list[str]) -> str:
    types = set()
    for i in ids:
        try:
            types.add(scene.by_id(i).type if scene is not None else i.split("|", 1)[0])
        except BtRaiderError:
            return "one"
    if len(types) != 1:
        return "one"
    return " ".join(re.findall(r"[A-Z][a-z]*|[a-z]+", types.pop())).lower() or "one"
