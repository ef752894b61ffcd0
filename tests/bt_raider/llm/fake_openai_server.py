"""A tiny OpenAI-compatible HTTP server for tests: scripted replies, recorded requests.

It speaks just enough of the OpenAI REST API for the real ``openai`` SDK to talk to it over
HTTP on 127.0.0.1: ``POST /v1/chat/completions`` answers from a queue of scripted responses,
``POST /v1/embeddings`` returns deterministic vectors (a hash of the text, unit length), and
``GET /v1/models`` lists the model. Every request is recorded. A reply may also be raw bytes
(a body that is not JSON) and may trickle, a byte at a time (a server too slow for any read
timeout to notice).

Usage::

    from tests.bt_raider.llm.fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        server.push_text('{"final_response": "none", ...}')
        server.push_tool_calls([("robot_holding", {})])
        server.push_error(500, "overloaded")
        server.push_raw(b"{not json")
        server.push_trickle('{"final_response": "none"}', every=0.5)
        client = openai.OpenAI(base_url=server.url, api_key="x")
        ...
        assert server.chat_requests[0]["messages"][0]["role"] == "system"

An exhausted queue answers HTTP 400 ("no scripted response left"), which the SDK does not
retry, so a test that scripted too little fails at once instead of hanging.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Length of the deterministic embedding vectors unless the request asks for ``dimensions``.
EMBEDDING_DIM = 16


def fake_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic unit vector for ``text`` (same text, same vector; no meaning)."""
    raw = b""
    counter = 0
    while len(raw) < 4 * dim:
        raw += hashlib.sha256(f"{counter}:{text}".encode()).digest()
        counter += 1
    ints = struct.unpack(f"<{dim}i", raw[: 4 * dim])
    vec = [i / 2**31 for i in ints]
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # keep pytest output clean

    def _send(self, status: int, body: dict[str, Any] | Raw) -> None:
        raw = body if isinstance(body, Raw) else Raw(json.dumps(body).encode())
        data = raw.data
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            if raw.every is None:
                self.wfile.write(data)
                return
            for i in range(len(data)):
                if self.server.owner._stopping.wait(raw.every):
                    return
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test): nothing to answer

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        owner = self.server.owner
        owner._record("GET", self.path, None, self.headers)
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
        else:
            self._send(404, _error(f"no route GET {self.path}", "not_found"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, _error("request body is not JSON", "invalid_request_error"))
            return
        owner._record("POST", self.path, body, self.headers)
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/chat/completions"):
            status, payload = owner._next_chat(body)
        elif path.endswith("/embeddings"):
            status, payload = owner._embeddings(body)
        else:
            status, payload = 404, _error(f"no route POST {self.path}", "not_found")
        self._send(status, payload)


class Raw:
    """A reply body sent as it is: ``data`` bytes, one byte every ``every`` seconds if given."""

    def __init__(self, data: bytes, every: float | None = None) -> None:
        self.data = data
        self.every = every


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeOpenAIServer


def _error(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class FakeOpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1`` (a free port) that replays a script.

    Queue entries (see the ``push_*`` helpers) are ``(status, body)`` pairs or callables that
    take the request body and return one; they are served in order to chat-completion requests.

    Attributes:
        url: the ``base_url`` to give the SDK (``http://127.0.0.1:PORT/v1``).
        requests: every request as ``{"method", "path", "body", "headers"}``.
        model: the model name echoed in replies when the request names none.
    """

    def __init__(self, model: str = "fake-model") -> None:
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._counter = 0
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()  # ends trickling replies at stop()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeOpenAIServer:
        self._stopping.clear()
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ scripting
    def push(self, entry: tuple[int, dict[str, Any]] | Callable[[dict], Any]) -> None:
        """Queue a raw ``(status, json_body)`` pair, or a callable ``body -> (status, json)``."""
        with self._lock:
            self._queue.append(entry)

    def push_text(self, content: str) -> None:
        """Queue an assistant reply with ``content`` and no tool calls."""
        self.push(lambda body: (200, self.completion(body, content=content)))

    def push_tool_calls(self, calls: Iterable[tuple[str, Any]], content: str | None = None) -> None:
        """Queue an assistant reply with native tool calls ``[(name, arguments), ...]``.

        ``arguments`` is JSON-encoded unless it already is a string (so malformed argument
        text can be scripted too).
        """
        calls = list(calls)
        self.push(lambda body: (200, self.completion(body, content=content, tool_calls=calls)))

    def push_error(self, status: int, message: str = "scripted failure") -> None:
        """Queue an HTTP error reply in OpenAI's error format."""
        kind = "rate_limit_error" if status == 429 else "server_error"
        self.push((status, _error(message, kind)))

    def push_raw(self, data: bytes, status: int = 200, every: float | None = None) -> None:
        """Queue a reply whose body is ``data`` as it is (e.g. not JSON)."""
        self.push((status, Raw(data, every)))

    def push_trickle(self, content: str, every: float = 0.5) -> None:
        """Queue a valid reply with ``content`` whose body arrives one byte every ``every`` s."""
        self.push(
            lambda body: (
                200,
                Raw(json.dumps(self.completion(body, content=content)).encode(), every),
            )
        )

    @property
    def pending(self) -> int:
        """Scripted responses not served yet."""
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completion requests received, in order."""
        return [
            r["body"]
            for r in list(self.requests)
            if r["method"] == "POST"
            and r["path"].split("?")[0].rstrip("/").endswith("/chat/completions")
        ]

    # ------------------------------------------------------------------ replies
    def completion(
        self,
        body: dict[str, Any],
        *,
        content: str | None = None,
        tool_calls: list[tuple[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A chat-completion JSON body in OpenAI's format."""
        with self._lock:
            self._counter += 1
            n = self._counter
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for i, (name, args) in enumerate(tool_calls)
            ]
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }

    # ------------------------------------------------------------------ internals
    def _record(self, method: str, path: str, body: Any, headers: Any) -> None:
        with self._lock:
            self.requests.append(
                {"method": method, "path": path, "body": body, "headers": dict(headers)}
            )

    def _next_chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | Raw]:
        with self._lock:
            entry = self._queue.popleft() if self._queue else None
        if entry is None:
            return 400, _error("fake server: no scripted response left", "invalid_request_error")
        if callable(entry):
            entry = entry(body)
        status, payload = entry
        return status, payload

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return 400, _error(
                "input must be a string or a list of strings", "invalid_request_error"
            )
        dim = int(body.get("dimensions") or EMBEDDING_DIM)
        base64_format = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(inputs):
            vec = fake_embedding(text, dim)
            if base64_format:  # what the SDK asks for by default; it decodes float32 itself
                emb: Any = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode()
            else:
                emb = vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model") or self.model,
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
