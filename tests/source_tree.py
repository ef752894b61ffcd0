"""The project's own Python source, each file parsed once per test process.

Several tests read the whole source with :mod:`ast` (the layers, the one door for files, the
extras named in install hints); under pytest-xdist a worker running more than one of them
parsed every file again for each. The trees are shared: read them, never change them.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The source trees of the installed package (``memory/``, ``perception/`` and ``planners/``
#: install as ``bt_raider.memory`` ...) and the examples a user runs.
SOURCES = ("bt_raider", "memory", "perception", "planners", "examples")


def python_files(folders: tuple[str, ...] = SOURCES) -> list[Path]:
    """Every ``.py`` file under ``folders`` (relative to the repository), sorted per folder."""
    return [path for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))]


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of ``path`` (shared: do not change it)."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))
