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
A controller_manager stand-in for tests and CI: test support, not a product.

It has the timing structure of controller_manager's ros2_control_node with
topic_based_ros2_control's TopicBasedSystem, joint_state_broadcaster and a forward effort
controller (JointGroupEffortController), which CI cannot build (docs/ROS2_CONTROL.md names
the real ones and the versions checked by hand). One update loop at ``update_rate`` on the
steady clock does, every cycle, what controller_manager's ``read() / update() / write()``
does:

* **read**: the newest sample the hardware (the simulator, on ``hardware_states_topic``)
  published; none new since the last cycle: the old one again (TopicBasedSystem keeps the
  last message it received);
* **update**: joint_state_broadcaster publishes it on ``joint_states_topic`` stamped with
  the *update time* (this node's clock: ``use_sim_time`` makes it the simulator's /clock;
  never before the sample's own stamp, which /clock may lag), not the time the sample was
  taken, with position, velocity and the hardware's effort state; the effort controller's
  command interfaces take the newest message on ``commands_topic`` (zeros until one came);
* **write**: that command goes to the hardware as sensor_msgs/JointState efforts on
  ``hardware_commands_topic``.

So a command acts at the next update at the earliest, a state is seen an update after it
was taken, and duplicates appear whenever the hardware is slower than the loop, as behind
the real controller_manager. ``jitter`` varies each period uniformly by up to that fraction,
``skip_probability`` skips whole cycles (no read, no publish, no write), and ``busy_core``
starts a busy loop pinned to that core for the node's lifetime (a loaded machine).

With ``cosimulation`` the hardware is a simulator in lockstep (the simulator node's
``lockstep``, ``publish_rate`` equal to ``update_rate``), as a hardware interface that
wraps a simulator runs it (gz_ros2_control, mujoco_ros2_control): each update's read waits
for the sample that answers the previous write (up to ``cosimulation_timeout`` of wall
time; none by then: the update is late, nothing is published and the held command is
written again), and the update time is that sample's own (simulated) stamp. Every read is
then a new sample taken one period after the last, as on a real arm whose driver samples
it in the update: what DDS latency and the machine's load still change is when a
controller's command arrives, so whether it acts one update after the state it answers or
later; jitter changes the wall-clock pacing only. A skipped cycle there is one the hardware
ran through on the held command unobserved: its sample is read but not published, so the
next /joint_states comes two periods later.

With ``controller: jtc`` the update runs joint_trajectory_controller on the effort
interface instead of the forward effort controller, as ros2_controllers 4.22 and newer
document and implement it: trajectories on ``/<jtc_name>/joint_trajectory`` and,
where control_msgs is installed, the action ``/<jtc_name>/follow_joint_trajectory``; a new
trajectory replaces the old one and starts at the update that reads it (header stamp zero),
from the state of that moment when its first point lies ahead; points interpolated as JTC's
splines interpolate them (:class:`~manip_dynamics.control.TimedPoints`: quintic with
accelerations, cubic with velocities) and their ``effort`` linearly (zero before the first
point, which the state before the trajectory lacks); after the last point its values hold.
Each update writes ``u = ff_velocity_scale v_d + effort_d + p e + i sum(e dt) + d (v_d - v)``
(e = q_d - q; control_toolbox's PID on the position error with the velocity error as its
derivative, no integral clamp). Goals end as JTC (jazzy branch, 4.42) ends them: refused at
goal time while inactive (``jtc_active`` false at start, ``~/activate_jtc`` switches, the
forward effort command written meanwhile) or for an invalid message, the refusal logged under
JTC's name; a new goal preempts the running one (ABORTED, INVALID_GOAL, JTC's text); a cancel
is CANCELED; the ``constraints_*`` tolerances (and a goal's own, -1 erasing one) abort with
PATH_ or GOAL_TOLERANCE_VIOLATED; a deactivation aborts with INVALID_GOAL. On activation, a
cancel and an abort it holds the current positions with its hold message (zero velocity and
effort, or the last successful goal's final point: JTC reuses that message), so the arm
sags by g / p, or by the gravity difference of another pose, until someone sends a hold with
efforts (the feed-forward filter does). ``~/controller_state`` carries the reference,
feedback and output, as JTC's does.
"""

import os
import random
import sys
import threading
import time
from typing import Any

import numpy as np
from rclpy.clock import Clock, ClockType
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from trajectory_msgs.msg import JointTrajectory

from manip_dynamics.control.computed_torque import TimedPoints
from manip_dynamics.control.trajectory_goal import ZERO_VELOCITY
from manip_dynamics.ros.runtime.conversions import stamp_seconds
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.names import child_name, JOINT_STATES
from manip_dynamics.ros.runtime.node_process import start_busy_loop
from manip_dynamics.ros.runtime.node_runtime import run_node
from manip_dynamics.ros.runtime.parameter_spec import (
    param_bool, param_choice, param_float, param_float_list, param_string, param_strings)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError

#: Default node name.
NODE_NAME = 'controller_manager_standin'
#: The controllers the stand-in can run (module docstring).
CONTROLLERS = ('effort', 'jtc')
#: The stand-in's ``thread_priority`` when given none: controller_manager's default (its
#: update loop at SCHED_FIFO 50 where the system permits it, a warning where not).
STANDIN_THREAD_PRIORITY = 50
#: JTC's result texts (joint_trajectory_controller.cpp, jazzy branch).
PREEMPTED = 'Current goal preempted by new incoming action.'
DEACTIVATED = 'Current goal cancelled during deactivate transition.'


class JtcLike:
    """
    joint_trajectory_controller on the effort interface, one update at a time (module doc).

    Joints in the stand-in's order; times [s] on the update clock. Tolerances as JTC's
    ``constraints`` (per joint ``trajectory`` and ``goal`` [rad or m], 0 = not checked;
    ``stopped_velocity_tolerance`` [rad/s], ``goal_time`` [s], 0 = wait without end), a
    goal's own tolerances overriding them (> 0: the value, -1: not checked, 0: the default).
    """

    def __init__(self, joints: list[str], p: np.ndarray, i: np.ndarray, d: np.ndarray,
                 ff_velocity_scale: np.ndarray, trajectory_tolerance: np.ndarray | None = None,
                 goal_tolerance: np.ndarray | None = None,
                 stopped_velocity_tolerance: float = 0.01, goal_time: float = 0.0) -> None:
        """Store the gains and the default tolerances, each shape (n,)."""
        n = len(joints)
        self.joints = list(joints)
        self.p, self.i, self.d, self.ff = p, i, d, ff_velocity_scale
        self.defaults = (np.zeros(n) if trajectory_tolerance is None else trajectory_tolerance,
                         np.zeros(n) if goal_tolerance is None else goal_tolerance,
                         float(stopped_velocity_tolerance), float(goal_time))
        self.tolerances = (*self.defaults[:2], np.full(n, self.defaults[2]),
                           self.defaults[3])
        self._integral = np.zeros(n)
        self._curve: TimedPoints | None = None
        self._efforts = np.zeros((1, n))
        self._times = np.zeros(1)
        self._pending: tuple | None = None   # (stamp, times, q, qd, qdd, efforts) not started
        # JTC's reused hold message: positions replaced at each hold, the rest kept (zero
        # until a goal succeeds, then that goal's last point)
        self._hold_point = (np.zeros(n), np.zeros(n), np.zeros(n))
        self.holding = True
        self.start = 0.0   # [s] update time the current trajectory started
        self.end = 0.0     # [s] update time of its last point
        self.trajectories = 0
        #: The running goal's (code, text) once this controller ended it; None meanwhile.
        self.outcome: tuple | None = None
        self.goal_running = False

    def receive(self, msg: JointTrajectory, now: float, check_only: bool = False) -> str:
        """
        Take a trajectory; it starts at the next update. Return '' or why it was refused.

        JTC's checks: every joint named (allow_partial_joints_goal false), points present,
        times strictly increasing, each field empty or one value per joint, a last point at
        rest, a header stamp whose trajectory does not end before ``now`` [s].
        ``check_only``: check, keep nothing (a goal request before its acceptance).
        """
        names = list(msg.joint_names)
        if sorted(names) != sorted(self.joints) or not msg.points:
            return 'joints %s and %d points for controller joints %s' % (
                names, len(msg.points), self.joints)
        order = [names.index(name) for name in self.joints]
        times = np.array([stamp_seconds(p.time_from_start) for p in msg.points])
        if np.any(np.diff(times) <= 0.0) or times[0] < 0.0:
            return 'time_from_start not strictly increasing'
        fields = []
        for field in ('positions', 'velocities', 'accelerations', 'effort'):
            rows = [list(getattr(p, field)) for p in msg.points]
            if all(len(r) == 0 for r in rows):
                fields.append(None)
            elif all(len(r) == len(names) for r in rows):
                fields.append(np.array(rows, dtype=np.float64)[:, order])
            else:
                return '%s must be given at every point or none' % field
        if fields[0] is None:
            return 'no positions'
        if fields[1] is not None and np.any(np.abs(fields[1][-1]) > ZERO_VELOCITY):
            return 'Velocity of last trajectory point is not zero'
        stamp = stamp_seconds(msg.header.stamp)
        if stamp != 0.0 and stamp + times[-1] < now:
            return 'Received trajectory with non-zero start time that ends in the past'
        if not check_only:
            self._pending = (stamp, times, *fields)
        return ''

    def set_goal_tolerances(self, path: dict, goal: dict, goal_time: float) -> None:
        """
        Take a goal's tolerances over the defaults (class docstring).

        :param path: ``{joint: (position, velocity)}`` of the goal's path_tolerance.
        :param goal: The same of its goal_tolerance (its velocity: the stopped velocity).
        :param goal_time: Its goal_time_tolerance [s].
        """
        def resolve(default: float, given: float) -> float:
            return given if given > 0.0 else (0.0 if given == -1.0 else default)
        trajectory, at_goal, stopped, time_tolerance = self.defaults
        zero = (0.0, 0.0)
        self.tolerances = (
            np.array([resolve(trajectory[k], path.get(j, zero)[0])
                      for k, j in enumerate(self.joints)]),
            np.array([resolve(at_goal[k], goal.get(j, zero)[0])
                      for k, j in enumerate(self.joints)]),
            np.array([resolve(stopped, goal.get(j, zero)[1]) for j in self.joints]),
            resolve(time_tolerance, goal_time))

    def hold(self, q: np.ndarray, now: float) -> None:
        """Hold ``q`` with JTC's hold message (its velocity and effort as they were)."""
        self._pending = None
        _, v, effort = self._hold_point
        self._hold_point = (q.copy(), v, effort)
        self._set(now, np.zeros(1), q[None, :], v[None, :], None, effort[None, :])
        self.holding = True

    def _succeed_hold(self, now: float) -> None:
        """Hold the finished trajectory's last point, its effort included (JTC on success)."""
        q_end = self._curve.sample(np.array([float(self._times[-1])]))
        v = q_end[1][0]
        self._hold_point = (q_end[0][0].copy(), v.copy(), self._efforts[-1].copy())
        self._set(now, np.zeros(1), q_end[0], v[None, :], None, self._efforts[-1:].copy())
        self.holding = True

    def _set(self, now: float, times: np.ndarray, q: np.ndarray, qd: np.ndarray | None,
             qdd: np.ndarray | None, efforts: np.ndarray | None) -> None:
        self._curve = TimedPoints(times, q, qd, qdd)
        self._times = times
        self._efforts = efforts if efforts is not None else np.zeros_like(q)
        self.start, self.end = now, now + float(times[-1])

    def update(self, now: float, q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
        """Return the effort command of one update at time ``now`` from the state read."""
        if self._curve is None:
            self.hold(q, now)
        if self._pending is not None:
            stamp, times, qs, qds, qdds, efforts = self._pending
            self._pending = None
            self.trajectories += 1
            self.holding = False
            if times[0] > 0.0:   # from the state of now (no effort there) to the first point
                n = len(q)
                times = np.concatenate([[0.0], times])
                qs = np.vstack([q, qs])
                qds = None if qds is None else np.vstack([v, qds])
                qdds = None if qdds is None or qds is None else np.vstack([np.zeros(n), qdds])
                efforts = None if efforts is None else np.vstack([np.zeros(n), efforts])
            self._set(stamp if stamp > 0.0 else now, times, qs, qds,
                      qdds if qds is not None else None, efforts)
        t = min(max(now - self.start, 0.0), float(self._times[-1]))
        q_d, v_d, _ = (a[0] for a in self._curve.sample(np.array([t])))
        k = int(np.clip(np.searchsorted(self._times, t, side='right') - 1, 0,
                        len(self._times) - 1))
        if k + 1 < len(self._times):
            w = (t - self._times[k]) / (self._times[k + 1] - self._times[k])
            effort = (1.0 - w) * self._efforts[k] + w * self._efforts[k + 1]
        else:
            effort = self._efforts[-1]
        e = q_d - q
        if not self.holding and self._check(now, q, e, v_d - v):
            return self.update(now, q, v, dt)   # ended: what holds from this update on
        self._integral += e * dt
        return self.ff * v_d + effort + self.p * e + self.i * self._integral + \
            self.d * (v_d - v)

    def _check(self, now: float, q: np.ndarray, e: np.ndarray, e_v: np.ndarray) -> bool:
        """Check JTC's tolerances at one update; return True when they end the trajectory."""
        trajectory, at_goal, stopped, goal_time = self.tolerances
        if now < self.end:
            if np.any((trajectory > 0.0) & (np.abs(e) > trajectory)):
                self._finish(now, q, -4, 'Aborted due to path tolerance violation', hold=True)
                return True
            return False
        outside = np.any((at_goal > 0.0) & (np.abs(e) > at_goal)) or \
            np.any((stopped > 0.0) & (np.abs(e_v) > stopped))
        if not outside:
            self._finish(now, q, 0, 'Goal successfully reached!', hold=False)
            return True
        if goal_time != 0.0 and now - self.end > goal_time:
            self._finish(now, q, -5, 'Aborted due to goal_time_tolerance exceeding by %f '
                         'seconds' % (now - self.end), hold=True)
            return True
        return False

    def _finish(self, now: float, q: np.ndarray, code: int, text: str, hold: bool) -> None:
        """End the trajectory: hold ``q`` after a violation; on a goal's success its end."""
        goal = self.goal_running
        if goal:
            self.outcome = (code, text)
            self.goal_running = False
        if hold:
            self.hold(q, now)
        elif goal:
            self._succeed_hold(now)
        else:   # a topic trajectory: its last point stays, the hold message unchanged
            self.holding = True

    def reference(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """Return the desired positions and velocities at ``now`` (JTC's ``reference``)."""
        t = min(max(now - self.start, 0.0), float(self._times[-1]))
        q_d, v_d, _ = self._curve.sample(np.array([t]))
        return q_d[0], v_d[0]


class ControllerManagerStandin(GuardedNode):
    """The update loop of controller_manager + TopicBasedSystem (module docstring)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        self.update_rate = param_float(self, 'update_rate', 250.0,
                                       'controller_manager update rate [Hz]', low=1.0,
                                       high=10000.0)
        self.jitter = param_float(self, 'jitter', 0.0, 'Each period varies uniformly by up '
                                  'to this fraction of it', low=0.0, high=0.9)
        self.skip_probability = param_float(self, 'skip_probability', 0.0, 'Probability '
                                            'that a cycle is skipped', low=0.0, high=0.5)
        self.seed = int(param_float(self, 'seed', 0.0, 'Seed of the jitter and the skips',
                                    low=0.0, high=2.0 ** 31))
        self.busy_core = int(param_float(self, 'busy_core', -1.0, 'Core a busy loop is '
                                         'pinned to while the node runs; -1: none',
                                         low=-1.0, high=1024.0))
        self.cosimulation = param_bool(self, 'cosimulation', False, 'The hardware is a '
                                       'simulator in lockstep: each read waits for the '
                                       'answer to the previous write, stamps are its own')
        self.cosimulation_timeout = param_float(
            self, 'cosimulation_timeout', 0.25, 'cosimulation: longest wait for the '
            "hardware's answer [s of wall time]", low=0.001, high=10.0)
        self.joints = param_strings(self, 'joints', 'Joints of the effort controller, in '
                                    'the order of its commands')
        if not self.joints:
            raise StartupError("parameter joints must name the controller's joints")
        self.controller = param_choice(self, 'controller', 'effort', "'effort': a forward "
                                       "effort controller on commands_topic; 'jtc': "
                                       'joint_trajectory_controller on the effort interface',
                                       CONTROLLERS)
        self.jtc = None
        if self.controller == 'jtc':
            self.jtc = self._jtc_from_parameters()
        topics = {}
        for name, default in (('hardware_states_topic', 'sim/joint_states'),
                              ('hardware_commands_topic', 'sim/joint_commands'),
                              ('joint_states_topic', JOINT_STATES),
                              ('commands_topic', 'effort_controller/commands')):
            topics[name] = param_string(self, name, default, 'topic')
        self._lock = threading.Condition()
        self._sample: JointState | None = None
        self._fresh = False   # a sample came since the last update
        self._command = np.zeros(len(self.joints))
        self._written = np.zeros(len(self.joints))   # the command the hardware holds
        self.cycles = self.skipped = self.repeated = self.late = 0
        self._q: np.ndarray | None = None   # JTC: the positions of the last update
        self._now_s = 0.0                    # JTC: the last update time [s]
        self._last_stamp = 0   # [ns]
        self.create_subscription(JointState, topics['hardware_states_topic'],
                                 self._hardware_state, 10)
        self.create_subscription(Float64MultiArray, topics['commands_topic'],
                                 self._controller_command, 10)
        self._goal = None   # the running FollowJointTrajectory goal: (handle, outcome)
        self._jtc_state_pub = None
        self._action_name = ''
        if self.jtc is not None:
            self.create_subscription(JointTrajectory,
                                     child_name(self.jtc_name, 'joint_trajectory'),
                                     self._jtc_trajectory, 10)
            self._action_name = self._jtc_action_server()
        self._states_pub = self.create_publisher(JointState, topics['joint_states_topic'], 10)
        self._hardware_pub = self.create_publisher(JointState,
                                                   topics['hardware_commands_topic'], 10)
        self._busy = start_busy_loop(self.busy_core)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        self.get_logger().info(
            'controller_manager stand-in: %g Hz%s, jitter %g, skip probability %g%s; %s -> '
            '%s, %s -> %s' % (
                self.update_rate, ', co-simulation' if self.cosimulation else '',
                self.jitter, self.skip_probability,
                ', busy loop on core %d' % self.busy_core if self._busy else '',
                topics['hardware_states_topic'], topics['joint_states_topic'],
                topics['commands_topic'] if self.jtc is None else
                '%s (JTC, effort interface%s)' % (
                    self.jtc_name, ', action ' + self._action_name if self._action_name
                    else '; no action: control_msgs is not installed'),
                topics['hardware_commands_topic']))

    # ------------------------------------------------------------------ JTC
    def _jtc_from_parameters(self) -> JtcLike:
        """Declare the JTC parameters (gains, constraints: one per joint or one for all)."""
        self.jtc_name = param_string(self, 'jtc_name', 'joint_trajectory_controller',
                                     'Name (namespace of the topics) of the JTC')
        self.jtc_active = param_bool(self, 'jtc_active', True, 'JTC starts active (false: '
                                     'inactive, the forward effort command is written until '
                                     '~/activate_jtc activates it)')
        n = len(self.joints)
        values = {}
        for key, default, text in (
                ('gains_p', 0.0, 'JTC gains.<joint>.p'), ('gains_i', 0.0, 'gains.<joint>.i'),
                ('gains_d', 0.0, 'gains.<joint>.d'),
                ('gains_ff_velocity_scale', 0.0, 'gains.<joint>.ff_velocity_scale'),
                ('constraints_trajectory', 0.0, 'constraints.<joint>.trajectory [rad]'),
                ('constraints_goal', 0.0, 'constraints.<joint>.goal [rad]')):
            given = param_float_list(self, key, '%s, one per joint or one for all' % text) \
                or [default]
            if len(given) not in (1, n):
                raise StartupError('parameter %s must have 1 or %d values, got %d'
                                   % (key, n, len(given)))
            values[key] = np.broadcast_to(np.array(given), (n,)).copy()
        stopped = param_float(self, 'constraints_stopped_velocity_tolerance', 0.01,
                              'constraints.stopped_velocity_tolerance [rad/s]', low=0.0,
                              high=1e3)
        goal_time = param_float(self, 'constraints_goal_time', 0.0, 'constraints.goal_time '
                                '[s]; 0 = wait for the goal tolerance without end', low=0.0,
                                high=1e3)
        self._jtc_log = self.get_logger().get_child(self.jtc_name)
        return JtcLike(self.joints, values['gains_p'], values['gains_i'], values['gains_d'],
                       values['gains_ff_velocity_scale'], values['constraints_trajectory'],
                       values['constraints_goal'], stopped, goal_time)

    def _jtc_trajectory(self, msg: JointTrajectory) -> None:
        """Take a trajectory from JTC's topic: the newest replaces the running one."""
        with self._lock:
            refusal = self.jtc.receive(msg, self._now_s) if self.jtc_active else \
                'Controller is not running.'
        if refusal:
            self._jtc_log.error('trajectory refused: %s' % refusal)

    def _jtc_action_server(self) -> str:
        """Serve FollowJointTrajectory where control_msgs is importable (JTC's action)."""
        from std_srvs.srv import SetBool
        self.create_service(SetBool, '~/activate_jtc', self._activate_callback)
        try:
            from control_msgs.action import FollowJointTrajectory
            from rclpy.action import ActionServer
        except ImportError:
            return ''
        self._Action = FollowJointTrajectory
        self._action_server = ActionServer(
            self, FollowJointTrajectory, child_name(self.jtc_name, 'follow_joint_trajectory'),
            self._execute_goal, goal_callback=self._goal_callback,
            handle_accepted_callback=self._accepted_callback,
            cancel_callback=self._cancel_callback)
        # on the steady clock (JTC's action_monitor_rate, 20 Hz): the update loop's time may
        # be a simulator's /clock
        self.create_timer(0.05, self._goal_check, clock=Clock(clock_type=ClockType.STEADY_TIME))
        from control_msgs.msg import JointTrajectoryControllerState
        self._jtc_state_pub = self.create_publisher(
            JointTrajectoryControllerState, child_name(self.jtc_name, 'controller_state'), 10)
        return child_name(self.jtc_name, 'follow_joint_trajectory')

    def _activate_callback(self, request: Any, response: Any) -> Any:
        """Activate JTC (hold the current positions) or deactivate it (the effort command)."""
        with self._lock:
            was, self.jtc_active = self.jtc_active, bool(request.data)
            if self.jtc_active and not was and self._q is not None:
                self.jtc.hold(self._q, self._now_s)   # on_activate: hold, no effort kept
            if was and not self.jtc_active and self.jtc.goal_running:
                self.jtc.goal_running = False
                self.jtc.outcome = (-1, DEACTIVATED)
            self._command = np.zeros(len(self.joints))   # the other controller starts at 0
        response.success = True
        response.message = '%s %s' % (self.jtc_name, 'active' if self.jtc_active else
                                      'inactive')
        self.get_logger().info(response.message)
        return response

    def _goal_callback(self, request: Any) -> Any:
        """Refuse a goal as JTC does: inactive, or an invalid message (logged)."""
        from rclpy.action import GoalResponse
        with self._lock:
            refusal = self.jtc.receive(request.trajectory, self._now_s, check_only=True) \
                if self.jtc_active else "Can't accept new action goals. Controller is not " \
                'running.'
        if refusal:
            self._jtc_log.error(refusal)
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _accepted_callback(self, handle: Any) -> None:
        """Preempt the running goal (aborted with JTC's text), take the new trajectory."""
        from rclpy.task import Future
        previous = self._goal
        if previous is not None and not previous[1].done():
            previous[1].set_result((-1, PREEMPTED))   # JTC: INVALID_GOAL and its text
        request = handle.request
        with self._lock:
            self.jtc.outcome = None
            refusal = self.jtc.receive(request.trajectory, self._now_s)
            self.jtc.set_goal_tolerances(
                {t.name: (t.position, t.velocity) for t in request.path_tolerance},
                {t.name: (t.position, t.velocity) for t in request.goal_tolerance},
                stamp_seconds(request.goal_time_tolerance))
            self.jtc.goal_running = not refusal
        self._goal = (handle, Future())
        if refusal:   # checked at goal time; the clock moved on since
            self._goal[1].set_result((-1, refusal))
        handle.execute()

    def _cancel_callback(self, handle: Any) -> Any:
        """Cancel the running goal: CANCELED, and hold the current positions (JTC)."""
        from rclpy.action import CancelResponse
        goal = self._goal
        if goal is not None and goal[0] is handle and not goal[1].done():
            with self._lock:
                self.jtc.goal_running = False
                self.jtc.outcome = None
                if self._q is not None:
                    self.jtc.hold(self._q, self._now_s)
            goal[1].set_result((0, ''))
        return CancelResponse.ACCEPT

    async def _execute_goal(self, handle: Any) -> object:
        """Wait for the goal's outcome (from the update loop, a preemption or a cancel)."""
        result = self._Action.Result()
        goal = self._goal
        if goal is None or goal[0] is not handle:
            result.error_code, result.error_string = -1, PREEMPTED
            handle.abort()
            return result
        result.error_code, result.error_string = await goal[1]
        if handle.is_cancel_requested and result.error_code == 0:
            handle.canceled()
        elif result.error_code == 0:
            handle.succeed()
        else:
            handle.abort()
        return result

    def _goal_check(self) -> None:
        """Hand the update loop's outcome of the running goal to its action (20 Hz)."""
        goal = self._goal
        if goal is None or goal[1].done():
            return
        with self._lock:
            outcome, self.jtc.outcome = self.jtc.outcome, None
        if outcome is not None:
            if outcome[0] != 0:
                self._jtc_log.warning(outcome[1])
            goal[1].set_result(outcome)

    def _controller_update(self, sample: JointState, stamp: int,
                           command: np.ndarray) -> np.ndarray:
        """Return the active controller's command: the forward command, or JTC's law."""
        if self.jtc is None:
            return command
        names = list(sample.name)
        try:
            order = [names.index(name) for name in self.joints]
        except ValueError:
            return self._written
        q = np.asarray(sample.position, dtype=np.float64)[order]
        v = np.asarray(sample.velocity, dtype=np.float64)[order]
        now = stamp * 1e-9
        with self._lock:
            dt = now - self._now_s if self._q is not None else 0.0
            self._q, self._now_s = q, now
            if not self.jtc_active:   # the forward effort controller is the active one
                return command
            command = self.jtc.update(now, q, v, min(max(dt, 0.0), 0.1))
        if self._jtc_state_pub is not None:   # JTC publishes its state while active
            state = self._jtc_state_pub.msg_type(joint_names=list(self.joints))
            state.header.stamp = sample.header.stamp
            state.feedback.positions = q.tolist()
            state.feedback.velocities = v.tolist()
            with self._lock:
                q_d, v_d = self.jtc.reference(now)
            state.reference.positions = q_d.tolist()
            state.reference.velocities = v_d.tolist()
            state.output.effort = command.tolist()
            self._jtc_state_pub.publish(state)
        return command

    def _hardware_state(self, msg: JointState) -> None:
        with self._lock:
            self._sample = msg
            self._fresh = True
            self._lock.notify_all()

    def _controller_command(self, msg: Float64MultiArray) -> None:
        values = np.asarray(msg.data, dtype=np.float64)
        if values.shape == (len(self.joints),) and np.all(np.isfinite(values)):
            with self._lock:   # JointGroupEffortController: the newest message wins
                self._command = values

    def _loop(self) -> None:
        """Run the update loop: read, update (publish, take the command), write."""
        rng = random.Random(self.seed)
        period = 1.0 / self.update_rate
        wake = time.monotonic()
        while not self._stop.is_set():
            wake += period * (1.0 + self.jitter * rng.uniform(-1.0, 1.0))
            delay = wake - time.monotonic()
            if delay > 0.0:
                time.sleep(delay)
            else:
                wake = time.monotonic()   # late: no catch-up burst
            skip = rng.random() < self.skip_probability
            if self.cosimulation:
                self._cosimulation_update(skip)
            elif skip:
                self.skipped += 1
            else:
                self._update()

    def _update(self) -> None:
        with self._lock:
            sample, fresh, command = self._sample, self._fresh, self._command.copy()
            self._fresh = False
        self.cycles += 1
        if sample is not None:
            self.repeated += not fresh
            # the update time; with use_sim_time the /clock may lag the sample just read
            # (both come from the simulator, in either order): never before the sample
            # and, as a controller_manager's update times, strictly increasing
            now = self.get_clock().now().nanoseconds
            stamp = max(now, _stamp_ns(sample), self._last_stamp + 1)
            self._last_stamp = stamp
            self._broadcast(sample, stamp)
            command = self._controller_update(sample, stamp, command)
        elif self.jtc is not None:
            command = self._written
        self._write(command)

    def _cosimulation_update(self, skip: bool) -> None:
        """One update with the hardware in lockstep (module docstring)."""
        deadline = time.monotonic() + self.cosimulation_timeout
        with self._lock:
            while not self._fresh:
                left = deadline - time.monotonic()
                if left <= 0.0:
                    break
                self._lock.wait(left)
            sample, fresh, command = self._sample, self._fresh, self._command.copy()
            self._fresh = False
        if not fresh:
            self.late += sample is not None   # before the first sample: starting
            self._write(self._written)
            return
        stamp = _stamp_ns(sample)
        if stamp <= self._last_stamp:
            # the hardware's clock went back (a simulator reset): its time is the truth
            self.get_logger().info('the hardware time went back from %.3f to %.3f s' % (
                self._last_stamp * 1e-9, stamp * 1e-9))
        self._last_stamp = stamp
        if skip:   # the hardware ran on the held command; nobody read it
            self.skipped += 1
            self._write(self._written)
            return
        self.cycles += 1
        self._broadcast(sample, self._last_stamp)
        self._write(self._controller_update(sample, self._last_stamp, command))

    def _broadcast(self, sample: JointState, stamp: int) -> None:
        """joint_state_broadcaster: publish the sample read, stamped ``stamp`` [ns]."""
        out = JointState(name=list(sample.name), position=list(sample.position),
                         velocity=list(sample.velocity), effort=list(sample.effort))
        out.header.stamp.sec, out.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        out.header.frame_id = sample.header.frame_id
        self._states_pub.publish(out)

    def _write(self, command: np.ndarray) -> None:
        """write(): the command to the hardware, which holds it until the next write."""
        self._written = command
        self._hardware_pub.publish(JointState(name=list(self.joints),
                                              effort=command.tolist()))

    def shutdown(self) -> None:
        """Stop the update loop and the busy loop."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        if self._busy is not None:
            self._busy.kill()
            self._busy.wait()
        self.get_logger().info(
            'controller_manager stand-in: %d cycles, %d skipped, %d with the old sample '
            'again, %d late (no answer within cosimulation_timeout)'
            % (self.cycles, self.skipped, self.repeated, self.late))


def _stamp_ns(msg: JointState) -> int:
    """Return a message's header stamp [ns]."""
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def main(args: list[str] | None = None) -> int:
    """Run the stand-in until SIGINT/SIGTERM."""
    return run_node(NODE_NAME, ControllerManagerStandin, args, STARTUP_ERRORS,
                    report_startup_error, before_destroy=lambda node: node.shutdown(),
                    prepare=False, default_thread_priority=STANDIN_THREAD_PRIORITY)


if __name__ == '__main__':
    os.environ.setdefault('PYTHONUNBUFFERED', '1')
    sys.exit(main())
