"""Run one cooperative episode: robots take turns, one simulation step each, until the goal holds.

Within its turn a robot perceives (its room, then its messages), then its tree is ticked until
it has an action under way -- planning, validating and deciding take no simulated time, but a
validation waiting for an answer is waited for *between* ticks, never inside one. Every message
a robot sends (its own, or an answer to a request) costs it one step, like C-WAH's "send
message" action. The metrics are those of REVECA's evaluation plus the costs of communicating.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bt_raider.cooperation.messaging import InProcessHub
from bt_raider.examples.cooperative_table.cooperative_agent import CooperativeAgent
from bt_raider.examples.cooperative_table.policies import POLICIES
from bt_raider.simulation.multirobot import HORIZON, MultiRobotSim

#: Ticks a robot may take in one turn without starting an action (a plan failing at once).
MAX_TICKS_PER_TURN = 60
#: Wall-clock seconds a turn may wait for a validation (model calls, answers).
MAX_WAIT_PER_TURN = 30.0


@dataclass(frozen=True)
class EpisodeResult:
    """What one episode cost."""

    seed: int
    policy: str
    noisy: bool
    success: bool
    steps: int
    travel: float
    false_plans: int
    messages: int
    characters: int
    commits: int
    requests: int


class Episode:
    """A simulation, a bus and one :class:`CooperativeAgent` per robot.

    Args:
        seed: the episode's seed.
        robots: how many robots.
        noisy: add ``dummies`` dummy objects (Noisy-C-WAH).
        dummies: how many dummy objects the noisy variant has.
        policy: a key of :data:`POLICIES`.
        horizon: step limit.
        goal: goal template (chosen by the seed when None).
        log: called with ``(step, robot, text)`` for actions, messages and decisions.
    """

    def __init__(
        self,
        seed: int,
        *,
        robots: int = 2,
        noisy: bool = False,
        dummies: int = 20,
        policy: str = "reveca",
        horizon: int = HORIZON,
        goal: str | None = None,
        log: Callable[[int, str, str], None] | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise KeyError(f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}")
        self.seed = seed
        self.noisy = noisy
        self.policy = POLICIES[policy]
        self.horizon = horizon
        self.sim = MultiRobotSim.generate(
            seed, robots=robots, dummies=dummies if noisy else 0, goal=goal
        )
        self.hub = InProcessHub()
        self._log = log
        team = list(self.sim.robots)
        self.agents = [
            CooperativeAgent(name, self.sim, self.hub.connect(name), self.policy, team, note=log)
            for name in team
        ]
        self._charged = dict.fromkeys(team, 0)
        self._events_seen = 0
        self._frames_seen = 0

    def _flush(self) -> None:
        if self._log is None:
            return
        for e in self.sim.events[self._events_seen :]:
            self._log(e.step, e.robot, e.text)
        self._events_seen = len(self.sim.events)
        for m in self.hub.log[self._frames_seen :]:
            to = f" -> {m.to}" if m.to else " -> all"
            self._log(m.step, m.sender, f"says{to} [{m.kind.value}]: {m.text}")
        self._frames_seen = len(self.hub.log)

    def _charge(self, name: str) -> None:
        """Messages cost their sender a step each (answers included)."""
        sent = self.hub.stats_of(name).messages
        due = sent - self._charged[name]
        if due > 0:
            self.sim.spend(name, due)
            self._charged[name] = sent

    def turn(self, agent: CooperativeAgent) -> None:
        """One robot's turn of the current step."""
        sim, name = self.sim, agent.name
        agent.perceive()
        self._charge(name)
        if not sim.busy(name):
            ticks = 0
            deadline = time.monotonic() + MAX_WAIT_PER_TURN
            while not sim.running(name):
                agent.tree.tick_once()
                if sim.running(name):
                    break
                if agent.validating:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.0002)  # the driver waits between ticks, never inside one
                    continue
                ticks += 1
                if ticks >= MAX_TICKS_PER_TURN:
                    break
            self._charge(name)
        sim.advance(name)
        # Observe the outcome of my own step, so what I answer meanwhile is up to date.
        agent.perceive()

    def run(self) -> EpisodeResult:
        sim = self.sim
        try:
            for a in self.agents:
                a.perceive()
            for a in self.agents:
                a.say_hello()  # REVECA's first communication case
            self._flush()
            while not sim.done() and sim.step < self.horizon:
                for a in self.agents:
                    self.turn(a)
                    self._flush()
                sim.end_step()
        finally:
            for a in self.agents:
                a.shutdown()
            self.hub.close()
        stats = self.hub.stats
        return EpisodeResult(
            seed=self.seed,
            policy=self.policy.name,
            noisy=self.noisy,
            success=sim.done(),
            steps=sim.step,
            travel=round(sim.travelled, 2),
            false_plans=sum(a.false_plans for a in self.agents),
            messages=stats.messages,
            characters=stats.characters,
            commits=sum(a.commits for a in self.agents),
            requests=sum(1 for m in self.hub.log if m.kind.value == "validation_request"),
        )


def run_episode(seed: int, **kwargs: Any) -> EpisodeResult:
    """Build and run one :class:`Episode`."""
    return Episode(seed, **kwargs).run()
