"""A REVECA robot in the multi-robot household: memory, planner, validator and its py_trees tree.

Each robot runs the same agent; a :class:`Policy` switches one part off (or on) for the
ablations of REVECA's Table 5 and user study:

===================  ========================================================================
``reveca``           relevance + relative proximity + trajectory-based validation
``no-validation``    the same, committing every plan at once ("w/o validation")
``always-ask``       the same, asking every collaborator before every plan ("always ask")
``full-comm``        the same, broadcasting what it perceives before every action
                     (the "full observation" ablation: forced communication)
``distance-greedy``  no relevance estimation: information ranked by proximity only
                     ("w/o relevance")
===================  ========================================================================

The tree of one robot (REVECA's plans: gograb, goput, gocheck, goexplore)::

    Sequence alice (memory)
      PlanNext                       adaptive planning: writes agent.task
      Selector execute (no memory)
        Sequence put apple on coffeetable   TaskIs(fetch apple?), SharedGoalGuard(
                                              EternalGuard(still worth it?,
                                                Sequence[commit, walk, grab]))
        ... one branch per sub-goal
        Sequence deliver    TaskIs(goput?), Sequence[walk to the goal location, put all + announce]
        Sequence check      TaskIs(gocheck?), SharedGoalGuard(Sequence[commit, walk, open])
        Sequence explore    TaskIs(goexplore?), SharedGoalGuard(Sequence[commit, walk])
        Sequence wait       TaskIs(wait?), wait

Every perception happens between ticks (:meth:`CooperativeAgent.perceive`); collaborators'
validation requests are answered from the task history by the bus's server.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider.cooperation.messages import (
    achieved_message,
    hello_message,
    serve_answers,
    status_message,
)
from bt_raider.cooperation.messaging import MessageBus
from bt_raider.cooperation.observations import Goal, InformationError, ObjectInfo, SubGoal
from bt_raider.cooperation.planning import WAIT, GreedyPlanner, Planner, PlanOption, plan_options
from bt_raider.cooperation.relevance import RelevanceEstimator, SymbolicRelevance
from bt_raider.cooperation.reveca_memory import RevecaMemory, Seen
from bt_raider.cooperation.trajectory import TrajectoryEstimator
from bt_raider.cooperation.validator import Validator
from bt_raider.errors import ActionFailed
from bt_raider.examples.cooperative_table.policies import Policy
from bt_raider.robot.actions import ActionBehaviour, ActionState, Progress
from bt_raider.runtime.shared_goal import SharedGoalGuard
from bt_raider.simulation.multirobot import CATALOGUE, MultiRobotSim, Observation


def infos_from(obs: Observation) -> list[ObjectInfo]:
    """The simulation's view as REVECA object information, acquired at ``obs.step``."""
    return [
        ObjectInfo(
            id=t.id,
            name=t.name,
            room=t.room,
            position=t.position,
            step=obs.step,
            kind=t.kind,
            category=t.category,
            actions=t.actions,
            states=t.states,
            holds=t.holds,
            parent=t.parent,
        )
        for t in obs.things
    ]


class SimRobot:
    """The :class:`bt_raider.robot.actions.Robot` protocol over one robot of a :class:`MultiRobotSim`."""

    def __init__(self, agent: CooperativeAgent) -> None:
        self.agent = agent
        self.sim = agent.sim
        self.name = agent.name
        self._next = 0
        self._current: tuple[int, str, tuple[str, ...]] | None = None

    def start(self, action: str, args: Sequence[Any]) -> int:
        self.agent.before_action(action)
        self.sim.begin(self.name, action, args)
        self._next += 1
        self._current = (self._next, action, tuple(str(a) for a in args))
        return self._next

    def poll(self, handle: Hashable) -> Progress:
        if self._current is None or self._current[0] != handle:
            return Progress(
                ActionState.FAILED, f"action {handle!r} is not {self.name}'s current one"
            )
        state, message = self.sim.status(self.name)
        if state == "running":
            return Progress(ActionState.RUNNING, message)
        _, action, args = self._current
        self._current = None
        if state == "succeeded":
            self.agent.after_action(action, args)
            return Progress(ActionState.SUCCEEDED, message)
        return Progress(ActionState.FAILED, message or f"{action} did not run")

    def cancel(self, handle: Hashable) -> None:
        if self._current is not None and self._current[0] == handle:
            self.sim.cancel(self.name)
            self._current = None

    def observe(self) -> Observation:
        return self.sim.observe(self.name)


class SimAction(ActionBehaviour):
    """An :class:`ActionBehaviour` whose arguments are computed when it starts (from the plan)."""

    def __init__(
        self, name: str, action: str, args: Callable[[], Sequence[Any]], robot: SimRobot
    ) -> None:
        super().__init__(action, [], robot, name=name)
        self._args = args

    def resolved_args(self) -> list[Any]:
        return list(self._args())


class PlanNext(py_trees.behaviour.Behaviour):
    """Adaptive planning: top-K information by relevance and relative proximity, then choose."""

    def __init__(self, agent: CooperativeAgent) -> None:
        super().__init__(f"{agent.name}: plan")
        self.agent = agent

    def update(self) -> Status:
        self.agent.replan()
        self.feedback_message = self.agent.task.label
        return Status.SUCCESS


class TaskIs(py_trees.behaviour.Behaviour):
    """Whether the current plan is this branch's."""

    def __init__(
        self, agent: CooperativeAgent, match: Callable[[PlanOption], bool], name: str
    ) -> None:
        super().__init__(name)
        self.agent = agent
        self.match = match

    def update(self) -> Status:
        ok = self.match(self.agent.task)
        self.feedback_message = f"plan is {self.agent.task.label}"
        return Status.SUCCESS if ok else Status.FAILURE


class Commit(py_trees.behaviour.Behaviour):
    """Marks the moment a plan is committed (the benchmark counts false plans here)."""

    def __init__(self, agent: CooperativeAgent) -> None:
        super().__init__(f"{agent.name}: commit")
        self.agent = agent

    def update(self) -> Status:
        self.feedback_message = self.agent.commit()
        return Status.SUCCESS


class PutAll(py_trees.behaviour.Behaviour):
    """[goput]: put every held goal object on the goal location, announcing each."""

    def __init__(self, agent: CooperativeAgent) -> None:
        super().__init__(f"{agent.name}: put held objects")
        self.agent = agent
        self._queue: list[str] = []
        self._handle: int | None = None

    def initialise(self) -> None:
        m = self.agent.memory
        with m.lock:
            self._queue = [i for i, n in m.held.items() if n in m.goal.objects]
        self._handle = None

    def update(self) -> Status:
        agent, m = self.agent, self.agent.memory
        if self._handle is not None:
            progress = agent.robot.poll(self._handle)
            if progress.state is ActionState.RUNNING:
                return Status.RUNNING
            oid = self._queue.pop(0)
            self._handle = None
            if progress.state is ActionState.FAILED:
                self.feedback_message = progress.message
                return Status.FAILURE
            agent.announce(m.goal.subgoal(m.history.placed.get(oid, oid), oid))
        if not self._queue:
            self.feedback_message = "all held goal objects put"
            return Status.SUCCESS
        try:
            self._handle = agent.robot.start("put", [self._queue[0], m.goal.location_id])
        except ActionFailed as exc:
            self.feedback_message = str(exc)
            return Status.FAILURE
        self.feedback_message = f"putting {self._queue[0]}"
        return Status.RUNNING

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and self._handle is not None:
            self.agent.robot.cancel(self._handle)
        self._handle = None


class CooperativeAgent:
    """One robot of the team.

    Args:
        name: the robot's name in the simulation.
        sim: the simulation.
        bus: the robot's connection to the others.
        policy: which parts of REVECA it uses.
        team: every robot's name.
        estimator: relevance estimator (default: the symbolic one; None under
            ``distance-greedy``).
        planner: picks the next plan (default greedy).
        trajectory: the validator's estimator (default symbolic).
        note: called with ``(step, robot, text)`` for every decision, for a log.
    """

    _count = 0

    def __init__(
        self,
        name: str,
        sim: MultiRobotSim,
        bus: MessageBus,
        policy: Policy,
        team: Sequence[str],
        *,
        estimator: RelevanceEstimator | None = None,
        planner: Planner | None = None,
        trajectory: TrajectoryEstimator | None = None,
        note: Callable[[int, str, str], None] | None = None,
    ) -> None:
        self.name = name
        self.sim = sim
        self.bus = bus
        self.policy = policy
        spec = sim.goal
        spot = sim.thing(spec.location_id)
        goal = Goal(
            spec.objects, spec.location, spec.relation, spec.location_id, spot.room, spot.position
        )
        if estimator is None and policy.relevance:
            estimator = SymbolicRelevance(CATALOGUE)
        self.memory = RevecaMemory(
            name,
            goal,
            sim.house,
            [n for n in team if n != name],
            estimator=estimator if policy.relevance else None,
        )
        self.validator = Validator(self.memory, bus, mode=policy.validation, estimator=trajectory)
        serve_answers(self.memory, bus)
        self.planner = planner or GreedyPlanner()
        self.robot = SimRobot(self)
        self.task: PlanOption = WAIT
        self._note = note or (lambda step, robot, text: None)
        # Robots simulated in one process share py_trees' blackboard: each gets its own
        # namespace, unique per agent so one episode's records never leak into the next.
        CooperativeAgent._count += 1
        self.namespace = f"/bt_raider/{name}/{CooperativeAgent._count}/shared_goals"
        self.commits = 0
        self.false_plans = 0
        #: Messages whose content could not be taken in (a malformed sub-goal), ignored.
        self.unreadable = 0
        self.guards: list[SharedGoalGuard] = []
        self.tree = self.build_tree()

    # -- the cognitive loop's pieces

    def note(self, text: str) -> None:
        self._note(self.sim.step, self.name, text)

    def perceive(self) -> None:
        """Observation time: what I see (relevance estimated for new information), then messages."""
        obs = self.sim.observe(self.name)
        self.memory.observe(
            obs.step,
            obs.room,
            obs.position,
            infos_from(obs),
            [Seen(r.name, r.room, r.position, r.held) for r in obs.robots],
            held=dict(obs.held),
        )
        for msg in self.bus.poll():
            try:
                self.memory.hear(msg)
            except InformationError as exc:  # a collaborator's bad sub-goal: not a crash
                self.unreadable += 1
                self.note(f"ignored a message from {msg.sender}: {exc}")

    def say_hello(self) -> None:
        """Start-up exchange: where I am and what I see."""
        self.bus.publish(hello_message(self.memory))

    def replan(self) -> None:
        options = plan_options(self.memory, k=self.policy.k, use_relevance=self.policy.relevance)
        choice = self.planner.choose(self.memory, options)
        if choice.label != self.task.label or choice.subgoal is not None:
            self.note(f"plan {choice.label}")
        self.task = choice

    def commit(self) -> str:
        sub = self.task.subgoal
        self.commits += 1
        if sub is None or sub.action != "put" or not sub.object_id:
            return "committed"
        taker = self.sim.taken_by(sub.object_id)
        if taker is not None and taker != self.name:
            self.false_plans += 1
            self.note(f"FALSE PLAN: {sub.text} ({sub.object_id}) was already taken by {taker}")
            return f"false plan: {taker} took it"
        self.note(f"commit {sub.text}")
        return f"committed to {sub.text}"

    def announce(self, subgoal: SubGoal) -> None:
        """REVECA's fourth communication case: tell everyone a sub-goal is achieved."""
        self.memory.history.completed.append(subgoal.text)
        self.bus.publish(achieved_message(self.memory, subgoal))

    def before_action(self, action: str) -> None:
        # Full communication: broadcast what I perceive before every action.
        if self.policy.broadcast and action != "wait":
            self.bus.publish(status_message(self.memory))

    def after_action(self, action: str, args: Sequence[str]) -> None:
        names = {a: self.sim.thing(a).name for a in args if a in self.sim.things}
        self.memory.record(action, args, names)

    def target_available(self) -> bool:
        """Whether the object of the current plan is still worth going for."""
        sub = self.task.subgoal
        if sub is None or not sub.object_id:
            return False
        m = self.memory
        with m.lock:
            if sub.object_id in m.held:
                return True
            if sub.target in m.done or sub.target in m.taken:
                return False
            return sub.object_id in m.observations

    def _target(self) -> ObjectInfo:
        sub = self.task.subgoal
        info = self.memory.observations.get(sub.object_id) if sub and sub.object_id else None
        if info is None:
            raise ActionFailed(f"{self.name} no longer knows where {sub} is")
        return info

    def _walk_to_target(self) -> list[Any]:
        info = self._target()
        return [info.room, info.position[0], info.position[1]]

    def _walk_to_goal(self) -> list[Any]:
        g = self.memory.goal
        assert g.location_position is not None  # __init__ gives the goal its spot's position
        return [g.location_room, g.location_position[0], g.location_position[1]]

    def _subgoal(self) -> SubGoal:
        """The plan's sub-goal, for a branch that runs only under a plan with one."""
        sub = self.task.subgoal
        assert sub is not None  # only waiting has none, and no branch acts on it
        return sub

    def _walk_to_room(self) -> list[Any]:
        room = self._subgoal().target
        x, y = self.sim.house.centre(room)
        return [room, x, y]

    # -- the tree

    def _shared(self, child: py_trees.behaviour.Behaviour, name: str) -> SharedGoalGuard:
        guard = SharedGoalGuard(
            child,
            lambda: self.task.subgoal,
            self.validator,
            name=name,
            namespace=self.namespace,
        )
        self.guards.append(guard)
        return guard

    def fetch(self, sub: SubGoal) -> py_trees.behaviour.Behaviour:
        """[gograb]: walk to the object and grab it, while it is still worth it."""
        r, n = self.robot, self.name
        steps = py_trees.composites.Sequence(
            f"{n}: fetch {sub.target}",
            memory=True,
            children=[
                Commit(self),
                SimAction(f"{n}: walk to {sub.target}", "walk", self._walk_to_target, r),
                SimAction(
                    f"{n}: grab {sub.target}", "grab", lambda: [self._subgoal().object_id], r
                ),
            ],
        )
        return py_trees.decorators.EternalGuard(
            name=f"{n}: {sub.target} still to fetch", child=steps, condition=self.target_available
        )

    def build_tree(self) -> py_trees.behaviour.Behaviour:
        n, r = self.name, self.robot
        branches: list[py_trees.behaviour.Behaviour] = []

        def fetching(key: str) -> Callable[[PlanOption], bool]:
            # A fetch always has a sub-goal (PlanOption.kind).
            return lambda t: t.kind == "fetch" and t.subgoal is not None and t.subgoal.key == key

        for sub in self.memory.goal.subgoals:
            key = sub.key
            branches.append(
                py_trees.composites.Sequence(
                    f"{n}: {sub.text}",
                    memory=True,
                    children=[
                        TaskIs(
                            self,
                            fetching(key),
                            f"{n}: plan is to fetch for {key}?",
                        ),
                        self._shared(self.fetch(sub), f"{n}: shared {sub.text}"),
                    ],
                )
            )
        deliver = py_trees.composites.Sequence(
            f"{n}: goput",
            memory=True,
            children=[
                SimAction(
                    f"{n}: walk to {self.memory.goal.location}", "walk", self._walk_to_goal, r
                ),
                PutAll(self),
            ],
        )
        check = py_trees.composites.Sequence(
            f"{n}: check container",
            memory=True,
            children=[
                Commit(self),
                SimAction(f"{n}: walk to container", "walk", self._walk_to_target, r),
                SimAction(f"{n}: open container", "open", lambda: [self._subgoal().object_id], r),
            ],
        )
        explore = py_trees.composites.Sequence(
            f"{n}: explore room",
            memory=True,
            children=[Commit(self), SimAction(f"{n}: walk to room", "walk", self._walk_to_room, r)],
        )

        def branch(name: str, label: str, task: str, body: Any) -> py_trees.composites.Sequence:
            """Run ``body`` when the planned task is of kind ``task``."""
            is_task = TaskIs(self, lambda t: t.kind == task, f"{n}: plan is {label}?")
            return py_trees.composites.Sequence(
                f"{n}: {name}", memory=True, children=[is_task, body]
            )

        branches += [
            branch("deliver", "goput", "deliver", deliver),
            branch("check", "check", "check", self._shared(check, f"{n}: shared check")),
            branch("explore", "explore", "explore", self._shared(explore, f"{n}: shared explore")),
            branch("wait", "wait", "wait", SimAction(f"{n}: wait", "wait", list, r)),
        ]
        return py_trees.composites.Sequence(
            n,
            memory=True,
            children=[
                PlanNext(self),
                py_trees.composites.Selector(f"{n}: execute", memory=False, children=branches),
            ],
        )

    @property
    def validating(self) -> bool:
        return any(g.validating for g in self.guards)

    def shutdown(self) -> None:
        """Stop the tree (cancelling validations) and forget this agent's blackboard records."""
        self.tree.stop(Status.INVALID)
        storage = py_trees.blackboard.Blackboard.storage
        for key in [k for k in storage if k.startswith(self.namespace + "/")]:
            py_trees.blackboard.Blackboard.unset(key)


class _Condition(py_trees.behaviour.Behaviour):
    def __init__(self, name: str, test: Callable[[], bool]) -> None:
        super().__init__(name)
        self.test = test

    def update(self) -> Status:
        ok = bool(self.test())
        self.feedback_message = "yes" if ok else "no"
        return Status.SUCCESS if ok else Status.FAILURE
