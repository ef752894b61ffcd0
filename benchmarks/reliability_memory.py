"""Reliability of the vector memory: damaged index files and SIGKILLed writers.

Two parts, each against a memory of ``--records`` records (default 200, 10 of them deleted)
embedded once with the bundled all-MiniLM-L6-v2; the child processes reuse those vectors, so
they start in a fraction of a second and load no model.

* **Index corruptions** (>= 100 trials): random byte flips of 1, 16 and 256 bytes at random
  offsets, 4 KB runs, truncations, a 0-byte index, appended garbage, a damaged sidecar, an
  index and sidecar swapped for those of another state of the same database, and a foreign
  index with a forged sidecar. Each damaged memory is opened in its own process (so a SIGSEGV
  is observed, not suffered) which prints how the index was opened and the 5 nearest
  neighbours of 20 queries. A trial is *rebuilt* (the index was refused and rebuilt), *crashed*
  (the process died on a signal), *silently different* (the index loaded and the neighbours
  differ from the undamaged memory's) or *wrong after rebuild*. As a control each damaged
  index file (sidecar intact) is also handed straight to hnswlib, as bt_raider did before the
  checksum: that is what the check prevents.
* **SIGKILL rounds** (>= 20): a writer process records one record at a time (saving the index
  every 5 records, so kills also land inside index saves) and prints each id once ``record``
  has returned; it is killed at a random moment. After every round a fresh process opens the
  memory and checks that every acknowledged record is there and is its own nearest neighbour.

Targets: 0 crashes, 0 silent differences, 0 acknowledged records lost.

Run:  python3 benchmarks/reliability_memory.py [--quick] [--seed 0]
(``benchmarks/reliability.py`` imports :func:`run`.)
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from memory_load import QUERIES, records  # noqa: E402

#: Loaded by every child: a VectorMemory whose embedder hands out the vectors computed once.
CHILD_PRELUDE = r"""
import json, sys
import numpy as np

class Precomputed:
    name = "all-MiniLM-L6-v2"
    def __init__(self, path):
        data = np.load(path)
        self.vectors = data["vectors"]
        self.rows = {t: i for i, t in enumerate(json.loads(str(data["texts"])))}
        self.dim = int(self.vectors.shape[1])
    def embed(self, texts):
        # Writer texts carry a unique suffix " [id]": their vector is the base sentence's.
        return self.vectors[[self.rows[t.split(" [")[0]] for t in texts]]
"""

OPEN_CHILD = (
    CHILD_PRELUDE
    + r"""
db, vectors, mode = sys.argv[1], sys.argv[2], sys.argv[3]
queries = json.loads(sys.argv[4])
embedder = Precomputed(vectors)
if mode == "raw":  # the control: hnswlib loads the file as it is, unverified
    import hnswlib
    meta = json.loads(open(db + ".hnsw.json").read())
    index = hnswlib.Index(space="cosine", dim=embedder.dim)
    index.load_index(db + ".hnsw", max_elements=max(2 * int(meta["elements"]), 1024))
    index.set_ef(64)
    out = []
    for q in queries:
        labels, _ = index.knn_query(embedder.embed([q]), k=5)
        out.append([int(x) for x in labels[0]])
    print(json.dumps({"how": "loaded", "neighbours": out}))
else:
    from bt_raider.memory import VectorMemory
    with VectorMemory(db, embedder=embedder) as memory:
        out = [[e.id for e in memory.search(q, 5, all_outcomes=True)] for q in queries]
        print(json.dumps({"how": memory.index.how, "neighbours": out}))
"""
)

WRITER_CHILD = (
    CHILD_PRELUDE
    + r"""
from bt_raider.memory import VectorMemory
db, vectors, tag = sys.argv[1], sys.argv[2], sys.argv[3]
embedder = Precomputed(vectors)
texts = list(embedder.rows)
memory = VectorMemory(db, embedder=embedder).open()
print("ready", flush=True)
for i in range(10**6):
    rid = f"{tag}-{i}"
    memory.record(f"{texts[i % len(texts)]} [{rid}]", f"G({i})", record_id=rid)
    if i % 5 == 4:
        memory.flush()
    print(rid, flush=True)
"""
)

CHECK_CHILD = (
    CHILD_PRELUDE
    + r"""
from bt_raider.memory import VectorMemory
db, vectors, ids_file = sys.argv[1], sys.argv[2], sys.argv[3]
acked = json.loads(open(ids_file).read())
embedder = Precomputed(vectors)
with VectorMemory(db, embedder=embedder) as memory:
    missing = wrong = 0
    for rid in acked:
        try:
            info = memory.get(rid).information
        except Exception:
            missing += 1
            continue
        # Writer texts repeat with other suffixes: the record must be among its equals.
        hits = memory.search(info, 50)
        if rid not in [h.id for h in hits if h.score > 0.9999]:
            wrong += 1
    print(json.dumps({"how": memory.index.how, "missing": missing, "wrong": wrong,
                      "records": len(memory)}))
"""
)


def _child(script: str, *args: str, timeout: float = 120.0) -> tuple[int, dict[str, Any] | None]:
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return proc.returncode, (json.loads(lines[-1]) if lines else None)


# --------------------------------------------------------------------------- the memory


def build(folder: Path, n: int) -> tuple[Path, Path]:
    """A memory of ``n`` real-MiniLM records (10 deleted) and the vectors file for children."""
    from bt_raider.memory import TransformersEmbedder, VectorMemory

    items = records(n)
    texts = [r["information"] for r in items] + QUERIES
    embedder = TransformersEmbedder()
    vectors = embedder.embed(texts)
    vectors_path = folder / "vectors.npz"
    np.savez(vectors_path, vectors=vectors, texts=json.dumps(texts))
    db = folder / "pristine" / "mem.db"
    db.parent.mkdir()
    with VectorMemory(db, embedder=embedder) as memory:
        ids = memory.record_many(items)
        for rid in ids[:10]:
            memory.delete(rid)
    return db, vectors_path


def snapshot(db: Path) -> dict[str, bytes]:
    return {s: Path(f"{db}{s}").read_bytes() for s in ("", ".hnsw", ".hnsw.json")}


def lay_out(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for suffix, data in files.items():
        Path(f"{folder / 'mem.db'}{suffix}").write_bytes(data)
    return folder / "mem.db"


# --------------------------------------------------------------------------- corruptions


def damages(
    rng: random.Random, files: dict[str, bytes], other: dict[str, dict[str, bytes]], trials: int
) -> list[tuple[str, dict[str, bytes]]]:
    """``trials`` damaged copies of ``files``, as (kind, files) pairs."""
    index, sidecar = files[".hnsw"], files[".hnsw.json"]

    def flip(data: bytes, count: int, run: int = 1) -> bytes:
        out = bytearray(data)
        while bytes(out) == data:
            for _ in range(count):
                at = rng.randrange(len(out))
                for i in range(at, min(at + run, len(out))):
                    out[i] ^= rng.randrange(1, 256)
        return bytes(out)

    kinds = {
        "flip 1 byte": lambda: {".hnsw": flip(index, 1)},
        "flip 16 bytes": lambda: {".hnsw": flip(index, 16)},
        "flip 256 bytes": lambda: {".hnsw": flip(index, 256)},
        "flip a 4 KB run": lambda: {".hnsw": flip(index, 1, 4096)},
        "truncate": lambda: {".hnsw": index[: rng.randrange(len(index))]},
        "0-byte index": lambda: {".hnsw": b""},
        "append garbage": lambda: {".hnsw": index + rng.randbytes(rng.randrange(1, 4096))},
        "damaged sidecar": lambda: {".hnsw.json": flip(sidecar, 2)},
        "swapped sidecar": lambda: {".hnsw": other["older"][".hnsw"]},
        "stale pair": lambda: {
            ".hnsw": other["older"][".hnsw"],
            ".hnsw.json": other["older"][".hnsw.json"],
        },
        "forged sidecar": lambda: forged(other["foreign"], sidecar),
    }
    names = list(kinds)
    out = []
    for i in range(trials):
        kind = names[i % len(names)]
        out.append((kind, {**files, **kinds[kind]()}))
    return out


def forged(foreign: dict[str, bytes], ours: bytes) -> dict[str, bytes]:
    """Another memory's index with a sidecar claiming to be ours (its checksum is genuine)."""
    meta, theirs = json.loads(ours), json.loads(foreign[".hnsw.json"])
    meta.update({k: theirs[k] for k in ("elements", "bytes", "blake2b")})
    return {".hnsw": foreign[".hnsw"], ".hnsw.json": json.dumps(meta).encode()}


def corruption_trials(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    from bt_raider.memory import TransformersEmbedder, VectorMemory

    rng = random.Random(args.seed)
    db, vectors = build(folder, args.records)
    files = snapshot(db)
    queries = json.dumps(QUERIES * 4 if len(QUERIES) < 20 else QUERIES)
    code, pristine = _child(OPEN_CHILD, str(db), str(vectors), "memory", queries)
    assert code == 0 and pristine and pristine["how"] == "loaded", (code, pristine)
    code, raw_pristine = _child(OPEN_CHILD, str(db), str(vectors), "raw", queries)
    assert code == 0 and raw_pristine, code
    # Another state of the same database (one record more), and a foreign memory.
    older = lay_out(folder / "older", files)
    embedder = TransformersEmbedder()
    with VectorMemory(older, embedder=embedder) as memory:
        memory.record("water the plant in the study", "Wet(plant)")
    foreign = folder / "foreign" / "mem.db"
    foreign.parent.mkdir()
    with VectorMemory(foreign, embedder=embedder) as memory:
        memory.record_many(records(args.records)[::-1])
    other = {"older": snapshot(older), "foreign": snapshot(foreign)}
    tally: Counter[str] = Counter()
    raw: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    trials = damages(rng, files, other, args.trials)

    def trial(n: int, kind: str, damaged: dict[str, bytes]) -> tuple[str, str | None]:
        path = lay_out(folder / f"t{n}", damaged)
        control = None
        if damaged[".hnsw.json"] == files[".hnsw.json"]:
            # The control (the file handed straight to hnswlib) first: it never writes.
            code, got = _child(OPEN_CHILD, str(path), str(vectors), "raw", queries)
            control = _verdict(code, got, raw_pristine, raw=True)
        code, got = _child(OPEN_CHILD, str(path), str(vectors), "memory", queries)
        shutil.rmtree(path.parent)
        return _verdict(code, got, pristine), control

    # Two trials at a time: each is a pair of short-lived processes.
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(trial, n, kind, d) for n, (kind, d) in enumerate(trials)]
        for (kind, _), future in zip(trials, futures, strict=True):
            verdict, control = future.result()
            tally[verdict] += 1
            by_kind.setdefault(kind, Counter())[verdict] += 1
            if control is not None:
                raw[control] += 1
    return {"trials": len(trials), "tally": tally, "raw": raw, "by_kind": by_kind}


def _verdict(code: int, got: dict[str, Any] | None, pristine: dict[str, Any], raw=False) -> str:
    if code < 0:
        return f"crashed ({signal.Signals(-code).name})"
    if code != 0 or got is None:
        return "refused with an error" if raw else "error exit"
    same = got["neighbours"] == pristine["neighbours"]
    if got["how"] == "loaded":
        return "loaded, same neighbours" if same else "silently different"
    return "rebuilt" if same else "wrong after rebuild"


# --------------------------------------------------------------------------- SIGKILL


def sigkill_rounds(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    rng = random.Random(args.seed + 1)
    base = folder / "kill"
    base.mkdir()
    src = folder / "pristine" / "mem.db"
    db = lay_out(base, snapshot(src))
    vectors = folder / "vectors.npz"
    acked: list[str] = []
    opened: Counter[str] = Counter()
    lost = wrong = crashed = 0
    for round_ in range(args.rounds):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER_CHILD, str(db), str(vectors), f"k{round_}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError("the writer did not start")
            time.sleep(rng.uniform(0.02, 1.0))
            proc.send_signal(signal.SIGKILL)
            acked += [ln.strip() for ln in proc.stdout if ln.startswith("k")]
        finally:
            proc.kill()
            proc.wait(timeout=10)
            if proc.stdout is not None:
                proc.stdout.close()
        ids_file = base / "acked.json"
        ids_file.write_text(json.dumps(acked))
        code, got = _child(CHECK_CHILD, str(db), str(vectors), str(ids_file))
        if code < 0 or got is None:
            crashed += 1
            continue
        opened[got["how"]] += 1
        lost = max(lost, got["missing"])  # cumulative: every round checks every ack so far
        wrong = max(wrong, got["wrong"])
    return {
        "rounds": args.rounds,
        "acked": len(acked),
        "lost": lost,
        "wrong": wrong,
        "crashed": crashed,
        "opened": opened,
    }


# --------------------------------------------------------------------------- report


def _target(value: int) -> str:
    return "0: ok" if value == 0 else "0: MISSED"


def run(args: argparse.Namespace | None = None) -> list[tuple[str, str, str]]:
    """Both parts; prints the detail and returns ``(what, measured, target)`` rows."""
    # A copy: the caller's namespace (benchmarks/reliability.py's) is left as it was.
    args = argparse.Namespace(**vars(args or argparse.Namespace()))
    quick = bool(getattr(args, "quick", False))
    args.records = getattr(args, "records", 200)
    args.trials = getattr(args, "trials", 44 if quick else 132)
    args.rounds = getattr(args, "rounds", 6 if quick else 24)
    args.seed = getattr(args, "seed", 0)
    with tempfile.TemporaryDirectory(prefix="reliability-memory-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        c = corruption_trials(args, folder)
        c_s = time.perf_counter() - started
        started = time.perf_counter()
        k = sigkill_rounds(args, folder)
        k_s = time.perf_counter() - started
    tally, raw = c["tally"], c["raw"]
    print(f"index corruptions: {c['trials']} trials on a memory of {args.records} records")
    width = max(len(kind) for kind in c["by_kind"])
    for kind, counts in c["by_kind"].items():
        print(f"  {kind:{width}}  " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print("  bt_raider:          " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items())))
    print("  hnswlib unverified: " + ", ".join(f"{v} {k}" for k, v in sorted(raw.items())))
    print(f"  ({c_s:.0f} s)")
    print(
        f"SIGKILL rounds: {k['rounds']}, {k['acked']} records acknowledged, {k['lost']} lost, "
        f"{k['wrong']} not found by their own vector, {k['crashed']} checks crashed; index "
        + ", ".join(f"{v} {h}" for h, v in sorted(k["opened"].items()))
        + f" ({k_s:.0f} s)"
    )
    crashed = sum(v for key, v in tally.items() if key.startswith("crashed"))
    silent = tally["silently different"] + tally["wrong after rebuild"]
    raw_crashed = sum(v for key, v in raw.items() if key.startswith("crashed"))
    return [
        ("index corruptions tried", str(c["trials"]), ">= 100" if not quick else "(quick)"),
        ("  rebuilt", str(tally["rebuilt"]), f"= {c['trials']} tried"),
        ("  crashed", str(crashed), _target(crashed)),
        ("  silently different", str(silent), _target(silent)),
        ("  errors", str(tally["error exit"]), _target(tally["error exit"])),
        (
            "  control: hnswlib unverified",
            f"{raw_crashed} crash, {raw['silently different']} diff of {sum(raw.values())}",
            "(what the checksum prevents)",
        ),
        ("SIGKILL rounds", str(k["rounds"]), ">= 20" if not quick else "(quick)"),
        ("  acknowledged records", str(k["acked"]), ""),
        ("  acknowledged records lost", str(k["lost"]), _target(k["lost"])),
        ("  not found after the kill", str(k["wrong"] + k["crashed"]), _target(k["wrong"])),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials and rounds")
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = run(args)
    width = max(len(r[0]) for r in rows)
    print()
    for what, value, target in rows:
        print(f"{what:{width}}  {value:>20}  {target}")
    return 1 if any("MISSED" in r[1] or "MISSED" in r[2] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
