"""RAIDER's LLM agent and its program flow manager (PFM), paper §3.

:class:`RaiderAgent` is a :class:`~bt_raider.checking.contract.Checker`: it asks a chat model to follow
*Ground, Ask&Answer, Issue* with perception tools and returns a
:class:`~bt_raider.checking.verdict.Verdict`. The PFM (paper Fig. 3) sits between the model and the
tools. After every model turn it looks for tool calls and a final response:

* tool calls found: run them (concurrently; results appended in call order). A final response
  in the same turn is discarded with **warning 1** (made-up tool response); a call to a tool
  that does not exist gets **warning 2** (made-up tool name); a call that fails gets
  **warning 3** (unsuccessful tool call) carrying the tool's error text.
* no tool calls: a valid final response ends the check; otherwise **warning 4** (missing tool
  call or final response), also when the final response is unreadable or invalid.

Warnings go back to the model as messages so it can correct itself. The loop stops at a valid
final response, at ``cancel``, or at the time limit; the last two give an ``unknown`` verdict
(fail closed), as does a failing chat backend.

Tool calls are read in two protocols: the paper's text format
``call_tool{"tool": "name", "args": [...]}`` (read leniently: single quotes, bare words,
trailing commas) and native OpenAI function calling.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bt_raider.checking.contract import Query, as_query
from bt_raider.checking.verdict import (
    PRIORITY,
    Category,
    Response,
    ToolCall,
    Verdict,
    parse_category,
)
from bt_raider.errors import BackendError, SceneError, ToolError
from bt_raider.llm.chat import ChatModel, ChatReply, ToolCallRequest, make_chat, start_daemon
from bt_raider.llm.grammar import Grammar, raider_turn
from bt_raider.llm.prompts import render
from bt_raider.llm.replies import TextCall, find_final, loads_lenient, parse_tool_calls
from bt_raider.perception.tools import default_tools
from bt_raider.perception.toolset import UnknownToolError

if TYPE_CHECKING:
    from bt_raider.perception.scene import Scene
    from bt_raider.perception.toolset import ToolSet

PROTOCOLS = ("text", "native", "auto")

#: What each category means, for the prompt's task objective (docs/scene-format.md §3).
CATEGORY_MEANINGS: dict[Category, str] = {
    Category.NONE: "none of the issues below holds: the action can be executed as it is.",
    Category.AMBIGUITY: (
        "after all constraints in the query, an argument matches two or more objects or people."
    ),
    Category.NOT_PRESENT: (
        "an argument matches nothing in the scene (no such object, or the person is not "
        "present or not recognised)."
    ),
    Category.ROBOT_STATE: (
        "the robot's own state prevents the action: its single arm is busy (pick, open, close, "
        "turn on/off while holding something), it must place an object it does not hold, or "
        "it must slice without holding a knife."
    ),
    Category.WRONG_PROPERTY: (
        "the object cannot undergo the action: picking a non-pickupable object, opening a "
        "non-openable one, toggling a non-toggleable one, slicing a non-sliceable one, "
        "placing into something that is not a receptacle."
    ),
    Category.WRONG_STATE: (
        "the action would change nothing or needs another state first: opening an open "
        "object, closing a closed one, turning on an on one or off an off one, slicing a "
        "sliced one, taking from or placing into a closed receptacle; opening, taking from or "
        "placing into an appliance that is running (it must be turned off first); a handover "
        "to a person who is not looking at the robot or has no free hands."
    ),
    Category.OBSTRUCTED: (
        "something sits on or in the object to pick, a single-slot destination (coffee "
        "machine, toaster, microwave) is occupied, or something blocks reaching or approaching "
        "the target."
    ),
    Category.OUT_OF_REACH: (
        "the target (for place: the destination) is farther from the robot than its reach; "
        "for a handover, the person is farther than the handover distance."
    ),
}

#: Categories a model may answer with (``unknown`` is the PFM's own, for unfinished checks).
ANSWER_CATEGORIES: tuple[Category, ...] = tuple(CATEGORY_MEANINGS)
RESPONSES: tuple[str, ...] = tuple(r.value for r in Response)

_NAME_RE = re.compile(r"[A-Za-z_][\w.\-]*")
#: Seconds between looks at ``cancel`` while waiting for the model or the tools.
_POLL = 0.02


def _questions(text: str) -> list[str]:
    """The Ask step's questions: lines of the model's reasoning that end with '?'."""
    out = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*\u2022 ").strip()
        line = re.sub(r"^(\d+[.)]|Q\d*[:.)])\s*", "", line)
        if line.endswith("?") and "call_tool" not in line and len(line) > 3:
            out.append(line)
    return out


def _run_together(fn: Callable[[Any], Any], items: list[Any], parallel: int) -> list[Future[Any]]:
    """``fn(item)`` for every item on at most ``parallel`` daemon threads; their futures.

    Daemon threads, like the model call's: a tool still running when the check gives up does
    not keep the process alive.
    """
    futures: list[Future[Any]] = [Future() for _ in items]
    work = deque(zip(items, futures, strict=True))

    def drain() -> None:
        while True:
            try:
                item, future = work.popleft()
            except IndexError:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(item))
            except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                future.set_exception(exc)

    for _ in range(min(parallel, len(items))):
        start_daemon(drain, name="raider-tool")
    return futures


# =========================================================================== the agent


@dataclass
class _Call:
    """One tool call of a turn, as the PFM handles it."""

    name: str
    args: list[Any] | dict[str, Any]
    raw_args: Any
    call_id: str | None = None
    read_error: str | None = None


def _caused_by_scene(exc: BaseException) -> bool:
    """Whether ``exc``, or what it was raised from, is a :class:`SceneError`."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, SceneError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class _Stop(Exception):
    """Ends the loop early with a reason (time limit or cancel)."""


class RaiderAgent:
    """RAIDER's tool-equipped LLM agent with its program flow manager.

    Args:
        chat: the chat model (:func:`bt_raider.llm.chat.make_chat`).
        tools: the perception tool set; None builds
            :func:`bt_raider.perception.tools.default_tools`.
        time_limit: seconds for the whole check (the paper uses 20 s); past it the check ends
            with an ``unknown`` verdict.
        protocol: how tool calls are made: ``"text"`` (the paper's ``call_tool{...}``),
            ``"native"`` (OpenAI function calling) or ``"auto"`` (native when the chat model
            says it supports it).
        max_parallel_tools: threads for running the tool calls of one turn concurrently.
        list_objects: list the scene's objects in the first message, as the paper does.
        max_turns: optional bound on model calls (None: only the time limit bounds the loop).
        constrain: when the chat model decodes under a grammar (``supports_grammar``, e.g.
            :class:`~bt_raider.llm.local.LlamaCppChat`) and the protocol is text, give it the
            grammar of a turn (:func:`bt_raider.llm.grammar.raider_turn`): the registry's tool
            names, the scene's names, the contract's categories. The PFM checks the reply all
            the same.
        pfm: the program flow manager (paper Fig. 3). False is the ablation the benchmarks
            measure it against: a final response is taken from the first reply that has one
            (even beside tool calls, i.e. a made-up tool result), tool errors go back as plain
            results, and a reply with neither tool calls nor a final response ends the check
            ``unknown`` instead of a warning.
        answer_last_turn: on the last turn ``max_turns`` allows, ask for the final response
            (and, constrained, admit only it) instead of ending the check ``unknown``. Off by
            default: a model that has not answered in ``max_turns`` turns is then made to
            guess, and a small model's guess is mostly ``none``, which clears the action
            (measured in ``benchmarks/llm_local.py``); with a stronger model, or under
            :class:`~bt_raider.checking.hybrid.HybridChecker`, it may be worth it.

    Raises:
        BackendError: unknown ``protocol`` or a non-positive limit.
    """

    def __init__(
        self,
        chat: ChatModel,
        tools: ToolSet | None = None,
        *,
        time_limit: float = 20.0,
        protocol: str = "auto",
        max_parallel_tools: int = 4,
        list_objects: bool = True,
        max_turns: int | None = None,
        constrain: bool = True,
        pfm: bool = True,
        answer_last_turn: bool = False,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise BackendError(
                f"unknown tool-call protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}"
            )
        if not time_limit or time_limit <= 0:
            raise BackendError(f"time_limit must be > 0 seconds, got {time_limit!r}")
        if max_parallel_tools < 1:
            raise BackendError(f"max_parallel_tools must be >= 1, got {max_parallel_tools!r}")
        if tools is None:
            tools = default_tools()
        self.chat = chat
        self.tools = tools
        self.time_limit = float(time_limit)
        if protocol == "auto":
            protocol = "native" if getattr(chat, "native_tools", False) else "text"
        self.protocol = protocol
        self.max_parallel_tools = max_parallel_tools
        self.list_objects = list_objects
        self.max_turns = max_turns
        self.constrain = constrain
        self.pfm = pfm
        self.answer_last_turn = answer_last_turn

    def grammar(self, scene: Scene, *, final_only: bool = False) -> Grammar:
        """The grammar of one model turn in ``scene`` (text protocol), for constrained decoding.

        ``final_only`` is the last turn ``max_turns`` allows: only the final response.
        """
        names = [o.name for o in scene] + [h.name for h in scene.humans if h.name]
        return raider_turn(
            self.tools.openai_tools(),
            list(dict.fromkeys(names)) or ["robot"],
            {c.value: c.response.value for c in CATEGORY_MEANINGS},
            final_only=final_only,
        )

    def __repr__(self) -> str:
        return f"RaiderAgent({self.chat!r}, protocol={self.protocol!r}, time_limit={self.time_limit:g})"

    # ------------------------------------------------------------------ prompts
    def system_prompt(self, scene: Scene) -> str:
        """The system prompt (paper Fig. 4) for ``scene``'s robot."""
        robot = scene.robot
        return render(
            "raider_system",
            categories=[
                {"name": c.value, "response": c.response.value, "meaning": m}
                for c, m in CATEGORY_MEANINGS.items()
            ],
            priority=[c.value for c in PRIORITY],
            responses=RESPONSES,
            tools_description=self.tools.describe(),
            robot={
                "arms": int(robot["arms"]),
                "reach": f"{float(robot['reach']):g}",
                "handover_distance": f"{float(robot['handover_distance']):g}",
            },
            protocol=self.protocol,
        )

    def user_prompt(self, scene: Scene, query: Query) -> str:
        """The first user message: the query, plan context and the objects in the scene."""
        # All objects, as object_detection() reports them (AI2-THOR's `visible` flag marks only
        # what is in the camera frame, far fewer than the robot knows about).
        objects = [o.name for o in scene] if self.list_objects else []
        return render(
            "raider_user",
            query=query.text,
            preconditions=list(query.preconditions),
            unsatisfied=list(query.unsatisfied),
            bindings=dict(query.bindings),
            objects=objects,
        )

    def _warning(self, number: int, **variables: Any) -> str:
        return render("raider_warning", number=number, **variables)

    def _w4(self, problem: str) -> str:
        return self._warning(
            4,
            problem=problem,
            protocol=self.protocol,
            responses=RESPONSES,
            categories=[c.value for c in ANSWER_CATEGORIES],
        )

    # ------------------------------------------------------------------ check
    def check(
        self, scene: Scene, query: str | Query, *, cancel: threading.Event | None = None
    ) -> Verdict:
        """Run the PFM loop on ``query`` in ``scene`` and return the verdict.

        Never raises for model or tool misbehaviour: a failing backend, the time limit and
        ``cancel`` give ``Verdict.unknown`` with the reason.
        """
        return _Run(self, scene, as_query(query), cancel).run()


class _Run:
    """One check: the conversation, the records, and the PFM loop."""

    def __init__(
        self, agent: RaiderAgent, scene: Scene, query: Query, cancel: threading.Event | None
    ) -> None:
        self.agent = agent
        self.scene = scene
        self.query = query
        self.cancel = cancel
        self.start = time.monotonic()
        self.deadline = self.start + agent.time_limit
        self.messages: list[dict[str, Any]] = []
        self.trace: list[dict[str, Any]] = []
        self.tool_calls: list[ToolCall] = []
        self.questions: list[str] = []
        self.warnings: list[int] = []
        self.turns = 0
        self.native = agent.protocol == "native"
        self.tool_names = list(agent.tools.names())
        self.param_order = self._param_order()
        self.grammar: Grammar | None = None
        self.last_grammar: Grammar | None = None
        if (
            agent.constrain
            and not self.native
            and getattr(agent.chat, "supports_grammar", False) is True
        ):
            self.grammar = agent.grammar(scene)
            if agent.answer_last_turn:  # built only where the last turn can use it
                self.last_grammar = agent.grammar(scene, final_only=True)

    # ------------------------------------------------------------------ records
    def _append(self, message: dict[str, Any], kind: str, **extra: Any) -> None:
        self.messages.append(message)
        self.trace.append({**message, "kind": kind, **extra})

    def _warn(self, number: int, text: str, tool_call_id: str | None = None) -> None:
        self.warnings.append(number)
        if tool_call_id is not None:
            # A native tool call must be answered by a tool message carrying its id.
            msg = {"role": "tool", "tool_call_id": tool_call_id, "content": text}
        else:
            msg = {"role": "user", "content": text}
        self._append(msg, "warning", warning=number)

    def _param_order(self) -> dict[str, list[str]]:
        order: dict[str, list[str]] = {}
        for spec in self.agent.tools.openai_tools():
            fn = spec.get("function", spec)
            props = (fn.get("parameters") or {}).get("properties") or {}
            order[fn.get("name", "")] = list(props)
        return order

    def _verdict_kwargs(self) -> dict[str, Any]:
        return {
            "tool_calls": self.tool_calls,
            "questions": list(dict.fromkeys(self.questions)),
            "trace": self.trace,
            "elapsed_s": time.monotonic() - self.start,
        }

    def _unknown(self, reason: str) -> Verdict:
        self.trace.append({"role": "pfm", "content": f"stopped: {reason}", "kind": "stop"})
        return Verdict.unknown(reason, **self._verdict_kwargs())

    def _check_stop(self) -> float:
        """Remaining seconds; raises :class:`_Stop` when cancelled or out of time."""
        if self.cancel is not None and self.cancel.is_set():
            raise _Stop("the check was cancelled")
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise _Stop(
                f"no valid final response within the time limit of {self.agent.time_limit:g} s "
                f"({self.turns} model call(s), {len(self.warnings)} warning(s))"
            )
        return remaining

    def _wait(self, futures: list[Future[Any]]) -> None:
        """Wait for ``futures`` while watching ``cancel`` and the deadline."""
        pending = set(futures)
        while pending:
            remaining = self._check_stop()
            _, pending = wait(pending, timeout=min(_POLL, remaining), return_when=FIRST_COMPLETED)

    # ------------------------------------------------------------------ loop
    def run(self) -> Verdict:
        agent = self.agent
        self._append({"role": "system", "content": agent.system_prompt(self.scene)}, "system")
        self._append(
            {"role": "user", "content": agent.user_prompt(self.scene, self.query)}, "query"
        )
        # The model call and the tools run on daemon threads, so cancel and the deadline are
        # seen during a slow call, and a call still hanging when the check gives up is left
        # behind without keeping the process alive (a pool's threads would be joined at exit).
        try:
            while True:
                if agent.max_turns is not None and self.turns >= agent.max_turns:
                    return self._unknown(
                        f"no valid final response after {self.turns} model call(s) "
                        f"({len(self.warnings)} warning(s))"
                    )
                remaining = self._check_stop()
                reply = self._ask_model(remaining)
                verdict = self._handle(reply)
                if verdict is not None:
                    return verdict
        except _Stop as stop:
            return self._unknown(str(stop))
        except BackendError as exc:
            return self._unknown(f"the chat model failed: {exc}")

    def _ask_model(self, remaining: float) -> ChatReply:
        tools = self.agent.tools.openai_tools() if self.native else None
        self.turns += 1
        last = (
            self.agent.answer_last_turn
            and self.agent.max_turns is not None
            and self.turns >= self.agent.max_turns
            and self.turns > 1
        )
        if last and self.agent.pfm:
            # The PFM says the budget is spent: a model that keeps calling tools otherwise ends
            # the check unknown without ever answering.
            self._append(
                {
                    "role": "user",
                    "content": render(
                        "raider_last_turn",
                        responses=RESPONSES,
                        categories=[c.value for c in ANSWER_CATEGORIES],
                    ),
                },
                "last-turn",
            )
        # Only a backend that says it decodes under a grammar is given one (the protocol's
        # complete() has no such argument); the last allowed turn admits only the final response.
        grammar = self.last_grammar if last else self.grammar
        extra = {"grammar": grammar} if grammar is not None else {}
        future = start_daemon(
            self.agent.chat.complete,
            list(self.messages),
            tools=tools,
            timeout=remaining,
            name="raider-model",
            **extra,
        )
        try:
            self._wait([future])
        except _Stop:
            future.cancel()
            raise
        try:
            reply = future.result()
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of the model is an unknown verdict
            raise BackendError(f"{self.agent.chat!r} raised {type(exc).__name__}: {exc}") from exc
        if isinstance(reply, str):  # a lenient ChatModel may return plain text
            reply = ChatReply(content=reply)
        if not isinstance(reply, ChatReply):
            raise BackendError(
                f"{self.agent.chat!r} returned {type(reply).__name__}, not ChatReply"
            )
        return reply

    def _handle(self, reply: ChatReply) -> Verdict | None:
        """One PFM iteration on a model reply; a Verdict when the check is done."""
        content = reply.content or ""
        self.questions.extend(_questions(content))
        native_calls = list(reply.tool_calls) if self.native else []
        # Tool calls: native ones when the reply has them, else the text protocol (a model on a
        # native endpoint may still write call_tool{...}).
        text_calls, spans = parse_tool_calls(content) if not native_calls else ([], [])
        if native_calls:
            calls = [self._from_native(i, c) for i, c in enumerate(native_calls)]
            assistant: dict[str, Any] = {
                "role": "assistant",
                "content": content,
                "tool_calls": [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.raw_args
                            if isinstance(c.raw_args, str)
                            else json.dumps(c.raw_args),
                        },
                    }
                    for c in calls
                ],
            }
        else:
            calls = [self._from_text(c) for c in text_calls]
            assistant = {"role": "assistant", "content": content}
        self._append(assistant, "reply")

        answer, attempted = find_final(content, spans)
        if not self.agent.pfm:
            return self._unmanaged(calls, answer, native=bool(native_calls))
        if calls:
            # Warning 1: a final response next to pending tool calls was made up; the paper
            # appends it before the tool responses. Native tool messages must follow the
            # assistant message directly, so there it comes after them.
            w1 = self.agent._warning(1) if attempted else None
            if w1 and not native_calls:
                self._warn(1, w1)
            self._run_calls(calls, native=bool(native_calls))
            if w1 and native_calls:
                self._warn(1, w1)
            return None
        if answer is None:
            problem = (
                "it could not be read as a JSON object with a final_response key"
                if attempted
                else ""
            )
            self._warn(4, self.agent._w4(problem))
            return None
        verdict, problem = self._verdict(answer)
        if verdict is None:
            self._warn(4, self.agent._w4(problem))
            return None
        self.trace.append(
            {
                "role": "pfm",
                "content": f"final response accepted: {verdict.category.value}",
                "kind": "stop",
            }
        )
        return verdict

    def _unmanaged(
        self, calls: list[_Call], answer: dict[str, Any] | None, *, native: bool
    ) -> Verdict | None:
        """The loop without the PFM (the ablation): no warnings, the first final response wins."""
        if answer is not None:
            verdict, _ = self._verdict(answer)
            if verdict is not None:
                if calls:
                    self.trace.append(
                        {
                            "role": "pfm",
                            "content": "unmanaged: made-up tool result accepted",
                            "kind": "unmanaged",
                        }
                    )
                return verdict
        if calls:
            self._run_calls(calls, native=native)
            return None
        raise _Stop("no tool call and no readable final response (the PFM is off)")

    # ------------------------------------------------------------------ tool calls
    def _from_native(self, index: int, req: ToolCallRequest) -> _Call:
        call_id = req.id or f"call_{self.turns}_{index}"
        raw = req.args
        if isinstance(raw, str):
            try:
                raw = loads_lenient(raw) if raw.strip() else {}
            except ValueError as exc:
                return _Call(req.name, [], req.args, call_id, f"its arguments are not JSON: {exc}")
        return _Call(req.name, self._normalise(raw), req.args, call_id)

    def _from_text(self, call: TextCall) -> _Call:
        if call.error is not None:
            return _Call(
                call.name, [], call.raw, None, f"the tool call could not be read: {call.error}"
            )
        return _Call(call.name, self._normalise(call.args), call.args)

    @staticmethod
    def _normalise(args: Any) -> list[Any] | dict[str, Any]:
        """Arguments the tool set takes: a positional list, or a name -> value mapping."""
        if args is None:
            return []
        if isinstance(args, dict):
            # Some models nest the list: {"args": [...]}.
            return _Run._normalise(args["args"]) if set(args) == {"args"} else args
        if isinstance(args, (list, tuple)):
            return list(args)
        return [args]  # "args": "Apple" means one argument

    def _listed(self, name: str, args: list[Any] | dict[str, Any]) -> list[Any]:
        """Arguments as a list for the record (a mapping in the tool's parameter order)."""
        if not isinstance(args, dict):
            return list(args)
        order = self.param_order.get(name) or []
        return [args[k] for k in order if k in args] + [
            v for k, v in args.items() if k not in order
        ]

    def _run_calls(self, calls: list[_Call], *, native: bool) -> None:
        """Run one turn's tool calls concurrently; append results and warnings in call order.

        The calls of one turn are independent (the model has seen none of their results), so
        they run together (at most ``max_parallel_tools`` at once); the conversation gets them
        back in the order asked.
        """
        runnable = [c for c in calls if c.read_error is None]
        done = _run_together(self._call_tool, runnable, self.agent.max_parallel_tools)
        by_call = dict(zip(map(id, runnable), done, strict=True))
        futures = [by_call.get(id(c)) for c in calls]
        self._wait(done)
        for c, fut in zip(calls, futures, strict=True):
            args = self._listed(c.name, c.args)
            args_json = json.dumps(args, default=str, ensure_ascii=False)
            reply_id = c.call_id if native else None
            if fut is None:  # the call itself could not be read
                self.tool_calls.append(ToolCall(c.name or "?", args, error=c.read_error))
                text = self.agent._warning(
                    3,
                    tool=c.name or "?",
                    args=c.raw_args if isinstance(c.raw_args, str) else args_json,
                    error=c.read_error,
                )
                self._warn(3, text, reply_id)
                continue
            status, value = fut.result()
            if status == "scene":
                # The scene itself is unusable (a NaN, a number out of range): whatever the
                # model concludes from here would rest on it. Fail closed.
                self.tool_calls.append(ToolCall(c.name, args, error=value))
                raise _Stop(f"the scene cannot be reasoned about: {value}")
            if status == "ok":
                self.tool_calls.append(ToolCall(c.name, args, result=value))
                text = render(
                    "raider_tool_result",
                    tool=c.name,
                    args=args_json,
                    result=json.dumps(value, default=str, ensure_ascii=False),
                )
                msg = (
                    {"role": "tool", "tool_call_id": reply_id, "content": text}
                    if native
                    else {"role": "user", "content": text}
                )
                self._append(msg, "tool_result", tool=c.name)
            elif status == "unknown":
                self.tool_calls.append(ToolCall(c.name, args, error=value))
                self._warn(2, self.agent._warning(2, tool=c.name, tools=self.tool_names), reply_id)
            else:
                self.tool_calls.append(ToolCall(c.name, args, error=value))
                text = self.agent._warning(3, tool=c.name, args=args_json, error=value)
                self._warn(3, text, reply_id)

    def _call_tool(self, call: _Call) -> tuple[str, Any]:
        """``("ok", result)``, ``("unknown", error)``, ``("failed", error)`` or ``("scene", error)``.

        A :class:`ToolError` is the model's doing (bad name or arguments) and goes back to it
        as a warning, unless a :class:`SceneError` caused it: the scene's numbers are unusable,
        and the check ends ``unknown``. Anything else is a bug in a tool and propagates.
        """
        try:
            return "ok", self.agent.tools.call(self.scene, call.name, call.args)
        except UnknownToolError as exc:
            return "unknown", str(exc)
        except ToolError as exc:
            status = "scene" if _caused_by_scene(exc) else "failed"
            return status, str(exc) or type(exc).__name__

    # ------------------------------------------------------------------ final response
    def _verdict(self, answer: dict[str, Any]) -> tuple[Verdict | None, str]:
        """A Verdict from the model's final response, or ``(None, what is wrong)``."""
        raw_resp = answer.get("final_response")
        raw_cat = answer.get("category")
        response: Response | None = None
        if raw_resp is not None:
            try:
                response = Response(str(raw_resp).strip().lower())
            except ValueError:
                return None, f"final_response is {raw_resp!r}"
        category: Category | None = None
        if raw_cat is not None and str(raw_cat).strip():
            try:
                category = parse_category(str(raw_cat))
            except ValueError:
                return None, f"category is {raw_cat!r}"
            if category is Category.UNKNOWN:
                return None, "category 'unknown' is not an answer: decide on one of the categories"
        if category is None:
            if response is Response.NONE:
                category = Category.NONE
            elif response is Response.AMBIGUITY:
                category = Category.AMBIGUITY
            elif response is Response.UNFEASIBILITY:
                return None, "the category of the unfeasibility is missing"
            else:
                return None, "final_response is missing"
        if response is not None and category.response is not response:
            return None, (
                f"category {category.value!r} does not go with final_response {response.value!r}"
            )
        explanation = answer.get("explanation")
        if not isinstance(explanation, str) or not explanation.strip():
            if category is not Category.NONE:
                return None, "the explanation is missing"
            explanation = "No issue found: the action can be executed."
        grounding = self._grounding(answer.get("grounding"))
        objects = list(
            dict.fromkeys(i for ids in grounding.values() for i in ids if self._is_object(i))
        )
        extra = answer.get("objects")
        if isinstance(extra, list):
            for name in extra:
                for oid in self._resolve(name):
                    if self._is_object(oid) and oid not in objects:
                        objects.append(oid)
        action = answer.get("action") if isinstance(answer.get("action"), str) else None
        return (
            Verdict(
                category,
                explanation.strip(),
                grounding=grounding,
                objects=objects,
                action=action,
                **self._verdict_kwargs(),
            ),
            "",
        )

    def _is_object(self, object_id: str) -> bool:
        try:
            self.scene.by_id(object_id)
        except ToolError:
            return False
        return True

    def _resolve(self, name: Any) -> list[str]:
        """objectIds (or a person's id) a grounding name stands for; [] when unresolved."""
        if not isinstance(name, str) or not name.strip():
            return []
        try:
            return [self.scene.resolve(name).id]
        except ToolError:
            pass
        # A bare type that several objects share ("Mug") stands for all of them.
        typed = self.scene.of_type(name.strip().replace(" ", ""))
        if typed:
            return [o.id for o in typed]
        try:
            return [self.scene.human(name).id]
        except ToolError:
            return []

    def _grounding(self, raw: Any) -> dict[str, list[str]]:
        if not isinstance(raw, dict):
            return {}
        out: dict[str, list[str]] = {}
        for phrase, names in raw.items():
            if isinstance(names, str):
                names = [names]
            if not isinstance(names, list):
                continue
            ids = list(dict.fromkeys(i for n in names for i in self._resolve(n)))
            out[str(phrase)] = ids
        return out


#: The options :func:`agent_on` gives the agent (the rest go to the chat backend).
AGENT_OPTIONS = "time_limit tools max_turns constrain pfm answer_last_turn protocol".split()


def agent_on(backend: str, **options: Any) -> RaiderAgent:
    """RAIDER's agent on a chat backend by name (the registry's ``openai``, ``transformers``,
    ``llama-cpp``); :data:`AGENT_OPTIONS` go to the agent, every other option to the backend.
    """
    agent_opts = {k: options.pop(k) for k in AGENT_OPTIONS if k in options}
    return RaiderAgent(make_chat(backend, **options), **agent_opts)
