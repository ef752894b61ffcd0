"""The documentation builds strictly, documents every public name once, and fails when broken.

The build is the one ``docs/conf.py`` describes: Sphinx with MyST, autodoc reading the
installed package, every warning an error (``-W --keep-going -n``), nothing fetched (no
intersphinx). Its inventory (``objects.inv``) says where each name is documented: every public
class and function of bt_raider must be there exactly once, the 15 first names at ``bt_raider``,
and every import in the README's and the docs' examples must use a documented path.

A strict build that could not fail would prove nothing, so broken copies are built too: the
real docs with one bad link, and a small copy of the real configuration with one fault each (a
missing page, a missing heading, a name that does not exist, a page in no table of contents).
The builds run two at a time, in temporary directories. The real docs are built from a copy,
and the broken copy is that same folder with the bad link, built on the real build's output:
Sphinx reads again only the page that changed (one full build of the real docs, not two). The
small copies are built one after another in one Python (Sphinx and bt_raider imported once),
the broken ones with Sphinx's ``dummy`` builder: the same reading and resolving, no pages.

The one difference from a user's ``python3 -m sphinx -W --keep-going -n -b html docs
build/docs``: the test's HTML builder skips the search index (``searchindex.js`` and
``search.html``: every word of every page stemmed and indexed, a twentieth of the build's
CPU), the switch Sphinx's own help builders use. No assertion reads it and it cannot warn;
the configuration, the options, the pages, their references and ``objects.inv`` are the
user's.
"""

from __future__ import annotations

import ast
import configparser
import importlib
import inspect
import json
import pkgutil
import posixpath
import re
import shutil
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.test_readme import BLOCKS, DOC_BLOCKS, DOCS, ROOT

pytest.importorskip("sphinx", reason="the docs tools come with the dev extra")
pytest.importorskip("myst_parser", reason="the docs tools come with the dev extra")

from sphinx.util.inventory import InventoryFile  # noqa: E402 - after the skip

#: The packages whose modules the API reference documents (installed names).
PACKAGES = (
    "bt_raider",
    "bt_raider.memory",
    "bt_raider.perception",
    "bt_raider.planners",
    "bt_raider.examples",
)


#: Runs the Sphinx builds whose arguments it is given (JSON) one after another in this one
#: Python, each with its own stderr, and prints their exit codes and stderr (JSON). The HTML
#: builder writes no search index (see the module's docstring).
BUILD_EACH = """
import contextlib, io, json, sys
from sphinx.builders.html import StandaloneHTMLBuilder
StandaloneHTMLBuilder.search = False
from sphinx.cmd.build import build_main
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = build_main(argv)
    results.append({"returncode": code, "stderr": err.getvalue()})
print(json.dumps(results))
"""


def sphinx_builds(
    jobs: list[tuple[Path, Path, str]],
) -> list[subprocess.CompletedProcess[str]]:
    """The strict builds of ``(source, out, builder)``: doctrees in ``out``, the output beside.

    One Python for all of them: Sphinx, the configuration's imports and the modules autodoc
    reads are loaded once, not once a build (a small build is mostly that).
    """
    argvs = [
        ["-W", "--keep-going", "-n", "-q", "-b", builder, str(source), str(out / builder)]
        + ["-d", str(out / "doctrees")]
        for source, out, builder in jobs
    ]
    argv = [sys.executable, "-c", BUILD_EACH, json.dumps(argvs)]
    # A guard against a hang, not a time limit: a full build takes a minute of CPU.
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return [
        subprocess.CompletedProcess(argvs[i], r["returncode"], "", r["stderr"])
        for i, r in enumerate(json.loads(proc.stdout))
    ]


def sphinx_build(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """The strict HTML build of the docs in ``source`` into ``out / "html"``."""
    return sphinx_builds([(source, out, "html")])[0]


# ---------------------------------------------------------------------------- broken copies
#: A small copy of the docs: the real conf.py, an index and one page with one module.
MINI_INDEX = "# Mini\n\n## Part\n\n```{toctree}\npage\n```\n"
MINI_PAGE = """# Page

See [the index](index.md) and [its part](index.md#part).

```{eval-rst}
.. automodule:: bt_raider.checking.verdict
```

The verdict's category is a {py:class}`~bt_raider.checking.verdict.Category`, and
{py:meth}`Verdict.to_json <bt_raider.Verdict.to_json>` is its JSON.
"""
#: One fault each, added to the small copy's page (or as a page of its own): what the build
#: must then say.
FAULTS = {
    "a link to a missing page": ("[gone](no-such-page.md)", "no-such-page.md"),
    "a link to a missing heading": ("[gone](index.md#no-such-heading)", "no-such-heading"),
    "a name that does not exist": (
        "{py:class}`bt_raider.checking.verdict.NoSuchVerdict`",
        "bt_raider.checking.verdict.NoSuchVerdict",
    ),
    "a short name that does not exist": ("{py:meth}`Category.no_such_method`", "no_such_method"),
    "a page in no table of contents": (None, "isn't included in any toctree"),
}


def mini_copy(folder: Path, fault: str | None) -> Path:
    """The small copy of the docs in ``folder``, with ``fault`` (a key of FAULTS) or none."""
    source = folder / "docs"
    source.mkdir(parents=True)
    shutil.copy(DOCS / "conf.py", source / "conf.py")
    (source / "index.md").write_text(MINI_INDEX, encoding="utf-8")
    page = MINI_PAGE
    if fault is not None:
        text = FAULTS[fault][0]
        if text is None:
            (source / "orphan.md").write_text("# Orphan\n\nNobody links here.\n", "utf-8")
        else:
            page += f"\nA fault: {text}.\n"
    (source / "page.md").write_text(page, encoding="utf-8")
    return source


def real_copy(folder: Path) -> Path:
    """A copy of the real docs (file times kept, so an incremental build sees them unchanged)."""
    source = folder / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build"))
    return source


def break_real_copy(source: Path) -> None:
    """One bad link in the index of the copy of the real docs."""
    index = source / "index.md"
    text = index.read_text(encoding="utf-8")
    assert "## Install" in text
    index.write_text(text.replace("## Install", "See [a page](no-such-page.md).\n\n## Install"))


def broken_build(source: Path, real: Future[Any], real_out: Path, out: Path) -> Any:
    """The real docs with one bad link, built on the real build's output once it is done.

    Same source folder (Sphinx keeps its saved state only for the folder it read), the real
    build's doctrees and pages copied: only the changed index is read and written again.
    """
    real.result()
    shutil.copytree(real_out, out)
    break_real_copy(source)
    return sphinx_build(source, out)


class Build:
    """A build started in the background: ``result()`` waits for it."""

    def __init__(self, future: Future[Any], out: Path, index: int | None = None) -> None:
        self.future, self.out, self.index = future, out, index

    def result(self) -> subprocess.CompletedProcess[str]:
        done = self.future.result()
        return done if self.index is None else done[self.index]


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Build]:
    """Every build of this module, started at once and run two at a time.

    The real docs in one process, the small copies one after another in the other: the
    clean one as HTML (its page is looked for), the broken ones with the ``dummy`` builder,
    which reads and resolves every reference as the HTML builder does (the same warnings,
    word for word) and writes no pages.
    """
    base = tmp_path_factory.mktemp("docs")
    real = real_copy(base / "copy")
    pool = ThreadPoolExecutor(max_workers=2)  # each build is one busy process
    started = {"real": Build(pool.submit(sphinx_build, real, base / "real"), base / "real")}
    names, small = [], []
    for fault in [None, *FAULTS]:
        name = f"mini: {fault or 'clean'}"
        folder = base / re.sub(r"\W+", "-", name)
        names.append(name)
        small.append((mini_copy(folder, fault), folder / "out", "dummy" if fault else "html"))
    job = pool.submit(sphinx_builds, small)
    started |= {name: Build(job, small[i][1], i) for i, name in enumerate(names)}
    # Last in the queue: it waits for the real build, whose output it starts from.
    out = base / "copy" / "out"
    job = pool.submit(broken_build, real, started["real"].future, base / "real", out)
    started["broken real copy"] = Build(job, out)
    pool.shutdown(wait=False)
    return started


@pytest.fixture(scope="module")
def inventory(builds: dict[str, Build]) -> dict[str, dict[str, str]]:
    """The real build's ``objects.inv``: role (``py:class``) -> documented name -> URI."""
    build = builds["real"]
    assert build.result().returncode == 0, build.result().stderr[-5000:]
    with open(build.out / "html" / "objects.inv", "rb") as f:
        inv = InventoryFile.load(f, "", posixpath.join)
    data = getattr(inv, "data", inv)  # an Inventory from Sphinx 8.2, a dict before
    return {
        role: {name: getattr(item, "uri", None) or item[2] for name, item in items.items()}
        for role, items in data.items()
    }


# ---------------------------------------------------------------------------- the real build
def test_the_docs_build_strictly(builds):
    proc, out = builds["real"].result(), builds["real"].out
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-5000:]
    built = {p.relative_to(out / "html").with_suffix(".md") for p in (out / "html").rglob("*.html")}
    pages = {p.relative_to(DOCS) for p in DOCS.rglob("*.md")}
    assert pages <= built, f"pages not built: {sorted(map(str, pages - built))}"


def test_the_build_fetches_nothing_and_its_tools_are_in_the_dev_extra():
    # Nothing is fetched at build time: no extension that downloads (intersphinx).
    conf = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    (extensions,) = [
        ast.literal_eval(node.value)
        for node in conf.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "extensions"
    ]
    assert "myst_parser" in extensions and "sphinx.ext.autodoc" in extensions
    assert not [e for e in extensions if "intersphinx" in e or "linkcode" in e], extensions
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    dev = cfg["options.extras_require"]["dev"]
    assert "sphinx" in dev and "myst-parser" in dev and "mkdocs" not in dev


def test_the_install_page_names_every_extra_of_setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    extras = list(cfg["options.extras_require"])
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert {"pddl", "memory", "llm", "fleet", "all", "dev"} <= set(extras)
    assert [e for e in extras if f"`[{e}]`" not in index] == []


def test_every_measured_figure_names_the_script_that_prints_it():
    text = (DOCS / "figures.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    assert len(sections) >= 15
    for section in sections:
        title = section.splitlines()[0]
        scripts = re.findall(r"python3 (benchmarks/\w+\.py)", section)
        assert scripts, f"figures.md, {title!r}: no benchmarks/ command"
        assert all((ROOT / script).is_file() for script in scripts), (title, scripts)


def public_modules() -> list[str]:
    """Every module of bt_raider, as installed (``bt_raider.perception.scene``)."""
    names: list[str] = []
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        names += [package] + [m.name for m in pkgutil.walk_packages(pkg.__path__, package + ".")]
    return sorted(n for n in set(names) if not any(p.startswith("_") for p in n.split(".")))


def public_objects() -> dict[str, Any]:
    """Every public class and function of bt_raider: ``module.name`` -> the object."""
    found: dict[str, Any] = {}
    for name in public_modules():
        if name != "bt_raider":  # its first names are defined in the subpackages
            module = importlib.import_module(name)
            for attr, value in vars(module).items():
                if attr.startswith("_") or getattr(value, "__module__", None) != name:
                    continue
                if inspect.isclass(value) or inspect.isfunction(value):
                    found[f"{name}.{attr}"] = value
    return found


def documented_places(inventory: dict[str, dict[str, str]]) -> dict[int, set[str]]:
    """id(object) -> the URIs (page and anchor) where the object is documented."""
    places: dict[int, set[str]] = {}
    for role in ("py:class", "py:function", "py:exception"):
        for name, uri in inventory.get(role, {}).items():
            module, _, attr = name.rpartition(".")
            try:
                obj = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                obj = None
            assert obj is not None, f"{name} is documented but cannot be imported"
            places.setdefault(id(obj), set()).add(uri)
    return places


def test_every_public_name_is_documented_in_exactly_one_place(inventory):
    places = documented_places(inventory)
    objects = public_objects()
    assert len(objects) > 400
    missing = sorted(name for name, obj in objects.items() if id(obj) not in places)
    twice = sorted(name for name, obj in objects.items() if len(places.get(id(obj), ())) > 1)
    assert missing == [], f"not in the API reference: {missing}"
    assert twice == [], f"documented in more than one place: {twice}"
    undocumented = sorted(m for m in public_modules() if m not in inventory["py:module"])
    assert undocumented == [], f"modules without a section: {undocumented}"


def test_the_first_names_are_documented_at_bt_raider(inventory):
    import bt_raider

    places = documented_places(inventory)
    for name in bt_raider._EXPORTS:
        (uri,) = places[id(getattr(bt_raider, name))]
        assert uri.endswith(f"#bt_raider.{name}"), (name, uri)


def imported_paths(code: str) -> list[str]:
    """``module.name`` for each name a block imports from bt_raider, and each module."""
    paths = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bt_raider"):
            paths += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            paths += [a.name for a in node.names if a.name.startswith("bt_raider")]
    return paths


def test_every_example_imports_from_the_documented_path(inventory):
    # A name's documented path is its anchor (an alias entry points at another name's).
    anchors = {uri.rpartition("#")[2] for role in inventory.values() for uri in role.values()}
    documented = anchors | set(inventory["py:module"])
    blocks = [("README.md", line, code) for line, code in BLOCKS] + DOC_BLOCKS
    wrong = [
        f"{page}:{line}: {path}"
        for page, line, code in blocks
        for path in imported_paths(code)
        if path not in documented
    ]
    assert wrong == [], f"imports from a path the API reference does not document: {wrong}"
    assert imported_paths("from bt_raider.robot.actions import SyncRobot\nimport bt_raider") == [
        "bt_raider.robot.actions.SyncRobot",
        "bt_raider",
    ]


# ---------------------------------------------------------------------------- broken builds
def test_the_real_docs_with_one_bad_link_fail(builds):
    proc = builds["broken real copy"].result()
    assert proc.returncode != 0
    assert "no-such-page.md" in proc.stderr


def test_the_small_copy_builds_clean(builds):
    proc = builds["mini: clean"].result()
    assert proc.returncode == 0, proc.stderr
    assert (builds["mini: clean"].out / "html" / "page.html").is_file()


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_broken_reference_fails_the_build(builds, fault):
    proc = builds[f"mini: {fault}"].result()
    assert proc.returncode != 0, f"the build passed with {fault}"
    assert FAULTS[fault][1] in proc.stderr, proc.stderr[-3000:]
