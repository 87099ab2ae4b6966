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
ROS 2 adapters of the manip_dynamics library: the only subpackage that imports rclpy.

* :mod:`manip_dynamics.ros.nodes`: the nodes, one module each (dynamics services and torque
  topics, simulator, gravity compensation, external-torque observer, trajectory controller,
  viewer, description publisher).
* :mod:`manip_dynamics.ros.runtime`: what the nodes run on (start-up and shutdown,
  parameters, the robot description, message conversions, node processes).
* :mod:`manip_dynamics.ros.launch_support`: what the launch files use (arguments, node
  descriptions, the ros2_control bring-up).
* :mod:`manip_dynamics.ros.client`: the Python client a planner script imports.
* :mod:`manip_dynamics.ros.testing`: stand-ins for what CI cannot build (test support).

Nodes are thin: every equation lives in :class:`manip_dynamics.RobotModel`. The public ROS
interface is documented in docs/ROS_API.md.
"""
