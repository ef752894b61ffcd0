"""``bt-raider memory``: the CDR-cleaned vector memory from the command line.

Sub-commands (all take ``--db PATH``; the index lives next to it as ``PATH.hnsw``):

* ``add INFORMATION --goal GOAL`` (or ``--file records.jsonl``) -- store successes;
* ``query TEXT [-k 5]`` -- few-shot examples cleaned of conflicts, and what was dropped;
* ``stats`` -- counts, theta, sizes, rules;
* ``calibrate PAIRS`` -- theta from labelled pairs (JSONL ``{"a", "b", "conflict"}``) by ROC;
* ``trim [--queries FILE]`` -- Algorithm 1 over queries (default: every stored record);
* ``delete ID`` -- hide a record judged wrong (its history stays);
* ``prepare`` -- build the embedding model for ONNX Runtime from its weights, once per machine
  (no ``--db``, no torch):
  queries then embed in about half the time, and keep that speed when the robot is busy.

The model is loaded only by the sub-commands that embed text (add, query, calibrate, trim
with --queries); stats, delete and self-trimming work from the database alone.

Bad input -- a binary or missing input file, a directory or FIFO where a file is expected, an
empty, damaged or foreign database -- is one line on stderr and exit status 2; nothing is
written. ``--read-only`` (or a database without write permission, or on a read-only
filesystem) answers query and stats without writing anything.
"""

from __future__ import annotations

import argparse
import errno
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bt_raider.commands import HELP
from bt_raider.errors import BtRaiderError, InputFileError, MemoryStoreError, need
from bt_raider.files import loads_json, read_text

if TYPE_CHECKING:
    from bt_raider.memory.vector import VectorMemory


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], argv: Sequence[str] = ()
) -> None:
    """Add the ``memory`` sub-command to ``sub`` (``argv``: the words after its name)."""
    parser = sub.add_parser(
        "memory",
        help=HELP["memory"],
        description="CDR-cleaned vector memory: store [information -> goal] pairs, retrieve "
        "few-shot examples without conflicting ones, calibrate theta, trim links.",
    )
    actions = parser.add_subparsers(dest="memory_command", metavar="ACTION")
    actions.required = True

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", required=True, type=Path, help="memory database (SQLite file)")
        p.add_argument(
            "--rules", help="rules JSON file (default: the shipped phi1, phi2, negation)"
        )
        p.add_argument(
            "--embedder",
            help="'minilm' (default, bundled), a transformers model folder, or 'openai:MODEL'",
        )
        p.add_argument("--base-url", help="OpenAI-compatible endpoint for --embedder openai:MODEL")
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
        p.add_argument(
            "--read-only",
            action="store_true",
            help="open the database for reading only (query cuts no links)",
        )
        p.set_defaults(run=run)

    p = actions.add_parser("add", help="store a success (or many from a JSONL file)")
    p.add_argument("information", nargs="?", help="the command / situation")
    p.add_argument("--goal", help="what achieved it")
    p.add_argument("--outcome", default="success", help="success (default) or failure")
    p.add_argument("--metadata", help="JSON object stored with the record")
    p.add_argument("--id", dest="record_id", help="record id (re-adding the same id is a no-op)")
    p.add_argument(
        "--file",
        type=Path,
        help="JSONL of {information, goal[, outcome, metadata, record_id]} records",
    )
    common(p)

    p = actions.add_parser("query", help="few-shot examples for a command, conflicts removed")
    p.add_argument("text", help="the new command")
    p.add_argument("-k", type=int, default=5, help="examples wanted (default 5)")
    p.add_argument("--naive", action="store_true", help="plain nearest neighbours, no rules")
    p.add_argument("--no-trim", action="store_true", help="do not cut links for this query")
    common(p)

    p = actions.add_parser("stats", help="counts, theta, sizes, rules")
    common(p)

    p = actions.add_parser("calibrate", help="calibrate theta by ROC on labelled pairs")
    p.add_argument("pairs", type=Path, help='JSONL of {"a": ..., "b": ..., "conflict": true|false}')
    p.add_argument("--method", choices=("youden", "closest"), default="youden")
    common(p)

    p = actions.add_parser("trim", help="run Algorithm 1 to cut links between conflicting records")
    p.add_argument("--queries", type=Path, help="text file, one query per line (default: records)")
    p.add_argument("-k", type=int, default=10, help="contexts retrieved per query (default 10)")
    common(p)

    p = actions.add_parser(
        "prepare", help="build the embedding model for ONNX Runtime (once per machine, no torch)"
    )
    p.add_argument("--embedder", help="'minilm' (default, bundled) or a transformers model folder")
    p.add_argument("--force", action="store_true", help="export again even if a proven copy exists")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(run=prepare)

    p = actions.add_parser("delete", help="hide a record judged wrong (kept in the history)")
    p.add_argument("record_id", metavar="ID")
    p.add_argument("--reason", default="judged wrong")
    common(p)


def _memory(args: argparse.Namespace) -> VectorMemory:
    # The memory loads torch and the embedding model: only for the sub-commands that use it.
    from bt_raider.memory import VectorMemory, make_embedder

    kwargs: dict[str, Any] = {}
    if args.base_url:
        kwargs["base_url"] = args.base_url
    embedder = make_embedder(args.embedder, **kwargs)
    return VectorMemory(args.db, embedder=embedder, rules=args.rules, read_only=args.read_only)


#: Largest input file (records, pairs, queries) read; a memory of 100,000 records is ~30 MB.
MAX_INPUT_BYTES = 512 * 1024 * 1024


def _read_text(path: Path, what: str) -> str:
    """The UTF-8 text of a regular file; a directory, FIFO or binary file is an error."""
    # bt_raider.files refuses FIFOs and devices before opening, caps the size, checks UTF-8.
    return read_text(path, what=what, max_bytes=MAX_INPUT_BYTES)


def _read_jsonl(path: Path, what: str) -> list[dict[str, Any]]:
    lines = _read_text(path, what).splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = loads_json(line, what=what, source=path)
        except InputFileError as exc:
            detail = str(exc).split(": ", 1)[-1]
            raise MemoryStoreError(
                f"{what} file {str(path)!r} line {n}: invalid JSON: {detail}"
            ) from None
        if not isinstance(item, dict):
            raise MemoryStoreError(f"{what} file {str(path)!r} line {n}: expected a JSON object")
        out.append(item)
    return out


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    out = json.dumps(data, indent=1, default=str) if args.json else text
    held = getattr(args, "held_output", None)
    if held is None:
        print(out)
    else:  # printed once the memory closed cleanly (see run): never a result, then exit 2
        held.append(out)


def _need_extras(args: argparse.Namespace) -> None:
    """One line naming the missing extra, before any file is read or written."""
    embedder = getattr(args, "embedder", None) or ""
    if embedder.startswith("openai:"):  # the index here, the vectors from a server
        need("memory", f"bt-raider memory {args.memory_command}", modules=("hnswlib",))
        need("llm", f"--embedder {embedder}")
    else:
        need("memory", f"bt-raider memory {args.memory_command}")
        if embedder.lower() in ("", "minilm", "all-minilm-l6-v2", "default"):
            from bt_raider.memory.embedder import need_model

            need_model(f"bt-raider memory {args.memory_command}")


#: Words of errors that mean the process could not get memory (mapping a library or a model).
_NO_MEMORY = ("cannot allocate memory", "failed to map segment", "unable to mmap", "bad_alloc")


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in out):
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _address_space_limit() -> int | None:
    """The process's address-space limit (``ulimit -v``) in bytes, None when unlimited."""
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def real_cause(exc: BaseException, db: str | None = None) -> str | None:
    """The machine's reason behind ``exc`` when it is not the input's: a full disk, or too
    little memory (naming the address-space limit when one is set), else None.

    Under a small ``ulimit -v`` a model, a library or an index fails to map, and each says so
    its own way ("failed to map segment", ``MemoryError``, ENOMEM): without this, the advice
    would be to reinstall or to prepare the model again, which cannot help.
    """
    chain = _chain(exc)
    if db is not None:
        from bt_raider.memory.store import full_disk

        for e in chain:
            full = full_disk(db, e) if isinstance(e, (OSError, sqlite3.Error)) else None
            if full:
                return full
    if not any(
        isinstance(e, MemoryError)
        or (isinstance(e, OSError) and e.errno == errno.ENOMEM)
        or any(word in str(e).lower() for word in _NO_MEMORY)
        for e in chain
    ):
        return None
    limit = _address_space_limit()
    if limit is None:
        return "out of memory: the machine has too little free memory for the model; free some"
    return (
        f"out of memory: the process's address-space limit (ulimit -v) is {limit / 2**20:,.0f} "
        "MiB, too little for the model and its libraries (they take about 1.2 GiB); raise it, e.g. "
        "ulimit -v unlimited"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``bt-raider memory SUB-COMMAND`` on the memory at ``--db``."""
    try:
        return _run(args)
    except (BtRaiderError, MemoryError, OSError, RuntimeError, sqlite3.Error) as exc:
        cause = real_cause(exc, str(args.db))
        if cause is None:
            raise
        raise MemoryStoreError(cause) from exc


def _run(args: argparse.Namespace) -> int:
    command = args.memory_command
    _need_extras(args)
    db = str(args.db)
    if args.db.exists() and args.db.is_dir():
        raise MemoryStoreError(f"--db {db!r} is a directory: expected a database file")
    if args.db.exists() and not args.db.is_file():
        raise MemoryStoreError(f"--db {db!r} is not a regular file (a FIFO or device)")
    if command != "add" and not args.db.exists():
        raise MemoryStoreError(
            f"no memory database at {db!r}: create one with bt-raider memory add"
        )
    # Input files are read (and refused) before the database is opened or created.
    args.inputs = _INPUTS[command](args) if command in _INPUTS else None
    args.held_output = []
    try:
        with _memory(args) as memory:
            status = int(_COMMANDS[command](memory, args) or 0)
        # Closing writes too (the index, a checkpoint): only once it succeeded is the answer
        # printed, so a command that fails (a full disk) prints its one-line error alone.
        for out in args.held_output:
            print(out)
        return status
    except sqlite3.Error as exc:
        # The memory's methods already raise DamagedDatabaseError; this names anything else.
        from bt_raider.memory.store import database_error

        raise database_error(db, exc) from exc
    except OSError as exc:
        raise MemoryStoreError(f"memory database {db!r}: {exc}") from exc


def prepare(args: argparse.Namespace) -> int:
    """Export the model for ONNX Runtime unless a proven export is already there."""
    try:
        return _prepare(args)
    except (BtRaiderError, MemoryError, OSError, RuntimeError) as exc:
        cause = real_cause(exc)
        if cause is None:
            raise
        raise MemoryStoreError(cause) from exc


def _prepare(args: argparse.Namespace) -> int:
    import time

    from bt_raider.errors import BackendError

    need("memory", "bt-raider memory prepare")
    from bt_raider.memory import TransformersEmbedder, make_embedder, onnx_model

    embedder = make_embedder(args.embedder)
    if not isinstance(embedder, TransformersEmbedder):
        raise BackendError(
            f"--embedder {args.embedder!r} runs on a server: only a transformers model folder "
            "or 'minilm' can be exported"
        )
    start = time.perf_counter()
    path = onnx_model.model_file(embedder.path)
    onnx_model.sweep_leftovers(path.parent)  # a killed prepare's work folder, whatever comes next
    exported = args.force or not _proven(embedder)
    if exported:
        path = embedder.prepare()
    seconds = time.perf_counter() - start
    what = f"exported in {seconds:.1f} s" if exported else "already prepared and proven"
    _print(
        args,
        {"model": embedder.name, "onnx": str(path), "exported": exported, "seconds": seconds},
        f"{embedder.name}: {path} ({what}); queries embed on onnxruntime",
    )
    return 0


def _proven(embedder: Any) -> bool:
    """An export of ``embedder``'s model is there and proves itself."""
    return bool(embedder.prepared())


def _add_items(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.file is not None:
        if args.information:
            raise MemoryStoreError("give either INFORMATION --goal GOAL or --file, not both")
        items = _read_jsonl(args.file, "records")
    else:
        if not args.information or not args.goal:
            raise MemoryStoreError("add needs INFORMATION and --goal GOAL (or --file FILE)")
        metadata = None
        if args.metadata:
            try:
                metadata = loads_json(args.metadata, what="metadata", source="--metadata")
            except InputFileError as exc:
                detail = str(exc).split(": ", 1)[-1]
                raise MemoryStoreError(f"--metadata is not valid JSON: {detail}") from None
        items = [
            {
                "information": args.information,
                "goal": args.goal,
                "outcome": args.outcome,
                "metadata": metadata,
                "record_id": args.record_id,
            }
        ]
    return items


def _add(memory: VectorMemory, args: argparse.Namespace) -> int:
    before = len(memory)
    ids = memory.record_many(args.inputs)
    added = len(memory) - before
    _print(args, {"ids": ids, "added": added}, "\n".join(ids) + f"\n# {added} new record(s)")
    return 0


def _query(memory: VectorMemory, args: argparse.Namespace) -> int:
    if args.naive:
        hits = memory.search(args.text, args.k)
        found = [
            {"id": h.id, "score": h.score, "information": h.information, "goal": h.goal}
            for h in hits
        ]
        text = "\n".join(f"{h.score:.3f}  {h.information}  ->  {h.goal}   [{h.id}]" for h in hits)
        _print(args, found, text or "(memory is empty)")
        return 0
    res = memory.resolve(args.text, args.k, trim=not args.no_trim)
    data = {
        "query": res.query,
        "runs_on": getattr(memory.embedder, "runs_on", memory.embedder.name),
        "actions": [a.to_json() for a in res.actions],
        "theta": res.theta,
        "examples": [
            {"id": c.id, "score": c.score, "information": c.information, "goal": c.goal}
            for c in res.kept
        ],
        "conflicts": [
            {
                "id": c.id,
                "score": c.score,
                "information": c.information,
                "rule": c.judgement.rule,
                "why": c.judgement.explain(),
            }
            for c in res.conflicts
        ],
        "cut": [{"id": c.id, "information": c.information} for c in res.cut],
        "cuts_added": res.cuts_added,
    }
    lines = [
        f"query: {res.query}",
        "actions: "
        + (", ".join(f"({a.operation}, {a.object})" for a in res.actions) or "none found"),
        f"theta: {res.theta:.3f}",
        "examples:",
    ]
    lines += [f"  {c.score:.3f}  {c.information}  ->  {c.goal}   [{c.id}]" for c in res.kept] or [
        "  (none)"
    ]
    if res.conflicts:
        lines.append("dropped as conflicting:")
        lines += [
            f"  {c.score:.3f}  {c.information}   [{c.judgement.explain()}]" for c in res.conflicts
        ]
    if res.cut:
        lines.append("dropped by cut links:")
        lines += [f"  {c.score:.3f}  {c.information}" for c in res.cut]
    lines.append(f"links cut: {res.cuts_added}")
    _print(args, data, "\n".join(lines))
    return 0


def _stats(memory: VectorMemory, args: argparse.Namespace) -> int:
    s = memory.stats()
    cal = s["calibration"]
    text = "\n".join(
        [
            f"database: {s['path']} ({s['db_bytes'] / 1e6:.2f} MB, journal {s['journal_mode']})",
            f"index: {s['index']['path']} ({s['index_bytes'] / 1e6:.2f} MB, "
            f"{s['index']['live']} live of {s['index']['elements']}, {s['index']['opened']})",
            f"records: {s['records']} ({s['live']} live, {s['deleted']} deleted), outcomes "
            + ", ".join(f"{k} {v}" for k, v in sorted(s["outcomes"].items())),
            f"cut links: {s['cut_links']}",
            f"theta: {s['theta']:.3f} ({s['theta_source']})"
            + (
                f", AUC {cal['auc']:.2f} on {cal['positives']}+{cal['negatives']} pairs"
                if cal
                else ""
            ),
            f"embedder: {s['embedder']} (dim {s['dim']}), extractor: {s['extractor']}",
            f"rules: {', '.join(s['rules'])}",
        ]
    )
    _print(args, s, text)
    return 0


def _calibrate(memory: VectorMemory, args: argparse.Namespace) -> int:
    result = memory.calibrate(args.inputs, method=args.method)
    _print(
        args,
        result.to_json(),
        f"theta = {result.theta:.4f} (ROC {result.method}: TPR {result.tpr:.3f}, FPR "
        f"{result.fpr:.3f}, J {result.youden_j:.3f}, AUC {result.auc:.3f}; "
        f"{result.positives} conflict + {result.negatives} consistent pairs); stored in {args.db}",
    )
    return 0


def _trim_queries(args: argparse.Namespace) -> list[str] | None:
    if args.queries is None:
        return None
    return [q for q in _read_text(args.queries, "queries").splitlines() if q.strip()]


def _trim(memory: VectorMemory, args: argparse.Namespace) -> int:
    report = memory.trim(args.inputs, k=args.k)
    _print(
        args,
        report,
        f"{report['queries']} queries, {report['conflicts']} conflicting contexts, "
        f"{report['cuts_added']} links cut",
    )
    return 0


def _delete(memory: VectorMemory, args: argparse.Namespace) -> int:
    changed = memory.delete(args.record_id, reason=args.reason)
    _print(
        args,
        {"id": args.record_id, "deleted": changed},
        f"{args.record_id}: " + ("deleted (kept in the history)" if changed else "already deleted"),
    )
    return 0


_INPUTS = {
    "add": _add_items,
    "calibrate": lambda args: _read_jsonl(args.pairs, "pairs"),
    "trim": _trim_queries,
}

_COMMANDS = {
    "add": _add,
    "query": _query,
    "stats": _stats,
    "calibrate": _calibrate,
    "trim": _trim,
    "delete": _delete,
}
