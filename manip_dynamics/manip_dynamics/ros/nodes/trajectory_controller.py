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
trajectory_controller: computed-torque trajectory tracking with collision reaction.

Subscribes ``/joint_states``; takes trajectories on ``~/joint_trajectory`` (and, where
control_msgs is installed, the ``~/follow_joint_trajectory`` action of
:mod:`~manip_dynamics.ros.runtime.trajectory_goals`), read as joint_trajectory_controller
reads them or, without timing, retimed from the current pose; publishes one effort command
(std_msgs/Float64MultiArray, ``/<controller_name>/commands``, ``command_joints`` order) per
joint state, the trajectory clocked by the joint states' stamps. The law is the library's
(:class:`manip_dynamics.control.ComputedTorqueController`, or ``law: impedance``).

Safety as gravity_compensation_node has it: glitched joint states answered from the last
good one for ``glitch_hold_time``, then with gravity at the last good pose; one
``stale_action`` command when they stop for ``timeout``; every command finite and clamped
to the effort limits; a tracking error above ``max_tracking_error`` stops and holds; a
contact on ``<observer_namespace>/contact`` while moving reacts (``hold`` or ``float``) until
``~/resume``; a stamp going back (a simulator reset) drops the trajectory and holds.
Everything in detail: docs/CONTROL.md (node trajectory_controller) and docs/ROS_API.md.
"""

import concurrent.futures
import sys
import threading
import time
from typing import Any

import numpy as np
import rclpy
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from manip_dynamics.control.computed_torque import (
    ComputedTorqueController, JointImpedanceController)
from manip_dynamics.control.safe_tracking import EVENT_TEXTS, SafeTracker
from manip_dynamics.errors import InputError
from manip_dynamics.observers.contact import contact_is_current
from manip_dynamics.precompile import warm_up
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.parameters.trajectory_controller import PARAMETERS
from manip_dynamics.ros.runtime.conversions import (
    float64_multi_array, joint_state_arrays, stamp_seconds, tracked_trajectory)
from manip_dynamics.ros.runtime.glitch_parameters import gate_parameters, held_back_or_implausible
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.jtc_messages import follow_joint_trajectory
from manip_dynamics.ros.runtime.listeners import ListenerCheck
from manip_dynamics.ros.runtime.names import child_name, JOINT_STATES
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, run_node, send_last_zero
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.qos import COMMANDS_QOS, CONTACT_QOS, JOINT_STATES_QOS
from manip_dynamics.ros.runtime.robot_description import (
    model_builder, NO_MODEL_MESSAGE, RobotDescriptionSource)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS
from manip_dynamics.ros.runtime.trajectory_goals import TrajectoryGoals
from manip_dynamics_interfaces.msg import Contact

#: Default node name.
NODE_NAME = 'trajectory_controller'
LOG_PERIOD = 2.0


def _per_joint(values: list[float]) -> Any:
    """Return one gain for every joint (a list of one) or the per-joint array."""
    return values[0] if len(values) == 1 else np.array(values)


class TrajectoryControllerNode(GuardedNode):
    """Track joint trajectories with the full dynamics; react to collisions."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare and check the parameters, then the interfaces (StartupError: bad ones)."""
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS, on_change=self._tuned)
        urdf, build = model_builder(values)
        # the parameters' values, tunable ones following ros2 param set (checked)
        self.p = values
        self.gate_parameters = gate_parameters(values, values.timeout)
        self._lock = threading.Lock()
        self._throttle = KindThrottle(self.get_logger(), LOG_PERIOD)
        self._controller = None
        self._model: RobotModel | None = None
        self._index: list[int] = []
        # the controller behind the gate, the watchdog and the trajectory clock
        self._tracker: SafeTracker | None = None
        self._period = max(0.01, self.p.timeout / 4)   # the watchdog's
        self._resumed_stamp = -1.0
        # trajectories are converted and retimed here, off the control loop
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix='trajectory_worker')
        self._trajectory_requests = 0
        #: Duplicate joint states skipped, contact messages ignored as too old.
        self.duplicates = self.old_contacts = 0
        self.commands_pub = self.create_publisher(
            Float64MultiArray, child_name(self.p.controller_name, 'commands'), COMMANDS_QOS)
        self.commands_topic = self.commands_pub.topic_name   # resolved in the namespace
        # q_d - q per joint state (position field), stamped with the joint state's stamp
        self.error_pub = self.create_publisher(JointState, '~/tracking_error', 10)
        self._error_listened = ListenerCheck(self.error_pub)
        group = MutuallyExclusiveCallbackGroup()
        self.source = RobotDescriptionSource(self, urdf, build, on_model=self._prepare,
                                             callback_group=MutuallyExclusiveCallbackGroup())
        # joint states and contact flags (one per sample each) on a thread of their own
        self._lane = self.create_lane('joint_states')
        self.create_subscription(JointState, JOINT_STATES, self.joint_states_callback,
                                 JOINT_STATES_QOS, callback_group=self._lane.group)
        self.create_subscription(JointTrajectory, '~/joint_trajectory',
                                 self.trajectory_callback, 10, callback_group=group)
        self.create_service(Trigger, '~/resume', self.resume_callback, callback_group=group)
        self.create_timer(self._period, self.watchdog_callback, callback_group=group)
        self.contact_topic = ''
        if self.p.observer_namespace.strip('/'):
            self.contact_topic = self.create_subscription(
                Contact, child_name(self.p.observer_namespace, 'contact'),
                self.contact_callback, CONTACT_QOS, callback_group=self._lane.group).topic_name
        action = follow_joint_trajectory()
        self._goals = None if action is None else TrajectoryGoals(
            self, action, check=self._check_goal, start=self.start_trajectory,
            hold_here=self._hold_here,
            ending=lambda command: self._tracker.goal_ending(command, self.p.reaction))
        self.get_logger().info(
            'trajectory controller (%s) -> %s; trajectories on %s%s; reaction to contact on '
            '%s: %s; max_tracking_error %g, timeout %g s' % (
                self.p.law, self.commands_topic, self.resolve_topic_name('~/joint_trajectory'),
                (' and the action ' + self._goals.name) if self._goals else
                ' (no FollowJointTrajectory action: control_msgs is not installed)',
                self.contact_topic or '(none)', self.p.reaction, self.p.max_tracking_error,
                self.p.timeout))

    # ------------------------------------------------------------------ action
    def _check_goal(self, request: Any) -> None:
        """Refuse a goal when it arrives for what is known then (JTC does so too)."""
        model, q = self._model, self._q
        if model is None or self._controller is None:
            raise InputError(NO_MODEL_MESSAGE)
        if q is None:
            raise InputError('no joint_states yet: the current pose is unknown')
        trajectory, _ = self._trajectory(model, request.trajectory, q)
        self._controller.check_start(trajectory, q)

    def _hold_here(self, q: np.ndarray | None) -> None:
        """Stop and hold ``q`` (None: the newest good pose, if any)."""
        q = self._q if q is None else q
        if q is not None:
            with self._lock:
                self._controller.drop(q)

    def _tuned(self, name: str, value: Any) -> None:
        """
        Give the running controller a tunable parameter just set (checked, in ``self.p``).

        :raises ValueError: Gains the controller refuses (the set is refused, the old stay).
        """
        with self._lock:
            controller = self._controller
            if controller is None:
                pass
            elif name in ('kp', 'kd', 'ki'):
                controller.set_gains(*(_per_joint(getattr(self.p, key))
                                       for key in ('kp', 'kd', 'ki')))
            elif name == 'effort_scale':
                controller.rescale(value)
            elif name in ('max_tracking_error', 'start_tolerance'):
                setattr(controller, name, value)
        self.get_logger().info('%s set to %s' % (name, value))

    # ------------------------------------------------------------------ model
    def _prepare(self, model: RobotModel) -> None:
        """Build the controller for a new model (InputError: rejected, old one kept)."""
        names = self.p.command_joints or list(model.joint_names)
        index = [model.joint_index(name) for name in names]
        cls = ComputedTorqueController if self.p.law == 'computed_torque' else \
            JointImpedanceController
        controller = cls(model, _per_joint(self.p.kp), _per_joint(self.p.kd),
                         ki=_per_joint(self.p.ki),
                         effort_limits=self.p.joint_effort_limits or None,
                         effort_scale=self.p.effort_scale,
                         max_tracking_error=self.p.max_tracking_error,
                         start_tolerance=self.p.start_tolerance)
        # retiming and timed trajectories once, off the control loop (precompile.warm_up)
        warm_up(model, acceleration_limit=max(self.p.acceleration_limits)
                if self.p.acceleration_limits else None, trajectories=True)
        tracker = SafeTracker(controller, self.gate_parameters.gate(model), index,
                              timeout=self.p.timeout, period=self._period,
                              stale_action=self.p.stale_action)
        with self._lock:
            self._model, self._index, self._controller = model, index, controller
            self._tracker = tracker
        self.get_logger().info('controlling joints %s, effort limits %s' % (
            names, np.round(controller.limits[index], 6).tolist()))

    # ------------------------------------------------------------------ control
    def joint_states_callback(self, msg: JointState) -> None:
        """One command per joint state."""
        now = time.monotonic()
        if self._tracker is None:
            self._throttle.warning(NO_MODEL_MESSAGE, kind='no model')
            return
        try:
            q, qd = joint_state_arrays(self._model, msg)
            if qd is None:
                raise InputError('joint_states has no velocities')
        except ValueError as error:
            self._throttle.warning('ignoring joint_states: %s' % error)
            return
        with self._lock:
            step = self._tracker.update(now, stamp_seconds(msg.header.stamp), q, qd)
        self._report(step)
        command = step.control
        if command is not None:
            if self._goals is not None:
                self._goals.step(command, q)
            if command.event == 'finished':
                self.get_logger().info('trajectory finished: holding its last point')
            elif command.event == 'tracking_error':
                self.get_logger().error(command.message)
            if command.saturated:
                self._throttle.warning('efforts clipped to the effort limits', kind='saturated')
        if step.command is not None:
            self.commands_pub.publish(float64_multi_array(step.command))
        if command is not None and self._error_listened():
            error = JointState(name=list(self._model.joint_names),
                               position=command.error.tolist())
            error.header.stamp = msg.header.stamp
            self.error_pub.publish(error)

    def _report(self, step: Any) -> None:
        """Log what the tracker decided (SafeTracker's events)."""
        for event in step.events:
            if event == 'duplicate':
                # no news (a hardware interface repeated its old sample): the command in
                # force stays in force at the effort controller
                self.duplicates += 1
            elif event in ('glitch', 'holding_glitch'):
                self._throttle.warning('%s (%s): %s' % (
                    held_back_or_implausible(step.kind), self._tracker.gate.summary(),
                    step.message), kind='glitch ' + step.kind)
                if event == 'holding_glitch':
                    self.get_logger().error(
                        'no good joint_states for more than %g s: holding gravity at the '
                        'last good pose' % self._tracker.gate.hold_time)
            else:
                self.get_logger().info(EVENT_TEXTS[event])
        if step.overspeed:
            self._throttle.warning('overspeed: %s' % step.overspeed, kind='overspeed')

    def watchdog_callback(self) -> None:
        """No joint_states at all for ``timeout``: one stale_action command, then nothing."""
        if self._tracker is None:
            return
        with self._lock:
            step = self._tracker.watchdog(time.monotonic())
        if step.command is not None:
            self.commands_pub.publish(float64_multi_array(step.command))
            self.get_logger().error(step.message)

    @property
    def _q(self) -> np.ndarray | None:
        """The last good pose [rad or m], model order (None before the first)."""
        return None if self._tracker is None else self._tracker.q

    @property
    def _stamp(self) -> float:
        """The last good joint state's stamp [s] (-1 before the first)."""
        return -1.0 if self._tracker is None else self._tracker.stamp

    @property
    def _trajectory_time(self) -> float:
        """The trajectory clock [s]: the last good joint state's stamp."""
        return 0.0 if self._tracker is None else self._tracker.time

    def trajectory_callback(self, msg: JointTrajectory) -> None:
        """
        Take a new trajectory on the worker thread (refused with a logged reason).

        Converting and retiming (5 to 30 ms) off the control loop, which keeps commanding
        until the new one is installed; of several sent meanwhile only the newest is.
        """
        with self._lock:
            self._trajectory_requests += 1
            ticket = self._trajectory_requests
        self._worker.submit(self._start_from_worker, msg, ticket)

    def _start_from_worker(self, msg: JointTrajectory, ticket: int) -> None:
        if ticket != self._trajectory_requests:
            return   # a newer trajectory came while this one waited
        try:
            self.start_trajectory(msg, ticket)
        except ValueError as error:
            self.get_logger().error('trajectory refused: %s' % error)
        except Exception as error:  # noqa: B902 - a worker must report, never die silently
            self.get_logger().error('trajectory refused: internal error: %s: %s' % (
                type(error).__name__, error))

    def start_trajectory(self, msg: JointTrajectory, ticket: int | None = None) -> str:
        """
        Convert, retime when untimed, check the start and follow ``msg``; return a description.

        :param ticket: From :meth:`trajectory_callback`: install only if no newer trajectory
            was sent meanwhile (None: install).
        :raises ValueError: No model or state yet, bad message, or a start away from the pose.
        """
        model, controller, q = self._model, self._controller, self._q
        if model is None or controller is None:
            raise InputError(NO_MODEL_MESSAGE)
        if q is None:
            raise InputError('no joint_states yet: the current pose is unknown')
        traj, how = self._trajectory(model, msg, q)
        with self._lock:
            if ticket is not None and ticket != self._trajectory_requests:
                return 'superseded by a newer trajectory'
            if ticket is None:   # an action goal: a topic trajectory still in the worker is older
                self._trajectory_requests += 1
            controller.set_trajectory(traj, self._trajectory_time, self._q)
        text = '%s trajectory of %d points, %.3f s' % (how, len(msg.points), traj.duration)
        self.get_logger().info('following a %s' % text)
        return text

    def _trajectory(self, model: RobotModel, msg: JointTrajectory, q: np.ndarray) -> tuple:
        """Return (TimedPoints, how) for a trajectory message (ValueError: refused)."""
        return tracked_trajectory(model, msg, q=q, now=self._stamp,
                                  acceleration_limits=self.p.acceleration_limits or None,
                                  start_tolerance=self.p.start_tolerance,
                                  effort_scale=self.p.effort_scale)

    def contact_callback(self, msg: Any) -> None:
        """Contact while moving: stop and react (hold or float)."""
        received = time.monotonic()
        controller = self._controller
        if controller is None or not msg.contact or self._q is None or \
                controller.state != 'tracking':
            return
        # the contact's stamp is the joint state's it was computed from (the hardware's
        # clock); one too old, or from before the last resume, is about a state left behind
        stamp = stamp_seconds(msg.header.stamp)
        age = self._stamp - stamp
        if stamp > 0.0 and not contact_is_current(stamp, self._stamp, self._resumed_stamp,
                                                  self.p.max_contact_age):
            self.old_contacts += 1
            self._throttle.warning(
                'ignoring a contact message %.3f s older than the newest joint state (more '
                'than max_contact_age %g s, or from before the last resume; %d ignored)' % (
                    age, self.p.max_contact_age, self.old_contacts), kind='old contact')
            return
        with self._lock:
            controller.react(self.p.reaction, self._q)
        self.get_logger().warning(
            'contact (strongest at %s): stopped the trajectory, reaction %s (%.1f ms after '
            'the contact message arrived); call ~/resume to continue' % (
                msg.strongest_joint, self.p.reaction, 1e3 * (time.monotonic() - received)))

    def resume_callback(self, request: Trigger.Request,
                        response: Trigger.Response) -> Trigger.Response:
        """Continue the stopped trajectory from where it stopped."""
        try:
            if self._controller is None or self._q is None:
                raise InputError(NO_MODEL_MESSAGE)
            with self._lock:
                response.message = self._controller.resume(self._trajectory_time, self._q)
                self._resumed_stamp = self._stamp
            response.success = True
            self.get_logger().info('resume: %s' % response.message)
        except ValueError as error:
            response.success = False
            response.message = str(error)
            self.get_logger().warning('resume refused: %s' % error)
        return response

    def publish_zero(self) -> bool:
        """Publish one all-zero command (when the command length is known); on the way out."""
        self._worker.shutdown(wait=False, cancel_futures=True)   # no trajectory after it
        if not self._index or not rclpy.ok(context=self.context):
            return False
        self.commands_pub.publish(float64_multi_array(np.zeros(len(self._index))))
        return True


def main(args: list[str] | None = None) -> int:
    """Run the trajectory controller; publish a zero command on the way out."""
    return run_node(NODE_NAME, TrajectoryControllerNode, args, STARTUP_ERRORS,
                    report_startup_error, before_destroy=send_last_zero)


if __name__ == '__main__':
    sys.exit(main())
