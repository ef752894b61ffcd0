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

``--scenario`` picks the world (:data:`~bt_raider.examples.medicine_delivery.scenario.VARIANTS`):
``default`` is the run above; in ``second-box`` Adriana's box is gone from the counter, no
recovery can bring it back, and the plan is replanned from what the robot observes (a second
box on the shelf) and delivered; in ``no-medicine`` there is no other box: the replanner finds
no plan, the robot tells Adriana why, and the tree ends in FAILURE. In both, the guarded plan
runs under a :class:`~bt_raider.planners.replan.Replanning` decorator that replans only what
cannot be fixed (:func:`~bt_raider.planners.replan.cannot_be_fixed`), then a node that says
why the delivery failed when it did; ``default`` keeps today's tree, the plan alone
(``run_scenario(replan=True)`` wraps it too).

Exit status: 0 when the medicine was handed over, 1 when the delivery failed (``no-medicine``
always: no plan exists).
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

from bt_raider.checking.contract import Query
from bt_raider.checking.registry import make_checker
from bt_raider.errors import QueryError, UsageError, need
from bt_raider.examples.medicine_delivery import scenario
from bt_raider.examples.medicine_delivery.report import Reporter, StepRecord
from bt_raider.perception.scene import Scene
from bt_raider.planners.pddl import plan_files
from bt_raider.planners.replan import (
    NoPlan,
    ObservedState,
    Replanner,
    Replanning,
    cannot_be_fixed,
    failed_guard,
)
from bt_raider.planners.tree import ActionRegistry, plan_to_tree, raider_guards
from bt_raider.recovery.fewshot import MemoryLink
from bt_raider.recovery.pipeline import Recovery
from bt_raider.recovery.symbolic import SymbolicRecoveryPlanner
from bt_raider.robot.actions import ActionBehaviour, SyncRobot
from bt_raider.robot.worker import wait_for_any
from bt_raider.runtime.guards import RaiderGuard
from bt_raider.simulation.simworld import SimWorld

DEFAULT_OUT = "./out/medicine_delivery"
#: Seconds the tree may take (a real LLM needs many calls per step).
TIME_LIMITS = {"symbolic": 60.0, "openai": 900.0}
TICK_PERIOD = 0.01
#: Under --view: slow enough to watch, and seconds to wait for the page before the first tick.
VIEW_TICK_PERIOD = 0.1
VIEW_WAIT_S = 30.0
#: New plans a run may make when a step cannot be fixed, and seconds each search may take.
MAX_REPLANS = 2
REPLAN_TIMEOUT = 30.0


# ---------------------------------------------------------------------------- the behaviours
def action_registry(robot: Any, bindings: Mapping[str, str]) -> Any:
    """The domain's four PDDL actions as robot actions on scene objects.

    ``(approach r from to)`` -> ``approach(to)``, ``(pick r item loc)`` -> ``pick(item)``,
    ``(approach_person r from p)`` -> ``approach(p)``, ``(handover r item p)`` ->
    ``handover(item, p)``.
    """
    registry = ActionRegistry()

    def factory(action: str, pick_args: Callable[[list[str]], list[str]]) -> Callable[[Any], Any]:
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


def step_query(step: Any, scene: Scene, where_checked: bool) -> str | Query:
    """What a guard checks for ``step``: its PDDL text; with ``where_checked``, a pick names
    the item where the plan says it is ("the Medicine on the Shelf_3")."""
    if not where_checked or step.name != "pick" or len(step.args) < 3:
        return step.text
    phrase = scenario.pick_phrase(step.args[2], scene)
    if phrase is None:
        return step.text
    return Query(step.text, bindings={step.args[1]: phrase})


def _guards(
    checker: Any, recovery: Recovery, world: SimWorld, max_attempts: int, where_checked: bool
) -> Any:
    """The ``guard`` of :func:`plan_to_tree`: each step in a RaiderGuard checking it on the
    world's scene; with ``where_checked``, a pick's query names where the item is."""
    if not where_checked:
        return raider_guards(
            checker, scene=world.observe, recovery=recovery, max_attempts=max_attempts
        )

    def wrap(child: Any, step: Any) -> Any:
        query = step_query(step, world.scene, where_checked=True)
        return RaiderGuard(
            child,
            query,
            checker,
            scene=world.observe,
            recovery=recovery,
            max_attempts=max_attempts,
        )

    return wrap


def why_sentence(replanning: Replanning) -> str:
    """What the robot tells Adriana when the delivery cannot go on."""
    error = replanning.error
    if isinstance(error, NoPlan):
        missing = {name for names in error.unreachable.values() for name in names}
        why = (
            "there is none left anywhere I know of, so no plan can get it to you"
            if scenario.ITEM in missing
            else "no plan can get it to you from here"
        )
    else:
        guard = failed_guard(replanning.decorated)
        verdict = getattr(guard, "verdict", None)
        why = verdict.explanation.rstrip(".") if verdict is not None else replanning.reason
    return f"I'm sorry, {scenario.USER_NAME}: I cannot deliver your medicine: {why}."


class SayWhy(py_trees.behaviour.Behaviour):
    """The delivery failed for good: tell the person why, then FAILURE (the tree's end).

    Args:
        replanning: the decorator whose failure this explains.
        human: who hears it (``say``).
        name: the node's name.
    """

    def __init__(
        self, replanning: Replanning, human: Any, name: str = "Say why the delivery failed"
    ) -> None:
        super().__init__(name=name)
        self.replanning = replanning
        self.human = human
        self.said: str | None = None

    def initialise(self) -> None:
        self.said = None

    def update(self) -> py_trees.common.Status:
        if self.said is None:
            self.said = why_sentence(self.replanning)
            self.human.say(self.said)
        self.feedback_message = self.said
        return py_trees.common.Status.FAILURE


# ---------------------------------------------------------------------------- the run
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
    variant: str = "default"
    replans: list[dict[str, Any]] = field(default_factory=list)
    said: str | None = None  # what the robot told the person when the delivery failed

    def to_json(self) -> dict[str, Any]:
        person = self.world.scene.human(scenario.PERSON)
        return {
            "scenario": "medicine-delivery",
            "variant": self.variant,
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
                "said": self.said,
            },
            "steps": [
                {
                    "step": s.step,
                    "status": s.status,
                    "feedback": s.feedback,
                    "verdicts": s.verdicts,
                    "recoveries": s.recoveries,
                    "replaced": s.replaced,
                }
                for s in self.steps
            ],
            "replans": self.replans,
            "events": self.events,
            "transcript": [
                {"kind": e.kind, "text": e.text, "answer": e.answer}
                for e in getattr(self.human, "transcript", [])
            ],
            "world_log": self.world.log,
        }


def _make_backend(backend: str, model: str | None, base_url: str | None) -> tuple[Any, Any]:
    """The checker and the recovery planner of a backend."""
    if backend == "symbolic":
        return make_checker("symbolic"), SymbolicRecoveryPlanner()
    if backend == "openai":
        # The openai SDK, and jinja2 for the LLM's prompts: only for --backend openai.
        from bt_raider.llm.chat import make_chat
        from bt_raider.recovery.llm import LLMRecoveryPlanner

        options: dict[str, Any] = {}
        if model:
            options["model"] = model
        if base_url:
            options["base_url"] = base_url
        return make_checker("openai", **options), LLMRecoveryPlanner(make_chat("openai", **options))
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
    variant: str = "default",
    replan: bool | None = None,
    wake_early: bool = True,
    world: Any = None,
    robot: Any = None,
    human: Any = None,
) -> DemoResult:
    """Plan, build the (guarded) tree and tick it in the simulated kitchen until it ends.

    Args:
        guarded: wrap every step in a RaiderGuard and the plan in a Replanning decorator
            (False runs the plan blindly).
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
        wake_early: tick as soon as a check or a recovery plan finishes instead of waiting
            for the rest of the period (False: a tick every ``tick_period``, as ``--view``
            runs to be watched).
        on_recorder: called with the run's TraceRecorder before the first tick (a live view).
        variant: the scenario (``default``, ``second-box``, ``no-medicine``; see
            :data:`~bt_raider.examples.medicine_delivery.scenario.VARIANTS`).
        replan: put the guarded plan under a Replanning decorator and a node that says why
            the delivery failed (None: as the scenario does; the default's tree is the plan).
        world: the world the report and the outcome read (None: a SimWorld of ``variant``;
            ``--ros2``: a mirror of the robot process's world, ``ros2_demo.RemoteWorld``).
        robot: who acts (None: the SimWorld through SyncRobot; ``--ros2``: a RosRobot).
        human: Adriana (None: scripted, or at the console with ``interactive``).

    Raises:
        ValueError: an unknown ``variant`` (the message lists them).
    """
    spec = scenario.variant(variant)
    link = _memory_link(memory) if guarded and memory is not None else None
    # pyperplan reads and plans the PDDL files in a child process: unified-planning, its
    # model and its engines (with scipy: over a second to import) stay out of this process.
    steps = plan_files(scenario.DOMAIN, scenario.PROBLEM, engine="pyperplan")
    if world is None:
        if variant == "default":
            world = SimWorld(Scene.load(scenario.SCENE))
        else:
            world = SimWorld(Scene(scenario.variant_scene(variant)))
    robot = robot if robot is not None else SyncRobot(world)
    if human is None:
        adriana = scenario.Adriana(world, spec.topics)
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
        guard = _guards(checker, recovery, world, max_attempts, spec.where_checked)
    else:
        echo("guards: off (the plan runs blindly)")
    plan = plan_to_tree(steps, registry, guard=guard, name="Deliver the medicine")
    replanning = None
    root: Any = plan
    if guarded and (spec.replans if replan is None else replan):
        # What the robot observes now, as the domain's facts: the state a new plan starts from.
        state = ObservedState(
            scenario.DOMAIN,
            scenario.PROBLEM,
            lambda: scenario.pddl_facts(world.observe(), spec.boxes),
            objects=scenario.places(world.scene),
        )
        replanner = Replanner(
            state,
            registry,
            engine="pyperplan",
            timeout=REPLAN_TIMEOUT,
            guard=guard,
            name="Deliver the medicine (replanned)",
        )
        replanning = Replanning(
            plan,
            replanner,
            max_replans=MAX_REPLANS,
            when=cannot_be_fixed,
            steps=steps,
            name="Replan what cannot be fixed",
        )
        root = py_trees.composites.Selector(
            "Deliver the medicine, or say why not",
            memory=False,
            children=[replanning, SayWhy(replanning, human)],
        )
    tree = py_trees.trees.BehaviourTree(root)
    tree.add_post_tick_handler(lambda _tree: world.tick())
    # Added after the world's handler, so each tick's world changes are in its record.
    from bt_raider.viewer.recorder import TraceRecorder

    recorder = TraceRecorder(tree, human=human, world=world, title="RAIDER medicine delivery")
    if on_recorder is not None:
        on_recorder(recorder)

    records = [StepRecord(step.text) for step in steps]
    reporter = Reporter(
        list(plan.children),
        world,
        human,
        records,
        echo,
        show_dialogue=not interactive,
        replanning=replanning,
    )
    reporter.recorder = recorder
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
            # A tick every period, not a period after each tick's own work; sooner when a
            # check or a recovery plan finishes (not under --view: that pace is for watching).
            wait = max(0.0, start + ticks * tick_period - time.monotonic())
            if wake_early:
                wait_for_any(wait)
            else:
                time.sleep(wait)
    elapsed = time.monotonic() - start
    recorder.finish()
    for rec, node in zip(records, reporter.guards, strict=True):
        rec.status = node.status.value
        rec.feedback = node.feedback_message

    recorded: list[str] = []
    if link is not None:
        link.close()  # writes what is queued
        recorded = list(link.recorded)
        echo(f"memory: {len(recorded)} successful recoveries recorded in {memory}")
        for err in link.errors:
            echo(f"memory: {err}")

    person = world.scene.human(scenario.PERSON)
    handed = set(person.raw.get("holding") or []) & set(spec.boxes)
    delivered = bool(handed) and not world.scene.holding
    said = root.children[1].said if replanning is not None else None
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
        variant=variant,
        replans=[dict(r) for r in replanning.history] if replanning is not None else [],
        said=said,
    )


# ---------------------------------------------------------------------------- outputs
def write_tree_picture(
    root: Any,
    out: Path,
    name: str = "medicine_delivery_tree",
    trace: Any = None,
    while_drawing: Callable[[], Any] | None = None,
) -> dict[str, str]:
    """The tree coloured by status with its recovery subtrees (``.dot``; PNG/SVG with
    graphviz) and the viewer page with ``trace`` inside (``.html``, always); ``while_drawing``
    is called while graphviz draws.

    Returns:
        format -> file written, plus ``"note"`` when a picture could not be made.
    """
    from bt_raider.viewer.pictures import write_pictures

    return write_pictures(root, out, name, trace=trace, while_drawing=while_drawing)


def summary_lines(result: DemoResult) -> list[str]:
    """The closing table: each step's verdicts and status, then the outcome."""
    lines = ["", "summary:"]
    width = max(len(s.step) for s in result.steps)
    # Where each new plan's steps start (the steps of every plan swapped in follow the last).
    starts, at = {}, len(result.plan)
    for record in result.replans:
        if "steps" in record:
            starts[at] = len(record["steps"])
            at += len(record["steps"])
    for i, rec in enumerate(result.steps):
        if i in starts:
            lines.append("  -- replanned from what the robot observed --")
        verdicts = " -> ".join(rec.categories) or "(not checked)"
        status = "REPLACED" if rec.replaced else rec.status
        lines.append(f"  {rec.step:<{width}}  {status:<8} {verdicts}")
    answer = "yes" if result.delivered else "no"
    lines.append(f"medicine handed over to Adriana: {answer}")
    if result.said:
        lines.append(f"the robot told her: {result.said}")
    return lines


# ---------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options (``bt-raider demo medicine-delivery --help``)."""
    parser.add_argument(
        "--scenario",
        choices=tuple(scenario.VARIANTS),
        default="default",
        help="which world: "
        + "; ".join(f"{v.name}: {v.summary}" for v in scenario.VARIANTS.values())
        + " (default: default)",
    )
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
    parser.add_argument(
        "--ros2",
        action="store_true",
        help="run the simulated robot as a separate ROS 2 process (actions on action servers, "
        "the scene on a topic, Adriana on a service; the ros2-interfaces extra, docs/ros2.md)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 when the medicine was handed over, 1 otherwise (always 1 for
    ``--scenario no-medicine``: no plan exists, and the robot says why)."""
    backend = getattr(args, "backend", "symbolic")
    guarded = not getattr(args, "no_guards", False)
    # A missing extra is one line before anything runs, not a failure halfway through.
    if guarded and backend == "openai":
        need("llm", "--backend openai")
    if guarded and not getattr(args, "no_memory", False):
        need("memory", "the demo's vector memory", alternative=" or pass --no-memory")
    title = "RAIDER medicine delivery (Izquierdo-Badiola et al., section 5.2)"
    print(f"{title}\nbackend: {backend if guarded else 'none (no guards)'}")
    variant = getattr(args, "scenario", "default") or "default"
    if variant != "default":
        print(f"scenario: {variant}: {scenario.variant(variant).summary}")
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
    parts: dict[str, Any] = {}
    stop_robot: Callable[[], Any] = lambda: None  # noqa: E731
    if getattr(args, "ros2", False):
        from bt_raider.examples.medicine_delivery import ros2_demo

        if getattr(args, "interactive", False):
            raise UsageError(
                "--interactive and --ros2 do not go together: with --ros2, "
                "Adriana answers in the robot's process"
            )

        parts, stop_robot = ros2_demo.start(variant)
    try:
        result = run_scenario(
            memory=memory,
            guarded=guarded,
            backend=backend,
            model=getattr(args, "model", None),
            base_url=getattr(args, "base_url", None),
            interactive=getattr(args, "interactive", False),
            tick_period=VIEW_TICK_PERIOD if watch else TICK_PERIOD,
            on_recorder=serve if watch else None,
            variant=variant,
            wake_early=not watch,
            **parts,
        )
    finally:
        stop_robot()  # the robot process ends on success, failure and Ctrl-C alike
    for line in summary_lines(result):
        print(line)
    written: dict[str, Path] = {}

    def write_trace() -> None:  # while graphviz draws the tree
        summary = result.to_json()
        summary.pop("events")  # the ticks hold every event, with its tick
        written["trace"] = result.recorder.write(out / "trace.json", indent=1, **summary)

    files = write_tree_picture(result.root, out, trace=result.recorder, while_drawing=write_trace)
    note = files.pop("note", None)
    result.files = files
    trace = written["trace"]
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
