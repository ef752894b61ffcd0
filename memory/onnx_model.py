"""The embedding model as an ONNX Runtime session: a query's vector at about half the cost.

One short query through all-MiniLM-L6-v2 is a chain of small matrix products; ONNX Runtime
runs it in under half the time of the traced torch model, idle or with both cores busy,
because its threads sleep instead of spinning while they wait (torch's OpenMP threads collapse
on a busy machine: issue 11, ``benchmarks/memory_load.py``).

The model is built once per machine, never at run time of a robot: ``bt-raider memory
prepare`` (or :func:`prepare`) writes the model's ONNX graph into the cache folder
(:mod:`bt_raider.memory.onnx_build`: from ``model.safetensors``, without torch), with a
sidecar recording the file's size, its SHA-256 and the identity of the weights it came from.
The graph holds no weights: each is an external tensor naming its bytes in the installed
``model.safetensors``, which :func:`load` reads and hands to ONNX Runtime (one copy of the
weights on disk, the model package's). :func:`load` trusts a file only when it proves itself
against what the cache folder cannot change: every external tensor must name a tensor of the
installed weights at the very offset, length, type and shape its header gives, no tensor
written into the graph may be larger than :data:`MAX_INLINE_BYTES` (no table or matrix can come
from the cache folder; :func:`check_graph`), and the vectors it gives the :data:`PROBES` must
be those of the installed weights -- shipped with bt_raider for the bundled all-MiniLM-L6-v2
(:func:`shipped_probes`), computed by the torch model for other weights. A damaged,
foreign, swapped or stale file, or a malformed sidecar, is refused (the embedder then runs
on torch, or without torch builds it again), never used; an absurdly large one is
refused from its size before a byte is read.

:func:`prepare` writes into a private temporary folder made in the cache folder (a unique
name, mode 0700) and renames the proven files into place, so a symbolic link planted at any
name it uses is replaced, never written through.

Only ``onnxruntime`` and ``tokenizers`` are needed to load and run, and ``onnx`` to build
(the ``memory`` extra); torch only to prove an export of weights other than the bundled ones.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bt_raider.errors import BackendError, InputFileError, MissingDependencyError, require
from bt_raider.files import open_binary, read_bytes, read_json, regular_file

logger = logging.getLogger(__name__)

#: Environment variable naming the cache folder (default: ``$XDG_CACHE_HOME/bt_raider``).
CACHE_ENV = "BT_RAIDER_CACHE"
#: Texts whose vectors prove that a loaded file computes the model's vectors (two lengths, and
#: characters outside the plain vocabulary).
PROBES = (
    "the robot",
    "put the mug in the sink and turn on the tap, then bring me a spoon",
    "\u00dcBER caf\u00e9 \u2013 na\u00efve \U0001f916 #42",
)
#: Largest difference from the torch model's vector a probe may show (float32 rounding).
TOLERANCE = 1e-5
#: The sidecar's format; a file written by another format is exported again (format 1 kept
#: probe vectors in the sidecar, where whoever could swap the file could swap them too; format
#: 3 files were exported by torch.onnx, format 4 ones held a copy of the weights).
FORMAT = 5
#: Largest sidecar read (one is about 300 bytes).
MAX_SIDECAR_BYTES = 64 * 1024
#: An export is refused, from its size alone, when it is larger than this (the graph without
#: its weights: MiniLM's is about 40 KB).
MAX_EXPORT_BYTES = 4 * 1024 * 1024
#: The largest tensor the graph may hold itself (constants of a few numbers): every weight is
#: read from the installed file.
MAX_INLINE_BYTES = 4096


def cache_dir() -> Path:
    """Where exported models live: ``$BT_RAIDER_CACHE``, else ``$XDG_CACHE_HOME/bt_raider``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "bt_raider"


def _model_files(model_path: Path) -> list[tuple[str, os.stat_result]]:
    out = []
    for name in sorted(os.listdir(model_path)):
        item = model_path / name
        if item.is_file():
            out.append((name, item.stat()))
    return out


def weights_identity(model_path: Path) -> str:
    """A short hash naming the weights and configuration of ``model_path``.

    Built from each file's name, size and modification time (reading 90 MB of weights on
    every start would cost more than the session saves); the file's own SHA-256 in the
    sidecar guards the exported copy itself.
    """
    digest = hashlib.sha256()
    for name, stat in _model_files(model_path):
        digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    digest.update(str(model_path.resolve()).encode())
    return digest.hexdigest()[:16]


def model_file(model_path: Path, folder: Path | None = None) -> Path:
    """The exported model's path for the weights in ``model_path``."""
    return (folder or cache_dir()) / f"{model_path.name}-{weights_identity(model_path)}.onnx"


def _sidecar(onnx_path: Path) -> Path:
    return onnx_path.with_suffix(".json")


def exported(model_path: Path, folder: Path | None = None) -> bool:
    """Whether an export of ``model_path`` (or anything at its names) is in the cache folder."""
    path = model_file(model_path, folder)
    return os.path.lexists(path) or os.path.lexists(_sidecar(path))


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_binary(path, what="model", max_bytes=MAX_WEIGHTS_BYTES) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def shipped_probes(model_path: Path) -> np.ndarray | None:
    """The :data:`PROBES`' vectors shipped with bt_raider for ``model_path``, or None.

    Only the bundled all-MiniLM-L6-v2 has them, recognised by the size of its weights and the
    SHA-256 of its ``config.json`` and ``tokenizer.json``. They were computed by the torch
    model and live in this module, in the installed package: never in the cache folder an
    export is read from. For other weights :func:`load` needs ``expected=`` vectors computed
    by the torch model (:class:`~bt_raider.memory.embedder.TransformersEmbedder` does that).
    """
    try:
        for name, want in _BUNDLED_FILES.items():
            item = model_path / name
            if isinstance(want, int):
                if item.stat().st_size != want:
                    return None
            elif item.stat().st_size > 16 * 1024 * 1024 or _file_sha256(item) != want:
                return None
    except OSError:  # a file missing: not the bundled model
        return None
    raw = base64.b64decode("".join(_BUNDLED_PROBES))
    return np.frombuffer(raw, dtype="<f4").reshape(len(PROBES), -1).astype(np.float32)


def check_graph(data: bytes, model_path: Path, path: Path) -> None:
    """Refuse a graph that takes any weight from anywhere but the installed weights file.

    Every external tensor must name ``model.safetensors`` at the offset and length its header
    gives for the tensor of that name, with its type and shape; a tensor held in the graph
    itself (an initializer or a node's attribute) may be at most :data:`MAX_INLINE_BYTES`;
    subgraphs and sparse tensors, which the builder never writes, are refused.

    Raises:
        BackendError: the graph cannot be parsed, or breaks one of those rules (named).
    """
    onnx = require("onnx", "memory", needed_by="the ONNX export of the embedder")
    from bt_raider.memory.onnx_build import ONNX_TYPES, WEIGHTS_FILE, weight_spans

    spans = weight_spans(model_path / WEIGHTS_FILE)

    def refuse(why: str) -> BackendError:
        return BackendError(f"the ONNX export {path} {why}: {_AGAIN}")

    try:
        graph = onnx.ModelProto.FromString(data).graph
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and kin
        raise refuse(f"is not an ONNX model ({exc})") from exc
    if graph.sparse_initializer:
        raise refuse("holds sparse tensors")
    for tensor in graph.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            if tensor.ByteSize() > MAX_INLINE_BYTES:
                raise refuse(f"holds {tensor.name} itself, not from the installed weights")
            continue
        where = {entry.key: entry.value for entry in tensor.external_data}
        span = spans.get(tensor.name)
        want = None
        if span is not None:
            dtype, shape, offset, length = span
            want = {"location": WEIGHTS_FILE, "offset": str(offset), "length": str(length)}
            if tensor.data_type != ONNX_TYPES[dtype] or list(tensor.dims) != shape:
                want = None
        if want is None or where != want:
            raise refuse(f"does not read {tensor.name} where the installed weights hold it")
    for node in graph.node:
        for attr in node.attribute:
            if attr.g.ByteSize() or attr.graphs:
                raise refuse(f"holds a subgraph in {node.op_type}")
            held = [attr.t, *attr.tensors]
            if attr.sparse_tensor.ByteSize() or attr.sparse_tensors:
                raise refuse(f"holds a sparse tensor in {node.op_type}")
            if any(t.ByteSize() > MAX_INLINE_BYTES or t.external_data for t in held):
                raise refuse(f"holds a tensor in {node.op_type}, not from the installed weights")


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Unit-length mean of the token states the mask keeps (as the torch path pools)."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return (pooled / norms).astype(np.float32)


class OnnxModel:
    """A verified ONNX Runtime session with its tokenizer: one text in, one unit vector out.

    Args:
        session: the ``onnxruntime.InferenceSession``.
        tokenizer: a ``tokenizers.Tokenizer`` with truncation set.
        threads: the session's intra-op threads (for ``repr`` and the benchmark).
    """

    def __init__(self, session: Any, tokenizer: Any, threads: int) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.threads = threads

    def embed_one(self, text: str) -> np.ndarray:
        """The unit vector of one text, shape ``(dim,)``."""
        encoding = self.tokenizer.encode(text)
        ids = np.asarray([encoding.ids], dtype=np.int64)
        mask = np.asarray([encoding.attention_mask], dtype=np.int64)
        (hidden,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
        return mean_pool(hidden, mask)[0]

    def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """The unit vectors of ``texts``, shape ``(len(texts), dim)``, in batches.

        Texts are sorted by length so a batch pads little; padded tokens are masked out of the
        attention and of the mean, so a text's vector does not depend on its batch.
        """
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out: np.ndarray | None = None
        for start in range(0, len(order), max(1, int(batch_size))):
            idx = order[start : start + max(1, int(batch_size))]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = encodings[i].attention_mask
            (hidden,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
            pooled = mean_pool(hidden, mask)
            if out is None:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[idx] = pooled
        assert out is not None, "embed() of no texts"
        return out

    def __repr__(self) -> str:
        return f"OnnxModel(threads={self.threads})"


def default_threads() -> int:
    """Two intra-op threads where there are two cores: they sleep while waiting, so they help
    even on a busy machine. ``benchmarks/memory_load.py`` measures them against one thread and
    against torch on one and two threads, idle and with both cores busy; two sleeping threads
    had the lowest busy p50 in every run of issue 25 (torch on two threads was 30-400x
    slower: its OpenMP threads spin)."""
    return max(1, min(2, os.cpu_count() or 1))


def load(
    model_path: Path,
    *,
    threads: int | None = None,
    folder: Path | None = None,
    max_length: int = 256,
    expected: np.ndarray | None = None,
) -> OnnxModel:
    """Open the exported model of ``model_path``, proving it before use.

    Args:
        model_path: the transformers folder the export came from (for its tokenizer and the
            identity of its weights).
        threads: intra-op threads; None: :func:`default_threads`; 0: ONNX Runtime's own
            default (one per core, spinning while waiting).
        folder: the cache folder (default :func:`cache_dir`).
        max_length: tokens kept per text (longer texts are truncated, as the torch path does).
        expected: the vectors of :data:`PROBES` computed by the torch model from the weights
            in ``model_path``, shape ``(len(PROBES), dim)``; None: :func:`shipped_probes`
            (the bundled model). Never read from the cache folder.

    Raises:
        BackendError: no export for these weights, no probe vectors to prove it with, a
            malformed sidecar, or an export whose size, checksum, weights identity, embedding
            tables or probe vectors disagree (the message says which), or onnxruntime is
            missing.
    """
    try:
        ort = require("onnxruntime", "memory", needed_by="the ONNX export of the embedder")
        tokenizers = require("tokenizers", "memory", needed_by="the ONNX export of the embedder")
    except MissingDependencyError as exc:
        # A BackendError, as documented: runtime="auto" then embeds on torch instead.
        raise BackendError(str(exc)) from exc
    path = model_file(model_path, folder)
    if not exported(model_path, folder):
        raise BackendError(
            f"no ONNX export of {model_path.name} at {path}: run `bt-raider memory prepare`"
        )
    probes = _probes(model_path, expected)
    want_sha, want_bytes = _read_sidecar(model_path, path)
    cap = MAX_EXPORT_BYTES
    try:
        # The kind and the size from stat alone: a FIFO or an 8 GiB file is never opened.
        size = regular_file(path, what="ONNX export", max_bytes=1 << 62).stat().st_size
        if size > cap or size != want_bytes:
            why = (
                f"more than any export of {model_path.name} ({cap:,})"
                if size > cap
                else (f"not the {want_bytes:,} its sidecar records")
            )
            raise BackendError(f"the ONNX export {path} is {size:,} bytes, {why}: {_AGAIN}")
        data = read_bytes(path, what="ONNX export", max_bytes=size)
    except (InputFileError, OSError) as exc:
        raise BackendError(f"the ONNX export is refused: {exc}; {_AGAIN}") from exc
    got_sha = hashlib.sha256(data).hexdigest()
    if got_sha != want_sha:
        raise BackendError(
            f"the ONNX export {path} is damaged (SHA-256 {got_sha[:12]}…, recorded "
            f"{want_sha[:12]}…): {_AGAIN}"
        )
    check_graph(data, model_path, path)
    from bt_raider.memory.onnx_build import WEIGHTS_FILE

    try:
        # The installed weights themselves, which the graph's external tensors name.
        weights = read_bytes(
            model_path / WEIGHTS_FILE, what="model weights", max_bytes=MAX_WEIGHTS_BYTES
        )
    except (InputFileError, OSError) as exc:
        raise BackendError(f"cannot read the weights of {model_path.name}: {exc}") from exc
    count = default_threads() if threads is None else int(threads)
    options = ort.SessionOptions()
    options.intra_op_num_threads = count
    options.inter_op_num_threads = 1
    if count:  # our count: threads sleep when idle, so a busy robot does not stall them
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    if not hasattr(options, "add_external_initializers_from_files_in_memory"):
        raise BackendError(
            f"onnxruntime {getattr(ort, '__version__', '?')} cannot take the weights from memory "
            "(add_external_initializers_from_files_in_memory): pip install -U onnxruntime"
        )
    options.add_external_initializers_from_files_in_memory(
        [WEIGHTS_FILE], [weights], [len(weights)]
    )
    try:
        # From the bytes just checked, not the path: a file swapped since is not what runs.
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        tokenizer = tokenizers.Tokenizer.from_file(str(model_path / "tokenizer.json"))
    except Exception as exc:  # noqa: BLE001 - any failure to open means: do not use it
        raise BackendError(f"cannot open the ONNX export {path}: {exc}") from exc
    del data, weights
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    model = OnnxModel(session, tokenizer, count)
    for text, vector in zip(PROBES, probes, strict=True):
        try:
            got = model.embed_one(text)
        except Exception as exc:  # noqa: BLE001 - a file that cannot even run is not used
            raise BackendError(f"the ONNX export {path} fails on {text!r}: {exc}") from exc
        if got.shape != vector.shape or not np.allclose(got, vector, atol=TOLERANCE):
            raise BackendError(
                f"the ONNX export {path} does not compute the model's vector for {text!r}: {_AGAIN}"
            )
    return model


#: What every refusal of an export tells the user to do.
_AGAIN = "run `bt-raider memory prepare` to export it again"


def _probes(model_path: Path, expected: np.ndarray | None) -> np.ndarray:
    """The vectors an export of ``model_path`` must give, from what the cache cannot change."""
    probes = shipped_probes(model_path) if expected is None else expected
    if probes is None:
        raise BackendError(
            f"no probe vectors to prove an ONNX export of {model_path.name} with: bt_raider "
            "ships them for the bundled all-MiniLM-L6-v2 only; pass expected= vectors computed "
            "by the torch model (TransformersEmbedder does)"
        )
    probes = np.asarray(probes, dtype=np.float32)
    if probes.ndim != 2 or len(probes) != len(PROBES) or not np.isfinite(probes).all():
        # Our caller's bug: the vectors come from our own torch path or our own package.
        raise BackendError(
            f"expected probe vectors of shape ({len(PROBES)}, dim), finite; got shape "
            f"{probes.shape}"
        )
    return probes


def _read_sidecar(model_path: Path, path: Path) -> tuple[str, int]:
    """The recorded SHA-256 and size of the export, from its checked sidecar."""
    sidecar = _sidecar(path)
    try:
        meta = read_json(sidecar, what="ONNX sidecar", max_bytes=MAX_SIDECAR_BYTES, max_depth=4)
    except InputFileError as exc:
        raise BackendError(f"damaged ONNX sidecar: {exc}; {_AGAIN}") from exc
    fields = {"format": int, "weights": str, "sha256": str, "bytes": int}
    if not isinstance(meta, dict):
        raise BackendError(f"damaged ONNX sidecar {sidecar}: not a JSON object; {_AGAIN}")
    for key, kind in fields.items():
        value = meta.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise BackendError(
                f"damaged ONNX sidecar {sidecar}: {key} is {str(value)[:40]!r}, expected "
                f"{ {int: 'a number', str: 'text', dict: 'an object'}[kind] }; {_AGAIN}"
            )
    if meta["format"] != FORMAT or meta["weights"] != weights_identity(model_path):
        raise BackendError(
            f"the ONNX export {path} was made from other weights or by another version "
            f"(format {meta['format']}, weights {str(meta['weights'])[:16]!r}): {_AGAIN}"
        )
    sha, size = meta["sha256"], meta["bytes"]
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha) or size <= 0:
        raise BackendError(
            f"damaged ONNX sidecar {sidecar}: sha256 {sha[:70]!r} or bytes {size} is not a "
            f"SHA-256 in hex and a positive size; {_AGAIN}"
        )
    return sha, size


def prepare(
    model_path: Path,
    *,
    max_length: int = 256,
    folder: Path | None = None,
    expected: np.ndarray | None = None,
) -> Path:
    """Build the ONNX model of the weights in ``model_path`` for :func:`load`; returns the file.

    The graph is written from ``model.safetensors`` and ``config.json`` by
    :func:`bt_raider.memory.onnx_build.build` (no torch). Written into a private temporary
    folder made in the cache folder, proven there by :func:`load` against the probe vectors
    (``expected``, else those shipped with bt_raider for the bundled model), then renamed into
    place, the sidecar last: a reader never sees half a file, and a symbolic link planted at
    the file's or the sidecar's name is replaced, never written through.

    Args:
        model_path: the model folder (the bundled all-MiniLM-L6-v2, or a BERT encoder).
        max_length: tokens kept per text when proving the file.
        folder: the cache folder (default :func:`cache_dir`).
        expected: the torch model's vectors of :data:`PROBES` for weights bt_raider ships no
            probes for (:meth:`~bt_raider.memory.embedder.TransformersEmbedder.probes`).

    Raises:
        BackendError: the folder cannot be written, the model cannot be built (another
            architecture: it runs on torch), or the file computes other vectors.
    """
    from bt_raider.memory import onnx_build

    _probes(model_path, expected)  # nothing to prove it with: refused before any work
    target = model_file(model_path, folder)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        sweep_leftovers(target.parent)
        # A unique name, created with O_EXCL and mode 0700: no one else's link can be in it.
        work = Path(tempfile.mkdtemp(prefix=PREPARE_PREFIX, dir=target.parent))
        _write_new(work / _OWNER, str(os.getpid()).encode())
    except OSError as exc:
        raise BackendError(
            f"cannot write the ONNX export to {target.parent} ({exc.strerror or exc}): set "
            f"{CACHE_ENV} to a writable folder"
        ) from exc
    staged = work / target.name
    try:
        data = onnx_build.build(model_path)
        _write_new(staged, data)
        meta = {
            "format": FORMAT,
            "weights": weights_identity(model_path),
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "builder": "bt_raider.memory.onnx_build",
        }
        del data
        _write_new(_sidecar(staged), json.dumps(meta).encode())
        # Proven where it was written, before it is kept.
        load(model_path, folder=work, max_length=max_length, expected=expected)
        os.replace(staged, target)
        os.replace(_sidecar(staged), _sidecar(target))
    except BackendError:
        raise
    except Exception as exc:  # noqa: BLE001 - onnx and the file system raise many types
        raise BackendError(f"cannot build the ONNX model of {model_path.name}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


#: Most bytes of a model's weights or its export read here (the encoders used: under 2 GiB).
MAX_WEIGHTS_BYTES = 8 * 2**30
#: The prefix of an export's private work folder, and the file in it naming its process.
PREPARE_PREFIX = ".prepare-"
_OWNER = "owner.pid"
#: A work folder without a readable owner is a leftover once this old (seconds).
_ORPHAN_AGE_S = 3600.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # someone else's process, or no valid pid: keep the folder
    return True


def sweep_leftovers(folder: Path) -> list[Path]:
    """Remove the work folders of exports whose process is gone (a SIGKILLed ``prepare``).

    A folder of a process still running (another ``prepare``) is left alone; one without a
    readable owner (killed between making it and writing the owner) goes once an hour old.

    Returns:
        the folders removed.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREPARE_PREFIX) or not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        try:
            owner = read_bytes(path / _OWNER, what="work folder owner", max_bytes=32)
            gone = not _alive(int(owner.decode("ascii").strip()))
        except (InputFileError, ValueError, UnicodeDecodeError):
            try:
                gone = time.time() - entry.stat(follow_symlinks=False).st_mtime > _ORPHAN_AGE_S
            except OSError:
                continue
        if gone:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    if removed:
        logger.info("removed %d leftover export folder(s) in %s", len(removed), folder)
    return removed


def _write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to a file that must not exist yet (never through a link)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


#: The bundled all-MiniLM-L6-v2 the shipped probe vectors were computed from (torch 2.13, CPU):
#: the weights' size in bytes, and the SHA-256 of the files that decide the tokens and shape.
_BUNDLED_FILES: dict[str, int | str] = {
    "model.safetensors": 90868376,
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: The :data:`PROBES`' unit vectors by the torch model of those weights: float32,
#: little-endian, base64, one row per probe (compared at :data:`TOLERANCE`).
_BUNDLED_PROBES = (
    "JMRlvcDItzyLQii93olsvATCYToCpwu9t5iZPSk8vTywlcI8pswEPDbdkT240ze8p2oKPRPV1TvT4qE8rV6OPKo/"
    "GzuzHOk8DEglvREparwwLIy8AvkBvDO37jsz8sQ7XAqQvYxV0z0LhFA9ml64vVuX67wHYt69wNwtvEfYN7sq4II8"
    "OUD2uyAJmTsc02Q9veAovZNCBDznpVw8njYHvXd7wLyERYS9HDiTPaq2m72n8Y08xX8IPtb0pzxWsLi9kgLPPT6E"
    "CD0kl/G9mNnGu+ig1zvnfcQ8mYvPvKjzR7wsly09ReQZPDUYLz0FXI296SicPCrJRr0zzyY8IQi0PdKSCz0DbDK8"
    "ukugvQFoA76nEpK8Cc08PBFY1jzkt788RT08PYiv07vhEXm8svuGve/dVT1VyCO9F/V0PQvnLT2ysxs85rCKvcSS"
    "dr2NuaI9jnQ+vBzRkz2Dwak9FnGgPGku5byCUBs9UeLRvGPWBL2MKPO6xt9FvIQ9770JJp07LjtgvRjyMr0MIhC9"
    "KvYtPsgBOzxqSGi7/GAYvHVClTvFMkK8ELfcvB9elDxWRv+8vfSsPSLJfDzqcQK6Zz/qvcUBmjz5B6A9KIwvPUBe"
    "H72bEwm8855NPSOnbrx6PO48rkzCPdqrOr2TaaO8GwswPW7/Cz2s1US9Vm85PC3pJopLhPs7yb4hvemluj2l8te8"
    "2R+tuqYv+TzdsWg8IU6OPCEqpLw6zcE8QpOMvSL1OLwj87+9KNJfPXfSlzydrHi8ZUYxPVN3I7xc0aK9ObyCPXgN"
    "XT2Sw809CJnDvAVrCz2kn0C8xgt3vESIuzknwe68qaxDPSufGT29W5S9dlzaPXuwU72cDdI9CKYJPPMyTb16xH+9"
    "T3WJvYgo/rzbz2m8qS1BvPKCcjyzIpW8R11HvalvEb3b/Ya8X21YPfP3gzxTI+c7Xr6mOs41gjxYImw97nAHPB4T"
    "OTxiHrc8zO65vUEsjzzLVnE8+extvS2xBbx82UA9mLi1PTip3DxoA8Q9fPeJPTowp7zMtlE9Ms7JvCrMuT15Go48"
    "QIZJvUqGTb148yI9CpWUPPdrF71rnMg88oipvFqpYr2FcwK9B2wpvfwXjb1pT9I7QVi+vLJiGj3u7+E802bCPNJE"
    "gr24stm8ZF/sPHFXOzyCjVq9BgSnvZDocL39KJ09nzHCvaPj9wkjzRY89TSKvGkMMz2Xql09rgnxPMf8gr3qgTq8"
    "63eWPDeV4bzbFJ894VJTvcWAbb3R35E93JhQPYPw0j04W+Q8+CMePUI9L71ZPO27WqBOu1LzbrwKOFs9M/ECvc9B"
    "xbwOmqY8/jmSPeGVKz1BEou7ZhxTvWhXlLvWlk69ljnSvPKRnLoow9o8iZfFPFuIDD2xEy29DwyNvPJlpDwuPYC9"
    "U1hxPaaY7Lzk9Qg8TPKKPbMvJT3kgA6+AYzAvNenmz3mxlA8yAsJPVfMjb3etSE8lCMUPO0Px73SEaG8T/MTPXxI"
    "nL3agsa7e3NkPYIPrDx1WsW8FxMMvKSU1zvgvt49nnjyvTRZgT3CMZ08GC1SPL2SeDyzbxG9+hrJPUVFTj1cPdA8"
    "rXgJPX5yQjwfwOw8EhBcvct7YznAGIQ9n3qOvdtsnb2JnSm9HHWPPL91/T3HH2O9nA2CPWo+5rt6SUq9QGaFu0cZ"
    "L7sfcpc8c23zPAAkzDxOPCQ8y93Wval+ZbIu0jM82FpKvK83jjy325a94aeVPVUjQD1nN6U7+9Y/vfxqir2Irpq8"
    "t1jbPC9tNDznaZE9d/Z+PSI/GD1QyAs9FFCdPNhjTDuUAxS9H+rYPHOIsD25CdK9hqwlPaXVez2D03m9+5cMvcnZ"
    "0L0+0j08F/BevUFgTT085O26e/AEvIlho7zI5Wy8KTAvPVFxQDzsgfO835k0vSOqobxPSVa8bnaLPadk+D0iFw48"
    "xPG/PHwA8DuwvLy8hAEmvSaJNb5zOWe9t0gZvRRrJ71SwJ+7zxgbvGKH0T3M0bw9isGqvOnLJD3C5YW9iIcOvo7x"
    "oz3Q8rY8oLaXPSpQQD11YxK8/O9CvF/ZIb12G6s82Rqpu/ERC73/7C29uECGPU/tDDxihUc9m5IOvHW6i71yRhW+"
    "sf2svdJOZj1TIWO9R9LovXO6z7xJoY+69SYcPQjz1Dy9B5A9WAmMvVrelz0XlgS9BEENPfihqj1mfJ49sZbdvPPI"
    "grxAzJA9HQEqPBAsEDzA1Mu9bER7vUmIu73vn7O8xC+gPAhb4TwSj4k9vIuwuxZ8Mj3E5Qm9BrKSPfV+KjzPztE8"
    "psL5PM1c+Dvhw0w9i19LPYIfLzyRt0y93CkRPUyJRT3v8Io7b3QGPTQMnTwUvcI9bQKgu6kqtDyr4cA9uF57vGP0"
    "hrzMPAG91I+JPehA+DobVAI89GQtPHWTxT0jVBC89wV0PbyhUr22BkU9bN8Cu70UED1ras88h2c/vWujYj0aUna9"
    "Jcr5vOUu+j2U38e9n21cPWSj0zwc2/E9+W/PvEH1ET1U8ng90ilLvXcXpLzLRpu9oh5Wvb5ZlDs9ssi8UULnOPqP"
    "rz0hNjk8elA/vKk/UztzxE29Ah7JPUcmH71utp66HpEDvcyoczxfjuY9LFv8PFW6Er07wtm7BZBBPXBvFL0m/648"
    "mQT+uwDSELwvNSY9wAxSvWBSd71bbLI7M1ogO/K3G73rdB+8SRqPvPcFoLyH07a9eLpuvNn5VL1QXWE7PLMLPfq8"
    "n4nmwNy8U2mYvHAbmj3jQke9SQ6jPZZX67zBDRA9fl86PWjTCjxTk+89hBu9PRwUi70nf9C92LuWOqSxhbwSOA69"
    "A/AoPBctJT1vL2O9Xe1WvagspDxwDFa9GIXVvEF/WD2M/g29Nn6EPcQbyrvZzBu8d+BwPe5rEjyYpQC8pioIPO2V"
    "ATsFtwO9RfhIvYBsZr0Kg428agYtvEcq+brZCGm9PZSHvTNYBT0UhwG8BrmQPMoqKb3bJts8QM9svXC4fT180FM9"
    "uM3ZPBHNSzwsIWK8umYKvfhVhz14Zrm8g5KrvVLWCr0SEJ+8brZiPQ/dFb0AaCW9ShIivb7ebL0YpH4903q7PJpa"
    "nTwll6k8OhJLvG705z3IL469mcMsvRCygTxFrVy9kXM8PUwh8bzJMhe8++hbPSXGi7x51rM7Sr1kuw390z1Dbqu8"
    "/H+/vNzcVT1AvUE9dlUxPTD2hL3xm2e9K9FiPc53Krr9ILu9uwgqvddXQT2OSua9OK/DvZiGrAkdxa09w4vrOwsS"
    "070U3l89mzrVPMh1Vb3VDOo8UiJ1OmiP4zzfHHs80wkNvVOM6zxzNxs8ChdKPbgsfj13eSU9Ic+FPZFeVz2yLKy8"
    "Sdm0PaZApjvwZuo8HuuCPThezLuPSBa9iNeBO9KOzT3Lhai87mYjvlu5k7xLvJk7rMWevU/9C7xKPa68hwx2vP2y"
    "wbcevZU8QCuNvfX9i70MEDU9cJY/PB1iwLxtfAw9zxGSPd0sjbtfW0O8GOUTvU11PT2SEE29XSGCPbmW7bwTnOm8"
    "gVzCPBm64LvuVvq8M4iGvZpnEz5g0B++MsoyPUuf0TwnEp47IlvaPR/Zw7zb1Wc9yxsJO3nu/bwaWbS98ndIPaFc"
    "Ez1DavW7TjyHvIhTCbwt6/c9vteJvcrWgz1jTa+8G1CSvLSIojxHtz+97d91vYTgBLoa65g8qLxVPRBdgLvPbr88"
    "fS2Wvfd/fT0s5zS94771vDu0Nz0/iK29EQZrvBU1KTy3DlI89o24Pb7Wt7IpjJc8pwVLPUXemj3pkeg8G8T2PPaV"
    "ED3SoO+97iBuu0UbGLzAR9y8/sQDPAKwbzzaQyo92jYxPdOwpbz2MBg9uxEOPX58+7wAy9e97FPZPC0OubzL9Ic7"
    "lXSpPXjs/Dyb22Q9lzRhPPZRhzySnHc9rdj+OQTj6zzhlRm6ZyD8PLjmLL1rgcc9wrj/vNgviTzpdbu947aDO71u"
    "3LuQVk29HjbpvXr7urwUWpy9ASNzPeqc2b0N/Sk8V3VSve5sRD1JcCy97s+pPSLX/rvPiv68aQMbPdPNZT1Gx4o9"
    "B36xvEwmGjvmhEA8nHcCvaVaGz04wEU9xnojPaBUYb0WSHG94B5uPVZAED3viz49oKOrO8s06LvyVH49753dPRUc"
    "j72Lwfq8o6pru0HwMjxZlcq7KlRCPbrOQr1ez5I8ASyKOyqj7D1Twtu94v9SPPIhnzsVmxq9Td2BukAk4Dq4Wj09"
    "ngd5PHeS8zxIpNO8I8YkPUpVKz0P52i9crVLvK59Aj6qgiQ98iZPvda3CT2z9VG9VZ84PMpoV73SvA89tnj6vGMK"
    "SDuyDP69lH63vY/RA7tlBWU9Nr5IvMTHoLy9EJY8ftWJO115rbzBDWW8Tr0DveFj4Dwzo4u9uWVTvZ+ourzARmG9"
    "8z8NPaCpjj1bMS09tah2Pe8kQr2ZsrY6Y6mQPfHtJrzajT+7FSSkveJCTr2IgGC99mAEvVYclrvbsRm99QdhPVLQ"
    "s7yaC6E8EPYmPKyRPz1PE1W9CYKxvBnKjLxPFEq90XEZPPKrDbwc3Js9+KNevRIadL0TwZa8/qlPvS6a4zzEbqS8"
    "X0R1vcH8Dz3MLtK8iRskvWFmkDwG7OG8BpKHOwe/grxhK7C9K1q+PYrHOzt1eeM91LdPOUlbR7wVo/e8WIudvB9O"
    "gzzU7jo8KzTdPcW4UzzmTZe8ANSpvHBWnDxbTs28ZU+EvfFyNjy66c+8giCuvG2obT2CiqE7/RwevOuQNj0EHZg8"
    "nIoHOlbwQb3sMlG8Q8siPahfXImCi5W9yDAoPbWTcLxEqKQ9Rzr2PbA2mb0mTyO9qf5FPE2N1ryweA89wDxAvFK/"
    "Zz1dtjY7o2IdPQ7jGjxrQug7un2dvLZr2Lx2sdi7Nwkevdik+rpHsEW9c8eIPFMnEzwQF1Y8sw6ePf7IUD1FvnU8"
    "6WrrPWe9lD0Z+KK8WbL/PNcC8rxOCgs8JZvZvX3pm71PHLK90KXQvMkYtL2l5wA88Z1Xvffd67tEJym9s7s6vcig"
    "bL3htr09MneVPb/dKTxaVSm7rtOvPfdL2b3GqY284rWKvZ1mPz3CuR+9xIqbvWXWXL0vY/88xZMJup9mG725sXs9"
    "z+gaPTv5MDyD8GU8wtWou26b9rtR/MY6TnMyvcG1kT1J9I08yANrPaXhUT1LIo09NIuLPPcXVbyX8Ga8CKsGvVbm"
    "jzv3Oc+8et7MPCo1ST2sPf+7t0e+PHx+Ib3U+L88VpRzPaNjPT0GXNW9QLUuvYrQoz0h1jC+EFoSPZoSRjyYnUk8"
    "nQmavLVptgd+g8Y9SOiKvMeNkTyg1p28RI4hvEvUw7qwhWY9stZlvElEaTy094c9pq0NvZyZiD3/SJw952sFPVXK"
    "X7yRZhg9cegvPYqthr0Z02G9k6/ZPNGci71jRlE8GznbvRLTwz2KdRw97DdEPdthJz2HkVc9KRCIvMGwXr1xpPK9"
    "1CTcvKJqSTwa1u090R5BPK3cmj0d8PG8XNkLPY3q0bzEh2892FoRPEvAi73Ae8G9Ku9kPE0K6Dy0zay9Xr1evKFs"
    "ob3GbTI8EumuvcvRBT5se6k8mEd6vXZ8yTySe0A7zWe/PbklYT0cIWA8ibfIvEB0ubw421U9p4lJPWbqzjy+TE09"
    "4K4WPbWqlb0qk1O8ZdqMvaIIPTsU4U+9tkHpPGTaszw9+mm9Z6kbPcg7/r1GNC09TEqvPY20GjuhTnG9fMgjvZgE"
    "cT1VAWi9kTuePXlK3T2sRMk8wdkKPIeDdT3kCvg8fNpgPMyDxj34GFe76hspPS2a872/Lz09+rAmvYYjkLKkxIi8"
    "LAWCveEIPzs8bjM9dc/bPA0ShLx3yYO8XzAyvB3QUb3zegY9Q2zNvGOaJLtGaGW9SPkcPmkearyr7Fg8QxXHvOM9"
    "fD16TsC83OKHOqA1KjzeZqi8O+LBPFkWcr2qwfU7rt/cvauuLb1Pbmc9XBWbO/b8zr2+Bjm9hlTLPEyUY73qkBu9"
    "ylkRPSrJO7zdNf28CdoiPZTxV732EN47zuc2vdl62b2cqOK8Eu6Rvbh6Xb2we0C8NkyDvRGoAr2WbRC9AfyWPZGd"
    "u7uhTT28lki+Peexlj1sDpI8WYCcvVfCxrwign286XVJPHfGjjzj5KM9xWmAPXj0DTwwAqy9"
)
