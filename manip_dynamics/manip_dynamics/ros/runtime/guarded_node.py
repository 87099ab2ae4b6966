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
:class:`GuardedNode`, the base class of every node of the package.

Each subscription, timer, service and guard-condition callback it creates (also those that
helpers such as the robot_description source create on it) goes through
:func:`~manip_dynamics.ros.runtime.node_runtime.guarded`, so that no exception ever leaves a
callback into rclpy's executor; :func:`~manip_dynamics.ros.runtime.node_runtime.run_node`
spins it.
"""

from collections.abc import Callable
import os
import socket
import threading
import time
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from manip_dynamics.ros.runtime.node_runtime import guarded, guarded_service


class GuardedNode(Node):
    """
    An rclpy Node whose every callback goes through :func:`guarded`.

    It also declares ``allow_duplicate_name`` (read-only, default false): whether
    :func:`run_node` may run it beside another node of the same name.

    Its callbacks hold ``callback_lock`` (a re-entrant lock) while they run, so they run
    one at a time also where :meth:`create_lane` gives some of them a thread of their
    own; code that runs outside a callback (an action's coroutine, a worker thread) takes
    it to change what the callbacks read.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """
        Create the node (arguments as :class:`rclpy.node.Node`).

        It announces when and where it started on ``~/_started`` (std_msgs/String
        ``"<start ns> <pid> <host>"``, transient local) and listens there, so that of
        two nodes of one name the younger one knows it is the younger one.
        """
        # before Node.__init__: the parameter services it creates are wrapped with it
        self.callback_lock = threading.RLock()
        self.callback_lanes: list[Any] = []
        super().__init__(*args, **kwargs)
        value = self.declare_parameter(
            'allow_duplicate_name', False, ParameterDescriptor(
                description='Run even when a node of the same name is already on the '
                "graph (two nodes of one name answer each other's requests)",
                read_only=True)).value
        self.allow_duplicate_name = value is True
        self.started_ns = time.time_ns()
        self.others_started: dict[str, tuple[int, int, str]] = {}
        self._start_token = '%d %d %s' % (self.started_ns, os.getpid(),
                                          socket.gethostname())
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._start_pub = self.create_publisher(String, '~/_started', qos)
        self.create_subscription(String, '~/_started', self._started_callback, qos)
        self._start_pub.publish(String(data=self._start_token))

    def _started_callback(self, msg: Any) -> None:
        """Remember another node of this name: its start time, process and host."""
        if msg.data == self._start_token:
            return
        start, pid, host = msg.data.split(' ', 2)
        self.others_started[msg.data] = (int(start), int(pid), host)

    def create_subscription(self, msg_type: Any, topic: str, callback: Callable,
                            *args: Any, **kwargs: Any) -> Any:
        """Create a subscription whose callback cannot raise into the executor."""
        return super().create_subscription(msg_type, topic, guarded(self, callback),
                                           *args, **kwargs)

    def create_timer(self, timer_period_sec: float, callback: Callable,
                     *args: Any, **kwargs: Any) -> Any:
        """Create a timer whose callback cannot raise into the executor."""
        return super().create_timer(timer_period_sec, guarded(self, callback),
                                    *args, **kwargs)

    def create_service(self, srv_type: Any, srv_name: str, callback: Callable,
                       *args: Any, **kwargs: Any) -> Any:
        """Create a service whose callback answers ``success: false`` on an error."""
        return super().create_service(srv_type, srv_name,
                                      guarded_service(self, callback, srv_type),
                                      *args, **kwargs)

    def create_guard_condition(self, callback: Callable, *args: Any,
                               **kwargs: Any) -> Any:
        """Create a guard condition whose callback cannot raise into the executor."""
        return super().create_guard_condition(guarded(self, callback), *args, **kwargs)

    def create_lane(self, name: str) -> Any:
        """
        Return a new :class:`~manip_dynamics.ros.runtime.callback_lane.CallbackLane`.

        Subscriptions and timers created with its ``group`` as callback group run on the
        lane's thread once :func:`run_node` starts it (on the executor until then).
        """
        from manip_dynamics.ros.runtime.callback_lane import CallbackLane
        lane = CallbackLane(self, name)
        self.callback_lanes.append(lane)
        return lane

    def stop_lanes(self) -> None:
        """Stop every lane's thread (each ends its current callback first)."""
        for lane in self.callback_lanes:
            lane.stop()

    def destroy_node(self) -> None:
        """Stop the lanes, then destroy the node."""
        self.stop_lanes()
        super().destroy_node()
