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
The ``gravity_compensation_node``: g(q) efforts for a ros2_control effort controller.

For every sensor_msgs/JointState message it publishes std_msgs/Float64MultiArray on
``/<controller_name>/commands`` (the input of ros2_controllers' JointGroupEffortController
and ForwardCommandController), one value per ``command_joints`` entry in that order:

    tau = clamp(min(1, t / ramp_time) * (g(q) [+ friction(qd)]), +-effort_limit * effort_scale)

Safety rules, for a physical arm (docs/ROS_API.md):

* the ramp starts at the first good joint_states message, and again whenever joint_states
  resume after a timeout;
* a watchdog checks the receive time of the last good joint_states (wall clock); when it is
  older than ``timeout`` the node publishes ONE zero command (the effort controllers have no
  command timeout and would otherwise hold the last efforts), logs an error, and publishes
  nothing until joint_states come back;
* nothing non-finite is ever published: a NaN/inf result is logged and dropped;
* on shutdown (SIGINT, SIGTERM, external shutdown) the node publishes one zero command
  before it leaves the ROS graph.
"""

import sys
import threading
import time
from typing import Any, NamedTuple

import numpy as np
import rclpy
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from manip_dynamics.errors import InputError
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.conversions import float64_multi_array, joint_state_arrays
from manip_dynamics.ros.node_runtime import KindThrottle, run_node
from manip_dynamics.ros.payloads import (
    apply_payload_request, declare_payload_parameters, Payloads)
from manip_dynamics.ros.robot_description import (
    declare_model_parameters, NO_MODEL_MESSAGE, param_bool, param_float,
    param_string, param_strings, report_startup_error, RobotDescriptionSource, STARTUP_ERRORS,
    StartupError)
from manip_dynamics_interfaces.srv import SetPayload

#: Default node name (also the executable's name).
NODE_NAME = 'gravity_compensation'

#: joint_states QoS: best effort matches reliable and best-effort publishers alike.
JOINT_STATES_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)

#: Commands QoS: what ros2_controllers' forward-command controllers subscribe with.
COMMANDS_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)

#: Seconds between two log lines of the same kind of problem (per kind, see KindThrottle).
LOG_PERIOD = 2.0


class _Plan(NamedTuple):
    """Everything the per-message computation reads; swapped as one reference."""

    model: RobotModel
    index: list[int]
    limits: np.ndarray


class GravityCompensationNode(Node):
    """Publish clamped, ramped gravity-compensation efforts for an effort controller."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare and check the parameters, then create the model source and interfaces.

        :param kwargs: Passed to :class:`rclpy.node.Node`.
        :raises StartupError: A bad parameter, or a robot_description parameter that does not
            load, lacks a command joint, or cannot carry the payload.
        """
        super().__init__(NODE_NAME, **kwargs)
        urdf, build = declare_model_parameters(self)
        self.controller_name = param_string(
            self, 'controller_name', 'effort_controller',
            'Effort controller; commands go to /<controller_name>/commands')
        self.command_joints = param_strings(
            self, 'command_joints',
            "The controller's joints in its order; empty = every model joint, model order")
        self.effort_scale = param_float(
            self, 'effort_scale', 1.0, 'Clamp every effort to effort_scale * URDF limit',
            low=0.0, high=1.0, low_open=True)
        self.ramp_time = param_float(
            self, 'ramp_time', 2.0, 'Seconds to ramp the efforts in from zero', low=0.0)
        self.timeout = param_float(
            self, 'timeout', 0.1, 'Stop commanding when joint_states are older [s]',
            low=0.0, low_open=True)
        self.watchdog_rate = param_float(
            self, 'watchdog_rate', 50.0, 'Rate of the joint_states age check [Hz]', low=0.0,
            low_open=True)
        self.include_friction = param_bool(
            self, 'include_friction', False,
            'Add the URDF friction feed-forward b qd + f_c tanh(qd / v_s) from joint_states '
            'velocities')
        self.joint_states_topic = param_string(
            self, 'joint_states_topic', '/joint_states', 'sensor_msgs/JointState input topic')
        self._payloads: Payloads = declare_payload_parameters(self)
        if not self.controller_name.strip('/'):
            raise StartupError('parameter controller_name must not be empty')
        if not self.joint_states_topic:
            raise StartupError('parameter joint_states_topic must not be empty')
        if len(set(self.command_joints)) != len(self.command_joints):
            raise StartupError('parameter command_joints names a joint twice: %s'
                               % self.command_joints)

        self._lock = threading.Lock()
        self._throttle = KindThrottle(self.get_logger(), LOG_PERIOD)
        self._plan: _Plan | None = None
        self._active = False
        self._last_rx: float | None = None
        self._ramp_start = 0.0
        self._stale_since: float | None = None
        self.commands_topic = '/%s/commands' % self.controller_name.strip('/')
        self.commands_pub = self.create_publisher(Float64MultiArray, self.commands_topic,
                                                  COMMANDS_QOS)
        self._control_group = MutuallyExclusiveCallbackGroup()
        self.source = RobotDescriptionSource(
            self, urdf, build, on_model=self._prepare,
            callback_group=MutuallyExclusiveCallbackGroup())
        self.joint_states_sub = self.create_subscription(
            JointState, self.joint_states_topic, self.joint_states_callback,
            JOINT_STATES_QOS, callback_group=self._control_group)
        self.watchdog = self.create_timer(1.0 / self.watchdog_rate, self.watchdog_callback,
                                          callback_group=self._control_group)
        self.payload_srv = self.create_service(
            SetPayload, '~/set_payload', self.set_payload_callback,
            callback_group=MutuallyExclusiveCallbackGroup())
        self.get_logger().info(
            'gravity compensation -> %s: effort_scale %g, ramp_time %g s, timeout %g s, '
            'friction feed-forward %s' % (self.commands_topic, self.effort_scale,
                                          self.ramp_time, self.timeout,
                                          'on' if self.include_friction else 'off'))

    # ------------------------------------------------------------------ model
    def _prepare(self, model: RobotModel) -> None:
        """
        Vet a new model: command joints, payloads, limits; install the plan for it.

        :raises InputError: The model lacks a command joint or cannot carry a payload (the
            model is then rejected and the previous one kept).
        """
        names = self.command_joints or list(model.joint_names)
        index = [model.joint_index(name) for name in names]
        for link, (mass, com, inertia) in self._payloads.items():
            model.set_payload(link, mass, com, inertia)
        limits = model.effort_limits[index] * self.effort_scale
        unlimited = [name for name, limit in zip(names, limits) if not np.isfinite(limit)]
        if unlimited:
            self.get_logger().warning('joints %s have no URDF effort limit: their commands '
                                      'are not clamped' % unlimited)
        with self._lock:
            self._plan = _Plan(model, index, limits)
        self.get_logger().info('commanding joints %s, effort limits %s' % (
            names, np.round(limits, 6).tolist()))

    # ------------------------------------------------------------------ control
    def joint_states_callback(self, msg: JointState) -> None:
        """Publish the compensation efforts for one joint_states message."""
        now = time.monotonic()
        plan = self._plan
        if plan is None:
            self._throttle.warning(NO_MODEL_MESSAGE, kind='no model')
            return
        try:
            q, qd = joint_state_arrays(plan.model, msg)
            tau = plan.model.gravity_torques(q)
            if self.include_friction:
                if qd is None:
                    raise InputError('include_friction is set but joint_states has no '
                                     'velocities')
                tau = tau + plan.model.friction_torques(qd)
        except ValueError as error:
            self._throttle.warning('ignoring joint_states on %s: %s' % (
                self.joint_states_topic, error))
            return
        with self._lock:
            if not self._active:
                self._active = True
                self._ramp_start = now
                if self._stale_since is not None:
                    self.get_logger().info('joint_states are back: ramping in again over '
                                           '%g s' % self.ramp_time)
                else:
                    self.get_logger().info('first joint_states: ramping in over %g s'
                                           % self.ramp_time)
                self._stale_since = None
            self._last_rx = now
            ramp = 1.0 if self.ramp_time <= 0.0 else min(1.0, (now - self._ramp_start)
                                                         / self.ramp_time)
        command = np.clip(ramp * tau[plan.index], -plan.limits, plan.limits)
        if not np.all(np.isfinite(command)):
            self._throttle.error('non-finite efforts %s: nothing published' % command,
                                 kind='non-finite')
            return
        self.commands_pub.publish(float64_multi_array(command))

    def watchdog_callback(self) -> None:
        """Stop commanding, with one zero command, when joint_states are too old."""
        now = time.monotonic()
        with self._lock:
            if self._active and self._last_rx is not None:
                age = now - self._last_rx
                if age > self.timeout:
                    self._active = False
                    self._stale_since = now
                    stopped = True
                else:
                    stopped = False
            else:
                stopped = False
        if stopped:
            self.publish_zero()
            self.get_logger().error(
                'joint_states on %s are %.3f s old (timeout %g s): stopped gravity '
                'compensation, sent one zero command' % (self.joint_states_topic, age,
                                                         self.timeout))
        elif self._stale_since is not None:
            self._throttle.error(
                'no joint_states on %s for %.1f s: not commanding' % (
                    self.joint_states_topic, now - self._last_rx), kind='stale')

    def publish_zero(self) -> bool:
        """
        Publish one all-zero command (when the command length is known).

        :return: True when a zero command was published.
        """
        plan = self._plan
        if plan is None or not rclpy.ok(context=self.context):
            return False
        self.commands_pub.publish(float64_multi_array(np.zeros(len(plan.index))))
        return True

    # ------------------------------------------------------------------ services
    def set_payload_callback(self, request: SetPayload.Request,
                             response: SetPayload.Response) -> SetPayload.Response:
        """Answer ~/set_payload: attach (mass > 0) or remove (mass = 0) a link's payload."""
        try:
            plan = self._plan
            if plan is None:
                raise InputError(NO_MODEL_MESSAGE)
            response.message = apply_payload_request(plan.model, self._payloads, request)
            response.success = True
            self.get_logger().info('set_payload: %s' % response.message)
        except Exception as error:  # noqa: B902 - a request must never kill the node
            response.success = False
            response.message = (str(error) if isinstance(error, ValueError)
                                else 'internal error: %s: %s' % (type(error).__name__, error))
            self.get_logger().warning('set_payload: %s' % response.message)
        return response


def _send_last_zero(node: GravityCompensationNode) -> None:
    """Publish the zero command on the way out and give the middleware time to send it."""
    if node.publish_zero():
        node.get_logger().info('shutting down: sent one zero command to %s'
                               % node.commands_topic)
        time.sleep(0.05)  # let the middleware hand the last command out


def main(args: list[str] | None = None) -> int:
    """
    Run the gravity-compensation node; publish a zero command on the way out.

    :func:`run_node` installs SIGINT/SIGTERM handlers that only ask the spin loop to stop
    (rclpy's own handler would invalidate the context before the zero command can be
    published). A single thread serves everything: rclpy's multi-threaded executor left
    joint_states unserved for 0.5-2 s at a time here, which tripped the staleness watchdog.

    :param args: Command-line arguments (ROS arguments included); default ``sys.argv``.
    :return: Exit code: 0 after a normal shutdown, 1 on unusable start-up parameters.
    """
    return run_node(NODE_NAME, GravityCompensationNode, args, STARTUP_ERRORS,
                    report_startup_error, before_destroy=_send_last_zero)


if __name__ == '__main__':
    sys.exit(main())
