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
``glitch_max_acceleration``, declared from :data:`manip_dynamics.ros.parameters.shared.GATE`
(ranges from :mod:`manip_dynamics.safety.plausibility`); the hold time never exceeds the
node's own timeout. Also the commanding nodes' ``stale_action``.
"""

from typing import NamedTuple


from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.parameter_spec import NodeParameters
from manip_dynamics.ros.runtime.startup import StartupError
from manip_dynamics.safety.plausibility import JointStateGate, MAX_VELOCITY


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


def gate_parameters(values: NodeParameters, timeout: float | None = None) -> GateParameters:
    """
    Return the gate's settings from a node's declared ``GATE`` values.

    :param values: The node's parameter values (its table includes ``GATE``).
    :param timeout: The node's stale-input timeout [s]: the hold time may not exceed it.
    :raises StartupError: ``glitch_hold_time`` above ``timeout``.
    """
    if timeout is not None and values.glitch_hold_time > timeout:
        raise StartupError("parameter glitch_hold_time must be in [0, %g] (at most the node's "
                           'timeout), got %g' % (timeout, values.glitch_hold_time))
    return GateParameters(values.glitch_velocity_factor, values.glitch_position_margin,
                          values.glitch_hold_time, values.glitch_max_acceleration)


def held_back_or_implausible(kind: str) -> str:
    """
    Return how a node's log names a joint_states sample the gate did not use.

    A suspect (``kind`` ``'suspect'``: waiting for the next samples, e.g. the first after a
    reset) is "held back"; a sample beyond the absolute bounds is "implausible".
    """
    return 'joint_states sample held back' if kind == 'suspect' else 'implausible joint_states'
