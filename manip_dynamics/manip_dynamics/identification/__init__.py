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
Identification of the dynamic parameters of a manipulator from recorded motion (no ROS).

From a recorded trajectory (rosbag2 or CSV) to a corrected URDF:
:mod:`.regressor` (``tau = Y pi``), :mod:`.base_parameters` (identifiable combinations),
:mod:`.excitation` (Fourier excitation trajectories), :mod:`.data` (reading, filtering,
differentiation), :mod:`.estimation` (least squares and the physically consistent fit),
:mod:`.urdf_writer` (write-back), :mod:`.payload` (payload estimation) and
:mod:`.validation` (torque error report).  docs/IDENTIFICATION.md walks through it.
"""

from manip_dynamics.identification.base_parameters import base_parameters, BaseParameters
from manip_dynamics.identification.regressor import (
    inertial_parameters, model_with_parameters, parameter_names, regressor)

__all__ = ['base_parameters', 'BaseParameters', 'inertial_parameters',
           'model_with_parameters', 'parameter_names', 'regressor']
