"""The explorer's bounds on the user's code: a factory, a node's tick or a robot call runs on
its own thread under a deadline, so a hang or an exception is a finding, never a hung test run.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bt_raider.errors import BtRaiderError
from bt_raider.testing.explore_world import RecordingRobot


class Stop(BtRaiderError):
    """The episode cannot go on: a user's factory or the run itself failed (the message)."""

    def __init__(self, message: str, *, escaped: bool = False) -> None:
        super().__init__(message)
        self.escaped = escaped


def show(value: Any) -> str:
    """``value``'s repr, cut to 80 characters for a finding's one line."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def call_user(
    call: Callable[[], Any],
    step: str,
    seconds: float,
    *,
    where: Callable[[], str] | None = None,
) -> tuple[Any, str | None]:
    """``call()`` (the user's code) on its own thread, waited for at most ``seconds``.

    Returns:
        (its result, None), or (None, why): it raised (the exception and where), or it did
        not return in time (``step`` and, from ``where``, what it was doing). A thread that
        hangs is left behind (a daemon: Python cannot stop it); the exploration goes on.
    """
    import threading

    box: list[tuple[Any, BaseException | None]] = []

    def run() -> None:
        try:
            box.append((call(), None))
        except BaseException as exc:  # noqa: BLE001 - reported as the finding
            box.append((None, exc))

    thread = threading.Thread(target=run, name=f"explore: {step}", daemon=True)
    thread.start()
    thread.join(seconds)
    if not box:
        doing = (f" ({where()})" if where is not None else "") + stack(thread)
        return None, f"{step} did not return within {seconds:g} s{doing}"
    result, exc = box[0]
    if exc is None:
        return result, None
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return None, (
        f"{step} raised {type(exc).__name__}: {str(exc)[:200]} "
        f"(at {Path(frame.filename).name}:{frame.lineno})"
    )


def stack(thread: Any) -> str:
    """Where a hung thread is: the node it ticks, and its innermost frame outside the
    standard library, as `` (node 'x'; in update at file.py:12)``."""
    import sys
    import sysconfig

    import py_trees

    frame = sys._current_frames().get(thread.ident)  # noqa: SLF001 - the only way to see it
    if frame is None:
        return ""
    stdlib = sysconfig.get_paths()["stdlib"]
    node, place = None, None
    while frame is not None:
        code = frame.f_code
        if place is None and not code.co_filename.startswith(stdlib):
            place = f"in {code.co_name} at {Path(code.co_filename).name}:{frame.f_lineno}"
        owner = frame.f_locals.get("self")
        if node is None and isinstance(owner, py_trees.behaviour.Behaviour):
            node = f"node {owner.name!r}"
        if node is not None and place is not None:
            break
        frame = frame.f_back
    parts = [p for p in (node, place) if p]
    return f" ({'; '.join(parts)})" if parts else ""


def where_hung(root: Any, robot: RecordingRobot) -> str:
    """What a hung episode was doing: the tree's tip and the robot's last call."""
    try:
        tip = root.tip()
    except Exception:  # noqa: BLE001 - a user's tree mid-tick: the name is a courtesy
        tip = None
    parts = [f"tip of the tree: {tip.name!r}" if tip is not None else "no tick finished yet"]
    if robot.calls:
        call = robot.calls[-1]
        parts.append(f"last robot call #{call.index}: start({call.action!r}, {list(call.args)})")
    else:
        parts.append("no robot call yet")
    return "; ".join(parts)
