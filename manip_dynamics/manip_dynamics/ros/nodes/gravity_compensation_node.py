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

The law and its safety rules live in :class:`manip_dynamics.control.GravityCompensator`
(docs/ROS_API.md); this node is its ROS adapter:

* every joint_states sample passes the plausibility gate first
  (:mod:`manip_dynamics.safety.plausibility`: absolute bounds, then consistency with the
  last good sample on the samples' own stamps): a glitch is logged (throttled per kind,
  counted) and answered with the last good command for at most ``glitch_hold_time``, then
  with the hold command (gravity at the last good pose), reported once; a push or a fall is
  real motion and passes; a joint above its URDF velocity limit is reported as overspeed;
* the friction feed-forward never exceeds the friction at the URDF velocity limit;
* the ramp starts at the first good joint_states message, and again after every stop;
* a watchdog checks the receive time of the last joint_states of any verdict (wall clock;
  a stream of rejected samples is not stale input); when it is older than ``timeout`` the
  node publishes ONE command, ``stale_action``: ``hold`` (default: gravity at the last good
  pose, for bare effort-controlled arms, which fall on zero torque) or ``zero`` (for arms
  that add gravity themselves, e.g. Franka, UR), logs an error, and publishes nothing until
  joint_states come back (docs/TUTORIAL_REAL_ARM.md);
* nothing non-finite is ever published, and a model without effort limits is refused
  unless ``effort_limits`` gives them;
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
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from manip_dynamics.control.gravity_compensation import GravityCompensator, watchdog_rate_range
from manip_dynamics.errors import InputError
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.parameters.gravity_compensation_node import PARAMETERS
from manip_dynamics.ros.runtime.conversions import (
    float64_multi_array, joint_state_arrays, stamp_seconds)
from manip_dynamics.ros.runtime.glitch_parameters import (
    gate_parameters, GateParameters, held_back_or_implausible)
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.names import child_name
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, run_node, send_last_zero
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.payloads import apply_payload_request, Payloads, payloads_from
from manip_dynamics.ros.runtime.qos import COMMANDS_QOS, JOINT_STATES_QOS
from manip_dynamics.ros.runtime.robot_description import (
    model_builder, NO_MODEL_MESSAGE, RobotDescriptionSource)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError
from manip_dynamics.safety.ranges import check_range
from manip_dynamics_interfaces.srv import SetPayload

#: Default node name (also the executable's name).
NODE_NAME = 'gravity_compensation'

#: Seconds between two log lines of the same kind of problem (per kind, see KindThrottle).
LOG_PERIOD = 2.0


class _Plan(NamedTuple):
    """Everything the per-message computation reads; swapped as one reference."""

    model: RobotModel
    index: list[int]
    compensator: GravityCompensator


class GravityCompensationNode(GuardedNode):
    """Publish clamped, ramped gravity-compensation efforts for an effort controller."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare and check the parameters, then create the model source and interfaces.

        :param kwargs: Passed to :class:`rclpy.node.Node`.
        :raises StartupError: A bad parameter, or a robot_description parameter that does not
            load, lacks a command joint, or cannot carry the payload.
        """
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS, on_change=self._tuned)
        urdf, build = model_builder(values)
        self.controller_name = values.controller_name
        self.command_joints = values.command_joints or []
        self.effort_scale = values.effort_scale
        self.effort_limits = values.effort_limits or []
        self.ramp_time = values.ramp_time
        self.timeout = values.timeout
        try:
            self.watchdog_rate = check_range('parameter watchdog_rate', values.watchdog_rate,
                                             watchdog_rate_range(self.timeout), 'Hz')
        except InputError as error:
            raise StartupError(str(error)) from None
        self.gate_parameters: GateParameters = gate_parameters(values, self.timeout)
        self.stale_action = values.stale_action
        self.include_friction = values.include_friction
        self.joint_states_topic = values.joint_states_topic
        self._payloads: Payloads = payloads_from(values)
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
        self._stale_since: float | None = None
        self.commands_pub = self.create_publisher(
            Float64MultiArray, child_name(self.controller_name, 'commands'), COMMANDS_QOS)
        self.commands_topic = self.commands_pub.topic_name   # resolved in the namespace
        self._control_group = MutuallyExclusiveCallbackGroup()
        self.source = RobotDescriptionSource(
            self, urdf, build, on_model=self._prepare,
            callback_group=MutuallyExclusiveCallbackGroup())
        # each joint state on a thread of its own (run_node starts it)
        self.joint_states_sub = self.create_subscription(
            JointState, self.joint_states_topic, self.joint_states_callback,
            JOINT_STATES_QOS, callback_group=self.create_lane('joint_states').group)
        self.watchdog = self.create_timer(1.0 / self.watchdog_rate,
                                          self.watchdog_callback,
                                          callback_group=self._control_group)
        self.payload_srv = self.create_service(
            SetPayload, '~/set_payload', self.set_payload_callback,
            callback_group=MutuallyExclusiveCallbackGroup())
        self.get_logger().info(
            'gravity compensation -> %s: effort_scale %g, ramp_time %g s, timeout %g s, '
            'friction feed-forward %s, on stale input: %s; glitch gate: %s' % (
                self.commands_topic, self.effort_scale, self.ramp_time, self.timeout,
                'on' if self.include_friction else 'off', self.stale_action,
                self.gate_parameters.text()))

    def _tuned(self, name: str, value: Any) -> None:
        """Use a new effort_scale (set and checked) from the next command on."""
        if name == 'effort_scale':
            with self._lock:
                self.effort_scale = value
                if self._plan is not None:
                    self._plan.compensator.rescale(value)
            self.get_logger().info('effort_scale set to %g' % value)

    # ------------------------------------------------------------------ model
    def _prepare(self, model: RobotModel) -> None:
        """
        Vet a new model: command joints, payloads, limits; install the plan for it.

        :raises InputError: The model lacks a command joint, cannot carry a payload, or has
            no effort limit for a command joint and ``effort_limits`` does not give it (the
            model is then rejected and the previous one kept).
        """
        names = self.command_joints or list(model.joint_names)
        index = [model.joint_index(name) for name in names]
        for link, (mass, com, inertia) in self._payloads.items():
            model.set_payload(link, mass, com, inertia)
        compensator = GravityCompensator(
            model, index, effort_limits=self.effort_limits or None,
            effort_scale=self.effort_scale, ramp_time=self.ramp_time, timeout=self.timeout,
            include_friction=self.include_friction,
            gate=self.gate_parameters.gate(model), stale_action=self.stale_action,
            watchdog_period=1.0 / self.watchdog_rate)
        with self._lock:
            old = self._plan
            if old is not None and old.compensator.active:
                # the new model takes over where the old one was: ramp in again from zero
                self._stale_since = time.monotonic()
            self._plan = _Plan(model, index, compensator)
        self.get_logger().info('commanding joints %s, effort limits %s' % (
            names, np.round(compensator.limits, 6).tolist()))

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
            with self._lock:
                step = plan.compensator.update(now, q, qd, stamp_seconds(msg.header.stamp))
        except ValueError as error:
            self._throttle.warning('ignoring joint_states on %s: %s' % (
                self.joint_states_topic, error))
            return
        self._report(plan, step)
        if step.command is not None:
            self.commands_pub.publish(float64_multi_array(step.command))

    def _report(self, plan: _Plan, step: Any) -> None:
        """Log what the compensator decided: start, resume, glitch (throttled), stop."""
        if step.event == 'started':
            self.get_logger().info('first joint_states: ramping in over %g s' % self.ramp_time)
        elif step.event == 'resumed':
            self.get_logger().info('joint_states are back: ramping in again over %g s'
                                   % self.ramp_time)
            self._stale_since = None
        elif step.event in ('glitch', 'holding_glitch'):
            self._throttle.warning('%s on %s (%s): %s' % (
                held_back_or_implausible(step.kind), self.joint_states_topic,
                plan.compensator.gate.summary(), step.message), kind='glitch ' + step.kind)
            if step.event == 'holding_glitch':
                self.get_logger().error('no good joint_states on %s for more than %g s: '
                                        'holding gravity at the last good pose' % (
                                            self.joint_states_topic,
                                            plan.compensator.gate.hold_time))
        elif step.event == 'recovered':
            self.get_logger().info('good joint_states again: compensating the current pose')
        elif step.event in ('stopped_stale', 'holding_stale'):
            self._stale_since = time.monotonic()
            self.get_logger().error('%s: stopped gravity compensation' % step.message)
        if step.overspeed:
            self._throttle.warning('overspeed: %s' % step.overspeed, kind='overspeed')

    def watchdog_callback(self) -> None:
        """Stop commanding, with one zero command, when joint_states are too old."""
        now = time.monotonic()
        plan = self._plan
        if plan is None:
            return
        with self._lock:
            step = plan.compensator.watchdog(now)
        if step.command is not None:
            self.commands_pub.publish(float64_multi_array(step.command))
            self._report(plan, step)
        elif self._stale_since is not None and not plan.compensator.active:
            self._throttle.error(
                'no good joint_states on %s for %.1f s: not commanding' % (
                    self.joint_states_topic, now - self._stale_since), kind='stale')

    def publish_zero(self) -> bool:
        """
        Publish one all-zero command (when the command length is known).

        :return: True when a zero command was published.
        """
        plan = self._plan
        if plan is None or not rclpy.ok(context=self.context):
            return False
        self.commands_pub.publish(float64_multi_array(plan.compensator.zero()))
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
                    report_startup_error, before_destroy=send_last_zero)


if __name__ == '__main__':
    sys.exit(main())
