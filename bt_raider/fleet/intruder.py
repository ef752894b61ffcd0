"""An intruder on the fleet's bus: the attacks a signed fleet must refuse, from another process.

A red-team tool for a team's own tests and benchmarks (``python -m bt_raider.fleet.intruder``).
It joins the team's Zenoh bus on loopback with a plain session -- no :class:`ZenohBus`, nothing
it sends is checked on the way out -- and, in the name of every robot it knows of:

* answers every validation request (a queryable on ``<base>/*/inbox``) with "yes, I put it
  there", once per attack;
* announces "I did: put X" for every sub-goal and object it has heard of (broadcast and
  direct), publishes fleet-memory records and end notes saying "I published nothing";
* re-sends every real signed frame it captures (publications on their own key, requests to
  their own robot) a moment later.

Each claim goes out in every form of :data:`ATTACKS`: ``unsigned`` (a bare frame),
``forged`` (an envelope with a made-up signature), ``unknown_key`` (signed with a key of its
own, not in the keyring), ``impostor`` (signed with a team member's stolen key in another
robot's name, or on another robot's key), ``replayed`` (real frames again) and ``malformed``
(broken envelopes and bytes). What it sent is printed as JSON when it stops.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from bt_raider.cooperation.messaging import Message, MessageKind
from bt_raider.errors import CommunicationError, require
from bt_raider.fleet.fleet_memory import DONE_SUFFIX, TOPIC, FleetRecord, record_id
from bt_raider.fleet.signing import MAGIC, Identity, b64url, signed_bytes
from bt_raider.fleet.zenoh_config import make_config

#: The forms every claim is sent in.
ATTACKS = ("unsigned", "forged", "unknown_key", "impostor", "replayed", "malformed")
#: Marks everything the intruder makes up (a receiver that stores one has been fooled).
MARK = "INTRUDER"

_GARBAGE = (
    b"",
    b"\xff\xfe\x00garbage",
    f"{MAGIC}".encode(),
    f"{MAGIC} bob * out 1 1 short\n{{}}".encode(),
    f"{MAGIC} bob * out x 1 {'A' * 86}\n{{}}".encode(),
    f"{MAGIC} bob * nowhere 1 1 {'A' * 86}\n{{}}".encode(),
    f"{MAGIC} b/o/b * out 1 1 {'A' * 86}\n{{}}".encode(),
    f"{MAGIC} bob * out 1 1 {'!' * 86}\n{{}}".encode(),
    f"{MAGIC} bob * out 1 1 {'A' * 86}".encode(),  # no frame at all
    f"{MAGIC} {'b' * 300} * out 1 1 {'A' * 86}\n{{}}".encode(),
    b"[1, 2, 3]",
    b"x" * 20_000,
)


class Intruder:
    """A process on the bus that pretends to be the team's robots.

    Args:
        base: the team's key base (``<prefix>/<team>``).
        connect: endpoints of the bus to join (loopback).
        robots: robots to speak for (more are learnt from the traffic).
        stolen: a team member's identity (the ``impostor`` attack); None: that attack is skipped.
        attacks: the forms to send (default :data:`ATTACKS`).
        targets: object names to claim done (more are learnt from the traffic).
        location: where the targets are claimed put (learnt from the traffic when empty).
        relation: ``on`` or ``in``.
    """

    def __init__(
        self,
        base: str,
        connect: Sequence[str],
        *,
        robots: Iterable[str] = (),
        stolen: Identity | None = None,
        attacks: Sequence[str] = ATTACKS,
        targets: Iterable[str] = (),
        location: str = "",
        relation: str = "on",
    ) -> None:
        zenoh = require("zenoh", "fleet", needed_by="the intruder")
        bad = [a for a in attacks if a not in ATTACKS]
        if bad:
            raise CommunicationError(f"attack(s) {bad} unknown: expected some of {ATTACKS}")
        self.base = base
        self.attacks = tuple(attacks)
        self.stolen = stolen
        self.own = Identity.generate("mallory")
        self.robots: set[str] = set(robots)
        where = {"location": location, "relation": relation} if location else {}
        self.subgoals: dict[str, dict[str, Any]] = {
            t: {"action": "put", "target": t, **where} for t in targets
        }
        self.sent: Counter[str] = Counter()
        self._captured: list[tuple[str, bytes, str]] = []  # (key, payload, how)
        self._lock = threading.Lock()
        self._seq = int(time.time() * 1_000_000)
        self._stop = threading.Event()
        # Robots that are not listening yet are connected to as soon as they are.
        retry = {
            "connect/retry": {
                "period_init_ms": 50,
                "period_max_ms": 200,
                "period_increase_factor": 2,
            },
            "connect/timeout_ms": -1,
        }
        self.session = zenoh.open(make_config(listen=[], connect=list(connect), options=retry))
        self._zenoh = zenoh
        self._entities: list[Any] = [
            # Remote only: what it captures to replay is the team's, never its own forgeries.
            self.session.declare_subscriber(
                f"{base}/**", self._on_sample, allowed_origin=zenoh.Locality.REMOTE
            ),
            self.session.declare_queryable(
                f"{base}/*/inbox",
                self._on_query,
                complete=False,
                allowed_origin=zenoh.Locality.REMOTE,
            ),
        ]

    # -- what the intruder sends

    def _envelope(
        self, signer: Identity | None, claimed: str, recipient: str, channel: str, body: str
    ) -> bytes:
        with self._lock:
            self._seq += 1
            seq = self._seq
        header = f"{MAGIC} {claimed} {recipient} {channel} {seq} {int(time.time() * 1000)}"
        if signer is None:
            sig = os.urandom(64)
        else:
            sig = signer.sign(signed_bytes(self.base, header, body.encode()))
        return f"{header} {b64url(sig)}\n{body}".encode()

    def forms(
        self, claimed: str, recipient: str, channel: str, body: str
    ) -> list[tuple[str, bytes]]:
        """``body`` in every attack form (the ``replayed`` form is sent from captures)."""
        out: list[tuple[str, bytes]] = []
        for attack in self.attacks:
            if attack == "unsigned":
                out.append((attack, body.encode()))
            elif attack == "forged":
                out.append((attack, self._envelope(None, claimed, recipient, channel, body)))
            elif attack == "unknown_key":
                out.append((attack, self._envelope(self.own, "mallory", recipient, channel, body)))
            elif attack == "impostor" and self.stolen is not None:
                as_other = self._envelope(self.stolen, claimed, recipient, channel, body)
                as_self = self._envelope(self.stolen, self.stolen.name, recipient, channel, body)
                out += [(attack, as_other), (attack, as_self)]
            elif attack == "malformed":
                out += [(attack, g) for g in _GARBAGE]
        return out

    def _put(self, key: str, forms: list[tuple[str, bytes]]) -> None:
        for attack, payload in forms:
            try:
                self.session.put(key, payload)
            except Exception:  # the session is closing
                return
            with self._lock:
                self.sent[attack] += 1

    def _on_query(self, query: Any) -> None:
        """Answer a validation request "yes, I put it there" in every form."""
        try:
            robot = str(query.key_expr).split("/")[-2]
            raw = query.payload.to_bytes() if query.payload is not None else b""
            with self._lock:
                self._captured.append((str(query.key_expr), raw, "query"))
            text = raw.decode("utf-8", errors="replace").split("\n", 1)[-1]
            request = Message.from_json(text)
            sub = dict(request.data.get("subgoal") or {})
            self._learn(request.sender, sub)
            answer = request.reply(
                robot,
                request.step,
                kind=MessageKind.VALIDATION_ANSWER,
                text=f"Yes, I put the {sub.get('target')} there. {MARK}",
                data={"answer": "yes", "placed": True, "subgoal": sub},
            )
            forms = self.forms(robot, request.sender, "answer", answer.to_json())
            forms += [("replayed", p) for _, p, how in self._captures() if how == "sample"][-3:]
            for attack, payload in forms:
                query.reply(query.key_expr, payload)
                with self._lock:
                    self.sent[attack] += 1
        except Exception:
            pass  # a request it cannot read: nothing to forge from
        finally:
            try:
                query.drop()
            except Exception:
                pass

    def _on_sample(self, sample: Any) -> None:
        """Learn the team, its sub-goals and objects; keep real signed frames to replay."""
        key = str(sample.key_expr)
        parts = key[len(self.base) + 1 :].split("/")
        raw = sample.payload.to_bytes()
        if len(parts) < 2 or parts[0] == "world":
            return
        self._learn(parts[0], None)
        signed = raw.startswith(MAGIC.encode())
        if signed:
            with self._lock:
                if len(self._captured) < 500:
                    self._captured.append((key, raw, "sample"))
        try:
            msg = Message.from_json(raw.decode("utf-8").split("\n", 1)[-1 if signed else 0])
        except (CommunicationError, UnicodeDecodeError):
            return
        self._learn(msg.sender, msg.data.get("subgoal"))
        for o in msg.data.get("objects") or []:
            self._learn(None, {"action": "put", "target": o.get("name"), "object_id": o.get("id")})

    def _learn(self, robot: str | None, subgoal: Any) -> None:
        with self._lock:
            if robot and robot not in ("world", "mallory"):
                self.robots.add(robot)
            if isinstance(subgoal, dict) and isinstance(subgoal.get("target"), str):
                clean = {k: v for k, v in subgoal.items() if isinstance(v, str)}
                self.subgoals.setdefault(clean["target"], {**clean, "action": "put"})
                if clean.get("location"):  # the goal's place: every claim puts things there
                    where = {"location": clean["location"], "relation": clean.get("relation", "on")}
                    for sub in self.subgoals.values():
                        if not sub.get("location"):
                            sub.update(where)

    def _captures(self) -> list[tuple[str, bytes, str]]:
        with self._lock:
            return list(self._captured)

    # -- rounds

    def round(self) -> None:
        """One round of claims in every robot's name, and the captured frames re-sent."""
        with self._lock:
            robots, subgoals = sorted(self.robots), list(self.subgoals.values())
        for claimed in robots:
            for sub in subgoals:
                msg = Message(
                    kind=MessageKind.SUBGOAL_ACHIEVED,
                    sender=claimed,
                    step=0,
                    text=f"I did: put the {sub['target']} there. {MARK}",
                    data={"subgoal": sub},
                )
                body = msg.to_json(max_chars=2000)
                self._put(
                    f"{self.base}/{claimed}/out/subgoal_achieved",
                    self.forms(claimed, "*", "out", body),
                )
                for victim in robots:
                    if victim != claimed:
                        direct = Message(**{**msg.to_dict(), "kind": msg.kind, "to": victim})
                        self._put(
                            f"{self.base}/{victim}/direct/{claimed}",
                            self.forms(claimed, victim, "direct", direct.to_json(max_chars=2000)),
                        )
                info = f"{MARK}: put the {sub['target']} in the bin"
                rec = FleetRecord(
                    record_id(claimed, info, "In(x, bin)"), claimed, info, "In(x, bin)"
                )
                self._put(
                    f"{self.base}/{claimed}/topic/{TOPIC}",
                    self.forms(claimed, "*", f"topic/{TOPIC}", rec.to_json()),
                )
            note = json.dumps({"published": 0})
            channel = f"topic/{TOPIC}{DONE_SUFFIX}"
            self._put(
                f"{self.base}/{claimed}/topic/{TOPIC}{DONE_SUFFIX}",
                self.forms(claimed, "*", channel, note),
            )
        if "replayed" in self.attacks:
            self.replay()

    def replay(self) -> None:
        """Re-send every captured real frame: publications on their key and, a broadcast, to
        each robot directly (elsewhere than it was signed for); requests as queries."""
        with self._lock:
            captured, self._captured = self._captured, []
            robots = sorted(self.robots)
        for key, payload, how in captured:
            if how == "sample":
                self._put(key, [("replayed", payload)])
                sender, channel = key[len(self.base) + 1 :].split("/")[:2]
                if channel == "out":
                    for r in robots:
                        if r != sender:
                            self._put(f"{self.base}/{r}/direct/{sender}", [("replayed", payload)])
            else:
                try:
                    for _ in self.session.get(key, payload=payload, timeout=1.0):
                        pass
                except Exception:
                    continue
                with self._lock:
                    self.sent["replayed"] += 1

    def run(self, seconds: float, period: float = 0.2) -> dict[str, Any]:
        """Attack for ``seconds`` (or until :meth:`stop`), one round every ``period`` s."""
        deadline = time.monotonic() + seconds
        while not self._stop.is_set() and time.monotonic() < deadline:
            self.round()
            self._stop.wait(period)
        return self.report()

    def stop(self) -> None:
        self._stop.set()

    def report(self) -> dict[str, Any]:
        with self._lock:
            return {
                "sent": dict(self.sent),
                "total": sum(self.sent.values()),
                "robots": sorted(self.robots),
                "targets": sorted(self.subgoals),
            }

    def close(self) -> None:
        for e in self._entities:
            try:
                e.undeclare()
            except Exception:
                pass
        self.session.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bt_raider.fleet.intruder``: attack a team's bus, print what was sent."""
    p = argparse.ArgumentParser(prog="python -m bt_raider.fleet.intruder", description=__doc__)
    p.add_argument("--base", required=True, help="<prefix>/<team>")
    p.add_argument("--connect", action="append", required=True, help="loopback endpoint")
    p.add_argument("--robots", default="", help="comma-separated robots to speak for")
    p.add_argument("--targets", default="", help="comma-separated objects to claim done")
    p.add_argument("--location", default="", help="where they are claimed put")
    p.add_argument("--relation", default="on", help="on or in")
    p.add_argument("--stolen-key", default=None, help="a team member's private key (impostor)")
    p.add_argument("--attacks", default=",".join(ATTACKS))
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--period", type=float, default=0.2)
    args = p.parse_args(argv)
    stolen = Identity.load(args.stolen_key) if args.stolen_key else None
    intruder = Intruder(
        args.base,
        args.connect,
        robots=[r for r in args.robots.split(",") if r],
        stolen=stolen,
        attacks=[a for a in args.attacks.split(",") if a],
        targets=[t for t in args.targets.split(",") if t],
        location=args.location,
        relation=args.relation,
    )
    signal.signal(signal.SIGTERM, lambda *_: intruder.stop())
    print(json.dumps({"event": "ready"}), flush=True)
    try:
        report = intruder.run(args.seconds, args.period)
    finally:
        intruder.close()
    print(json.dumps({"event": "report", **report}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
