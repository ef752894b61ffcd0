"""A local web server for the viewer page: a trace file, or a run as it happens.

Standard library only (:class:`http.server.ThreadingHTTPServer`), bound to 127.0.0.1::

    GET /            the page (static/viewer.html, .css, .js)
    GET /trace.json  the trace so far
    GET /events      server-sent events: the tick entries after ``?from=N`` (or the
                     ``Last-Event-ID``), as they are recorded; ``end`` when the run is over

The page fetches ``/trace.json``, then follows ``/events`` while the trace is not finished.
Requests naming another host are refused (a web page elsewhere cannot read the trace by
rebinding a name to 127.0.0.1).

Bounded: a trace is checked (schema and finite numbers) before it is served; a finished trace
is serialised once and every reader is sent those same bytes (memory does not grow with
readers); at most ``max_connections`` connections are served at once (more get ``503``); a
connection that neither sends nor takes a byte for ``idle_timeout`` seconds is closed.

Slow senders (slowloris): a request's line and headers must all arrive within
``header_timeout`` seconds of the connection being ready for it, however slowly they trickle,
or the connection is closed; and while every slot is taken, a new connection takes the slot of
the one that has waited longest for its headers (a reader that has sent its request is never
put out for it). Sixteen local sockets sending a byte every 10 s so neither hold the viewer for
ever nor keep its user out.
"""

from __future__ import annotations

import io
import json
import socket
import sys
import threading
import time
from array import array
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bt_raider.errors import BtRaiderError
from bt_raider.files import MAX_TRACE_BYTES
from bt_raider.viewer.page import ASSETS, asset
from bt_raider.viewer.recorder import TraceRecorder
from bt_raider.viewer.trace import load_trace, refuse, trace_problems

HOST = "127.0.0.1"
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_S = 10.0
#: Connections served at once by default (a page holds two: the trace, then its event stream).
MAX_CONNECTIONS = 16
#: Seconds a connection may neither send nor take a byte before it is closed.
IDLE_TIMEOUT_S = 30.0
#: Seconds a request's line and headers may take to arrive, in all (a browser needs ms).
HEADER_TIMEOUT_S = 10.0
#: Bytes handed to the socket at a time: the idle timeout then bounds each piece, not the
#: whole 100 MB answer, and a slice of the one serialised trace is never a copy.
CHUNK = 1 << 20
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 17\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many viewers\n"
)


class ViewerError(BtRaiderError):
    """The viewer cannot serve: a bad port, or the port is taken."""


def _dumps(data: Any) -> bytes:
    """Compact JSON bytes; a number that is not finite is our bug here (checked before)."""
    return json.dumps(data, separators=(",", ":"), allow_nan=False).encode("utf-8")


class _FixedTrace:
    """A finished trace (from a file), serialised once and served from those bytes.

    ``/trace.json`` sends the one body to every reader; ``/events`` sends slices of it (each
    tick entry's span is kept), so the parsed document is not kept at all: the server holds
    about the file's size, however many read it.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self._header = {k: v for k, v in data.items() if k != "ticks"}
        parts = [_dumps(entry) for entry in data["ticks"]]
        self.head = head = _dumps(self._header)
        prefix = head[:-1] + (b',"ticks":[' if len(head) > 2 else b'"ticks":[')
        self._starts = array("q")
        self._ends = array("q")
        at = len(prefix)
        for part in parts:
            self._starts.append(at)
            self._ends.append(at + len(part))
            at += len(part) + 1  # and the comma
        self.body = prefix + b",".join(parts) + b"]}"

    def header(self) -> dict[str, Any]:
        return dict(self._header)

    def snapshot(self) -> bytes:
        return self.body

    def header_bytes(self) -> bytes:
        return self.head

    def events_since(
        self, start: int, timeout: float | None = None
    ) -> tuple[Iterator[memoryview], bool]:
        view, starts, ends = memoryview(self.body), self._starts, self._ends
        # One slice at a time, nothing copied: a reader costs the same for 10 or 10^6 ticks.
        return (view[starts[i] : ends[i]] for i in range(max(start, 0), len(starts))), True


class _LiveTrace:
    """A recorder's trace, serialised once per state (not once per reader) while it grows."""

    def __init__(self, recorder: TraceRecorder) -> None:
        self.recorder = recorder
        self._lock = threading.Lock()
        self._key: tuple[int, int, bool] | None = None
        self._body = b""

    def header(self) -> dict[str, Any]:
        return self.recorder.header()

    def snapshot(self) -> bytes:
        with self._lock:  # readers asking at once share one serialisation
            rec = self.recorder
            key = (rec.tick_count, len(rec.ticks), rec.finished)
            if key != self._key:
                self._body, self._key = _dumps(rec.to_json()), key
            return self._body

    def header_bytes(self) -> bytes:
        return _dumps(self.recorder.header())

    def events_since(self, start: int, timeout: float | None = None) -> tuple[list[bytes], bool]:
        entries, finished = self.recorder.entries_since(start, timeout)
        return [_dumps(entry) for entry in entries], finished


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, bounded in all by the handler's header deadline while it is set.

    A socket timeout bounds each read; a sender trickling a byte just inside it would hold the
    connection for ever. While a request's headers are awaited, each read may wait only what
    is left of ``header_deadline``; past it, :class:`TimeoutError` (an OSError: closed).
    """

    def __init__(self, sock: socket.socket, handler: Any) -> None:
        super().__init__()
        self.sock, self.handler = sock, handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        deadline = self.handler.header_deadline
        idle = self.handler.timeout
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request's headers took too long")
            self.sock.settimeout(min(left, idle))
        else:
            self.sock.settimeout(idle)
        return self.sock.recv_into(buffer)


class _BoundedHTTPServer(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` at once; the rest get 503.

    While every slot is taken, a new connection takes the slot of the connection that has
    waited longest for its request's headers (see the module's docstring).
    """

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any, max_connections: int) -> None:
        self.slots = threading.BoundedSemaphore(max_connections)
        self.refused = 0
        self.evicted = 0
        #: connection -> when it started waiting for a request's headers.
        self.awaiting: dict[socket.socket, float] = {}
        self.awaiting_lock = threading.Lock()
        super().__init__(address, handler)

    def _evict_slowest(self) -> bool:
        """Close the connection waiting longest for its headers; True if there was one."""
        with self.awaiting_lock:
            if not self.awaiting:
                return False
            victim = min(self.awaiting, key=self.awaiting.__getitem__)
            del self.awaiting[victim]
        try:
            victim.shutdown(socket.SHUT_RDWR)  # its thread's read returns; the slot comes back
        except OSError:
            pass
        self.evicted += 1
        return True

    def process_request(self, request: Any, client_address: Any) -> None:
        got = self.slots.acquire(blocking=False)
        if not got and self._evict_slowest():
            got = self.slots.acquire(timeout=1.0)
        if not got:
            self.refused += 1
            try:  # a short answer; the client's request is drained so it sees it, not a reset
                request.setblocking(False)
                try:
                    request.recv(65536)
                except OSError:
                    pass
                request.settimeout(1.0)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a reader that went away or timed out: nothing for the console
        super().handle_error(request, client_address)  # our bug: shown, not hidden


class ViewerServer:
    """Serve the viewer page for a trace on ``http://127.0.0.1:PORT/``.

    Args:
        source: a live :class:`TraceRecorder`, a trace's JSON data (checked now), or a trace
            file's path (read through :func:`~bt_raider.viewer.trace.load_trace` now).
        port: the port; 0 picks a free one.
        max_connections: connections served at once; more are answered ``503`` and closed.
        idle_timeout: seconds a connection may neither send nor take a byte before it is
            closed (a live event stream sends a keep-alive every :data:`KEEPALIVE_S`).
        header_timeout: seconds a request's line and headers may take to arrive in all, however
            slowly they trickle; past it the connection is closed.
        max_bytes: the largest trace file read (``source`` a path).

    Raises:
        TraceError: the trace is unreadable, not a trace, or holds a number that is not finite
            (:class:`~bt_raider.viewer.trace.TraceFileError` for a file that cannot be read).
        ViewerError: a bad port or limit, or the port is taken.

    Use as a context manager, or :meth:`start` / :meth:`stop`.
    """

    def __init__(
        self,
        source: TraceRecorder | dict[str, Any] | str | Path,
        *,
        port: int = 0,
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = IDLE_TIMEOUT_S,
        max_bytes: int = MAX_TRACE_BYTES,
        header_timeout: float = HEADER_TIMEOUT_S,
    ) -> None:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ViewerError(
                f"port must be an integer from 0 to 65535 (0: any free), got {port!r}"
            )
        if (
            not isinstance(max_connections, int)
            or isinstance(max_connections, bool)
            or (max_connections < 1)
        ):
            raise ViewerError(
                f"max_connections must be an integer of 1 or more, got {max_connections!r}"
            )
        if not isinstance(idle_timeout, (int, float)) or not 0 < idle_timeout < float("inf"):
            raise ViewerError(
                f"idle_timeout must be a positive number of seconds, got {idle_timeout!r}"
            )
        if not isinstance(header_timeout, (int, float)) or not 0 < header_timeout < float("inf"):
            raise ViewerError(
                f"header_timeout must be a positive number of seconds, got {header_timeout!r}"
            )
        self.header_timeout = float(header_timeout)
        if isinstance(source, TraceRecorder):
            self.source: Any = _LiveTrace(source)
        elif isinstance(source, (str, Path)):
            self.source = _FixedTrace(load_trace(source, max_bytes=max_bytes))  # checked there
        else:
            problems = trace_problems(source)
            if problems:
                raise refuse("the trace given", problems)
            self.source = _FixedTrace(source)
        self.idle_timeout = float(idle_timeout)
        self._stopping = threading.Event()
        self._viewer_came = threading.Event()
        try:
            self.httpd = _BoundedHTTPServer((HOST, port), self._handler(), max_connections)
        except OSError as exc:
            raise ViewerError(
                f"cannot serve on {HOST}:{port}: {exc.strerror or exc} (--port 0 picks a free port)"
            ) from exc
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def tick_count(self) -> int:
        """The ticks of the trace served (so far, for a live run)."""
        return int(self.source.header()["tick_count"])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def start(self) -> str:
        """Serve on a background thread; returns the URL."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self.httpd.serve_forever, name="bt_raider-viewer", daemon=True
            )
            self._thread.start()
        return self.url

    def stop(self) -> None:
        """Stop serving and close the socket (open event streams end within a second)."""
        self._stopping.set()
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self.httpd.server_close()

    def wait_for_viewer(self, timeout: float) -> bool:
        """Wait until a page follows the event stream; False after ``timeout`` seconds."""
        return self._viewer_came.wait(timeout)

    def __enter__(self) -> ViewerServer:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ requests
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "bt_raider-viewer"
            timeout = server.idle_timeout  # the socket's: each read and each write
            header_deadline: float | None = None

            def setup(self) -> None:
                super().setup()
                self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self))

            def handle_one_request(self) -> None:
                httpd = server.httpd
                self.header_deadline = time.monotonic() + server.header_timeout
                with httpd.awaiting_lock:
                    httpd.awaiting[self.connection] = time.monotonic()
                try:
                    super().handle_one_request()
                finally:
                    self.header_deadline = None
                    with httpd.awaiting_lock:
                        httpd.awaiting.pop(self.connection, None)

            def parse_request(self) -> bool:
                ok = super().parse_request()
                # The headers are in: from here on, the idle timeout alone (a long download).
                self.header_deadline = None
                with server.httpd.awaiting_lock:
                    server.httpd.awaiting.pop(self.connection, None)
                return ok

            def handle(self) -> None:
                try:
                    super().handle()
                except OSError:  # the reader went away, or was idle too long
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # the console belongs to the run

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
                if host not in (HOST, "localhost"):
                    self._send(HTTPStatus.FORBIDDEN, b"unknown host\n", "text/plain")
                    return
                url = urlsplit(self.path)
                if url.path in ASSETS:
                    name, content_type = ASSETS[url.path]
                    self._send(HTTPStatus.OK, asset(name).encode("utf-8"), content_type)
                elif url.path == "/trace.json":
                    self._send(HTTPStatus.OK, server.source.snapshot(), "application/json")
                elif url.path == "/events":
                    self._events(parse_qs(url.query))
                else:
                    self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")

            def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                view = memoryview(body)
                for start in range(0, len(body), CHUNK):
                    self.wfile.write(view[start : start + CHUNK])

            def _events(self, query: dict[str, list[str]]) -> None:
                start = self.headers.get("Last-Event-ID") or (query.get("from") or ["0"])[0]
                try:
                    index = max(0, int(start))
                except ValueError:
                    self._send(HTTPStatus.BAD_REQUEST, b"from must be an integer\n", "text/plain")
                    return
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                server._viewer_came.set()
                quiet_since = time.monotonic()
                try:
                    while not server._stopping.is_set():
                        entries, finished = server.source.events_since(index, timeout=0.5)
                        sent = False
                        for entry in entries:
                            index += 1
                            self.wfile.write(b"id: %d\nevent: tick\ndata: " % index)
                            self.wfile.write(entry)
                            self.wfile.write(b"\n\n")
                            sent = True
                        if sent:
                            quiet_since = time.monotonic()
                        elif finished:
                            header = server.source.header_bytes()
                            self.wfile.write(b"event: end\ndata: " + header + b"\n\n")
                            self.wfile.flush()
                            return
                        elif time.monotonic() - quiet_since > KEEPALIVE_S:
                            self.wfile.write(b": keep-alive\n\n")
                            quiet_since = time.monotonic()
                        self.wfile.flush()
                except OSError:
                    return  # the page went away, or stopped reading for idle_timeout

        return Handler


def open_browser(url: str) -> bool:
    """Open ``url`` in the user's graphical browser; False when there is none to open.

    Without a display (SSH, a robot's console) nothing is started: Python's fallback would run
    a text browser in the terminal and block until it is closed.
    """
    import os
    import webbrowser

    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return False
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False
