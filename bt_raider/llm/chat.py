"""Chat-model backends behind one tiny protocol: ``complete(messages) -> ChatReply``.

Backends:

* :class:`OpenAIChat` -- the real ``openai`` SDK, for OpenAI or any OpenAI-compatible server
  (vLLM, Ollama, llama.cpp server, LM Studio) through ``base_url``. Transport errors are retried
  here with our own exponential backoff (the SDK's retries are switched off), so the delays are
  known and testable; an endpoint that stays unreachable ends in :class:`BackendError`. A
  ``timeout`` bounds the whole call, even against a server that trickles its reply a byte at a
  time (which no per-read timeout catches): see :func:`call_within`.
* :class:`TransformersChat` -- a local ``transformers`` model from a path on disk (never
  downloads), prompted through its chat template.
* :class:`ScriptedChat` -- replays a fixed list of replies; for tests and demos of the agent loop.

:func:`make_chat` builds one by name. Backend failures raise :class:`BackendError`; the agent
turns that into an ``unknown`` verdict (fail closed).
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any

from bt_raider.errors import BackendError, need, require

# Re-exported: the protocol and its reply types were defined here before 0.3.
from bt_raider.llm.base import ChatModel as ChatModel
from bt_raider.llm.base import ChatReply as ChatReply
from bt_raider.llm.base import ToolCallRequest as ToolCallRequest
from bt_raider.llm.local import LlamaCppChat
from bt_raider.llm.models import find_model, is_gguf

#: Key used when a base_url server needs none (vLLM, Ollama and llama.cpp accept anything).
DUMMY_API_KEY = "not-needed"
#: OpenAI's own endpoint: the one base URL that needs a real key.
OPENAI_URL = "https://api.openai.com/v1"
#: HTTP statuses worth another try: timeout, conflict, rate limit (and every 5xx).
RETRY_STATUSES = frozenset({408, 409, 429})


# --------------------------------------------------------------------------- deadlines


def start_daemon(
    fn: Callable[..., Any], *args: Any, name: str = "bt_raider-call", **kwargs: Any
) -> Future[Any]:
    """Run ``fn(*args, **kwargs)`` on a new daemon thread; its :class:`Future` at once.

    A daemon thread never keeps the process alive: a caller that stops waiting for it (a
    deadline passed) can exit at once, while the thread, which nothing can kill, finishes on its
    own. (A :class:`~concurrent.futures.ThreadPoolExecutor`'s threads are joined at exit: one
    stuck in a slow HTTP read would hold the process for as long as the server trickles.)
    """
    future: Future[Any] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def call_within(fn: Callable[[], Any], seconds: float | None) -> Any:
    """``fn()``'s result, or :class:`TimeoutError` once ``seconds`` have passed.

    With ``seconds`` None the call runs on the caller's thread. Otherwise it runs on a daemon
    thread that is abandoned (left to finish) when time runs out, so the bound holds whatever
    ``fn`` does: a socket read that gets one byte every half second never times out by itself.
    """
    if seconds is None:
        return fn()
    future = start_daemon(fn)
    try:
        return future.result(timeout=max(0.0, seconds))
    except FuturesTimeout:
        future.cancel()
        raise TimeoutError(f"no answer within {seconds:.2f} s") from None


def _deadline_http_client(openai: Any) -> Any:
    """The SDK's default HTTP client, with a transport that ends a reply arriving too slowly.

    httpx's read timeout bounds each read, not the whole reply: a server that sends a byte every
    half second keeps a 5 s request alive for minutes. This transport also stops reading the body
    once the request's read timeout has passed *in total* since the request started, and closes
    the connection, so a thread left behind by :func:`call_within` ends soon too.
    """
    try:  # the HTTP library the installed SDK uses: httpx2 for openai 3, httpx before
        import httpx2 as httpx
    except ImportError:
        httpx = require("httpx", "llm", needed_by="the openai SDK")

    class DeadlineStream(httpx.SyncByteStream):
        def __init__(self, inner: Any, deadline: float, request: Any) -> None:
            self._inner = inner
            self._deadline = deadline
            self._request = request

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                if time.monotonic() > self._deadline:
                    raise httpx.ReadTimeout(
                        "the reply was still arriving when the request's time ran out",
                        request=self._request,
                    )
                yield chunk

        def close(self) -> None:
            self._inner.close()

    class DeadlineTransport(httpx.HTTPTransport):
        def handle_request(self, request: Any) -> Any:
            budget = (request.extensions.get("timeout") or {}).get("read")
            start = time.monotonic()
            response = super().handle_request(request)
            if budget is not None:
                response.stream = DeadlineStream(response.stream, start + budget, request)
            return response

    limits = getattr(openai, "DEFAULT_CONNECTION_LIMITS", None)
    transport = DeadlineTransport(**({"limits": limits} if limits is not None else {}))
    return openai.DefaultHttpxClient(transport=transport)


# --------------------------------------------------------------------------- OpenAI


def _is_openai(base_url: str) -> bool:
    """Whether ``base_url`` is OpenAI's own endpoint (which needs a real key)."""
    return base_url.rstrip("/").lower().removesuffix("/v1") == OPENAI_URL.removesuffix("/v1")


def _parse_arguments(raw: Any) -> Any:
    """Native tool-call arguments: a JSON string, usually an object; kept raw when unreadable."""
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw  # the agent reports it to the model (PFM warning 3)


class OpenAIChat:
    """A chat model behind the OpenAI chat-completions API, through the real ``openai`` SDK.

    Args:
        model: model name, e.g. ``"gpt-4o"`` or the name a local server serves.
        base_url: an OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``; None for
            ``OPENAI_BASE_URL``, else OpenAI itself.
        api_key: the key; falls back to ``OPENAI_API_KEY``, and, for any endpoint but
            api.openai.com, to a placeholder (local servers take no key; the SDK needs a
            string).
        client: an ``openai.OpenAI``-like client to use instead of building one (its own
            retries should be off).
        max_retries: how many times a transport error (connection, timeout, 408/409/429/5xx)
            is retried before giving up.
        backoff: first retry delay in seconds; doubles on every retry.
        temperature: sampling temperature (0 for repeatable checks).
        native_tools: whether the endpoint supports native function calling; the agent's
            ``protocol="auto"`` reads this.

    Raises:
        BackendError: no API key can be found for api.openai.com.
    """

    def __init__(
        self,
        model: str = "gpt-4o",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        max_retries: int = 3,
        backoff: float = 0.5,
        temperature: float = 0.0,
        native_tools: bool = True,
    ) -> None:
        if max_retries < 0:
            raise BackendError(f"max_retries must be >= 0, got {max_retries!r}")
        if backoff < 0:
            raise BackendError(f"backoff must be >= 0 seconds, got {backoff!r}")
        self.model = model
        self.max_retries = max_retries
        self.backoff = backoff
        self.temperature = temperature
        self.native_tools = native_tools
        self._sleep: Callable[[float], None] = time.sleep  # tests replace it to see the delays
        if client is None:
            openai = require("openai", "llm", needed_by="OpenAIChat")
            base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
            key = api_key or os.environ.get("OPENAI_API_KEY")
            if not key:
                if base_url is None or _is_openai(base_url):
                    raise BackendError(
                        f"no API key for model {model!r} at api.openai.com: set OPENAI_API_KEY, "
                        "pass api_key=..., or give base_url=... (or OPENAI_BASE_URL) for a "
                        "local OpenAI-compatible server"
                    )
                key = DUMMY_API_KEY  # a local server: keyless
            # The SDK's own retries are off: the backoff is ours (see complete()).
            client = openai.OpenAI(
                api_key=key,
                base_url=base_url,
                max_retries=0,
                http_client=_deadline_http_client(openai),
            )
        self.client = client
        self.base_url = str(base_url or getattr(client, "base_url", "") or "api.openai.com")

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r}, base_url={self.base_url!r})"

    def _where(self) -> str:
        return f"model {self.model!r} at {self.base_url}"

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
    ) -> ChatReply:
        """Send the conversation; retry transport errors with exponential backoff.

        ``timeout`` bounds the whole call, retries and backoff included: every request gets
        the time left as its HTTP timeout and is abandoned when that runs out, however slowly
        the server answers.

        Raises:
            BackendError: the endpoint stayed unreachable, refused the key, rejected the
                request, ran out of time, or sent no usable reply. The message names the URL
                and the model.
        """
        openai = require("openai", "llm", needed_by="OpenAIChat")
        deadline = None if timeout is None else time.monotonic() + timeout
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if tools and self.native_tools:
            kwargs["tools"] = tools
        last: Exception | None = None
        attempts = 0
        for attempt in range(self.max_retries + 1):
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            attempts += 1
            # Without a timeout the client's default applies (None would mean "wait forever").
            per_call = {} if remaining is None else {"timeout": remaining}
            try:
                create = functools.partial(
                    self.client.chat.completions.create, **kwargs, **per_call
                )
                response = call_within(create, remaining)
                return self._reply(response)
            except TimeoutError as exc:  # the request was abandoned at the deadline
                last = exc
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                # A wrong key does not get better by asking again.
                raise BackendError(f"{self._where()} refused the API key: {exc}") from exc
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status not in RETRY_STATUSES and status < 500:
                    raise BackendError(
                        f"{self._where()} rejected the request (HTTP {status}): {exc}"
                    ) from exc
                last = exc
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                last = exc
            except BackendError:
                raise
            except (openai.OpenAIError, ValueError, TypeError, AttributeError, KeyError) as exc:
                # A body that is not JSON, or JSON that does not fit the schema.
                raise BackendError(
                    f"{self._where()} sent an unusable reply: {type(exc).__name__}: {exc}"
                ) from exc
            if attempt < self.max_retries:
                delay = self.backoff * (2**attempt)
                if deadline is not None:
                    delay = min(delay, max(0.0, deadline - time.monotonic()))
                self._sleep(delay)
        if last is None:
            raise BackendError(
                f"{self._where()}: no time left for the request (timeout {timeout} s)"
            )
        timed_out = isinstance(last, (TimeoutError, openai.APITimeoutError))
        kind = "timed out" if timed_out else "unreachable"
        if isinstance(last, openai.APIStatusError):
            kind = f"failing (HTTP {last.status_code})"
        limit = f" (timeout {timeout:g} s)" if timed_out and timeout is not None else ""
        raise BackendError(
            f"{self._where()} is {kind} after {attempts} attempt(s){limit}: {last}"
        ) from last

    def _reply(self, response: Any) -> ChatReply:
        choices = getattr(response, "choices", None)
        if not choices:
            raise BackendError(f"{self._where()} sent a reply without choices: {response!r}")
        message = choices[0].message
        calls = [
            ToolCallRequest(
                name=tc.function.name, args=_parse_arguments(tc.function.arguments), id=tc.id
            )
            for tc in (getattr(message, "tool_calls", None) or [])
            if getattr(tc, "function", None) is not None
        ]
        return ChatReply(content=message.content or "", tool_calls=calls)


# --------------------------------------------------------------------------- transformers


class TransformersChat:
    """A local causal language model through ``transformers``, prompted with its chat template.

    The model is read from ``model`` (a folder on disk, a ``.gguf`` file or a package carrying
    one, see :func:`bt_raider.llm.models.find_model`) with ``local_files_only=True``: nothing
    is downloaded. It is loaded lazily on the first call, once.

    Args:
        model: path to a folder holding the model and tokenizer (with a chat template).
        max_new_tokens: generation length bound per turn.
        device: torch device, e.g. ``"cpu"``.

    Raises:
        MissingDependencyError: torch or transformers is not installed (the ``llm-local``
            extra).
        BackendError: ``model`` is empty.
    """

    #: Local chat templates rarely support function calling: the agent uses the text protocol.
    native_tools = False

    def __init__(self, model: str, *, max_new_tokens: int = 512, device: str = "cpu") -> None:
        # Found, not imported (the model loads on the first call): a missing extra says so now.
        need("llm-local", "TransformersChat")
        if not isinstance(model, str) or not model.strip():
            raise BackendError(
                f"transformers backend needs model= a local model folder, got {model!r}"
            )
        self.model = model
        self.max_new_tokens = max_new_tokens
        self.device = device
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TransformersChat(model={self.model!r}, device={self.device!r})"

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                transformers = require("transformers", "llm-local", needed_by="TransformersChat")
                if is_gguf(self.model):
                    self._loaded = self._load_gguf(transformers)
                    return self._loaded
                if not os.path.isdir(self.model):
                    raise BackendError(
                        f"transformers model {self.model!r} is not a folder on disk "
                        "(bt_raider never downloads weights: pass a local model path)"
                    )
                try:
                    tokenizer = transformers.AutoTokenizer.from_pretrained(
                        self.model, local_files_only=True
                    )
                    lm = transformers.AutoModelForCausalLM.from_pretrained(
                        self.model, local_files_only=True
                    )
                except (OSError, ValueError) as exc:
                    raise BackendError(
                        f"cannot load transformers model {self.model!r}: {exc}"
                    ) from exc
                lm.to(self.device)
                lm.eval()
                if getattr(tokenizer, "chat_template", None) is None:
                    raise BackendError(
                        f"transformers model {self.model!r} has no chat template in its "
                        "tokenizer_config.json"
                    )
                self._loaded = (tokenizer, lm)
            return self._loaded

    def _load_gguf(self, transformers: Any) -> tuple[Any, Any]:
        # A .gguf file (or a package carrying one): transformers de-quantises it with the
        # ``gguf`` package, the fallback where llama-cpp-python cannot be built.
        path = find_model(self.model)
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(path.parent), gguf_file=path.name, local_files_only=True
            )
            lm = transformers.AutoModelForCausalLM.from_pretrained(
                str(path.parent), gguf_file=path.name, local_files_only=True
            )
        except (OSError, ValueError, ImportError) as exc:
            raise BackendError(f"cannot load GGUF model {str(path)!r}: {exc}") from exc
        lm.to(self.device)
        lm.eval()
        return tokenizer, lm

    def _prompt_ids(self, tokenizer: Any, messages: list[dict[str, Any]]) -> Any:
        plain = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
        try:
            return tokenizer.apply_chat_template(
                plain, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
        except Exception:  # noqa: BLE001 - templates raise their own errors for a system role
            # Some templates (Gemma, Mistral v1) reject a system turn: fold it into the first
            # user turn instead of failing.
            if not plain or plain[0]["role"] != "system":
                raise
            system, rest = plain[0]["content"], plain[1:]
            if rest and rest[0]["role"] == "user":
                rest[0] = {"role": "user", "content": system + "\n\n" + rest[0]["content"]}
            else:
                rest.insert(0, {"role": "user", "content": system})
            return tokenizer.apply_chat_template(
                rest, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
    ) -> ChatReply:
        """Generate one assistant turn greedily (``tools`` are ignored: text protocol)."""
        torch = require("torch", "llm-local", needed_by="TransformersChat")
        tokenizer, lm = self._load()
        inputs = self._prompt_ids(tokenizer, messages)
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        gen: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "do_sample": False}
        if timeout is not None:
            if timeout <= 0:
                raise BackendError(f"{self!r}: no time left to generate")
            gen["max_time"] = timeout  # transformers stops generating after this many seconds
        if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
            gen["pad_token_id"] = tokenizer.eos_token_id
        try:
            with torch.no_grad():
                out = lm.generate(**inputs, **gen)
        except RuntimeError as exc:
            raise BackendError(f"{self!r} failed to generate: {exc}") from exc
        new_tokens = out[0][inputs["input_ids"].shape[-1] :]
        return ChatReply(content=tokenizer.decode(new_tokens, skip_special_tokens=True).strip())


# --------------------------------------------------------------------------- scripted


class ScriptedChat:
    """Replays scripted replies in order and records every conversation it was sent.

    Each item is a ``str`` (the reply's text), a :class:`ChatReply` (text and native tool
    calls), an ``Exception`` (raised, e.g. a :class:`BackendError`), or a callable that gets
    the messages and returns a str or ChatReply. The script may be an endless iterator (a
    model that loops forever).

    Args:
        replies: the script.
        native_tools: whether to report native tool-call support to the agent.
        delay: seconds each reply takes, like a real model's latency; a call whose ``timeout``
            is shorter sleeps ``timeout`` and raises :class:`BackendError`.

    Attributes:
        calls: a deep copy of every ``messages`` list received, in order.
        tools_seen: the ``tools`` argument of every call.
    """

    def __init__(
        self, replies: Iterable[Any] = (), *, native_tools: bool = False, delay: float = 0.0
    ) -> None:
        self._replies: Iterator[Any] = iter(replies)
        self.native_tools = native_tools
        self.delay = delay
        self.calls: list[list[dict[str, Any]]] = []
        self.tools_seen: list[list[dict[str, Any]] | None] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedChat({len(self.calls)} call(s) so far)"

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
    ) -> ChatReply:
        with self._lock:
            self.calls.append(copy.deepcopy(messages))
            self.tools_seen.append(tools)
            count = len(self.calls)
            try:
                item = next(self._replies)
            except StopIteration:
                item = BackendError(
                    f"scripted chat exhausted: call {count} has no reply "
                    f"(the script held {count - 1})"
                )
        if self.delay:
            if timeout is not None and timeout < self.delay:
                time.sleep(max(0.0, timeout))
                raise BackendError(f"scripted chat timed out after {timeout:.2f} s")
            time.sleep(self.delay)
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(copy.deepcopy(messages))
        if isinstance(item, ChatReply):
            return item
        if isinstance(item, str):
            return ChatReply(content=item)
        raise BackendError(
            f"scripted reply {count} must be a str, ChatReply, Exception or callable, "
            f"got {type(item).__name__}"
        )


# --------------------------------------------------------------------------- factory

BACKENDS: dict[str, type] = {
    "openai": OpenAIChat,
    "transformers": TransformersChat,
    "scripted": ScriptedChat,
    "llama-cpp": LlamaCppChat,
}


def make_chat(backend: str, **options: Any) -> ChatModel:
    """Build a chat model by backend name.

    Args:
        backend: ``"openai"`` (any OpenAI-compatible endpoint), ``"transformers"`` (a local
            model folder, ``.gguf`` file or model package), ``"llama-cpp"`` (a GGUF model
            in-process, :class:`~bt_raider.llm.local.LlamaCppChat`) or ``"scripted"``
            (``replies=[...]``).
        **options: the backend's constructor arguments, e.g. ``model``, ``base_url``,
            ``api_key`` for ``openai``; ``model``, ``max_new_tokens``, ``device`` for
            ``transformers``.

    Raises:
        BackendError: unknown backend or option (the message lists the valid ones), or the
            backend's own configuration error (e.g. no API key).
    """
    cls = BACKENDS.get(backend) if isinstance(backend, str) else None
    if cls is None:
        raise BackendError(
            f"unknown chat backend {backend!r}: expected one of {', '.join(BACKENDS)}"
        )
    params = inspect.signature(cls).parameters
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise BackendError(
            f"chat backend {backend!r} does not take option(s) {', '.join(unknown)}: "
            f"expected {', '.join(params)}"
        )
    if backend == "transformers" and "model" not in options:
        raise BackendError("chat backend 'transformers' needs model= a local model folder")
    return cls(**options)
