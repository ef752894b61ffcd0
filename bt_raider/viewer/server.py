"""A local web server for the viewer page: a trace file, or a run as it happens.

Standard library only (:class:`http.server.ThreadingHTTPServer`), bound to 127.0.0.1::

    GET /            the page (static/viewer.html, .css, .js)
    GET /trace.json  the trace so far
    GET /events      server-sent events: the tick entries after ``?from=N`` (or the
                     ``Last-Event-ID``), as they are recorded; ``end`` when the run is over

The page fetches ``/trace.json``, then follows ``/events`` while the trace is not finished.
Requests naming another host are refused (a web page elsewhere cannot read the trace by
rebinding a name to 127.0.0.1).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bt_raider.errors import BtRaiderError
from bt_raider.viewer.page import ASSETS, asset
from bt_raider.viewer.recorder import TraceRecorder
from bt_raider.viewer.trace import load_trace

HOST = "127.0.0.1"
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_S = 10.0


class ViewerError(BtRaiderError):
    """The viewer cannot serve: a bad port, or the port is taken."""


class _FixedTrace:
    """A finished trace (from a file) behind the recorder's reading interface."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.ticks = data["ticks"]

    def header(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k != "ticks"}

    def to_json(self) -> dict[str, Any]:
        return self.data

    def entries_since(self, start: int, timeout: float | None = None) -> tuple[list[Any], bool]:
        return self.ticks[start:], True


class ViewerServer:
    """Serve the viewer page for a trace on ``http://127.0.0.1:PORT/``.

    Args:
        source: a live :class:`TraceRecorder`, a trace's JSON data, or a trace file's path
            (read and checked now: :class:`~bt_raider.viewer.trace.TraceError` if bad).
        port: the port; 0 picks a free one.

    Use as a context manager, or :meth:`start` / :meth:`stop`.
    """

    def __init__(
        self, source: TraceRecorder | dict[str, Any] | str | Path, *, port: int = 0
    ) -> None:
        if isinstance(source, (str, Path)):
            source = load_trace(source)
        self.source: Any = source if isinstance(source, TraceRecorder) else _FixedTrace(source)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ViewerError(
                f"port must be an integer from 0 to 65535 (0: any free), got {port!r}"
            )
        self._stopping = threading.Event()
        self._viewer_came = threading.Event()
        try:
            self.httpd = ThreadingHTTPServer((HOST, port), self._handler())
        except OSError as exc:
            raise ViewerError(
                f"cannot serve on {HOST}:{port}: {exc.strerror or exc} (--port 0 picks a free port)"
            ) from exc
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

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
                    body = json.dumps(server.source.to_json(), separators=(",", ":"))
                    self._send(HTTPStatus.OK, body.encode("utf-8"), "application/json")
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
                self.wfile.write(body)

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
                        entries, finished = server.source.entries_since(index, timeout=0.5)
                        for entry in entries:
                            index += 1
                            data = json.dumps(entry, separators=(",", ":"))
                            self.wfile.write(f"id: {index}\nevent: tick\ndata: {data}\n\n".encode())
                        if entries:
                            quiet_since = time.monotonic()
                        elif finished:
                            header = json.dumps(server.source.header(), separators=(",", ":"))
                            self.wfile.write(f"event: end\ndata: {header}\n\n".encode())
                            self.wfile.flush()
                            return
                        elif time.monotonic() - quiet_since > KEEPALIVE_S:
                            self.wfile.write(b": keep-alive\n\n")
                            quiet_since = time.monotonic()
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the page went away

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
