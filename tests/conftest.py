"""Shared fixtures: the real FloorPlan1 kitchen of ../shared (skipped when absent) and the
project's own small kitchen (the testing kit's, ``bt_raider/testing/data/kitchen.json``)."""

from __future__ import annotations

import json
import os
import sys
import tempfile

import pytest

from bt_raider.testing.scenes import KITCHEN_PATH
from tests.shared_data import DATA, KITCHEN, PDDL, ROOT, SHARED, require

__all__ = ["DATA", "KITCHEN", "PDDL", "ROOT", "SHARED"]

# The tests' own cache folder: an ONNX export the user prepared (bt-raider memory prepare) must
# not change which runtime a test sees; tests that want one export it themselves. Set at import
# so subprocesses (CLI tests) inherit it.
os.environ["BT_RAIDER_CACHE"] = tempfile.mkdtemp(prefix="bt-raider-test-cache-")
# OpenMP threads (torch's, llama.cpp's) that wait sleep instead of spinning: beside the suite's
# other worker a spinning thread burns the core that worker needs (torch's embedding tests:
# 36 s of CPU with one core busy elsewhere, 24 s passive). Speed only; a user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _rewrite_the_tests_only() -> None:
    """Rewrite the asserts of the test files, not of every module of a package with a pytest
    plugin (pytest marks bt_raider and hypothesis whole for their plugins): where bytecode is
    not written, each worker would rewrite them again on every run (12 s of CPU a worker).
    Speed only; an assert in the library is a bug's ``AssertionError`` either way."""
    from _pytest.assertion.rewrite import AssertionRewritingHook

    for hook in sys.meta_path:
        marked = getattr(hook, "_must_rewrite", None)
        if isinstance(hook, AssertionRewritingHook) and isinstance(marked, set):
            marked.difference_update({"bt_raider", "hypothesis"})


_rewrite_the_tests_only()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``), the tests of one file that share a
    module-scoped fixture, or a session-scoped one of that file (a venv, a docs build, a demo
    run, a loaded model, a prepared export), run on one worker, so that fixture is made once,
    as in a serial run. Runs before xdist reads the
    groups (``tryfirst``); without xdist the mark means nothing."""
    groups: dict[pytest.Item, str] = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or item.get_closest_marker("xdist_group"):
            continue
        module = item.nodeid.split("::")[0]
        defs = [d for found in info.name2fixturedefs.values() for d in found]
        # Module-scoped fixtures, and session-scoped ones the file defines for itself.
        if any(d.scope == "module" or (d.scope == "session" and d.baseid == module) for d in defs):
            groups[item] = module
    # torch in this process (the MiniLM loaded and traced, ~9 s of CPU a worker): those tests,
    # and the groups they were in, form one group, so torch loads on one worker.
    torch = [
        i
        for i in items
        if not i.get_closest_marker("xdist_group")
        and (i.get_closest_marker("torch") or TORCH_FIXTURES & _names(i))
    ]
    joined = {groups[i] for i in torch if i in groups}
    for item in torch:
        groups[item] = TORCH_GROUP
    for item, group in groups.items():
        item.add_marker(pytest.mark.xdist_group(TORCH_GROUP if group in joined else group))
    # The longest first, so that the two workers end together (pyproject: xdist keeps this
    # order, --no-loadscope-reorder); the rest keep theirs.
    stale = [p for p in LONGEST_FIRST if not (ROOT / p.split("::")[0]).is_file()]
    assert not stale, f"tests/conftest.py LONGEST_FIRST names files that are gone: {stale}"
    items.sort(key=_first_rank)


#: The longest work units of the suite (a file whose tests form one xdist group, or one test),
#: longest first, as measured on 2 cores (python3 -m pytest --durations=30): started at once,
#: they run beside each other and the short tests fill in after them, instead of one of them
#: starting last and keeping one core busy while the other waits.
LONGEST_FIRST = (
    "tests/bt_raider/llm/test_local.py",  # the real SmolLM2, its tests in sequence (~2 min)
    "tests/test_docs.py",  # the Sphinx builds, two processes at a time (~1.5 min)
    "tests/bt_raider/testing/test_explore.py::test_the_suites_exploration_finds_no_violation",
    "tests/test_types.py",  # mypy over the package
    "tests/examples/test_cooperative_processes.py::test_fleet_memory_crosses_processes",
    "tests/bt_raider/testing/test_explore.py::test_a_careless_tree_is_caught",
    "tests/test_core_install.py",  # a fresh venv
    "tests/test_readme.py::test_every_python_block_of_the_docs_runs_as_written[docs/explore.md",
    "tests/perception/test_validation.py::test_numbers_are_judged_in_bulk",
    "tests/memory/test_onnx_model.py",  # with the rest of the torch group (TORCH_GROUP)
    "tests/bt_raider/recovery/test_replies.py::test_a_reply_picks_what_it_designates",
    "tests/bt_raider/commands/test_memory_causes.py",
    "tests/bt_raider/viewer/test_browser.py",
    "tests/test_one_door.py",
)


#: Fixtures that load torch in the worker's process (tests/memory/conftest.py's ``minilm``,
#: tests/memory/test_onnx_build.py's ``torch_minilm``, tests/bt_raider/llm/test_chat.py's
#: ``tiny_model``); a test that loads torch itself is marked ``torch`` (pyproject).
TORCH_FIXTURES = frozenset({"minilm", "torch_minilm", "tiny_model"})
TORCH_GROUP = "torch"


def _names(item: pytest.Item) -> set[str]:
    """The names of the fixtures ``item`` uses, directly or through other fixtures."""
    return set(getattr(item, "fixturenames", ()))


def _first_rank(item: pytest.Item) -> int:
    """The item's place in :data:`LONGEST_FIRST` (after them all when not there)."""
    for rank, prefix in enumerate(LONGEST_FIRST):
        if item.nodeid.startswith(prefix):
            return rank
    return len(LONGEST_FIRST)


try:  # Hypothesis's per-example deadline: a busy worker's pause is not the code's failure
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("bt_raider", deadline=None)
    _hypothesis_settings.load_profile("bt_raider")
except ImportError:  # the test extra's; without it the Hypothesis tests do not import either
    pass

#: The project's own small kitchen (AI2-THOR format, our objects and numbers; 39 objects).
OWN_KITCHEN = KITCHEN_PATH


@pytest.fixture
def kitchen_dict() -> dict:
    """A fresh dict of the real FloorPlan1 kitchen (tests may change it freely)."""
    return json.loads(require(KITCHEN).read_text())


@pytest.fixture
def kitchen(kitchen_dict):
    from bt_raider.perception.scene import Scene

    return Scene(kitchen_dict, source=str(KITCHEN))


@pytest.fixture
def small_kitchen_dict() -> dict:
    """A fresh dict of the project's own small kitchen (see :mod:`bt_raider.testing.scenes`)."""
    return json.loads(OWN_KITCHEN.read_text())


@pytest.fixture
def small_kitchen(small_kitchen_dict):
    from bt_raider.perception.scene import Scene

    return Scene(small_kitchen_dict, source=str(OWN_KITCHEN))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection imported (the package, the tests, their tables) out of the
    garbage collector's sight: it lives as long as the run, and every full collection would
    walk it again (about a tenth of an exploration's CPU). Speed only."""
    import gc

    gc.collect()
    gc.freeze()
