"""A signed fleet: only the team's own robots can speak for a robot on the bus.

Every frame a :class:`~bt_raider.fleet.zenoh_bus.ZenohBus` sends -- broadcasts, direct
messages, validation requests and their answers, the fleet memory's records and end notes -- is
wrapped in an **envelope** signed with the sending robot's Ed25519 private key
(:class:`Identity`); every robot holds the team's :class:`Keyring` of public keys and opens each
envelope with :meth:`FleetSecurity.open`. The signature covers the team (the key prefix), the
channel, the sender, the recipient, a sequence number, a timestamp and the frame itself::

    btrf1 <sender> <recipient> <channel> <seq> <ms> <signature>\\n<frame>

A frame is **refused** -- dropped by the bus and counted as a fault of that kind -- when it is

* ``unsigned``: no envelope (the bare frame of an unsigned bus, or anything else);
* ``malformed``: an envelope whose header does not parse;
* ``unknown_key``: signed in the name of a robot that is not in the keyring;
* ``forged``: the signature does not verify under any key of the keyring;
* ``wrong_robot``: signed by one robot of the team in the name of another, or sent on another
  robot's key;
* ``misrouted``: signed for another channel or recipient (a frame replayed elsewhere);
* ``stale``: its timestamp is further than ``max_skew`` seconds from this robot's clock;
* ``replayed``: a sequence number this robot has already accepted from that sender, or one
  older than the last ``window`` it accepted.

Keys live in a folder made by ``bt-raider fleet keys new``: ``<robot>.key`` (the private key,
PEM, mode 0600) and ``keyring.json`` (every robot's public key). A private key readable by the
group or by others, a keyring writable by them, or a robot's key that does not match its entry
in the keyring is refused in one line (:class:`KeyFileError`).

``cryptography`` is part of the ``fleet`` extra; it is imported when a key is made or read.
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bt_raider.errors import CommunicationError, InputFileError, require
from bt_raider.files import read_bytes, read_json

#: First word of every envelope (the wire format's version).
MAGIC = "btrf1"
#: The keyring's file name inside a keys folder.
KEYRING_FILE = "keyring.json"
#: Suffix of a robot's private key file.
KEY_SUFFIX = ".key"
#: Longest envelope header, in characters (the frame bound does not count it).
MAX_HEADER_CHARS = 320
#: Seconds a frame's timestamp may differ from the receiver's clock.
MAX_SKEW = 30.0
#: Sequence numbers remembered per sender (a frame older than the last WINDOW is refused).
WINDOW = 4096
#: Recipient of a frame every robot of the team may read.
EVERYONE = "*"
#: The refusal kinds, as counted by a bus.
REFUSALS = (
    "unsigned",
    "malformed",
    "unknown_key",
    "forged",
    "wrong_robot",
    "misrouted",
    "stale",
    "replayed",
)

_MAX_KEY_BYTES = 4096
_MAX_KEYRING_BYTES = 1 << 20
_SEGMENT = r"[A-Za-z0-9_.-]{1,64}"
_HEADER = re.compile(
    rf"{MAGIC} (?P<sender>{_SEGMENT}) (?P<recipient>{_SEGMENT}|\*) "
    rf"(?P<channel>(?:out|direct|inbox|answer|topic/{_SEGMENT})) "
    r"(?P<seq>[0-9]{1,19}) (?P<ms>[0-9]{1,16}) (?P<sig>[A-Za-z0-9_-]{86})"
)
_NAME = re.compile(rf"^{_SEGMENT}$")


class KeyFileError(InputFileError):
    """A key or keyring file is missing, unreadable, too open, malformed or does not match."""


class Refused(CommunicationError):
    """A frame that is not signed by the robot it claims to come from (``kind`` says why)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def _crypto() -> Any:
    require("cryptography", "fleet", needed_by="a signed fleet")
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519


def b64url(raw: bytes) -> str:
    """``raw`` in URL-safe base64 without padding (one spelling per value)."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_robot(name: Any) -> str:
    """A robot name usable in keys and envelopes (letters, digits, ``_ . -``; 1..64)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise KeyFileError(
            f"robot name {name!r} is not usable: use 1 to 64 letters, digits, '_', '.', '-'"
        )
    return name


def _key_error(path: Path, what: str, message: str) -> KeyFileError:
    err = KeyFileError(f"{path}: {message}")
    err.path, err.what = str(path), what
    return err


def _mode_check(path: Path, what: str, *, private: bool) -> None:
    """Refuse a private key readable by others, or a keyring writable by others."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError as exc:
        raise _key_error(path, what, f"cannot read {what} ({exc.strerror})") from None
    loose = mode & (0o077 if private else 0o022)
    if loose:
        who = "group/others can " + ("read it" if private else "change it")
        fix = "chmod 600" if private else "chmod 644"
        raise _key_error(
            path, what, f"{what} is too open (mode {mode:04o}: {who}); run {fix} {path}"
        )


@dataclass(frozen=True)
class Identity:
    """A robot's name and Ed25519 private key (it signs what the robot sends)."""

    name: str
    private_key: Any

    @classmethod
    def generate(cls, name: str) -> Identity:
        return cls(check_robot(name), _crypto().Ed25519PrivateKey.generate())

    @property
    def public_bytes(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return bytes(
            self.private_key.public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw
            )
        )

    def sign(self, data: bytes) -> bytes:
        return bytes(self.private_key.sign(data))

    def pem(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return bytes(
            self.private_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], name: str | None = None) -> Identity:
        """Read a private key file (PEM) of mode 0600 or stricter.

        Raises:
            KeyFileError: missing, unreadable, readable by group or others, or not an Ed25519
                private key.
        """
        p = Path(path)
        what = "private key"
        robot = check_robot(name if name is not None else p.name.removesuffix(KEY_SUFFIX))
        _mode_check(p, what, private=True)
        try:
            raw = read_bytes(p, what=what, max_bytes=_MAX_KEY_BYTES)
        except InputFileError as exc:
            raise _key_error(p, what, str(exc).removeprefix(f"{p}: ")) from None
        _crypto()
        from cryptography.hazmat.primitives import serialization

        try:
            key = serialization.load_pem_private_key(raw, password=None)
        except (ValueError, TypeError) as exc:
            raise _key_error(p, what, f"not a PEM private key ({exc})") from None
        if not isinstance(key, _crypto().Ed25519PrivateKey):
            raise _key_error(p, what, f"not an Ed25519 key ({type(key).__name__})")
        return cls(robot, key)


class Keyring:
    """The team's public keys: robot name -> Ed25519 public key.

    Args:
        keys: robot name -> the 32 raw bytes of its public key.
    """

    def __init__(self, keys: Mapping[str, bytes]) -> None:
        ed = _crypto()
        self._keys: dict[str, Any] = {}
        self._raw: dict[str, bytes] = {}
        for name, raw in keys.items():
            check_robot(name)
            try:
                self._keys[name] = ed.Ed25519PublicKey.from_public_bytes(bytes(raw))
            except ValueError as exc:
                raise KeyFileError(f"public key of {name!r} is not an Ed25519 key: {exc}") from None
            self._raw[name] = bytes(raw)

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def names(self) -> list[str]:
        return sorted(self._keys)

    def raw(self, name: str) -> bytes:
        return self._raw[name]

    def fingerprint(self, name: str) -> str:
        """A short, stable fingerprint of ``name``'s key (to compare keyrings by eye)."""
        import hashlib

        return hashlib.sha256(self._raw[name]).hexdigest()[:16]

    def verify(self, name: str, signature: bytes, data: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self._keys[name].verify(signature, data)
        except InvalidSignature:
            return False
        return True

    def signer_of(self, signature: bytes, data: bytes) -> str | None:
        """The robot of the keyring whose key made ``signature`` (None: none of them)."""
        return next((n for n in self._keys if self.verify(n, signature, data)), None)

    def to_json(self) -> str:
        return json.dumps({"v": 1, "keys": {n: b64url(self._raw[n]) for n in self.names}}, indent=2)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Keyring:
        """Read a keyring file (``keyring.json``) nobody but its owner can change.

        Raises:
            KeyFileError: missing, unreadable, writable by group or others, or malformed.
        """
        p = Path(path)
        what = "keyring"
        _mode_check(p, what, private=False)
        try:
            raw = read_json(p, what=what, max_bytes=_MAX_KEYRING_BYTES)
        except InputFileError as exc:
            raise _key_error(p, what, str(exc).removeprefix(f"{p}: ")) from None
        keys = raw.get("keys") if isinstance(raw, dict) and raw.get("v") == 1 else None
        if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
            raise _key_error(p, what, 'expected {"v": 1, "keys": {"<robot>": "<base64 key>"}}')
        try:
            decoded = {n: _unb64(v) for n, v in keys.items()}
        except ValueError as exc:
            raise _key_error(p, what, f"a key is not base64 ({exc})") from None
        try:
            return cls(decoded)
        except KeyFileError as exc:
            raise _key_error(p, what, str(exc)) from None


def _write_private(path: Path, data: bytes) -> None:
    """Create ``path`` with mode 0600 (never readable by others, even for a moment)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def generate_keys(
    folder: str | os.PathLike[str], names: Iterable[str], *, force: bool = False
) -> Keyring:
    """Make a private key for each robot in ``names`` and add its public key to the keyring.

    The folder is created with mode 0700; each ``<robot>.key`` with mode 0600; ``keyring.json``
    (public keys only) keeps the keys of robots made before.

    Raises:
        KeyFileError: a robot already has a key (without ``force``), a bad name, or the folder
            cannot be written.
    """
    d = Path(folder)
    wanted = [check_robot(n) for n in names]
    if not wanted:
        raise KeyFileError("name at least one robot to make keys for")
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise _key_error(
            d, "keys folder", f"cannot create the keys folder ({exc.strerror})"
        ) from None
    ring = d / KEYRING_FILE
    before = Keyring.load(ring) if ring.exists() else Keyring({})
    known = {n: before.raw(n) for n in before.names}
    for name in wanted:
        path = d / f"{name}{KEY_SUFFIX}"
        if path.exists() or path.is_symlink():
            if not force:
                raise _key_error(path, "private key", "exists already; pass --force to replace it")
            path.unlink()
        identity = Identity.generate(name)
        try:
            _write_private(path, identity.pem())
        except OSError as exc:
            raise _key_error(path, "private key", f"cannot write it ({exc.strerror})") from None
        known[name] = identity.public_bytes
    keyring = Keyring(known)
    tmp = d / f".{KEYRING_FILE}.{os.getpid()}.tmp"
    try:  # written whole, then renamed: a reader never sees half a keyring
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(keyring.to_json() + "\n")
        os.replace(tmp, ring)
    except OSError as exc:
        raise _key_error(ring, "keyring", f"cannot write it ({exc.strerror})") from None
    return keyring


def signed_bytes(scope: str, header: str, body: bytes) -> bytes:
    """What a signature covers: the version, the team's key prefix, the header, the frame."""
    return f"bt_raider-fleet/1\n{scope}\n{header}\n".encode() + body


_warned_unsigned: set[str] = set()


def warn_unsigned(log: Any, name: str) -> None:
    """Say once per process that an unsigned bus trusts anyone on it."""
    if not _warned_unsigned:
        log.warning(
            "%s: unsigned fleet bus: any process on the bus can speak for any robot "
            "(pass security=FleetSecurity.load(...); keys from bt-raider fleet keys new)",
            name,
        )
    _warned_unsigned.add(name)


class _Window:
    """The sequence numbers accepted from one sender: the highest, and those within WINDOW of it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.high = -1
        self.seen: set[int] = set()

    def accept(self, seq: int) -> str | None:
        """None when ``seq`` is new (and remember it), else why it is refused."""
        if seq <= self.high - self.size:
            return f"sequence {seq} is older than the last {self.size} accepted (up to {self.high})"
        if seq in self.seen:
            return f"sequence {seq} was accepted before"
        self.seen.add(seq)
        if seq > self.high:
            self.high = seq
            if len(self.seen) > 2 * self.size:
                self.seen = {s for s in self.seen if s > self.high - self.size}
        return None


class FleetSecurity:
    """One robot's signing key and the team's keyring: seals what it sends, opens what it gets.

    Args:
        identity: this robot's name and private key.
        keyring: the team's public keys; it must hold ``identity``'s public key.
        max_skew: seconds a frame's timestamp may differ from this robot's clock.
        window: sequence numbers remembered per sender.
        clock: the wall clock (seconds), for tests.

    Raises:
        KeyFileError: the keyring has no key for this robot, or another key than its own.
    """

    def __init__(
        self,
        identity: Identity,
        keyring: Keyring,
        *,
        max_skew: float = MAX_SKEW,
        window: int = WINDOW,
        clock: Any = time.time,
    ) -> None:
        if identity.name not in keyring:
            raise KeyFileError(
                f"the keyring has no key for {identity.name!r} (it holds "
                f"{', '.join(keyring.names) or 'none'}): run bt-raider fleet keys new"
            )
        if keyring.raw(identity.name) != identity.public_bytes:
            raise KeyFileError(
                f"keyring mismatch: {identity.name!r}'s private key does not match its public "
                "key in the keyring (copy the team's current keyring.json)"
            )
        if not (max_skew > 0 and window > 0):
            raise CommunicationError(f"max_skew and window must be > 0, got {max_skew}, {window}")
        self.identity = identity
        self.keyring = keyring
        self.max_skew = float(max_skew)
        self.window = int(window)
        self.clock = clock
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        # Starts at the clock in microseconds: a robot that restarts goes on above its old numbers.
        self._seq = int(clock() * 1_000_000)
        self._windows: dict[str, _Window] = {}

    @classmethod
    def load(
        cls,
        folder: str | os.PathLike[str],
        name: str,
        *,
        keyring: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> FleetSecurity:
        """``name``'s key (``<folder>/<name>.key``) and the keyring (``<folder>/keyring.json``)."""
        d = Path(folder)
        identity = Identity.load(d / f"{check_robot(name)}{KEY_SUFFIX}", name)
        ring = Keyring.load(keyring if keyring is not None else d / KEYRING_FILE)
        return cls(identity, ring, **kwargs)

    @property
    def name(self) -> str:
        return self.identity.name

    def seal(self, body: str, *, scope: str, channel: str, recipient: str = EVERYONE) -> str:
        """``body`` in an envelope signed by this robot for ``channel`` and ``recipient``."""
        with self._lock:
            self._seq += 1
            seq = self._seq
        ms = int(self.clock() * 1000)
        header = f"{MAGIC} {self.name} {recipient} {channel} {seq} {ms}"
        sig = self.identity.sign(signed_bytes(scope, header, body.encode("utf-8")))
        return f"{header} {b64url(sig)}\n{body}"

    def open(
        self,
        wire: str,
        *,
        scope: str,
        channel: str,
        recipient: str,
        sender: str | None = None,
    ) -> tuple[str, str]:
        """Check an envelope; returns ``(sender, body)``.

        Args:
            wire: the envelope's text.
            scope: the key prefix and team it must be signed for.
            channel: the channel it arrived on.
            recipient: who it must be addressed to (this robot, or :data:`EVERYONE`).
            sender: the robot the transport says sent it (None: whoever signed it).

        Raises:
            Refused: the frame is refused (``kind`` is one of :data:`REFUSALS`).
        """
        try:
            return self._open(wire, scope, channel, recipient, sender)
        except Refused as exc:
            with self._lock:
                self.counts[exc.kind] += 1
            raise

    def _open(
        self, wire: str, scope: str, channel: str, recipient: str, sender: str | None
    ) -> tuple[str, str]:
        if not isinstance(wire, str) or not wire.startswith(MAGIC + " "):
            raise Refused("unsigned", f"no {MAGIC} envelope: {str(wire)[:40]!r}")
        head, newline, body = wire.partition("\n")
        match = _HEADER.fullmatch(head) if newline and len(head) <= MAX_HEADER_CHARS else None
        if match is None:
            raise Refused("malformed", f"envelope header unreadable: {head[:80]!r}")
        who = match["sender"]
        if who not in self.keyring:
            raise Refused("unknown_key", f"signed as {who!r}, a robot not in the keyring")
        sig = _unb64(match["sig"])
        if b64url(sig) != match["sig"]:  # one spelling per signature: no twin of a frame
            raise Refused("malformed", "signature is not canonical base64")
        header = head.rsplit(" ", 1)[0]
        data = signed_bytes(scope, header, body.encode("utf-8", errors="surrogatepass"))
        if not self.keyring.verify(who, sig, data):
            signer = self.keyring.signer_of(sig, data)
            if signer is not None:
                raise Refused("wrong_robot", f"signed by {signer!r} in the name of {who!r}")
            raise Refused("forged", f"signature of a frame from {who!r} does not verify")
        if sender is not None and sender != who:
            raise Refused("wrong_robot", f"{who!r}'s frame sent on {sender!r}'s key")
        if match["channel"] != channel or match["recipient"] != recipient:
            raise Refused(
                "misrouted",
                f"{who!r} signed it for {match['channel']} to {match['recipient']!r}, it came on "
                f"{channel} to {recipient!r}",
            )
        age = self.clock() - int(match["ms"]) / 1000
        if abs(age) > self.max_skew:
            raise Refused(
                "stale", f"{who!r}'s frame is {age:.1f} s old (the bound is {self.max_skew:g} s)"
            )
        with self._lock:
            why = self._windows.setdefault(who, _Window(self.window)).accept(int(match["seq"]))
            if why is None:
                self.counts["accepted"] += 1
        if why is not None:
            raise Refused("replayed", f"{who!r}: {why}")
        return who, body
