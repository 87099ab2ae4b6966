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

"""simulator_node's parameters (docs/ROS_API.md's table is generated from this)."""

from manip_dynamics.ros.parameters.shared import COMMAND_JOINTS, CONTROLLER_NAME, MODEL
from manip_dynamics.ros.parameters.spec import Param
from manip_dynamics.safety.ranges import Range
from manip_dynamics.simulation import FIXED_STEP_INTEGRATORS, LIMIT_MODES
from manip_dynamics.simulation.arm_driver import (
    BRAKE_RELEASES, RESET_RELEASE_WAIT, TIMEOUT_ACTIONS)
from manip_dynamics.simulation.engines import ENGINES
from manip_dynamics.simulation.mujoco_arm import EFFORT_STATES

#: Command timeout of a simulated loop [s]: the simulator's ``command_timeout`` and the
#: ``timeout`` that sim.launch.py, control.launch.py and the demo give the loop's commanding
#: nodes (one value, declared here). Measured on the project machine (2 cores, load average
#: 5 to 12 from other work) over 5 minutes of the simulator and the compensation: the gap
#: between two /joint_states at the compensation had median 4 ms, 99.9th percentile 40 ms,
#: maximum 0.19 s, and exceeded 0.1 s 4 times (the commands at the simulator: 6 times), so
#: 0.1 s fired the watchdog every minute or two. 0.5 s is 2.5 times the largest stall seen
#: and still stops a simulated arm within half a second of a dead node.
LOOP_TIMEOUT = 0.5

PARAMETERS = MODEL + (
    Param('rate', 'double', 1000.0, 'Integration rate (simulated time)', unit='Hz',
          valid=Range(10.0, 1e5)),
    Param('publish_rate', 'double', 250.0, 'joint_states rate (simulated time)', unit='Hz',
          valid=Range(0.0, 1e4, low_open=True)),
    Param('engine', 'string', 'suite',
          "The physics: suite (the suite's own simulator of the description) or mujoco (a "
          'MuJoCo model of the arm, mujoco_model; integrator, simulate_friction and limits '
          'then come from that model)', choices=ENGINES),
    Param('mujoco_model', 'string', '',
          'engine mujoco: MJCF or URDF file MuJoCo runs as the arm, its joints named as the '
          "description's (manip-dynamics mujoco-arm writes one that differs from the "
          'description); empty = the description compiled by MuJoCo'),
    Param('effort_state', 'string', 'applied',
          "joint_states' effort: applied (the motor torque after clamping) or link_torque "
          '(engine mujoco: what a link-side joint torque sensor measures)',
          choices=EFFORT_STATES),
    Param('integrator', 'string', 'semi_implicit_euler', 'Integration scheme (engine suite)',
          choices=FIXED_STEP_INTEGRATORS),
    Param('real_time_factor', 'double', 1.0,
          'Simulated time / wall time; 0 = as fast as possible', valid=Range(0.0, 100.0)),
    Param('publish_clock', 'bool', False,
          'Publish /clock; /joint_states stamps then carry simulated time'),
    Param('publish_energy', 'bool', False, 'Publish ~/energy: kinetic + potential energy [J]'),
    CONTROLLER_NAME,
    Param('controller_commands', 'bool', True,
          'Take Float64MultiArray commands on <controller_name>/commands; false when a '
          'controller_manager stands in front (then joint_commands_topic only)'),
    COMMAND_JOINTS,
    Param('joint_commands_topic', 'string', 'joint_commands',
          'sensor_msgs/JointState effort commands keyed by name'),
    Param('command_timeout', 'double', LOOP_TIMEOUT,
          'A joint whose last command is older than this (wall clock and simulated time) is '
          'stale (command_timeout_action)', unit='s', valid=Range(0.0, 10.0, low_open=True)),
    Param('command_timeout_action', 'string', 'brake',
          'On a stale command: brake (a protective stop, every joint braked, released by '
          '~/reset or a command that holds the pose) or zero (zero effort on the stale '
          'joints: the arm falls)', choices=TIMEOUT_ACTIONS),
    Param('simulate_friction', 'bool', True,
          'Apply the URDF <dynamics> damping and friction in the simulated arm'),
    Param('limits', 'string', 'spring', 'Joint position limits', choices=LIMIT_MODES),
    Param('clamp_effort', 'bool', True, 'Clamp commands to the URDF effort limits'),
    Param('start_paused', 'bool', False, 'Start paused; call ~/pause with false to run'),
    Param('brake_release', 'string', 'first_command',
          'first_command: the first command releases the brakes; holding_command: only one '
          'that holds the pose (all-zero ones never), or %g s of others' % RESET_RELEASE_WAIT,
          choices=BRAKE_RELEASES),
    Param('lockstep', 'bool', False,
          'Advance only on commands: one publish period of steps per command received after '
          'the last /joint_states, never a catch-up burst'),
    Param('brakes', 'bool', True,
          'Hold every joint (as brakes would) until the first command arrives; ~/reset '
          'engages them again'),
    Param('initial_positions', 'double_array', None,
          'Start pose in model order; unset = ros2_control initial_value, else 0 clamped into '
          'the limits', unit='rad or m'),
)
