"""The README and the documentation run as written.

Every ```python block of ``README.md`` and of every ``docs/**/*.md`` page runs in a fresh
interpreter, in an empty directory; a block that defines ``test_`` functions runs through pytest,
whose fixtures come from bt_raider's plugin (the README's "Unit-test your tree" block among
them). Bash blocks are not run. No block may need ``../shared``: a user who clones the project
has none. The README stays short, and every relative link of the README and the docs points at
a file that exists.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import py_trees
import pytest

from bt_raider.checking.symbolic import SymbolicReasoner
from bt_raider.robot.actions import ActionBehaviour, SyncRobot
from bt_raider.runtime.guards import RaiderGuard, guard_tree
from bt_raider.simulation.simworld import SimWorld

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
S = py_trees.common.Status

#: The README's length: a front page, the manual is docs/.
README_MAX_LINES = 250
#: The longest line of the README (a table row of the method table is the longest wanted).
README_MAX_LINE_CHARS = 400

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
#: A Markdown link or image: ``[text](target)``, ``![alt](target "title")``.
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every ```python block of ``text`` (line: where the code starts)."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]


def is_test_module(code: str) -> bool:
    """A block that is a pytest module (it defines ``test_`` functions)."""
    return re.search(r"^def test_\w+\(", code, re.MULTILINE) is not None


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))
#: ``(page, line, code)`` of every python block of the docs, the page relative to the root.
DOC_BLOCKS = [
    (page.relative_to(ROOT).as_posix(), line, code)
    for page in PAGES
    for line, code in python_blocks(page.read_text(encoding="utf-8"))
]


def relative_links(text: str) -> list[str]:
    """The targets of the Markdown links of ``text`` that point into the repository.

    Links with a scheme (``https:``, ``mailto:``) and links to an anchor of the same page are
    left out; a target's own anchor (``page.md#section``) is cut off. Fenced code is skipped:
    ``[x](y)`` in a code block is code, not a link.
    """
    prose = re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.MULTILINE | re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    targets = []
    for target in _LINK.findall(prose):
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def run_block(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run a block as its own file in an empty directory, with python3 or with pytest."""
    name = "test_readme_block.py" if is_test_module(code) else "readme_block.py"
    (tmp_path / name).write_text(code, encoding="utf-8")
    argv = (
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name]
        if is_test_module(code)
        else [sys.executable, name]
    )
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_the_link_finder_reads_relative_targets_only():
    text = (
        "[a](docs/a.md) [b](https://x.org/b.md) [c](#here) ![d](img/d.png)\n"
        "[e](docs/e.md#part) `[f](f.md)` [g](mailto:g@x.org)\n```\n[h](h.md)\n```\n"
    )
    assert relative_links(text) == ["docs/a.md", "img/d.png", "docs/e.md"]


def test_the_block_finder_reads_fences_and_their_lines():
    text = "intro\n```python\nx = 1\n```\n```bash\nls\n```\n\n```python\ny = 2\nz = 3\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (10, "y = 2\nz = 3\n")]
    assert is_test_module("import x\n\ndef test_a(fixture):\n    pass\n")
    assert not is_test_module("def helper():\n    test_a = 1\n")


def test_the_readme_has_python_blocks_and_none_needs_shared():
    assert len(BLOCKS) >= 3
    needing = [line for line, code in BLOCKS if "../shared" in code or "shared/" in code]
    assert needing == [], f"README python blocks at lines {needing} read ../shared"


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_every_python_block_runs_as_written(line, code, tmp_path):
    proc = run_block(code, tmp_path)
    assert proc.returncode == 0, (
        f"README.md line {line}: the block failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )


def test_the_docs_have_python_blocks_and_none_needs_shared():
    pages_with_code = {page for page, _, _ in DOC_BLOCKS}
    assert len(DOC_BLOCKS) >= 10 and len(pages_with_code) >= 8, pages_with_code
    needing = [
        f"{page}:{line}"
        for page, line, code in DOC_BLOCKS
        if "../shared" in code or "shared/" in code
    ]
    assert needing == [], f"docs python blocks read ../shared: {needing}"


@pytest.mark.parametrize(
    "page, line, code", DOC_BLOCKS, ids=[f"{page}:{line}" for page, line, _ in DOC_BLOCKS]
)
def test_every_python_block_of_the_docs_runs_as_written(page, line, code, tmp_path):
    proc = run_block(code, tmp_path)
    assert proc.returncode == 0, (
        f"{page} line {line}: the block failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    if is_test_module(code):
        tests = len(re.findall(r"^def test_", code, re.MULTILINE))
        assert f"{tests} passed" in proc.stdout


def test_the_readme_is_a_short_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    long = [i for i, text in enumerate(lines, 1) if len(text) > README_MAX_LINE_CHARS]
    assert long == [], f"README.md lines over {README_MAX_LINE_CHARS} characters: {long}"
    # The front page links into the docs, and the scene contract the docstrings cite exists.
    assert "docs/index.md" in README.read_text(encoding="utf-8")
    assert (DOCS / "scene-format.md").is_file() and (DOCS / "api.md").is_file()


@pytest.mark.parametrize(
    "source", [README, *PAGES], ids=[p.relative_to(ROOT).as_posix() for p in [README, *PAGES]]
)
def test_every_relative_link_points_at_a_file_that_exists(source):
    links = relative_links(source.read_text(encoding="utf-8"))
    broken = [target for target in links if not (source.parent / target).exists()]
    assert broken == [], f"{source.relative_to(ROOT)} links to missing files: {broken}"
    if source == README:
        assert len(links) >= 10  # the front page links into docs/


def test_the_unit_test_section_passes_through_the_plugins_fixtures(tmp_path):
    text = README.read_text(encoding="utf-8")
    section = text.split("## Unit-test your tree", 1)[1].split("\n## ", 1)[0]
    ((_, code),) = python_blocks(section)
    assert is_test_module(code)
    fixtures = {"bt_raider_run", "sim_world"}
    assert all(f in code for f in fixtures)
    # No conftest in the directory: only the installed plugin can provide the fixtures.
    proc = run_block(code, tmp_path)
    tests = len(re.findall(r"^def test_", code, re.MULTILINE))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"{tests} passed" in proc.stdout
    assert not (tmp_path / "conftest.py").exists()


# ---------------------------------------------------------------------------- the recipes
@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def tick_until_done(root, limit=5.0):
    import time

    deadline = time.monotonic() + limit
    while True:
        root.tick_once()
        if root.status != S.RUNNING or time.monotonic() > deadline:
            return root.status
        time.sleep(0.001)


def test_guard_dropped_into_an_existing_tree_stops_a_doomed_action(small_kitchen):
    world = SimWorld(small_kitchen)
    robot = SyncRobot(world)
    node = ActionBehaviour("open", ["Fridge"], robot)  # the team's existing action node
    guarded = RaiderGuard(
        node, query="open(Fridge)", checker=SymbolicReasoner(), scene=robot.observe
    )
    root = py_trees.composites.Sequence("fetch milk", memory=True, children=[guarded])
    assert tick_until_done(root) is S.FAILURE
    # The check stopped it before the robot tried (the Fridge is 3.4 m away): the child never
    # ran, the world is unchanged, and the reason is the guard's feedback.
    assert node.status is S.INVALID
    assert world.executed == [] and world.failures == []
    assert "Fridge" in guarded.feedback_message and "reach" in guarded.feedback_message
    unguarded = ActionBehaviour("open", ["Fridge"], robot)
    assert tick_until_done(unguarded) is S.FAILURE  # without the guard the robot really fails
    assert world.failures


def test_guard_tree_wraps_selected_nodes_and_the_plan_runs(small_kitchen):
    world = SimWorld(small_kitchen)
    robot = SyncRobot(world)
    world.set_agent(position={"x": 0.4, "y": 0.9, "z": 0.4})  # next to the apple
    pick = ActionBehaviour("pick", ["Apple"], robot, name="pick apple")
    root = py_trees.composites.Sequence("task", memory=True, children=[pick])
    root = guard_tree(
        root,
        SymbolicReasoner(),
        select=lambda node: "pick(Apple)" if node.name == "pick apple" else None,
        scene=robot.observe,
    )
    assert isinstance(root.children[0], RaiderGuard)
    assert tick_until_done(root) is S.SUCCESS
    assert [o.name for o in world.observe().holding] == ["Apple"]
