"""A person over ROS 2: what the robot says on a topic, questions over a service.

The service's request and response each carry a string (the user's own type, naming its
fields, or ``bt_raider_interfaces/srv/Ask`` of :mod:`bt_raider.ros2.interfaces`). When the
request has a ``kind`` field, ``wait_for`` goes over the same service (kind ``wait``); when the
response has a ``scene_seq`` field, the answer waits for the scene that shows what the person
did ("I've moved the chair": the next check must see the chair moved).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from bt_raider.errors import ActionFailed
from bt_raider.robot.human import CallbackHuman, HumanInterface
from bt_raider.ros2.node import Spinner
from bt_raider.ros2.scene import SceneTopic

#: Default names of the person's topic and service.
SAY_TOPIC, ASK_SERVICE = "say", "ask"
#: Seconds a question waits for its answer (a person takes time).
ANSWER_TIMEOUT_S = 120.0


def _string_type() -> Any:
    from std_msgs.msg import String

    return String


class RosHuman(CallbackHuman):
    """A :class:`~bt_raider.robot.human.HumanInterface` whose person is on ROS 2.

    Args:
        spinner: the node (started: answers arrive through its thread).
        srv_type: the question service's type (request and response each with a string).
        service: the service's name.
        say_topic: where what the robot says goes (``std_msgs/String``).
        request_field: the request's string field.
        response_field: the response's string field.
        scene: a scene topic: an answer whose response names a ``scene_seq`` waits for it.
        timeout_s: seconds a question waits for an answer before it fails.
    """

    def __init__(
        self,
        spinner: Spinner,
        srv_type: Any,
        *,
        service: str = ASK_SERVICE,
        say_topic: str = SAY_TOPIC,
        request_field: str = "text",
        response_field: str = "answer",
        scene: SceneTopic | None = None,
        timeout_s: float = ANSWER_TIMEOUT_S,
    ) -> None:
        self.spinner = spinner
        self.srv_type = srv_type
        self.service = service
        self.request_field = request_field
        self.response_field = response_field
        self.scene = scene
        self.timeout_s = timeout_s
        self._has_kind = "kind" in srv_type.Request.get_fields_and_field_types()
        string = _string_type()
        node = spinner.node
        self._client, self._say_pub = spinner.call(
            lambda: (
                node.create_client(srv_type, service),
                node.create_publisher(string, say_topic, 10),
            )
        )
        self._string = string
        super().__init__(self._ask_ros, self._say_ros, self._wait_ros if self._has_kind else None)

    def wait_for_service(self, timeout: float = 10.0) -> bool:
        """Whether the question service is in the graph within ``timeout`` seconds."""
        return bool(self._client.wait_for_service(timeout_sec=timeout))

    def _call(self, text: str, kind: str) -> Any:
        request = self.srv_type.Request()
        setattr(request, self.request_field, text)
        if self._has_kind:
            request.kind = kind
        done = threading.Event()
        holder: dict[str, Any] = {}

        def send() -> None:
            future = self._client.call_async(request)
            holder["future"] = future
            future.add_done_callback(lambda _f: done.set())

        if not self._client.service_is_ready():
            raise ActionFailed(f"nobody answers on {self.service!r} (the service is not there)")
        self.spinner.submit(send)
        if not done.wait(self.timeout_s):
            future = holder.get("future")
            if future is not None:
                self.spinner.submit(lambda: self._client.remove_pending_request(future))
            raise ActionFailed(f"no answer on {self.service!r} within {self.timeout_s:g} s")
        response = holder["future"].result()
        seq = int(getattr(response, "scene_seq", 0) or 0)
        if self.scene is not None and seq > 0 and not self.scene.wait(seq, timeout=5.0):
            raise ActionFailed(
                f"the scene {seq} showing what the person did did not arrive on "
                f"{self.scene.topic!r} (latest: {self.scene.seq})"
            )
        return response

    def _ask_ros(self, question: str) -> str:
        answer = getattr(self._call(question, "ask"), self.response_field)
        return str(answer)

    def _say_ros(self, text: str) -> None:
        msg = self._string()
        msg.data = text
        self._say_pub.publish(msg)

    def _wait_ros(self, event: str) -> bool:
        return bool(getattr(self._call(event, "wait"), "ok", True))


def serve_person(
    spinner: Spinner,
    human: HumanInterface,
    srv_type: Any,
    *,
    service: str = ASK_SERVICE,
    say_topic: str = SAY_TOPIC,
    request_field: str = "text",
    response_field: str = "answer",
    scene_seq: Callable[[], int] | None = None,
) -> Any:
    """Serve ``human`` (who answers, who hears) on the question service and the say topic.

    The robot side's counterpart of :class:`RosHuman`, for a person behind a GUI, a speech
    stack, or a simulation. ``scene_seq`` (the scene number published after the person acted)
    goes into the response's ``scene_seq`` when the type has one.

    Returns:
        ``(service, subscription)``.
    """
    node = spinner.node
    has_seq = "scene_seq" in srv_type.Response.get_fields_and_field_types()

    def answer(request: Any, response: Any) -> Any:
        text = str(getattr(request, request_field))
        if getattr(request, "kind", "ask") == "wait":
            wait_for = getattr(human, "wait_for", None)
            response.ok = bool(wait_for(text)) if wait_for is not None else True
        else:
            setattr(response, response_field, str(human.ask(text)))
            if hasattr(response, "ok"):
                response.ok = True
        if has_seq and scene_seq is not None:
            response.scene_seq = int(scene_seq())
        return response

    def heard(msg: Any) -> None:
        human.say(str(msg.data))

    string = _string_type()
    return spinner.call(
        lambda: (
            node.create_service(srv_type, service, answer),
            node.create_subscription(string, say_topic, heard, 10),
        )
    )
