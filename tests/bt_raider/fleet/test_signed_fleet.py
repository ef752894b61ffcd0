"""A signed fleet under attack from another process on the loopback bus (real Zenoh sessions).

The intruder (``python -m bt_raider.fleet.intruder``) speaks for every robot in every form:
unsigned, forged, signed with its own key, signed with a team member's stolen key in another's
name, replayed and malformed. Nothing it says is accepted, and a guard whose only "yes" is
forged runs its child.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import py_trees
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py_trees.common import Status

pytest.importorskip("zenoh")
pytest.importorskip("cryptography")

from bt_raider.cooperation.messaging import Message, MessageKind  # noqa: E402
from bt_raider.cooperation.observations import Goal, ObjectInfo, Relevance, Sighting  # noqa: E402
from bt_raider.cooperation.reveca_memory import RevecaMemory  # noqa: E402
from bt_raider.cooperation.validator import Validator  # noqa: E402
from bt_raider.fleet.intruder import MARK  # noqa: E402
from bt_raider.fleet.signing import FleetSecurity, generate_keys  # noqa: E402
from bt_raider.fleet.zenoh_bus import ZenohBus  # noqa: E402
from bt_raider.fleet.zenoh_config import loopback_endpoint  # noqa: E402
from bt_raider.runtime.shared_goal import SharedGoalGuard  # noqa: E402
from bt_raider.simulation.multirobot import default_house  # noqa: E402

pytestmark = pytest.mark.zenoh

GOAL = Goal(("cupcake", "apple"), "coffeetable", "on", "1", "livingroom", (2.0, 2.0))
APPLE = GOAL.subgoal("apple", "7")
SUB = {"action": "put", "target": "apple", "object_id": "7"}


@pytest.fixture(autouse=True)
def clean_blackboard():
    yield
    py_trees.blackboard.Blackboard.clear()


@pytest.fixture
def keys(tmp_path):
    folder = tmp_path / "keys"
    generate_keys(folder, ["alice", "bob", "carol"])
    return folder


class Fleet:
    """Buses on loopback (signed with ``keys``, or not) and an intruder process among them."""

    def __init__(self, tmp_path, keys, signed: bool = True) -> None:
        self.keys, self.signed = keys, signed
        self.team = f"t{tmp_path.name[-12:].replace('_', '')}"
        self.buses: dict[str, ZenohBus] = {}
        self.endpoints: list[str] = []
        self.intruder: subprocess.Popen[str] | None = None

    def bus(self, name: str) -> ZenohBus:
        endpoint = loopback_endpoint()
        security = FleetSecurity.load(self.keys, name) if self.signed else None
        bus = ZenohBus(
            name, team=self.team, listen=[endpoint], connect=self.endpoints, security=security
        )
        self.endpoints.append(endpoint)
        self.buses[name] = bus
        for b in self.buses.values():
            assert b.wait_for_peers(list(self.buses), 10.0)
        return bus

    def attack(self, *, robots: str = "alice,bob", seconds: float = 60.0) -> None:
        self.intruder = subprocess.Popen(
            [
                sys.executable, "-m", "bt_raider.fleet.intruder",
                "--base", next(iter(self.buses.values())).base,
                "--robots", robots, "--targets", "apple",
                "--stolen-key", str(self.keys / "carol.key"),
                "--seconds", str(seconds), "--period", "0.1",
                *[a for e in self.endpoints for a in ("--connect", e)],
            ],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert self.intruder.stdout is not None
        assert json.loads(self.intruder.stdout.readline())["event"] == "ready"

    def stop(self) -> dict:
        assert self.intruder is not None
        self.intruder.send_signal(signal.SIGTERM)
        out, _ = self.intruder.communicate(timeout=30)
        return json.loads(out.strip().splitlines()[-1])

    def close(self) -> None:
        if self.intruder is not None and self.intruder.poll() is None:
            self.intruder.kill()
            self.intruder.wait(10)
        for b in self.buses.values():
            b.close()


@pytest.fixture
def fleet(tmp_path, keys):
    made: list[Fleet] = []

    def make(signed: bool = True) -> Fleet:
        made.append(Fleet(tmp_path, keys, signed))
        return made[-1]

    yield make
    for f in made:
        f.close()


def wait_until(condition, limit: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def request() -> Message:
    return Message(
        kind=MessageKind.VALIDATION_REQUEST,
        sender="alice",
        step=3,
        to="bob",
        text="bob, have you taken the apple?",
        data={"subgoal": SUB},
    )


def test_nothing_an_intruder_process_sends_is_accepted(fleet):
    f = fleet()
    alice, bob = f.bus("alice"), f.bus("bob")
    bob.serve(
        lambda req: req.reply(
            "bob",
            4,
            kind=MessageKind.VALIDATION_ANSWER,
            text="No.",
            data={"answer": "no", "subgoal": SUB},
        )
    )
    heard: dict[str, list[Message]] = {"alice": [], "bob": []}
    topics: list[tuple[str, str]] = []
    alice.subscribe(heard["alice"].append)
    bob.subscribe(heard["bob"].append)
    alice.subscribe_topic("memory", lambda s, t: topics.append((s, t)))
    alice.subscribe_topic("memory-done", lambda s, t: topics.append((s, t)))
    f.attack()
    wanted = {"unsigned", "forged", "unknown_key", "wrong_robot", "malformed", "replayed"}
    wanted.add("misrouted")  # bob's broadcast replayed to alice as a direct message
    answers: list[str | None] = []

    def attacked() -> bool:
        # Real traffic the intruder can capture and replay, and requests it answers "yes".
        bob.publish(Message(kind=MessageKind.HELLO, sender="bob", step=1, text="hi"))
        reply = alice.request("bob", request(), 2.0)
        answers.append(None if reply is None else reply.data["answer"])
        return wanted <= set(alice.fault_summary()) and "replayed" in bob.fault_summary()

    wait_until(attacked, 30.0, "every attack to reach alice")
    sent = f.stop()
    assert {"unsigned", "forged", "unknown_key", "impostor", "malformed", "replayed"} <= set(
        sent["sent"]
    )
    # Every answer alice read was bob's own; nothing the intruder said reached a handler.
    assert answers and set(answers) == {"no"}
    assert all(m.sender == "bob" and MARK not in m.text for m in heard["alice"])
    assert heard["bob"] == []  # alice published nothing; all of it was the intruder
    assert topics == []
    for bus in (alice, bob):
        faults = bus.fault_summary()
        assert "handler_error" not in faults and "mismatched" not in faults, faults


def guard_tree(alice_bus: ZenohBus):
    names = ("alice", "bob")
    alice = RevecaMemory("alice", GOAL, default_house(), names)
    alice.step, alice.room, alice.position = 20, "livingroom", (4.0, 3.0)
    alice.observations.put(
        ObjectInfo(
            "7", "apple", "kitchen", (12.0, 1.0), 2, actions=("grab",), relevance=Relevance.STRONG
        )
    )
    alice.collaborators["bob"].note(Sighting(5, "kitchen", (11.0, 3.0), False))
    validator = Validator(alice, alice_bus, mode="always", timeout=1.5)
    # The user's own behaviour: a plain py_trees one, ticked only if the guard commits.
    child = py_trees.behaviours.StatusQueue(
        name="fetch apple", queue=[Status.RUNNING], eventually=Status.SUCCESS
    )
    return SharedGoalGuard(child, APPLE, validator), child


def run_guard(guard, child) -> list[tuple[Status, Status]]:
    seen = []
    deadline = time.monotonic() + 20
    while guard.status in (Status.INVALID, Status.RUNNING):
        assert time.monotonic() < deadline, guard.feedback_message
        guard.tick_once()
        seen.append((guard.status, child.status))
        time.sleep(0.02)
    return seen


def test_the_guard_runs_its_child_when_the_only_yes_is_forged(fleet):
    f = fleet()
    alice = f.bus("alice")  # bob is gone: the intruder is the only one to answer for him
    f.attack()
    wait_until(lambda: "unsigned" in alice.fault_summary(), 20.0, "the intruder")
    guard, child = guard_tree(alice)
    seen = run_guard(guard, child)
    assert seen[0] == (Status.RUNNING, Status.INVALID)  # validating, the child untouched
    assert (Status.RUNNING, Status.RUNNING) in seen  # committed: the child ran
    assert seen[-1] == (Status.SUCCESS, Status.SUCCESS)
    assert guard.result is not None and guard.result.achieved_by is None
    assert guard.result.answers == {"bob": "unknown"}
    f.stop()
    faults = alice.fault_summary()
    assert {"unsigned", "forged", "unknown_key", "wrong_robot"} <= set(faults), faults


def test_without_signatures_the_same_intruder_makes_the_guard_skip(fleet):
    # The attack is real: an unsigned bus takes the intruder's "yes" and skips the child.
    f = fleet(signed=False)
    alice = f.bus("alice")
    f.attack()
    got: list[Message] = []
    alice.subscribe(got.append)
    wait_until(lambda: any(MARK in m.text for m in got), 20.0, "the intruder")
    guard, child = guard_tree(alice)
    seen = run_guard(guard, child)
    assert seen[-1] == (Status.SUCCESS, Status.INVALID)
    assert guard.result is not None and guard.result.achieved_by == "bob"
    f.stop()


def test_a_signed_bus_refuses_a_key_that_is_not_its_own(keys, tmp_path):
    with pytest.raises(Exception, match="cannot use 'bob'"):
        ZenohBus("alice", team="t", security=FleetSecurity.load(keys, "bob"))


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory):
    """A signed alice, bob's key (to sign what is then broken) and a raw session on the bus."""
    import zenoh

    from bt_raider.fleet.zenoh_config import make_config

    folder = tmp_path_factory.mktemp("fuzzbus") / "keys"
    generate_keys(folder, ["alice", "bob"])
    endpoint = loopback_endpoint()
    alice = ZenohBus(
        "alice", team="fuzz", listen=[endpoint], security=FleetSecurity.load(folder, "alice")
    )
    heard: list[object] = []
    alice.subscribe(heard.append)
    alice.subscribe_topic("memory", lambda s, t: heard.append((s, t)))
    raw = zenoh.open(make_config(listen=[], connect=[endpoint]))
    probe = f"{alice.base}/bob/out/hello"
    deadline = time.monotonic() + 20
    while alice.fault_count == 0:  # the raw session's route to alice is up
        assert time.monotonic() < deadline, "the raw session never reached alice"
        raw.put(probe, b"probe")
        time.sleep(0.05)
    yield alice, raw, FleetSecurity.load(folder, "bob"), heard
    raw.close()
    alice.close()


CHANNELS = {
    "out": ("{base}/bob/out/hello", "*"),
    "direct": ("{base}/alice/direct/bob", "alice"),
    "topic/memory": ("{base}/bob/topic/memory", "*"),
}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    channel=st.sampled_from(sorted(CHANNELS)),
    cuts=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 8), st.binary(max_size=12)),
        min_size=1,
        max_size=4,
    ),
)
def test_fuzzed_signed_envelopes_on_the_bus_are_dropped_and_counted(fuzz_target, channel, cuts):
    alice, raw, bob, heard = fuzz_target
    key, recipient = CHANNELS[channel]
    frame = Message(kind=MessageKind.HELLO, sender="bob", step=1, text="hi").to_json()
    if channel.startswith("topic"):
        frame = "a record"
    wire = bob.seal(frame, scope=alice.base, channel=channel, recipient=recipient).encode()
    fuzzed = wire
    for where, drop, insert in cuts:  # replace ``drop`` bytes at ``where`` with ``insert``
        i = int(where * len(fuzzed))
        fuzzed = fuzzed[:i] + insert + fuzzed[i + drop :]
    if fuzzed == wire:
        return
    before = alice.fault_count
    raw.put(key.format(base=alice.base), fuzzed)
    deadline = time.monotonic() + 10
    while alice.fault_count == before:  # every broken frame is counted, once
        assert time.monotonic() < deadline, f"{fuzzed!r} was neither counted nor refused"
        time.sleep(0.005)
    assert heard == []
    assert "handler_error" not in alice.fault_summary()


@pytest.mark.slow
@pytest.mark.torch
def test_forged_records_and_end_notes_never_cost_a_peer_its_real_records(fleet, tmp_path):
    pytest.importorskip("hnswlib")
    from bt_raider.fleet.fleet_memory import FleetMemory
    from bt_raider.memory import TransformersEmbedder, VectorMemory

    embedder = TransformersEmbedder()
    embedder.setup()
    f = fleet()
    a, b = f.bus("alice"), f.bus("bob")
    stores = {n: VectorMemory(tmp_path / f"{n}.db", embedder=embedder) for n in ("alice", "bob")}
    for m in stores.values():
        m.open()
    alice, bob = FleetMemory(stores["alice"], a), FleetMemory(stores["bob"], b)
    try:
        f.attack()  # forged records, and end notes saying "alice published nothing"
        wait_until(lambda: "unsigned" in b.fault_summary(), 20.0, "the intruder")
        ids = [
            alice.record_success(f"put cup {i} on shelf {i}", f"On(cup{i}, shelf{i})")
            for i in range(20)
        ]
        done = []
        t = threading.Thread(target=lambda: done.append(alice.finish(["bob"], 60)))
        t.start()
        assert bob.finish(["alice"], 60), bob.summary()
        t.join(60)
        sent = f.stop()
        assert sent["sent"]["unsigned"] > 0 and sent["sent"]["impostor"] > 0
        assert all(stores["bob"].get(i).outcome == "success" for i in ids)
        assert len(stores["bob"]) == 20  # alice's 20, nothing the intruder made up
        assert bob.summary()["accepted"] == 20 and bob.summary()["rejected"] == 0
        assert bob.close(10)
        assert bob.counts["dropped"] == 0
    finally:
        alice.close(10)
        bob.close(10)
        for m in stores.values():
            m.close()
