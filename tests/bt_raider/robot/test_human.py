"""Human interfaces and the ask/say/wait behaviours, which must never block a tick."""

from __future__ import annotations

import io
import threading
import time

import py_trees
import pytest
from py_trees.common import Status

from bt_raider.errors import ActionFailed
from bt_raider.perception.scene import Scene
from bt_raider.recovery.answers import AnswerSpace
from bt_raider.robot.actions import VARS_NAMESPACE, Var
from bt_raider.robot.human import (
    AskBehaviour,
    CallbackHuman,
    ConsoleHuman,
    GroundedAsk,
    HumanInterface,
    SayBehaviour,
    ScriptedHuman,
    WaitFor,
    clean_answer,
)
from tests.bt_raider.recovery.toy import FAR_FROM_PLANT, NEAR_PLANT, toy_scene_dict

#: A tick that waits on a blocked interaction would take at least this long.
BLOCK_S = 5.0


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


class BlockingHuman:
    """A person who answers only when the test releases them."""

    def __init__(self, answer: str = "the red one") -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.answer = answer
        self.threads: list[str] = []

    def ask(self, question: str) -> str:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        assert self.release.wait(BLOCK_S), "test never released the human"
        return self.answer

    def say(self, text: str) -> None:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        assert self.release.wait(BLOCK_S), "test never released the human"

    def wait_for(self, event: str) -> bool:
        return self.ask(event) == "yes"


def wait_done(node) -> None:
    end = time.monotonic() + BLOCK_S
    while node.pending is not None and not node.pending.done():
        assert time.monotonic() < end, "background interaction did not finish"
        time.sleep(0.001)


def timed_tick(node) -> float:
    start = time.perf_counter()
    node.tick_once()
    return time.perf_counter() - start


# ------------------------------------------------------------------------- interfaces


def test_scripted_list_answers_in_order_and_acts_in_the_world() -> None:
    world: list[tuple[str, str]] = []
    human = ScriptedHuman(["medicine1", "Adriana"], on_answer=lambda q, a: world.append((q, a)))
    assert isinstance(human, HumanInterface)
    assert human.ask("Which medicine?") == "medicine1"
    assert human.ask("Who are you?") == "Adriana"
    assert world == [("Which medicine?", "medicine1"), ("Who are you?", "Adriana")]
    with pytest.raises(ActionFailed, match="no scripted answer for 'More\\?': all 2 answers"):
        human.ask("More?")
    assert [(e.kind, e.text, e.answer) for e in human.transcript] == [
        ("ask", "Which medicine?", "medicine1"),
        ("ask", "Who are you?", "Adriana"),
    ]


def test_scripted_patterns_say_and_wait() -> None:
    said: list[str] = []
    human = ScriptedHuman(
        {
            r"which (medicine|pill)": "the one closest to the plant",
            "(": "literal",
            "who": "Adriana",
        },
        on_say=said.append,
        on_wait=lambda event: "looking" in event,
    )
    assert human.ask("Which MEDICINE should I pick?") == "the one closest to the plant"
    assert human.ask("what is ( this") == "literal"  # an invalid regex matches as text
    assert human.ask("Hello, who are you?") == "Adriana"
    with pytest.raises(ActionFailed, match="patterns are .*'who'"):
        human.ask("Where is the knife?")
    human.say("Please look at me.")
    assert said == ["Please look at me."]
    assert human.wait_for("Adriana looking at me") is True
    assert human.wait_for("Adriana sitting down") is False
    assert human.transcript_text().splitlines()[-3:] == [
        "robot waits for: Adriana looking at me",
        "robot waits for: Adriana sitting down",
        "human: (did not happen)",
    ]


def test_console_human_reads_and_writes_streams() -> None:
    out = io.StringIO()
    human = ConsoleHuman(stdin=io.StringIO("on the counter\n\n"), stdout=out)
    assert human.ask("Where is the knife?") == "on the counter"
    human.say("Thank you.")
    assert human.wait_for("you are ready") is True
    with pytest.raises(ActionFailed, match="console input ended"):
        human.ask("Anything else?")
    text = out.getvalue()
    assert "[robot asks] Where is the knife?" in text
    assert "[robot says] Thank you." in text
    assert "[robot waits for] you are ready" in text
    assert [e.kind for e in human.transcript] == ["ask", "say", "wait"]


def test_callback_human() -> None:
    said: list[str] = []
    human = CallbackHuman(lambda q: q.upper(), said.append)
    assert human.ask("abc") == "ABC"
    human.say("hi")
    assert said == ["hi"] and human.wait_for("x") is True
    bad = CallbackHuman(lambda q: 42, said.append, wait_fn=lambda e: False)  # type: ignore[arg-type]
    with pytest.raises(ActionFailed, match="not text: 42"):
        bad.ask("?")
    assert bad.wait_for("x") is False


def test_clean_answer() -> None:
    assert clean_answer('  "Medicine_1". ') == "Medicine_1"
    assert clean_answer("It's the one by the plant!") == "It's the one by the plant"
    assert clean_answer("   ") == ""


# ------------------------------------------------------------------------- behaviours


def test_ask_never_blocks_and_writes_the_answer() -> None:
    human = BlockingHuman("Medicine_1.")
    ask = AskBehaviour("Which medicine?", human, var="choice")
    assert timed_tick(ask) < 0.5 * BLOCK_S
    assert ask.status == Status.RUNNING
    assert human.started.wait(BLOCK_S)
    assert timed_tick(ask) < 0.5 * BLOCK_S  # still blocked: the tick returns at once
    assert ask.status == Status.RUNNING
    human.release.set()
    wait_done(ask)
    ask.tick_once()
    assert ask.status == Status.SUCCESS
    assert ask.answer == "Medicine_1"
    assert py_trees.blackboard.Blackboard.get(f"{VARS_NAMESPACE}/choice") == "Medicine_1"
    assert human.threads and human.threads[0] != threading.current_thread().name


def test_ask_terminate_cancels() -> None:
    human = BlockingHuman()
    ask = AskBehaviour("Which medicine?", human, var="choice")
    ask.tick_once()
    pending = ask.pending
    assert pending is not None
    ask.stop(Status.INVALID)
    assert pending.cancel_event.is_set()
    assert ask.pending is None and ask.status == Status.INVALID
    human.release.set()


def test_ask_failures() -> None:
    empty = AskBehaviour("Which?", CallbackHuman(lambda q: "  ", print), var="x")
    failing = AskBehaviour("Which?", ScriptedHuman([]), var="x")
    unset = AskBehaviour(Var("question"), ScriptedHuman(["a"]))
    for node in (empty, failing, unset):
        node.tick_once()
        if node.pending is not None:
            wait_done(node)
            node.tick_once()
        assert node.status == Status.FAILURE
    assert "no usable answer" in empty.feedback_message
    assert "no scripted answer" in failing.feedback_message
    assert "variable 'question' has no value yet" in unset.feedback_message


def test_ask_with_a_variable_question_and_say_with_a_variable() -> None:
    bb = py_trees.blackboard.Client(name="test")
    bb.register_key(key=f"{VARS_NAMESPACE}/q", access=py_trees.common.Access.WRITE)
    bb.set(f"{VARS_NAMESPACE}/q", "Is it hot?")
    human = ScriptedHuman({"hot": "yes"})
    ask = AskBehaviour(Var("q"), human)
    say = SayBehaviour(Var("q"), human)
    for node in (ask, say):
        node.tick_once()
        wait_done(node)
        node.tick_once()
        assert node.status == Status.SUCCESS
    assert human.transcript_text() == "robot asks: Is it hot?\nhuman: yes\nrobot says: Is it hot?"


def test_say_never_blocks() -> None:
    human = BlockingHuman()
    say = SayBehaviour("Please look at me.", human)
    assert timed_tick(say) < 0.5 * BLOCK_S and say.status == Status.RUNNING
    human.release.set()
    wait_done(say)
    say.tick_once()
    assert say.status == Status.SUCCESS and say.feedback_message == "said: Please look at me."


def test_wait_for_seconds_uses_the_clock() -> None:
    now = [100.0]
    wait = WaitFor(2, ScriptedHuman([]), clock=lambda: now[0])
    statuses = []
    for t in (100.0, 101.0, 101.9, 102.0):
        now[0] = t
        wait.tick_once()
        statuses.append(wait.status)
    assert statuses == [Status.RUNNING, Status.RUNNING, Status.RUNNING, Status.SUCCESS]


def test_wait_for_an_event() -> None:
    yes = WaitFor("you are ready", ScriptedHuman([], on_wait=lambda e: True))
    no = WaitFor("you are ready", ScriptedHuman([], on_wait=lambda e: False))
    plain = WaitFor("you are ready", CallbackHuman(str, print))
    for node in (yes, no, plain):
        node.tick_once()
        assert node.status == Status.RUNNING
        wait_done(node)
        node.tick_once()
    assert (yes.status, no.status, plain.status) == (Status.SUCCESS, Status.FAILURE, Status.SUCCESS)
    assert no.feedback_message == "you are ready did not happen"


def test_wait_for_an_event_times_out_without_blocking() -> None:
    now = [0.0]
    human = BlockingHuman()
    wait = WaitFor("you are ready", human, timeout=10, clock=lambda: now[0])
    wait.tick_once()
    pending = wait.pending
    now[0] = 5.0
    wait.tick_once()
    assert wait.status == Status.RUNNING
    now[0] = 10.5
    assert timed_tick(wait) < 0.5 * BLOCK_S
    assert wait.status == Status.FAILURE
    assert "gave up waiting for you are ready after 10 s" in wait.feedback_message
    assert pending is not None and pending.cancel_event.is_set()
    human.release.set()


def test_an_unanswered_ask_does_not_hold_a_check_thread() -> None:
    # A console read cannot be interrupted: it must not sit on the pool the guards check on.
    human = BlockingHuman("yes")
    ask = AskBehaviour("Are you there?", human, var="there")
    ask.tick_once()
    assert human.started.wait(BLOCK_S)
    assert human.threads[0].startswith("bt_raider-human")
    ask.stop(Status.INVALID)  # abandoned
    human.release.set()


# ------------------------------------------------------------------------- grounded asks

QUESTION = "Which medicine should I pick up: Medicine_1 or Medicine_2?"
BECAUSE = "The query is ambiguous: 'the medicine' matches 2 objects: Medicine_1 and Medicine_2."


def converse(answers: list[str], *, max_asks: int = 3) -> tuple[GroundedAsk, ScriptedHuman]:
    """Run a GroundedAsk about the toy scene's two medicines until it ends."""
    scene = Scene(toy_scene_dict())
    space = AnswerSpace.objects(scene, [NEAR_PLANT, FAR_FROM_PLANT], what="medicine")
    human = ScriptedHuman(answers)
    node = GroundedAsk(
        QUESTION, human, var="choice", read=space.read, because=BECAUSE, max_asks=max_asks
    )
    for _ in range(20):
        node.tick_once()
        if node.status != Status.RUNNING:
            break
        wait_done(node)
    return node, human


def choice() -> str | None:
    try:
        return py_trees.blackboard.Blackboard.get(f"{VARS_NAMESPACE}/choice")
    except KeyError:
        return None


def test_grounded_ask_stores_the_object_id_the_answer_names() -> None:
    node, human = converse(["It is Medicine_1, next to the plant"])
    assert node.status == Status.SUCCESS and not node.final
    assert choice() == NEAR_PLANT and node.answer == NEAR_PLANT
    assert human.transcript_text().splitlines() == [
        f"robot asks: {QUESTION}",
        "human: It is Medicine_1, next to the plant",
    ]


def test_the_blue_one_is_explained_and_the_original_question_asked_again() -> None:
    node, human = converse(["the blue one", "the one next to the plant"])
    assert node.status == Status.SUCCESS and choice() == NEAR_PLANT
    text = human.transcript_text()
    assert text.splitlines() == [
        f"robot asks: {QUESTION}",
        "human: the blue one",
        "robot says: Sorry, 'the blue one' fits more than one: the medicine on the right and "
        "the medicine on the left.",
        f"robot asks: {QUESTION}",
        "human: the one next to the plant",
    ]
    assert "the the" not in text and "Where can I find" not in text


def test_a_wrong_name_then_the_right_one() -> None:
    node, human = converse(["Medicine_7", "medicine 2"])
    assert node.status == Status.SUCCESS and choice() == FAR_FROM_PLANT
    assert human.transcript_text().splitlines()[2:4] == [
        "robot says: Sorry, I could not tell which medicine you mean by 'Medicine_7': I did not "
        "understand '7'.",
        f"robot asks: {QUESTION}",
    ]


def test_why_is_answered_with_the_explanation_then_the_question_again() -> None:
    node, human = converse(["why do you want to know?", "the first one"])
    assert node.status == Status.SUCCESS and choice() == NEAR_PLANT
    assert human.transcript_text().splitlines() == [
        f"robot asks: {QUESTION}",
        "human: why do you want to know?",
        f"robot says: I am asking because of this: {BECAUSE}",
        f"robot asks: {QUESTION}",
        "human: the first one",
    ]


@pytest.mark.parametrize(
    ("answer", "why"),
    [("I don't know", "the person does not know"), ("leave it", "the person declined")],
)
def test_dont_know_and_refusal_fail_closed_at_once(answer: str, why: str) -> None:
    node, human = converse([answer, "Medicine_1"])
    assert node.status == Status.FAILURE and node.final and choice() is None
    assert node.feedback_message.startswith(why)
    assert f"robot asks: {QUESTION} / human: {answer}" in node.feedback_message
    assert [e.kind for e in human.transcript] == ["ask", "say"]  # asked once, not twice
    assert human.transcript[-1].text == "All right. Without an answer I will not go on with this."


def test_bounded_asks_then_fail_closed_with_the_transcript() -> None:
    node, human = converse(["the shiny one", "the blue one", "Medicine_1 and Medicine_2"])
    assert node.status == Status.FAILURE and node.final and choice() is None
    assert [e.kind for e in human.transcript] == ["ask", "say", "ask", "say", "ask"]
    assert all(e.text == QUESTION for e in human.transcript if e.kind == "ask")
    assert node.feedback_message.startswith(
        "no answer named one of the options after 3 question(s) ('Medicine_1 and Medicine_2' "
        "fits more than one: the medicine on the right and the medicine on the left.); "
        "transcript: robot asks:"
    )


def test_no_reader_fails_closed_without_asking() -> None:
    human = ScriptedHuman(["Medicine_1"])
    node = GroundedAsk(QUESTION, human, var="choice", read=None)
    node.tick_once()
    wait_done(node)
    node.tick_once()
    assert node.status == Status.FAILURE and node.final
    assert "no scene to ground it in" in node.feedback_message
    assert human.transcript == [] and choice() is None
    with pytest.raises(ValueError, match="max_asks"):
        GroundedAsk(QUESTION, human, read=None, max_asks=0)
