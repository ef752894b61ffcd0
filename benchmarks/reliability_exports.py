"""Reliability of the memory's files: forged exports, malformed sidecars, planted links, damage.

Four parts, against the real ONNX export of the bundled all-MiniLM-L6-v2 (copied from the cache
when a proven one is there, else made once, about 40 s):

* **Exports** (>= 60 cases): the export damaged (byte flips, truncation), *forged* -- changed
  and given a sidecar that matches it (size and SHA-256), as anyone who can write the cache
  folder can: weights swapped or scaled, the output negated, another model altogether, an old
  format-1 sidecar carrying the forged model's own probe vectors --, malformed sidecars (not
  JSON, wrong types, NaN, 400-digit integers, deep nesting, duplicate keys, UTF-16, 8 MiB, a
  FIFO, ``/dev/zero``), and exports that are a FIFO, a directory, a link to ``/dev/zero`` or
  an 8 GiB sparse file. Each is opened by ``onnx_model.load`` in its own process (so a crash
  or a hang is observed, not suffered): *accepted*, *refused*, *traceback*, *crash* or *hang*.
  Two forged caches are also queried through ``bt-raider memory query``: the answer must come
  from torch, with one warning line.
* **Planted links**: ``bt-raider memory prepare`` and ``bt-raider memory add`` run with a
  symbolic link at every name they write (and the old predictable temporary names), each link
  to a file of someone else's; the victims must be unchanged.
* **Damaged databases** (>= 30): byte runs, zeroed pages, truncations and header flips of a
  memory of 200 records, each through ``bt-raider memory stats`` and ``memory query``: one
  line on stderr, exit 2 and the file unchanged -- or an answer (the damage missed every page
  read) -- never a traceback.
* **Refusals**: ``memory prepare`` into a cache folder that is a file: one line, exit 2,
  nothing written.

Targets: 0 forged exports accepted, 0 malformed files accepted, 0 files written through a
link, 0 tracebacks, crashes or hangs, every refusal one line and exit 2 with nothing written,
the 8 GiB sparse export refused in under 1 s.

Run:  python3 benchmarks/reliability_exports.py [--quick] [--seed 0]   (5-10 minutes)
(``benchmarks/reliability.py`` imports :func:`run`.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

#: Seconds a child may take before it counts as a hang.
HANG_S = 120.0

LOAD_CHILD = r"""
import json, sys, time
from pathlib import Path
from bt_raider.errors import BackendError
from bt_raider.memory import onnx_model
from bt_raider.memory.embedder import bundled_model_path
start = time.perf_counter()
try:
    model = onnx_model.load(bundled_model_path(), folder=Path(sys.argv[1]))
    out = {"accepted": True, "error": ""}
except BackendError as exc:
    model, out = None, {"accepted": False, "error": str(exc)}
out["seconds"] = time.perf_counter() - start
if model is not None:  # accepted: does it compute the model's vectors on 100 other texts?
    import numpy as np
    from bt_raider.memory import TransformersEmbedder
    texts = json.loads(sys.argv[2])
    # Batches: the eager model, on one thread (two spin and crawl on a busy machine).
    want = TransformersEmbedder(runtime="torch", num_threads=1).embed(texts)
    got = np.stack([model.embed_one(t) for t in texts])
    out["max_diff"] = float(np.abs(got - want).max())
print(json.dumps(out))
"""
#: Largest difference from the torch model on the held-out texts an accepted file may show
#: and still compute the model's vectors (float32 rounding, as the probes allow).
SAME = 1e-4


def _cli(*argv: str, cache: Path, timeout: float = HANG_S) -> tuple[str, int, str, str]:
    """``bt-raider ARGV`` in its own process: (how it ended, exit code, stdout, stderr)."""
    env = dict(os.environ, BT_RAIDER_CACHE=str(cache))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bt_raider.cli", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return "hang", -1, "", ""
    how = "crash" if done.returncode < 0 else "ended"
    if "Traceback" in done.stderr:
        how = "traceback"
    return how, done.returncode, done.stdout, done.stderr


def _refusal(code: int, out: str, err: str) -> bool:
    """The command line's refusal: exit 2, nothing on stdout, one line on stderr."""
    return code == 2 and out == "" and len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------- the export


def proven_cache(folder: Path) -> Path:
    """A cache folder holding a proven export: the user's copied, else one made here."""
    from bt_raider.memory import TransformersEmbedder, onnx_model

    cache = folder / "pristine"
    cache.mkdir()
    embedder = TransformersEmbedder()
    if embedder.prepared():  # the machine's own cache: copy it rather than export again
        source = onnx_model.model_file(embedder.path)
        for path in (source, source.with_suffix(".json")):
            shutil.copyfile(path, cache / path.name)
    else:
        how, code, _, err = _cli("memory", "prepare", cache=cache, timeout=600)
        if how != "ended" or code != 0:
            raise SystemExit(f"cannot prepare the export: {err.strip()}")
    return cache


def _match_sidecar(path: Path, **extra: Any) -> None:
    """Write the sidecar a forger would: the file's own size and SHA-256."""
    sidecar = path.with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    data = path.read_bytes()
    meta.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), **extra)
    sidecar.write_text(json.dumps(meta))


def _edit_onnx(path: Path, change: Callable[[Any], None]) -> None:
    import onnx

    proto = onnx.ModelProto.FromString(path.read_bytes())  # its weights stay where they are
    change(proto)
    path.write_bytes(proto.SerializeToString())


def _installed(tensor: Any) -> np.ndarray:
    """The installed weights' bytes the external ``tensor`` names (the graph holds no weights)."""
    from bt_raider.memory.embedder import bundled_model_path

    where = {e.key: e.value for e in tensor.external_data}
    data = (bundled_model_path() / "model.safetensors").read_bytes()
    count = int(np.prod(tensor.dims))
    array = np.frombuffer(data, "<f4", count=count, offset=int(where["offset"]))
    return array.reshape(tuple(tensor.dims))


def _swap(proto: Any) -> None:
    """Same-shaped weight matrices trade places in the nodes that read them."""
    seen: dict[tuple[int, ...], str] = {}
    swap: dict[str, str] = {}
    for tensor in proto.graph.initializer:
        if not tensor.external_data or np.prod(tensor.dims) <= 10_000:
            continue
        shape = tuple(tensor.dims)
        if shape in seen:
            other = seen.pop(shape)
            swap.update({other: tensor.name, tensor.name: other})
        else:
            seen[shape] = tensor.name
    for node in proto.graph.node:
        node.input[:] = [swap.get(name, name) for name in node.input]


def _scale(factor: float) -> Callable[[Any], None]:
    """The last LayerNorm's scale held in the graph (small enough to be allowed), scaled."""

    def change(proto: Any) -> None:
        from onnx import numpy_helper

        tensor = [t for t in proto.graph.initializer if t.name.endswith("LayerNorm.weight")][-1]
        array = (_installed(tensor) * factor).astype(np.float32)
        tensor.CopyFrom(numpy_helper.from_array(array, tensor.name))

    return change


def _negate(proto: Any) -> None:
    from onnx import helper

    out = proto.graph.output[0]
    inner = out.name + "_before_neg"
    for node in proto.graph.node:
        node.output[:] = [inner if o == out.name else o for o in node.output]
    proto.graph.node.append(helper.make_node("Neg", [inner], [out.name]))


def _swap_rows(proto: Any) -> None:
    """The word rows of "on" and "off" trade places: no probe text has "off"."""
    from onnx import numpy_helper

    from bt_raider.memory.embedder import bundled_model_path

    vocab = (bundled_model_path() / "vocab.txt").read_text().splitlines()
    on, off = vocab.index("on"), vocab.index("off")
    for tensor in proto.graph.initializer:
        if tuple(tensor.dims) == (len(vocab), 384):
            table = _installed(tensor).copy()
            table[[on, off]] = table[[off, on]]
            tensor.CopyFrom(numpy_helper.from_array(table, tensor.name))


def _foreign(path: Path) -> None:
    """Another model altogether: token ids through a random embedding table, same signature."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(0).standard_normal((30522, 384)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"])],
        "foreign",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "n"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "n"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, "n", 384])],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))


def _own_probes(path: Path) -> list[list[float]]:
    """The vectors the (forged) file at ``path`` gives the probes: what a format-1 forger
    would have written into the sidecar."""
    import onnxruntime as ort
    import tokenizers

    from bt_raider.memory import onnx_model
    from bt_raider.memory.embedder import bundled_model_path

    options = ort.SessionOptions()  # the weights an export names, from the installed file
    weights = (bundled_model_path() / "model.safetensors").read_bytes()
    options.add_external_initializers_from_files_in_memory(
        ["model.safetensors"], [weights], [len(weights)]
    )
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tokenizer = tokenizers.Tokenizer.from_file(str(bundled_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    model = onnx_model.OnnxModel(session, tokenizer, 1)
    return [model.embed_one(text).tolist() for text in onnx_model.PROBES]


Damage = Callable[[Path, Path], Any]  # damage(export, sidecar)
Case = tuple[str, str, Damage]  # (group, name, damage)


def forged(change: Callable[[Path], Any], own_probes: bool = False, **fields: Any) -> Damage:
    """``change`` the export, then write the sidecar that matches it (and ``fields``)."""

    def damage(path: Path, _sidecar: Path) -> None:
        change(path)
        if own_probes:
            fields["probes"] = _own_probes(path)
        _match_sidecar(path, **fields)

    return damage


def _flip(rng: random.Random, count: int) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        for _ in range(count):
            data[rng.randrange(len(data))] ^= 1 + rng.randrange(255)
        path.write_bytes(bytes(data))

    return damage


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _only(change: Callable[[Path], None]) -> Damage:
    """``change`` the export and leave its sidecar as it was."""
    return lambda path, _sidecar: change(path)


def export_cases(rng: random.Random, quick: bool) -> list[Case]:
    """Every way the export and its sidecar are damaged, forged or malformed."""
    cases: list[Case] = [("control", "untouched", lambda p, s: None)]
    flips = 2 if quick else 5
    for count in (1, 16, 256):
        for n in range(flips):
            seed = rng.random()
            cases.append(
                (
                    "damaged",
                    f"{count} byte(s) flipped #{n}",
                    _only(_flip(random.Random(seed), count)),
                )
            )
            cases.append(
                (
                    "forged",
                    f"{count} byte(s) flipped, sidecar matched #{n}",
                    forged(_flip(random.Random(seed), count)),
                )
            )
    cases.append(("damaged", "truncated to half", _only(_truncate)))
    cases.append(("forged", "truncated, sidecar matched", forged(_truncate)))
    forgeries: dict[str, Callable[[Path], None]] = {
        "weights swapped": lambda p: _edit_onnx(p, _swap),
        "weights x1.01": lambda p: _edit_onnx(p, _scale(1.01)),
        "weights x0.5": lambda p: _edit_onnx(p, _scale(0.5)),
        "output negated": lambda p: _edit_onnx(p, _negate),
        "word rows of on and off swapped": lambda p: _edit_onnx(p, _swap_rows),
        "another model": _foreign,
    }
    for name, forge in forgeries.items():
        cases.append(("forged", f"{name}, sidecar matched", forged(forge)))
    cases.append(
        (
            "forged",
            "weights x1.01, format-1 sidecar with its own probes",
            forged(forgeries["weights x1.01"], own_probes=True, format=1),
        )
    )
    cases.append(
        (
            "forged",
            "another model, sidecar with its own probes",
            forged(_foreign, own_probes=True),
        )
    )

    def sidecar_edit(change: Callable[[dict[str, Any]], Any]) -> Damage:
        def damage(p: Path, s: Path) -> None:
            meta = json.loads(s.read_text())
            text = change(meta)
            s.write_text(text if isinstance(text, str) else json.dumps(meta))

        return damage

    def raw(content: bytes) -> Damage:
        return lambda p, s: s.write_bytes(content)

    malformed: dict[str, Damage] = {
        "empty": raw(b""),
        "not JSON": raw(b"{format: 2"),
        "a list": raw(b"[]"),
        "null": raw(b"null"),
        "UTF-16": raw('{"format": 2}'.encode("utf-16")),
        "binary": raw(bytes(range(256))),
        "100,000 brackets deep": raw(b"[" * 100_000 + b"]" * 100_000),
        "sha256 missing": sidecar_edit(lambda m: m.pop("sha256")),
        "sha256 a list": sidecar_edit(lambda m: m.update(sha256=list(m["sha256"]))),
        "sha256 not hex": sidecar_edit(lambda m: m.update(sha256="z" * 64)),
        "bytes a string": sidecar_edit(lambda m: m.update(bytes=str(m["bytes"]))),
        "bytes true": sidecar_edit(lambda m: m.update(bytes=True)),
        "bytes negative": sidecar_edit(lambda m: m.update(bytes=-1)),
        "bytes NaN": sidecar_edit(
            lambda m: json.dumps(m).replace(f'"bytes": {m["bytes"]}', '"bytes": NaN')
        ),
        "bytes 1e400": sidecar_edit(
            lambda m: json.dumps(m).replace(f'"bytes": {m["bytes"]}', '"bytes": 1e400')
        ),
        "bytes of 5,000 digits": sidecar_edit(
            lambda m: json.dumps(m).replace(f'"bytes": {m["bytes"]}', '"bytes": ' + "9" * 5000)
        ),
        "format a string": sidecar_edit(lambda m: m.update(format="2")),
        "format 1": sidecar_edit(lambda m: m.update(format=1)),
        "weights a number": sidecar_edit(lambda m: m.update(weights=7)),
        "weights of another model": sidecar_edit(lambda m: m.update(weights="0123456789abcdef")),
        "duplicate key": sidecar_edit(
            lambda m: json.dumps(m)[:-1] + ', "sha256": "' + "0" * 64 + '"}'
        ),
        "probes malformed (format 1)": sidecar_edit(
            lambda m: m.update(format=1, probes=[[None], "x"])
        ),
        "8 MiB of padding": sidecar_edit(lambda m: json.dumps(m) + " " * (8 << 20)),
    }
    for name, damage in malformed.items():
        cases.append(("malformed", f"sidecar {name}", damage))

    def fifo(target: str) -> Damage:
        def damage(p: Path, s: Path) -> None:
            path = p if target == "export" else s
            path.unlink()
            os.mkfifo(path)

        return damage

    def directory(p: Path, s: Path) -> None:
        p.unlink()
        p.mkdir()

    def dev_zero(target: str) -> Damage:
        def damage(p: Path, s: Path) -> None:
            path = p if target == "export" else s
            path.unlink()
            path.symlink_to("/dev/zero")

        return damage

    def sparse(match: bool) -> Damage:
        def damage(p: Path, s: Path) -> None:
            p.unlink()
            with p.open("wb") as handle:
                handle.truncate(8 << 30)
            if match:
                meta = json.loads(s.read_text())
                meta["bytes"] = 8 << 30
                s.write_text(json.dumps(meta))

        return damage

    cases += [
        ("malformed", "export a FIFO", fifo("export")),
        ("malformed", "sidecar a FIFO", fifo("sidecar")),
        ("malformed", "export a directory", directory),
        ("malformed", "export a link to /dev/zero", dev_zero("export")),
        ("malformed", "sidecar a link to /dev/zero", dev_zero("sidecar")),
        ("sparse", "8 GiB sparse export", sparse(False)),
        ("sparse", "8 GiB sparse export, sidecar says 8 GiB", sparse(True)),
    ]
    return cases


def run_export_case(n: int, case: Case, pristine: Path, folder: Path) -> dict[str, Any]:
    """Lay out a damaged copy of the cache, open it in a child process, say how it went."""
    from bt_raider.memory import onnx_model
    from bt_raider.memory.embedder import bundled_model_path

    group, name, damage = case
    cache = folder / f"case-{n}"
    shutil.copytree(pristine, cache)
    path = onnx_model.model_file(bundled_model_path(), cache)
    damage(path, path.with_suffix(".json"))
    try:
        done = subprocess.run(
            [sys.executable, "-c", LOAD_CHILD, str(cache), json.dumps(_held_out())],
            capture_output=True,
            text=True,
            timeout=3 * HANG_S,  # an accepted file is then checked on torch, slow when busy
        )
    except subprocess.TimeoutExpired:
        return {"group": group, "name": name, "outcome": "hang", "seconds": HANG_S, "error": ""}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if done.returncode < 0:
        outcome, reply = "crash", {"error": f"signal {-done.returncode}", "seconds": 0.0}
    elif done.returncode != 0 or "Traceback" in done.stderr:
        outcome, reply = "traceback", {"error": done.stderr.strip()[-300:], "seconds": 0.0}
    else:
        reply = json.loads(done.stdout)
        outcome = "refused"
        if reply["accepted"]:
            same = reply["max_diff"] <= SAME
            outcome = "accepted, same vectors" if same else "accepted"
            reply["error"] = f"max difference from torch {reply['max_diff']:.1e} on 100 texts"
    return {"group": group, "name": name, "outcome": outcome, **reply}


def _held_out() -> list[str]:
    """100 texts the probes do not contain: what a forged file would be caught on in use."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from memory_load import QUERIES, records

    return QUERIES + [r["information"] for r in records(94)]


def query_with_forged_exports(pristine: Path, folder: Path) -> list[dict[str, Any]]:
    """``memory query`` with a forged or malformed cache: answered by torch, one warning line."""
    from bt_raider.memory import onnx_model
    from bt_raider.memory.embedder import bundled_model_path

    db = folder / "query.db"
    how, code, _, err = _cli(
        "memory",
        "add",
        "--db",
        str(db),
        "turn on the hall light",
        "--goal",
        "on(L)",
        cache=pristine,
    )
    if how != "ended" or code != 0:
        raise SystemExit(f"cannot make the query memory: {err.strip()}")
    results = []
    forgeries: dict[str, Damage] = {
        "weights x1.01, sidecar matched": forged(lambda p: _edit_onnx(p, _scale(1.01))),
        "sidecar not JSON": lambda p, s: s.write_text("{format"),
    }
    for name, forge in forgeries.items():
        cache = folder / "forged-query"
        shutil.copytree(pristine, cache)
        path = onnx_model.model_file(bundled_model_path(), cache)
        forge(path, path.with_suffix(".json"))
        how, code, out, err = _cli(
            "memory", "query", "--db", str(db), "switch off the hall light", "--json", cache=cache
        )
        shutil.rmtree(cache)
        runs_on = json.loads(out).get("runs_on") if code == 0 and out.startswith("{") else None
        lines = err.strip().splitlines()
        ok = how == "ended" and code == 0 and runs_on == "torch" and len(lines) == 1
        results.append({"name": name, "runs_on": runs_on, "stderr": lines, "ok": ok})
    return results


# --------------------------------------------------------------------------- planted links


def planted_links(pristine: Path, folder: Path, quick: bool) -> dict[str, Any]:
    """``memory prepare`` and ``memory add`` with a link at every name they write."""
    from bt_raider.memory import onnx_model
    from bt_raider.memory.embedder import bundled_model_path

    victims = folder / "victims"
    victims.mkdir()
    written: list[str] = []
    checked = 0
    runs: dict[str, str] = {}

    def plant(where: Path, names: list[str]) -> dict[Path, bytes]:
        planted = {}
        for name in names:
            victim = victims / f"{where.name}-{name}"
            victim.write_text(f"someone else's {name}\n")
            (where / name).symlink_to(victim)
            planted[victim] = victim.read_bytes()
        return planted

    # memory add: the index and its sidecar (and the names they were once staged at).
    memory = folder / "linked-memory"
    memory.mkdir()
    index_names = ["m.db.hnsw", "m.db.hnsw.json", "m.db.hnsw.tmp", "m.db.hnsw.json.tmp"]
    planted = plant(memory, index_names)
    how, code, _, err = _cli(
        "memory",
        "add",
        "--db",
        str(memory / "m.db"),
        "open the fridge",
        "--goal",
        "open(F)",
        cache=pristine,
    )
    runs["memory add"] = f"{how}, exit {code}"
    # memory prepare: the export and its sidecar (and the old temporary sidecar name).
    if not quick:
        cache = folder / "linked-cache"
        cache.mkdir()
        target = onnx_model.model_file(bundled_model_path(), cache)
        names = [target.name, target.with_suffix(".json").name, target.name + ".json.tmp"]
        names.append(target.with_suffix(".json.tmp").name)
        planted |= plant(cache, names)
        how, code, _, err = _cli("memory", "prepare", cache=cache, timeout=900)
        runs["memory prepare"] = f"{how}, exit {code}" + (f": {err.strip()[:120]}" if code else "")
        if (target.is_symlink() or not target.is_file()) and code == 0:
            written.append(f"{target.name} is still a link")
    for victim, before in planted.items():
        checked += 1
        if victim.read_bytes() != before:
            written.append(victim.name)
    return {"links": checked, "written": written, "runs": runs}


# --------------------------------------------------------------------------- damaged databases


def damaged_databases(pristine: Path, folder: Path, rng: random.Random, n: int) -> dict[str, Any]:
    """``memory stats`` and ``memory query`` on damaged copies of a memory of 200 records."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from memory_load import records

    source = folder / "records.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in records(200)))
    db = folder / "base.db"
    how, code, _, err = _cli(
        "memory", "add", "--db", str(db), "--file", str(source), cache=pristine
    )
    if how != "ended" or code != 0:
        raise SystemExit(f"cannot make the memory to damage: {err.strip()}")
    original = db.read_bytes()
    page = int.from_bytes(original[16:18], "big") or 65536

    def damaged(k: int) -> bytes:
        data = bytearray(original)
        kind = k % 5
        if kind == 0:  # a run of random bytes
            at, size = rng.randrange(100, len(data)), rng.choice([16, 512, 4096])
            data[at : at + size] = bytes(
                rng.randrange(256) for _ in range(len(data[at : at + size]))
            )
        elif kind == 1:  # a zeroed page past the schema
            at = page * rng.randrange(1, len(data) // page)
            data[at : at + page] = bytes(page)
        elif kind == 2:  # truncated
            data = data[: rng.randrange(page, len(data))]
        elif kind == 3:  # one header byte
            data[rng.randrange(16, 100)] ^= 1 + rng.randrange(255)
        else:  # every page after the first two
            data[2 * page :] = bytes(rng.randrange(256) for _ in range(len(data) - 2 * page))
        return bytes(data)

    damaged_cache = [damaged(k) for k in range(n)]

    def trial(k: int) -> list[tuple[str, str]]:
        out = []
        for argv in (
            ["stats"],
            ["query", "turn on the light in the hall", "--read-only"],
            ["query", "turn on the light in the hall"],
        ):
            case = folder / f"damaged-{k}-{argv[0]}-{len(argv)}"
            case.mkdir()
            path = case / "m.db"
            data = damaged_cache[k]
            path.write_bytes(data)
            how, code, stdout, err = _cli(
                "memory", argv[0], *argv[1:], "--db", str(path), cache=pristine
            )
            if how != "ended":
                outcome = how
            elif _refusal(code, stdout, err):
                outcome = "refused" if path.read_bytes() == data else "refused but written"
            elif code == 0:
                outcome = "answered"
            else:
                outcome = f"exit {code}, {len(err.splitlines())} lines"
            out.append((" ".join(argv[:1] + argv[2:]), outcome))
            shutil.rmtree(case)
        return out

    tally: Counter[str] = Counter()
    with ThreadPoolExecutor(2) as pool:
        for result in pool.map(trial, range(n)):
            for _command, outcome in result:
                tally[outcome] += 1
    refusal_line = ""
    probe = folder / "one.db"
    probe.write_bytes(damaged_cache[-1])
    _, _, _, refusal_line = _cli("memory", "stats", "--db", str(probe), cache=pristine)
    return {
        "trials": n,
        "runs": sum(tally.values()),
        "tally": tally,
        "example": refusal_line.strip(),
    }


def refusals(folder: Path) -> dict[str, Any]:
    """``memory prepare`` into a cache folder that is a file: one line, exit 2, nothing written."""
    blocked = folder / "a-file"
    blocked.write_text("not a folder\n")
    how, code, out, err = _cli("memory", "prepare", cache=blocked / "cache")
    ok = how == "ended" and _refusal(code, out, err) and blocked.read_text() == "not a folder\n"
    return {"ok": ok, "line": err.strip()}


# --------------------------------------------------------------------------- report


def _target(value: int) -> str:
    return "0: ok" if value == 0 else "0: MISSED"


def run(args: argparse.Namespace | None = None) -> list[tuple[str, str, str]]:
    """Every part; prints the detail and returns ``(what, measured, target)`` rows."""
    quick = bool(getattr(args, "quick", False))
    seed = int(getattr(args, "seed", 0) or 0)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="reliability-exports-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        pristine = proven_cache(folder)
        cases = export_cases(rng, quick)
        with ThreadPoolExecutor(2) as pool:
            results = list(
                pool.map(lambda nc: run_export_case(*nc, pristine, folder), enumerate(cases))
            )
        exports_s = time.perf_counter() - started
        queried = query_with_forged_exports(pristine, folder)
        started = time.perf_counter()
        links = planted_links(pristine, folder, quick)
        links_s = time.perf_counter() - started
        started = time.perf_counter()
        damage = damaged_databases(pristine, folder, rng, 10 if quick else 30)
        damage_s = time.perf_counter() - started
        refused = refusals(folder)

    by_group: dict[str, Counter[str]] = {}
    for r in results:
        by_group.setdefault(r["group"], Counter())[r["outcome"]] += 1
    print(f"exports: {len(results)} cases ({exports_s:.0f} s)")
    for group, counts in by_group.items():
        print(f"  {group:10} " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for r in results:
        if r["outcome"] not in ("refused",) or r["group"] == "sparse":
            print(
                f"  {r['group']:10} {r['name']}: {r['outcome']} in {r['seconds']:.2f} s "
                f"{r['error'][:150]}"
            )
    for q in queried:
        print(f"  query with {q['name']}: runs on {q['runs_on']}, stderr {q['stderr']}")
    print(
        f"planted links: {links['links']} links, runs {links['runs']} ({links_s:.0f} s); "
        f"written through: {links['written'] or 'none'}"
    )
    print(
        f"damaged databases: {damage['trials']} damaged copies, {damage['runs']} commands: "
        + ", ".join(f"{v} {k}" for k, v in sorted(damage["tally"].items()))
        + f" ({damage_s:.0f} s)"
    )
    print(f"  e.g. {damage['example']}")
    print(f"prepare into a file: {refused['line']}")

    forged = [r for r in results if r["group"] == "forged"]
    forged_ok = sum(r["outcome"] == "accepted" for r in forged)
    harmless = sum(r["outcome"] == "accepted, same vectors" for r in forged)
    bad_ok = sum(
        r["outcome"].startswith("accepted")
        for r in results
        if r["group"] in ("damaged", "malformed", "sparse")
    )
    broken = sum(r["outcome"] in ("traceback", "crash", "hang") for r in results)
    tally = damage["tally"]
    db_broken = sum(v for k, v in tally.items() if k not in ("refused", "answered"))
    control = [r for r in results if r["group"] == "control"]
    sparse_s = max(r["seconds"] for r in results if r["group"] == "sparse")
    sparse_refused = all(r["outcome"] == "refused" for r in results if r["group"] == "sparse")
    return [
        ("export cases", str(len(results)), ">= 60" if not quick else "(quick)"),
        (
            "  control export accepted",
            "yes" if all(r["outcome"].startswith("accepted") for r in control) else "NO",
            "yes: ok"
            if all(r["outcome"].startswith("accepted") for r in control)
            else "yes: MISSED",
        ),
        ("  forged exports accepted", f"{forged_ok} of {len(forged)}", _target(forged_ok)),
        (
            "  changed but same vectors, accepted",
            str(harmless),
            "(a flip below float32 rounding)",
        ),
        ("  damaged/malformed accepted", str(bad_ok), _target(bad_ok)),
        ("  tracebacks, crashes, hangs", str(broken), _target(broken)),
        (
            "  8 GiB sparse export refused in",
            f"{sparse_s:.2f} s",
            "< 1 s: ok" if sparse_refused and sparse_s < 1.0 else "< 1 s: MISSED",
        ),
        (
            "  queries on a forged cache on torch",
            f"{sum(q['ok'] for q in queried)} of {len(queried)}",
            "all, one line: ok" if all(q["ok"] for q in queried) else "all, one line: MISSED",
        ),
        (
            "files written through a link",
            f"{len(links['written'])} of {links['links']}",
            _target(len(links["written"])),
        ),
        ("damaged database commands", str(damage["runs"]), ">= 90" if not quick else "(quick)"),
        ("  refused (one line, exit 2, unchanged)", str(tally["refused"]), ""),
        ("  answered", str(tally["answered"]), "(damage missed the pages read)"),
        ("  tracebacks, other exits, written", str(db_broken), _target(db_broken)),
        (
            "prepare into a file: one line, exit 2",
            "yes" if refused["ok"] else "NO",
            "yes: ok" if refused["ok"] else "yes: MISSED",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer cases, no prepare run")
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
