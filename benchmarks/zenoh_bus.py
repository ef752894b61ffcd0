"""The message bus in-process vs over Zenoh on loopback: round trips, throughput, episodes.

Printed:

* **validation round trip** (p50 / p95 / max, ms): a REVECA validation request answered by a
  collaborator's server -- on the in-process bus, and between two Zenoh sessions connected
  over TCP on 127.0.0.1;
* **publications per second**: hello-sized broadcasts one robot publishes and another receives
  (counted at the receiver);
* **episode wall time** of the cooperative-table demo, in-process (:func:`run_episode`) vs one
  process per robot plus a world process (:func:`run_processes`: total, and the episode alone
  without process start-up), for 2 and 4 robots, with the figures of both runs checked equal.

Run: ``python3 benchmarks/zenoh_bus.py`` (``--help`` for sizes). Everything stays on
127.0.0.1 with multicast scouting off.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

from bt_raider.cooperation.messaging import InProcessHub, Message, MessageBus, MessageKind
from bt_raider.examples.cooperative_table.episode import run_episode
from bt_raider.examples.cooperative_table.processes import FIGURES, run_processes
from bt_raider.fleet.zenoh_bus import ZenohBus
from bt_raider.fleet.zenoh_config import loopback_endpoint


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


def _answer(req: Message) -> Message:
    return req.reply(
        "bob",
        req.step,
        kind=MessageKind.VALIDATION_ANSWER,
        room="bedroom",
        text="No, I have not taken the apple.",
        data={"answer": "no", "subgoal": dict(req.data["subgoal"]), "held": []},
    )


def _hello(n: int) -> Message:
    return Message(
        kind=MessageKind.HELLO,
        sender="alice",
        step=n,
        room="kitchen",
        text="Hi, I'm Alice in the kitchen. I see fridge (7) (closed), kitchencabinet (8) (closed).",
        data={
            "held": [],
            "objects": [{"id": "7", "name": "fridge"}, {"id": "8", "name": "kitchencabinet"}],
        },
    )


def round_trips(alice: MessageBus, bob: MessageBus, n: int) -> list[float]:
    bob.serve(_answer)
    for i in range(20):  # warm-up
        alice.request("bob", _request(i), 2.0)
    out = []
    for i in range(n):
        t = time.perf_counter()
        reply = alice.request("bob", _request(i), 2.0)
        out.append(time.perf_counter() - t)
        assert reply is not None and reply.data["answer"] == "no"
    return out


def throughput(alice: MessageBus, bob: MessageBus, n: int, wait: Callable[[int], bool]) -> float:
    bob.poll()
    frames = [_hello(i) for i in range(n)]
    t = time.perf_counter()
    for f in frames:
        alice.publish(f)
    assert wait(n), "publications were lost"
    elapsed = time.perf_counter() - t
    got = len(bob.poll())
    assert got == n, f"received {got} of {n}"
    return n / elapsed


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bus_figures(requests: int, publications: int) -> None:
    print(
        f"validation round trip ({requests} requests) and publications ({publications} hello frames)"
    )
    print(f"{'bus':<26}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'pubs/s':>11}")
    hub = InProcessHub(log=False)
    a, b = hub.connect("alice"), hub.connect("bob")
    rtts = round_trips(a, b, requests)
    rate = throughput(a, b, publications, lambda n: True)
    hub.close()
    print(
        f"{'in-process (one process)':<26}{pct(rtts, 0.5) * 1e3:>9.3f}{pct(rtts, 0.95) * 1e3:>9.3f}"
        f"{max(rtts) * 1e3:>9.3f}{rate:>11.0f}"
    )
    ea, eb = loopback_endpoint(), loopback_endpoint()
    a = ZenohBus("alice", team="bench", listen=[ea])
    b = ZenohBus("bob", team="bench", listen=[eb], connect=[ea])
    try:
        assert a.wait_for_peers(["bob"], 10) and b.wait_for_peers(["alice"], 10)
        rtts = round_trips(a, b, requests)
        rate = throughput(a, b, publications, lambda n: b.wait_broadcasts({"alice": n}, 30.0))
        assert a.fault_count == 0 and b.fault_count == 0, (a.fault_summary(), b.fault_summary())
    finally:
        a.close()
        b.close()
    print(
        f"{'Zenoh, tcp 127.0.0.1':<26}{pct(rtts, 0.5) * 1e3:>9.3f}{pct(rtts, 0.95) * 1e3:>9.3f}"
        f"{max(rtts) * 1e3:>9.3f}{rate:>11.0f}"
    )


def episode_figures(seeds: Sequence[int], robots: Sequence[int]) -> None:
    print()
    print(f"cooperative-table episode wall time, seeds {list(seeds)} (mean s per episode)")
    print(
        f"{'robots':>6}{'steps':>8}{'in-process':>12}{'Zenoh total':>13}{'Zenoh episode':>15}{'same figures':>14}"
    )
    for n in robots:
        local, total, episode, steps, same = [], [], [], [], 0
        for seed in seeds:
            t = time.perf_counter()
            r = run_episode(seed, robots=n)
            local.append(time.perf_counter() - t)
            f = run_processes(n, seed, timeout=120)
            total.append(f["wall_s"])
            episode.append(f["episode_s"])
            steps.append(r.steps)
            same += all(f[k] == getattr(r, k) for k in FIGURES) and f["faults_total"] == 0
        print(
            f"{n:>6}{statistics.mean(steps):>8.1f}{statistics.mean(local):>12.3f}"
            f"{statistics.mean(total):>13.3f}{statistics.mean(episode):>15.3f}"
            f"{f'{same}/{len(seeds)}':>14}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="round trips (default 1000)")
    parser.add_argument("--publications", type=int, default=5000, help="broadcasts (default 5000)")
    parser.add_argument("--seeds", type=int, default=5, help="episodes per size (default 5)")
    parser.add_argument("--robots", type=int, nargs="+", default=[2, 4], help="sizes (default 2 4)")
    args = parser.parse_args(argv)
    bus_figures(args.requests, args.publications)
    episode_figures(range(args.seeds), args.robots)


if __name__ == "__main__":
    main()
