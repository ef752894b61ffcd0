"""The embedding model on ONNX Runtime: exported once, proven on every open, refused when not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_raider.errors import BackendError
from bt_raider.memory import TransformersEmbedder, onnx_model

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install '.[memory]')")
pytestmark = pytest.mark.slow  # the real bundled MiniLM, exported once per session (~20 s)


@pytest.fixture(scope="session")
def exported(minilm, tmp_path_factory):
    """A folder holding a proven ONNX export of the bundled model."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    path = onnx_model.prepare(
        minilm.path, minilm._tokenizer, minilm._model, max_length=minilm.max_length, folder=folder
    )
    assert path.parent == folder and path.with_suffix(".json").is_file()
    return folder


@pytest.fixture
def copy_of(exported, tmp_path):
    """A private copy of the export, free to damage."""
    folder = tmp_path / "cache"
    shutil.copytree(exported, folder)
    return folder


@pytest.fixture
def onnx_embedder(exported, monkeypatch):
    monkeypatch.setenv(onnx_model.CACHE_ENV, str(exported))
    embedder = TransformersEmbedder()
    embedder.setup()
    return embedder


def test_auto_runs_single_texts_on_onnxruntime_once_prepared(onnx_embedder, minilm):
    assert onnx_embedder.runs_on == "onnxruntime"
    assert minilm.runs_on == "torch (traced)"  # the tests' own cache folder is empty
    texts = ["turn on the hall light", "go", "", "ÜBER café – naïve 🤖", "a\nb\tc"]
    texts.append("pick up the red mug that is on the counter next to the sink " * 60)  # truncated
    for text in texts:
        got = onnx_embedder.embed([text])
        assert got.shape == (1, 384) and got.dtype == np.float32
        assert np.allclose(got, minilm.embed([text]), atol=1e-5), text
        assert abs(float(np.linalg.norm(got)) - 1.0) < 1e-5


def test_small_batches_run_on_onnxruntime_and_large_ones_on_torch(onnx_embedder, minilm):
    few = ["open the fridge", "put the mug in the sink", "go"]
    many = [f"bring the cup number {i} to the table" for i in range(12)]
    assert np.allclose(onnx_embedder.embed(few), minilm.embed(few), atol=1e-5)
    assert np.allclose(onnx_embedder.embed(many), minilm.embed(many), atol=1e-5)
    assert onnx_embedder.loaded  # more than SMALL_BATCH texts loaded the torch model


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=0, max_size=120))
def test_onnxruntime_and_torch_agree_on_any_text(onnx_embedder, minilm, text):
    assert np.allclose(onnx_embedder.embed([text]), minilm.embed([text]), atol=1e-5)


def test_a_damaged_export_is_refused_and_auto_falls_back_to_torch(copy_of, minilm, monkeypatch):
    path = onnx_model.model_file(minilm.path, copy_of)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the middle of the weights
    path.write_bytes(bytes(data))
    with pytest.raises(BackendError, match="is damaged .*SHA-256.*run `bt-raider memory prepare`"):
        onnx_model.load(minilm.path, folder=copy_of)
    monkeypatch.setenv(onnx_model.CACHE_ENV, str(copy_of))
    fallback = TransformersEmbedder()
    fallback.setup()
    assert fallback.runs_on == "torch (traced)"
    text = "turn on the hall light"
    assert np.allclose(fallback.embed([text]), minilm.embed([text]), atol=1e-5)


def test_an_export_that_computes_other_vectors_is_refused(copy_of, minilm):
    sidecar = onnx_model.model_file(minilm.path, copy_of).with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    meta["probes"][1] = list(-np.asarray(meta["probes"][1]))  # checksum intact, vectors not
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(BackendError, match="does not compute the model's vector for 'put the mug"):
        onnx_model.load(minilm.path, folder=copy_of)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("weights", "0123456789abcdef", "made from other weights"),
        ("format", 0, "by another version"),
        ("sha256", None, "damaged ONNX sidecar"),
    ],
)
def test_a_stale_or_damaged_sidecar_is_refused(copy_of, minilm, field, value, message):
    sidecar = onnx_model.model_file(minilm.path, copy_of).with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    if value is None:
        del meta[field]
    else:
        meta[field] = value
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(BackendError, match=message):
        onnx_model.load(minilm.path, folder=copy_of)


def test_no_export_is_a_clear_error_and_auto_stays_on_torch(tmp_path, minilm, monkeypatch):
    with pytest.raises(BackendError, match="no ONNX export of model at .*memory prepare"):
        onnx_model.load(minilm.path, folder=tmp_path)
    monkeypatch.setenv(onnx_model.CACHE_ENV, str(tmp_path))
    plain = TransformersEmbedder(runtime="torch")
    plain.setup()
    assert plain.runs_on == "torch (traced)"
    assert list(tmp_path.iterdir()) == []  # auto and torch never export on their own


def test_an_unknown_runtime_names_the_valid_ones():
    with pytest.raises(BackendError, match=r"unknown embedding runtime 'gpu': expected one of"):
        TransformersEmbedder(runtime="gpu")


def test_the_threads_setting_reaches_the_session(exported, minilm):
    def session_threads(model):
        return model.session.get_session_options().intra_op_num_threads

    assert session_threads(onnx_model.load(minilm.path, folder=exported, threads=1)) == 1
    default = onnx_model.load(minilm.path, folder=exported)
    assert session_threads(default) == onnx_model.default_threads() == default.threads


def test_an_unwritable_cache_folder_is_one_clear_error(minilm, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with pytest.raises(BackendError, match=r"cannot write the ONNX export to .*a-file.*BT_RAIDER"):
        onnx_model.prepare(
            minilm.path, minilm._tokenizer, minilm._model, max_length=256, folder=blocked / "x"
        )
    assert blocked.read_text() == "not a folder"  # nothing written, nothing lost


def _run(code: str, cache) -> subprocess.CompletedProcess:
    env = dict(os.environ, **{onnx_model.CACHE_ENV: str(cache)})
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )


def test_a_prepared_query_path_never_imports_torch(exported):
    done = _run(
        "import sys\n"
        "from bt_raider.memory import TransformersEmbedder\n"
        "e = TransformersEmbedder(); e.setup()\n"
        "v = e.embed(['open the fridge', 'take the mug'])\n"
        "print(e.runs_on, v.shape, 'torch' in sys.modules, 'transformers' in sys.modules)\n",
        exported,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "onnxruntime (2, 384) False False"


def test_the_cli_reports_a_proven_export_without_exporting_again(exported):
    done = subprocess.run(
        [sys.executable, "-m", "bt_raider.cli", "memory", "prepare", "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ, **{onnx_model.CACHE_ENV: str(exported)}),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["exported"] is False and reply["onnx"].startswith(str(exported))


def test_the_cli_refuses_a_server_embedder_in_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "bt_raider.cli", "memory", "prepare", "--embedder", "openai:x"],
        capture_output=True,
        text=True,
        env=dict(os.environ, **{onnx_model.CACHE_ENV: str(tmp_path)}),
        timeout=300,
    )
    assert done.returncode == 2
    assert (
        done.stderr.strip().count("\n") == 0 and "only a transformers model folder" in done.stderr
    )
