"""A signed fleet against an intruder in another process on the loopback bus.

The intruder (``python -m bt_raider.fleet.intruder``) speaks for every robot it knows of, in
every form: unsigned, forged, signed with its own key (unknown to the keyring), signed with a
team member's stolen key in another robot's name (impostor), real frames replayed, malformed.
Printed:

* **signing cost**: microseconds to seal and to open one validation-request-sized frame, and the
  validation round trip over Zenoh, signed vs unsigned;
* **validator and guards**: ``--guards`` SharedGoalGuards (plain py_trees children) validate a
  sub-goal with bob present (answering "no") and with bob gone, while the intruder answers
  "yes" for bob: intruder answers accepted, guards that skipped their child, and the refusals
  counted by kind -- signed, and unsigned for contrast;
* **fleet memory**: alice records ``--records`` successes and ends her session while the
  intruder publishes forged records and end notes ("alice published nothing"): bob's copies of
  alice's records, the records dropped, the intruder's records accepted (needs ``[memory]``);
* **the cooperative demo**: ``--seeds`` episodes with 2 robot processes, with and without the
  intruder, signed and unsigned: successes, runs whose figures differ from the in-process
  episode's (the attack changed something), and the wall time signed vs unsigned.

Run: ``python3 benchmarks/reliability_fleet.py`` (``--help`` for sizes; ``--quick`` for a short
run). Everything stays on 127.0.0.1, multicast scouting off.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import py_trees
from py_trees.common import Status

from bt_raider.cooperation.messaging import Message, MessageKind
from bt_raider.cooperation.observations import Goal, ObjectInfo, Relevance, Sighting
from bt_raider.cooperation.reveca_memory import RevecaMemory
from bt_raider.cooperation.validator import Validator
from bt_raider.errors import installed
from bt_raider.examples.cooperative_table.episode import Episode
from bt_raider.examples.cooperative_table.processes import FIGURES, run_processes
from bt_raider.fleet.intruder import MARK
from bt_raider.fleet.signing import FleetSecurity, generate_keys
from bt_raider.fleet.zenoh_bus import ZenohBus
from bt_raider.fleet.zenoh_config import loopback_endpoint
from bt_raider.runtime.shared_goal import SharedGoalGuard
from bt_raider.simulation.multirobot import default_house

GOAL = Goal(("cupcake", "apple"), "coffeetable", "on", "1", "livingroom", (2.0, 2.0))
SUB = {"action": "put", "target": "apple", "object_id": "7"}


def _request(n: int) -> Message:
    return Message(
        kind=MessageKind.VALIDATION_REQUEST,
        sender="alice",
        step=n,
        to="bob",
        room="kitchen",
        text="Bob, have you already taken the apple (18) in the livingroom?",
        data={"subgoal": {"action": "put", "target": "apple", "object_id": "18"}, "since": 3},
    )


def _no(req: Message) -> Message:
    return req.reply(
        "bob",
        req.step,
        kind=MessageKind.VALIDATION_ANSWER,
        text="No, I have not taken the apple.",
        data={"answer": "no", "subgoal": dict(req.data["subgoal"]), "held": []},
    )


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Team:
    """Buses of one team on loopback, signed with ``keys`` (or not), and an intruder process."""

    def __init__(self, keys: Path, signed: bool, team: str) -> None:
        self.keys, self.signed, self.team = keys, signed, team
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
            assert b.wait_for_peers(list(self.buses), 10.0), "peers did not meet"
        return bus

    def attack(self, base: str, endpoints: Sequence[str], targets: str = "apple") -> None:
        self.intruder = start_intruder(base, endpoints, self.keys / "carol.key", 600.0, targets)

    def stop(self) -> dict[str, Any]:
        report = stop_intruder(self.intruder) if self.intruder is not None else {}
        self.intruder = None
        return report

    def close(self) -> None:
        self.stop()
        for b in self.buses.values():
            b.close()


def start_intruder(
    base: str,
    endpoints: Sequence[str],
    stolen: Path,
    seconds: float,
    targets: str = "",
    location: str = "",
    relation: str = "on",
) -> subprocess.Popen[str]:
    """The intruder process, speaking for alice and bob (and whoever it hears of)."""
    cmd = [
        sys.executable, "-m", "bt_raider.fleet.intruder", "--base", base, "--targets", targets,
        "--location", location, "--relation", relation,
        "--robots", "alice,bob", "--stolen-key", str(stolen), "--seconds", str(seconds),
        "--period", "0.2", *[a for e in endpoints for a in ("--connect", e)],
    ]  # fmt: skip
    env = {**os.environ, "RUST_LOG": "error"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    assert json.loads(proc.stdout.readline())["event"] == "ready"
    return proc


def stop_intruder(proc: subprocess.Popen[str]) -> dict[str, Any]:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def wait_until(condition: Any, limit: float, what: str) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


# --------------------------------------------------------------------------- signing cost


def signing_cost(keys: Path, frames: int, requests: int) -> dict[str, float]:
    alice, bob = FleetSecurity.load(keys, "alice"), FleetSecurity.load(keys, "bob")
    frame = _request(1).to_json()
    wires = []
    t = time.perf_counter()
    for _ in range(frames):
        wires.append(bob.seal(frame, scope="bench/t", channel="inbox", recipient="alice"))
    seal = (time.perf_counter() - t) / frames
    t = time.perf_counter()
    for w in wires:
        alice.open(w, scope="bench/t", channel="inbox", recipient="alice", sender="bob")
    opened = (time.perf_counter() - t) / frames
    out = {"seal_us": seal * 1e6, "open_us": opened * 1e6, "frame_chars": len(frame)}
    out["envelope_chars"] = len(wires[0]) - len(frame)
    # Both teams at once, their requests alternating: a loaded machine slows both alike.
    teams = {s: Team(keys, s, f"cost{int(s)}x{os.getpid()}") for s in (False, True)}
    try:
        pairs = {s: (t.bus("alice"), t.bus("bob")) for s, t in teams.items()}
        rtts: dict[bool, list[float]] = {False: [], True: []}
        for _, b in pairs.values():
            b.serve(_no)
        for i in range(20 + requests):
            for s, (a, _) in pairs.items():
                t = time.perf_counter()
                reply = a.request("bob", _request(i), 2.0)
                if i >= 20:  # after a warm-up
                    rtts[s].append(time.perf_counter() - t)
                assert reply is not None and reply.data["answer"] == "no"
        for s, values in rtts.items():
            out[f"rtt_p50_ms_{'signed' if s else 'unsigned'}"] = pct(values, 0.5) * 1e3
            out[f"rtt_p95_ms_{'signed' if s else 'unsigned'}"] = pct(values, 0.95) * 1e3
    finally:
        for t in teams.values():
            t.close()
    return out


# --------------------------------------------------------------------------- guards


def _guard(bus: ZenohBus, i: int) -> tuple[SharedGoalGuard, py_trees.behaviour.Behaviour]:
    alice = RevecaMemory("alice", GOAL, default_house(), ("alice", "bob"))
    alice.step, alice.room, alice.position = 20, "livingroom", (4.0, 3.0)
    alice.observations.put(
        ObjectInfo(
            "7", "apple", "kitchen", (12.0, 1.0), 2, actions=("grab",), relevance=Relevance.STRONG
        )
    )
    alice.collaborators["bob"].note(Sighting(5, "kitchen", (11.0, 3.0), False))
    validator = Validator(alice, bus, mode="always", timeout=1.0)
    child = py_trees.behaviours.StatusQueue(
        name=f"fetch apple {i}", queue=[Status.RUNNING], eventually=Status.SUCCESS
    )
    guard = SharedGoalGuard(child, GOAL.subgoal("apple", "7"), validator, namespace=f"/g{i}")
    return guard, child


def guards_under_attack(keys: Path, signed: bool, bob_present: bool, n: int) -> dict[str, Any]:
    team = Team(keys, signed, f"g{int(signed)}{int(bob_present)}x{os.getpid()}")
    try:
        alice = team.bus("alice")
        if bob_present:
            team.bus("bob").serve(_no)
        heard: list[Message] = []
        alice.subscribe(heard.append)
        team.attack(alice.base, team.endpoints)
        wait_until(lambda: alice.fault_count > 0 or heard, 30.0, "the intruder to reach alice")
        skipped = ran = yes = 0
        for i in range(n):
            guard, child = _guard(alice, i)
            deadline = time.monotonic() + 30
            while guard.status in (Status.INVALID, Status.RUNNING):
                if time.monotonic() > deadline:
                    raise SystemExit(f"guard {i} never ended: {guard.feedback_message}")
                guard.tick_once()
                time.sleep(0.01)
            child_ran = child.status is not Status.INVALID
            ran += child_ran
            skipped += guard.status is Status.SUCCESS and not child_ran
            result = guard.result
            # bob never took the apple: a validation that says he did took the intruder's "yes".
            yes += result is not None and result.achieved_by is not None
        sent = team.stop()
        return {
            "signed": signed,
            "bob": bob_present,
            "guards": n,
            "children_run": ran,
            "skipped": skipped,
            "forged_yes_accepted": yes,
            "intruder_heard": sum(MARK in m.text for m in heard),
            "sent": sent.get("total", 0),
            "refused": alice.fault_summary(),
        }
    finally:
        team.close()
        py_trees.blackboard.Blackboard.clear()


# --------------------------------------------------------------------------- fleet memory


def memory_under_attack(keys: Path, records: int, folder: Path) -> dict[str, Any]:
    from bt_raider.fleet.fleet_memory import FleetMemory
    from bt_raider.memory import TransformersEmbedder, VectorMemory

    embedder = TransformersEmbedder()
    embedder.setup()
    team = Team(keys, True, f"mem{os.getpid()}")
    stores = {n: VectorMemory(folder / f"{n}.db", embedder=embedder) for n in ("alice", "bob")}
    for m in stores.values():
        m.open()
    try:
        a, b = team.bus("alice"), team.bus("bob")
        alice, bob = FleetMemory(stores["alice"], a), FleetMemory(stores["bob"], b)
        team.attack(a.base, team.endpoints)
        wait_until(lambda: b.fault_count > 0, 30.0, "the intruder to reach bob")
        ids = [
            alice.record_success(f"put cup {i} on shelf {i}", f"On(cup{i}, shelf{i})")
            for i in range(records)
        ]
        ended: list[bool] = []
        t = threading.Thread(target=lambda: ended.append(alice.finish(["bob"], 120)))
        t.start()
        synced = bob.finish(["alice"], 120)
        t.join(120)
        sent = team.stop()
        held = sum(1 for i in ids if _outcome(stores["bob"], i) == "success")
        alice.close(10)
        bob.close(10)
        return {
            "records": records,
            "synced": synced,
            "held_by_bob": held,
            "dropped": records - held + bob.counts["dropped"],
            "intruder_records": len(stores["bob"]) - held,
            "sent": sent.get("total", 0),
            "refused": b.fault_summary(),
        }
    finally:
        team.close()
        for m in stores.values():
            m.close()


def _outcome(store: Any, rid: str) -> str | None:
    try:
        return str(store.get(rid).outcome)
    except Exception:
        return None


# --------------------------------------------------------------------------- the demo


SETTINGS = ((True, False), (True, True), (False, False), (False, True))  # (signed, attacked)


def demo_runs(keys: Path, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """Each seed in every setting in turn (a loaded machine slows every setting alike)."""
    rows = {
        k: {"signed": k[0], "attacked": k[1], "runs": 0, "success": 0, "differ": 0, "sent": 0}
        for k in SETTINGS
    }
    walls: dict[tuple[bool, bool], list[float]] = {k: [] for k in SETTINGS}
    refused: dict[tuple[bool, bool], Counter[str]] = {k: Counter() for k in SETTINGS}
    for seed in seeds:
        episode = Episode(seed, robots=2)
        # The original attack read the goal from ps: "I did: put X on the table" for each X.
        g = episode.sim.goal
        goal = (",".join(g.objects), g.location, g.relation)
        local = episode.run()
        for signed, attacked in SETTINGS:
            row = rows[signed, attacked]
            started: list[subprocess.Popen[str]] = []

            def on_started(
                base: str,
                endpoints: list[str],
                started: list[Any] = started,
                attacked: bool = attacked,
                goal: tuple[str, str, str] = goal,
            ) -> None:
                if attacked:  # while the robots start: it connects to each once it listens
                    started.append(
                        start_intruder(base, endpoints, keys / "carol.key", 600.0, *goal)
                    )

            try:
                fig = run_processes(
                    2, seed, timeout=180, signed=signed, keys=keys if signed else None,
                    on_started=on_started,
                )  # fmt: skip
            finally:
                report = stop_intruder(started[0]) if started else {}
            row["runs"] += 1
            row["sent"] += report.get("total", 0)
            row["success"] += bool(fig["success"])
            row["differ"] += not all(getattr(local, k) == fig[k] for k in FIGURES)
            walls[signed, attacked].append(fig["wall_s"])
            for faults in fig["faults"].values():
                refused[signed, attacked].update(faults)
    for k, row in rows.items():
        row["wall_s"] = statistics.mean(walls[k])
        row["refused"] = dict(sorted(refused[k].items()))
    return list(rows.values())


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=5000, help="frames sealed and opened")
    p.add_argument("--requests", type=int, default=500, help="round trips, signed and unsigned")
    p.add_argument("--guards", type=int, default=20, help="guards per setting")
    p.add_argument("--records", type=int, default=20, help="alice's fleet-memory records")
    p.add_argument("--seeds", type=int, default=3, help="demo episodes per setting")
    p.add_argument("--quick", action="store_true", help="a short run")
    p.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = p.parse_args(argv)
    if args.quick:
        args.frames, args.requests, args.guards, args.records, args.seeds = 500, 50, 4, 5, 1
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bt-raider-fleet-bench-") as tmp:
        keys = Path(tmp) / "keys"
        generate_keys(keys, ["alice", "bob", "carol"])  # carol's key is the one stolen

        cost = figures["cost"] = signing_cost(keys, args.frames, args.requests)
        print(f"signing cost ({args.frames} frames of {cost['frame_chars']} characters)")
        print(f"  seal {cost['seal_us']:.1f} us, open {cost['open_us']:.1f} us per frame; "
              f"envelope +{cost['envelope_chars']} characters")  # fmt: skip
        print(
            f"  validation round trip p50 {cost['rtt_p50_ms_unsigned']:.2f} ms unsigned, "
            f"{cost['rtt_p50_ms_signed']:.2f} ms signed (p95 {cost['rtt_p95_ms_unsigned']:.2f} / "
            f"{cost['rtt_p95_ms_signed']:.2f} ms)"
        )

        print(
            f"\nvalidator and guards, the intruder answering 'yes' for bob ({args.guards} guards each)"
        )
        print(
            f"{'bus':<10}{'bob':<9}{'children run':>13}{'skipped':>9}{'yes taken':>10}{'heard':>7}{'sent':>8}  refused"
        )
        rows = figures["guards"] = [
            guards_under_attack(keys, signed, bob, args.guards)
            for signed in (True, False)
            for bob in (True, False)
        ]
        for r in rows:
            print(
                f"{'signed' if r['signed'] else 'unsigned':<10}{'present' if r['bob'] else 'gone':<9}"
                f"{r['children_run']:>13}{r['skipped']:>9}{r['forged_yes_accepted']:>10}"
                f"{r['intruder_heard']:>7}{r['sent']:>8}  {_kinds(r['refused'])}"
            )

        if installed("hnswlib") and installed("torch"):
            mem = figures["memory"] = memory_under_attack(keys, args.records, Path(tmp))
            print("\nfleet memory, forged records and end notes from the intruder (signed)")
            print(
                f"  alice's records held by bob {mem['held_by_bob']}/{mem['records']}, dropped "
                f"{mem['dropped']}, intruder records accepted {mem['intruder_records']}, synced "
                f"{mem['synced']}; intruder sent {mem['sent']}; refused {_kinds(mem['refused'])}"
            )
        else:
            print("\nfleet memory: skipped (needs the [memory] extra)")

        seeds = list(range(args.seeds))
        print(f"\ncooperative demo, 2 robot processes, seeds {seeds}")
        print(
            f"{'bus':<10}{'intruder':<10}{'success':>8}{'differ':>8}{'wall s':>8}{'sent':>8}  refused"
        )
        demo = figures["demo"] = demo_runs(keys, seeds)
        for r in demo:
            print(
                f"{'signed' if r['signed'] else 'unsigned':<10}{'yes' if r['attacked'] else 'no':<10}"
                f"{r['success']:>5}/{r['runs']:<2}{r['differ']:>8}{r['wall_s']:>8.2f}{r['sent']:>8}  "
                f"{_kinds(r['refused'])}"
            )
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


def _kinds(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


if __name__ == "__main__":
    sys.exit(main())
