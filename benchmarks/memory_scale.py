"""Scale of the CDR memory: throughput, latency, recall, size on disk, memory.

For ``--n`` distinct command sentences (real HuRIC/ALFRED commands, their derived variants and
rephrasings, see ``memory_data.scale_sentences``) this prints:

* embedding throughput of the bundled all-MiniLM-L6-v2 (sentences/s, CPU);
* insert throughput into the memory (SQLite + action extraction + hnswlib), model excluded;
* query + rule check latency p50/p95 (retrieve, judge with the CDRs, keep; the query's own
  embedding excluded), without and with trimming;
* recall@10 of the hnswlib search against exact (brute-force) cosine search;
* index rebuild time from the database (no model), index and database size, peak RSS.

Run:  python3 benchmarks/memory_scale.py [--n 100000]   (a quick run: --n 5000)
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# memory_data.py sits beside this script (Python puts the script's folder on the path).
from memory_data import build, missing_data, scale_sentences

from bt_raider.memory import TransformersEmbedder, VectorMemory


class Precomputed:
    """Hands the memory vectors computed beforehand, so insert timing excludes the model."""

    def __init__(self, name: str, texts: list[str], vectors: np.ndarray) -> None:
        self.name = name
        self._dim = vectors.shape[1]
        # The memory stores stripped text: look both forms up.
        self._rows = {t: i for i, t in enumerate(texts)}
        self._rows.update({t.strip(): i for i, t in enumerate(texts)})
        self._vectors = vectors

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts):
        return self._vectors[[self._rows[t] for t in texts]]


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="records (default 100000)")
    parser.add_argument("--queries", type=int, default=300, help="timed queries")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--batch", type=int, default=256, help="records per insert batch")
    parser.add_argument("--db", type=Path, help="database path (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        help="save (or reuse) the corpus vectors here (.npy); the throughput figure is only "
        "measured when they are computed",
    )
    args = parser.parse_args(argv)
    if (missing := missing_data("memory_scale.py")) is not None:
        print(missing, file=sys.stderr)
        return 2

    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory(prefix="bt-raider-scale-")
        args.db = Path(tmp.name) / "scale.db"
    print(f"n = {args.n} records, {args.queries} queries, k = {args.k}, db {args.db}", flush=True)

    t0 = time.perf_counter()
    sentences = scale_sentences(args.n, seed=args.seed)
    queries = [q.text for q in build(seed=args.seed + 1, n_queries=min(args.queries, 320)).queries]
    rng = random.Random(args.seed)
    while len(queries) < args.queries:
        queries.append(rng.choice(sentences) + " please")
    print(f"corpus built in {time.perf_counter() - t0:.1f} s", flush=True)

    cache = args.embedding_cache
    if cache is not None:
        # Fail now, not after minutes of embedding, if the cache cannot be written.
        cache.parent.mkdir(parents=True, exist_ok=True)
    model = TransformersEmbedder(batch_size=64)
    model.setup()
    if cache is not None and cache.exists():
        vectors = np.load(cache)
        if vectors.shape[0] != len(sentences):
            sys.exit(
                f"{cache}: holds {vectors.shape[0]} vectors, not {len(sentences)} (another --n)"
            )
        t_embed = float("nan")
        print(f"embedding: reused {cache} (throughput not measured)", flush=True)
    else:
        t1 = time.perf_counter()
        vectors = model.embed(sentences)
        t_embed = time.perf_counter() - t1
        if cache is not None:
            np.save(cache, vectors)
        print(
            f"embedding: {len(sentences) / t_embed:.0f} sentences/s "
            f"({len(sentences)} in {t_embed:.1f} s, all-MiniLM-L6-v2, CPU)",
            flush=True,
        )
    qvectors = model.embed(queries)

    embedder = Precomputed(model.name, sentences + queries, np.vstack([vectors, qvectors]))
    memory = VectorMemory(args.db, embedder=embedder)
    memory.open()
    t2 = time.perf_counter()
    for start in range(0, len(sentences), 10_000):
        memory.record_many(
            (
                {"information": s, "goal": f"goal-{start + i}"}
                for i, s in enumerate(sentences[start : start + 10_000])
            ),
            batch_size=args.batch,
        )
    t_insert = time.perf_counter() - t2
    memory.flush()
    print(
        f"insert: {len(sentences) / t_insert:.0f} records/s (SQLite + extraction + hnswlib, "
        f"model excluded; {t_insert:.1f} s); with embedding "
        f"{len(sentences) / (t_insert + t_embed):.0f} records/s",
        flush=True,
    )

    # Latency of one query: retrieve + judge + keep (its embedding excluded).
    for trim in (False, True):
        times = []
        for text, vector in zip(queries, qvectors, strict=True):
            t = time.perf_counter()
            actions = memory.extractor.extract(text)
            memory.resolve_vector(text, vector, actions, args.k, trim=trim)
            times.append(time.perf_counter() - t)
        print(
            f"query + rule check{' + trimming' if trim else ''}: p50 "
            f"{1000 * percentile(times, 50):.2f} ms, p95 {1000 * percentile(times, 95):.2f} ms "
            "(query embedding excluded)",
            flush=True,
        )

    # Recall@10 against exact cosine search over the same live vectors.
    store = memory.store
    assert store is not None and memory.index is not None
    labels = []
    matrix = []
    for ls, vs in store.embeddings():
        labels.append(ls)
        matrix.append(vs)
    all_labels = np.concatenate(labels)
    all_vectors = np.vstack(matrix)
    hits = 0
    for vector in qvectors:
        exact = set(all_labels[np.argsort(-(all_vectors @ vector))[: args.k]].tolist())
        approx, _ = memory.index.knn(vector, args.k)
        hits += len(exact & set(approx.tolist()))
    recall = hits / (args.k * len(qvectors))
    print(f"recall@{args.k} vs exact search: {recall:.4f} (hnswlib M=16, ef=64)", flush=True)
    del all_vectors, matrix

    memory.close()
    index_bytes = memory.index_path.stat().st_size
    db_files = [args.db, Path(str(args.db) + "-wal")]
    db_bytes = sum(f.stat().st_size for f in db_files if f.exists())

    # Rebuild from the database alone: delete the index file and reopen.
    memory.index_path.unlink()
    t3 = time.perf_counter()
    reopened = VectorMemory(args.db, embedder=embedder).open()
    t_rebuild = time.perf_counter() - t3
    how = reopened.index.how if reopened.index else "?"
    reopened.close()
    print(f"index rebuilt from the database in {t_rebuild:.1f} s ({how}, no model)", flush=True)

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"disk: index {index_bytes / 1e6:.1f} MB, database {db_bytes / 1e6:.1f} MB "
        f"({db_bytes / len(sentences):.0f} B/record, embeddings included); peak RSS {rss:.0f} MB",
        flush=True,
    )
    print(f"total {time.perf_counter() - t0:.0f} s")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
