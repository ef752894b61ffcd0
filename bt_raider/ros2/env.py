"""Where ROS 2 traffic may go, and importing rclpy with an install hint.

Nothing here imports rclpy: :func:`local_env` and :func:`check_local` are the settings every
ROS 2 process bt_raider starts runs under (tests, benchmarks, the demo), and a user's own test
suite can use them too:

* ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``: discovery stays on this machine (ROS 2 Kilted
  ignores ``ROS_LOCALHOST_ONLY``; without this Fast DDS sends multicast out of every interface);
* ``ROS_DOMAIN_ID``: a domain of its own per test (:func:`domain`, from ``domain_coordinator``),
  so two suites on one machine never see each other's nodes;
* a short participant lease (:data:`LEASE_S`), through a Fast DDS profile file: a robot process
  that is killed (SIGKILL, a crash) leaves the graph within about a second instead of Fast DDS's
  default 20 s, so a goal on it fails in seconds.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from types import ModuleType

from bt_raider.errors import UsageError, installed, missing_dependency

#: The discovery range bt_raider sets for every ROS 2 process it starts.
DISCOVERY_RANGE = "LOCALHOST"
#: Seconds a participant may stay silent before others drop it (Fast DDS default: 20 s).
LEASE_S = 1.0
#: Seconds between a participant's liveliness announcements (a third of the lease or less).
ANNOUNCE_S = 0.25

_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <participant profile_name="bt_raider_short_lease" is_default_profile="true">
      <rtps>
        <builtin>
          <discovery_config>
            <leaseDuration><sec>{lease_sec}</sec><nanosec>{lease_ns}</nanosec></leaseDuration>
            <leaseAnnouncement><sec>0</sec><nanosec>{announce_ns}</nanosec></leaseAnnouncement>
          </discovery_config>
        </builtin>
      </rtps>
    </participant>
  </profiles>
</dds>
"""


def need_rclpy(needed_by: str = "bt_raider.ros2") -> ModuleType:
    """``rclpy``, imported now; a one-line install hint when it is missing.

    Raises:
        MissingDependencyError: rclpy is not installed (``pip install 'bt_raider[ros2]'``, or
            source a ROS 2 Jazzy/Kilted installation).
    """
    if not installed("rclpy"):
        raise missing_dependency(
            "ros2", ["ros-rclpy"], needed_by, alternative=" (or source a ROS 2 installation)"
        )
    try:
        return importlib.import_module("rclpy")
    except ImportError as exc:
        raise missing_dependency("ros2", ["ros-rclpy"], needed_by, broken=str(exc)) from exc


def profile_file(lease_s: float = LEASE_S, announce_s: float = ANNOUNCE_S) -> Path:
    """A Fast DDS profile file giving every participant a lease of ``lease_s`` seconds.

    Written once per setting into the temporary directory (its name says the setting).
    """
    if not 0 < announce_s < lease_s:
        raise UsageError(
            f"the lease announcement period must be above 0 and below the lease: "
            f"got announce_s={announce_s!r}, lease_s={lease_s!r}"
        )
    text = _PROFILE.format(
        lease_sec=int(lease_s),
        lease_ns=round((lease_s % 1) * 1e9),
        announce_ns=round(announce_s * 1e9),
    )
    path = Path(tempfile.gettempdir()) / f"bt_raider_fastdds_lease_{lease_s:g}_{announce_s:g}.xml"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # atomic: a second process never reads half a file
    return path


def local_env(
    domain_id: int | None = None,
    base: Mapping[str, str] | None = None,
    *,
    lease_s: float | None = LEASE_S,
) -> dict[str, str]:
    """``base`` (default ``os.environ``) with traffic kept on this machine, for a child process.

    Args:
        domain_id: the ROS 2 domain (0-101); None keeps ``base``'s ``ROS_DOMAIN_ID``.
        base: the environment to start from.
        lease_s: the participant lease (:func:`profile_file`); None keeps Fast DDS's own.
    """
    env = dict(os.environ if base is None else base)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = DISCOVERY_RANGE
    env.pop("ROS_STATIC_PEERS", None)  # peers elsewhere would be reached despite the range
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(_domain(domain_id))
    if lease_s is not None:
        path = str(profile_file(lease_s, min(ANNOUNCE_S, lease_s / 4)))
        env["FASTDDS_DEFAULT_PROFILES_FILE"] = path
        env.pop("FASTRTPS_DEFAULT_PROFILES_FILE", None)  # the old name would win, with a warning
    return env


def apply_local(domain_id: int | None = None, *, lease_s: float | None = LEASE_S) -> None:
    """Set :func:`local_env` in this process (before its first ROS 2 node is created)."""
    _update(os.environ, local_env(domain_id, lease_s=lease_s))


def _update(target: MutableMapping[str, str], env: Mapping[str, str]) -> None:
    for key in [k for k in target if k not in env]:
        del target[key]
    target.update(env)


def _domain(value: object) -> int:
    text = str(value)
    # ASCII digits only: int() would also read other scripts' digits, which ROS 2 does not.
    number = int(text) if text.isascii() and text.isdigit() else -1
    if not 0 <= number <= 101:
        raise UsageError(f"a ROS_DOMAIN_ID is a number from 0 to 101: got {value!r}")
    return number


def check_local(env: Mapping[str, str] | None = None, *, need_domain: bool = True) -> int | None:
    """Refuse a ROS 2 process whose traffic could leave this machine.

    Returns:
        The domain id (None when ``need_domain`` is False and none is set).

    Raises:
        UsageError: ``ROS_AUTOMATIC_DISCOVERY_RANGE`` is not ``LOCALHOST``, static peers are
            set, or (with ``need_domain``) ``ROS_DOMAIN_ID`` is missing or not a domain.
    """
    env = os.environ if env is None else env
    found = env.get("ROS_AUTOMATIC_DISCOVERY_RANGE")
    if found != DISCOVERY_RANGE:
        raise UsageError(
            f"ROS_AUTOMATIC_DISCOVERY_RANGE is {found!r}: bt_raider starts ROS 2 nodes only with "
            f"{DISCOVERY_RANGE!r} (bt_raider.ros2.env.local_env), so no traffic leaves the machine"
        )
    if env.get("ROS_STATIC_PEERS"):
        raise UsageError(f"ROS_STATIC_PEERS is {env['ROS_STATIC_PEERS']!r}: expected it unset")
    if "ROS_DOMAIN_ID" not in env:
        if need_domain:
            raise UsageError("ROS_DOMAIN_ID is not set: give each test its own (env.domain())")
        return None
    return _domain(env["ROS_DOMAIN_ID"])


@contextlib.contextmanager
def domain() -> Iterator[int]:
    """A ROS 2 domain id no other process on this machine holds while the block runs.

    ``domain_coordinator`` (a ROS 2 package) reserves it by binding a local port, so parallel
    test workers and a second suite get different domains.

    Raises:
        MissingDependencyError: ``domain_coordinator`` is not installed.
    """
    if not installed("domain_coordinator"):
        raise missing_dependency("ros2", ["ros-domain-coordinator"], "bt_raider.ros2.env.domain")
    coordinator = importlib.import_module("domain_coordinator")
    # Start from a random id: two suites starting together do not race for the same ones.
    start = int.from_bytes(os.urandom(2), "big")

    class _From:
        def __init__(self) -> None:
            self.value = start

        def __call__(self) -> int:
            self.value += 1
            return self.value % 100 + 1

    with coordinator.domain_id(_From()) as number:
        yield int(number)
