"""bt_raider's :class:`~bt_raider.robot.actions.Robot` protocol over ROS 2 action servers.

The user maps each action name of their tree to a :class:`RosAction`: its action type, its
server's name, a goal builder (from the arguments the guard resolved, and the scene) and a
result reader. Every way a goal can go ends in a defined state that ``poll`` reports:

=====================  ==========================================================
what happened          ``poll``
=====================  ==========================================================
accepted, running      RUNNING
succeeded              SUCCEEDED, once the scene that shows its effect arrived
                       (the result's scene sequence; FAILED if it never comes)
result reader says no  FAILED with its message
rejected               FAILED "goal rejected by SERVER"
aborted / cancelled    FAILED with the status and the result's message
no answer to the goal  FAILED after ``accept_timeout_s``
server lost            FAILED when the server has been gone from the graph for
                       ``grace_s`` (a SIGKILLed robot leaves it after the short
                       participant lease of :mod:`bt_raider.ros2.env`)
=====================  ==========================================================

``cancel`` (a tree stopped, a guard halting its child) cancels the goal on the server.
Nothing blocks: goals are sent and cancelled on the spinner's thread, and ``poll`` reads
what the callbacks recorded.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bt_raider.errors import ActionFailed, CommunicationError, UsageError
from bt_raider.robot.actions import ActionState, Progress
from bt_raider.ros2.node import Spinner
from bt_raider.ros2.scene import SceneTopic

#: Seconds a server may stay gone from the graph before its goal fails.
GRACE_S = 1.0
#: Seconds a server has to accept or reject a goal.
ACCEPT_TIMEOUT_S = 5.0
#: Seconds a succeeded goal waits for the scene that shows its effect.
SCENE_TIMEOUT_S = 3.0
#: Seconds between two checks that each server is still in the graph.
LIVENESS_PERIOD_S = 0.1
#: Seconds a server may stay unfound before its action client is made anew (see RosRobot).
REMAKE_S = 5.0

log = logging.getLogger(__name__)
# What an action server is in the graph: three services and two topics.
_SERVICES = ("send_goal", "cancel_goal", "get_result")
_TOPICS = ("feedback", "status")


def default_result(result: Any) -> tuple[bool, str]:
    """A result's ``(ok, message)`` from its ``ok``/``success`` and ``message`` fields.

    A result type without either flag counts as ok when the goal succeeded.
    """
    ok = getattr(result, "ok", getattr(result, "success", True))
    return bool(ok), str(getattr(result, "message", "") or "")


def default_scene_seq(result: Any) -> int:
    """The scene sequence a result names (its ``scene_seq`` field; 0: none to wait for)."""
    return int(getattr(result, "scene_seq", 0) or 0)


@dataclass(frozen=True)
class RosAction:
    """How one of the tree's actions runs on a ROS 2 action server.

    Two more fields read the result: ``result``, ``result message -> (ok, message)`` (default
    :func:`default_result`), and ``scene_seq``, ``result message -> scene sequence`` that shows
    the effect (default :func:`default_scene_seq`; 0 waits for nothing).

    Attributes:
        action_type: the action's type (e.g. ``nav2_msgs.action.NavigateToPose``).
        server: the action server's name.
        goal: ``(resolved args, scene dict or None) -> goal message``; raise
            :class:`~bt_raider.errors.ActionFailed` (or ValueError) when the args make no goal.
    """

    action_type: Any
    server: str
    goal: Callable[[list[Any], dict[str, Any] | None], Any]
    result: Callable[[Any], tuple[bool, str]] = default_result
    scene_seq: Callable[[Any], int] = default_scene_seq


class _Goal:
    """What the callbacks learned about one goal (written on the spinner's thread)."""

    def __init__(self, name: str, spec: RosAction) -> None:
        self.name = name
        self.spec = spec
        self.sent_at = time.monotonic()
        self.handle: Any = None  # the rclpy ClientGoalHandle once answered
        self.accepted: bool | None = None
        self.status: int | None = None
        self.result: Any = None
        self.error: str | None = None
        self.cancel_requested = False
        self.cancel_sent = False
        self.done_at: float | None = None
        self.final: Progress | None = None


class RosRobot:
    """The :class:`~bt_raider.robot.actions.Robot` protocol on ROS 2 action servers.

    Args:
        spinner: the node that holds the action clients (started or not).
        actions: the tree's action name -> :class:`RosAction`.
        scene: the scene topic (``observe`` reads it; results wait for its sequence).
        grace_s: seconds a server may be gone from the graph before its goal fails.
        accept_timeout_s: seconds a server has to accept or reject a goal.
        scene_timeout_s: seconds a succeeded goal waits for the scene showing its effect.

    A server that is not found within :data:`REMAKE_S` seconds gets a new action client (and
    again every :data:`REMAKE_S` s until found; :attr:`remade` counts them). rmw counts a server
    ready only when this client's own endpoints matched it, and under heavy load one server was
    once not ready for 30 s while the robot's other server was; a new client matches afresh.
    """

    def __init__(
        self,
        spinner: Spinner,
        actions: Mapping[str, RosAction],
        scene: SceneTopic | None = None,
        *,
        grace_s: float = GRACE_S,
        accept_timeout_s: float = ACCEPT_TIMEOUT_S,
        scene_timeout_s: float = SCENE_TIMEOUT_S,
    ) -> None:
        if not actions:
            raise UsageError("RosRobot needs at least one action: got an empty mapping")
        self.spinner = spinner
        self.actions = dict(actions)
        self.scene = scene
        self.grace_s = grace_s
        self.accept_timeout_s = accept_timeout_s
        self.scene_timeout_s = scene_timeout_s
        self._goals: dict[int, _Goal] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # Whether each server is in the graph, and since when it is not (written by a timer).
        self._alive: dict[str, bool] = {}
        self._gone_since: dict[str, float] = {}
        self._seen: set[str] = set()  # servers that were in the graph at least once
        self._types = {spec.server: spec.action_type for spec in self.actions.values()}
        self._made_at = dict.fromkeys(self._types, time.monotonic())
        self._remaking: set[str] = set()
        #: How many times each server's action client was made anew (see the class).
        self.remade = dict.fromkeys(self._types, 0)
        self._clients = spinner.call(self._create)

    def _create(self) -> dict[str, Any]:
        from rclpy.action.client import ActionClient

        node = self.spinner.node
        clients: dict[str, Any] = {s: ActionClient(node, t, s) for s, t in self._types.items()}
        self._timer = node.create_timer(LIVENESS_PERIOD_S, self._check_servers)
        return clients

    def _check_servers(self) -> None:
        now = time.monotonic()
        for server, client in self._clients.items():
            ready = bool(client.server_is_ready())
            self._alive[server] = ready
            if ready:
                self._seen.add(server)
                self._gone_since.pop(server, None)
                continue
            self._gone_since.setdefault(server, now)
            stale = now - self._made_at[server] >= REMAKE_S
            if server not in self._seen and stale and server not in self._remaking:
                self._remaking.add(server)
                self.spinner.defer(functools.partial(self._remake, server))

    def _remake(self, server: str) -> None:
        """A new action client for ``server`` (never found yet: no goal went through it)."""
        from rclpy.action.client import ActionClient

        try:
            found = self.explain_missing([server])
            # Every part in the graph yet not ready is the anomaly; nothing yet is a slow robot.
            level = logging.WARNING if found.endswith("not: nothing") else logging.INFO
            log.log(
                level,
                "action server %r not ready in %g s (%s): a new client",
                server,
                REMAKE_S,
                found,
            )
            old = self._clients[server]
            self._clients[server] = ActionClient(self.spinner.node, self._types[server], server)
            old.destroy()
            self.remade[server] += 1
        finally:
            self._made_at[server] = time.monotonic()
            self._remaking.discard(server)

    # ------------------------------------------------------------------ waiting for servers
    def wait_for_servers(self, timeout: float = 10.0) -> list[str]:
        """Wait until every server was found in the graph; those not found after ``timeout``.

        Found once is enough: a server that misses its lease under load for a moment is not
        missing (``start`` and ``poll`` judge that with the grace period). Meanwhile a server
        not found gets a new client every :data:`REMAKE_S` s; :meth:`explain_missing` says
        what the graph holds of those still missing.
        """
        deadline = time.monotonic() + timeout
        while True:
            missing = [s for s in self._clients if s not in self._seen]
            if not missing or time.monotonic() >= deadline:
                return missing
            time.sleep(0.02)

    def explain_missing(self, servers: Sequence[str]) -> str:
        """What the graph holds of each server in ``servers`` (for a failure message).

        An action server is three services and two topics; this names those found and those
        not, so "not found" says whether the robot is absent or half-discovered.
        """
        parts = []
        for server in servers:
            base = server.rstrip("/") + "/_action/"
            node = self.spinner.node
            found = {
                **{s: node.count_services(base + s) for s in _SERVICES},
                **{t: node.count_publishers(base + t) for t in _TOPICS},
            }
            seen = [k for k, n in found.items() if n]
            unseen = [k for k, n in found.items() if not n]
            parts.append(
                f"{server!r}: in the graph: {', '.join(seen) or 'nothing'}; "
                f"not: {', '.join(unseen) or 'nothing'}"
            )
        return "; ".join(parts)

    # ------------------------------------------------------------------ Robot protocol
    def start(self, action: str, args: Sequence[Any]) -> Hashable:
        """Send ``action(*args)``'s goal; its handle.

        Raises:
            ActionFailed: the action is not mapped, its server is not in the graph, or its
                goal builder refused the arguments.
        """
        spec = self.actions.get(action)
        if spec is None:
            raise ActionFailed(
                f"no ROS 2 action server for {action!r}: expected one of {', '.join(self.actions)}"
            )
        gone = self._gone_since.get(spec.server)
        if spec.server not in self._seen or (
            gone is not None and time.monotonic() - gone >= self.grace_s
        ):
            # Gone for less than the grace period: a participant that missed its lease under
            # load comes back; the goal waits for it, and poll judges it lost after grace_s.
            raise ActionFailed(f"{action}: action server {spec.server!r} is not available")
        scene = None
        if self.scene is not None:
            try:
                scene = self.scene()
            except Exception as exc:  # no scene: the goal builder gets None and may refuse
                scene = None
                if getattr(self.scene, "message", None) is not None:
                    raise ActionFailed(f"{action}: the scene is not usable: {exc}") from exc
        try:
            goal_msg = spec.goal(list(args), scene)
        except (ActionFailed, ValueError, KeyError, TypeError) as exc:
            raise ActionFailed(f"{action}({', '.join(map(str, args))}): no goal: {exc}") from exc
        goal = _Goal(action, spec)
        with self._lock:
            handle = next(self._ids)
            self._goals[handle] = goal
        client = self._clients[spec.server]
        self.spinner.submit(lambda: self._send(client, goal_msg, goal))
        return handle

    def _send(self, client: Any, goal_msg: Any, goal: _Goal) -> None:
        future = client.send_goal_async(goal_msg)
        future.add_done_callback(lambda f: self._answered(f, goal))

    def _answered(self, future: Any, goal: _Goal) -> None:
        exc = future.exception()
        if exc is not None:
            goal.error = f"sending the goal failed: {exc!r}"
            return
        handle = future.result()
        goal.handle = handle
        goal.accepted = bool(handle.accepted)
        if not handle.accepted:
            return
        handle.get_result_async().add_done_callback(lambda f: self._finished(f, goal))
        if goal.cancel_requested:
            self._send_cancel(goal)

    def _finished(self, future: Any, goal: _Goal) -> None:
        exc = future.exception()
        if exc is not None:
            goal.error = f"getting the result failed: {exc!r}"
        else:
            response = future.result()
            goal.result = response.result
            goal.status = int(response.status)
        goal.done_at = time.monotonic()

    def _send_cancel(self, goal: _Goal) -> None:
        if goal.cancel_sent or goal.handle is None or goal.done_at is not None:
            return
        goal.cancel_sent = True
        goal.handle.cancel_goal_async()

    def poll(self, handle: Hashable) -> Progress:
        """Where the goal is (see the module's table)."""
        goal = self._goals.get(handle)  # type: ignore[call-overload]
        if goal is None:
            return Progress(ActionState.FAILED, f"unknown action handle {handle!r}")
        if goal.final is None:
            goal.final = self._judge(goal)
        progress = goal.final
        if progress.state is ActionState.RUNNING:
            goal.final = None
        return progress

    def _judge(self, goal: _Goal) -> Progress:
        from action_msgs.msg import GoalStatus

        server, now = goal.spec.server, time.monotonic()
        if goal.error is not None:
            return Progress(ActionState.FAILED, f"{goal.name}: {goal.error}")
        if goal.accepted is False:
            return Progress(ActionState.FAILED, f"{goal.name}: goal rejected by {server!r}")
        if goal.done_at is not None:
            return self._outcome(goal, GoalStatus)
        gone = self._gone_since.get(server)
        if gone is not None and now - max(gone, goal.sent_at) >= self.grace_s:
            return Progress(
                ActionState.FAILED,
                f"{goal.name}: action server {server!r} lost "
                f"(gone from the ROS 2 graph for {now - gone:.1f} s)",
            )
        if goal.accepted is None and now - goal.sent_at > self.accept_timeout_s:
            return Progress(
                ActionState.FAILED,
                f"{goal.name}: {server!r} did not answer the goal within "
                f"{self.accept_timeout_s:g} s",
            )
        return Progress(ActionState.RUNNING, f"{goal.name} running on {server!r}")

    def _outcome(self, goal: _Goal, status: Any) -> Progress:
        name, result = goal.name, goal.result
        if goal.status == status.STATUS_SUCCEEDED:
            try:
                ok, message = goal.spec.result(result)
                seq = goal.spec.scene_seq(result)
            except Exception as exc:  # the user's reader: an unreadable result is a failure
                return Progress(ActionState.FAILED, f"{name}: unreadable result: {exc!r}")
            if not ok:
                return Progress(ActionState.FAILED, f"{name} failed: {message}")
            if self.scene is not None and seq > 0 and self.scene.seq < seq:
                waited = time.monotonic() - (goal.done_at or 0.0)
                if waited <= self.scene_timeout_s:
                    return Progress(ActionState.RUNNING, f"{name} done: waiting for scene {seq}")
                return Progress(
                    ActionState.FAILED,
                    f"{name} done, but scene {seq} that shows it did not arrive within "
                    f"{self.scene_timeout_s:g} s (latest: {self.scene.seq})",
                )
            return Progress(ActionState.SUCCEEDED, message or f"{name} done")
        words = {status.STATUS_ABORTED: "aborted", status.STATUS_CANCELED: "cancelled"}
        what = words.get(goal.status, f"ended with status {goal.status}")
        try:
            _ok, message = goal.spec.result(result)
        except Exception:  # the reason is the status; a message is a bonus
            message = ""
        return Progress(ActionState.FAILED, f"{name} {what}" + (f": {message}" if message else ""))

    def cancel(self, handle: Hashable) -> None:
        """Cancel the goal on its server (no-op when it already ended)."""
        goal = self._goals.get(handle)  # type: ignore[call-overload]
        if goal is None or goal.done_at is not None:
            return
        goal.cancel_requested = True
        try:
            self.spinner.submit(lambda: self._send_cancel(goal))
        except CommunicationError:  # the node is closed: nothing left to cancel through
            pass

    def observe(self) -> dict[str, Any]:
        """The latest scene from the scene topic.

        Raises:
            UsageError: the robot has no scene topic.
            SceneError: no usable scene yet (see :class:`SceneTopic`).
        """
        if self.scene is None:
            raise UsageError("this RosRobot has no scene topic: pass scene=SceneTopic(...)")
        return self.scene()
