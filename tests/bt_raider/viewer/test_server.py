"""The viewer's server on 127.0.0.1: the page, the trace, and server-sent events that follow a
run as it is recorded (a plain py_trees tree ticking on another thread)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any
from urllib.request import urlopen

import py_trees
import pytest

from bt_raider.viewer.recorder import TraceRecorder
from bt_raider.viewer.server import HOST, ViewerError, ViewerServer


def _get(server: ViewerServer, path: str, host: str | None = None) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection(HOST, server.port, timeout=10)
    headers = {"Host": host} if host else {}
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, dict(response.getheaders()), body


def _sse(url: str, timeout: float = 20.0) -> list[tuple[str, Any, str | None]]:
    """Read an event stream to its end: (event, data, id) for each message."""
    out = []
    with urlopen(url, timeout=timeout) as stream:
        event, data, last_id = None, [], None
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith(":"):
                continue
            if not line:
                if event:
                    out.append((event, json.loads("\n".join(data)), last_id))
                    if event == "end":
                        return out
                event, data = None, []
                continue
            field, _, value = line.partition(": ")
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
            elif field == "id":
                last_id = value
    return out


def _trace(ticks: int = 3) -> dict[str, Any]:
    root = py_trees.composites.Sequence(
        "root", memory=True, children=[py_trees.behaviours.Running("wait")]
    )
    recorder = TraceRecorder(root)
    for _ in range(ticks):
        recorder.tick()
    recorder.event("note", "done")
    recorder.finish()
    return recorder.to_json()


def test_serves_the_page_its_files_and_the_trace_on_localhost_only():
    trace = _trace()
    with ViewerServer(trace) as server:
        assert server.httpd.server_address[0] == "127.0.0.1"
        assert server.url == f"http://127.0.0.1:{server.port}/"
        status, headers, body = _get(server, "/")
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert b'<script src="viewer.js"></script>' in body
        for path in ("/viewer.js", "/viewer.css"):
            assert _get(server, path)[0] == 200
        status, headers, body = _get(server, "/trace.json")
        assert headers["Content-Type"] == "application/json" and json.loads(body) == trace
        assert _get(server, "/nothing")[0] == 404
        # a page elsewhere rebinding a name to 127.0.0.1 is refused
        assert _get(server, "/trace.json", host=f"evil.example:{server.port}")[0] == 403
        assert _get(server, "/trace.json", host=f"localhost:{server.port}")[0] == 200
        assert _get(server, "/events?from=x")[0] == 400


def test_events_of_a_finished_trace_resume_where_asked_then_end():
    trace = _trace()
    with ViewerServer(trace) as server:
        messages = _sse(server.url + "events")
        ticks = [data for event, data, _id in messages if event == "tick"]
        assert ticks == trace["ticks"]
        assert [i for e, _d, i in messages if e == "tick"] == [
            str(i) for i in range(1, len(ticks) + 1)
        ]
        assert messages[-1][0] == "end" and messages[-1][1]["finished"] is True
        later = _sse(server.url + "events?from=2")
        assert [d for e, d, _i in later if e == "tick"] == trace["ticks"][2:]


def test_a_live_run_streams_each_tick_as_it_is_recorded():
    counter = py_trees.behaviours.StatusQueue(
        "count",
        queue=[py_trees.common.Status.RUNNING] * 20,
        eventually=py_trees.common.Status.SUCCESS,
    )
    tree = py_trees.trees.BehaviourTree(
        py_trees.composites.Sequence("root", memory=True, children=[counter])
    )
    recorder = TraceRecorder(tree)
    server = ViewerServer(recorder)
    server.start()
    try:
        ticked: list[int] = []

        def run() -> None:
            assert server.wait_for_viewer(10)  # the stream is open before the first tick
            while tree.root.status != py_trees.common.Status.SUCCESS:
                tree.tick()
                recorder.event("note", f"tick {recorder.tick_count}")
                ticked.append(recorder.tick_count)
                time.sleep(0.01)
            recorder.finish()

        thread = threading.Thread(target=run)
        thread.start()
        messages = _sse(server.url + "events")
        thread.join(10)
    finally:
        server.stop()
    ticks = [d for e, d, _i in messages if e == "tick"]
    assert [d["tick"] for d in ticks] == list(range(0, recorder.tick_count + 1))
    assert ticks == recorder.ticks
    notes = [ev["text"] for d in ticks for ev in d.get("events", [])]
    assert notes == [f"tick {n}" for n in ticked]  # each in the entry after its tick
    assert messages[-1][0] == "end" and messages[-1][1]["tick_count"] == recorder.tick_count


def test_a_taken_or_bad_port_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ViewerError, match=f"cannot serve on 127.0.0.1:{port}"):
            ViewerServer(_trace(), port=port)
    with pytest.raises(ViewerError, match="port must be an integer from 0 to 65535"):
        ViewerServer(_trace(), port=70000)
    bad = tmp_path / "x.json"
    bad.write_text("[]")
    from bt_raider.viewer.trace import TraceError

    with pytest.raises(TraceError, match="x.json"):
        ViewerServer(bad)


def test_stop_ends_an_open_stream_of_a_live_run():
    recorder = TraceRecorder(py_trees.behaviours.Running("forever"))
    server = ViewerServer(recorder)
    server.start()
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.extend(_sse(server.url + "events")))
    reader.start()
    assert server.wait_for_viewer(10)
    started = time.monotonic()
    server.stop()
    reader.join(10)
    assert not reader.is_alive() and time.monotonic() - started < 5
    assert [e for e, _d, _i in got] == ["tick"]  # tick 0, and no end: the run never finished


def test_no_browser_is_started_without_a_display(monkeypatch):
    import webbrowser

    from bt_raider.viewer.server import open_browser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert open_browser("http://127.0.0.1:1/") is False and opened == []
    monkeypatch.setenv("DISPLAY", ":0")
    assert open_browser("http://127.0.0.1:1/") is True and opened == ["http://127.0.0.1:1/"]


# ----------------------------------------------------------------------------- bounds
def test_a_trace_given_as_data_is_checked_for_finite_numbers_and_schema():
    from bt_raider.viewer.trace import TraceError

    trace = _trace()
    trace["ticks"][1]["t"] = float("nan")
    with pytest.raises(TraceError, match=r"\$\.ticks\[1\]\.t: nan is not a finite number"):
        ViewerServer(trace)
    trace = _trace()
    del trace["ticks"]
    with pytest.raises(TraceError, match="missing required field 'ticks'"):
        ViewerServer(trace)


def test_a_finished_trace_is_serialised_once_for_every_reader(monkeypatch):
    import bt_raider.viewer.server as server_module

    calls: list[int] = []
    real = server_module.json.dumps

    def counting(*args: Any, **kwargs: Any) -> str:
        calls.append(1)
        return real(*args, **kwargs)

    trace = _trace()
    monkeypatch.setattr(server_module.json, "dumps", counting)
    with ViewerServer(trace) as server:
        made = len(calls)  # the header and each tick entry, once
        bodies = [_get(server, "/trace.json")[2] for _ in range(5)]
        streams = [_sse(server.url + "events") for _ in range(3)]
        assert len(calls) == made == len(trace["ticks"]) + 1  # nothing per request
    assert all(body == bodies[0] for body in bodies) and json.loads(bodies[0]) == trace
    for messages in streams:  # the stream is cut from the same bytes
        assert [d for e, d, _i in messages if e == "tick"] == trace["ticks"]


def test_a_live_trace_is_serialised_once_per_state_not_per_reader():
    recorder = TraceRecorder(py_trees.behaviours.Running("forever"))
    with ViewerServer(recorder) as server:
        first = [_get(server, "/trace.json")[2] for _ in range(3)]
        recorder.tick()
        after = _get(server, "/trace.json")[2]
    assert first[0] is not None and first.count(first[0]) == 3
    assert json.loads(after)["tick_count"] == 1 and json.loads(first[0])["tick_count"] == 0


def _hold(server: ViewerServer) -> socket.socket:
    """A connection that sends nothing: it holds one of the server's slots."""
    sock = socket.create_connection((HOST, server.port), timeout=10)
    return sock


def _stream(server: ViewerServer) -> socket.socket:
    """A reader following a live run's event stream: it holds a slot with a request in."""
    sock = socket.create_connection((HOST, server.port), timeout=10)
    sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert sock.recv(1000).startswith(b"HTTP/1.1 200")
    return sock


def _live() -> TraceRecorder:
    root = py_trees.composites.Sequence("root", memory=True, children=[])
    return TraceRecorder(root)


def test_connections_over_the_cap_get_503_and_a_slot_comes_back():
    recorder = _live()
    with ViewerServer(recorder, max_connections=2) as server:
        held = [_stream(server), _stream(server)]
        try:
            status, _, _ = _get(server, "/trace.json")
            assert status == 503 and server.httpd.refused >= 1
            assert server.httpd.evicted == 0  # readers with a request in are never put out
        finally:
            for sock in held:
                sock.close()
            recorder.finish()  # the streams end: their slots come back
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and status != 200:
            status = _get(server, "/trace.json")[0]
        assert status == 200


def _trickle(sockets: list[socket.socket], stop: threading.Event, every: float) -> None:
    """Send one byte of a request line on each socket every ``every`` s (bounded)."""
    request = b"GET /trace.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for i in range(int(60 / every)):
        if stop.wait(every):
            return
        for sock in sockets:
            try:
                sock.send(request[i % len(request) : i % len(request) + 1])
            except OSError:
                pass


def test_a_reader_is_served_while_16_sockets_trickle_their_headers():
    with ViewerServer(_trace(), idle_timeout=30) as server:  # 16 slots, the default
        slow = [socket.create_connection((HOST, server.port), timeout=10) for _ in range(16)]
        stop = threading.Event()
        thread = threading.Thread(target=_trickle, args=(slow, stop, 0.2), daemon=True)
        thread.start()
        try:
            time.sleep(0.5)  # every slot taken by a trickler
            for _ in range(3):
                status, _, body = _get(server, "/trace.json")
                assert status == 200 and json.loads(body)["format"] == "bt_raider.trace"
            assert server.httpd.evicted >= 1
        finally:
            stop.set()
            thread.join(10)
            for sock in slow:
                sock.close()


def test_headers_that_trickle_past_the_header_deadline_are_cut_off():
    with ViewerServer(_trace(), idle_timeout=30, header_timeout=1.0) as server:
        sock = socket.create_connection((HOST, server.port), timeout=10)
        stop = threading.Event()
        thread = threading.Thread(target=_trickle, args=([sock], stop, 0.1), daemon=True)
        start = time.monotonic()
        thread.start()
        try:
            with sock:
                try:
                    closed = sock.recv(100) == b""
                except ConnectionResetError:
                    closed = True
            took = time.monotonic() - start
        finally:
            stop.set()
            thread.join(10)
        # Closed at the deadline, though a byte came every 0.1 s (the idle timeout is 30 s).
        assert closed and 0.9 <= took < 5.0


def test_an_idle_connection_is_closed_by_the_server():
    with ViewerServer(_trace(), idle_timeout=0.3) as server:
        sock = _hold(server)
        with sock:
            assert sock.recv(100) == b""  # closed by the server, not by our 10 s timeout


@pytest.mark.parametrize(
    "option, value",
    [
        ("max_connections", 0),
        ("max_connections", 1.5),
        ("idle_timeout", 0),
        ("idle_timeout", float("nan")),
        ("header_timeout", 0),
        ("header_timeout", float("inf")),
    ],
)
def test_bad_limits_are_clear_errors(option, value):
    with pytest.raises(ViewerError, match=option):
        ViewerServer(_trace(), **{option: value})
