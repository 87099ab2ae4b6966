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
A live 3D view of the arm in a web browser, without RViz and without ROS.

- :mod:`~manip_dynamics.viewer.urdf_visuals`: the URDF's visual shapes, colours, joint axes
  and mesh files (``xml.etree``; the dynamics model keeps no geometry).
- :mod:`~manip_dynamics.viewer.scene`: link poses, torque arrows, wrench and payload
  markers as numbers (numpy and the model's public kinematics).
- :mod:`~manip_dynamics.viewer.server`: :class:`ArmView`, the viser web server that draws
  them (the only module that imports viser, the optional extra ``[viewer]``).

Used by ``manip-dynamics view ROBOT`` (sliders, no ROS) and by the ``viewer`` node
(``manip_dynamics.ros.nodes.viewer_node``, following /joint_states). No module here imports rclpy.
"""

from manip_dynamics.viewer.scene import payload_radius, RobotScene
from manip_dynamics.viewer.urdf_visuals import parse_visuals, resolve_mesh, UrdfVisuals, Visual

__all__ = ['RobotScene', 'UrdfVisuals', 'Visual', 'parse_visuals', 'payload_radius',
           'resolve_mesh']
