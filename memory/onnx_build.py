"""The BERT encoder of a sentence embedder, written as an ONNX graph from its safetensors file.

No torch and no transformers: the graph is the BERT forward pass (embeddings, then
``num_hidden_layers`` blocks of self-attention and a GELU feed-forward, each closed by a
LayerNorm) built node by node with ``onnx.helper``. The weights are not copied into it: every
weight is an ONNX external tensor naming its bytes in the model folder's ``model.safetensors``
(file offset and length, as the file's header lists them), and
:func:`bt_raider.memory.onnx_model.load` hands ONNX Runtime the installed file itself. Its output is the last hidden state, as the transformers model gives it;
pooling happens outside (:func:`bt_raider.memory.onnx_model.mean_pool`). The vectors agree with
the torch model's to float32 rounding (``tests/memory/test_onnx_build.py`` holds them to 1e-5
on the project's sentences and on people's commands).

Only what all-MiniLM-L6-v2 and its kin use is built (``model_type`` ``bert``, ``gelu``,
absolute positions); any other configuration is refused with its name, and such a model runs
on torch (the ``memory-torch`` extra).

A dense layer is ``MatMul`` by the stored matrix's ``Transpose`` (ONNX Runtime folds it once,
when the session opens).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from bt_raider.errors import BackendError, InputFileError, require
from bt_raider.files import loads_json, open_binary, read_text

#: The largest weights file read (a MiniLM's is 90 MB; BERT-large 1.3 GB).
MAX_WEIGHTS_BYTES = 8 * 2**30

#: The ONNX operator set the graph is written in (LayerNormalization is in it).
OPSET = 17
#: Largest safetensors header read (MiniLM's is about 20 KB).
MAX_HEADER_BYTES = 16 * 1024 * 1024
#: safetensors dtype names -> numpy little-endian dtypes (what a BERT checkpoint holds).
_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def safetensors_header(handle: Any, path: Path) -> tuple[int, dict[str, Any]]:
    """The header of an open safetensors file: its size in bytes and its tensor table.

    Raises:
        ValueError: the header's size or content is not that of a safetensors file.
    """
    size = int.from_bytes(handle.read(8), "little")
    if not 0 < size <= MAX_HEADER_BYTES:
        raise ValueError(f"a header of {size:,} bytes")
    header = loads_json(handle.read(size).decode("utf-8"), what="weights", source=path)
    if not isinstance(header, dict):
        raise ValueError("a header that is not a JSON object")
    return size, header


#: The file the external tensors name (in the model folder).
WEIGHTS_FILE = "model.safetensors"
#: safetensors dtype names -> ONNX tensor element types.
ONNX_TYPES = {"F32": 1, "F16": 10, "I64": 7, "I32": 6}


def weight_spans(path: Path) -> dict[str, tuple[str, list[int], int, int]]:
    """Each tensor of a safetensors file: its dtype name, shape, file offset and length in bytes.

    Read from the header alone (the ~20 KB at the file's start), checked against the file's size.

    Raises:
        BackendError: the header cannot be read, or a tensor's type, shape or extent is wrong.
    """
    try:
        with open_binary(path, what="model weights", max_bytes=MAX_WEIGHTS_BYTES) as handle:
            size, header = safetensors_header(handle, path)
            total = os.fstat(handle.fileno()).st_size
        base = 8 + size
        out = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            itemsize = np.dtype(_DTYPES[info["dtype"]]).itemsize
            shape = [int(n) for n in info["shape"]]
            start, end = (base + int(x) for x in info["data_offsets"])
            if not base <= start <= end <= total or end - start != math.prod(shape) * itemsize:
                raise ValueError(f"{name} spans {start}..{end}, not {shape} {info['dtype']}")
            out[name] = (str(info["dtype"]), shape, start, end - start)
    except (OSError, ValueError, KeyError, TypeError, InputFileError) as exc:
        raise BackendError(f"cannot read the weights {path}: {exc}") from exc
    return out


def config_of(model_path: Path) -> dict[str, Any]:
    """The model's ``config.json``, checked to be an encoder this module can build.

    Raises:
        BackendError: unreadable, or a configuration other than a BERT encoder with GELU and
            absolute positions (the message names the field, its value and what is built).
    """
    path = model_path / "config.json"
    try:
        config = json.loads(read_text(path, what="model configuration", max_bytes=2**20))
    except (OSError, ValueError) as exc:
        raise BackendError(f"cannot read {path}: {exc}") from exc
    if not isinstance(config, dict):
        raise BackendError(f"{path} is not a JSON object")
    wanted = {
        "model_type": ("bert",),
        "hidden_act": ("gelu",),
        "position_embedding_type": ("absolute", None),
    }
    for key, allowed in wanted.items():
        if config.get(key) not in allowed:
            raise BackendError(
                f"{model_path.name} has {key}={config.get(key)!r}; the ONNX builder writes "
                f"{key} {' or '.join(repr(a) for a in allowed if a)} only: this model runs on "
                "torch (pip install 'bt_raider[memory-torch]')"
            )
    for key in ("hidden_size", "num_attention_heads", "num_hidden_layers", "layer_norm_eps"):
        if not isinstance(config.get(key), (int, float)) or isinstance(config.get(key), bool):
            raise BackendError(f"{path} has no number {key}")
    if config["hidden_size"] % config["num_attention_heads"]:
        raise BackendError(
            f"{path}: hidden_size {config['hidden_size']} is not a multiple of "
            f"num_attention_heads {config['num_attention_heads']}"
        )
    return config


class _Graph:
    """Nodes and initializers being written, with fresh names."""

    def __init__(self, helper: Any, numpy_helper: Any, tensor_proto: Any) -> None:
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.tensor_proto = tensor_proto
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.count = 0

    def weight(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def external(self, name: str, span: tuple[str, list[int], int, int]) -> str:
        """A tensor whose bytes stay in the weights file: its offset and length there."""
        dtype, shape, offset, length = span
        tensor = self.tensor_proto()
        tensor.name = name
        tensor.data_type = ONNX_TYPES[dtype]
        tensor.dims.extend(shape)
        tensor.data_location = self.tensor_proto.EXTERNAL
        for key, value in (("location", WEIGHTS_FILE), ("offset", offset), ("length", length)):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, str(value)
        self.initializers.append(tensor)
        return name

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        self.count += 1
        out = f"{kind.lower()}_{self.count}"
        self.nodes.append(self.helper.make_node(kind, list(inputs), [out], **attrs))
        return out


def build(model_path: Path) -> bytes:
    """The serialised ONNX model of the encoder in ``model_path`` (see the module docstring).

    Inputs ``input_ids`` and ``attention_mask`` (int64, ``[batch, tokens]``); output
    ``last_hidden_state`` (float32, ``[batch, tokens, hidden_size]``).

    Raises:
        BackendError: a configuration it cannot build, weights missing or unreadable.
        MissingDependencyError: ``onnx`` is not installed.
    """
    onnx = require("onnx", "memory", needed_by="bt-raider memory prepare")
    config = config_of(model_path)
    weights = weight_spans(model_path / WEIGHTS_FILE)
    prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""
    used: set[str] = set()

    def w(name: str) -> str:
        """The weight ``name`` as an external tensor (named as in the file), added once."""
        span = weights.get(prefix + name)
        if span is None:
            raise BackendError(f"{model_path.name}/{WEIGHTS_FILE} has no {name}")
        want = "I64" if name.endswith("position_ids") else "F32"
        if span[0] != want:
            raise BackendError(
                f"{model_path.name}/{WEIGHTS_FILE} holds {name} as {span[0]}; the ONNX builder "
                f"reads {want}: this model runs on torch (pip install 'bt_raider[memory-torch]')"
            )
        if prefix + name not in used:
            used.add(prefix + name)
            g.external(prefix + name, span)
        return prefix + name

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    eps = float(config["layer_norm_eps"])
    g = _Graph(onnx.helper, onnx.numpy_helper, onnx.TensorProto)

    def const(name: str, value: Any, dtype: str) -> str:
        return g.weight(name, np.asarray(value, dtype=dtype))

    def dense(x: str, name: str) -> str:
        kernel = g.op("Transpose", w(f"{name}.weight"), perm=[1, 0])
        return g.op("Add", g.op("MatMul", x, kernel), w(f"{name}.bias"))

    def norm(x: str, name: str) -> str:
        return g.op(
            "LayerNormalization",
            x,
            w(f"{name}.weight"),
            w(f"{name}.bias"),
            axis=-1,
            epsilon=eps,
        )

    table = {
        name[len(prefix) :]: w(name[len(prefix) :])
        for name in sorted(weights)
        if name.startswith(prefix + "embeddings.") and "LayerNorm" not in name
    }
    zero, one = const("zero", [0], "int64"), const("one", [1], "int64")
    length = g.op("Gather", g.op("Shape", "input_ids"), one)  # [tokens]
    if "embeddings.position_ids" in table:
        row = g.op("Squeeze", table["embeddings.position_ids"], zero)
    else:  # older checkpoints do not store the positions 0, 1, 2, ...
        count = weights[prefix + "embeddings.position_embeddings.weight"][1][0]
        row = const("positions", np.arange(count), "int64")
    positions = g.op("Slice", row, zero, length, zero)
    x = g.op("Gather", table["embeddings.word_embeddings.weight"], "input_ids")
    x = g.op("Add", x, g.op("Gather", table["embeddings.position_embeddings.weight"], positions))
    if "embeddings.token_type_embeddings.weight" in table:  # every token of type 0
        kind = g.op("Gather", table["embeddings.token_type_embeddings.weight"], zero)
        x = g.op("Add", x, kind)
    x = norm(x, "embeddings.LayerNorm")

    # (1 - mask) * lowest float, added to every score: a padded token gets no attention.
    mask = g.op("Cast", "attention_mask", to=onnx.TensorProto.FLOAT)
    lowest = const("lowest", np.finfo(np.float32).min, "float32")
    bias = g.op("Mul", g.op("Sub", const("one_f", 1.0, "float32"), mask), lowest)
    bias = g.op("Unsqueeze", bias, const("axes_1_2", [1, 2], "int64"))  # [batch, 1, 1, tokens]
    split = const("split_heads", [0, 0, heads, hidden // heads], "int64")
    merge = const("merge_heads", [0, 0, hidden], "int64")
    scale = const("scale", 1.0 / math.sqrt(hidden // heads), "float32")
    root2, half = const("sqrt2", math.sqrt(2.0), "float32"), const("half", 0.5, "float32")
    for i in range(int(config["num_hidden_layers"])):
        at = f"encoder.layer.{i}"

        def heads_of(name: str, perm: list[int], source: str = x) -> str:
            return g.op("Transpose", g.op("Reshape", dense(source, name), split), perm=perm)

        q = heads_of(f"{at}.attention.self.query", [0, 2, 1, 3])
        k = heads_of(f"{at}.attention.self.key", [0, 2, 3, 1])
        v = heads_of(f"{at}.attention.self.value", [0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
        attended = g.op("Add", dense(context, f"{at}.attention.output.dense"), x)
        attended = norm(attended, f"{at}.attention.output.LayerNorm")
        inner = dense(attended, f"{at}.intermediate.dense")  # exact GELU, as BERT's "gelu"
        inner = g.op(
            "Mul",
            g.op("Mul", inner, half),
            g.op("Add", g.op("Erf", g.op("Div", inner, root2)), "one_f"),
        )
        out = g.op("Add", dense(inner, f"{at}.output.dense"), attended)
        x = norm(out, f"{at}.output.LayerNorm")
    g.nodes.append(onnx.helper.make_node("Identity", [x], ["last_hidden_state"]))
    tokens = ["batch", "tokens"]
    graph = onnx.helper.make_graph(
        g.nodes,
        "encoder",
        [
            onnx.helper.make_tensor_value_info("input_ids", onnx.TensorProto.INT64, tokens),
            onnx.helper.make_tensor_value_info("attention_mask", onnx.TensorProto.INT64, tokens),
        ],
        [
            onnx.helper.make_tensor_value_info(
                "last_hidden_state", onnx.TensorProto.FLOAT, [*tokens, hidden]
            )
        ],
        g.initializers,
    )
    model = onnx.helper.make_model(
        graph,
        opset_imports=[onnx.helper.make_opsetid("", OPSET)],
        producer_name="bt_raider.memory.onnx_build",
    )
    model.ir_version = 8
    # Not onnx.checker: it looks for the weights file beside the process, not the model folder;
    # onnx_model.prepare proves the graph by running it on the installed file.
    return bytes(model.SerializeToString())
