"""The viewer page: our own HTML, CSS and JavaScript, shipped in ``static/`` (no CDN).

Served by :mod:`bt_raider.viewer.server` as three files that fetch the trace (and follow a
live run); :func:`static_page` inlines them with the trace into one HTML file that opens from
``file://`` with no server.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: The files of the page, as served: URL path -> (file in static/, content type).
ASSETS = {
    "/": ("viewer.html", "text/html; charset=utf-8"),
    "/viewer.css": ("viewer.css", "text/css; charset=utf-8"),
    "/viewer.js": ("viewer.js", "text/javascript; charset=utf-8"),
}


def asset(name: str) -> str:
    """The text of ``static/<name>``."""
    return (resources.files("bt_raider.viewer") / "static" / name).read_text(encoding="utf-8")


def _json_in_script(data: Any) -> str:
    """JSON that cannot end the ``<script>`` element it sits in.

    In JSON text a ``<`` can only be inside a string, where ``\\u003c`` means the same.
    """
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")


def static_page(trace: dict[str, Any]) -> str:
    """The viewer page with its CSS, script and ``trace`` inlined: one self-contained file."""
    html = asset("viewer.html")
    data = _json_in_script(trace)
    # The CSS and JS are our own files: they contain no "</style>" or "</script>".
    css = f"<style>\n{asset('viewer.css')}\n</style>"
    js = (
        f'<script id="bt-trace" type="application/json">{data}</script>\n'
        f"<script>\n{asset('viewer.js')}\n</script>"
    )
    html = html.replace('<link rel="stylesheet" href="viewer.css">', css, 1)
    return html.replace('<script src="viewer.js"></script>', js, 1)
