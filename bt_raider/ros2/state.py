"""The guards' state on a ROS 2 topic, for a ROS user to watch (``ros2 topic echo``).

:class:`GuardStatePublisher` is a post-tick handler: after each tick it publishes, as JSON in
``std_msgs/String``, every new verdict (``{"kind": "verdict", "node": ..., "verdict": {...}}``),
every new recovery plan (``"recovery"``, with its code), and every new question, statement and
wait of the people it is given (``"ask"``, ``"say"``, ``"wait"``). The trace recorder
(:class:`~bt_raider.viewer.recorder.TraceRecorder`) works beside it unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import py_trees

from bt_raider.ros2.node import Spinner
from bt_raider.viewer.recorder import is_guard, jsonable, verdict_data, walk

#: The default topic of the guards' state.
STATE_TOPIC = "bt_raider/guard_state"


class GuardStatePublisher:
    """Publish what the guards of ``tree`` decide, after every tick.

    Args:
        spinner: the node to publish with.
        tree: the behaviour tree (its post-tick handlers get this publisher).
        humans: people whose transcripts are published (their ``transcript``).
        topic: the topic.

    Attributes:
        published: every message sent, as dicts (for tests and logs).
    """

    def __init__(
        self,
        spinner: Spinner,
        tree: py_trees.trees.BehaviourTree,
        humans: Sequence[Any] = (),
        topic: str = STATE_TOPIC,
    ) -> None:
        from std_msgs.msg import String

        self._string = String
        self._pub = spinner.call(lambda: spinner.node.create_publisher(String, topic, 10))
        self.topic = topic
        self.humans = list(humans)
        self.published: list[dict[str, Any]] = []
        self._verdicts: dict[str, Any] = {}
        self._plans: dict[str, Any] = {}
        self._said = [0] * len(self.humans)
        tree.add_post_tick_handler(lambda t: self.update(t.root))

    def _send(self, data: dict[str, Any]) -> None:
        msg = self._string()
        msg.data = json.dumps(jsonable(data))
        self._pub.publish(msg)
        self.published.append(data)

    def update(self, root: py_trees.behaviour.Behaviour) -> None:
        """Publish what changed under ``root`` since the last call."""
        for node, _parent, _grafted in walk(root):
            if not is_guard(node):
                continue
            key = str(node.id)
            verdict = getattr(node, "verdict", None)
            if verdict is not None and verdict is not self._verdicts.get(key):
                self._verdicts[key] = verdict
                self._send({"kind": "verdict", "node": node.name, "verdict": verdict_data(verdict)})
            plan = getattr(node, "plan", None)
            if plan is not None and plan is not self._plans.get(key):
                self._plans[key] = plan
                code = str(getattr(plan, "code", plan))
                self._send({"kind": "recovery", "node": node.name, "code": code})
        for i, human in enumerate(self.humans):
            transcript = list(getattr(human, "transcript", []))
            for ex in transcript[self._said[i] :]:
                data = {"kind": ex.kind, "text": ex.text}
                if ex.answer is not None:
                    data["answer"] = ex.answer
                self._send(data)
            self._said[i] = len(transcript)
