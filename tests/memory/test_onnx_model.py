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
def planted(minilm, tmp_path_factory):
    """Symbolic links at every name ``prepare`` writes, each to a file of someone else's."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    victims = tmp_path_factory.mktemp("victims")
    target = onnx_model.model_file(minilm.path, folder)
    links = {}
    for name in (target.name, target.with_suffix(".json").name, target.name + ".json.tmp"):
        victim = victims / f"{name}.victim"
        victim.write_text(f"someone else's file, not {name}")
        (folder / name).symlink_to(victim)
        links[folder / name] = victim
    return folder, links


@pytest.fixture(scope="session")
def exported(minilm, planted):
    """A folder holding a proven ONNX export of the bundled model (made over planted links)."""
    folder, _ = planted
    path = onnx_model.prepare(minilm.path, max_length=minilm.max_length, folder=folder)
    assert path.parent == folder and path.with_suffix(".json").is_file()
    return folder


def test_prepare_replaces_planted_links_and_never_writes_through_them(exported, planted, minilm):
    _, links = planted
    target = onnx_model.model_file(minilm.path, exported)
    for link, victim in links.items():
        assert victim.read_text() == f"someone else's file, not {link.name}"  # untouched
    for made in (target, target.with_suffix(".json")):
        assert made.is_file() and not made.is_symlink()  # the link itself was replaced
    # Nothing left behind: no temporary folder or file next to the export.
    assert sorted(p.name for p in exported.iterdir() if not p.is_symlink()) == sorted(
        [target.name, target.with_suffix(".json").name]
    )
    meta = json.loads(target.with_suffix(".json").read_text())
    assert "probes" not in meta  # the proof is not kept where the file is
    assert meta["bytes"] == target.stat().st_size


def test_the_shipped_probe_vectors_are_the_installed_models(minilm):
    shipped = onnx_model.shipped_probes(minilm.path)
    assert shipped is not None and shipped.shape == (len(onnx_model.PROBES), 384)
    want = minilm.embed(list(onnx_model.PROBES))  # the eager torch model, nothing cached
    assert np.allclose(shipped, want, atol=onnx_model.TOLERANCE)
    assert minilm.probes() is None  # the bundled model needs no torch to be proven


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


def test_an_embedder_never_set_up_uses_the_prepared_export(exported, minilm, monkeypatch, tmp_path):
    from bt_raider.memory import VectorMemory

    monkeypatch.setenv(onnx_model.CACHE_ENV, str(exported))
    embedder = TransformersEmbedder()
    assert embedder.runs_on == "torch"  # nothing opened yet
    with VectorMemory(tmp_path / "m.db", embedder=embedder) as memory:  # as a one-shot command
        memory.record("turn on the hall light", "on(HallLight)")
        found = memory.search("switch on the hall light", 1)
    assert embedder.runs_on == "onnxruntime" and not embedder.loaded  # torch never loaded
    a, b = minilm.embed(["switch on the hall light", "turn on the hall light"])
    want = float(a @ b)
    assert found[0].information == "turn on the hall light"
    assert abs(found[0].score - want) < 1e-4


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


def forge(path, change) -> None:
    """Change the export at ``path`` with ``change(onnx_model_proto)`` and write a sidecar that
    matches it (size and SHA-256): what anyone who can write the cache folder can do."""
    import hashlib

    import onnx

    proto = onnx.ModelProto.FromString(path.read_bytes())  # its weights stay where they are
    change(proto)
    path.write_bytes(proto.SerializeToString())
    sidecar = path.with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    data = path.read_bytes()
    meta.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    sidecar.write_text(json.dumps(meta))


def minilm_path():
    from bt_raider.memory.embedder import bundled_model_path

    return bundled_model_path()


def installed(tensor) -> np.ndarray:
    """The installed weights' bytes that the external ``tensor`` names, as an array."""
    where = {
        entry.key: int(entry.value) for entry in tensor.external_data if entry.key != "location"
    }
    data = (minilm_path() / "model.safetensors").read_bytes()
    count = int(np.prod(tensor.dims))
    array = np.frombuffer(data, "<f4", count=count, offset=where["offset"])
    return array.reshape(tuple(tensor.dims))


def held(tensor, array) -> None:
    """``tensor`` holds ``array`` itself instead of naming the installed file."""
    from onnx import numpy_helper

    tensor.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(array, np.float32), tensor.name))


def scale_weights(factor):
    """The last LayerNorm's scale, held in the graph (small enough) and scaled."""

    def change(proto):
        for tensor in reversed(proto.graph.initializer):
            if tensor.external_data and tensor.name.endswith("LayerNorm.weight"):
                held(tensor, installed(tensor) * factor)
                return
        raise AssertionError("no LayerNorm weight in the export")

    return change


def swap_word_rows(proto):
    """The rows of "on" and "off" trade places: no probe text has "off", so only the check of
    where the weights come from can see it -- and every on/off pair in the memory would read
    alike."""
    from bt_raider.memory.embedder import bundled_model_path

    vocab = (bundled_model_path() / "vocab.txt").read_text().split("\n")
    on, off = vocab.index("on"), vocab.index("off")
    for tensor in proto.graph.initializer:
        if tensor.name.endswith("word_embeddings.weight"):
            table = installed(tensor).copy()
            table[[on, off]] = table[[off, on]]
            held(tensor, table)
            return
    raise AssertionError("no word embedding table in the export")


def shift_word_rows(proto):
    """The word table read one row further on: every word gets its neighbour's vector."""
    for tensor in proto.graph.initializer:
        if tensor.name.endswith("word_embeddings.weight"):
            for entry in tensor.external_data:
                if entry.key == "offset":
                    entry.value = str(int(entry.value) + 4 * tensor.dims[1])
            return
    raise AssertionError("no word embedding table in the export")


def swap_weights(proto):
    """Two same-shaped weight matrices trade places in the nodes that read them: a plausible
    model, each weight named where the installed file holds it, but not this model."""
    seen = {}
    for tensor in proto.graph.initializer:
        if not tensor.external_data or np.prod(tensor.dims) < 10_000:
            continue
        shape = tuple(tensor.dims)
        if shape in seen:
            a, b = seen[shape], tensor.name
            for node in proto.graph.node:
                node.input[:] = [{a: b, b: a}.get(name, name) for name in node.input]
            return
        seen[shape] = tensor.name
    raise AssertionError("no two weights of one shape in the export")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (swap_weights, "does not compute the model's vector for 'the robot'"),
        (scale_weights(1.05), "does not compute the model's vector for 'the robot'"),
        (swap_word_rows, "bytes, more than any export of model"),  # a table in the graph
        (shift_word_rows, "does not read embeddings.word_embeddings.weight where the installed"),
    ],
    ids=["swapped", "scaled", "on-off-rows", "shifted-rows"],
)
def test_a_forged_export_with_a_matching_sidecar_is_refused(
    copy_of, minilm, monkeypatch, caplog, change, message
):
    forge(onnx_model.model_file(minilm.path, copy_of), change)
    with pytest.raises(BackendError, match=message):
        onnx_model.load(minilm.path, folder=copy_of)
    monkeypatch.setenv(onnx_model.CACHE_ENV, str(copy_of))
    embedder = TransformersEmbedder()
    with caplog.at_level("WARNING", logger="bt_raider.memory.embedder"):
        embedder.setup()
    assert embedder.runs_on == "torch (traced)"  # never the forged file
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "\n" not in warnings[0].getMessage()
    assert message.split("'")[0] in warnings[0].getMessage()
    text = "turn on the hall light"
    assert np.allclose(embedder.embed([text]), minilm.embed([text]), atol=1e-5)


MISSING = object()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("weights", "0123456789abcdef", "made from other weights"),
        ("format", 1, "by another version"),  # format 1 kept its own probes: never trusted
        ("sha256", MISSING, "damaged ONNX sidecar .*sha256 is 'None', expected text"),
        ("sha256", ["a"] * 64, "damaged ONNX sidecar .*sha256 is"),
        ("sha256", "z" * 64, "not a SHA-256 in hex"),
        ("bytes", "90987678", "damaged ONNX sidecar .*bytes is '90987678', expected a number"),
        ("bytes", True, "damaged ONNX sidecar .*bytes"),
        ("bytes", 1, r"is [\d,]+ bytes, not the 1 its sidecar records"),
        ("format", 3.0, "damaged ONNX sidecar .*format"),
        ("format", 4, "by another version"),  # format 4 held a copy of the weights
        ("probes", [[1e400]], "damaged ONNX sidecar: .*not a finite number"),
        ("probes", "1" * 400, "damaged ONNX sidecar: .*integer of 400 digits"),
    ],
)
def test_a_stale_or_malformed_sidecar_is_refused(copy_of, minilm, field, value, message):
    sidecar = onnx_model.model_file(minilm.path, copy_of).with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    if value is MISSING:
        del meta[field]
    else:
        meta[field] = value
    text = json.dumps(meta)
    if field == "probes" and isinstance(value, str):
        text = text.replace(f'"{value}"', value)  # a bare 400-digit integer
    sidecar.write_text(text)
    with pytest.raises(BackendError, match=message):
        onnx_model.load(minilm.path, folder=copy_of)


@pytest.mark.parametrize(
    "content",
    [b"", b"[]", b"\xff\xfe{", b"[" * 100_000, b'{"format": 2, "format": 2}', b"null"],
    ids=["empty", "list", "utf16", "deep", "duplicate-key", "null"],
)
def test_a_sidecar_that_is_not_a_json_object_is_refused(copy_of, minilm, content):
    sidecar = onnx_model.model_file(minilm.path, copy_of).with_suffix(".json")
    sidecar.write_bytes(content)
    with pytest.raises(BackendError, match="damaged ONNX sidecar"):
        onnx_model.load(minilm.path, folder=copy_of)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    meta=st.dictionaries(
        st.sampled_from(["format", "weights", "sha256", "bytes", "probes", "torch"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=80),
            lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
            max_leaves=12,
        ),
    )
)
def test_any_forged_sidecar_is_refused_with_a_backend_error(copy_of, minilm, meta):
    sidecar = onnx_model.model_file(minilm.path, copy_of).with_suffix(".json")
    sidecar.write_text(json.dumps(meta))  # NaN and Infinity included: json.dumps writes them
    with pytest.raises(BackendError):
        onnx_model.load(minilm.path, folder=copy_of)


def test_an_absurd_size_is_refused_from_the_size_alone(copy_of, minilm):
    path = onnx_model.model_file(minilm.path, copy_of)
    sidecar = path.with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    path.unlink()
    with path.open("wb") as handle:  # 8 GiB, sparse: nothing is written but the size
        handle.truncate(8 << 30)
    meta["bytes"] = 8 << 30
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(BackendError, match=r"is 8,589,934,592 bytes, more than any export of"):
        onnx_model.load(minilm.path, folder=copy_of)


@pytest.mark.parametrize("kind", ["fifo", "directory", "dangling-link"])
def test_an_export_that_is_not_a_file_is_refused_without_blocking(copy_of, minilm, kind):
    path = onnx_model.model_file(minilm.path, copy_of)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)  # opening it would block: it must be refused from stat
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(copy_of / "nowhere")
    with pytest.raises(BackendError, match="the ONNX export is refused"):
        onnx_model.load(minilm.path, folder=copy_of)


def test_other_weights_are_proven_against_their_own_torch_vectors(
    exported, minilm, tmp_path, monkeypatch
):
    """A model folder bt_raider ships no probes for: the torch model computes them."""
    folder = tmp_path / "my-minilm"
    folder.mkdir()
    for item in minilm.path.iterdir():
        if item.is_file() and item.name != "config.json":
            (folder / item.name).symlink_to(item)
    config = json.loads((minilm.path / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config, indent=1))  # same model, other bytes
    assert onnx_model.shipped_probes(folder) is None
    # What prepare would write for this folder: the same export, its own sidecar.
    cache = tmp_path / "cache"
    cache.mkdir()
    source = onnx_model.model_file(minilm.path, exported)
    target = onnx_model.model_file(folder, cache)
    shutil.copyfile(source, target)
    meta = json.loads(source.with_suffix(".json").read_text())
    meta["weights"] = onnx_model.weights_identity(folder)
    target.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(BackendError, match="no probe vectors to prove an ONNX export"):
        onnx_model.load(folder, folder=cache)  # nothing shipped, nothing given: not used
    own = TransformersEmbedder(folder)
    probes = own.probes()
    want = minilm.embed(list(onnx_model.PROBES))
    assert probes is not None and np.allclose(probes, want, atol=1e-5)
    model = onnx_model.load(folder, folder=cache, expected=probes)
    got = model.embed_one("open the fridge")
    assert np.allclose(got, minilm.embed(["open the fridge"])[0], atol=1e-5)
    with pytest.raises(BackendError, match="does not compute the model's vector"):
        onnx_model.load(folder, folder=cache, expected=-probes)
    monkeypatch.setenv(onnx_model.CACHE_ENV, str(cache))
    auto = TransformersEmbedder(folder)
    auto.setup()
    assert auto.runs_on == "onnxruntime"


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
        onnx_model.prepare(minilm.path, max_length=256, folder=blocked / "x")
    assert blocked.read_text() == "not a folder"  # nothing written, nothing lost


def _run(code: str, cache) -> subprocess.CompletedProcess:
    env = dict(os.environ, **{onnx_model.CACHE_ENV: str(cache)})
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )


def test_a_cli_query_after_prepare_runs_on_onnxruntime_without_torch(exported, tmp_path):
    db = tmp_path / "robot.db"
    done = _run(
        "import json, sys\n"
        "from bt_raider.cli import main\n"
        f"db = {str(db)!r}\n"
        "main(['memory', 'add', '--db', db, 'turn on the hall light', '--goal', 'on(Light)'])\n"
        "main(['memory', 'query', '--db', db, 'switch off the hall light', '--json'])\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n",
        exported,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().split("\n")
    reply = json.loads("\n".join(lines[2:-1]))  # after the add's id and count
    assert reply["runs_on"] == "onnxruntime"
    assert [c["information"] for c in reply["conflicts"]] == ["turn on the hall light"]
    assert lines[-1] == "False False"
    assert done.stderr == ""


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


def test_the_cli_refuses_an_unwritable_cache_in_one_line_and_writes_nothing(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    done = subprocess.run(
        [sys.executable, "-m", "bt_raider.cli", "memory", "prepare"],
        capture_output=True,
        text=True,
        env=dict(os.environ, **{onnx_model.CACHE_ENV: str(blocked / "cache")}),
        timeout=300,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "cannot write the ONNX export to" in done.stderr
    assert blocked.read_text() == "not a folder" and sorted(tmp_path.iterdir()) == [blocked]


def test_leftover_work_folders_of_a_killed_prepare_are_removed_and_live_ones_kept(tmp_path):
    # A prepare killed with SIGKILL never reaches its clean-up: its folder names a dead process.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    killed = tmp_path / ".prepare-killed"
    killed.mkdir()
    (killed / "owner.pid").write_text(dead)
    (killed / "model.onnx").write_bytes(b"half an export")
    running = tmp_path / ".prepare-running"
    running.mkdir()
    (running / "owner.pid").write_text(str(os.getpid()))
    ownerless = tmp_path / ".prepare-old"
    ownerless.mkdir()
    os.utime(ownerless, (0, 0))  # killed before it named its owner, long ago
    fresh = tmp_path / ".prepare-new"
    fresh.mkdir()  # no owner yet: another prepare may be about to write it
    other = tmp_path / "keep-me"
    other.mkdir()
    removed = onnx_model.sweep_leftovers(tmp_path)
    assert sorted(p.name for p in removed) == [".prepare-killed", ".prepare-old"]
    assert not killed.exists() and not ownerless.exists()
    assert running.exists() and fresh.exists() and other.exists()
