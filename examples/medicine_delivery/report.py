"""What the medicine-delivery demo prints: each step's checks, recoveries, dialogue, actions,
world changes and failures as they happen, and the replans that swap a new plan in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import py_trees

if TYPE_CHECKING:
    from bt_raider.planners.replan import Replanning


@dataclass
class StepRecord:
    """What happened to one plan step."""

    step: str
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    recoveries: list[str] = field(default_factory=list)
    status: str = "INVALID"
    feedback: str = ""
    replaced: bool = False  # its plan was swapped out by a replan before it ran

    @property
    def categories(self) -> list[str]:
        return [v["category"] for v in self.verdicts]


class Reporter:
    """Watches the tree after each tick and turns what changed into printed lines and events.

    ``guards`` are the plan's step nodes; when ``replanning`` swaps a new plan in, its steps
    are appended (numbered after the old ones) and the replan is reported.
    """

    def __init__(
        self,
        guards: list[Any],
        world: Any,
        human: Any,
        records: list[StepRecord],
        echo: Any,
        *,
        show_dialogue: bool = True,
        replanning: Replanning | None = None,
    ) -> None:
        self.show_dialogue = show_dialogue  # a console person already sees the dialogue
        self.guards = list(guards)
        self.world = world
        self.human = human
        self.records = records
        self.echo = echo
        self.replanning = replanning
        self.recorder: Any = None  # a TraceRecorder: replans go on the viewer's timeline too
        self.events: list[dict[str, Any]] = []
        self._verdicts: list[Any] = [None] * len(guards)
        self._plans: list[Any] = [None] * len(guards)
        self._failed: set[int] = set()
        self._plan_node = replanning.decorated if replanning is not None else None
        self._current = list(range(len(guards)))  # indices of the plan now in the tree
        self._announced = 0  # replans whose start was reported
        self._replans_seen = 0  # replans whose outcome was reported
        self._log = 0
        self._said = 0
        self._shown = -1
        self._acting: int | None = 0
        self._t0 = time.monotonic()

    def _note(self, kind: str, text: str, **data: Any) -> None:
        """A replan on the recorder's timeline, on the replanning node."""
        if self.recorder is not None:
            self.recorder.event(kind, text, node=self.replanning, **data)

    def _event(self, kind: str, step: int | None, **data: Any) -> None:
        number = 0 if step is None else step + 1
        self.events.append(
            {"t": round(time.monotonic() - self._t0, 3), "kind": kind, "step": number, **data}
        )

    def _header(self, i: int | None) -> None:
        if i is not None and i != self._shown and i >= 0:
            self._shown = i
            self.echo(f"\n[{i + 1}/{len(self.records)}] {self.records[i].step}")

    def before_tick(self) -> None:
        """Note which step acts in the coming tick: the running guard, else the next one.

        A guard's first tick only submits its check, so every action, question and world
        change of a tick belongs to the guard that was already running (or to the first).
        While a new plan is being searched for, or once the plan is over, nothing does.
        """
        status = py_trees.common.Status
        replanning = self.replanning
        if replanning is not None and (
            replanning.pending is not None or replanning.status in (status.SUCCESS, status.FAILURE)
        ):
            self._acting = None
            return
        current = [i for i in self._current if self.guards[i].status == status.RUNNING]
        if current:
            self._acting = current[0]
        else:
            pending = [i for i in self._current if self.guards[i].status == status.INVALID]
            self._acting = pending[0] if pending else self._current[-1]

    def collect(self) -> None:
        """Report what changed in the last tick, in the order it happened."""
        for i, guard in enumerate(self.guards):
            verdict = getattr(guard, "verdict", None)
            if verdict is not None and verdict is not self._verdicts[i]:
                self._verdicts[i] = verdict
                self._header(i)
                data = verdict.to_json()
                data["questions"] = list(verdict.questions)
                data["elapsed_s"] = round(verdict.elapsed_s, 3)
                self.records[i].verdicts.append(data)
                label = "check   " if len(self.records[i].verdicts) == 1 else "re-check"
                self.echo(
                    f"  {label}  {verdict.final_response.value} / {verdict.category.value}: "
                    f"{verdict.explanation}"
                )
                self._event("verdict", i, **data)
            plan = getattr(guard, "plan", None)
            if plan is not None and plan is not self._plans[i]:
                self._plans[i] = plan
                self._header(i)
                self.records[i].recoveries.append(plan.code)
                self.echo("  recovery  " + "; ".join(plan.code.splitlines()))
                self._event("recovery", i, code=plan.code)
            if i == self._acting:
                self._interactions(i)
        for i in self._current:
            node = self.guards[i]
            if node.status == py_trees.common.Status.FAILURE and i not in self._failed:
                self._failed.add(i)
                self._header(i)
                self.echo(f"  failed    {node.feedback_message}")
        if self.replanning is not None:
            self._replanned()
        if self._acting is None:  # the tree's own nodes (the robot says why it failed)
            self._interactions(None)

    def _replanned(self) -> None:
        """Report a replan that started, what it observed and found, and a swapped-in plan."""
        assert self.replanning is not None  # called only when there is a Replanning
        history = self.replanning.history
        while self._announced < len(history):
            record = history[self._announced]
            self._announced += 1
            self.echo(f"\nreplanning: {record['reason']}")
            self._event("replan", None, reason=record["reason"])
            self._note("replan", f"replanning: {record['reason']}")
        while self._replans_seen < len(history):
            record = history[self._replans_seen]
            if "steps" not in record and "error" not in record:
                break  # still searching
            self._replans_seen += 1
            facts = record.get("facts")
            if facts is not None:
                self.echo(f"  observed  {', '.join(facts) or '(nothing)'}")
            if "error" in record:
                self.echo(f"  no plan   {record['error']}")
                self._event("no_plan", None, error=record["error"], facts=facts)
                self._note("no_plan", f"no plan: {record['error']}", facts=facts)
            elif self.replanning.status == py_trees.common.Status.FAILURE:
                # A plan came back, but the decorator refused it (the failed steps again).
                self.echo(f"  refused   {self.replanning.reason}")
                self._event("no_plan", None, error=self.replanning.reason, facts=facts)
                self._note("no_plan", self.replanning.reason, facts=facts)
            else:
                self._event("new_plan", None, steps=record["steps"], facts=facts)
                text = f"new plan from the observed state: {'; '.join(record['steps'])}"
                self._note("new_plan", text, steps=record["steps"], facts=facts)
        node = self.replanning.decorated
        if node is self._plan_node:
            return
        self._plan_node = node
        for i in self._current:
            if self.guards[i].status == py_trees.common.Status.INVALID:
                self.records[i].replaced = True
        first = len(self.guards)
        steps = self.replanning.steps or []
        self.echo(f"new plan ({len(steps)} steps, from the current state):")
        for k, (child, step) in enumerate(zip(node.children, steps, strict=True)):
            self.guards.append(child)
            self.records.append(StepRecord(step.text))
            self._verdicts.append(None)
            self._plans.append(None)
            self.echo(f"  {first + k + 1}. {step.text}")
        self._current = list(range(first, len(self.guards)))

    def _interactions(self, step: int | None) -> None:
        transcript = getattr(self.human, "transcript", [])
        for ex in transcript[self._said :]:
            self._event(ex.kind, step, text=ex.text, answer=ex.answer)
            if not self.show_dialogue:
                continue
            self._header(step)
            if ex.kind == "ask":
                self.echo(f"  robot asks: {ex.text}")
                self.echo(f"  person answers: {ex.answer}")
            elif ex.kind == "say":
                self.echo(f"  robot says: {ex.text}")
            else:
                self.echo(f"  robot waits for: {ex.text}")
        self._said = len(transcript)
        for entry in self.world.log[self._log :]:
            self._header(step)
            if entry["kind"] == "event":
                self.echo(f"  world     {entry['action']}")
                self._event("world", step, change=entry["action"])
                continue
            call = f"{entry['action']}({', '.join(entry['args'])})"
            if entry["ok"]:
                self.echo(f"  act       {call} -> {entry['result']}")
            else:
                self.echo(f"  act       {call} FAILED: {entry['error']}")
            self._event(
                "action",
                step,
                call=call,
                ok=entry["ok"],
                result=entry["result"],
                error=entry["error"],
            )
        self._log = len(self.world.log)
