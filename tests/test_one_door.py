"""Every file bt_raider reads goes through ``bt_raider.files`` (the one door).

The source is walked with ``ast``: a call that opens or reads a file -- ``open()``, ``io.open``,
``.open("r...")``, ``.read_text()``, ``.read_bytes()``, ``json.load``, ``sqlite3.connect`` --
anywhere but ``bt_raider/files.py`` fails this test, unless it is listed in :data:`ALLOWED`
with the reason it reads no user-given path (data shipped inside the package, ``/proc``).
bt_raider.files refuses FIFOs, devices and directories before opening, caps sizes, bounds JSON
and checks text: a read that bypasses it can hang on a FIFO or read ``/dev/zero`` for ever.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.source_tree import ROOT, parsed, python_files

DOOR = Path("bt_raider/files.py")
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)

#: (file, function) -> why its read is not of a user-given path. Keep it short.
ALLOWED: dict[tuple[str, str], str] = {
    ("bt_raider/viewer/page.py", "asset"): "the viewer's page, shipped in the package",
    ("bt_raider/viewer/trace.py", "schema"): "the trace schema, shipped in the package",
    ("bt_raider/llm/prompts.py", "_load"): "a prompt template inside a zipped package",
    ("bt_raider/recovery/fewshot.py", "load_examples"): "examples inside a zipped package",
    ("memory/rules.py", "default"): "the shipped rules",
    ("memory/frames.py", "_default_frames"): "the shipped frame lexicon",
    ("memory/verbs.py", "_default_lexicon"): "the shipped verb lexicon",
    ("bt_raider/commands/plan.py", "_started_ago"): "/proc/self/stat and /proc/uptime",
    ("planners/engines.py", "descendants"): "/proc/PID/stat of our own planner processes",
    ("bt_raider/ros2/env.py", "profile_file"): "the Fast DDS profile we wrote in the temp folder",
    ("bt_raider/ros2/interfaces.py", "_key"): "the interface sources shipped in the package",
}


def _reads(call: ast.Call) -> str | None:
    """What ``call`` is, when it opens or reads a file for reading; else None."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        mode = call.args[1] if len(call.args) > 1 else None
        mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            if set(mode.value) & set("wax"):
                return None  # writing a file we make, not reading one
        return "open()"
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if owner == "files":
        return None  # bt_raider.files.read_text: the door itself
    if func.attr in ("read_text", "read_bytes"):
        return f".{func.attr}()"
    if (owner, func.attr) in (("json", "load"), ("sqlite3", "connect"), ("io", "open")):
        return f"{owner}.{func.attr}()"
    if func.attr == "open":  # Path.open("rb"); zenoh.open(config) and memory.open() are no files
        mode = call.args[0] if call.args else None
        mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            return None if set(mode.value) & set("wax") else ".open(mode)"
    return None


@functools.cache
def _offenders() -> tuple[tuple[str, str, int, str], ...]:
    """Every read outside the door: (file, innermost enclosing function, line, what), sorted.

    One walk per file, carrying the name of the innermost ``def`` around each call
    (``<module>`` outside any); cached, as two tests ask.
    """
    found = []

    def visit(node: ast.AST, rel: str, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and (what := _reads(child)):
                found.append((rel, name, child.lineno, what))
            inner = child.name if isinstance(child, DEFS) else name
            visit(child, rel, inner)

    for path in python_files():
        rel = path.relative_to(ROOT)
        if rel != DOOR:
            visit(parsed(path), rel.as_posix(), "<module>")
    return tuple(sorted(found))


def test_every_file_is_read_through_bt_raider_files() -> None:
    bad = [
        f"{rel}:{line} {what} in {name}()"
        for rel, name, line, what in _offenders()
        if (rel, name) not in ALLOWED
    ]
    assert not bad, (
        "read these files through bt_raider.files (read_bytes, read_text, read_json, "
        "open_binary, read_head, connect_sqlite), or list why they are not user-given: "
        + "; ".join(bad)
    )


def test_every_allowed_read_is_still_there() -> None:
    # An entry whose read went away (moved to bt_raider.files) goes from the list too.
    used = {(rel, name) for rel, name, _, _ in _offenders()}
    assert set(ALLOWED) <= used, sorted(set(ALLOWED) - used)


def test_the_walk_finds_what_it_looks_for() -> None:
    source = (
        "import json, sqlite3\nfrom pathlib import Path\n"
        "def f(p):\n"
        "    open(p)\n    open(p, 'w')\n    Path(p).read_text()\n    Path(p).read_bytes()\n"
        "    json.load(open(p))\n    sqlite3.connect(p)\n    Path(p).open('rb')\n"
        "    Path(p).open('wb')\n    zenoh.open(config)\n"
    )
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)]
    found = sorted(filter(None, map(_reads, calls)))
    assert found == sorted(
        [".open(mode)", ".read_bytes()", ".read_text()", "json.load()", "open()", "open()",
         "sqlite3.connect()"]
    )  # fmt: skip
