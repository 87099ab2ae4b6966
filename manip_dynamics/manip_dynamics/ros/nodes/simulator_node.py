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
The ``simulator`` node: a URDF arm and its driver, seen over ROS (docs/SIMULATOR.md).

The dynamics are :class:`manip_dynamics.simulation.Simulator`'s; what a driver does around
them (brakes, a protective stop on stale commands, the wall-clock schedule with catch-up,
lockstep) is :class:`manip_dynamics.simulation.ArmDriver`'s, tested without ROS. This node
subscribes to effort commands (``/<controller_name>/commands``, std_msgs/Float64MultiArray
in ``command_joints`` order, as JointGroupEffortController; ``joint_commands_topic``,
sensor_msgs/JointState keyed by name, as TopicBasedSystem), rejects bad ones with a
throttled warning (the previous command stays), and publishes ``/joint_states`` (applied
effort) at ``publish_rate``, stamped with the time each sample was taken (simulated time on
``/clock`` with ``publish_clock``; else the ROS time at start plus the simulated time since,
never going back). Services ``~/reset``, ``~/pause``; pushes from
:mod:`manip_dynamics.ros.runtime.external_push`. One steady-clock timer runs the loop on
the node's step lane; with ``lockstep`` a command also runs the steps waited for at once.
"""

from dataclasses import fields
import sys
import time
from typing import Any

import numpy as np
from rclpy.clock import Clock as RosClock, ClockType
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray
from std_srvs.srv import SetBool, Trigger

from manip_dynamics.errors import InputError
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.launch_support.ros2_control_setup import default_initial_positions
from manip_dynamics.ros.parameters.simulator_node import PARAMETERS
from manip_dynamics.ros.runtime.conversions import time_msg
from manip_dynamics.ros.runtime.external_push import ExternalPushes
from manip_dynamics.ros.runtime.guarded_node import GuardedNode
from manip_dynamics.ros.runtime.names import child_name, JOINT_STATES
from manip_dynamics.ros.runtime.node_runtime import KindThrottle, run_node
from manip_dynamics.ros.runtime.parameter_spec import declare_parameters
from manip_dynamics.ros.runtime.robot_description import (
    model_builder, NO_MODEL_MESSAGE, RobotDescriptionSource)
from manip_dynamics.ros.runtime.startup import report_startup_error, STARTUP_ERRORS, StartupError
from manip_dynamics.simulation import ArmDriver, DriverSettings, SampleStamps
from manip_dynamics.simulation.arm_driver import (
    checked_start, efforts_by_name, efforts_in_order, RejectedCommand)
from manip_dynamics.simulation.engines import EngineSettings, simulated_arm

#: Seconds between two log lines of the same kind (each kind of rejected command has its own).
THROTTLE = 1.0
#: Node name (also the default of ``-r __node:=``).
NODE_NAME = 'simulator'


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
        if not p['controller_name'].strip('/'):
            raise StartupError('parameter controller_name must not be empty')
        self._params = p
        # the driver's settings are the parameters of the same names
        self._settings = DriverSettings(**{f.name: p[f.name] for f in fields(DriverSettings)})
        self._engine = EngineSettings(**{f.name: p[f.name] for f in fields(EngineSettings)})
        try:
            self._engine.check()
        except InputError as error:
            raise StartupError(str(error)) from None
        self._paused = bool(p['start_paused'])   # until a model is there
        self._arm: ArmDriver | None = None
        self._command_names: list[str] = []
        self._command_index = np.zeros(0, dtype=np.int64)
        self._q0 = np.zeros(0)
        self._rejected = 0
        self._throttle = KindThrottle(self.get_logger(), THROTTLE)
        self._stamps = SampleStamps(p['rate'], p['publish_clock'])

        self._joint_states_pub = self.create_publisher(JointState, JOINT_STATES, 10)
        self._clock_pub = (self.create_publisher(Clock, '/clock', 10)
                           if p['publish_clock'] else None)
        self._energy_pub = (self.create_publisher(Float64, '~/energy', 10)
                            if p['publish_energy'] else None)
        self._commands_topic = child_name(p['controller_name'], 'commands')
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
        self._pushes = ExternalPushes(self, lambda: (arm.sim.model, arm.sim, arm.sim.steps) if (
            arm := self._arm) else (None, None, 0), p['rate'],
            lambda steps: self._stamps.at(self._arm, steps))

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

    # ------------------------------------------------------------------ model
    def _prepare(self, model: RobotModel) -> None:
        """
        Build the simulator and its driver for a new model, or raise to reject the model.

        :param model: The model just built from ``self._pending_urdf``.
        :raises InputError: command_joints or initial_positions do not fit the model.
        """
        p = self._params
        names, index, q0 = checked_start(model, p['command_joints'], p['initial_positions'])
        if q0 is None:
            q0 = default_initial_positions(model, self._pending_urdf)
        # kernels warm before the wall-clock schedule starts
        sim = simulated_arm(model, self._pending_urdf, q0, 1.0 / p['rate'], self._engine,
                            on_touch=lambda t: self.get_logger().info(
                                'the arm touched the scene at t = %.4f s' % t))
        paused = self._arm.paused if self._arm is not None else self._paused
        self._q0 = q0
        self._command_names = names
        self._command_index = index
        # the driver's lines: the same line twice within THROTTLE is counted, not repeated
        self._arm = arm = ArmDriver(
            sim, self._settings, lambda level, text, kind: self._throttle.log(
                level, text, kind=kind or text), time.monotonic(), paused=paused)
        self._stamps.anchor(self._ros_now(), arm)
        engine = ('MuJoCo (%s)' % (p['mujoco_model'] or 'the description')
                  if p['engine'] == 'mujoco' else "the suite's simulator")
        self.get_logger().info(
            "simulating '%s' (%d joints) with %s at %g Hz, publishing at %g Hz, "
            'real_time_factor %g, start pose %s%s; commands on %s%s' % (
                model.name, model.dof, engine, p['rate'], p['rate'] / arm.steps_per_publish,
                p['real_time_factor'], np.round(q0, 4).tolist(), arm.describe(),
                '%s (%s) and ' % (self._commands_topic, ', '.join(names))
                if p['controller_commands'] else '', p['joint_commands_topic']))
        if not arm.paused:
            self._publish()

    def _ros_now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # ------------------------------------------------------------------ callbacks
    def _reject(self, text: str, kind: str) -> None:
        """Count a rejected command and warn, throttled per kind of problem."""
        self._rejected += 1
        self._throttle.warning('command rejected (%d so far): %s' % (self._rejected, text),
                               kind=kind)

    def commands_callback(self, msg: Float64MultiArray) -> None:
        """Take efforts in ``command_joints`` order (JointGroupEffortController contract)."""
        self._command(lambda: (self._command_index, efforts_in_order(
            msg.data, self._command_names, self._commands_topic)), self._commands_topic)

    def joint_commands_callback(self, msg: JointState) -> None:
        """Take name-keyed efforts (topic_based_ros2_control TopicBasedSystem contract)."""
        topic = self._params['joint_commands_topic']
        self._command(lambda: efforts_by_name(self._arm.sim.model, list(msg.name), msg.effort,
                                              topic), topic)

    def _command(self, check: Any, source: str) -> None:
        """Check a command (``check() -> (index, efforts)``) and hand it to the driver."""
        try:
            if self._arm is None:
                self._reject(NO_MODEL_MESSAGE, 'no model')
                return
            index, values = check()
            self._arm.take_command(index, values, source, time.monotonic())
            if self._params['lockstep']:
                self.step_callback()   # run the steps it waited for at once
        except RejectedCommand as err:
            self._reject(str(err), err.kind)
        except Exception as err:  # noqa: B902 - never die from a message
            self._reject('%s: %s' % (source, err), 'other')

    def reset_callback(self, request: Trigger.Request,
                       response: Trigger.Response) -> Trigger.Response:
        """Return to the initial pose at rest at time 0, brakes on; commands are kept."""
        arm = self._arm
        try:
            recovered = arm.reset(time.monotonic()) if arm is not None else None
        except Exception as err:  # noqa: B902 - answered, never raised into rclpy
            recovered, response.message = None, 'reset failed: %s' % err
        if recovered is None:
            response.success, response.message = False, response.message or NO_MODEL_MESSAGE
            return response
        self._pushes.clear()   # a clean state: no push goes on acting
        if not arm.paused:
            self._publish()
        response.success = True
        response.message = 'reset to %s%s%s' % (
            np.round(self._q0, 4).tolist(),
            ', brakes on until the next command' if arm.braked else '',
            '; recovered from the integration failure: running again' if recovered else '')
        if arm.braked:
            self.get_logger().info('reset: brakes on until the next command')
        return response

    def pause_callback(self, request: SetBool.Request,
                       response: SetBool.Response) -> SetBool.Response:
        """Pause (data true: no stepping, no /joint_states) or resume the simulation."""
        arm, self._paused = self._arm, bool(request.data)
        if arm is not None:
            resuming = arm.paused and not self._paused
            arm.pause(self._paused, time.monotonic())
            if resuming:
                self._stamps.anchor(self._ros_now(), arm)
        response.success = True
        response.message = '%s at t = %.4f s' % ('paused' if self._paused else 'running',
                                                 arm.t if arm is not None else 0.0)
        return response

    # ------------------------------------------------------------------ loop
    def step_callback(self) -> None:
        """Run the steps the driver owes now, publishing after each publish period."""
        if self._arm is not None:
            self._arm.tick(time.monotonic(), self._pushes.before_steps, self._publish,
                           time.monotonic)

    def _publish(self) -> None:
        """Publish /joint_states (and /clock, ~/energy when enabled) for the current state."""
        arm = self._arm
        if arm is None:
            return
        sim = arm.sim
        msg = JointState()
        if self._clock_pub is not None:
            # simulated time counts the braked steps too (the arm was held, time went on)
            stamp = time_msg(sim.t)
            self._clock_pub.publish(Clock(clock=stamp))
            msg.header.stamp = stamp
        else:
            # the time the sample was taken: simulated time since the anchor, never now()
            msg.header.stamp = time_msg(self._stamps.publish(arm))
        msg.name = list(sim.model.joint_names)
        msg.position = np.asarray(sim.q, dtype=np.float64).tolist()
        msg.velocity = np.asarray(sim.qd, dtype=np.float64).tolist()
        msg.effort = np.asarray(sim.joint_effort, dtype=np.float64).tolist()
        self._joint_states_pub.publish(msg)
        arm.note_sample()
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
