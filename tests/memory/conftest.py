"""Fixtures for the memory tests: the real bundled MiniLM (loaded once) and a tiny
deterministic embedder for rule logic."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest


class HashEmbedder:
    """Bag of words hashed into 64 dimensions, normalised: sentences sharing words are close.

    Deterministic and instant; used where a test is about rule logic, persistence or the
    store, not about what MiniLM thinks.
    """

    name = "test-hash-64"
    dim = 64

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                h = int(hashlib.md5(word.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture(scope="session")
def minilm():
    """The real bundled all-MiniLM-L6-v2, loaded once for the whole session."""
    from bt_raider.memory.embedder import TransformersEmbedder

    embedder = TransformersEmbedder()
    embedder.setup()
    return embedder


@pytest.fixture(scope="session")
def minilm_path():
    """The folder of the bundled all-MiniLM-L6-v2 (no torch loaded)."""
    from bt_raider.memory.embedder import bundled_model_path

    return bundled_model_path()
