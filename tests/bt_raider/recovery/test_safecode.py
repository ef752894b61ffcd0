"""The recovery-code whitelist: what it accepts, how it rejects, and the subtree it compiles."""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import Any

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.errors import RecoveryCodeError
from bt_raider.recovery.answers import AnswerSpace, Candidate
from bt_raider.recovery.compiler import compile_program
from bt_raider.recovery.fewshot import load_examples
from bt_raider.recovery.safecode import DEFAULT_ACTIONS, Limits, Ref, Vocabulary, parse_recovery
from bt_raider.robot.actions import VARS_NAMESPACE, ActionBehaviour, ActionState, Progress, Var
from bt_raider.robot.human import (
    GroundedAsk,
    SayBehaviour,
    ScriptedHuman,
    WaitFor,
)


class ScriptedRobot:
    """A Robot whose actions take ``polls`` polls and may be set to fail."""

    def __init__(self, polls: int = 1, fail: Sequence[str] = ()) -> None:
        self.polls = polls
        self.fail = set(fail)
        self.started: list[tuple[str, list[Any]]] = []
        self._left: dict[int, int] = {}

    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        self.started.append((action, list(args)))
        handle = len(self.started)
        self._left[handle] = self.polls
        return handle

    def poll(self, handle: Hashable) -> Progress:
        action, args = self.started[handle - 1]  # type: ignore[operator]
        self._left[handle] -= 1  # type: ignore[index]
        if self._left[handle] > 0:  # type: ignore[index]
            return Progress(ActionState.RUNNING, f"{action} running")
        if action in self.fail:
            return Progress(ActionState.FAILED, f"{action} failed")
        return Progress(ActionState.SUCCEEDED, f"{action}({', '.join(map(str, args))}) done")

    def cancel(self, handle: Hashable) -> None:
        self._left.pop(handle, None)  # type: ignore[call-overload]

    def observe(self) -> None:
        return None


def settle(root: py_trees.behaviour.Behaviour, timeout: float = 5.0) -> None:
    """Wait until no node of ``root`` has background work in flight (never inside a tick)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        busy = [n for n in root.iterate() if getattr(n, "pending", None) is not None]
        if all(n.pending.done() for n in busy):
            return
        time.sleep(0.001)
    raise AssertionError("background work did not finish")


def run(root: py_trees.behaviour.Behaviour, max_ticks: int = 50) -> int:
    for i in range(1, max_ticks + 1):
        root.tick_once()
        if root.status != Status.RUNNING:
            return i
        settle(root)
    raise AssertionError(f"{root.name} still RUNNING after {max_ticks} ticks")


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


# ------------------------------------------------------------------------- vocabulary


def test_default_vocabulary_is_raiders() -> None:
    vocab = Vocabulary()
    assert set(vocab.names) == set(DEFAULT_ACTIONS)
    assert vocab.arities("place") == (1, 2)
    assert vocab.arities("handover") == (2,)
    assert "place(1-2)" in vocab.describe() and "ask(1)" in vocab.describe()
    assert 'ask("question")' in vocab.usage()


def test_register_more_actions_and_reject_bad_ones() -> None:
    vocab = Vocabulary().register("wipe", 1, usage="wipe(surface)").register("pour", [1, 2])
    assert parse_recovery('wipe("CounterTop")\npour("Mug", "Sink")', vocab).steps[1].args == (
        "Mug",
        "Sink",
    )
    with pytest.raises(RecoveryCodeError, match="unknown action 'wipe'"):
        parse_recovery('wipe("CounterTop")')  # the default vocabulary does not know it
    for bad in ("__import__", "_private", "not an id", "class"):
        with pytest.raises(RecoveryCodeError, match="action name"):
            Vocabulary().register(bad, 1)
    with pytest.raises(RecoveryCodeError, match="interaction action"):
        Vocabulary().register("ask", 2)
    with pytest.raises(RecoveryCodeError, match="arity"):
        Vocabulary().register("wipe", 9)
    bare = Vocabulary(defaults=False)
    assert set(bare.names) == {"ask", "say", "wait_for"}
    with pytest.raises(RecoveryCodeError, match="unknown action 'pick'"):
        parse_recovery('pick("Apple")', bare)


# ------------------------------------------------------------------------- parsing


def test_raider_fig7_answer_parses_to_steps() -> None:
    code = (
        'move_to("free_table")\nplace("egg")\n'
        'tomato_loc = ask("where is the unsliced tomato?")\n'
        'move_to(tomato_loc)\npick("tomato")\nmove_to("pan")\nplace("tomato")'
    )
    program = parse_recovery(code)
    assert [s.action for s in program.steps] == [
        "move_to",
        "place",
        "ask",
        "move_to",
        "pick",
        "move_to",
        "place",
    ]
    assert program.steps[2].target == "tomato_loc"
    assert program.steps[3].args == (Ref("tomato_loc"),)
    assert program.variables == ("tomato_loc",)
    assert program.steps[6].line == 7
    assert parse_recovery(program.to_code()).steps == program.steps  # canonical form round-trips


@pytest.mark.parametrize("example", load_examples(), ids=lambda e: e["category"])
def test_every_builtin_example_is_accepted(example: dict) -> None:
    program = parse_recovery(example["goal"])
    assert len(program) == len(example["goal"].splitlines())


def test_numbers_and_negative_numbers() -> None:
    vocab = Vocabulary().register("turn", 1)
    assert parse_recovery("turn(-90)\nturn(12.5)\nwait_for(3)", vocab).steps[0].args == (-90,)
    with pytest.raises(RecoveryCodeError, match="wait_for"):
        parse_recovery("wait_for(100000)")
    with pytest.raises(RecoveryCodeError, match="wait_for"):
        parse_recovery("wait_for(0)")
    with pytest.raises(RecoveryCodeError, match="number this large"):
        parse_recovery("turn(1e300)", vocab)
    with pytest.raises(RecoveryCodeError, match="bool constant"):
        parse_recovery("turn(True)", vocab)


def test_rejections_name_line_construct_and_options() -> None:
    cases = {
        'say("hi")\nimport os': ("line 2", "import", "allowed:"),
        'x = ask("?")\npick(y)': ("line 2", "using 'y' before it is assigned", 'y = ask("...")'),
        'pick("Apple")\nfly("away")': (
            "line 2",
            "unknown action 'fly'",
            "expected one of ask, say",
        ),
        'pick("A", "B")': ("line 1", "pick() takes 1 argument(s), got 2", "place(1-2)"),
        'x = pick("Apple")': ("line 1", "assigning the result of pick()", "only ask() returns"),
        'pick(item="Apple")': ("line 1", "keyword argument item=", "by position"),
        'os.system("ls")': ("line 1", "attribute access", "allowed:"),
        'say(f"{x}")': ("line 1", "f-string", "allowed:"),
        "for i in []: pass": ("line 1", "for loop", "allowed:"),
        'pick("a",': ("line 1", "syntax error", "one call per line"),
        'x = ask("a"), pick(x)': ("line 1", "assigning a tuple", "only the answer of ask"),
        "__x = ask('?')": ("line 1", "dunder or private", ""),
        'print = ask("?")': ("line 1", "Python builtin", ""),
        'say = ask("?")': ("line 1", "the name of an action", ""),
        '"just a string"': ("line 1", "a bare constant", "allowed:"),
    }
    for code, parts in cases.items():
        with pytest.raises(RecoveryCodeError) as info:
            parse_recovery(code)
        for part in parts:
            assert part in str(info.value), (code, str(info.value))


def test_limits() -> None:
    with pytest.raises(RecoveryCodeError, match="characters, more than the limit"):
        parse_recovery('say("x")\n' * 1000)
    with pytest.raises(RecoveryCodeError, match="statements, more than the limit of 3"):
        parse_recovery('say("a")\n' * 4, limits=Limits(max_statements=3))
    with pytest.raises(RecoveryCodeError, match="string of 301 characters"):
        parse_recovery(f'say("{"a" * 301}")')
    with pytest.raises(RecoveryCodeError, match="empty"):
        parse_recovery("# only a comment\n")
    with pytest.raises(RecoveryCodeError, match="must be a string"):
        parse_recovery(b'say("x")')  # type: ignore[arg-type]
    assert parse_recovery(f'say("{"a" * 300}")').steps[0].args[0] == "a" * 300


def test_only_says() -> None:
    assert parse_recovery('say("I cannot pick the microwave.")').only_says
    assert not parse_recovery('say("a")\npick("b")').only_says


# ------------------------------------------------------------------------- compiling


def test_compile_paper_example_to_node_sequence() -> None:
    robot, human = ScriptedRobot(), ScriptedHuman(["on the counter"])
    code = (
        'knife_loc = ask("Where is the knife?")\nmove_to(knife_loc)\npick("knife")\n'
        'move_to("lettuce")\nslice("lettuce")'
    )
    # The answer grounds to the counter's objectId before move_to gets it.
    counter = AnswerSpace([Candidate("CounterTop|1", "CounterTop", ("CounterTop", "counter"))])
    tree = compile_program(parse_recovery(code), robot, human, answers={"knife_loc": counter.read})
    assert isinstance(tree, py_trees.composites.Sequence) and tree.memory
    kinds = [type(c) for c in tree.children]
    assert kinds == [
        GroundedAsk,
        ActionBehaviour,
        ActionBehaviour,
        ActionBehaviour,
        ActionBehaviour,
    ]
    assert tree.children[0].var == "knife_loc"
    assert tree.children[1].args == [Var("knife_loc")]
    assert [c.name for c in tree.children][:2] == [
        "knife_loc = ask('Where is the knife?')",
        "move_to(knife_loc)",
    ]
    ticks = run(tree)
    assert tree.status == Status.SUCCESS
    assert ticks == 2  # tick 1 submits the question; tick 2 reads the answer, runs the rest
    assert robot.started == [
        ("move_to", ["CounterTop|1"]),
        ("pick", ["knife"]),
        ("move_to", ["lettuce"]),
        ("slice", ["lettuce"]),
    ]
    bb = py_trees.blackboard.Blackboard
    assert bb.get(f"{VARS_NAMESPACE}/knife_loc") == "CounterTop|1"
    assert [e.kind for e in human.transcript] == ["ask"]


def test_compile_interactions_and_run_tick_by_tick() -> None:
    robot, human = ScriptedRobot(polls=2), ScriptedHuman({"who": "Adriana"})
    code = (
        'say("Adriana, please look at me.")\nwait_for("Adriana looking at me")\n'
        'name = ask("Hello, who are you?")\nsay(name)\nhandover("medicine", name)'
    )
    people = AnswerSpace.people(None, ["Adriana"])
    tree = compile_program(
        parse_recovery(code), robot, human, name="fix", answers={"name": people.read}
    )
    assert [type(c) for c in tree.children] == [
        SayBehaviour,
        WaitFor,
        GroundedAsk,
        SayBehaviour,
        ActionBehaviour,
    ]
    say, wait, ask, say_name, handover = tree.children
    expected = [
        # (say, wait, ask, say_name, handover) after each tick
        (Status.RUNNING, Status.INVALID, Status.INVALID, Status.INVALID, Status.INVALID),
        (Status.SUCCESS, Status.RUNNING, Status.INVALID, Status.INVALID, Status.INVALID),
        (Status.SUCCESS, Status.SUCCESS, Status.RUNNING, Status.INVALID, Status.INVALID),
        (Status.SUCCESS, Status.SUCCESS, Status.SUCCESS, Status.RUNNING, Status.INVALID),
        (Status.SUCCESS, Status.SUCCESS, Status.SUCCESS, Status.SUCCESS, Status.RUNNING),
        (Status.SUCCESS, Status.SUCCESS, Status.SUCCESS, Status.SUCCESS, Status.SUCCESS),
    ]
    for tick, statuses in enumerate(expected, start=1):
        tree.tick_once()
        got = tuple(n.status for n in (say, wait, ask, say_name, handover))
        assert got == statuses, f"tick {tick}: {got}"
        assert tree.status == (Status.SUCCESS if tick == len(expected) else Status.RUNNING)
        settle(tree)
    assert robot.started == [("handover", ["medicine", "Adriana"])]
    assert human.transcript_text().splitlines() == [
        "robot says: Adriana, please look at me.",
        "robot waits for: Adriana looking at me",
        "robot asks: Hello, who are you?",
        "human: Adriana",
        "robot says: Adriana",
    ]


def test_failing_action_fails_the_sequence() -> None:
    robot = ScriptedRobot(fail=["pick"])
    tree = compile_program(
        parse_recovery('pick("Apple")\nsay("done")'), robot, ScriptedHuman([]), name="fix"
    )
    run(tree)
    assert tree.status == Status.FAILURE
    assert tree.children[0].feedback_message == "pick failed"
    assert tree.children[1].status == Status.INVALID


@pytest.mark.parametrize("example", load_examples(), ids=lambda e: e["category"])
def test_every_builtin_example_runs_against_a_scripted_robot_and_human(example: dict) -> None:
    program = parse_recovery(example["goal"])
    asks = sum(s.action == "ask" for s in program.steps)
    human = ScriptedHuman([f"answer {i}" for i in range(1, asks + 1)])
    robot = ScriptedRobot()
    # Each answer names one candidate, whose objectId the robot gets.
    space = AnswerSpace(
        [Candidate(f"Thing|{i}", f"answer {i}", (f"answer {i}",)) for i in range(1, asks + 1)]
    )
    tree = compile_program(
        program, robot, human, answers={v: space.read for v in program.variables}
    )
    run(tree)
    assert tree.status == Status.SUCCESS
    values: dict[str, str] = {}
    expected_robot, expected_human = [], []
    for step in program.steps:
        args = [values[a.name] if isinstance(a, Ref) else a for a in step.args]
        if step.action == "ask":
            answer = f"answer {len([e for e in expected_human if e[0] == 'ask']) + 1}"
            expected_human.append(("ask", args[0], answer))
            if step.target:
                values[step.target] = f"Thing|{answer.split()[-1]}"
        elif step.action in ("say", "wait_for"):
            expected_human.append(({"say": "say", "wait_for": "wait"}[step.action], args[0], None))
        else:
            expected_robot.append((step.action, args))
    assert robot.started == expected_robot
    assert [(e.kind, e.text, e.answer) for e in human.transcript] == expected_human


# ------------------------------------------------- failure classes found by benchmarks/recovery.py


@pytest.mark.parametrize(
    ("answer", "status", "final"),
    [
        ("Of course, done.", Status.SUCCESS, False),
        ("No. Do it yourself.", Status.FAILURE, True),
        ("I don't know.", Status.FAILURE, True),
    ],
)
def test_a_request_refused_ends_the_recovery(answer, status, final) -> None:
    # A plain request used to accept "No." as an answer: the guard re-planned and asked the
    # same person again, twice.
    human = ScriptedHuman([answer])
    tree = compile_program(
        parse_recovery("ask('Could you move the Chair out of the way, please?')"), None, human
    )
    run(tree)
    node = tree.children[0]
    assert (tree.status, node.status, getattr(node, "final", False)) == (status, status, final)
    assert len(human.transcript) == (2 if final else 1)  # the robot acknowledges a refusal


def test_a_question_back_to_a_request_is_asked_again() -> None:
    human = ScriptedHuman(["Did you see the match?", "Sure, there."])
    tree = compile_program(parse_recovery("ask('Could you bring the Apple closer?')"), None, human)
    run(tree)
    assert tree.status == Status.SUCCESS
    assert [e.kind for e in human.transcript] == ["ask", "say", "ask"]


# ------------------------------------------------- recoveries parsed on several threads at once


class _Cyclic:
    """Garbage whose finaliser lets another thread run: a collection that starts while a
    parse builds its syntax tree hands the interpreter to the next thread mid-parse."""

    def __del__(self) -> None:
        time.sleep(0.0001)


def test_recoveries_parsed_on_several_threads_at_once_all_parse() -> None:
    # CPython 3.11 shares the AST builder's recursion depth between threads: without the
    # module's lock this fails with "SystemError: AST constructor recursion depth mismatch".
    import gc
    import threading

    code = "item = ask('which cup, the left or the right one?')\nplace(item, 'CounterTop')\n" * 15
    want = parse_recovery(code)
    errors: list[str] = []
    results: list[object] = []

    def parse_many() -> None:
        for _ in range(60):
            for _ in range(3):  # cyclic garbage for the parse's own allocations to collect
                garbage = _Cyclic()
                garbage.self = garbage  # type: ignore[attr-defined]
            del garbage
            try:
                results.append(parse_recovery(code))
            except Exception as exc:  # noqa: BLE001 - any failure is the finding
                errors.append(repr(exc))
                return

    threshold = gc.get_threshold()
    gc.set_threshold(20)
    try:
        workers = [threading.Thread(target=parse_many) for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=120)
    finally:
        gc.set_threshold(*threshold)
        gc.collect()
    assert errors == []
    assert len(results) == 180 and all(r == want for r in results)
