"""Zenoh settings of the fleet bus: key names, endpoints, session configuration, and the kinds of
fault a bus counts.
"""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bt_raider.errors import CommunicationError, require

#: First segment of every key.
DEFAULT_PREFIX = "bt_raider"


#: Team used when none is given.
DEFAULT_TEAM = "default"


#: Where a bus listens when no endpoint is given: loopback, a port the OS picks.
LOOPBACK_LISTEN = ("tcp/127.0.0.1:0",)


#: Session modes a bus accepts.
MODES = ("peer", "client", "router")


#: Kinds of fault a bus counts.
FAULTS = (
    "timeout",  # the collaborator did not answer within the timeout
    "unreachable",  # no queryable answered: the collaborator is not (or no longer) there
    "malformed",  # an answer or publication that is not a valid frame
    "oversized",  # an answer or publication longer than the frame bound
    "mismatched",  # a valid frame that does not answer this request, or a spoofed sender
    "error_reply",  # the collaborator replied with an error
    "bad_request",  # a request reaching us that we could not read or answer
    "handler_error",  # a subscriber or server handler of ours raised
    "duplicate",  # a publication delivered twice (dropped)
    # A signed bus (bt_raider.fleet.signing) also drops, and counts, frames that are:
    "unsigned",  # not in a signed envelope
    "unknown_key",  # signed in the name of a robot not in the keyring
    "forged",  # signed by no key of the keyring
    "wrong_robot",  # signed by one robot of the team in another's name, or on another's key
    "misrouted",  # signed for another channel or recipient
    "stale",  # stamped further than the allowed skew from this robot's clock
    "replayed",  # a sequence number already accepted from that robot, or too old
)


_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def check_segment(what: str, value: Any) -> str:
    """A key segment: letters, digits, ``_ . -`` (no ``/``, ``*``, ``$``, ``?``, ``#``)."""
    if not isinstance(value, str) or not _NAME.match(value):
        raise CommunicationError(
            f"{what} {value!r} cannot be a Zenoh key segment: use letters, digits, '_', '.', '-'"
        )
    return value


def check_prefix(prefix: Any) -> str:
    """A key prefix: key segments joined by ``/`` (``bt_raider``, ``lab/bt_raider``)."""
    if not isinstance(prefix, str) or not prefix or prefix.startswith("/") or prefix.endswith("/"):
        raise CommunicationError(
            f"key prefix {prefix!r} must be segments joined by '/', e.g. 'bt_raider' or 'lab/bt_raider'"
        )
    for part in prefix.split("/"):
        check_segment("key prefix segment", part)
    return prefix


def check_endpoints(what: str, endpoints: Iterable[str]) -> list[str]:
    """Zenoh locators such as ``tcp/127.0.0.1:7447``; ``what`` names them in the error."""
    out = []
    for e in endpoints:
        if not isinstance(e, str) or "/" not in e or not e.split("/", 1)[1]:
            raise CommunicationError(
                f"{what} endpoint {e!r} is not a Zenoh locator: expected e.g. 'tcp/127.0.0.1:7447'"
            )
        out.append(e)
    return out


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (for tests and the process runner)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def loopback_endpoint(port: int | None = None) -> str:
    """``tcp/127.0.0.1:<port>`` (a free port when ``port`` is None)."""
    return f"tcp/127.0.0.1:{free_port() if port is None else int(port)}"


def make_config(
    *,
    mode: str = "peer",
    listen: Sequence[str] | None = None,
    connect: Sequence[str] = (),
    multicast: bool = False,
    options: Mapping[str, Any] | None = None,
) -> Any:
    """A ``zenoh.Config`` for one robot.

    Args:
        mode: ``peer`` (default), ``client`` or ``router``.
        listen: endpoints to listen on; None: :data:`LOOPBACK_LISTEN` (loopback only). Pass
            ``["tcp/0.0.0.0:7447"]`` to be reachable from other machines.
        connect: endpoints of peers (or a router) to connect to.
        multicast: enable multicast scouting (off: peers are found through ``connect``).
        options: further ``path -> value`` settings, each inserted with ``insert_json5``.

    Raises:
        CommunicationError: a bad mode or endpoint, or Zenoh refused a setting.
    """
    zenoh = require("zenoh", "fleet", needed_by="a Zenoh session")
    if mode not in MODES:
        raise CommunicationError(
            f"zenoh mode {mode!r} is unknown: expected one of {', '.join(MODES)}"
        )
    listen = list(LOOPBACK_LISTEN) if listen is None else check_endpoints("listen", listen)
    connect = check_endpoints("connect", connect)
    settings: dict[str, Any] = {
        "mode": mode,
        "listen/endpoints": listen,
        "connect/endpoints": connect,
        "scouting/multicast/enabled": bool(multicast),
    }
    settings.update(options or {})
    config = zenoh.Config()
    for path, value in settings.items():
        try:
            config.insert_json5(path, json.dumps(value))
        except Exception as exc:  # zenoh raises its own ZError
            raise CommunicationError(f"zenoh refused setting {path} = {value!r}: {exc}") from exc
    return config


def tls_options(
    ca: str | os.PathLike[str],
    certificate: str | os.PathLike[str],
    private_key: str | os.PathLike[str],
    *,
    mutual: bool = True,
) -> dict[str, Any]:
    """Zenoh settings for TLS links (``tls/127.0.0.1:<port>`` endpoints), for ``options=``.

    Transport-level defence, on top of (not instead of) signed messages: only sessions whose
    certificate the team's CA signed can connect (``mutual``: both ends show one), and the
    links are encrypted.

    Args:
        ca: the team's CA certificate (PEM file).
        certificate: this robot's certificate (PEM), signed by ``ca``; its common name is the
            robot's name (what :func:`access_control` allows).
        private_key: the certificate's private key (PEM).
        mutual: require a certificate of every peer that connects (mTLS).
    """
    out: dict[str, Any] = {"transport/link/tls/root_ca_certificate": os.fspath(ca)}
    for side in ("listen", "connect"):
        out[f"transport/link/tls/{side}_certificate"] = os.fspath(certificate)
        out[f"transport/link/tls/{side}_private_key"] = os.fspath(private_key)
    out["transport/link/tls/enable_mtls"] = bool(mutual)
    return out


#: Zenoh messages a robot of the team exchanges (all others are denied by access_control).
ACL_MESSAGES = (
    "put",
    "delete",
    "declare_subscriber",
    "declare_queryable",
    "query",
    "reply",
    "liveliness_token",
    "liveliness_query",
    "declare_liveliness_subscriber",
)


def access_control(robots: Iterable[str], prefix: str = DEFAULT_PREFIX) -> dict[str, Any]:
    """Zenoh ``access_control`` settings: only TLS peers whose certificate's common name is one
    of ``robots`` may publish, subscribe, query or answer under ``prefix``; all else is denied.

    Merge into ``options=`` with :func:`tls_options` (the common name comes from mTLS).
    """
    names = [check_segment("robot name", r) for r in robots]
    return {
        "access_control": {
            "enabled": True,
            "default_permission": "deny",
            "rules": [
                {
                    "id": "team",
                    "messages": list(ACL_MESSAGES),
                    "flows": ["egress", "ingress"],
                    "permission": "allow",
                    "key_exprs": [f"{check_prefix(prefix)}/**"],
                }
            ],
            "subjects": [{"id": "robots", "cert_common_names": names}],
            "policies": [{"rules": ["team"], "subjects": ["robots"]}],
        }
    }


@dataclass(frozen=True)
class Fault:
    """One fault the bus met: when, what kind, with whom, and why."""

    time: float
    kind: str
    peer: str | None
    detail: str
