"""Reading a file without trusting it: the one input discipline of every file bt_raider reads.

Scenes, traces, PDDL, memory databases, exports and configs all come through here:

- **regular files only**: a directory, a named pipe (FIFO), a device or a socket is refused
  from ``os.stat`` before it is opened (a FIFO would block ``open``; ``/dev/zero`` never ends);
  the opened descriptor is checked again (the path may have been swapped in between);
- **a size cap**: a file over ``max_bytes`` is refused from its size before a byte is read,
  and never more than ``max_bytes + 1`` bytes are read (``/proc`` files report size 0);
- **UTF-8** (a byte-order mark is allowed) or a message naming the offset of the first bad byte;
- **JSON within bounds**: nesting measured before parsing (no recursion to blow), integers of
  at most ``max_int_digits`` digits, finite numbers only (``NaN``, ``Infinity`` and ``1e400``
  refused) and **duplicate keys refused** (which one a reader keeps differs between
  libraries, so a file that says two things is not guessed at).

Every refusal is an :class:`~bt_raider.errors.InputFileError` whose one-line message names the
file, what it is (``"scene"``, ``"trace"``, ``"PDDL domain"``...), the problem and the fix.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO, Literal

from bt_raider.errors import InputFileError, UsageError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_PDDL_BYTES",
    "MAX_SCENE_BYTES",
    "MAX_TRACE_BYTES",
    "byte_count",
    "connect_sqlite",
    "decode_text",
    "json_depth",
    "loads_json",
    "mib",
    "open_binary",
    "read_bytes",
    "read_head",
    "read_json",
    "read_text",
    "regular_file",
    "unicode_text",
]

#: Most bytes of a scene file (the FloorPlan1 kitchen: 0.2 MiB); ``--max-scene-bytes`` raises it.
MAX_SCENE_BYTES = 64 * 1024 * 1024
#: Most bytes of a trace file (an hour at 10 Hz of a 50-node tree: about 60 MiB);
#: ``bt-raider view --max-bytes`` raises it.
MAX_TRACE_BYTES = 256 * 1024 * 1024
#: Most bytes of a PDDL domain or problem file (IPC instances: under 1 MiB);
#: ``bt-raider plan --max-bytes`` raises it.
MAX_PDDL_BYTES = 16 * 1024 * 1024
#: Most bytes of a small JSON or text file of settings (a sidecar, a config, few-shot examples).
MAX_CONFIG_BYTES = 4 * 1024 * 1024
#: Default deepest nesting of a JSON document (a trace is 6 levels deep, a scene at most 64).
MAX_DEPTH = 100
#: Default most digits of a JSON integer: past 308 no float holds it, and parsing longer digit
#: strings costs quadratic time (Python refuses 4,300 and more anyway).
MAX_INT_DIGITS = 308

Duplicates = Literal["refuse", "last"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


_UNITS = {"": 1, "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30}


def byte_count(text: str) -> int:
    """A size cap as a user writes it: ``67108864``, ``64M``, ``64MiB``, ``1G`` -> bytes.

    Raises:
        ValueError: not a positive whole number with an optional K, M or G (the message says
            so; the commands turn it into their usage error).
    """
    match = re.fullmatch(r"\s*(\d{1,15})\s*([A-Za-z]*)\s*", text)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None or int(match.group(1)) == 0:
        raise ValueError(
            f"expected a positive number of bytes such as 67108864, 64M or 1G, got {text!r}"
        )
    return int(match.group(1)) * unit


def mib(n: int) -> str:
    """A size for a message: ``"1.5 MiB"`` from 1 MiB up, else ``"1,024 bytes"``."""
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


def _error(path: Path, what: str, message: str) -> InputFileError:
    error = InputFileError(f"{path}: {message}")
    error.path, error.what = str(path), what
    return error


def _too_big(path: Path, what: str, size: int, limit: int, fix: str | None) -> InputFileError:
    how = fix or "max_bytes=..."
    return _error(
        path,
        what,
        f"the {what} file is {mib(size)}, over the limit of {mib(limit)} (raise it with {how})",
    )


def _kind(mode: int) -> str:
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def _cap(max_bytes: int) -> int:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        # Our caller's bug, not the file's: a cap must be a byte count.
        raise UsageError(f"max_bytes must be a non-negative int, got {max_bytes!r}")
    return max_bytes


def regular_file(
    path: str | os.PathLike[str], *, what: str, max_bytes: int, fix: str | None = None
) -> Path:
    """``path`` if it names a regular file of at most ``max_bytes``, checked without opening it.

    Args:
        path: the file (a symlink is followed: what it points to must be a regular file).
        what: what the file is, named in the message, e.g. ``"scene"`` or ``"PDDL domain"``.
        max_bytes: the largest size accepted.
        fix: how a user raises the cap, named in the too-big message, e.g.
            ``"--max-scene-bytes"`` (default: ``max_bytes=...``).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        InputFileError: the file is missing or unreadable, a directory, a named pipe, a device,
            a socket, or over ``max_bytes``.
        UsageError: ``max_bytes`` is not a non-negative ``int`` (the caller's bug).
    """
    p = Path(path)
    limit = _cap(max_bytes)
    try:
        info = os.stat(p)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise _error(p, what, f"cannot read {what} file ({reason})") from None
    if not stat.S_ISREG(info.st_mode):
        raise _error(p, what, f"cannot read {what} file: it is {_kind(info.st_mode)}, not a file")
    if info.st_size > limit:
        raise _too_big(p, what, info.st_size, limit, fix)
    return p


def read_bytes(
    path: str | os.PathLike[str], *, what: str, max_bytes: int, fix: str | None = None
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see :func:`regular_file`).

    The file is opened with ``O_NONBLOCK | O_NOCTTY`` and the opened descriptor checked to be a
    regular file: a path swapped for a FIFO or a terminal after the check neither blocks nor
    becomes our terminal. At most ``max_bytes + 1`` bytes are read, so a file that grows while
    it is read is refused rather than read without end.

    Raises:
        InputFileError: as :func:`regular_file`, or the read failed.
    """
    p = regular_file(path, what=what, max_bytes=max_bytes, fix=fix)
    with _open_checked(p, what) as f:
        try:
            data = f.read(max_bytes + 1)
        except (OSError, MemoryError) as exc:
            reason = getattr(exc, "strerror", None) or "out of memory"
            raise _error(p, what, f"cannot read {what} file ({reason})") from None
    if len(data) > max_bytes:
        raise _too_big(p, what, len(data), max_bytes, fix)
    return data


def _open_checked(p: Path, what: str) -> BinaryIO:
    """``p`` opened for reading without blocking, the descriptor itself a regular file.

    ``O_NONBLOCK``: a FIFO swapped in after the check does not block ``open``; ``O_NOCTTY``: a
    terminal does not become ours. The descriptor is checked before it becomes a file object,
    so a directory swapped in is refused by name (``fdopen`` would say "Is a directory: 3").
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(p, flags | getattr(os, "O_BINARY", 0))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise _error(p, what, f"cannot read {what} file ({reason})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _error(
                p, what, f"cannot read {what} file: it is {_kind(mode)}, not a file (it changed)"
            )
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_binary(
    path: str | os.PathLike[str], *, what: str, max_bytes: int, fix: str | None = None
) -> BinaryIO:
    """A regular file of at most ``max_bytes`` opened for reading in binary, to stream.

    For files read in blocks (an index to hash, a model's weights): the same checks as
    :func:`read_bytes`; the caller reads and closes it (``with open_binary(...) as f``).

    Raises:
        InputFileError: as :func:`regular_file`, or the opened file is not a regular file.
    """
    return _open_checked(regular_file(path, what=what, max_bytes=max_bytes, fix=fix), what)


def read_head(path: str | os.PathLike[str], size: int, *, what: str) -> bytes:
    """The first ``size`` bytes of a regular file of any size (a database's header).

    Raises:
        InputFileError: as :func:`regular_file`, or the read failed.
    """
    p = Path(path)
    with open_binary(p, what=what, max_bytes=2**62) as f:
        try:
            return f.read(size)
        except OSError as exc:
            raise _error(p, what, f"cannot read {what} file ({exc.strerror or exc})") from None


def connect_sqlite(
    path: str | os.PathLike[str], *, what: str, uri: str | None = None, **kwargs: Any
) -> sqlite3.Connection:
    """An SQLite connection to the database file at ``path`` (created if missing).

    An existing ``path`` must be a regular file (a FIFO would hang SQLite's open, a device
    would be read as a database); ``uri`` (``file:...?mode=ro``) is what SQLite opens, when
    given, for that same file.

    Raises:
        InputFileError: ``path`` exists and is not a regular file.
    """
    p = Path(path)
    if os.path.lexists(p):
        regular_file(p, what=what, max_bytes=2**62)
    if uri is not None:
        return sqlite3.connect(uri, uri=True, **kwargs)
    return sqlite3.connect(str(p), **kwargs)


def unicode_text(text: str, *, what: str, source: str | os.PathLike[str] = "<text>") -> str:
    """``text`` if it is valid Unicode, else a one-line error naming the offset.

    Text from the command line that was not UTF-8 reaches Python with each bad byte as a lone
    surrogate (``surrogateescape``); a JSON ``"\\ud800"`` escape makes one too. Neither can
    be encoded, compared or embedded as text: refused here, where it comes in.

    Raises:
        InputFileError: a lone surrogate; the message names the byte (from the command line)
            or the code point, and its offset in ``text``.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        at = exc.start
        code = ord(text[at])
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape
            offset = len(text[:at].encode("utf-8", "surrogateescape"))
            problem = f"byte 0x{code - 0xDC00:02x} at offset {offset} is not UTF-8"
        else:
            problem = f"a lone surrogate U+{code:04X} at offset {at} is not a character"
        raise _error(Path(source), what, f"{what} is not valid Unicode text ({problem})") from None
    return text


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _surrogates(data: Any) -> str | None:
    """The first string in parsed JSON ``data`` that is not valid Unicode, if any."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def decode_text(raw: bytes, *, path: str | os.PathLike[str], what: str) -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped), or an error naming the first bad byte.

    Raises:
        InputFileError: UTF-16 or UTF-32 (recognised by a byte-order mark or NUL bytes among
            the first four), or a byte that is not UTF-8 (its offset named).
    """
    p = Path(path)
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in raw[:4]:
        # UTF-16 or UTF-32 JSON (NUL bytes among the first four) is valid UTF-8 to a decoder.
        raise _error(p, what, "not UTF-8 text (it looks like UTF-16 or UTF-32; save it as UTF-8)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _error(
            p,
            what,
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start} is not "
            f"UTF-8; a {what} file is UTF-8 text)",
        ) from None


def read_text(
    path: str | os.PathLike[str], *, what: str, max_bytes: int, fix: str | None = None
) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (a byte-order mark allowed).

    Raises:
        InputFileError: as :func:`read_bytes`, or the bytes are not UTF-8 (the offset of the
            first bad byte named).
    """
    return decode_text(
        read_bytes(path, what=what, max_bytes=max_bytes, fix=fix), path=path, what=what
    )


def read_json(
    path: str | os.PathLike[str],
    *,
    what: str,
    max_bytes: int,
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
    finite: bool = True,
    duplicates: Duplicates = "refuse",
    fix: str | None = None,
) -> Any:
    """The JSON document of a regular UTF-8 file, read within bounds (see :func:`loads_json`).

    Raises:
        InputFileError: as :func:`read_text` and :func:`loads_json`.
    """
    text = read_text(path, what=what, max_bytes=max_bytes, fix=fix)
    return loads_json(
        text,
        what=what,
        source=path,
        max_depth=max_depth,
        max_int_digits=max_int_digits,
        finite=finite,
        duplicates=duplicates,
    )


# Every byte but a quote and the four brackets, for bytes.translate to delete.
_DROP = bytes(b for b in range(256) if b not in b'"[]{}')
_STRING = re.compile(rb'"[^"]*"')
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def json_depth(text: str | bytes) -> int:
    """How deep the arrays and objects of JSON ``text`` nest, counted without parsing it.

    Brackets inside strings do not count. Linear, in C string methods and the regular
    expression engine: a document 100,000 levels deep is measured without the recursion that
    parsing it takes. Only meaningful for well-formed JSON; for anything else the parser decides.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    # Escaped backslashes, then escaped quotes, go first: every quote left delimits a string.
    # Dropping two adjacent quotes keeps every other quote's parity, so brackets stay inside or
    # outside strings as they were; most strings hold no bracket and vanish here, cheaply.
    marks = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _DROP)
    brackets = _STRING.sub(b"", marks.replace(b'""', b"")).replace(b'"', b"")
    if brackets.count(b"[") + brackets.count(b"{") <= 1:
        return brackets.count(b"[") + brackets.count(b"{")
    return max(accumulate(map(_STEP.__getitem__, brackets)))


class _Refused(Exception):
    """Raised from a parser hook to stop ``json`` at once; turned into an InputFileError."""

    def __init__(self, message: str, needle: str) -> None:
        super().__init__(message)
        self.needle = needle


def loads_json(
    text: str,
    *,
    what: str,
    source: str | os.PathLike[str] = "<string>",
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
    finite: bool = True,
    duplicates: Duplicates = "refuse",
) -> Any:
    """JSON ``text`` parsed within bounds.

    Args:
        text: the document.
        what: what it is, named in messages (``"trace"``).
        source: the file it came from, named in messages.
        max_depth: the deepest nesting of arrays and objects accepted (measured before parsing).
        max_int_digits: the most digits of an integer.
        finite: refuse ``NaN``, ``Infinity``, ``-Infinity`` and numbers that overflow to them
            (``1e400``). A reader that reports non-finite numbers itself, naming the field
            (the scene validator does), passes False and gets them as floats.
        duplicates: ``"refuse"`` an object naming a key twice (the default: which value a
            reader keeps differs between libraries), or keep the ``"last"`` (Python's ``json``).

    Returns:
        The parsed document.

    Raises:
        InputFileError: not JSON (the line named), nested deeper than ``max_depth``, an integer
            of too many digits, a non-finite number, a duplicate key; each names the line.
    """
    p = Path(source)
    if not text.isascii():  # text not read from a file here (an argument): no lone surrogate
        unicode_text(text, what=f"the {what}", source=p)
    if json_depth(text) > max_depth:
        raise _error(
            p, what, f"JSON nested too deeply to read (a {what} is at most {max_depth} levels deep)"
        )

    def parse_int(digits: str) -> int:
        if len(digits) - digits.startswith("-") > max_int_digits:
            n = len(digits) - digits.startswith("-")
            raise _Refused(
                f"an integer of {n} digits is out of range (at most {max_int_digits} digits)",
                digits,
            )
        return int(digits)

    def parse_float(number: str) -> float:
        value = float(number)
        if finite and not math.isfinite(value):
            raise _Refused(f"the number {number[:20]} is too large (not a finite number)", number)
        return value

    def parse_constant(name: str) -> float:
        if finite:
            raise _Refused(f"{name} is not a finite number (a {what} holds finite numbers)", name)
        return float(name)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            for key, _value in items:
                if key in seen:
                    message = f"the key {key[:40]!r} appears twice in one object"
                    raise _Refused(message, json.dumps(key))
                seen.add(key)
        return out

    try:
        data = json.loads(
            text,
            parse_int=parse_int,
            parse_float=parse_float,
            parse_constant=parse_constant,
            object_pairs_hook=pairs if duplicates == "refuse" else None,
        )
        # A lone surrogate can only come from a \\uD800-style escape (the text itself was
        # decoded strictly, or is checked here): strings are walked only when one is written.
        escaped = _ESCAPED_SURROGATE.search(text)
        bad = _surrogates(data) if escaped else None
        if escaped and bad is not None:
            line = text.count("\n", 0, escaped.start()) + 1
            unicode_text(bad, what=f"line {line}: a string", source=p)
        return data
    except json.JSONDecodeError as exc:
        raise _error(p, what, f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except _Refused as exc:
        at = text.find(exc.needle)
        line = text.count("\n", 0, at) + 1 if at >= 0 else 0
        where = f"line {line}: " if line else ""
        raise _error(p, what, f"{where}{exc}") from None
    except RecursionError:
        raise _error(
            p, what, f"JSON nested too deeply to read (a {what} is at most {max_depth} levels deep)"
        ) from None
    except MemoryError:
        raise _error(p, what, "too large to parse in the memory available") from None
