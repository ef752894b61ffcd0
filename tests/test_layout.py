"""The layout holds: the packages are those setup.cfg lists, each imports only what the README's
Layout table lets it, no circle of layers or of files, no huge modules.

Both tables are read, not copied: the package list and the folder mapping from ``setup.cfg``
(``packages``, ``package_dir``), who may import whom from the README's "Layout" table. The
import graph is read from the source with :mod:`ast` (nothing is imported), function-local
imports and imports under ``if TYPE_CHECKING:`` included: a circle that only a type checker
follows is still a circle a reader has to untangle.
"""

from __future__ import annotations

import ast
import configparser
import functools
import re
from pathlib import Path

import pytest

from tests.source_tree import parsed

ROOT = Path(__file__).resolve().parents[1]


def _setup_cfg() -> tuple[list[str], dict[str, str]]:
    """setup.cfg's ``packages`` and ``package_dir`` (package -> folder)."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    options = cfg["options"]
    packages = [p.strip() for p in options["packages"].split() if p.strip()]
    package_dir = {}
    for line in options["package_dir"].splitlines():
        if line.strip():
            package, _, folder = line.partition("=")
            package_dir[package.strip()] = folder.strip()
    return packages, package_dir


PACKAGES, PACKAGE_DIR = _setup_cfg()


def folder_of(package: str) -> Path:
    """Where setuptools takes ``package`` from: its nearest mapped parent's folder, extended."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        mapped = PACKAGE_DIR.get(".".join(parts[:n]))
        if mapped is not None:
            return ROOT / mapped / Path(*parts[n:])
    return ROOT / Path(*parts)


def _packages_on_disk() -> set[str]:
    """Every package below a mapped folder: each folder that holds an ``__init__.py``."""
    found = set()
    for package, folder in PACKAGE_DIR.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join([package, *rel]))
    return found


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted(folder_of(package).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            out[name] = path
    return out


MODULES = _modules()

#: The leaves: every other package may import them.
LEAVES = ("bt_raider.errors", "bt_raider.words", "bt_raider.files")


def _layout_table() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The README's Layout table: (the modules a row is about, what they may import), in order.

    A row's folders are read through setup.cfg's mapping (``perception/`` is
    ``bt_raider.perception``); ``bt_raider/__init__.py`` is the package module alone. The last
    column names packages below ``bt_raider`` in backticks, or says "every row above".
    """
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    folder_to_package = {folder.rstrip("/") + "/": p for p, folder in PACKAGE_DIR.items()}
    rows: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        owners = []
        for path in re.findall(r"`([^`]+)`", cells[0]):
            if path in folder_to_package:
                owners.append(folder_to_package[path])
            elif path.endswith("/__init__.py"):
                owners.append("=" + path[: -len("/__init__.py")].replace("/", "."))
            else:
                owners.append(path.removesuffix(".py").removesuffix("/").replace("/", "."))
        if "every row above" in cells[2]:
            allowed = tuple(o for earlier, _ in rows for o in earlier if not o.startswith("="))
        else:
            allowed = tuple(f"bt_raider.{name}" for name in re.findall(r"`([^`]+)`", cells[2]))
        rows.append((tuple(owners), allowed))
    return rows


LAYOUT = _layout_table()
#: Row key -> what it may import. A key starting with "=" is one module exactly (the package's
#: own ``__init__``); any other is a package and everything below it.
MAY_IMPORT = {owner: allowed for owners, allowed in LAYOUT for owner in owners}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path, *, type_only: bool = True) -> set[str]:
    """The project modules ``module`` imports (the most specific existing module per name).

    Args:
        type_only: count imports under ``if TYPE_CHECKING:`` too (the layout's rule).
    """
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def target(name: str) -> str | None:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if not type_only and isinstance(child, ast.If) and _is_type_checking(child):
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

    visit(parsed(path))
    found.discard("")
    found.discard(module)
    return {m for m in found if m.startswith("bt_raider")}


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, read once, when a test first asks: not at
    collection, where every xdist worker would parse every module (1.4 s a worker)."""
    return {module: _imports(module, path) for module, path in MODULES.items()}


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


def _rule(module: str) -> tuple[str, tuple[str, ...]]:
    """The Layout row ``module`` belongs to (the most specific) and what it may import."""
    keys = [
        k
        for k in MAY_IMPORT
        if (k.startswith("=") and module == k[1:])
        or (not k.startswith("=") and (module == k or module.startswith(k + ".")))
    ]
    assert keys, f"{module} is in no row of the README's Layout table; add its folder there"
    best = max(keys, key=lambda k: len(k.lstrip("=")))
    return best.lstrip("="), MAY_IMPORT[best]


def test_setup_cfg_lists_every_package_on_disk_and_no_other():
    listed = set(PACKAGES)
    on_disk = _packages_on_disk()
    assert sorted(on_disk - listed) == [], "add these to setup.cfg [options] packages"
    assert sorted(listed - on_disk) == [], "setup.cfg lists packages with no __init__.py"


def test_the_package_map_finds_every_mapped_folder():
    assert folder_of("bt_raider.perception") == ROOT / "perception"
    assert folder_of("bt_raider.examples.medicine_delivery") == (
        ROOT / "examples" / "medicine_delivery"
    )
    assert folder_of("bt_raider.checking") == ROOT / "bt_raider" / "checking"


def test_the_layout_table_is_read_from_the_readme():
    assert MAY_IMPORT["bt_raider.checking"] == ("bt_raider.llm", "bt_raider.perception")
    assert MAY_IMPORT["bt_raider.perception"] == ()
    # "every row above": the CLI may use the commands and the runtime, not the package module.
    assert {"bt_raider.commands", "bt_raider.runtime"} <= set(MAY_IMPORT["bt_raider.cli"])
    assert "=bt_raider" in MAY_IMPORT and "bt_raider" not in MAY_IMPORT["bt_raider.cli"]


def test_the_graph_is_read_from_every_product_module():
    assert "bt_raider.checking.contract" in import_graph()
    assert "bt_raider.perception.scene" in import_graph()
    # A module-level, a function-local and a ``from package import submodule`` import are seen.
    assert "bt_raider.checking.verdict" in import_graph()["bt_raider.runtime.guards"]
    assert "bt_raider.perception.relations" in import_graph()["bt_raider.checking.grounding"]
    # An import under TYPE_CHECKING counts; the same graph without them is smaller.
    assert "bt_raider.runtime.guards" in import_graph()["bt_raider"]
    path = MODULES["bt_raider"]
    assert "bt_raider.runtime.guards" not in _imports("bt_raider", path, type_only=False)


def test_cycle_finder_finds_a_cycle_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_type_only_imports_included():
    assert _cycles(import_graph()) == []


def test_the_layers_go_one_way():
    """No two rows may import each other, directly or around a circle of rows."""
    rows = {k.lstrip("="): {a for a in allowed} for k, allowed in MAY_IMPORT.items()}
    two_way = sorted((a, b) for a in rows for b in rows[a] if b in rows and a in rows[b] and a < b)
    assert two_way == []
    assert _cycles(rows) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_imports_only_the_floors_below(module):
    own, allowed = _rule(module)
    if own not in LEAVES:
        allowed = (*LEAVES, *allowed)
    wrong = sorted(
        m
        for m in import_graph()[module]
        if not (m == own or m.startswith(own + "."))
        and not any(m == a or m.startswith(a + ".") for a in allowed)
    )
    assert wrong == [], f"{module} imports {wrong}; {own} may import only {allowed}"


def test_nothing_imports_the_package_module():
    """``bt_raider/__init__.py`` names the first imports; the package's own code never uses it
    (it would import the whole top floor into the ground floor)."""
    users = sorted(m for m, deps in import_graph().items() if "bt_raider" in deps)
    assert users == []


def test_no_product_module_is_over_800_lines():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}


def test_bt_raider_keeps_few_top_level_modules():
    top = sorted(p.name for p in (ROOT / "bt_raider").glob("*.py"))
    assert len(top) <= 8, top
