"""Static pictures of a tree after its run: the dot graph (PNG/SVG with graphviz) and the page.

The graph is py_trees' own dot export with each node filled by its status and each guard's
recovery subtree drawn where it was grafted (a dashed cluster under the guard, labelled with
its code). The HTML page -- the viewer with the trace embedded -- is always written, graphviz
or not.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import py_trees
import pydot

from bt_raider.viewer.page import static_page
from bt_raider.viewer.recorder import TraceRecorder, is_guard, shape_of, walk

#: Status -> fill colour (the viewer page uses the same).
STATUS_COLOURS = {
    "SUCCESS": "#a5d6a7",
    "FAILURE": "#ef9a9a",
    "RUNNING": "#90caf9",
    "INVALID": "#eeeeee",
}
#: py_trees family -> (shape, the border colour py_trees fills it with).
SHAPES = {
    "selector": ("octagon", "cyan3"),
    "sequence": ("box", "orange"),
    "parallel": ("parallelogram", "gold"),
    "decorator": ("ellipse", "gray40"),
    "behaviour": ("ellipse", "gray40"),
}
RECOVERY_COLOUR = "#7e57c2"


def _dot_names(root: py_trees.behaviour.Behaviour) -> dict[Any, str]:
    """behaviour.id -> its node name in ``py_trees.display.dot_tree(root)``.

    py_trees names dot nodes after the behaviours, pre-order, adding ``*`` to a repeated name.
    """
    names: dict[Any, str] = {root.id: root.name}

    def visit(node: py_trees.behaviour.Behaviour) -> None:
        for child in node.children:
            name = child.name
            while name in names.values():
                name += "*"
            names[child.id] = name
            if child.children:
                visit(child)

    visit(root)
    return names


def _unquote(name: str) -> str:
    return name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name


def status_dot(root: py_trees.behaviour.Behaviour) -> pydot.Dot:
    """py_trees' dot graph of ``root``, filled by status, with the recovery subtrees grafted."""
    graph = py_trees.display.dot_tree(root)
    by_name = {_unquote(n.get_name()): n for n in graph.get_nodes()}
    names = _dot_names(root)
    guards = []
    for node in root.iterate():
        dot_node = by_name.get(names.get(node.id, ""))
        if dot_node is None:
            continue
        _paint(dot_node, node)
        if is_guard(node):
            dot_node.set("penwidth", 2.5)
            phase = getattr(node.phase, "value", node.phase)
            dot_node.set("label", _quote_label(f"{node.name}\n[{phase}]"))
            guards.append((node, dot_node))
    for index, (guard, dot_node) in enumerate(guards):
        tree = getattr(guard, "recovery_tree", None)
        if tree is not None:
            _add_recovery(graph, index, guard, dot_node.get_name(), tree)
    legend = ", ".join(f"{s.lower()} {c}" for s, c in STATUS_COLOURS.items())
    graph.set("label", f"fill: status at the end ({legend}); dashed: recovery subtrees")
    graph.set("fontsize", 9)
    return graph


def _quote_label(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _paint(dot_node: pydot.Node, node: py_trees.behaviour.Behaviour) -> None:
    shape, border = SHAPES[shape_of(node)]
    dot_node.set("style", "filled")
    dot_node.set("fillcolor", STATUS_COLOURS.get(node.status.value, "white"))
    dot_node.set("color", border)
    dot_node.set("fontcolor", "black")
    dot_node.set("tooltip", _quote_label(f"{node.status.value}: {node.feedback_message}"))


def _add_recovery(
    graph: pydot.Dot, index: int, guard: Any, guard_dot: str, tree: py_trees.behaviour.Behaviour
) -> None:
    plan = getattr(guard, "plan", None)
    code = "; ".join(str(getattr(plan, "code", "")).splitlines())
    cluster = pydot.Cluster(
        f"recovery{index}",
        label=_quote_label(f"recovery: {code}" if code else "recovery"),
        style="dashed,rounded",
        color=RECOVERY_COLOUR,
        fontcolor=RECOVERY_COLOUR,
        fontsize=8,
    )
    ids: dict[Any, str] = {}
    for i, (node, parent, _grafted) in enumerate(walk(tree)):
        name = f"recovery{index}_{i}"
        ids[node.id] = name
        shape, _border = SHAPES[shape_of(node)]
        dot_node = pydot.Node(name, label=_quote_label(node.name), shape=shape, fontsize=9)
        _paint(dot_node, node)
        dot_node.set("color", RECOVERY_COLOUR)
        cluster.add_node(dot_node)
        source = guard_dot if node is tree else ids[parent.id]
        style = "dashed" if node is tree else "solid"
        graph.add_edge(pydot.Edge(source, name, style=style, color=RECOVERY_COLOUR))
    # pydot annotates a Subgraph, but add_subgraph takes a Cluster too (it checks for both).
    graph.add_subgraph(cluster)  # type: ignore[arg-type]


def write_pictures(
    root: py_trees.behaviour.Behaviour,
    out: str | Path,
    name: str,
    *,
    trace: dict[str, Any] | TraceRecorder | None = None,
    while_drawing: Callable[[], Any] | None = None,
) -> dict[str, str]:
    """Write ``name.dot``, ``name.png`` and ``name.svg`` (with graphviz) and ``name.html``.

    Args:
        root: the tree, after its run (statuses are read from it).
        out: the folder (made when missing).
        name: the files' stem.
        trace: the run's trace (a recorder or its JSON) for the page; None: one snapshot of
            ``root`` as it is now.
        while_drawing: called while graphviz draws, after the page is written (the caller's
            own files are written meanwhile instead of after).

    Returns:
        format -> file written, plus ``"note"`` when no PNG/SVG could be made.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    graph = status_dot(root)
    files: dict[str, str] = {}
    dot_path = out / f"{name}.dot"
    dot_path.write_text(graph.to_string(), encoding="utf-8")
    files["dot"] = str(dot_path)
    dot = shutil.which("dot")
    if dot:
        # Started now and waited for last: the page is written while graphviz draws.
        drawing = _Drawing(dot, dot_path, out, name)
    else:
        files["note"] = (
            "graphviz 'dot' is not installed: wrote the .dot and the HTML view, no PNG/SVG "
            "(apt install graphviz for the picture)"
        )
    if trace is None:
        trace = TraceRecorder(root).to_json()
    elif isinstance(trace, TraceRecorder):
        trace = trace.to_json()
    html = out / f"{name}.html"
    try:
        html.write_text(static_page(trace), encoding="utf-8")
        if while_drawing is not None:
            while_drawing()
    finally:
        failure = drawing.wait() if dot else ""
    if dot:
        if failure:  # graphviz present but failing: the .dot and the page remain
            files["note"] = f"graphviz failed ({failure}); wrote the .dot and HTML"
        else:
            files.update((fmt, str(path)) for fmt, path in drawing.pictures.items())
    files["html"] = str(html)
    return files


#: graphviz's PNG writers, fastest first. Both draw with cairo; gd stores the picture's few
#: colours as a palette PNG, three times faster than cairo's own RGBA writer (which spends
#: most of a wide tree's time compressing its two million pixels) and a third of the size. A
#: graphviz without the gd plugin refuses the first: the plain ``png`` is drawn instead.
PNG_FORMATS = ("png:cairo:gd", "png")


class _Drawing:
    """One graphviz run laying the graph out once and writing the PNG and the SVG."""

    def __init__(self, dot: str, dot_path: Path, out: Path, name: str) -> None:
        self.dot = dot
        self.dot_path = dot_path
        self.pictures = {fmt: out / f"{name}.{fmt}" for fmt in ("png", "svg")}
        self.formats = list(PNG_FORMATS)
        self.proc: subprocess.Popen[str] | None = None
        self.failure = self._start()

    def _start(self) -> str:
        png = self.formats.pop(0)
        cmd = [self.dot, f"-T{png}", "-o", str(self.pictures["png"])]
        cmd += ["-Tsvg", "-o", str(self.pictures["svg"]), str(self.dot_path)]
        try:
            self.proc = subprocess.Popen(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
        except OSError as exc:  # present but not runnable
            return f"{type(exc).__name__}: {exc}"
        return ""

    def wait(self) -> str:
        """Wait for the pictures; '' when both were written, else why not."""
        while not self.failure and self.proc is not None:
            _out, err = self.proc.communicate()
            if not self.proc.returncode:
                return ""
            if self.formats and "not recognized" in err:  # no gd plugin: the plain png
                self.failure = self._start()
                continue
            message = " ".join(err.split())[-300:] or "no message"
            self.failure = f"exit status {self.proc.returncode}: {message}"
        return self.failure
