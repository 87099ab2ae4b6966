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
Parameters several nodes declare: one declaration each, one meaning, one default.

A node's table (a module beside this one) takes the groups it needs: ``MODEL`` (every node
with a robot model), ``GATE`` (every node that reads joint states), ``PAYLOAD`` (the nodes
that carry a payload from start-up), and the single ones below.
"""

import math

from manip_dynamics.control.gravity_compensation import (
    EFFORT_SCALE_RANGE, STALE_ACTIONS, TIMEOUT_RANGE)
from manip_dynamics.model.urdf_loader import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINKS
from manip_dynamics.observers import MAX_CONTACT_AGE as MAX_CONTACT_AGE_DEFAULT
from manip_dynamics.ros.parameters.spec import Param
from manip_dynamics.safety.plausibility import (
    DEFAULT_HOLD_TIME, DEFAULT_MAX_ACCELERATION, DEFAULT_POSITION_MARGIN,
    DEFAULT_VELOCITY_FACTOR, HOLD_TIME_RANGE, MAX_ACCELERATION_RANGE, MAX_VELOCITY,
    POSITION_MARGIN_RANGE, VELOCITY_FACTOR_RANGE)
from manip_dynamics.safety.ranges import Range

#: The robot model: where the URDF comes from, which part of it, gravity, strictness, and
#: the identified joint dynamics ``manip-dynamics identify fit`` writes as a parameter file.
MODEL = (
    Param('robot_description', 'string', '',
          'URDF text of the robot; empty = take it from /robot_description'),
    Param('root_link', 'string', '', 'Fixed base link; empty = the URDF root'),
    Param('tip_link', 'string', '',
          'Model only the chain root_link -> tip_link; empty = the whole tree'),
    Param('gravity', 'double_array', [0.0, 0.0, -9.81],
          'Gravity acceleration in the root link frame', unit='m/s^2', length=3),
    Param('strict', 'bool', False,
          'Refuse a robot description with physically suspect data (inertias no rigid body '
          'has, joints that move no mass); false = load it and log each warning once'),
    Param('robot_description_max_bytes', 'integer', DEFAULT_MAX_BYTES,
          'Largest robot description accepted', unit='bytes', valid=Range(1000, 1e9)),
    Param('robot_description_max_links', 'integer', DEFAULT_MAX_LINKS,
          'Largest number of links accepted in a robot description', valid=Range(1, 1e6)),
    Param('joint_dynamics.joint_names', 'string_array', None,
          'Joints the identified joint dynamics below are for (manip-dynamics identify fit)'),
    Param('joint_dynamics.damping', 'double_array', None,
          'Identified viscous friction per joint_dynamics.joint_names entry',
          unit='N m s/rad or N s/m'),
    Param('joint_dynamics.friction', 'double_array', None,
          'Identified Coulomb friction per joint_dynamics.joint_names entry', unit='N m or N'),
    Param('joint_dynamics.armature', 'double_array', None,
          'Identified rotor inertia per joint_dynamics.joint_names entry',
          unit='kg m^2 or kg'),
)

#: The plausibility gate of joint states (manip_dynamics.safety.plausibility); a node with a
#: stale-input timeout also keeps glitch_hold_time at most that timeout.
GATE = (
    Param('glitch_velocity_factor', 'double', DEFAULT_VELOCITY_FACTOR,
          'Reject joint_states whose velocity exceeds this x the URDF velocity limit (and '
          '%g): no real motion is that fast' % MAX_VELOCITY, valid=VELOCITY_FACTOR_RANGE),
    Param('glitch_position_margin', 'double', DEFAULT_POSITION_MARGIN,
          'Reject joint_states whose position is farther than this outside the URDF limits',
          unit='rad or m', valid=POSITION_MARGIN_RANGE),
    Param('glitch_hold_time', 'double', DEFAULT_HOLD_TIME,
          'Keep the last good joint state this long over rejected ones, then stop (at most '
          "the node's timeout)", unit='s', valid=HOLD_TIME_RANGE),
    Param('glitch_max_acceleration', 'double', DEFAULT_MAX_ACCELERATION,
          'A velocity step faster than this waits for the next sample to confirm it (a '
          'glitch is contradicted by it)', unit='rad/s^2 or m/s^2',
          valid=MAX_ACCELERATION_RANGE),
)

#: A payload carried from start-up.
PAYLOAD = (
    Param('payload_link', 'string', '', 'Link carrying a payload at start; empty = none'),
    Param('payload_mass', 'double', 0.0, 'Payload mass (0 = none)', unit='kg',
          valid=Range(0.0, math.inf)),
    Param('payload_com', 'double_array', [0.0, 0.0, 0.0],
          'Payload centre of mass in the link frame', unit='m', length=3),
    Param('payload_inertia', 'double_array', [0.0] * 6,
          'Payload inertia ixx ixy ixz iyy iyz izz about its centre of mass',
          unit='kg m^2', length=6),
)

#: What a commanding node sends once when joint states stop coming.
STALE_ACTION = Param(
    'stale_action', 'string', 'hold', 'When joint_states stop coming: hold (gravity at the '
    'last good pose, for bare effort-controlled arms) or zero (for arms that add gravity '
    'themselves)', choices=STALE_ACTIONS)

#: The joint states a node reads.
JOINT_STATES_TOPIC = Param('joint_states_topic', 'string', 'joint_states',
                           "sensor_msgs/JointState input (relative: in the node's namespace)")

#: The joints of a node's effort commands, in their order.
COMMAND_JOINTS = Param(
    'command_joints', 'string_array', None,
    "The joints of the effort commands in the controller's order, each a model joint (a "
    'subset is allowed), no duplicates; unset = every model joint, model order')

#: The external-torque observer whose contact flag a node reacts to.
OBSERVER_NAMESPACE = Param(
    'observer_namespace', 'string', 'external_torque_observer',
    'Namespace of the external_torque_observer whose topics the node reads '
    '(<namespace>/contact, ...); empty = none')

#: How old a contact flag may be and still count.
MAX_CONTACT_AGE = Param(
    'max_contact_age', 'double', MAX_CONTACT_AGE_DEFAULT,
    'Ignore a contact message stamped more than this before the newest joint state (the '
    "observer's output trails the joint states under load)", unit='s',
    valid=Range(0.0, 10.0, low_open=True), tunable=True)

#: How far from the current pose a plan may start.
START_TOLERANCE = Param(
    'start_tolerance', 'double', 0.05,
    'Refuse a plan whose start is farther than this from the current pose', unit='rad or m',
    valid=Range(0.0, 10.0, low_open=True), tunable=True)

#: The effort controller a commanding node publishes to.
CONTROLLER_NAME = Param('controller_name', 'string', 'effort_controller',
                        'Effort controller; commands go to <controller_name>/commands')

#: Fraction of the effort limits a commanding node uses.
EFFORT_SCALE = Param(
    'effort_scale', 'double', 1.0,
    'Clamp every effort to effort_scale x effort limit; set on a running arm, it acts from '
    'the next command', valid=EFFORT_SCALE_RANGE, tunable=True)

#: Where the external wrench estimate acts.
WRENCH_LINK = Param(
    'wrench_link', 'string', '',
    'Link whose origin the external wrench estimate acts at; empty = tip_link, else the last '
    "link of the model (viewer_node, which draws it: first the wrench's frame_id when that is "
    'a link other than the root)')

#: URDF friction in the torques a node computes.
INCLUDE_FRICTION = Param(
    'include_friction', 'bool', False,
    'Add the URDF joint friction b qd + f_c tanh(qd / v_s) to the torques the node computes '
    '(gravity_compensation_node: from the joint_states velocities, each clipped to its URDF '
    'velocity limit; dynamics_node: in inverse_dynamics, forward_dynamics and '
    'trajectory_efforts even when a request does not ask for it)')

#: Age of the newest joint state at which a commanding node stops.
TIMEOUT = Param('timeout', 'double', 0.1,
                'Joint_states older than this stop the output', unit='s', valid=TIMEOUT_RANGE)

#: Acceleration limits for retiming.
ACCELERATION_LIMITS = Param(
    'acceleration_limits', 'double_array', None,
    'Acceleration limits for retiming: one value for every joint or one per joint, model '
    "order; unset = the node's fallback (docs/ROS_API.md)", unit='rad/s^2 or m/s^2',
    valid=Range(0.0, math.inf, low_open=True))
