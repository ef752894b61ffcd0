"""What the runtime takes as a scene: a Scene, an AI2-THOR metadata dict, or a callable.

A robot's perception usually hands out a dict (AI2-THOR's ``event.metadata``, or the same shape
built from its own detections), so every ``scene=`` of the runtime takes:

* a :class:`~bt_raider.perception.scene.Scene`;
* a scene file's path (``str`` or ``Path``): loaded and validated once, when it is given (a
  missing or bad file is a :class:`~bt_raider.errors.SceneError` naming it, at once);
* a dict: validated and converted with :meth:`Scene.from_dict
  <bt_raider.perception.scene.Scene.from_dict>` once, when it is given (a bad dict is a
  :class:`~bt_raider.errors.SceneError` naming the field, at once);
* a callable returning either (``robot.observe``): called on the worker at every check, a dict
  converted there, so a tick never waits on perception;
* None, for checkers that need no scene.

Anything else is handed to the checker unchanged (a checker with a world model of its own).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any, TypeAlias

from bt_raider.perception.scene import Scene

SceneLike: TypeAlias = (
    "Scene | str | PurePath | dict[str, Any] | Callable[[], Scene | dict[str, Any] | None] | None"
)


def as_scene(value: Any, source: str = "<dict>") -> Any:
    """``value`` with a dict validated and converted to a :class:`Scene`; anything else as is.

    Raises:
        SceneError: the dict is not a valid scene (the message names ``source`` and the field).
    """
    if isinstance(value, dict):
        return Scene.from_dict(value, source=source)
    return value


def scene_source(scene: SceneLike) -> Any:
    """What a node keeps for ``scene=``: a callable as is, a dict converted now (validated), a
    file path (``str`` or :class:`~pathlib.Path`) loaded now.

    Raises:
        SceneError: the dict or the file is not a valid scene, or the file cannot be read
            (one line naming the file: a missing one too).
    """
    if callable(scene):
        return scene
    if isinstance(scene, (str, PurePath)):
        return Scene.load(Path(scene))
    return as_scene(scene, source="the scene dict")


def read_scene(scene: Any) -> Any:
    """The current scene from what :func:`scene_source` kept (call on a worker, not the tick)."""
    if callable(scene):
        name = getattr(scene, "__qualname__", None) or type(scene).__name__
        return as_scene(scene(), source=f"the scene returned by {name}()")
    return scene
