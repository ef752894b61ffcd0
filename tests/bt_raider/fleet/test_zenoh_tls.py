"""Zenoh's own transport defence, for teams that want it on top of signed messages: TLS links
with certificates (mTLS) on loopback endpoints, and access control by certificate name.

The certificates are made here, at test time, in ``tmp_path`` (none is kept in the repository).
"""

from __future__ import annotations

import datetime
import ipaddress
import threading
import time

import pytest

zenoh = pytest.importorskip("zenoh")
pytest.importorskip("cryptography")

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

from bt_raider.cooperation.messaging import Message, MessageKind  # noqa: E402
from bt_raider.fleet.signing import FleetSecurity, generate_keys  # noqa: E402
from bt_raider.fleet.zenoh_bus import ZenohBus  # noqa: E402
from bt_raider.fleet.zenoh_config import (  # noqa: E402
    access_control,
    free_port,
    make_config,
    tls_options,
)

pytestmark = pytest.mark.zenoh

SUB = {"action": "put", "target": "apple"}


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _certificate(subject: str, key, issuer: str, issuer_key, *, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        ).add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


class Pki:
    """A certificate authority in a folder; robot certificates named after the robot."""

    def __init__(self, folder, name: str = "team-ca") -> None:
        self.folder, self.name = folder, name
        folder.mkdir(mode=0o700, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(name, self.key, name, self.key, ca=True)
        self.ca = folder / f"{name}.pem"
        self.ca.write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    def robot(self, robot: str) -> dict:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(robot, key, self.name, self.key, ca=False)
        key_path, cert_path = self.folder / f"{robot}.key", self.folder / f"{robot}.pem"
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        key_path.chmod(0o600)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return tls_options(self.ca, cert_path, key_path)


def tls_endpoint() -> str:
    return f"tls/127.0.0.1:{free_port()}"


def heard_by(listener: ZenohBus, options: dict, endpoint: str, key: str) -> bool:
    """Whether a session with ``options`` that connects to ``endpoint`` reaches ``listener``."""
    got = threading.Event()
    sub = listener.session.declare_subscriber(key, lambda s: got.set())
    try:
        session = zenoh.open(make_config(listen=[], connect=[endpoint], options=options))
    except Exception:
        return False  # refused at once
    try:
        for _ in range(15):
            session.put(key, b"hello")
            if got.wait(0.1):
                return True
        return False
    finally:
        session.close()
        sub.undeclare()


def test_signed_robots_over_mutual_tls_and_what_cannot_connect(tmp_path):
    pki = Pki(tmp_path / "pki")
    generate_keys(tmp_path / "keys", ["alice", "bob"])
    ea, eb = tls_endpoint(), tls_endpoint()
    alice = ZenohBus(
        "alice",
        team="tls",
        listen=[ea],
        options=pki.robot("alice"),
        security=FleetSecurity.load(tmp_path / "keys", "alice"),
    )
    bob = ZenohBus(
        "bob",
        team="tls",
        listen=[eb],
        connect=[ea],
        options=pki.robot("bob"),
        security=FleetSecurity.load(tmp_path / "keys", "bob"),
    )
    try:
        assert alice.wait_for_peers(["bob"], 15.0), "the TLS peers did not meet"
        bob.serve(
            lambda r: r.reply(
                "bob", 1, kind=MessageKind.VALIDATION_ANSWER, data={"answer": "no", "subgoal": SUB}
            )
        )
        req = Message(
            kind=MessageKind.VALIDATION_REQUEST,
            sender="alice",
            step=1,
            to="bob",
            data={"subgoal": SUB},
        )
        answer = alice.request("bob", req, 3.0)
        assert answer is not None and answer.data["answer"] == "no"
        # A session with the team's CA gets through; one whose certificate another CA signed,
        # or plain TCP to the TLS port, never does.
        carol = pki.robot("carol")
        rogue = Pki(tmp_path / "rogue", "rogue-ca").robot("eve")
        assert heard_by(alice, carol, ea, f"{alice.base}/probe/carol")
        assert not heard_by(alice, rogue, ea, f"{alice.base}/probe/eve")
        bare = f"tcp/{ea.split('/', 1)[1]}"
        assert not heard_by(alice, {}, bare, f"{alice.base}/probe/tcp")
        assert alice.fault_summary() == {} and bob.fault_summary() == {}
    finally:
        bob.close()
        alice.close()


def test_access_control_admits_only_the_team_certificates(tmp_path):
    pki = Pki(tmp_path / "pki")
    endpoint = tls_endpoint()
    options = {**pki.robot("alice"), **access_control(["alice", "bob"])}
    alice = ZenohBus("alice", team="acl", listen=[endpoint], options=options)
    try:
        # Both certificates are the team CA's; only bob's name is in the access list.
        assert heard_by(alice, pki.robot("bob"), endpoint, f"{alice.base}/bob/probe")
        start = time.monotonic()
        assert not heard_by(alice, pki.robot("mallory"), endpoint, f"{alice.base}/mallory/probe")
        assert time.monotonic() - start < 10
    finally:
        alice.close()
