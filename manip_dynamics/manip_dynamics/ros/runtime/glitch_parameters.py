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
The parameters of the plausibility gate, shared by every node that reads joint states.

``glitch_velocity_factor``, ``glitch_position_margin``, ``glitch_hold_time`` and
``glitch_max_acceleration`` (ranges in docs/ROS_API.md and
:mod:`manip_dynamics.safety.plausibility`); the hold time never exceeds the node's own
timeout. Also the commanding nodes' ``stale_action``.
"""

from typing import NamedTuple

from rclpy.node import Node

from manip_dynamics.control.gravity_compensation import STALE_ACTIONS
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.robot_description import param_range, param_string, StartupError
from manip_dynamics.safety.plausibility import (
    DEFAULT_HOLD_TIME, DEFAULT_MAX_ACCELERATION, DEFAULT_POSITION_MARGIN,
    DEFAULT_VELOCITY_FACTOR, HOLD_TIME_RANGE, JointStateGate, MAX_ACCELERATION_RANGE,
    MAX_VELOCITY, POSITION_MARGIN_RANGE, VELOCITY_FACTOR_RANGE)
from manip_dynamics.safety.ranges import Range


class GateParameters(NamedTuple):
    """The gate's settings as the node's parameters give them."""

    velocity_factor: float
    position_margin: float
    hold_time: float
    max_acceleration: float

    def gate(self, model: RobotModel) -> JointStateGate:
        """Return a new gate for ``model`` with these settings."""
        return JointStateGate(model, velocity_factor=self.velocity_factor,
                              position_margin=self.position_margin, hold_time=self.hold_time,
                              max_acceleration=self.max_acceleration)

    def text(self) -> str:
        """Return the settings as the nodes' start-up log shows them."""
        return ('velocity above max(%g x limit, %g), position %g outside the limits, or '
                'inconsistent with the last good sample (velocity steps above %g/s^2 wait '
                'for the next sample); hold %g s' % (
                    self.velocity_factor, MAX_VELOCITY, self.position_margin,
                    self.max_acceleration, self.hold_time))


def declare_gate_parameters(node: Node, timeout: float | None = None) -> GateParameters:
    """
    Declare the gate's three parameters on ``node`` and return their values.

    :param node: The node.
    :param timeout: The node's stale-input timeout [s]: the hold time may not exceed it.
    :raises StartupError: A value out of its range.
    """
    hold_high = HOLD_TIME_RANGE.high if timeout is None else min(HOLD_TIME_RANGE.high, timeout)
    return GateParameters(
        param_range(node, 'glitch_velocity_factor', DEFAULT_VELOCITY_FACTOR,
                    'Reject joint_states whose velocity exceeds this x the URDF velocity '
                    'limit (and %g): no real motion is that fast' % MAX_VELOCITY,
                    VELOCITY_FACTOR_RANGE),
        param_range(node, 'glitch_position_margin', DEFAULT_POSITION_MARGIN,
                    'Reject joint_states whose position is farther than this outside the '
                    'URDF limits [rad or m]', POSITION_MARGIN_RANGE),
        param_range(node, 'glitch_hold_time', min(DEFAULT_HOLD_TIME, hold_high),
                    'Keep the last good joint state this long over rejected ones, then stop '
                    '[s]', Range(HOLD_TIME_RANGE.low, hold_high)),
        param_range(node, 'glitch_max_acceleration', DEFAULT_MAX_ACCELERATION,
                    'A velocity step faster than this [rad/s^2 or m/s^2] waits for the next '
                    'sample to confirm it (a glitch is contradicted by it)',
                    MAX_ACCELERATION_RANGE))


def declare_stale_action(node: Node) -> str:
    """
    Declare ``stale_action`` on a commanding node and return it (``hold`` or ``zero``).

    What the node sends once when joint_states stop coming: gravity at the last good pose
    (a bare effort-controlled arm falls on zero torque) or zero (arms that add gravity
    themselves); docs/TUTORIAL_REAL_ARM.md argues the choice per driver.

    :raises StartupError: Any other value.
    """
    action = param_string(node, 'stale_action', 'hold', 'When joint_states stop coming: '
                          'hold (gravity at the last good pose, for bare effort-controlled '
                          'arms) or zero (for arms that add gravity themselves)')
    if action not in STALE_ACTIONS:
        raise StartupError('parameter stale_action must be one of %s, got %r'
                           % (STALE_ACTIONS, action))
    return action


def held_back_or_implausible(kind: str) -> str:
    """
    Return how a node's log names a joint_states sample the gate did not use.

    A suspect (``kind`` ``'suspect'``: waiting for the next samples, e.g. the first after a
    reset) is "held back"; a sample beyond the absolute bounds is "implausible".
    """
    return 'joint_states sample held back' if kind == 'suspect' else 'implausible joint_states'
