"""Reading a scene file without trusting it: :func:`read_scene_json`.

The input discipline every file bt_raider reads shares (:mod:`bt_raider.files`): regular files
only (not a directory, a named pipe or a device), a size cap (:data:`MAX_SCENE_BYTES`), UTF-8,
a depth and a digit limit (:data:`MAX_INT_DIGITS`): a hostile or broken file is refused with one
line naming it, never a traceback or a hang. What the document holds is
:func:`~bt_raider.perception.validation.validate_scene`'s to check, non-finite numbers included
(it names the field).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bt_raider import files
from bt_raider.errors import InputFileError, SceneFileError

#: Most bytes :meth:`Scene.load` reads unless told otherwise (the FloorPlan1 kitchen: 0.2 MiB).
MAX_SCENE_BYTES = files.MAX_SCENE_BYTES
#: Most digits of an integer in a scene file: past 308 no float holds it, and parsing longer
#: digit strings costs quadratic time (Python refuses 4,300 and more anyway).
MAX_INT_DIGITS = files.MAX_INT_DIGITS
#: Deepest nesting read: well past the validator's own limit (64), so that it, not the reader,
#: names the field of a scene nested a little too deep.
READ_DEPTH = 512


def read_scene_json(path: str | Path, *, max_bytes: int = MAX_SCENE_BYTES) -> Any:
    """The JSON document of a scene file, read defensively (see :meth:`Scene.load`).

    ``NaN`` and ``Infinity`` are read as floats, for the validator to refuse by field name; a
    key given twice keeps its last value, as scenes always have.

    Raises:
        SceneFileError: naming the file: not a regular file, over ``max_bytes``, not UTF-8, not
            JSON, nested deeper than :data:`READ_DEPTH`, an integer of too many digits (a
            :class:`~bt_raider.errors.SceneError` and an
            :class:`~bt_raider.errors.InputFileError`).
    """
    try:
        return files.read_json(
            path,
            what="scene",
            max_bytes=max_bytes,
            max_depth=READ_DEPTH,
            max_int_digits=MAX_INT_DIGITS,
            finite=False,
            duplicates="last",
            fix="--max-scene-bytes, or Scene.load(path, max_bytes=...)",
        )
    except SceneFileError:
        raise
    except InputFileError as exc:
        error = SceneFileError(str(exc))
        error.path, error.what = exc.path, exc.what
        raise error from None
