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

"""external_torque_observer's parameters (docs/ROS_API.md's table is generated from this)."""

import math

from manip_dynamics.observers.momentum_observer import DEFAULT_STALL_GAP, REST_SPEED
from manip_dynamics.ros.parameters.shared import (
    COMMAND_JOINTS, GATE, JOINT_STATES_TOPIC, MODEL, WRENCH_LINK)
from manip_dynamics.ros.parameters.spec import Param
from manip_dynamics.safety.ranges import Range

#: Where the applied torque comes from.
EFFORT_SOURCES = ('joint_states', 'commands')
#: joint_states kept while the node is busy [messages]: 100 ms at 500 Hz, 50 ms at 1 kHz.
DEFAULT_QUEUE_DEPTH = 50

PARAMETERS = MODEL + (
    JOINT_STATES_TOPIC,
    Param('effort_source', 'string', 'joint_states',
          'Where the applied torque comes from: joint_states (its effort field: the '
          'simulator, torque-sensing arms) or commands (the latest message on '
          'commands_topic: arms that report no torque)', choices=EFFORT_SOURCES),
    Param('commands_topic', 'string', 'effort_controller/commands',
          'std_msgs/Float64MultiArray effort commands (effort_source commands); each joint '
          'state is paired with the last command received before it'),
    COMMAND_JOINTS,
    Param('command_max_age', 'double', 0.1,
          'A command received more than this before the joint state is not used (effort_source '
          'commands): no output until a new one arrives', unit='s',
          valid=Range(0.0, 10.0, low_open=True)),
    Param('command_delay', 'double', 0.0,
          'A joint state is paired with the last command received this long before it '
          '(effort_source commands; behind a controller_manager a command acts about 1.5 '
          'update cycles after it is sent)', unit='s', valid=Range(0.0, 0.1)),
    Param('gain', 'double', 50.0, 'Observer gain K of every joint (time constant 1/K)',
          unit='1/s', valid=Range(0.0, 1e4, low_open=True)),
    Param('gains', 'double_array', None, 'Observer gain per joint, model order; unset = gain '
          'for every joint', unit='1/s', valid=Range(0.0, 1e4, low_open=True)),
    Param('threshold', 'double', 1.0,
          'Contact threshold on |r_i| of every joint; set on the running node, it acts from '
          'the next sample (flags kept)', unit='N m or N', valid=Range(0.0, 1e6, low_open=True),
          tunable=True),
    Param('thresholds', 'double_array', None,
          'Contact threshold per joint, model order; unset = threshold for every joint; '
          'tunable as threshold', unit='N m or N', valid=Range(0.0, 1e6, low_open=True),
          tunable=True),
    Param('hysteresis', 'double', 0.5,
          'A joint leaves contact when |r_i| < (1 - hysteresis) threshold_i; tunable as '
          'threshold', valid=Range(0.0, 0.99), tunable=True),
    Param('subtract_friction', 'bool', True,
          'Subtract the URDF joint friction b qd + f_c tanh(qd / v_s) (what the simulator '
          'applies) from the applied torque'),
    Param('stiction', 'bool', False,
          "The arm's dry friction sticks at rest (a physical joint; MuJoCo's frictionloss; "
          "not the suite's simulator): at a joint slower than rest_speed the friction is "
          'any value within +-f_c that explains the residual, so a breakaway from rest is '
          'no contact; a torque on a joint at rest then shows reduced by up to 2 f_c. Needs '
          'subtract_friction'),
    Param('rest_speed', 'double', REST_SPEED,
          'With stiction: a joint slower than this is at rest', unit='rad/s or m/s',
          valid=Range(0.0, 10.0)),
    Param('max_step', 'double', 0.1,
          'Largest joint_states spacing; a longer gap restarts the observer (r = 0)', unit='s',
          valid=Range(0.0, 10.0, low_open=True)),
    Param('stall_gap', 'double', DEFAULT_STALL_GAP,
          'A joint_states gap longer than this (up to max_step) is a stall of the sample '
          'chain: for half as long the observer keeps its residual and estimates nothing '
          '(the states after a stall lag their stamps); 0 = never', unit='s',
          valid=Range(0.0, 10.0)),
    WRENCH_LINK,
    Param('wrench_frame', 'string', '',
          'Axes of ~/external_wrench: empty = wrench_link; a link of the model, or world (= '
          'the root link)'),
    Param('queue_depth', 'integer', DEFAULT_QUEUE_DEPTH,
          'joint_states kept while the node is busy: each is integrated, oldest first, and the '
          'outputs are published once per batch, for the newest; 1 keeps only the newest and '
          'integrates its torque over the whole gap', valid=Range(1, 100000)),
    Param('wrench_damping', 'double', 0.01,
          'Damping lambda of the pseudo-inverse (J J^T + lambda^2 I)^-1 J r', unit='m',
          valid=Range(0.0, math.inf)),
) + GATE
