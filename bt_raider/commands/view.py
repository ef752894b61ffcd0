"""``bt-raider view TRACE.json``: explore a recorded run in the browser.

Serves the viewer page for the trace on 127.0.0.1 (``--port``; 0, the default, picks a free
one), prints the URL, opens a browser unless ``--no-browser``, and serves until Ctrl-C.
``--html FILE`` writes the same page as one self-contained file instead (it opens from
``file://``). Exit status: 0, or 2 with a one-line message for a missing or malformed trace or
a port that is taken.

The trace is read as every file is (:mod:`bt_raider.files`): a regular file (a FIFO, a device
or a directory is refused before it is opened) of at most ``--max-bytes`` (256 MiB by
default), UTF-8 JSON of bounded nesting and integer size with finite numbers only, then checked
against the trace schema, all before the server starts or ``--html`` writes anything.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bt_raider.commands import HELP
from bt_raider.files import MAX_TRACE_BYTES, byte_count


def _byte_count(text: str) -> int:
    try:
        return byte_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], argv: Sequence[str] = ()
) -> None:
    """Add the ``view`` sub-command to ``sub`` (``argv``: the words after its name)."""
    parser = sub.add_parser(
        "view",
        help=HELP["view"],
        description="Serve a trace (trace.json written by a demo or by "
        "bt_raider.viewer.recorder.TraceRecorder) as a web page on 127.0.0.1: the tree coloured "
        "by status at any tick, the timeline of checks, verdicts, questions, actions and world "
        "changes, and each guard's Ground/Ask/Answer/Issue trace and recoveries.",
    )
    parser.add_argument("trace", metavar="TRACE.json", help="the trace file")
    parser.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free port)"
    )
    parser.add_argument("--no-browser", action="store_true", help="print the URL only")
    parser.add_argument(
        "--max-bytes",
        type=_byte_count,
        default=MAX_TRACE_BYTES,
        metavar="N",
        help=f"refuse a trace file larger than N bytes (default {MAX_TRACE_BYTES // 2**20}M; "
        "suffixes K, M, G)",
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        default=None,
        help="write the page with the trace inside to FILE and exit (no server)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``bt-raider view``: serve the trace's page, or write it with ``--html``."""
    from bt_raider.viewer.page import static_page
    from bt_raider.viewer.server import ViewerServer, open_browser
    from bt_raider.viewer.trace import load_trace

    if args.html:
        trace = load_trace(args.trace, max_bytes=args.max_bytes)
        out = Path(args.html)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(static_page(trace), encoding="utf-8")
        print(f"page: {out}")
        return 0
    # The server reads and checks the file itself: one parse, one check, one serialisation.
    server = ViewerServer(args.trace, port=args.port, max_bytes=args.max_bytes)
    url = server.start()
    print(f"viewer: {url} ({server.tick_count} ticks; Ctrl-C to stop)")
    sys.stdout.flush()
    if not args.no_browser and not open_browser(url):
        print("viewer: no browser to open here; open the URL above in one")
    try:
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
