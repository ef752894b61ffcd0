"""Talking to people: the :class:`HumanInterface` and the behaviours recovery code compiles to.

RAIDER's recovery plans use two interaction actions: ``ask`` (its answer is used by later
actions) and ``say`` (tell the person something, e.g. why an action is impossible); the
assistive scenario adds ``wait_for`` (wait until the person is ready). An ``ask`` blocks until
the person answers, so :class:`AskBehaviour`, :class:`SayBehaviour` and :class:`WaitFor` run the
interface on a worker (:mod:`bt_raider.robot.worker`) and never block a tick.

:class:`GroundedAsk` is the ask of an answer a robot action uses: the reply must name exactly
one of the question's candidates (:mod:`bt_raider.recovery.answers`); "why?" is answered, "I
don't know" and refusals end it, anything else is explained and the question asked again.

Interfaces: :class:`ConsoleHuman` (a terminal), :class:`ScriptedHuman` (tests and demos; its
``on_answer`` lets a demo's person act in the world, e.g. move the chair), and
:class:`CallbackHuman` (speech, a GUI, a chat app). Each keeps a :class:`Exchange` transcript.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO, runtime_checkable

import py_trees

from bt_raider.errors import ActionFailed, UsageError
from bt_raider.robot import worker
from bt_raider.robot.actions import Var

Status = py_trees.common.Status


@runtime_checkable
class HumanInterface(Protocol):
    """What the robot needs to talk to a person.

    ``ask`` and ``say`` may block (speech, typing); they are called from a worker thread.
    An interface may also offer ``wait_for(event: str) -> bool`` (block until the person
    signals the event happened); :class:`WaitFor` uses it when present.
    """

    def ask(self, question: str) -> str:
        """Ask ``question`` and return the answer (raise ActionFailed when none comes)."""
        ...

    def say(self, text: str) -> None:
        """Tell the person ``text``."""
        ...


@dataclass(frozen=True)
class Exchange:
    """One entry of a transcript: the robot asked, said, or waited; and what came back."""

    kind: str  # "ask" | "say" | "wait"
    text: str
    answer: str | None = None
    time: float = field(default_factory=time.time)

    def lines(self) -> list[str]:
        label = {"ask": "robot asks", "say": "robot says", "wait": "robot waits for"}[self.kind]
        out = [f"{label}: {self.text}"]
        if self.answer is not None:
            out.append(f"human: {self.answer}")
        return out


class _Transcribed:
    """A thread-safe transcript, shared by the interfaces below."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._transcript: list[Exchange] = []

    @property
    def transcript(self) -> list[Exchange]:
        """Everything asked, said and waited for, in order (a copy)."""
        with self._lock:
            return list(self._transcript)

    def _record(self, kind: str, text: str, answer: str | None = None) -> None:
        with self._lock:
            self._transcript.append(Exchange(kind, text, answer))

    def transcript_text(self) -> str:
        return "\n".join(line for ex in self.transcript for line in ex.lines())


class ConsoleHuman(_Transcribed):
    """A person at a terminal: questions are printed, answers read line by line.

    Args:
        stdin: where answers come from (``sys.stdin`` by default).
        stdout: where the robot speaks (``sys.stdout`` by default).
    """

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        super().__init__()
        self._in = stdin
        self._out = stdout

    def _write(self, text: str) -> None:
        out = self._out or sys.stdout
        out.write(text)
        out.flush()

    def _readline(self, what: str) -> str:
        line = (self._in or sys.stdin).readline()
        if not line:
            raise ActionFailed(f"no answer to {what!r}: the console input ended")
        return line.rstrip("\r\n")

    def ask(self, question: str) -> str:
        self._write(f"[robot asks] {question}\n> ")
        answer = self._readline(question).strip()
        self._record("ask", question, answer)
        return answer

    def say(self, text: str) -> None:
        self._write(f"[robot says] {text}\n")
        self._record("say", text)

    def wait_for(self, event: str) -> bool:
        self._write(f"[robot waits for] {event} (press Enter when it has happened)\n")
        self._readline(event)
        self._record("wait", event)
        return True


_IO_POOL: ThreadPoolExecutor | None = None
_IO_LOCK = threading.Lock()


def _io_pool() -> ThreadPoolExecutor:
    """Threads for talking to people, apart from the checks' pool.

    A console read cannot be interrupted, so an abandoned ``ask`` keeps its thread until
    someone presses Enter; on the checks' pool enough of those would starve every guard.
    """
    global _IO_POOL
    with _IO_LOCK:
        if _IO_POOL is None:
            _IO_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="bt_raider-human")
        return _IO_POOL


class ScriptedHuman(_Transcribed):
    """A person whose answers are scripted: a list used in order, or patterns -> answers.

    Args:
        answers: a list (the n-th ``ask`` gets the n-th answer) or a mapping from a regular
            expression (searched case-insensitively in the question; an invalid regex is
            matched as plain text) to the answer; the first matching pattern wins.
        on_answer: called with ``(question, answer)`` before the answer is returned, so a
            demo's person can act in the world (move the chair, bring the medicine closer).
        on_say: called with the text of every ``say`` (e.g. the person starts looking at the
            robot when asked to).
        on_wait: called with the event of every ``wait_for``; its truth value is the outcome
            (True when not given).
    """

    def __init__(
        self,
        answers: list[str] | Mapping[str, str],
        on_answer: Callable[[str, str], object] | None = None,
        *,
        on_say: Callable[[str], object] | None = None,
        on_wait: Callable[[str], Any] | None = None,
    ) -> None:
        super().__init__()
        self.on_answer = on_answer
        self.on_say = on_say
        self.on_wait = on_wait
        self._queue: list[str] | None = None
        self._patterns: list[tuple[re.Pattern[str], str, str]] = []
        if isinstance(answers, Mapping):
            for pattern, answer in answers.items():
                try:
                    rx = re.compile(pattern, re.IGNORECASE)
                except re.error:
                    rx = re.compile(re.escape(pattern), re.IGNORECASE)
                self._patterns.append((rx, pattern, str(answer)))
        else:
            self._queue = [str(a) for a in answers]
        self._used = 0

    def _answer(self, question: str) -> str:
        with self._lock:
            if self._queue is not None:
                if self._used >= len(self._queue):
                    raise ActionFailed(
                        f"no scripted answer for {question!r}: all {len(self._queue)} answers "
                        "were used"
                    )
                self._used += 1
                return self._queue[self._used - 1]
        for rx, _, answer in self._patterns:
            if rx.search(question):
                return answer
        known = ", ".join(repr(p) for _, p, _ in self._patterns) or "none"
        raise ActionFailed(f"no scripted answer for {question!r}: patterns are {known}")

    def ask(self, question: str) -> str:
        answer = self._answer(question)
        if self.on_answer is not None:
            self.on_answer(question, answer)
        self._record("ask", question, answer)
        return answer

    def say(self, text: str) -> None:
        if self.on_say is not None:
            self.on_say(text)
        self._record("say", text)

    def wait_for(self, event: str) -> bool:
        ok = True if self.on_wait is None else bool(self.on_wait(event))
        self._record("wait", event, None if ok else "(did not happen)")
        return ok


class CallbackHuman(_Transcribed):
    """Adapt any ask/say functions (speech, a GUI, a chat app) to :class:`HumanInterface`.

    Args:
        ask_fn: ``question -> answer`` (may block).
        say_fn: ``text -> None``.
        wait_fn: ``event -> bool`` (may block); without it a wait succeeds at once and the
            guard's re-check decides whether the event happened.
    """

    def __init__(
        self,
        ask_fn: Callable[[str], str],
        say_fn: Callable[[str], None],
        wait_fn: Callable[[str], bool] | None = None,
    ) -> None:
        super().__init__()
        self._ask = ask_fn
        self._say = say_fn
        self._wait = wait_fn

    def ask(self, question: str) -> str:
        answer = self._ask(question)
        if not isinstance(answer, str):
            raise ActionFailed(f"the answer to {question!r} is not text: {answer!r}")
        self._record("ask", question, answer)
        return answer

    def say(self, text: str) -> None:
        self._say(text)
        self._record("say", text)

    def wait_for(self, event: str) -> bool:
        ok = True if self._wait is None else bool(self._wait(event))
        self._record("wait", event, None if ok else "(did not happen)")
        return ok


# ---------------------------------------------------------------------------- behaviours


def clean_answer(answer: str) -> str:
    """An answer as an argument: surrounding spaces, quotes and a final full stop removed."""
    text = str(answer).strip()
    previous = None
    while previous != text:
        previous = text
        text = text.strip().strip("\"'").rstrip(".!").strip()
    return text


class _Interaction(py_trees.behaviour.Behaviour):
    """Run one blocking interaction on a worker: submit in initialise, poll in update."""

    def __init__(self, name: str, human: HumanInterface) -> None:
        super().__init__(name)
        self.human = human
        self._pending: worker.Pending[Any] | None = None
        self._vars = self.attach_blackboard_client(name=f"{name}/vars")
        self._error: str | None = None
        self._fresh = False

    @property
    def pending(self) -> worker.Pending[Any] | None:
        """The background interaction, while there is one."""
        return self._pending

    def _register_read(self, value: Any) -> None:
        if isinstance(value, Var):
            self._vars.register_key(key=value.key, access=py_trees.common.Access.READ)

    def _text(self, value: Any) -> str:
        if isinstance(value, Var):
            try:
                return str(self._vars.get(value.key))
            except KeyError:
                raise ActionFailed(
                    f"{self.name}: variable {value.name!r} has no value yet"
                ) from None
        return str(value)

    def _job(self, text: str, *, cancel: threading.Event) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _submit(self, value: Any) -> None:
        self._pending = None
        self._error = None
        try:
            text = self._text(value)
        except ActionFailed as exc:
            self._error = str(exc)
            return
        self._pending = worker.submit(self._job, text, executor=_io_pool())
        self._fresh = True

    def _poll(self) -> tuple[Status, Any]:
        """RUNNING while pending; else SUCCESS with the result or FAILURE (feedback set)."""
        if self._error is not None:
            self.feedback_message = self._error
            return Status.FAILURE, None
        if self._fresh:
            # Submitted in this tick: RUNNING even if the answer came already, so an
            # interaction always takes the same number of ticks.
            self._fresh = False
            return Status.RUNNING, None
        if self._pending is None or not self._pending.done():
            return Status.RUNNING, None
        pending, self._pending = self._pending, None
        exc = pending.exception()
        if exc is not None:
            self.feedback_message = f"{self.name} failed: {exc}"
            return Status.FAILURE, None
        return Status.SUCCESS, pending.result()

    def terminate(self, new_status: Status) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None


class AskBehaviour(_Interaction):
    """Ask a person a question; write the answer to ``/bt_raider/vars/[<scope>/]<var>``.

    Args:
        question: the question, or a :class:`~bt_raider.robot.actions.Var` holding it.
        human: who is asked.
        var: the recovery-code variable the answer is stored in (None: transcript only).
        name: node name.
        scope: the recovery run the variable belongs to
            (:func:`~bt_raider.robot.actions.vars_key`); empty: the unscoped namespace.

    Attributes:
        key: the blackboard key the answer goes to (None without ``var``).
    """

    def __init__(
        self,
        question: str | Var,
        human: HumanInterface,
        var: str | None = None,
        name: str | None = None,
        *,
        scope: str = "",
    ) -> None:
        super().__init__(name or f"ask({question!s})", human)
        self.question = question
        self.var = var
        self.scope = scope
        self.answer: str | None = None
        self.key = None if var is None else Var(var, scope).key
        self._register_read(question)
        if self.key is not None:
            self._vars.register_key(key=self.key, access=py_trees.common.Access.WRITE)

    def _job(self, text: str, *, cancel: threading.Event) -> str:
        return self.human.ask(text)

    def initialise(self) -> None:
        self.answer = None
        self.feedback_message = f"asking: {self.question!s}"
        self._submit(self.question)

    def update(self) -> Status:
        status, answer = self._poll()
        if status is not Status.SUCCESS:
            return status
        if not isinstance(answer, str) or not clean_answer(answer):
            self.feedback_message = f"no usable answer to {self.question!s}: {answer!r}"
            return Status.FAILURE
        self.answer = clean_answer(answer)
        if self.key is not None:
            self._vars.set(self.key, self.answer)
        self.feedback_message = f"answer: {self.answer}"
        return Status.SUCCESS


@dataclass(frozen=True)
class _Asked:
    """What :class:`GroundedAsk`'s worker brings back: the last reading and what was said."""

    reading: Any
    lines: tuple[str, ...]
    asks: int


def _intent(reading: Any) -> str:
    intent = getattr(reading, "intent", None)
    return str(getattr(intent, "value", intent))


class GroundedAsk(AskBehaviour):
    """Ask until the reply names exactly one of the question's candidates; store only that.

    A person's free text never reaches a robot action as it is: each reply goes through
    ``read`` (e.g. :meth:`bt_raider.recovery.answers.AnswerSpace.read`), and the variable gets
    the candidate's value (an objectId, a location, a person's name). On the worker, the
    interaction goes on as a conversation:

    * a reply that names nothing or several: the robot says why ("Sorry, none of Medicine_1
      or Medicine_2 is blue.") and asks the *original* question again;
    * "why?": the robot says ``because``, then asks again;
    * "I don't know", or a refusal ("no", "leave it"): the robot acknowledges and the node
      fails closed (``final`` is set: asking again will not help);
    * after ``max_asks`` questions without a usable reply: FAILURE, ``final`` set.

    The feedback message of a failure has the reason and the transcript of this question.

    Args:
        question: the question (or a :class:`~bt_raider.robot.actions.Var` holding it).
        human: who is asked.
        var: the recovery-code variable the grounded value is stored in.
        read: ``reply -> reading`` with ``usable``, ``final``, ``value``, ``reason`` and
            ``intent`` (``why`` among its values). None: there is nothing to ground the reply
            in, so the node fails closed without asking.
        because: why the robot asks, said when the person asks why.
        max_asks: questions asked at most (a "why?" counts).
        name: node name.
        scope: the recovery run the variable belongs to (as for :class:`AskBehaviour`).

    Attributes:
        reading: the last reading.
        final: True when the failure is the person's answer (do not ask again).
        dialogue: the lines of this conversation (``robot asks: ...``, ``human: ...``).
    """

    def __init__(
        self,
        question: str | Var,
        human: HumanInterface,
        var: str | None = None,
        *,
        read: Callable[[str], Any] | None = None,
        because: str = "",
        max_asks: int = 3,
        name: str | None = None,
        scope: str = "",
    ) -> None:
        super().__init__(question, human, var=var, name=name, scope=scope)
        if not isinstance(max_asks, int) or isinstance(max_asks, bool) or max_asks < 1:
            raise UsageError(f"max_asks must be an integer >= 1, got {max_asks!r}")
        self.read = read
        self.because = " ".join(str(because).split())
        self.max_asks = max_asks
        self.reading: Any = None
        self.final = False
        self.dialogue: list[str] = []

    def _job(self, text: str, *, cancel: threading.Event) -> _Asked:  # type: ignore[override]
        if self.read is None:
            raise ActionFailed(
                f"cannot use an answer to {text!r}: there is no scene to ground it in, and an "
                "unchecked answer never reaches a robot action"
            )
        lines: list[str] = []
        reading: Any = None
        for asks in range(1, self.max_asks + 1):
            if cancel.is_set():
                raise ActionFailed(f"asking {text!r} was cancelled")
            # A reader may bind itself to the moment the question is put (``asking()``: e.g.
            # the robot's pose then, which a reply's "on the left" is relative to).
            asking = getattr(self.read, "asking", None)
            read = asking() if callable(asking) else self.read
            answer = self.human.ask(text)
            lines += [f"robot asks: {text}", f"human: {answer}"]
            reading = read(answer if isinstance(answer, str) else "")
            if reading.usable or reading.final:
                if reading.final:
                    reply = (
                        f"{reading.reason} I cannot do this."
                        if _intent(reading) == "absent" and reading.reason
                        else "All right: then I cannot do this."
                        if _intent(reading) == "absent"
                        else "All right. Without an answer I will not go on with this."
                    )
                    self.human.say(reply)
                    lines.append(f"robot says: {reply}")
                return _Asked(reading, tuple(lines), asks)
            if asks == self.max_asks:
                break
            if _intent(reading) == "why":
                reply = (
                    f"I am asking because of this: {self.because}"
                    if self.because
                    else "I need the answer to go on."
                )
            else:
                reply = f"Sorry, {reading.reason or 'I did not understand.'}"
            self.human.say(reply)
            lines.append(f"robot says: {reply}")
        return _Asked(reading, tuple(lines), self.max_asks)

    def initialise(self) -> None:
        self.reading = None
        self.final = False
        self.dialogue = []
        super().initialise()

    def update(self) -> Status:
        status, outcome = self._poll()
        if status is not Status.SUCCESS:
            if status is Status.FAILURE and self.read is None:
                self.final = True
            return status
        self.reading = outcome.reading
        self.dialogue = list(outcome.lines)
        transcript = " / ".join(outcome.lines)
        if not outcome.reading.usable:
            self.final = True
            intent = _intent(outcome.reading)
            if intent == "dont_know":
                why = "the person does not know"
            elif intent == "refusal":
                why = "the person declined"
            elif intent == "absent":
                why = outcome.reading.reason or "the person says there is none"
            else:
                why = f"no answer named one of the options after {outcome.asks} question(s)" + (
                    f" ({outcome.reading.reason})" if outcome.reading.reason else ""
                )
            self.feedback_message = f"{why}; transcript: {transcript}"
            return Status.FAILURE
        self.answer = str(outcome.reading.value)
        if self.key is not None:
            self._vars.set(self.key, self.answer)
        self.feedback_message = f"answer: {self.answer} (from: {outcome.lines[-1][7:]})"
        return Status.SUCCESS


class SayBehaviour(_Interaction):
    """Tell a person something (the text may be a :class:`~bt_raider.robot.actions.Var`)."""

    def __init__(self, text: str | Var, human: HumanInterface, name: str | None = None) -> None:
        super().__init__(name or f"say({text!s})", human)
        self.text = text
        self._register_read(text)

    def _job(self, text: str, *, cancel: threading.Event) -> None:
        self.human.say(text)

    def initialise(self) -> None:
        self.feedback_message = f"saying: {self.text!s}"
        self._submit(self.text)

    def update(self) -> Status:
        status, _ = self._poll()
        if status is Status.SUCCESS:
            self.feedback_message = f"said: {self.text!s}"
        return status


class WaitFor(_Interaction):
    """Wait for an event the person signals, or for a number of seconds.

    A number waits that long (checked against a clock each tick). Text asks the interface's
    ``wait_for(event)`` on a worker when it has one; an interface without it succeeds at once
    (the guard re-checks the action anyway).

    Args:
        what: seconds, an event description, or a :class:`~bt_raider.robot.actions.Var` holding one.
        human: who signals the event.
        timeout: give up (FAILURE) after this many seconds of waiting for an event.
        clock: the monotonic clock (injectable for tests).
    """

    def __init__(
        self,
        what: str | float | Var,
        human: HumanInterface,
        name: str | None = None,
        *,
        timeout: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name or f"wait_for({what!s})", human)
        self.what = what
        self.timeout = timeout
        self.clock = clock
        self._deadline = 0.0
        self._register_read(what)

    def _job(self, text: str, *, cancel: threading.Event) -> bool:
        wait = getattr(self.human, "wait_for", None)
        return True if wait is None else bool(wait(text))

    def initialise(self) -> None:
        self._pending = None
        self._error = None
        if isinstance(self.what, (int, float)) and not isinstance(self.what, bool):
            self._deadline = self.clock() + float(self.what)
            self.feedback_message = f"waiting {self.what} s"
            return
        self._deadline = self.clock() + self.timeout
        self.feedback_message = f"waiting for: {self.what!s}"
        self._submit(self.what)

    def update(self) -> Status:
        if isinstance(self.what, (int, float)) and not isinstance(self.what, bool):
            return Status.SUCCESS if self.clock() >= self._deadline else Status.RUNNING
        status, ok = self._poll()
        if status is Status.RUNNING:
            if self.clock() > self._deadline:
                self.feedback_message = (
                    f"gave up waiting for {self.what!s} after {self.timeout:g} s"
                )
                return Status.FAILURE
            return status
        if status is Status.SUCCESS and not ok:
            self.feedback_message = f"{self.what!s} did not happen"
            return Status.FAILURE
        if status is Status.SUCCESS:
            self.feedback_message = f"done waiting for: {self.what!s}"
        return status
