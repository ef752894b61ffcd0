"""``bt-raider demo medicine-delivery``: RAIDER's assistive plan, end to end.

A PDDL domain and problem are read and solved by a real planner (pyperplan, in a child
process: :func:`bt_raider.planners.pddl.plan_files`); the four-step plan becomes a py_trees
tree whose every step is wrapped in a :class:`~bt_raider.runtime.guards.RaiderGuard`; the
tree is ticked against a :class:`~bt_raider.simulation.simworld.SimWorld` of the real
FloorPlan1 kitchen in which the five issues of RAIDER's section 5.2 are waiting. Each guard
checks its step, explains the issue, runs a recovery (asking Adriana when it must) and
re-checks, until the medicine is in her hands.

Printed step by step: the action, each verdict and its explanation, the recovery code, what the
robot says and asks and what Adriana answers or does, the action's result, and the outcome.
Written to ``--out``: ``trace.json`` (every tick: the format of
``bt_raider/viewer/trace.schema.json``, plus the outcome and a per-step summary), the tree
picture coloured by status with the recovery subtrees (``medicine_delivery_tree.png``/``.svg``
with graphviz, always the ``.dot``) and ``medicine_delivery_tree.html``, the viewer page with
the trace inside. ``--view`` serves that page live on 127.0.0.1 while the tree runs.

Exit status: 0 when the medicine was handed over, 1 when the delivery failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import py_trees

from bt_raider.checking.registry import make_checker
from bt_raider.errors import QueryError
from bt_raider.examples.medicine_delivery import scenario
from bt_raider.perception.scene import Scene
from bt_raider.planners.pddl import plan_files
from bt_raider.planners.tree import ActionRegistry, plan_to_tree, raider_guards
from bt_raider.recovery.fewshot import MemoryLink
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecovery
from bt_raider.runtime.actions import ActionBehaviour, SyncRobot
from bt_raider.simulation.simworld import SimWorld

DEFAULT_OUT = "./out/medicine_delivery"
#: Seconds the tree may take (a real LLM needs many calls per step).
TIME_LIMITS = {"symbolic": 60.0, "openai": 900.0}
TICK_PERIOD = 0.01
#: Under --view: slow enough to watch, and seconds to wait for the page before the first tick.
VIEW_TICK_PERIOD = 0.1
VIEW_WAIT_S = 30.0


# ---------------------------------------------------------------------------- the behaviours
def action_registry(robot: Any, bindings: Mapping[str, str]) -> Any:
    """The domain's four PDDL actions as robot actions on scene objects.

    ``(approach r from to)`` -> ``approach(to)``, ``(pick r item loc)`` -> ``pick(item)``,
    ``(approach_person r from p)`` -> ``approach(p)``, ``(handover r item p)`` ->
    ``handover(item, p)``.
    """
    registry = ActionRegistry()

    def factory(action: str, pick_args: Callable[[list[str]], list[str]]):
        def build(step: Any) -> Any:
            # ActionBehaviour acts on what its guard grounded each argument to, else on the
            # argument's scene name from the problem's bindings.
            return ActionBehaviour(
                action, pick_args(list(step.args)), robot, name=step.text, aliases=bindings
            )

        return build

    registry.register("approach", factory("approach", lambda a: [a[-1]]))
    registry.register("pick", factory("pick", lambda a: [a[1]]))
    registry.register("approach_person", factory("approach", lambda a: [a[-1]]))
    registry.register("handover", factory("handover", lambda a: [a[1], a[2]]))
    return registry


# ---------------------------------------------------------------------------- the run
@dataclass
class StepRecord:
    """What happened to one plan step."""

    step: str
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    recoveries: list[str] = field(default_factory=list)
    status: str = "INVALID"
    feedback: str = ""

    @property
    def categories(self) -> list[str]:
        return [v["category"] for v in self.verdicts]


@dataclass
class DemoResult:
    """The outcome of one run of the scenario."""

    delivered: bool
    status: str
    plan: list[str]
    steps: list[StepRecord]
    events: list[dict[str, Any]]
    world: Any
    human: Any
    root: Any
    ticks: int
    elapsed_s: float
    guarded: bool
    backend: str
    files: dict[str, str] = field(default_factory=dict)
    memory_recorded: list[str] = field(default_factory=list)
    recorder: Any = None  # the run's bt_raider.viewer.recorder.TraceRecorder

    def to_json(self) -> dict[str, Any]:
        person = self.world.scene.human(scenario.PERSON)
        return {
            "scenario": "medicine-delivery",
            "backend": self.backend,
            "guarded": self.guarded,
            "plan": self.plan,
            "outcome": {
                "delivered": self.delivered,
                "tree_status": self.status,
                "robot_holding": [o.name for o in self.world.scene.holding],
                "person": dict(person.raw),
                "ticks": self.ticks,
                "elapsed_s": round(self.elapsed_s, 3),
            },
            "steps": [
                {
                    "step": s.step,
                    "status": s.status,
                    "feedback": s.feedback,
                    "verdicts": s.verdicts,
                    "recoveries": s.recoveries,
                }
                for s in self.steps
            ],
            "events": self.events,
            "transcript": [
                {"kind": e.kind, "text": e.text, "answer": e.answer}
                for e in getattr(self.human, "transcript", [])
            ],
            "world_log": self.world.log,
        }


class _Reporter:
    """Watches the tree after each tick and turns what changed into printed lines and events."""

    def __init__(
        self,
        guards: list[Any],
        world: Any,
        human: Any,
        records: list[StepRecord],
        echo: Any,
        *,
        show_dialogue: bool = True,
    ) -> None:
        self.show_dialogue = show_dialogue  # a console person already sees the dialogue
        self.guards = guards
        self.world = world
        self.human = human
        self.records = records
        self.echo = echo
        self.events: list[dict[str, Any]] = []
        self._verdicts: list[Any] = [None] * len(guards)
        self._plans: list[Any] = [None] * len(guards)
        self._log = 0
        self._said = 0
        self._current = -1
        self._acting = 0
        self._t0 = time.monotonic()

    def _event(self, kind: str, step: int, **data: Any) -> None:
        self.events.append(
            {"t": round(time.monotonic() - self._t0, 3), "kind": kind, "step": step + 1, **data}
        )

    def _header(self, i: int) -> None:
        if i != self._current and i >= 0:
            self._current = i
            self.echo(f"\n[{i + 1}/{len(self.records)}] {self.records[i].step}")

    def before_tick(self) -> None:
        """Note which step acts in the coming tick: the running guard, else the next one.

        A guard's first tick only submits its check, so every action, question and world
        change of a tick belongs to the guard that was already running (or to the first).
        """

        status = py_trees.common.Status
        running = [i for i, g in enumerate(self.guards) if g.status == status.RUNNING]
        if running:
            self._acting = running[0]
        else:
            pending = [i for i, g in enumerate(self.guards) if g.status == status.INVALID]
            self._acting = pending[0] if pending else len(self.guards) - 1

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

    def _interactions(self, step: int) -> None:
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


def _make_backend(backend: str, model: str | None, base_url: str | None) -> tuple[Any, Any]:
    """The checker and the recovery planner of a backend."""
    if backend == "symbolic":
        return make_checker("symbolic"), SymbolicRecovery()
    if backend == "openai":
        # The openai SDK, and jinja2 for the LLM's prompts: only for --backend openai.
        from bt_raider.llm.chat import make_chat
        from bt_raider.recovery.llm import LLMRecovery

        options: dict[str, Any] = {}
        if model:
            options["model"] = model
        if base_url:
            options["base_url"] = base_url
        return make_checker("openai", **options), LLMRecovery(make_chat("openai", **options))
    raise QueryError(f"unknown backend {backend!r}: expected one of symbolic, openai")


def _memory_link(path: str | Path) -> MemoryLink:
    """The CDR memory, opened on its own thread from the start of the run.

    Importing it (torch) and loading the embedding model take seconds; started first, they
    overlap planning and the run instead of holding up the records at the end.
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)

    def open_memory() -> Any:
        # The memory loads torch and the embedding model: not with --no-memory.
        from bt_raider.memory.vector import VectorMemory

        return VectorMemory(path)

    return MemoryLink.start(open_memory)


def run_scenario(
    *,
    guarded: bool = True,
    backend: str = "symbolic",
    model: str | None = None,
    base_url: str | None = None,
    interactive: bool = False,
    stdin: Any = None,
    stdout: Any = None,
    max_attempts: int = 3,
    time_limit: float | None = None,
    memory: str | Path | None = None,
    echo: Callable[[str], Any] = print,
    tick_period: float = TICK_PERIOD,
    on_recorder: Callable[[Any], Any] | None = None,
) -> DemoResult:
    """Plan, build the (guarded) tree and tick it in the simulated kitchen until it ends.

    Args:
        guarded: wrap every step in a RaiderGuard (False runs the plan blindly).
        backend: ``symbolic`` (offline) or ``openai`` (any OpenAI-compatible endpoint).
        model: the model name for ``openai``.
        base_url: the endpoint for ``openai``.
        interactive: Adriana is typed at the console instead of scripted.
        stdin: console input (``sys.stdin`` by default).
        stdout: console output (``sys.stdout`` by default).
        max_attempts: recoveries each guard may try per step.
        time_limit: seconds before the run is stopped (per backend default when None).
        memory: a CDR vector-memory database: each successful recovery is recorded there,
            and an LLM recovery planner takes its few-shot examples from it (None: no memory).
        echo: where the step-by-step lines go.
        tick_period: seconds between ticks.
        on_recorder: called with the run's TraceRecorder before the first tick (a live view).
    """
    link = _memory_link(memory) if guarded and memory is not None else None
    # pyperplan reads and plans the PDDL files in a child process: unified-planning, its
    # model and its engines (with scipy: over a second to import) stay out of this process.
    steps = plan_files(scenario.DOMAIN, scenario.PROBLEM, engine="pyperplan")
    world = SimWorld(Scene.load(scenario.SCENE))
    robot = SyncRobot(world)
    adriana = scenario.Adriana(world)
    human = adriana.console(stdin, stdout) if interactive else adriana.scripted()
    registry = action_registry(robot, scenario.BINDINGS)

    echo(f"plan ({len(steps)} steps, pyperplan):")
    for i, step in enumerate(steps, 1):
        echo(f"  {i}. {step.text}")
    guard = None
    if guarded:
        checker, planner = _make_backend(backend, model, base_url)
        if link is not None and backend == "openai":
            planner.examples = link.examples  # the LLM recovery planner's few-shot examples
        recovery = Recovery(planner, robot, human, on_success=link.record if link else None)
        guard = raider_guards(
            checker, scene=world.observe, recovery=recovery, max_attempts=max_attempts
        )
    else:
        echo("guards: off (the plan runs blindly)")
    root = plan_to_tree(steps, registry, guard=guard, name="Deliver the medicine")
    tree = py_trees.trees.BehaviourTree(root)
    tree.add_post_tick_handler(lambda _tree: world.tick())
    # Added after the world's handler, so each tick's world changes are in its record.
    from bt_raider.viewer.recorder import TraceRecorder

    recorder = TraceRecorder(tree, human=human, world=world, title="RAIDER medicine delivery")
    if on_recorder is not None:
        on_recorder(recorder)

    records = [StepRecord(step.text) for step in steps]
    nodes = list(root.children)
    reporter = _Reporter(nodes, world, human, records, echo, show_dialogue=not interactive)
    limit = time_limit if time_limit is not None else TIME_LIMITS.get(backend, 60.0)
    start = time.monotonic()
    deadline = start + limit
    ticks = 0
    running = (py_trees.common.Status.RUNNING, py_trees.common.Status.INVALID)
    while root.status in running:
        reporter.before_tick()
        tree.tick()
        ticks += 1
        reporter.collect()
        if root.status == py_trees.common.Status.RUNNING:
            if time.monotonic() > deadline:
                root.stop(py_trees.common.Status.INVALID)  # cancels pending checks
                echo(f"\nstopped: the tree was still running after {limit:g} s")
                break
            time.sleep(tick_period)
    elapsed = time.monotonic() - start
    recorder.finish()
    for rec, node in zip(records, nodes, strict=True):
        rec.status = node.status.value
        rec.feedback = node.feedback_message
    failed = next((n for n in nodes if n.status == py_trees.common.Status.FAILURE), None)
    if failed is not None:
        echo(f"  failed    {failed.feedback_message}")

    recorded: list[str] = []
    if link is not None:
        link.close()  # writes what is queued
        recorded = list(link.recorded)
        echo(f"memory: {len(recorded)} successful recoveries recorded in {memory}")
        for err in link.errors:
            echo(f"memory: {err}")

    adrianas, _other = scenario.medicine_ids()
    person = world.scene.human(scenario.PERSON)
    delivered = adrianas in (person.raw.get("holding") or []) and not world.scene.holding
    return DemoResult(
        delivered=delivered,
        status=root.status.value,
        plan=[s.text for s in steps],
        steps=records,
        events=reporter.events,
        world=world,
        human=human,
        root=root,
        ticks=ticks,
        elapsed_s=elapsed,
        guarded=guarded,
        backend=backend if guarded else "none",
        memory_recorded=recorded,
        recorder=recorder,
    )


# ---------------------------------------------------------------------------- outputs
def write_tree_picture(
    root: Any, out: Path, name: str = "medicine_delivery_tree", trace: Any = None
) -> dict[str, str]:
    """The tree coloured by status with its recovery subtrees (``.dot``; PNG/SVG with
    graphviz) and the viewer page with ``trace`` inside (``.html``, always).

    Returns:
        format -> file written, plus ``"note"`` when a picture could not be made.
    """
    from bt_raider.viewer.pictures import write_pictures

    return write_pictures(root, out, name, trace=trace)


def summary_lines(result: DemoResult) -> list[str]:
    """The closing table: each step's verdicts and status, then the outcome."""
    lines = ["", "summary:"]
    width = max(len(s.step) for s in result.steps)
    for rec in result.steps:
        verdicts = " -> ".join(rec.categories) or "(not checked)"
        lines.append(f"  {rec.step:<{width}}  {rec.status:<8} {verdicts}")
    answer = "yes" if result.delivered else "no"
    lines.append(f"medicine handed over to Adriana: {answer}")
    return lines


# ---------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options (``bt-raider demo medicine-delivery --help``)."""
    parser.add_argument(
        "--interactive",
        action="store_true",
        help="play Adriana yourself: the robot's questions are asked on the console",
    )
    parser.add_argument(
        "--backend",
        choices=("symbolic", "openai"),
        default="symbolic",
        help="who checks and recovers: the offline symbolic reasoner (default) or an LLM",
    )
    parser.add_argument("--model", default=None, help="model name for --backend openai")
    parser.add_argument(
        "--base-url", default=None, help="OpenAI-compatible endpoint for --backend openai"
    )
    parser.add_argument(
        "--out", default=DEFAULT_OUT, help=f"where the trace and tree go (default {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--memory",
        default=None,
        metavar="DB",
        help="CDR memory database that records each successful recovery and gives the LLM "
        "recovery planner its few-shot examples (default: OUT/memory.db)",
    )
    parser.add_argument("--no-memory", action="store_true", help="run without the vector memory")
    parser.add_argument(
        "--no-guards",
        action="store_true",
        help="run the same plan without RAIDER guards (it fails at the first issue)",
    )
    parser.add_argument(
        "--view",
        action="store_true",
        help="watch the run live in a web page on 127.0.0.1 (served until Ctrl-C)",
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port of the --view page (default 0: any free port)"
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="with --view: print the URL, open no browser"
    )


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 when the medicine was handed over, 1 otherwise."""
    backend = getattr(args, "backend", "symbolic")
    guarded = not getattr(args, "no_guards", False)
    title = "RAIDER medicine delivery (Izquierdo-Badiola et al., section 5.2)"
    print(f"{title}\nbackend: {backend if guarded else 'none (no guards)'}")
    out = Path(getattr(args, "out", DEFAULT_OUT) or DEFAULT_OUT)
    memory = None
    if not getattr(args, "no_memory", False):
        memory = Path(getattr(args, "memory", None) or out / "memory.db")
    view: dict[str, Any] = {}

    def serve(recorder: Any) -> None:
        from bt_raider.viewer.server import ViewerServer, open_browser

        view["server"] = server = ViewerServer(recorder, port=getattr(args, "port", 0))
        print(
            f"viewer: {server.start()} (live: the run waits up to {VIEW_WAIT_S:g} s for the page)"
        )
        sys.stdout.flush()
        if not getattr(args, "no_browser", False) and not open_browser(server.url):
            print("viewer: no browser to open here; open the URL above in one")
        if not server.wait_for_viewer(VIEW_WAIT_S):
            print(f"viewer: no page connected in {VIEW_WAIT_S:g} s; running anyway")

    watch = getattr(args, "view", False)
    result = run_scenario(
        memory=memory,
        guarded=guarded,
        backend=backend,
        model=getattr(args, "model", None),
        base_url=getattr(args, "base_url", None),
        interactive=getattr(args, "interactive", False),
        tick_period=VIEW_TICK_PERIOD if watch else TICK_PERIOD,
        on_recorder=serve if watch else None,
    )
    for line in summary_lines(result):
        print(line)
    files = write_tree_picture(result.root, out, trace=result.recorder)
    note = files.pop("note", None)
    result.files = files
    summary = result.to_json()
    summary.pop("events")  # the ticks hold every event, with its tick
    trace = result.recorder.write(out / "trace.json", indent=1, **summary)
    for kind, path in sorted(files.items()):
        print(f"tree ({kind}): {path}")
    if note:
        print(note)
    print(f"trace: {trace}")
    sys.stdout.flush()
    status = 0 if result.delivered else 1
    if "server" in view:
        print(f"viewer: {view['server'].url} (Ctrl-C to stop)")
        sys.stdout.flush()
        try:
            while True:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            view["server"].stop()
    return status
