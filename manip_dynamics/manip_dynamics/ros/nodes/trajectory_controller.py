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

Subscribes ``/joint_states``; takes trajectories on ``~/joint_trajectory``
(trajectory_msgs/JointTrajectory, as joint_trajectory_controller does: a first point after
t = 0 is reached from the current pose; a trajectory without timing, every
``time_from_start`` zero, is retimed within the URDF velocity and effort limits and the
``acceleration_limits`` parameter); publishes one effort command
(std_msgs/Float64MultiArray, ``/<controller_name>/commands``, ``command_joints`` order) per
received joint state, the trajectory clocked by the joint states' stamps (the time each
sample was taken). The control law is the library's
(:class:`manip_dynamics.control.ComputedTorqueController`, or ``law: impedance``).

Safety as gravity_compensation_node has it: glitched joint_states are rejected by the
plausibility gate (a push or a fall is real motion and passes; a joint above its velocity
limit is reported as overspeed) and answered from the last good state for
``glitch_hold_time``, then with an explicit hold command (gravity at the last good pose,
the controller holding that pose), never with silence; when no joint_states come for
``timeout`` the node sends one ``stale_action`` command (``hold``: gravity at the last good
pose, the default for bare effort-controlled arms; ``zero``); every command is finite and
clamped to the effort limits; a tracking error above
``max_tracking_error`` stops the motion and holds the pose; a trajectory whose first point
(at t = 0) is away from the current pose is refused with a message. Collision reaction: a
``contact: true`` on ``<observer_namespace>/contact`` (the external-torque observer) while
moving switches to ``reaction`` (``hold`` the pose, or ``float``: gravity compensation only,
so a person can push the arm away), logs it with the time from the contact message to the
reaction; a contact message stamped more than ``max_contact_age`` before the newest joint
state, or before the last resume, is ignored (counted, logged throttled); ``~/resume``
(std_srvs/Trigger) continues the trajectory where it stopped. Time: joint_states are read
keep-last 1 (after a stall only the newest is answered), the trajectory runs on their
stamps (the hardware's clock), and a duplicate sample (a hardware interface repeating its
old one) is skipped and counted: the command in force stays in force.
``~/tracking_error`` (sensor_msgs/JointState, ``position`` = q_d - q, the joint state's
stamp) is published while someone listens. A joint-state stamp that goes back (a simulator
reset) drops the trajectory and holds the new pose. Where control_msgs is installed (every
apt ROS 2) it also serves ``~/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory,
as joint_trajectory_controller does, so MoveIt can send plans directly): one goal at a time,
a new one preempting the running one (ABORTED, INVALID_GOAL, "preempted by a new goal"); a
goal refused when it arrives (no model or state, a trajectory the topic would refuse, a
multi-DOF part); a cancel acted on at once (CANCELED, the current pose held); SUCCESSFUL at
the end; PATH_TOLERANCE_VIOLATED with the reason after a tracking-error stop or a contact
(the pose held).
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
    ComputedTorqueController, JointImpedanceController, TimedPoints)
from manip_dynamics.errors import InputError
from manip_dynamics.precompile import warm_up
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.parameters.trajectory_controller import PARAMETERS
from manip_dynamics.ros.runtime.conversions import (
    float64_multi_array, joint_state_arrays, stamp_seconds)
from manip_dynamics.ros.runtime.glitch_parameters import gate_parameters, held_back_or_implausible
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.listeners import ListenerCheck
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, run_node, send_last_zero
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.qos import COMMANDS_QOS, CONTACT_QOS, JOINT_STATES_QOS
from manip_dynamics.ros.runtime.robot_description import (
    model_builder, NO_MODEL_MESSAGE, RobotDescriptionSource)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS
from manip_dynamics.safety.staleness import StaleInputWatchdog

#: Default node name.
NODE_NAME = 'trajectory_controller'
LOG_PERIOD = 2.0


def _per_joint(values: list[float]) -> Any:
    """Return one gain for every joint (a list of one) or the per-joint array."""
    return values[0] if len(values) == 1 else np.array(values)


class TrajectoryControllerNode(GuardedNode):
    """Track joint trajectories with the full dynamics; react to collisions."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare and check the parameters, then create the model source and interfaces.

        :raises StartupError: A bad parameter or robot_description.
        """
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS, on_change=self._tuned)
        urdf, build = model_builder(values)
        self.controller_name = values.controller_name
        self.command_joints = values.command_joints or []
        self.law = values.law
        self.kp, self.kd, self.ki = values.kp, values.kd, values.ki
        self.effort_scale = values.effort_scale
        self.effort_limits = values.joint_effort_limits or []
        self.max_tracking_error = values.max_tracking_error
        self.start_tolerance = values.start_tolerance
        self.max_contact_age = values.max_contact_age
        self.timeout = values.timeout
        self.reaction = values.reaction
        self.observer_namespace = values.observer_namespace
        self.acceleration_limits = values.acceleration_limits or []
        self.gate_parameters = gate_parameters(values, self.timeout)
        self.stale_action = values.stale_action
        self._lock = threading.Lock()
        self._throttle = KindThrottle(self.get_logger(), LOG_PERIOD)
        self._controller = None
        self._model: RobotModel | None = None
        self._index: list[int] = []
        self._gate = None
        self._q: np.ndarray | None = None
        self._qd: np.ndarray | None = None
        self._stopped = False
        self._holding_glitch = False
        self._stamp = -1.0
        self._resumed_stamp = -1.0
        # trajectories are converted and retimed here, off the control loop
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix='trajectory_worker')
        self._trajectory_requests = 0
        #: Duplicate joint states skipped, contact messages ignored as too old.
        self.duplicates = 0
        self.old_contacts = 0
        # the trajectory clock: the stamp of the last good joint state [s] (its receive time
        # on the monotonic clock when unstamped)
        self._trajectory_time = 0.0
        self.commands_topic = '/%s/commands' % self.controller_name.strip('/')
        self.commands_pub = self.create_publisher(Float64MultiArray, self.commands_topic,
                                                  COMMANDS_QOS)
        # q_d - q per joint state (position field), stamped with the joint state's stamp
        self.error_pub = self.create_publisher(JointState, '~/tracking_error', 10)
        self._error_listened = ListenerCheck(self.error_pub)
        group = MutuallyExclusiveCallbackGroup()
        self.source = RobotDescriptionSource(self, urdf, build, on_model=self._prepare,
                                             callback_group=MutuallyExclusiveCallbackGroup())
        # each joint state on a thread of its own (run_node starts it; the executor's before)
        self._lane = self.create_lane('joint_states')
        self.create_subscription(JointState, '/joint_states', self.joint_states_callback,
                                 JOINT_STATES_QOS, callback_group=self._lane.group)
        self.create_subscription(JointTrajectory, '~/joint_trajectory',
                                 self.trajectory_callback, 10, callback_group=group)
        self.create_service(Trigger, '~/resume', self.resume_callback, callback_group=group)
        period = max(0.01, self.timeout / 4)
        self._watchdog = StaleInputWatchdog(self.timeout, period)
        self.create_timer(period, self.watchdog_callback,
                          callback_group=group)
        self.contact_topic = ''
        if self.observer_namespace.strip('/'):
            try:
                from manip_dynamics_interfaces.msg import Contact
            except ImportError:
                self.get_logger().warning('manip_dynamics_interfaces has no Contact message: '
                                          'no collision reaction')
            else:
                self.contact_topic = '/%s/contact' % self.observer_namespace.strip('/')
                self.create_subscription(Contact, self.contact_topic, self.contact_callback,
                                         CONTACT_QOS, callback_group=group)
        self._goal = None   # (goal handle, rclpy Future of the outcome) of the action
        self._action_name = self._create_action_server()
        self.get_logger().info(
            'trajectory controller (%s) -> %s; trajectories on %s%s; reaction to contact on '
            '%s: %s; max_tracking_error %g, timeout %g s' % (
                self.law, self.commands_topic, self.resolve_topic_name('~/joint_trajectory'),
                (' and the action ' + self._action_name) if self._action_name else
                ' (no FollowJointTrajectory action: control_msgs is not installed)',
                self.contact_topic or '(none)', self.reaction, self.max_tracking_error,
                self.timeout))

    # ------------------------------------------------------------------ action
    def _create_action_server(self) -> str:
        """Serve control_msgs/FollowJointTrajectory where control_msgs is importable."""
        try:
            from control_msgs.action import FollowJointTrajectory
            from rclpy.action import ActionServer, CancelResponse, GoalResponse
        except ImportError:
            return ''
        self._FollowJointTrajectory = FollowJointTrajectory

        def on_goal(goal_request: Any) -> Any:
            # refused when it arrives for what is known then (JTC does so too)
            model, q = self._model, self._q
            try:
                if model is None or self._controller is None:
                    raise InputError(NO_MODEL_MESSAGE)
                if q is None:
                    raise InputError('no joint_states yet: the current pose is unknown')
                if goal_request.multi_dof_trajectory.points:
                    raise InputError('the goal has a multi-DOF part: single-DOF joints only')
                trajectory, _ = self._trajectory(model, goal_request.trajectory, q)
                self._controller.check_start(trajectory, q)
            except ValueError as error:
                self.get_logger().error('goal refused: %s' % error)
                return GoalResponse.REJECT
            return GoalResponse.ACCEPT

        def on_cancel(goal_handle: Any) -> Any:
            # at once, not at the next joint state: stop and hold the current pose
            goal = self._goal
            if goal is not None and goal[0] is goal_handle and not goal[1].done():
                with self.callback_lock:
                    if self._q is not None:
                        with self._lock:
                            self._controller.drop(self._q)
                    goal[1].set_result((None, 'canceled: holding the current pose'))
                if self.executor is not None:
                    self.executor.wake()
            return CancelResponse.ACCEPT
        self._action_server = ActionServer(
            self, FollowJointTrajectory, '~/follow_joint_trajectory', self._execute_goal,
            goal_callback=on_goal, cancel_callback=on_cancel)
        return self.resolve_topic_name('~/follow_joint_trajectory')

    async def _execute_goal(self, goal_handle: Any) -> Any:
        """Follow the goal's trajectory; the outcome comes from the joint_states callback."""
        from rclpy.task import Future
        Action = self._FollowJointTrajectory
        result = Action.Result()
        outcome = Future()
        # the coroutine runs outside the node's callbacks: their lock around what they read
        with self.callback_lock:
            previous = self._goal
            if previous is not None and not previous[1].done():
                previous[1].set_result((Action.Result.INVALID_GOAL, 'preempted by a new goal'))
            try:
                self.start_trajectory(goal_handle.request.trajectory)
            except ValueError as error:
                refused = error
            else:
                refused = None
                self._goal = (goal_handle, outcome)
        if refused is not None:
            result.error_code = Action.Result.INVALID_GOAL
            result.error_string = str(refused)
            self.get_logger().error('goal refused: %s' % refused)
            goal_handle.abort()
            return result
        code, text = await outcome
        result.error_string = text
        if goal_handle.is_cancel_requested and code in (None, Action.Result.SUCCESSFUL):
            goal_handle.canceled()   # CANCELED, as JTC answers a cancel
        elif code == Action.Result.SUCCESSFUL:
            result.error_code = code
            goal_handle.succeed()
        else:   # a preemption (JTC: INVALID_GOAL), a tracking error or a contact
            result.error_code = code if code is not None else Action.Result.INVALID_GOAL
            goal_handle.abort()
        return result

    def _goal_step(self, command: Any, now_q: np.ndarray) -> None:
        """Feed back and end the running goal from one control step."""
        goal = self._goal
        if goal is None or goal[1].done():
            return
        self._goal_step_outcome(command, now_q, goal)
        if goal[1].done() and self.executor is not None:
            # the goal's coroutine waits on the executor, which sleeps while the lane works
            self.executor.wake()

    def _goal_step_outcome(self, command: Any, now_q: np.ndarray, goal: Any) -> None:
        """Set the running goal's outcome where this control step ends it."""
        handle, outcome = goal
        Result = self._FollowJointTrajectory.Result
        if handle.is_cancel_requested:
            with self._lock:
                self._controller.drop(now_q)
            outcome.set_result((None, 'canceled: holding the current pose'))
            return
        state = self._controller.state
        if command.event == 'finished' or state == 'done':
            outcome.set_result((Result.SUCCESSFUL, ''))
        elif command.event == 'tracking_error':
            outcome.set_result((Result.PATH_TOLERANCE_VIOLATED, command.message))
        elif state in ('holding', 'floating'):
            outcome.set_result((Result.PATH_TOLERANCE_VIOLATED,
                                'stopped by a contact (reaction %s): call ~/resume and send '
                                'the rest of the trajectory again' % self.reaction))

    def _tuned(self, name: str, value: Any) -> None:
        """
        Give the running controller a tunable parameter just set (checked).

        :raises ValueError: Gains the controller refuses (e.g. kp of a wrong length; the set
            is refused and the old gains stay).
        """
        with self._lock:
            controller = self._controller
            if name in ('kp', 'kd', 'ki'):
                gains = {'kp': self.kp, 'kd': self.kd, 'ki': self.ki, name: value}
                if controller is not None:
                    controller.set_gains(*(_per_joint(gains[key]) for key in ('kp', 'kd', 'ki')))
                self.kp, self.kd, self.ki = gains['kp'], gains['kd'], gains['ki']
            else:
                setattr(self, name, value)
                if controller is not None and name == 'effort_scale':
                    controller.rescale(value)
                elif controller is not None and name in ('max_tracking_error',
                                                         'start_tolerance'):
                    setattr(controller, name, value)
        self.get_logger().info('%s set to %s' % (name, value))

    # ------------------------------------------------------------------ model
    def _prepare(self, model: RobotModel) -> None:
        """Build the controller for a new model (InputError: rejected, old one kept)."""
        names = self.command_joints or list(model.joint_names)
        index = [model.joint_index(name) for name in names]
        cls = ComputedTorqueController if self.law == 'computed_torque' else \
            JointImpedanceController
        controller = cls(model, _per_joint(self.kp), _per_joint(self.kd),
                         ki=_per_joint(self.ki),
                         effort_limits=self.effort_limits or None,
                         effort_scale=self.effort_scale,
                         max_tracking_error=self.max_tracking_error,
                         start_tolerance=self.start_tolerance)
        # retiming and timed trajectories once, off the control loop (precompile.warm_up)
        warm_up(model, acceleration_limit=max(self.acceleration_limits)
                if self.acceleration_limits else None, trajectories=True)
        with self._lock:
            self._model, self._index, self._controller = model, index, controller
            self._gate = self.gate_parameters.gate(model)
        self.get_logger().info('controlling joints %s, effort limits %s' % (
            names, np.round(controller.limits[index], 6).tolist()))

    # ------------------------------------------------------------------ control
    def joint_states_callback(self, msg: JointState) -> None:
        """One command per joint state."""
        now = time.monotonic()
        controller = self._controller
        if controller is None:
            self._throttle.warning(NO_MODEL_MESSAGE, kind='no model')
            return
        try:
            q, qd = joint_state_arrays(self._model, msg)
            if qd is None:
                raise InputError('joint_states has no velocities')
        except ValueError as error:
            self._throttle.warning('ignoring joint_states: %s' % error)
            return
        stamp = stamp_seconds(msg.header.stamp)
        verdict = self._gate.check(now, q, qd, stamp)
        if verdict.duplicate:
            # no news (a hardware interface repeated its old sample): the command in force
            # stays in force at the effort controller
            self.duplicates += 1
            return
        if not verdict.ok:
            self._answer_rejected(now, verdict)
            return
        if verdict.overspeed:
            self._throttle.warning('overspeed: %s' % verdict.overspeed, kind='overspeed')
        with self._lock:
            self._q = q
            self._qd = qd
            if self._holding_glitch:
                self._holding_glitch = False
                self.get_logger().info('good joint_states again: holding the pose of the '
                                       'last good one until a trajectory or ~/resume')
            if self._stopped:
                self._stopped = False
                controller.hold(q)
                self.get_logger().info('joint_states are back: holding the current pose')
            elif 0.0 < stamp < self._stamp - 1e-9:
                controller.drop(q)
                self.get_logger().info('joint_states time went back (a simulator reset?): '
                                       'trajectory dropped, holding the new pose')
            self._stamp = stamp
            # the trajectory runs on the hardware's clock: the time the sample was taken, not
            # when it was processed (a simulator in lockstep runs slower than the wall clock)
            self._trajectory_time = stamp if stamp > 0.0 else now
            command = controller.update(self._trajectory_time, q, qd)
        if self._goal is not None:
            self._goal_step(command, q)
        if command.event == 'finished':
            self.get_logger().info('trajectory finished: holding its last point')
        elif command.event == 'tracking_error':
            self.get_logger().error(command.message)
        if command.saturated:
            self._throttle.warning('efforts clipped to the effort limits', kind='saturated')
        self.commands_pub.publish(float64_multi_array(command.tau[self._index]))
        if self._error_listened():
            error = JointState(name=list(self._model.joint_names),
                               position=command.error.tolist())
            error.header.stamp = msg.header.stamp
            self.error_pub.publish(error)

    def _hold_command(self) -> np.ndarray:
        """Return gravity at the last good pose, clamped, in command order."""
        controller = self._controller
        tau = self._model.gravity_torques(self._q)
        return np.clip(tau, -controller.limits, controller.limits)[self._index]

    def _answer_rejected(self, now: float, verdict: Any) -> None:
        """
        Answer a joint_states sample the gate did not use: never with silence.

        Within ``glitch_hold_time`` of the last good sample the control law runs on that
        sample; after it the controller holds the last good pose and the node sends gravity
        there (the hold command), reported once.
        """
        self._throttle.warning('%s (%s): %s' % (
            held_back_or_implausible(verdict.kind), self._gate.summary(), verdict.message),
            kind='glitch ' + verdict.kind)
        if self._q is None:
            return
        with self._lock:
            if verdict.hold and not self._holding_glitch:
                # the law on the last good state, its clock standing still meanwhile
                command = self._controller.update(self._trajectory_time, self._q,
                                                  self._qd).tau[self._index]
            else:
                if not self._holding_glitch:
                    self._holding_glitch = True
                    self._controller.hold(self._q)
                    self.get_logger().error(
                        'no good joint_states for more than %g s: holding gravity at the '
                        'last good pose' % self._gate.hold_time)
                command = self._hold_command()
        self.commands_pub.publish(float64_multi_array(command))

    def watchdog_callback(self) -> None:
        """No joint_states at all for ``timeout``: one stale_action command, then nothing."""
        gate = self._gate
        if self._controller is None or gate is None:
            return
        age = self._watchdog.stale_age(time.monotonic(), gate.last_seen_time)
        if age is not None and not self._stopped and self._q is not None:
            with self._lock:
                self._stopped = True
                self._controller.hold(self._q)
                command = (np.zeros(len(self._index)) if self.stale_action == 'zero'
                           else self._hold_command())
            self.commands_pub.publish(float64_multi_array(command))
            self.get_logger().error('joint_states are %.3f s old (timeout %g s): stopped, '
                                    'sent one %s command' % (
                                        age, self.timeout, 'zero' if self.stale_action ==
                                        'zero' else 'hold (gravity at the last good pose)'))

    def trajectory_callback(self, msg: JointTrajectory) -> None:
        """
        Take a new trajectory on the worker thread (refused with a logged reason).

        Converting and retiming take 5 to 30 ms: done here they stopped the commands for that
        long. The worker does it while the control loop keeps commanding what it commanded
        (the hold, or the running trajectory) until the new one is installed; of several
        trajectories sent meanwhile only the newest is installed.
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
        Convert, retime when untimed, check the start and follow ``msg``.

        :param ticket: From :meth:`trajectory_callback`: install only if no newer trajectory
            was sent meanwhile (None: install).
        :return: A description for the log.
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
        names = list(msg.joint_names)
        if sorted(names) != sorted(model.joint_names):
            raise InputError('joint_names must name every joint of the model once (%s), got '
                             '%s' % (', '.join(model.joint_names), names))
        if not msg.points:
            raise InputError('the trajectory has no points')
        order = [names.index(n) for n in model.joint_names]
        times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                          for p in msg.points])
        try:
            pos = np.array([np.asarray(p.positions, dtype=np.float64)[order]
                            for p in msg.points])
        except IndexError:
            raise InputError('every point needs one position per joint') from None
        if np.all(times == 0.0):
            if not self.acceleration_limits:
                raise InputError('the trajectory has no timing and the parameter '
                                 'acceleration_limits is empty: cannot retime it')
            from manip_dynamics.planning import retime
            acc = (self.acceleration_limits[0] if len(self.acceleration_limits) == 1
                   else np.array(self.acceleration_limits))
            # from the current pose: it replaces a first point within start_tolerance of
            # it (a planner's start), else it is put before the first point
            if np.max(np.abs(pos[0] - q)) <= self.start_tolerance:
                if len(pos) == 1:
                    return TimedPoints([0.0], q[None, :]), 'retimed (already there)'
                waypoints = np.vstack([q, pos[1:]])
            else:
                waypoints = np.vstack([q, pos])
            return (retime(model, waypoints, acceleration_limits=acc,
                           effort_scale=self.effort_scale), 'retimed')

        def field(name: str) -> np.ndarray | None:
            values = [getattr(p, name) for p in msg.points]
            if all(len(v) == len(names) for v in values):
                return np.array([np.asarray(v, dtype=np.float64)[order] for v in values])
            return None
        vel, acc = field('velocities'), field('accelerations')
        if times[0] > 0.0:  # as joint_trajectory_controller: from the current pose at rest
            times = np.concatenate([[0.0], times])
            pos = np.vstack([q, pos])
            vel = None if vel is None else np.vstack([np.zeros(len(q)), vel])
            acc = None if acc is None else np.vstack([np.zeros(len(q)), acc])
        return TimedPoints(times, pos, vel, acc if vel is not None else None), 'timed'

    def contact_callback(self, msg: Any) -> None:
        """Contact while moving: stop and react (hold or float)."""
        received = time.monotonic()
        controller = self._controller
        if controller is None or not msg.contact or self._q is None:
            return
        if controller.state != 'tracking':
            return
        # the contact's stamp is the joint state's it was computed from: on the hardware's
        # clock, like self._stamp; one older than max_contact_age, or from before the last
        # resume, is about a state the arm has left
        stamp = stamp_seconds(msg.header.stamp)
        age = self._stamp - stamp
        if stamp > 0.0 and (age > self.max_contact_age or stamp < self._resumed_stamp):
            self.old_contacts += 1
            self._throttle.warning(
                'ignoring a contact message %.3f s older than the newest joint state (more '
                'than max_contact_age %g s, or from before the last resume; %d ignored)' % (
                    age, self.max_contact_age, self.old_contacts), kind='old contact')
            return
        with self._lock:
            controller.react(self.reaction, self._q)
        self.get_logger().warning(
            'contact (strongest at %s): stopped the trajectory, reaction %s (%.1f ms after '
            'the contact message arrived); call ~/resume to continue' % (
                msg.strongest_joint, self.reaction, 1e3 * (time.monotonic() - received)))

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
