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
The ``simulator`` node: a URDF arm integrated by the library's Simulator, seen over ROS.

It stands in for a physical arm. It integrates the full joint-space dynamics (URDF damping
and Coulomb friction, joint position limits, effort limits) at ``rate`` and publishes
``/joint_states`` (position, velocity and the effort actually applied) at ``publish_rate``,
both counted in simulated time. Effort commands arrive on two contracts:

* ``/<controller_name>/commands`` (std_msgs/Float64MultiArray, one value per entry of
  ``command_joints``): what ros2_controllers' JointGroupEffortController subscribes to, so
  the gravity-compensation node drives the simulator and a real arm alike;
* ``joint_commands_topic`` (sensor_msgs/JointState keyed by ``name``, ``effort`` field): what
  topic_based_ros2_control's TopicBasedSystem publishes, so a controller_manager can use the
  simulator as its hardware.

A joint whose last command is older than ``command_timeout`` both in wall-clock time and in
simulated time (counted from its reception) is stale: a dead controller stops driving the
arm, while neither a simulator that stalled and catches up nor one that runs faster than
real time drops a live controller's commands. On a stale command the simulator does what
drivers of torque-controlled arms do (``command_timeout_action: brake``, the default): a
protective stop, every joint braked where it is, logged, released by ``~/reset`` or by a
command that holds the braked pose (as after a reset); ``command_timeout_action: zero``
applies zero effort to the stale joints instead (the arm falls under gravity).

Every /joint_states message is stamped with the time its sample was taken: simulated time
(``/clock`` with ``publish_clock``; without it the ROS time at the start plus the simulated
time since, counted on across resets and pauses, so stamps are spaced exactly as the
samples are, even when the loop catches up on owed steps). Rejected commands (wrong length,
NaN/inf, unknown joint) are logged with a throttled warning and leave the previous command
in place. See docs/SIMULATOR.md.

With ``lockstep`` the simulator advances only on commands, as a controller_manager's update
loop or a co-simulation does: after each /joint_states message the next steps wait for a
command received after it, one publish period of steps per command, never more (no
catch-up burst integrated with one frozen command: a late controller slows simulated time
instead, and the real-time factor says so); no real-time faster than ``real_time_factor``.
A controller that does not answer within ``command_timeout`` (wall clock) meets the
``command_timeout_action``. Lockstep is for controllers that answer every state (the suite's
nodes, a controller_manager's hardware interface); without it the loop keeps wall-clock
time and catches up at most ``MAX_BACKLOG``.

The loop is one executor timer, no extra thread: each tick runs the steps that are owed
(``elapsed wall time * rate * real_time_factor``) in chunks of ``rate / publish_rate`` steps
with a publish after each chunk; with ``real_time_factor`` 0 the timer fires continuously and
each tick runs chunks for a few milliseconds of wall time, then returns to the executor so
commands and service calls are served between batches.
"""

import math
import sys
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rclpy.clock import Clock as RosClock, ClockType
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray
from std_srvs.srv import SetBool, Trigger

from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.launch_support.ros2_control_setup import default_initial_positions
from manip_dynamics.ros.parameters.simulator_node import PARAMETERS, RESET_RELEASE_WAIT
from manip_dynamics.ros.runtime.conversions import time_msg
from manip_dynamics.ros.runtime.external_push import ExternalPushes
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, run_node
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.robot_description import (
    model_builder, NO_MODEL_MESSAGE, RobotDescriptionSource)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError
from manip_dynamics.simulation import Simulator
from manip_dynamics.small_arrays import all_finite, any_true

FloatArray = NDArray[np.float64]

# Wall-clock budget of one timer tick when running as fast as possible [s].
FAST_TICK_BUDGET = 0.005
# Largest backlog caught up when the loop falls behind the wall clock [s of wall time].
MAX_BACKLOG = 0.1
#: Seconds between two log lines of the same kind (each kind of rejected command has its own).
THROTTLE = 1.0
#: Node name (also the default of ``-r __node:=``).
NODE_NAME = 'simulator'
#: After ``~/reset``, a command releases the brakes only when it holds the reset pose: the
#: joint accelerations it gives at rest there are at most this large [rad/s^2 or m/s^2].
#: A command computed from a state before the reset, still in flight, does not; applied,
#: it gave the arm a velocity that a pure gravity compensation then kept.
RESET_HOLD_ACCELERATION = 1e-2
#: The simulated clock starts (and restarts on ``~/reset``) one step after 0, the start pose
#: held for that step: a zero header stamp means "not stamped" to ROS tools (the observer
#: ignores such a sample), and the state published at once must not carry one.
FIRST_STEP = 1


class SimulatorNode(GuardedNode):
    """Integrate the arm's dynamics and publish its joint state (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        """
        Declare the parameters, topics and services; load the model when it is given.

        :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
        :raises StartupError: A bad parameter, or a robot_description that does not load.
        """
        super().__init__(NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        urdf, build = model_builder(values)
        p = values.as_dict()
        p['initial_positions'] = p['initial_positions'] or []
        p['command_joints'] = p['command_joints'] or []
        if not p['controller_name'].strip('/'):
            raise StartupError('parameter controller_name must not be empty')
        self._params = p
        self._steps_per_publish = max(1, int(round(p['rate'] / p['publish_rate'])))

        self._model: RobotModel | None = None
        self._sim: Simulator | None = None
        self._command_names: list[str] = []
        self._command_index = np.zeros(0, dtype=np.int64)
        self._command = np.zeros(0)
        self._command_stamp = np.zeros(0)
        self._command_step = np.zeros(0)
        self._q0 = np.zeros(0)
        self._paused = bool(p['start_paused'])
        # paused by an integration failure (not by ~/pause): ~/reset resumes
        self._failed = False
        self._steps = 0
        self._until_publish = self._steps_per_publish
        self._anchor_wall = time.monotonic()
        self._anchor_steps = 0
        self._rejected = 0
        self._throttle = KindThrottle(self.get_logger(), THROTTLE)
        # Brakes: every joint held until the first command (parameter brakes).
        self._braked = False
        # wall time of the last ~/reset while its brakes are on (None: no reset pending)
        self._reset_wall: float | None = None
        # Joints whose command went stale (zero effort applied), reported once each way.
        self._stale_reported = np.zeros(0, dtype=bool)
        # The pose the brakes hold (the start pose, or where a protective stop caught it);
        # a protective stop is on (released like a reset, by a command that holds the pose)
        self._brake_q = np.zeros(0)
        self._protective_stop = False
        # Stamps without /clock: ROS time [s] at the anchor, and steps counted since then
        self._stamp_base = 0.0
        self._stamp_steps = 0
        # Lockstep: commands accepted so far, and how many there were at the last publish
        self._command_count = 0
        self._count_at_publish = 0

        self._joint_states_pub = self.create_publisher(JointState, '/joint_states', 10)
        self._clock_pub = (self.create_publisher(Clock, '/clock', 10)
                           if p['publish_clock'] else None)
        self._energy_pub = (self.create_publisher(Float64, '~/energy', 10)
                            if p['publish_energy'] else None)
        self._commands_topic = '/%s/commands' % p['controller_name'].strip('/')
        # the commands and the step on a thread of their own (run_node starts it)
        self._lane = self.create_lane('step')
        if p['controller_commands']:
            self.create_subscription(Float64MultiArray, self._commands_topic,
                                     self.commands_callback, 10,
                                     callback_group=self._lane.group)
        self.create_subscription(JointState, p['joint_commands_topic'],
                                 self.joint_commands_callback, 10,
                                 callback_group=self._lane.group)
        self.create_service(Trigger, '~/reset', self.reset_callback)
        self.create_service(SetBool, '~/pause', self.pause_callback)
        # pushes on the arm: ~/apply_wrench, ~/external_wrench, ~/applied_wrench
        self._pushes = ExternalPushes(self, lambda: (self._model, self._sim, self._steps),
                                      p['rate'], self._stamp_at)

        def build_and_keep_text(xml: str) -> RobotModel:
            self._pending_urdf = xml
            return build(xml)
        self._pending_urdf = ''
        self._source = RobotDescriptionSource(self, urdf, build_and_keep_text,
                                              on_model=self._prepare)

        rtf = p['real_time_factor']
        period = 0.0 if rtf == 0.0 else 0.001 if p['lockstep'] else min(
            max(1.0 / p['publish_rate'], 0.001), 0.02)
        # A steady-clock timer: the loop keeps wall time even if use_sim_time is set (a
        # ROS-time timer would wait for the /clock this node publishes itself).
        self._timer = self.create_timer(period, self.step_callback,
                                        callback_group=self._lane.group,
                                        clock=RosClock(clock_type=ClockType.STEADY_TIME))

    # ------------------------------------------------------------------ parameters
    # ------------------------------------------------------------------ model
    def _prepare(self, model: RobotModel) -> None:
        """
        Build the simulator for a new model, or raise ValueError to reject the model.

        :param model: The model just built from ``self._pending_urdf``.
        :raises ValueError: command_joints or initial_positions do not fit the model.
        """
        p = self._params
        names = p['command_joints'] or list(model.joint_names)
        index = np.array([model.joint_index(name) for name in names], dtype=np.int64)
        if len(set(names)) != len(names):
            raise StartupError('command_joints lists a joint twice: %s' % names)
        if p['initial_positions']:
            q0 = np.array(p['initial_positions'], dtype=np.float64)
            if q0.shape != (model.dof,) or not np.all(np.isfinite(q0)):
                raise StartupError(
                    'initial_positions must be %d finite values in the order %s, got %s'
                    % (model.dof, list(model.joint_names), p['initial_positions']))
        else:
            q0 = default_initial_positions(model, self._pending_urdf)
        options = {'dt': 1.0 / p['rate'], 'integrator': p['integrator'],
                   'include_friction': p['simulate_friction'], 'limits': p['limits'],
                   'clamp_effort': p['clamp_effort']}
        sim = Simulator(model, q0, **options)
        # The first step compiles the kernels (seconds without a disk cache): do it on a
        # throw-away copy so that the wall-clock schedule starts after it.
        Simulator(model, q0, **options).step(np.zeros(model.dof))
        model.kinetic_energy(q0, np.zeros(model.dof))
        model.potential_energy(q0)
        self._model = model
        self._sim = sim
        self._q0 = q0
        self._command_names = names
        self._command_index = index
        self._command = np.zeros(model.dof)
        self._command_stamp = np.full(model.dof, -math.inf)
        self._command_step = np.full(model.dof, -math.inf)
        self._stale_reported = np.zeros(model.dof, dtype=bool)
        self._braked = bool(p['brakes'])
        self._brake_q = q0.copy()
        self._protective_stop = False
        self._steps = FIRST_STEP
        self._until_publish = self._steps_per_publish
        self._restart_clock()
        self._stamp_now()
        self.get_logger().info(
            "simulating '%s' (%d joints) at %g Hz, publishing at %g Hz, real_time_factor %g, "
            'start pose %s%s%s; commands on %s%s' % (
                model.name, model.dof, p['rate'], p['rate'] / self._steps_per_publish,
                p['real_time_factor'], np.round(q0, 4).tolist(),
                ' (paused)' if self._paused else '',
                ', brakes on until the first command' if self._braked and p['brake_release']
                == 'first_command' else ', brakes on until a command that holds the pose'
                if self._braked else '',
                '%s (%s) and ' % (self._commands_topic, ', '.join(names))
                if p['controller_commands'] else '', p['joint_commands_topic']))
        if not self._paused:
            self._publish()

    def _restart_clock(self) -> None:
        """Re-anchor the wall-clock schedule at the current step."""
        self._anchor_wall = time.monotonic()
        self._anchor_steps = self._steps

    def _stamp_at(self, steps: int) -> float:
        """Return the /joint_states stamp [s] of the state after ``steps`` steps."""
        rate = self._params['rate']
        if self._params['publish_clock']:
            return steps / rate
        return self._stamp_base + (self._stamp_steps + steps - self._steps) / rate

    def _stamp_now(self) -> None:
        """
        Re-anchor the stamps without /clock at the current ROS time (start, un-pause).

        Never backwards: the next stamp is at least one step after the last one.
        """
        last = self._stamp_base + self._stamp_steps / self._params['rate']
        now = self.get_clock().now().nanoseconds * 1e-9
        self._stamp_base = max(now, last) if self._stamp_steps else now
        self._stamp_steps = 0

    # ------------------------------------------------------------------ callbacks
    def _reject(self, text: str, kind: str) -> None:
        """Count a rejected command and warn, throttled per kind of problem."""
        self._rejected += 1
        self._throttle.warning('command rejected (%d so far): %s' % (self._rejected, text),
                               kind=kind)

    def _accept_command(self, index: Any, values: FloatArray, source: str) -> None:
        """Store accepted efforts (model-order ``index``); release the brakes if on."""
        self._command[index] = values
        self._command_count += 1
        self._command_stamp[index] = time.monotonic()
        self._command_step[index] = self._steps
        if not self._braked:
            return
        how = 'first command arrived on %s' % source
        holding_only = (self._params['brake_release'] == 'holding_command'
                        or self._protective_stop)
        if self._reset_wall is not None or holding_only:
            acc = self._reset_pose_acceleration()
            if acc > RESET_HOLD_ACCELERATION and self._reset_wall is None:
                if not np.any(self._command):
                    # what a ros2_control hardware interface sends before any controller
                    # has written its command interfaces
                    self._throttle.log(
                        'info', 'brakes stay on: all-zero commands on %s would accelerate '
                        'the held pose at %.3g rad/s^2 (no controller has written yet?)'
                        % (source, acc), kind='reset release')
                    return
                self._reset_wall = time.monotonic()  # the wait starts at the first real one
            waited = time.monotonic() - self._reset_wall if self._reset_wall else 0.0
            after = ('after the protective stop' if self._protective_stop else
                     'after the reset' if not holding_only else
                     '(brake_release holding_command)')
            if acc > RESET_HOLD_ACCELERATION and waited < RESET_RELEASE_WAIT:
                self._throttle.log(
                    'info', 'brakes stay on %s: the command on %s would '
                    'accelerate the %s pose at %.3g rad/s^2 (computed from another state?); '
                    'waiting for one that holds it (at most %g s)' % (
                        after, source, 'held' if holding_only else 'reset', acc,
                        RESET_RELEASE_WAIT), kind='reset release')
                return
            how = ('command on %s holds the %s pose' % (source, 'held' if holding_only
                                                        else 'reset')
                   if acc <= RESET_HOLD_ACCELERATION
                   else 'commands on %s kept coming for %.2f s without holding the pose '
                   '(%.3g rad/s^2)' % (source, waited, acc))
        self._braked = False
        self._protective_stop = False
        self._reset_wall = None
        self._restart_clock()
        self.get_logger().info('brakes released at t = %.4f s: %s'
                               % (self._steps / self._params['rate'], how))

    def _reset_pose_acceleration(self) -> float:
        """Return the largest joint acceleration the command gives at rest at the braked pose."""
        model = self._model
        tau = self._command
        if self._params['clamp_effort']:
            limit = model.effort_limits
            tau = np.clip(tau, -limit, limit)
        try:
            qdd = model.forward_dynamics(self._brake_q, np.zeros(model.dof), tau,
                                         include_armature=True)
        except ValueError:
            return math.inf
        return float(np.max(np.abs(qdd))) if qdd.size else 0.0

    def commands_callback(self, msg: Float64MultiArray) -> None:
        """Take efforts in ``command_joints`` order (JointGroupEffortController contract)."""
        try:
            if self._model is None:
                self._reject(NO_MODEL_MESSAGE, 'no model')
                return
            values = np.asarray(msg.data, dtype=np.float64)
            names = self._command_names
            if values.shape != (len(names),):
                self._reject('%s carries %d values, expected %d (command_joints: %s)' % (
                    self._commands_topic, values.size, len(names), ', '.join(names)),
                    'array length')
                return
            if not all_finite(values):
                bad = ~np.isfinite(values)
                self._reject('%s has NaN/inf for %s' % (
                    self._commands_topic, ', '.join(n for n, b in zip(names, bad) if b)),
                    'array non-finite')
                return
            self._accept_command(self._command_index, values, self._commands_topic)
            self._lockstep_answered()
        except Exception as err:  # noqa: B902 - never die from a message
            self._reject('%s: %s' % (self._commands_topic, err), 'array other')

    def joint_commands_callback(self, msg: JointState) -> None:
        """Take name-keyed efforts (topic_based_ros2_control TopicBasedSystem contract)."""
        try:
            model = self._model
            if model is None:
                self._reject(NO_MODEL_MESSAGE, 'no model')
                return
            topic = self._params['joint_commands_topic']
            names = list(msg.name)
            values = np.asarray(msg.effort, dtype=np.float64)
            if not names or values.shape != (len(names),):
                self._reject('%s has %d names and %d efforts' % (topic, len(names),
                                                                 values.size),
                             'joint_commands length')
                return
            unknown = [n for n in names if n not in model.joint_names]
            if unknown:
                self._reject('%s names unknown joints %s' % (topic, unknown),
                             'joint_commands unknown')
                return
            if len(set(names)) != len(names):
                self._reject('%s names a joint twice: %s' % (topic, names),
                             'joint_commands duplicate')
                return
            bad = ~np.isfinite(values)
            if np.any(bad):
                self._reject('%s has NaN/inf for %s' % (
                    topic, ', '.join(n for n, b in zip(names, bad) if b)),
                    'joint_commands non-finite')
                return
            index = [model.joint_index(n) for n in names]
            self._accept_command(index, values, topic)
            self._lockstep_answered()
        except Exception as err:  # noqa: B902 - never die from a message
            self._reject('joint commands: %s' % err, 'joint_commands other')

    def reset_callback(self, request: Trigger.Request,
                       response: Trigger.Response) -> Trigger.Response:
        """Return to the initial pose at rest at time 0, brakes on; commands are kept."""
        if self._sim is None:
            response.success = False
            response.message = NO_MODEL_MESSAGE
            return response
        try:
            self._sim.reset()
            self._sim.set_external_wrenches(None)
        except Exception as err:  # noqa: B902 - answered, never raised into rclpy
            response.success = False
            response.message = 'reset failed: %s' % err
            return response
        # A clean state: no push goes on acting; after a failure the simulation runs again.
        self._pushes.clear()
        recovered = self._failed
        if recovered:
            self._failed = False
            self._paused = False
        # Commands are kept (they still time out): a running controller keeps driving.
        self._command_step -= self._steps - FIRST_STEP
        self._steps = FIRST_STEP
        self._until_publish = self._steps_per_publish
        self._restart_clock()
        self._braked = bool(self._params['brakes'])
        self._brake_q = self._q0.copy()
        self._protective_stop = False
        self._reset_wall = time.monotonic() if self._braked else None
        if not self._paused:
            self._publish()
        response.success = True
        response.message = 'reset to %s%s%s' % (
            np.round(self._q0, 4).tolist(),
            ', brakes on until the next command' if self._braked else '',
            '; recovered from the integration failure: running again' if recovered else '')
        if self._braked:
            self.get_logger().info('reset: brakes on until the next command')
        return response

    def pause_callback(self, request: SetBool.Request,
                       response: SetBool.Response) -> SetBool.Response:
        """Pause (data true: no stepping, no /joint_states) or resume the simulation."""
        if not request.data and self._paused:
            self._restart_clock()
            self._stamp_now()
        self._paused = bool(request.data)
        if not self._paused:
            self._failed = False
        t = self._sim.t if self._sim is not None else 0.0
        response.success = True
        response.message = '%s at t = %.4f s' % ('paused' if self._paused else 'running', t)
        return response

    # ------------------------------------------------------------------ loop
    def _effort(self) -> FloatArray | None:
        """
        Return the commanded efforts, model order; on a stale command act on it.

        ``command_timeout_action`` brake: a protective stop (None: nothing to step);
        zero: zero effort where the command is stale.
        """
        timeout = self._params['command_timeout']
        stale = (((time.monotonic() - self._command_stamp) > timeout)
                 & ((self._steps - self._command_step) > timeout * self._params['rate']))
        if not (any_true(stale) or any_true(self._stale_reported)):
            return self._command.copy()   # every joint's command fresh (the common case)
        commanded = np.isfinite(self._command_stamp)
        if self._params['command_timeout_action'] == 'brake' and any_true(stale & commanded):
            self._protective(stale & commanded)
            return None
        self._report_stale(stale)
        return np.where(stale, 0.0, self._command)

    def _protective(self, stale: NDArray[np.bool_]) -> None:
        """Brake every joint where it is: a driver's protective stop on a dead controller."""
        sim = self._sim
        self._brake_q = np.asarray(sim.q, dtype=np.float64).copy()
        sim.reset(q0=self._brake_q, qd0=np.zeros(self._model.dof))
        self._braked = True
        self._protective_stop = True
        self._reset_wall = None
        names = self._model.joint_names
        self.get_logger().error(
            'protective stop at t = %.3f s: no command for %s within command_timeout %g s; '
            'brakes on where the arm is, released by ~/reset or by a command that holds this '
            'pose' % (self._steps / self._params['rate'],
                      [names[i] for i in np.flatnonzero(stale)],
                      self._params['command_timeout']))

    def _report_stale(self, stale: NDArray[np.bool_]) -> None:
        """Log when commanded joints go stale (zero effort) and when commands come back."""
        commanded = np.isfinite(self._command_stamp)
        newly = stale & commanded & ~self._stale_reported
        back = ~stale & self._stale_reported
        if not (newly.any() or back.any()):
            return
        names = self._model.joint_names
        t = self._steps / self._params['rate']
        if newly.any():
            self.get_logger().warning(
                'no command for %s within command_timeout %g s: applying zero effort '
                '(t = %.3f s)' % ([names[i] for i in np.flatnonzero(newly)],
                                  self._params['command_timeout'], t))
        if back.any():
            self.get_logger().info('commands are back for %s (t = %.3f s)' % (
                [names[i] for i in np.flatnonzero(back)], t))
        self._stale_reported = (self._stale_reported | newly) & ~back

    def _lockstep_answered(self) -> None:
        """Lockstep: step at once on the command the loop waits for (not at the next tick)."""
        if self._params['lockstep']:
            self.step_callback()

    def _lockstep_waits(self, now: float) -> bool:
        """
        Return whether lockstep holds the simulation for a command (and check its age).

        Lockstep applies once commands flow and the brakes are off. No command since the
        last /joint_states: wait; none at all for ``command_timeout`` (wall clock): the
        ``command_timeout_action`` (a protective stop, or zero effort: then it runs on).
        """
        commanded = np.isfinite(self._command_stamp)
        if not self._params['lockstep'] or self._braked or not commanded.any():
            return False
        if self._command_count != self._count_at_publish:
            return False
        stale = commanded & ((now - self._command_stamp) > self._params['command_timeout'])
        if not stale.any():
            return True
        if self._params['command_timeout_action'] == 'brake':
            self._protective(stale)
            return False
        self._report_stale(stale)
        return False

    def step_callback(self) -> None:
        """Run the steps owed to the wall clock (or a batch when as fast as possible)."""
        sim = self._sim
        if sim is None or self._paused:
            return
        rate = self._params['rate']
        rtf = self._params['real_time_factor']
        start = time.monotonic()
        lockstep = self._params['lockstep'] and not self._braked and \
            any_true(np.isfinite(self._command_stamp))
        if self._lockstep_waits(start):
            return
        if rtf > 0.0 and lockstep:
            owed = (self._anchor_steps + int((start - self._anchor_wall) * rate * rtf)
                    - self._steps)
            if owed < self._until_publish:
                return   # not faster than real_time_factor
            if owed > self._until_publish + self._steps_per_publish:
                # behind (a late command): simulated time waits for the controller
                self._anchor_wall = start
                self._anchor_steps = self._steps + self._until_publish
            owed = self._until_publish
        elif rtf > 0.0:
            owed = (self._anchor_steps + int((start - self._anchor_wall) * rate * rtf)
                    - self._steps)
            # Catch up at most half a command timeout of simulated time in one tick: a
            # controller cannot answer during a tick, and its commands must not go stale.
            backlog = max(self._steps_per_publish, int(min(
                MAX_BACKLOG * rtf, 0.5 * self._params['command_timeout']) * rate))
            if owed > backlog:
                self._throttle.warning(
                    'cannot keep up with real_time_factor %g: dropping %.3f s of simulated '
                    'time' % (rtf, (owed - backlog) / rate), kind='cannot keep up')
                self._anchor_wall = start
                self._anchor_steps = self._steps + backlog
                owed = backlog
        else:
            owed = self._until_publish if lockstep else -1
        try:
            while owed != 0:
                chunk = self._until_publish if owed < 0 else min(owed, self._until_publish)
                chunk = self._pushes.before_steps(sim, self._steps, chunk)
                effort = None if self._braked else self._effort()
                if effort is not None:
                    sim.step(effort, steps=chunk)
                # braked: the arm holds its pose while simulated time goes on
                self._steps += chunk
                self._stamp_steps += chunk
                self._until_publish -= chunk
                if owed > 0:
                    owed -= chunk
                if self._until_publish == 0:
                    self._until_publish = self._steps_per_publish
                    self._publish()
                if owed < 0 and time.monotonic() - start > FAST_TICK_BUDGET:
                    break
        except Exception as err:  # noqa: B902 - pause, report, and let ~/reset recover
            self._paused = True
            self._failed = True
            self.get_logger().error('simulation paused after an integration error at t = '
                                    '%.4f s: %s (call ~/reset)' % (self._steps / rate, err))

    def _publish(self) -> None:
        """Publish /joint_states (and /clock, ~/energy when enabled) for the current state."""
        sim = self._sim
        model = self._model
        if sim is None or model is None:
            return
        msg = JointState()
        if self._clock_pub is not None:
            # simulated time counts the braked steps too (the arm was held, time went on)
            stamp = time_msg(self._steps / self._params['rate'])
            self._clock_pub.publish(Clock(clock=stamp))
            msg.header.stamp = stamp
        else:
            # the time the sample was taken: simulated time since the anchor, never now()
            msg.header.stamp = time_msg(self._stamp_at(self._steps))
        msg.name = list(model.joint_names)
        msg.position = np.asarray(sim.q, dtype=np.float64).tolist()
        msg.velocity = np.asarray(sim.qd, dtype=np.float64).tolist()
        msg.effort = np.asarray(sim.applied_effort, dtype=np.float64).tolist()
        self._joint_states_pub.publish(msg)
        self._count_at_publish = self._command_count
        self._pushes.publish(msg.header.stamp)
        if self._energy_pub is not None:
            self._energy_pub.publish(Float64(data=float(sim.total_energy())))


def main(args: list[str] | None = None) -> int:
    """
    Run the simulator node until Ctrl-C, SIGTERM or an external shutdown.

    :param args: Command-line arguments for rclpy (``--ros-args ...``).
    :return: Exit code: 0 after a normal shutdown, 1 on unusable start-up parameters.
    """
    return run_node(NODE_NAME, SimulatorNode, args, STARTUP_ERRORS, report_startup_error)


if __name__ == '__main__':
    sys.exit(main())
