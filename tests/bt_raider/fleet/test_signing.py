"""A signed fleet without the network: envelopes, every refusal, keys on disk, the command."""

from __future__ import annotations

import json
import os
import stat
import string

import pytest

pytest.importorskip("cryptography")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bt_raider.cli import main  # noqa: E402
from bt_raider.fleet.signing import (  # noqa: E402
    KEYRING_FILE,
    MAGIC,
    REFUSALS,
    FleetSecurity,
    Identity,
    KeyFileError,
    Keyring,
    Refused,
    b64url,
    generate_keys,
    signed_bytes,
)

SCOPE = "bt_raider/t"
FRAME = json.dumps({"kind": "hello", "sender": "bob", "step": 1, "text": "hi"})


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def keys(tmp_path):
    folder = tmp_path / "keys"
    generate_keys(folder, ["alice", "bob", "carol"])
    return folder


@pytest.fixture
def team(keys):
    clock = Clock()
    return {n: FleetSecurity.load(keys, n, clock=clock) for n in ("alice", "bob", "carol")}, clock


def refused(sec: FleetSecurity, wire: str, **kw) -> str:
    args = {"scope": SCOPE, "channel": "out", "recipient": "*", "sender": "bob", **kw}
    with pytest.raises(Refused) as err:
        sec.open(wire, **args)
    assert err.value.kind in REFUSALS
    return err.value.kind


def test_a_signed_frame_opens_once_for_its_channel_and_recipient(team):
    sec, _ = team
    wire = sec["bob"].seal(FRAME, scope=SCOPE, channel="out")
    assert wire.startswith(f"{MAGIC} bob * out ")
    assert sec["alice"].open(wire, scope=SCOPE, channel="out", recipient="*", sender="bob") == (
        "bob",
        FRAME,
    )
    # The same frame again is a replay, for this robot; another robot has not seen it yet.
    assert refused(sec["alice"], wire) == "replayed"
    assert sec["carol"].open(wire, scope=SCOPE, channel="out", recipient="*")[0] == "bob"
    direct = sec["bob"].seal(FRAME, scope=SCOPE, channel="direct", recipient="alice")
    assert sec["alice"].open(
        direct, scope=SCOPE, channel="direct", recipient="alice", sender="bob"
    ) == ("bob", FRAME)
    assert sec["alice"].counts["accepted"] == 2 and sec["alice"].counts["replayed"] == 1


def test_every_attack_class_is_refused_with_its_kind(team, tmp_path):
    sec, clock = team
    alice = sec["alice"]
    assert refused(alice, FRAME) == "unsigned"
    good = sec["bob"].seal(FRAME, scope=SCOPE, channel="out")
    head, body = good.split("\n", 1)
    assert refused(alice, head) == "malformed"  # no frame
    assert refused(alice, head[:-3] + "\n" + body) == "malformed"  # signature cut
    # A frame changed after signing, or a signature made up: forged.
    assert refused(alice, good.replace('"hi"', '"yes"')) == "forged"
    sig = head.rsplit(" ", 1)[1]
    assert refused(alice, good.replace(sig, "A" * 86)) == "forged"
    # Signed by a key the team does not know.
    me = Identity.generate("mallory")
    mallory = FleetSecurity(me, Keyring({"mallory": me.public_bytes}), clock=clock)
    assert refused(alice, mallory.seal(FRAME, scope=SCOPE, channel="out")) == "unknown_key"
    # Carol (in the keyring) signing in bob's name; or sending her own frame on bob's key.
    carol = sec["carol"]
    header = f"{MAGIC} bob * out 7 {int(clock.now * 1000)}"
    sig = carol.identity.sign(signed_bytes(SCOPE, header, FRAME.encode()))
    as_bob = f"{header} {b64url(sig)}\n{FRAME}"
    assert refused(alice, as_bob) == "wrong_robot"
    assert refused(alice, carol.seal(FRAME, scope=SCOPE, channel="out")) == "wrong_robot"
    # Signed for another channel, recipient or team.
    assert refused(alice, sec["bob"].seal(FRAME, scope=SCOPE, channel="answer")) == "misrouted"
    to_carol = sec["bob"].seal(FRAME, scope=SCOPE, channel="direct", recipient="carol")
    assert refused(alice, to_carol, channel="direct", recipient="alice") == "misrouted"
    other_team = sec["bob"].seal(FRAME, scope="bt_raider/other", channel="out")
    assert refused(alice, other_team) == "forged"
    # Too old or from the future.
    old = sec["bob"].seal(FRAME, scope=SCOPE, channel="out")
    clock.now += 31
    assert refused(alice, old) == "stale"
    future = sec["bob"].seal(FRAME, scope=SCOPE, channel="out")
    clock.now -= 62
    assert refused(alice, future) == "stale"
    # Another encoding of the same signature bits (base64's spare bits) is not accepted either.
    clock.now += 31
    fresh = sec["bob"].seal(FRAME, scope=SCOPE, channel="out")
    head = fresh.split("\n", 1)[0]
    # The last of 86 characters carries 2 bits of the signature and 4 spare ones.
    alphabet = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
    twin = head[:-1] + alphabet[alphabet.index(head[-1]) ^ 1]
    assert refused(alice, fresh.replace(head, twin)) == "malformed"
    assert set(alice.counts) >= set(REFUSALS) - {"replayed"}


def test_replays_are_refused_by_sequence_within_and_beyond_the_window(keys):
    clock = Clock()
    alice = FleetSecurity.load(keys, "alice", clock=clock, window=8)
    bob = FleetSecurity.load(keys, "bob", clock=clock)
    frames = [bob.seal(FRAME, scope=SCOPE, channel="out") for _ in range(20)]
    # Out of order within the window is fine (Zenoh orders per key, not across keys).
    for i in (3, 1, 2, 0):
        alice.open(frames[i], scope=SCOPE, channel="out", recipient="*")
    for wire in frames[4:]:
        alice.open(wire, scope=SCOPE, channel="out", recipient="*")
    for wire in frames:
        assert refused(alice, wire) == "replayed"
    # A robot that restarts numbers above its old frames: it is heard again.
    clock.now += 1
    again = FleetSecurity.load(keys, "bob", clock=clock)
    alice.open(
        again.seal(FRAME, scope=SCOPE, channel="out"), scope=SCOPE, channel="out", recipient="*"
    )


def test_keys_are_private_and_refused_in_one_line_when_too_open(keys):
    assert stat.S_IMODE(os.stat(keys).st_mode) == 0o700
    for name in ("alice", "bob", "carol"):
        assert stat.S_IMODE(os.stat(keys / f"{name}.key").st_mode) == 0o600
    ring = json.loads((keys / KEYRING_FILE).read_text())
    assert sorted(ring["keys"]) == ["alice", "bob", "carol"]
    assert "PRIVATE" not in (keys / KEYRING_FILE).read_text()
    os.chmod(keys / "alice.key", 0o640)
    with pytest.raises(KeyFileError, match=r"too open \(mode 0640.*chmod 600") as err:
        FleetSecurity.load(keys, "alice")
    assert "\n" not in str(err.value)
    os.chmod(keys / KEYRING_FILE, 0o666)
    with pytest.raises(KeyFileError, match="keyring is too open"):
        Keyring.load(keys / KEYRING_FILE)


def test_unreadable_missing_or_wrong_key_files_are_refused(keys, tmp_path):
    with pytest.raises(KeyFileError, match="cannot read private key"):
        FleetSecurity.load(keys, "dave")
    (keys / "erin.key").mkdir(mode=0o700)
    with pytest.raises(KeyFileError, match="not a file"):
        Identity.load(keys / "erin.key")
    bad = keys / "frank.key"
    fd = os.open(bad, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"not a key")
    os.close(fd)
    with pytest.raises(KeyFileError, match="not a PEM private key"):
        Identity.load(bad)
    if os.geteuid() != 0:  # root reads a file of mode 0000
        os.chmod(keys / "bob.key", 0)
        with pytest.raises(KeyFileError, match="cannot read private key"):
            FleetSecurity.load(keys, "bob")
    broken = tmp_path / "ring.json"
    broken.write_text('{"v": 1, "keys": {"alice": 3}}')
    with pytest.raises(KeyFileError, match="expected"):
        Keyring.load(broken)


def test_a_key_that_does_not_match_the_keyring_is_refused(keys, tmp_path):
    other = tmp_path / "other"
    generate_keys(other, ["alice"])
    with pytest.raises(KeyFileError, match="keyring mismatch"):
        FleetSecurity.load(other, "alice", keyring=keys / KEYRING_FILE)
    with pytest.raises(KeyFileError, match="no key for 'alice'"):
        FleetSecurity(Identity.load(other / "alice.key"), Keyring({}))
    with pytest.raises(KeyFileError, match="exists already"):
        generate_keys(keys, ["bob"])
    before = Keyring.load(keys / KEYRING_FILE).raw("bob")
    generate_keys(keys, ["bob"], force=True)
    assert Keyring.load(keys / KEYRING_FILE).raw("bob") != before
    assert Keyring.load(keys / KEYRING_FILE).names == ["alice", "bob", "carol"]


def test_the_keys_command(tmp_path, capsys):
    folder = tmp_path / "k"
    assert main(["fleet", "keys", "new", "alice", "bob", "--dir", str(folder)]) == 0
    assert "made" in capsys.readouterr().out
    assert main(["fleet", "keys", "check", "alice", "--dir", str(folder), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert sorted(shown["keys"]) == ["alice", "bob"] and shown["robots"] == ["alice"]
    os.chmod(folder / "bob.key", 0o644)
    assert main(["fleet", "keys", "check", "bob", "--dir", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "too open" in err and "bob.key" in err
    assert main(["fleet", "keys", "new", "alice", "--dir", str(folder)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["fleet", "keys", "new", "a/b", "--dir", str(folder)]) == 2
    assert "not usable" in capsys.readouterr().err


@pytest.fixture(scope="module")
def fuzz_keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzzkeys") / "k"
    generate_keys(folder, ["alice", "bob"])
    return {n: Identity.load(folder / f"{n}.key") for n in ("alice", "bob")}, Keyring.load(
        folder / KEYRING_FILE
    )


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fuzzed_envelopes_are_never_accepted_and_never_raise_anything_else(fuzz_keys, data):
    ids, ring = fuzz_keys
    # A fixed clock and fresh counters: the same envelope every example (Ed25519 is deterministic).
    sec = {n: FleetSecurity(ids[n], ring, clock=Clock()) for n in ids}
    wire = sec["bob"].seal(FRAME, scope=SCOPE, channel="out")
    how = data.draw(st.sampled_from(["flip", "cut", "insert", "field", "text"]))
    if how == "flip":
        i = data.draw(st.integers(0, len(wire) - 1))
        c = data.draw(st.characters(blacklist_characters=wire[i]))
        fuzzed = wire[:i] + c + wire[i + 1 :]
    elif how == "cut":
        i, j = sorted(data.draw(st.lists(st.integers(0, len(wire)), min_size=2, max_size=2)))
        fuzzed = wire[:i] + wire[j:] if j > i else wire[:i]
    elif how == "insert":
        i = data.draw(st.integers(0, len(wire)))
        fuzzed = wire[:i] + data.draw(st.text(min_size=1, max_size=20)) + wire[i:]
    elif how == "field":
        head, body = wire.split("\n", 1)
        fields = head.split(" ")
        k = data.draw(st.integers(0, len(fields) - 1))
        fields[k] = data.draw(st.text(max_size=100))
        fuzzed = " ".join(fields) + "\n" + body
    else:
        fuzzed = data.draw(st.text(max_size=600))
    if fuzzed == wire:
        return
    with pytest.raises(Refused) as err:
        sec["alice"].open(fuzzed, scope=SCOPE, channel="out", recipient="*", sender="bob")
    assert err.value.kind in REFUSALS
