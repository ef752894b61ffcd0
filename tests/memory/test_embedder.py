"""Embedders: the real bundled MiniLM, and the OpenAI-compatible endpoint over real HTTP."""

from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.errors import BackendError
from bt_raider.memory.embedder import (
    MINILM_NAME,
    SMALL_BATCH,
    THREADS_ENV,
    OpenAIEmbedder,
    TransformersEmbedder,
    bundled_model_path,
    make_embedder,
    normalise,
)


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_minilm_vectors_are_unit_length_and_384_wide(minilm):
    v = minilm.embed(["turn on the hall light", "pick up the apple", ""])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0, atol=1e-5)


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_minilm_puts_on_and_off_close_together_and_unrelated_far(minilm):
    on, off, apple = minilm.embed(
        ["Can you turn on the hall light?", "Can you turn off the hall light?", "slice the bread"]
    )
    assert float(on @ off) > 0.85  # the paper's problem: opposite commands look alike
    assert float(on @ apple) < 0.4


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_batched_embedding_matches_one_by_one(minilm):
    texts = ["open the fridge", "put the mug in the sink and turn on the tap", "go"]
    batch = minilm.embed(texts)
    single = np.vstack([minilm.embed([t]) for t in texts])
    assert np.allclose(batch, single, atol=1e-5)


def test_model_loads_lazily_and_dim_comes_from_config_without_weights():
    e = TransformersEmbedder(bundled_model_path())
    assert not e.loaded
    assert e.dim == 384 and e.name == MINILM_NAME  # read from config.json
    assert not e.loaded


def test_make_embedder_specs(tmp_path):
    assert make_embedder(None).name == MINILM_NAME
    assert make_embedder("minilm").name == MINILM_NAME
    assert isinstance(
        make_embedder("openai:text-embedding-3-small", base_url="http://x"), OpenAIEmbedder
    )
    with pytest.raises(BackendError, match="unknown embedder 'nope'.*minilm"):
        make_embedder("nope")
    empty = tmp_path / "model"
    empty.mkdir()
    with pytest.raises(BackendError, match="config.json"):
        _ = TransformersEmbedder(empty).dim


def test_normalise_keeps_zero_rows():
    out = normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0]])


class _Embeddings(BaseHTTPRequestHandler):
    """A minimal OpenAI-compatible /v1/embeddings endpoint (deterministic vectors)."""

    requests: list[dict] = []
    fail = False

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if type(self).fail:
            self.send_response(400)
            payload = {"error": {"message": "model not found", "type": "invalid_request_error"}}
        else:
            self.send_response(200)
            data = [
                # Reversed order on purpose: the client must sort by index.
                {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                for i, t in reversed(list(enumerate(body["input"])))
            ]
            payload = {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        raw = json.dumps(payload).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    _Embeddings.requests = []
    _Embeddings.fail = False
    server = HTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_embedder_over_http_batches_orders_and_normalises(endpoint):
    e = OpenAIEmbedder("tiny-embed", base_url=endpoint, batch_size=2)
    v = e.embed(["a", "abc", "abcd"])
    assert len(_Embeddings.requests) == 2  # batches of 2
    assert _Embeddings.requests[0]["input"] == ["a", "abc"]
    assert v.shape == (3, 3) and e.dim == 3
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)
    expected = normalise(np.array([[1.0, 1.0, 0.0], [3.0, 1.0, 0.0], [4.0, 1.0, 0.0]]))
    assert np.allclose(v, expected, atol=1e-6)
    assert e.name == "openai:tiny-embed"


def test_openai_embedder_error_is_a_backend_error(endpoint):
    _Embeddings.fail = True
    e = OpenAIEmbedder("missing-model", base_url=endpoint)
    with pytest.raises(BackendError, match="missing-model.*failed"):
        e.embed(["x"])


def test_openai_embedder_without_key_or_base_url_says_how_to_fix(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        OpenAIEmbedder().embed(["x"])


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_a_query_runs_on_one_thread_and_torch_is_left_as_it_was(minilm):
    import torch

    seen: list[int] = []
    hook = minilm._model.register_forward_pre_hook(
        lambda module, inputs: seen.append(torch.get_num_threads())
    )
    before = torch.get_num_threads()
    try:
        query = TransformersEmbedder(trace=False)  # the eager model, which the hook sees
        query.setup()
        single = query.embed(["turn on the hall light"])
        query.embed([f"sentence {i}" for i in range(SMALL_BATCH + 1)])  # a bulk batch
        TransformersEmbedder(num_threads=2).embed(["turn on the hall light"])
    finally:
        hook.remove()
    assert seen == [1, before, 2]
    assert torch.get_num_threads() == before  # the process-wide count is restored
    # One thread computes the same vectors as torch's default.
    assert np.allclose(single, minilm.embed(["turn on the hall light"]), atol=1e-5)


def test_thread_count_option_and_environment(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    e = TransformersEmbedder()
    assert e.threads_for(1) == 1 and e.threads_for(SMALL_BATCH + 1) is None
    assert TransformersEmbedder(num_threads=0).threads_for(1) is None  # torch's own
    assert TransformersEmbedder(num_threads=3).threads_for(1000) == 3
    monkeypatch.setenv(THREADS_ENV, "2")
    assert TransformersEmbedder().threads_for(1) == 2
    assert TransformersEmbedder(num_threads=1).threads_for(1) == 1  # the option wins
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(BackendError, match="BT_RAIDER_EMBED_THREADS='many' is not a number"):
        TransformersEmbedder()
    with pytest.raises(BackendError, match="num_threads is -1: expected 0"):
        TransformersEmbedder(num_threads=-1)


# ------------------------------------------------------------------------- the traced query path


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_setup_traces_single_texts_and_the_trace_gives_the_eager_vectors(minilm):
    assert minilm.traced
    eager = TransformersEmbedder(trace=False)
    eager.setup()
    assert not eager.traced
    long = "pick up the red mug that is on the counter next to the sink " * 60  # truncated
    for text in ["turn on the hall light", "go", "", long, "ÜBER café – naïve 🤖", "a\nb\tc"]:
        assert np.allclose(minilm.embed([text]), eager.embed([text]), atol=1e-5), text
    # Batches (more than one text) run on the eager model, padded: the same vectors.
    texts = ["open the fridge", "put the mug in the sink and turn on the tap", "go"]
    assert np.allclose(
        minilm.embed(texts), np.vstack([minilm.embed([t]) for t in texts]), atol=1e-5
    )


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=0, max_size=120))
def test_traced_and_eager_agree_on_any_text(minilm, text):
    eager = TransformersEmbedder(trace=False)
    got, want = minilm.embed([text]), eager.embed([text])
    assert got.shape == (1, 384)
    assert np.allclose(got, want, atol=1e-5)


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_lazy_embedding_never_traces(minilm):
    lazy = TransformersEmbedder()
    lazy.embed(["turn on the hall light"])  # loads on first use, as a one-shot command does
    assert lazy.loaded and not lazy.traced
    lazy.setup()
    assert lazy.traced


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_a_model_that_cannot_be_traced_stays_eager(minilm, monkeypatch, caplog):
    import torch

    from bt_raider.memory import embedder as module

    def refuse(*args, **kwargs):
        raise RuntimeError("this architecture cannot be traced")

    monkeypatch.setattr(module, "_TRACED", {})  # trace afresh, then forget it
    monkeypatch.setattr(torch.jit, "trace", refuse)
    fresh = TransformersEmbedder()
    with caplog.at_level("WARNING", logger=module.__name__):
        fresh.setup()
    assert fresh.loaded and not fresh.traced
    assert "cannot trace the embedding model (this architecture cannot be traced)" in caplog.text
    vector = fresh.embed(["turn on the hall light"])
    assert np.allclose(vector, minilm.embed(["turn on the hall light"]), atol=1e-5)


@pytest.mark.slow  # the real bundled MiniLM (loaded once per session)
def test_a_trace_that_differs_from_the_eager_model_is_not_used(minilm, monkeypatch, caplog):
    import torch

    from bt_raider.memory import embedder as module

    real_trace = torch.jit.trace

    def trace_of_a_changed_copy(model, *args, **kwargs):
        changed = copy.deepcopy(model)
        with torch.no_grad():
            changed.encoder.layer[0].intermediate.dense.weight.mul_(1.5)  # not the model in use
        return real_trace(changed, *args, **kwargs)

    monkeypatch.setattr(module, "_TRACED", {})
    monkeypatch.setattr(torch.jit, "trace", trace_of_a_changed_copy)
    fresh = TransformersEmbedder()
    with caplog.at_level("WARNING", logger=module.__name__):
        fresh.setup()
    assert not fresh.traced
    assert "differs from the eager one" in caplog.text
