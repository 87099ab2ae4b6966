# Copyright 2026 The manip_dynamics Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
feedforward_filter's link to joint_trajectory_controller (JTC): whether JTC is there, and holds.

:class:`JtcLink` watches JTC's ``~/controller_state`` (JTC publishes it only while active)
or, without control_msgs, its topic's subscribers; when JTC appears it holds the pose from
before JTC's first command (the previous controller's hold) with the gravity torques, at
once; it sends every hold (one point at rest, the pose's gravity torques as effort
feed-forward, tolerances erased so JTC keeps it) and checks it: JTC's refusal is logged with
JTC's own reason (:class:`~manip_dynamics.ros.runtime.jtc_messages.JtcLog`) and the hold is
sent again every watch period while JTC is active and no goal runs.
"""

from collections import deque
import time
from typing import Any, Callable

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.serialization import deserialize_message
from trajectory_msgs.msg import JointTrajectory

from manip_dynamics.ros.runtime.conversions import stamp_seconds
from manip_dynamics.ros.runtime.jtc_messages import (
    erased_tolerances, hold_message, JtcLog, reference_pose)
from manip_dynamics.ros.runtime.names import child_name
from manip_dynamics.ros.runtime.qos import JOINT_STATES_QOS

#: How often the link looks whether JTC has appeared and resends a refused hold [s].
WATCH_PERIOD = 0.2
#: JTC counts as inactive after this long without its controller_state [s].
ACTIVE_SILENCE = 1.0
#: Joint states kept to find the pose from before JTC's first command (0.1 s at 1 kHz).
RECENT_STATES = 100


class JtcLink:
    """JTC's presence and the holds sent to it, for the node that forwards plans to JTC."""

    def __init__(self, node: Any, name: str, *, action: Any, use_action: bool,
                 gravity: bool, feedforward: bool, event: Callable[..., None],
                 defer: Callable[..., None], pose: Callable[[], tuple],
                 busy: Callable[[], bool], goal_running: Callable[[], bool],
                 group: Any, streams: Any) -> None:
        """
        Make JTC's topic publisher and action client, subscribe to its state, start the watch.

        :param node: The node (publisher, client, subscriptions, timer, logger).
        :param name: JTC's controller name.
        :param action: The FollowJointTrajectory type (None where control_msgs is missing).
        :param use_action: Send plans and holds to JTC's action (its :attr:`client`); else
            to its topic.
        :param gravity: Holds carry the pose's gravity torques as effort feed-forward.
        :param feedforward: Holds carry effort feed-forward at all.
        :param event: ``event(text, error=False)``: log a decision and publish it.
        :param defer: ``defer(kind, call, *args)``: run ``call`` on the executor.
        :param pose: Returns (model, newest pose) (None before there are both).
        :param busy: Whether a plan is in progress (JTC must then be active).
        :param goal_running: Whether an action goal runs (no hold is resent then).
        :param group: The callback group of the watch and JTC's log.
        :param streams: The callback group of JTC's state stream (the node's lane).
        """
        self.node = node
        self.name = name
        self._action = action
        self.topic = child_name(name, 'joint_trajectory')
        self.action_name = child_name(name, 'follow_joint_trajectory')
        self._topic_pub = node.create_publisher(JointTrajectory, self.topic, 10)
        #: The FollowJointTrajectory client of JTC's action; None: plans go to its topic.
        self.client = None
        if use_action:
            from rclpy.action import ActionClient
            self.client = ActionClient(node, action, self.action_name, callback_group=group)
        self.gravity, self.feedforward = gravity, feedforward
        self._event, self._defer = event, defer
        self._pose, self._busy, self._goal_running = pose, busy, goal_running
        self.log = JtcLog(name)
        self.holds = 0
        # (why, pose, refused) of the newest hold until JTC accepts it; refused: send again
        self._pending: tuple | None = None
        self._seen = False
        # the last RECENT_STATES joint states (stamp, q): the pose before JTC's first command
        self._recent: deque = deque(maxlen=RECENT_STATES)
        self._before: np.ndarray | None = None
        self._state_wall = -1.0   # monotonic time of JTC's last controller_state
        self._state_raw: bytes | None = None   # that message, serialized
        if self.client is not None:
            from control_msgs.msg import JointTrajectoryControllerState
            from rcl_interfaces.msg import Log
            self._State = JointTrajectoryControllerState
            # JTC publishes its state only while active: the sign that it became active
            node.create_subscription(
                JointTrajectoryControllerState, child_name(name, 'controller_state'),
                self._on_state, JOINT_STATES_QOS, callback_group=streams, raw=True)
            # JTC says why it refuses a goal only in its log
            node.create_subscription(Log, '/rosout', self.log.note, 50, callback_group=group)
        # discovery is wall-clock business: a steady timer also runs when /clock does not
        node.create_timer(WATCH_PERIOD, self.watch, callback_group=group,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    @property
    def target(self) -> str:
        """Where plans and holds go: JTC's action, or its topic."""
        return self.action_name if self.client is not None else self.topic

    def note_state(self, stamp: float, q: np.ndarray) -> None:
        """From the lane: keep a joint state (the pose before JTC's first command)."""
        self._recent.append((stamp, q))

    def _on_state(self, raw: bytes) -> None:
        """Note JTC's controller_state (kept serialized: read only when needed, it is large)."""
        now = time.monotonic()
        silent = now - self._state_wall >= ACTIVE_SILENCE
        self._state_wall = now
        self._state_raw = raw
        if not self._seen:
            # JTC has just become active and holds with its PID alone: the gravity hold goes
            # out now, not at the next watch period (a soft arm sags fast meanwhile), and to
            # the pose of the newest joint state stamped before JTC's first update, which its
            # first command had not yet moved (the previous controller's hold)
            if silent:
                first = stamp_seconds(deserialize_message(raw, self._State).header.stamp)
                before = [q for stamp, q in self._recent if stamp < first]
                self._before = before[-1] if before else None
            self._defer('jtc seen', self.watch)

    def hold_pose(self, model: Any) -> np.ndarray | None:
        """
        Return the pose JTC holds now (its ``reference``), model order, or None.

        After a cancel or an abort JTC holds the positions the arm had then, with its hold
        message's effort (zero, or that of the last successful goal's end: another pose's
        gravity, which moves the arm until the node's hold arrives); the node's hold goes to
        that same pose with its own gravity torques, so the arm ends where it stopped.
        """
        raw = self._state_raw
        if model is None or raw is None:
            return None
        return reference_pose(deserialize_message(raw, self._State), model.joint_names)

    def active(self) -> bool:
        """Return whether JTC is there to take plans (its state flows, or its topic)."""
        if self.client is not None:
            return (time.monotonic() - self._state_wall < ACTIVE_SILENCE
                    and self.client.server_is_ready())
        return self.node.count_subscribers(self.topic) > 0

    def watch(self) -> None:
        """Hold when JTC becomes active (its state flows) or its topic appears; resend."""
        present = self.active()
        if not present and not self._busy():   # a plan in progress: JTC is active
            self._seen = False
            return
        model, q = self._pose()
        if present and not self._seen and q is not None and model is not None:
            self._seen = True
            pose, self._before = self._before, None
            self._pending = None
            self.hold('JTC appeared (%s): holding the %s pose with gravity torques before any '
                      'plan' % (self.target, 'current' if pose is None else 'last held'), pose)
        elif present and self._pending is not None and self._pending[2] and \
                not self._goal_running():
            why, pose, _ = self._pending
            self.hold('again: %s' % why, pose)

    def hold(self, why: str, pose: np.ndarray | None = None) -> None:
        """
        Send JTC one point, ``pose`` (default the current one), at rest, with its gravity.

        Checked: JTC's acceptance is logged; a refusal is logged and the hold stays pending,
        sent again every watch period while JTC is active and no goal runs.
        """
        model, current = self._pose()
        q = current if pose is None else pose
        if model is None or q is None:
            return
        msg = hold_message(model, q, self.gravity, self.feedforward)
        self.holds += 1
        self._pending = (why, q, False)
        self._event('hold: %s' % why)
        if self.client is None:
            if self.node.count_subscribers(self.topic) > 0:
                self._pending = None
            else:
                self._event('hold not delivered: nobody subscribes %s; sent again when JTC '
                            'listens' % self.topic, error=True)
            self._topic_pub.publish(msg)
            self._pending = (why, q, True) if self._pending else None
            return
        # no tolerance to check: JTC ends the goal at once as a success and keeps its
        # point, effort included (a goal it aborted would leave its hold message's old effort)
        erased = erased_tolerances(msg.joint_names)
        future = self.client.send_goal_async(self._action.Goal(
            trajectory=msg, path_tolerance=erased, goal_tolerance=list(erased)))
        future.add_done_callback(lambda done: self._answered(done, why, q))

    def _answered(self, future: Any, why: str, q: np.ndarray) -> None:
        handle = future.result()
        if handle is not None and handle.accepted:
            if self._pending is not None and self._pending[1] is q:
                self._pending = None
            self.node.get_logger().debug('hold accepted by %s' % self.name)
            return
        if self._pending is not None and self._pending[1] is q:
            self._pending = (why, q, True)   # the watch sends it again
        self._event('hold refused by %s%s: sent again while it is active' % (
            self.action_name, self.log.refusal()), error=True)

    def publish(self, msg: JointTrajectory) -> None:
        """Send a plan on JTC's topic (the path without its action)."""
        self._topic_pub.publish(msg)

    def shutdown_hold(self) -> bool:
        """Hold the current pose on JTC's topic on the way out (no action can complete)."""
        model, q = self._pose()
        if model is None or q is None:
            return False
        self._topic_pub.publish(hold_message(model, q, self.gravity, self.feedforward))
        return True
