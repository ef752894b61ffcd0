"""The robot's scene on a ROS 2 topic, numbered, for ``RaiderGuard(scene=...)``.

By default a scene is JSON in ``std_msgs/String``: ``{"seq": N, "scene": {...}}`` (AI2-THOR
metadata, docs/scene-format.md), where ``seq`` grows by one with each change the robot
publishes; a bare scene object is accepted too (its number is then the count of messages
received). A robot with its own message type passes it with a ``decode`` function. Topics are
reliable and transient-local (depth 1): a node that starts late still gets the latest scene.

The sequence number is what lets an action's result wait for the scene that shows its effect
(:class:`~bt_raider.ros2.robot.RosRobot`): a result and a scene travel on different channels,
and the result often comes first.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bt_raider.errors import SceneError
from bt_raider.ros2.node import Spinner

#: The default topic of the scene.
SCENE_TOPIC = "scene"


@dataclass(frozen=True)
class SceneMessage:
    """One decoded scene message.

    Attributes:
        scene: the AI2-THOR metadata dict.
        seq: its sequence number (None: the message had none).
        extra: anything else the message carried (the envelope's other keys).
    """

    scene: dict[str, Any]
    seq: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def decode_json(msg: Any) -> SceneMessage:
    """A ``std_msgs/String`` (or any message with a ``data`` string) holding JSON.

    Raises:
        SceneError: the text is not JSON, not an object, or its ``seq``/``scene`` are bad.
    """
    text = getattr(msg, "data", msg)
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise SceneError(f"a scene message is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SceneError(f"a scene message is a JSON object, got {type(data).__name__}")
    if "scene" not in data:
        return SceneMessage(data)
    scene, seq = data["scene"], data.get("seq")
    if not isinstance(scene, dict):
        raise SceneError(f"a scene message's 'scene' is an object, got {type(scene).__name__}")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0):
        raise SceneError(f"a scene message's 'seq' is a number from 0, got {seq!r}")
    extra = {k: v for k, v in data.items() if k not in ("scene", "seq")}
    return SceneMessage(scene, seq, extra)


def encode_json(scene: dict[str, Any], seq: int, **extra: Any) -> str:
    """The text :func:`decode_json` reads: ``{"seq": seq, "scene": scene, **extra}``."""
    return json.dumps({"seq": seq, "scene": scene, **extra})


def latched_qos() -> Any:
    """Reliable, transient-local, depth 1: the latest scene reaches late joiners."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(
        depth=1,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def _string_type() -> Any:
    from std_msgs.msg import String

    return String


class SceneTopic:
    """The latest scene on a topic: call it for the scene dict (``RaiderGuard(scene=topic)``).

    Args:
        spinner: the node to subscribe with.
        topic: the topic name.
        msg_type: the message type (default ``std_msgs/String`` with JSON).
        decode: message -> :class:`SceneMessage` (default :func:`decode_json`).
        max_age_s: a scene older than this (seconds since it arrived) is refused by
            :meth:`__call__` (None: any age; a robot that publishes only on change).

    Attributes:
        errors: why recent messages were refused (bad JSON, a bad scene), newest last.
    """

    def __init__(
        self,
        spinner: Spinner,
        topic: str = SCENE_TOPIC,
        msg_type: Any = None,
        decode: Callable[[Any], SceneMessage] | None = None,
        *,
        max_age_s: float | None = None,
    ) -> None:
        self.topic = topic
        self.max_age_s = max_age_s
        self._decode = decode or decode_json
        self._cond = threading.Condition()
        self._latest: SceneMessage | None = None
        self._seq = -1
        self._received = 0
        self._at = 0.0
        self._error: str | None = None
        self.errors: list[str] = []
        msg_type = msg_type or _string_type()
        self._sub = spinner.call(
            lambda: spinner.node.create_subscription(
                msg_type, topic, self._on_message, latched_qos()
            )
        )

    def _on_message(self, msg: Any) -> None:
        try:
            got = self._decode(msg)
            if not isinstance(got, SceneMessage):
                raise SceneError(f"decode returned {type(got).__name__}, not a SceneMessage")
        except Exception as exc:  # the user's decode: any error refuses this message
            with self._cond:
                # Fail closed: until a good message comes, there is no scene to reason about.
                self._error = f"the last message on {self.topic!r} was refused: {exc}"
                self.errors = [*self.errors[-9:], self._error]
                self._cond.notify_all()
            return
        with self._cond:
            self._received += 1
            seq = got.seq if got.seq is not None else self._received
            if seq < self._seq:  # an older message overtaken by a newer one: keep the newer
                return
            self._latest, self._seq, self._at, self._error = got, seq, time.monotonic(), None
            self._cond.notify_all()

    @property
    def seq(self) -> int:
        """The number of the latest scene (-1 before the first)."""
        with self._cond:
            return self._seq

    @property
    def message(self) -> SceneMessage | None:
        """The latest good message (None before the first)."""
        with self._cond:
            return self._latest

    def wait(self, seq: int = 0, timeout: float = 5.0) -> bool:
        """Wait until a scene numbered ``seq`` or later arrived; False after ``timeout`` s."""
        with self._cond:
            return self._cond.wait_for(lambda: self._seq >= seq, timeout)

    def __call__(self) -> dict[str, Any]:
        """The latest scene dict.

        Raises:
            SceneError: no scene yet, the last message was refused, or the scene is older
                than ``max_age_s``.
        """
        with self._cond:
            if self._error is not None:
                raise SceneError(self._error)
            if self._latest is None:
                raise SceneError(f"no scene received on {self.topic!r} yet")
            age = time.monotonic() - self._at
            if self.max_age_s is not None and age > self.max_age_s:
                raise SceneError(
                    f"the scene on {self.topic!r} is {age:.1f} s old, "
                    f"older than max_age_s={self.max_age_s:g}"
                )
            return self._latest.scene


class ScenePublisher:
    """Publish scenes numbered 1, 2, ... as JSON (the robot's side of :class:`SceneTopic`)."""

    def __init__(self, spinner: Spinner, topic: str = SCENE_TOPIC) -> None:
        self.topic = topic
        self.seq = 0
        self._lock = threading.Lock()
        string = _string_type()
        self._string = string
        self._pub = spinner.call(
            lambda: spinner.node.create_publisher(string, topic, latched_qos())
        )

    def publish(self, scene: dict[str, Any], **extra: Any) -> int:
        """Publish ``scene`` as the next number; that number."""
        with self._lock:
            self.seq += 1
            msg = self._string()
            msg.data = encode_json(scene, self.seq, **extra)
            self._pub.publish(msg)
            return self.seq
