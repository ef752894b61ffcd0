"""The embedding model as an ONNX Runtime session: a query's vector at about half the cost.

One short query through all-MiniLM-L6-v2 is a chain of small matrix products; ONNX Runtime
on two threads runs it in under half the time of the traced torch model on one, idle or with
both cores busy, because its threads sleep instead of spinning while they wait (torch's OpenMP
threads collapse on a busy machine: issue 11, ``benchmarks/memory_load.py``).

The model is exported once per machine, never at run time of a robot: ``bt-raider memory
prepare`` (or :func:`prepare`) exports the weights with ``torch.onnx`` into the cache folder,
with a sidecar recording the file's SHA-256, the identity of the weights it came from and the
vectors of :data:`PROBES` computed by the torch model. :func:`load` trusts a file only when
all three still agree -- a damaged, foreign or stale file is refused (the embedder then runs
on torch), never used.

Only ``onnxruntime`` and ``tokenizers`` are needed to load and run; the export also needs
``torch``, ``onnx`` and ``onnxscript`` (all in the ``[all]`` extra).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bt_raider.errors import BackendError, MissingDependencyError, require

#: Environment variable naming the cache folder (default: ``$XDG_CACHE_HOME/bt_raider``).
CACHE_ENV = "BT_RAIDER_CACHE"
#: Texts whose vectors the sidecar keeps, to prove a loaded file computes the model's vectors.
PROBES = ("the robot", "put the mug in the sink and turn on the tap, then bring me a spoon")
#: Largest difference from the torch model's vector a probe may show (float32 rounding).
TOLERANCE = 1e-5
#: The sidecar's format; a file written by another format is exported again.
FORMAT = 1


def cache_dir() -> Path:
    """Where exported models live: ``$BT_RAIDER_CACHE``, else ``$XDG_CACHE_HOME/bt_raider``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "bt_raider"


def weights_identity(model_path: Path) -> str:
    """A short hash naming the weights and configuration of ``model_path``.

    Built from each file's name, size and modification time (reading 90 MB of weights on
    every start would cost more than the session saves); the file's own SHA-256 in the
    sidecar guards the exported copy itself.
    """
    digest = hashlib.sha256()
    for name in sorted(os.listdir(model_path)):
        item = model_path / name
        if item.is_file():
            stat = item.stat()
            digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    digest.update(str(model_path.resolve()).encode())
    return digest.hexdigest()[:16]


def model_file(model_path: Path, folder: Path | None = None) -> Path:
    """The exported model's path for the weights in ``model_path``."""
    return (folder or cache_dir()) / f"{model_path.name}-{weights_identity(model_path)}.onnx"


def _sidecar(onnx_path: Path) -> Path:
    return onnx_path.with_suffix(".json")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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

    def __repr__(self) -> str:
        return f"OnnxModel(threads={self.threads})"


def default_threads() -> int:
    """Two intra-op threads where there are two cores: they sleep while waiting, so they help
    even on a busy machine (measured in ``benchmarks/memory_load.py``)."""
    return max(1, min(2, os.cpu_count() or 1))


def load(
    model_path: Path,
    *,
    threads: int | None = None,
    folder: Path | None = None,
    max_length: int = 256,
) -> OnnxModel:
    """Open the exported model of ``model_path``, proving it before use.

    Args:
        model_path: the transformers folder the export came from (for its tokenizer and the
            identity of its weights).
        threads: intra-op threads; None: :func:`default_threads`; 0: ONNX Runtime's own
            default (one per core, spinning while waiting).
        folder: the cache folder (default :func:`cache_dir`).
        max_length: tokens kept per text (longer texts are truncated, as the torch path does).

    Raises:
        BackendError: no export for these weights, or one whose checksum, weights identity or
            probe vectors disagree (the message says which), or onnxruntime is missing.
    """
    try:
        ort = require("onnxruntime", "memory", needed_by="the ONNX export of the embedder")
        tokenizers = require("tokenizers", "memory", needed_by="the ONNX export of the embedder")
    except MissingDependencyError as exc:
        # A BackendError, as documented: runtime="auto" then embeds on torch instead.
        raise BackendError(str(exc)) from exc
    path = model_file(model_path, folder)
    sidecar = _sidecar(path)
    if not path.is_file() or not sidecar.is_file():
        raise BackendError(
            f"no ONNX export of {model_path.name} at {path}: run `bt-raider memory prepare`"
        )
    try:
        meta = json.loads(sidecar.read_text())
        want_sha, probes = str(meta["sha256"]), meta["probes"]
        fmt, identity = int(meta["format"]), str(meta["weights"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BackendError(f"damaged ONNX sidecar {sidecar}: {exc}; run prepare again") from exc
    if fmt != FORMAT or identity != weights_identity(model_path):
        raise BackendError(
            f"the ONNX export {path} was made from other weights or by another version "
            f"(format {fmt}, weights {identity}): run `bt-raider memory prepare` again"
        )
    got_sha = _sha256(path)
    if got_sha != want_sha:
        raise BackendError(
            f"the ONNX export {path} is damaged (SHA-256 {got_sha[:12]}…, recorded "
            f"{want_sha[:12]}…): run `bt-raider memory prepare` again"
        )
    count = default_threads() if threads is None else int(threads)
    options = ort.SessionOptions()
    options.intra_op_num_threads = count
    options.inter_op_num_threads = 1
    if count:  # our count: threads sleep when idle, so a busy robot does not stall them
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        tokenizer = tokenizers.Tokenizer.from_file(str(model_path / "tokenizer.json"))
    except Exception as exc:  # noqa: BLE001 - any failure to open means: do not use it
        raise BackendError(f"cannot open the ONNX export {path}: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    model = OnnxModel(session, tokenizer, count)
    for text, vector in zip(PROBES, probes, strict=True):
        got = model.embed_one(text)
        if got.shape != (len(vector),) or not np.allclose(got, vector, atol=TOLERANCE):
            raise BackendError(
                f"the ONNX export {path} does not compute the model's vector for {text!r}: "
                "run `bt-raider memory prepare` again"
            )
    return model


def prepare(
    model_path: Path, tokenizer: Any, model: Any, *, max_length: int, folder: Path | None = None
) -> Path:
    """Export ``model`` (a loaded transformers encoder) for :func:`load`; returns the file.

    Written to a temporary file and renamed, with the sidecar last, so a reader never sees half
    a file. The export is checked against the torch model on :data:`PROBES` before it is kept.

    Raises:
        BackendError: the export failed or computes other vectors than the torch model.
    """
    torch = require("torch", "memory", needed_by="bt-raider memory prepare")
    require("onnx", "memory", needed_by="bt-raider memory prepare")
    require("onnxscript", "memory", needed_by="bt-raider memory prepare")
    target = model_file(model_path, folder)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(suffix=".onnx", dir=target.parent)
    except OSError as exc:
        raise BackendError(
            f"cannot write the ONNX export to {target.parent} ({exc.strerror or exc}): set "
            f"{CACHE_ENV} to a writable folder"
        ) from exc
    os.close(handle)

    # Named inputs in, token states out. torch comes from require() (an optional extra), so
    # mypy sees its Module as Any: it can neither name it nor check a class made from it.
    class _Hidden(torch.nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask)[
                "last_hidden_state"
            ]

    example = tokenizer([PROBES[1]], return_tensors="pt", truncation=True, max_length=max_length)
    length = torch.export.Dim("tokens", max=max_length)
    shapes = {"input_ids": {1: length}, "attention_mask": {1: length}}
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "torchvision is not installed" notes: not ours to act on
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                _Hidden(model).eval(),
                (example["input_ids"], example["attention_mask"]),
                input_names=["input_ids", "attention_mask"],
                output_names=["last_hidden_state"],
                dynamic_shapes=shapes,
                dynamo=True,
                verbose=False,
            )
            program.save(tmp)
            probes = []
            for text in PROBES:
                batch = tokenizer(
                    [text], return_tensors="pt", truncation=True, max_length=max_length
                )
                hidden = model(**batch).last_hidden_state.numpy()
                probes.append(mean_pool(hidden, batch["attention_mask"].numpy())[0].tolist())
        meta = {
            "format": FORMAT,
            "weights": weights_identity(model_path),
            "sha256": _sha256(Path(tmp)),
            "probes": probes,
            "torch": str(torch.__version__),
        }
        os.replace(tmp, target)
    except Exception as exc:  # noqa: BLE001 - the exporter raises many types
        raise BackendError(f"cannot export {model_path.name} to ONNX: {exc}") from exc
    finally:
        quiet.setLevel(level)
        if os.path.exists(tmp):
            os.unlink(tmp)
    sidecar = _sidecar(target)
    tmp_meta = sidecar.with_suffix(".json.tmp")
    tmp_meta.write_text(json.dumps(meta))
    os.replace(tmp_meta, sidecar)
    try:
        load(model_path, folder=folder, max_length=max_length)  # prove it like any other file
    except BackendError:
        for made in (target, sidecar):
            made.unlink(missing_ok=True)
        raise
    return target
