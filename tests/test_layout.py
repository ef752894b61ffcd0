"""The layout holds: no import cycles, each package imports only the floors below it, no huge
modules.

The import graph is read from the source with :mod:`ast` (nothing is imported), function-local
imports included; only imports under ``if TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Source folder -> the package it installs as (setup.cfg ``package_dir``).
PACKAGE_DIRS = {
    "bt_raider": "bt_raider",
    "perception": "bt_raider.perception",
    "memory": "bt_raider.memory",
    "planners": "bt_raider.planners",
    "examples": "bt_raider.examples",
}

#: The leaves: every other package may import them.
LEAVES = ("bt_raider.errors", "bt_raider.words")

#: Who may import whom (README "Layout"): package prefix -> the project prefixes it may import
#: besides its own and the leaves. The most specific prefix of a module decides.
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "bt_raider.errors": (),
    "bt_raider.words": (),
    "bt_raider.llm": (),
    "bt_raider.perception": (),
    "bt_raider.memory": ("bt_raider.llm",),
    "bt_raider.checking": ("bt_raider.llm", "bt_raider.perception"),
    "bt_raider.simulation": ("bt_raider.perception",),
    "bt_raider.cooperation": ("bt_raider.llm",),
    "bt_raider.recovery": (
        "bt_raider.llm",
        "bt_raider.perception",
        "bt_raider.checking",
        "bt_raider.runtime.actions",
        "bt_raider.runtime.human",
        "bt_raider.runtime.worker",
    ),
    "bt_raider.runtime": (
        "bt_raider.perception",
        "bt_raider.checking",
        "bt_raider.recovery",
        "bt_raider.cooperation",
    ),
    "bt_raider.fleet": ("bt_raider.cooperation",),
    # The testing kit runs users' trees: the runtime and the simulated worlds; it writes the
    # viewer's trace.
    "bt_raider.testing": (
        "bt_raider.perception",
        "bt_raider.checking",
        "bt_raider.runtime",
        "bt_raider.simulation",
        "bt_raider.viewer",
    ),
    # Duck-typed on the guards: records any py_trees tree without importing the runtime.
    "bt_raider.viewer": (),
    "bt_raider.planners": (
        "bt_raider.perception",
        "bt_raider.checking",
        "bt_raider.recovery",
        "bt_raider.runtime",
    ),
    # The top floor: the CLI and the examples may use everything.
    "bt_raider.cli": ("bt_raider",),
    "bt_raider.commands": ("bt_raider",),
    "bt_raider.examples": ("bt_raider",),
    "bt_raider": (),  # the package itself exports lazily, by name
}

MAX_LINES = 800
MAX_TOP_LEVEL_MODULES = 8


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path) -> set[str]:
    """The project modules ``module`` imports (the most specific existing module per name)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def target(name: str) -> str | None:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for stmt in child.orelse:
                    visit(stmt)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.add(target(alias.name) or "")
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = module.split(".")
                    anchor = anchor if is_package else anchor[:-1]
                    anchor = anchor[: len(anchor) - (child.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in child.names:
                    # ``from pkg import submodule`` imports the submodule.
                    found.add(target(f"{base}.{alias.name}") or target(base) or "")
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard("")
    found.discard(module)
    return {m for m in found if m.startswith("bt_raider")}


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return components


def test_the_graph_is_read_from_every_product_module():
    assert "bt_raider.checking.contract" in GRAPH
    assert "bt_raider.perception.scene" in GRAPH
    # A module-level, a function-local and a ``from package import submodule`` import are seen.
    assert "bt_raider.checking.verdict" in GRAPH["bt_raider.runtime.guards"]
    assert "bt_raider.perception.relations" in GRAPH["bt_raider.checking.grounding"]


def test_cycle_finder_finds_a_cycle_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def _rule(module: str) -> tuple[str, tuple[str, ...]]:
    prefixes = [p for p in MAY_IMPORT if module == p or module.startswith(p + ".")]
    assert prefixes, f"{module} is in no layer of MAY_IMPORT; add its package to the table"
    best = max(prefixes, key=len)
    return best, MAY_IMPORT[best]


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_each_module_imports_only_the_floors_below(module):
    own, allowed = _rule(module)
    if own not in LEAVES:
        allowed = (*LEAVES, *allowed)
    wrong = sorted(
        m
        for m in GRAPH[module]
        if not (m == own or m.startswith(own + "."))
        and not any(m == a or m.startswith(a + ".") for a in allowed)
    )
    assert wrong == [], f"{module} imports {wrong}; {own} may import only {allowed}"


def test_no_product_module_is_over_800_lines():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_bt_raider_keeps_few_top_level_modules():
    top = sorted(p.name for p in (ROOT / "bt_raider").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
