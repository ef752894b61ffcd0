"""Where the public data of ``../shared`` lives, and the one way a test skips without it.

A clone of the repository has no ``../shared``: tests that read its scenes, PDDL domains or
data sets skip with :data:`MISSING` (one reason line); the rest of the suite runs on fixtures
the project writes itself (``tests/data/``, scenes built in code).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: ``BT_RAIDER_SHARED=/nonexistent python3 -m pytest`` runs the suite as a clone without it.
SHARED = Path(os.environ.get("BT_RAIDER_SHARED") or ROOT.parent / "shared")
KITCHEN = SHARED / "scenes" / "floorplan1_kitchen.json"
PDDL = SHARED / "pddl"
DATA = ROOT / "tests" / "data"
#: The project's own small PDDL domains (always there).
OWN_PDDL = DATA / "pddl"

#: The one skip reason of every test that needs ../shared.
MISSING = "needs ../shared (public scenes, PDDL and data sets), absent beside this clone"

#: Mark a test (or a module: ``pytestmark = needs_shared``) that reads ../shared.
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=MISSING)


def require(path: Path) -> Path:
    """``path`` when it exists; otherwise skip the calling test with :data:`MISSING`."""
    if not path.exists():
        pytest.skip(MISSING)
    return path


def classical_domains() -> list[str]:
    """The shared PDDL domains with classical actions and a stored problem ([] when absent)."""
    if not PDDL.is_dir():
        return []
    return sorted(
        d.name
        for d in PDDL.iterdir()
        if (d / "problem.pddl").exists() and d.name != "plansys2_simple_example"
    )
