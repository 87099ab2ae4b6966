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
Dynamic simulation of a manipulator (Craig sec. 6.12); no ROS imports.

``Simulator`` steps one arm at a fixed rate (the simulator node calls it at 1 kHz);
``simulate`` runs a whole trajectory with an optional controller and records it;
``push_beyond_effort_limits`` says whether a push is one the arm's motors could hold;
``ArmDriver`` is what an arm's driver does around the simulator (brakes, protective stop,
stale commands, the wall-clock schedule), as the simulator node presents it;
``SampleStamps`` the stamps of its samples.
"""

from manip_dynamics.simulation.arm_driver import ArmDriver, DriverSettings
from manip_dynamics.simulation.joint_limits import CONTACT_PERIOD, LIMIT_MODES
from manip_dynamics.simulation.pushes import push_beyond_effort_limits, push_joint_torques
from manip_dynamics.simulation.sample_stamps import SampleStamps
from manip_dynamics.simulation.simulator import (
    FIXED_STEP_INTEGRATORS, INTEGRATORS, simulate, SimulationResult, Simulator)

__all__ = ['ArmDriver', 'CONTACT_PERIOD', 'DriverSettings', 'FIXED_STEP_INTEGRATORS',
           'INTEGRATORS', 'LIMIT_MODES', 'push_beyond_effort_limits', 'push_joint_torques',
           'SampleStamps', 'SimulationResult', 'simulate', 'Simulator']
