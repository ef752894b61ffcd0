"""bt_raider's own ROS 2 types, for robots without types of their own.

``bt_raider_interfaces`` (its sources ship in ``bt_raider/ros2/interfaces/``):

* ``action/Act``: goal ``string action, string[] args``; result ``bool ok, string message,
  uint64 scene_seq``; feedback ``string state``;
* ``srv/Ask``: request ``string kind, string text``; response ``string answer, bool ok,
  uint64 scene_seq``;
* ``msg/SceneStamped``: ``uint64 seq, string json``.

It is built from source with the ament/rosidl pieces of the registry (the ``ros2-interfaces``
extra) and the machine's C/C++ compiler (:func:`build`, about a minute once), into a cache
directory keyed by the sources and the Python version; :func:`load` makes it importable. The
generic layer (:mod:`bt_raider.ros2.robot`, :mod:`~bt_raider.ros2.person`,
:mod:`~bt_raider.ros2.scene`) never needs it.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

from bt_raider.errors import BtRaiderError, installed, missing_dependency
from bt_raider.ros2.node import Spinner
from bt_raider.ros2.robot import RosAction

PACKAGE = "bt_raider_interfaces"
#: Seconds the build may take.
BUILD_TIMEOUT_S = 900.0
_SOURCES = (
    "package.xml",
    "CMakeLists.txt",
    "action/Act.action",
    "srv/Ask.srv",
    "msg/SceneStamped.msg",
)


class InterfaceBuildError(BtRaiderError):
    """The interface package could not be built (the message names the step and its log)."""


def source_dir() -> Path:
    """Where the package's sources ship (package data of ``bt_raider.ros2``)."""
    return Path(str(resources.files("bt_raider.ros2") / "interfaces"))


def cache_root() -> Path:
    """``$BT_RAIDER_ROS2_CACHE``, else ``$BT_RAIDER_CACHE``, else ``~/.cache/bt_raider``."""
    root = (
        os.environ.get("BT_RAIDER_ROS2_CACHE")
        or os.environ.get("BT_RAIDER_CACHE")
        or str(Path.home() / ".cache" / "bt_raider")
    )
    return Path(root)


def _key() -> str:
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update(name.encode() + b"\0" + (source_dir() / name).read_bytes())
    digest.update(sys.prefix.encode() + f"{sys.version_info[:2]}".encode())
    return digest.hexdigest()[:16]


def _site(prefix: Path) -> Path:
    return prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def missing_tools() -> list[str]:
    """What building needs and this machine lacks (empty: :func:`build` can run)."""
    missing = [tool for tool in ("cmake", "cc", "c++") if shutil.which(tool) is None]
    for module in ("rosidl_pycommon", "ament_package", "catkin_pkg", "rclpy"):
        if not installed(module):
            missing.append(f"python module {module}")
    if not (Path(sys.prefix) / "share" / "rosidl_default_generators").is_dir():
        missing.append("rosidl_default_generators (pip install 'bt_raider[ros2-interfaces]')")
    return missing


def built(cache: Path | None = None) -> Path | None:
    """The install prefix of an earlier build of these sources, or None."""
    prefix = (cache or cache_root()) / f"ros2-interfaces-{_key()}" / "install"
    return prefix if (_site(prefix) / PACKAGE / "__init__.py").is_file() else None


def build(cache: Path | None = None, *, echo: Callable[[str], Any] | None = None) -> Path:
    """Build the package (once per sources and Python); its install prefix.

    Safe to call from parallel processes: one builds while the others wait on a file lock.

    Raises:
        MissingDependencyError: the ament/rosidl pieces are missing.
        InterfaceBuildError: cmake or the compiler failed (the message names the log file).
    """
    missing = missing_tools()
    if missing:
        raise missing_dependency("ros2-interfaces", missing, "building bt_raider_interfaces")
    root = (cache or cache_root()) / f"ros2-interfaces-{_key()}"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = built(cache)
        if done is not None:
            return done
        if echo is not None:
            echo(f"building {PACKAGE} into {root} (once, about a minute)")
        prefix, work = root / "install", root / "build"
        shutil.rmtree(work, ignore_errors=True)
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["AMENT_PREFIX_PATH"] = os.pathsep.join(
            p for p in (sys.prefix, env.get("AMENT_PREFIX_PATH", "")) if p
        )
        steps = [
            [
                "cmake",
                "-S",
                str(source_dir()),
                "-B",
                str(work),
                f"-DCMAKE_PREFIX_PATH={sys.prefix}",
                f"-DCMAKE_INSTALL_PREFIX={prefix}",
                f"-DPython3_EXECUTABLE={sys.executable}",
                "-DBUILD_TESTING=OFF",
            ],
            ["cmake", "--build", str(work), "-j", str(min(2, os.cpu_count() or 1))],
            ["cmake", "--install", str(work)],
        ]
        log = root / "build.log"
        with open(log, "w") as out:
            for step in steps:
                try:
                    code = subprocess.run(
                        step,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        env=env,
                        timeout=BUILD_TIMEOUT_S,
                        check=False,
                    ).returncode
                except subprocess.TimeoutExpired:
                    code = -1
                if code != 0:
                    raise InterfaceBuildError(
                        f"building {PACKAGE} failed at {' '.join(step[:2])} (exit {code}): "
                        f"see {log}"
                    )
        shutil.rmtree(work, ignore_errors=True)
        return prefix


def load(prefix: Path) -> ModuleType:
    """Make the package built into ``prefix`` importable in this process; the package.

    Its libraries are loaded first (so no ``LD_LIBRARY_PATH`` is needed), then its Python
    package is put on ``sys.path``.
    """
    libs = sorted((prefix / "lib").glob(f"lib{PACKAGE}__*.so"))
    left = list(libs)
    for _ in range(len(libs)):  # in dependency order: retry what failed until none does
        failed = []
        for lib in left:
            try:
                ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                failed.append(lib)
        if not failed or len(failed) == len(left):
            left = failed
            break
        left = failed
    if left:
        raise InterfaceBuildError(f"cannot load {', '.join(p.name for p in left)} from {prefix}")
    site = str(_site(prefix))
    if site not in sys.path:
        sys.path.insert(0, site)
    import importlib

    return importlib.import_module(PACKAGE)


def ensure(cache: Path | None = None, *, echo: Callable[[str], Any] | None = None) -> ModuleType:
    """:func:`build` (when needed) and :func:`load`: the importable package."""
    prefix = built(cache) or build(cache, echo=echo)
    return load(prefix)


# ---------------------------------------------------------------------- using the types
def act_action(server: str, action: str | None = None) -> RosAction:
    """A :class:`RosAction` on ``bt_raider_interfaces/action/Act``: the goal names the action
    (``action``, default: the name the server is mapped to is given at call time) and its args
    as strings."""
    from bt_raider_interfaces.action import Act

    def goal(args: list[Any], _scene: dict[str, Any] | None) -> Any:
        return Act.Goal(action=action or server.rsplit("/", 1)[-1], args=[str(a) for a in args])

    return RosAction(Act, server, goal)


def act_actions(names: Iterable[str], namespace: str = "robot") -> dict[str, RosAction]:
    """One :func:`act_action` per name, served at ``/NAMESPACE/NAME``."""
    return {name: act_action(f"/{namespace}/{name}", name) for name in names}


def serve_actions(
    spinner: Spinner,
    names: Sequence[str],
    execute: Callable[[str, list[str]], tuple[bool, str, int]],
    namespace: str = "robot",
) -> list[Any]:
    """Serve each action of ``names`` as ``Act`` at ``/NAMESPACE/NAME`` (the robot's side).

    ``execute(action, args) -> (ok, message, scene_seq)`` runs one goal (on the spinner's
    thread: a simulator's quick action; a long one should run elsewhere and poll).
    """
    from bt_raider_interfaces.action import Act
    from rclpy.action.server import ActionServer

    def make(name: str) -> Any:
        def run(handle: Any) -> Any:
            ok, message, seq = execute(name, list(handle.request.args))
            result = Act.Result(ok=ok, message=message, scene_seq=seq)
            if ok:
                handle.succeed()
            else:
                handle.abort()
            return result

        return ActionServer(spinner.node, Act, f"/{namespace}/{name}", run)

    return spinner.call(lambda: [make(name) for name in names])
