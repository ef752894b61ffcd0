"""Reading a scene file without trusting it: :func:`read_scene_json`.

Regular files only (not a directory, a named pipe or a device), a size cap
(:data:`MAX_SCENE_BYTES`), UTF-8, a depth and a digit limit (:data:`MAX_INT_DIGITS`): a hostile
or broken file is refused with one line naming it, never a traceback or a hang. What the
document holds is :func:`~bt_raider.perception.validation.validate_scene`'s to check.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from bt_raider.errors import SceneError
from bt_raider.perception.validation import MAX_DEPTH
from bt_raider.perception.values import MAX_MAGNITUDE

#: Most bytes :meth:`Scene.load` reads unless told otherwise (the FloorPlan1 kitchen: 0.2 MiB).
MAX_SCENE_BYTES = 64 * 1024 * 1024
#: Most digits of an integer in a scene file: past 308 no float holds it, and parsing longer
#: digit strings costs quadratic time (Python refuses 4,300 and more anyway).
MAX_INT_DIGITS = 308


def read_scene_json(path: str | Path, *, max_bytes: int = MAX_SCENE_BYTES) -> Any:
    """The JSON document of a scene file, read defensively (see :meth:`Scene.load`).

    Raises:
        SceneError: naming the file: not a regular file, over ``max_bytes``, not UTF-8, not
            JSON, nested deeper than the interpreter can parse, an integer of too many digits.
    """
    p = Path(path)
    raw = _read_regular_file(p, max_bytes)
    if _wide_encoding(raw):
        # UTF-16 or UTF-32 JSON (NUL bytes among the first four) is valid UTF-8 to a decoder.
        raise SceneError(f"{p}: not UTF-8 text (it looks like UTF-16 or UTF-32; save it as UTF-8)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SceneError(
            f"{p}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start} is not "
            "UTF-8; a scene is UTF-8 JSON)"
        ) from None
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise SceneError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except _HugeInteger as exc:
        line = text.count("\n", 0, text.find(exc.digits)) + 1
        raise SceneError(
            f"{p}: line {line}: an integer of {len(exc.digits)} digits is out of range "
            f"(at most {MAX_INT_DIGITS} digits; coordinates at most {MAX_MAGNITUDE:g} m)"
        ) from None
    except RecursionError:
        raise SceneError(
            f"{p}: JSON nested too deeply to read (a scene is at most {MAX_DEPTH} levels deep)"
        ) from None
    except MemoryError:
        raise SceneError(f"{p}: too large to parse in the memory available") from None
    return data


class _HugeInteger(Exception):
    def __init__(self, digits: str) -> None:
        super().__init__(digits[:20])
        self.digits = digits


def _parse_int(text: str) -> int:
    """``json``'s integer parser, refusing digit strings no scene needs (see MAX_INT_DIGITS)."""
    if len(text) > MAX_INT_DIGITS + 1:
        raise _HugeInteger(text)
    return int(text)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def _read_regular_file(p: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; a SceneError for anything else."""
    try:
        info = os.stat(p)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise SceneError(f"{p}: cannot read scene file ({reason})") from None
    if not stat.S_ISREG(info.st_mode):
        raise SceneError(f"{p}: cannot read scene file: it is {_kind(info.st_mode)}, not a file")
    if info.st_size > max_bytes:
        raise SceneError(_too_big(p, info.st_size, max_bytes))
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO after the stat, open() still returns.
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SceneError(f"{p}: cannot read scene file ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SceneError(f"{p}: cannot read scene file: it is not a regular file")
        try:
            data = f.read(max_bytes + 1)
        except OSError as exc:
            raise SceneError(f"{p}: cannot read scene file ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise SceneError(_too_big(p, len(data), max_bytes))
    return data


def _too_big(p: Path, size: int, limit: int) -> str:
    return (
        f"{p}: the scene file is {_mib(size)}, over the limit of {_mib(limit)} "
        f"(raise it with --max-scene-bytes, or Scene.load(path, max_bytes=...))"
    )


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


def _wide_encoding(raw: bytes) -> bool:
    """Whether ``raw`` starts like UTF-16 or UTF-32 text: a byte-order mark or NUL bytes."""
    return raw[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in raw[:4]
