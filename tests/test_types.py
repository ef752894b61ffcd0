"""mypy passes over the whole package at the strictness ``pyproject.toml`` sets, and the first
names (``from bt_raider import ...``) reach a type checker as what they are, not as Any.

setup.cfg maps four top-level folders into the package (``perception/`` is
``bt_raider.perception``); the editable install does that with an import hook mypy cannot
follow. So mypy runs over a link tree: a temporary ``bt_raider/`` whose entries link to the real
files and folders, with each mapped folder linked in where its package lives.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_layout import PACKAGE_DIR, ROOT, folder_of

pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]')")

#: A module that imports the first names and reveals their types to mypy.
FIRST_NAMES_MODULE = "first_names.py"


def _link_tree(top: Path) -> Path:
    """``top/bt_raider``: links to ``bt_raider``'s entries plus the folders setup.cfg maps in."""
    root = top / "bt_raider"
    root.mkdir()
    mapped = {
        package.split(".", 1)[1]: folder_of(package)
        for package in PACKAGE_DIR
        if package.startswith("bt_raider.")
    }
    assert all("." not in name for name in mapped), "only bt_raider.<name> mappings are linked"
    for entry in folder_of("bt_raider").iterdir():
        if entry.name not in mapped and entry.name != "__pycache__":
            (root / entry.name).symlink_to(entry)
    for name, folder in mapped.items():
        (root / name).symlink_to(folder, target_is_directory=True)
    return root


def _first_names_snippet() -> str:
    import bt_raider

    names = sorted(bt_raider._EXPORTS)
    lines = [f"from bt_raider import {', '.join(names)}"]
    lines += [f"reveal_type({name})" for name in names]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    """One mypy run over the package and the first-names snippet: (exit code, output)."""
    top = tmp_path_factory.mktemp("mypy")
    _link_tree(top)
    (top / FIRST_NAMES_MODULE).write_text(_first_names_snippet(), encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(top)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(top / ".mypy_cache"),
            "--no-error-summary",
            "-p",
            "bt_raider",
            "-m",
            FIRST_NAMES_MODULE.removesuffix(".py"),
        ],
        cwd=top,  # not the repository: there mypy would find bt_raider/ without the mapped folders
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_mypy_finds_no_error_in_the_package(mypy_run):
    code, output = mypy_run
    errors = [line for line in output.splitlines() if ": error:" in line]
    where = ", ".join(f"bt_raider/{name} is {folder}" for name, folder in _mapped_folders())
    assert code == 0 and not errors, (
        f"mypy exited {code} (paths are in the link tree: {where}):\n{output}"
    )


def test_the_first_names_are_typed(mypy_run):
    _, output = mypy_run
    revealed = dict(
        re.findall(
            rf"^{re.escape(FIRST_NAMES_MODULE)}:(\d+): note: Revealed type is \"(.*)\"$",
            output,
            flags=re.MULTILINE,
        )
    )
    import bt_raider

    names = sorted(bt_raider._EXPORTS)
    types = {name: revealed.get(str(line)) for line, name in enumerate(names, start=2)}
    assert None not in types.values(), f"no reveal_type for some names:\n{output}"
    untyped = sorted(name for name, kind in types.items() if kind == "Any")
    assert untyped == [], f"these first names are Any to a type checker:\n{output}"
    # The class itself (its constructor returns a RaiderGuard), and the function with its result.
    assert types["RaiderGuard"].startswith("def (child: py_trees.behaviour.Behaviour")
    assert types["RaiderGuard"].endswith("-> bt_raider.runtime.guards.RaiderGuard")
    assert types["check"].startswith("def (scene: ")
    assert types["check"].endswith("-> bt_raider.checking.verdict.Verdict")


def _mapped_folders() -> list[tuple[str, str]]:
    return [
        (package.split(".", 1)[1], f"{folder}/")
        for package, folder in PACKAGE_DIR.items()
        if package.startswith("bt_raider.")
    ]
