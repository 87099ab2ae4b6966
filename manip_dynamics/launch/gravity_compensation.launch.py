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
Start gravity_compensation_node for an arm driven by ros2_control.

Expects a running controller_manager with joint_state_broadcaster (publishing
/joint_states) and an effort controller (JointGroupEffortController or
ForwardCommandController with the effort interface) named ``controller_name``:

    ros2 launch manip_dynamics gravity_compensation.launch.py
    ros2 launch manip_dynamics gravity_compensation.launch.py urdf:='' effort_scale:=0.5

Arguments: ``urdf`` (URDF file read into robot_description; empty = the /robot_description
topic), ``config`` (parameter file, default config/gravity_compensation.yaml),
``controller_name``, ``effort_scale``, ``ramp_time``. The node publishes one zero command
when joint_states stop and when it shuts down (docs/ROS_API.md).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = 'manip_dynamics'


def _share(*parts: str) -> str:
    """Return a path inside this package's share directory."""
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def _robot_description(context: LaunchContext) -> str:
    """Return the text of the file named by the urdf argument ('' when it is empty)."""
    path = LaunchConfiguration('urdf').perform(context).strip()
    if not path:
        return ''
    with open(path, encoding='utf-8') as stream:
        return stream.read()


def _nodes(context: LaunchContext) -> list:
    """Build the node action once the arguments are known."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)
    return [Node(
        package=PACKAGE,
        executable='gravity_compensation_node',
        name='gravity_compensation',
        output='screen',
        # SIGINT first: the node publishes a zero command before it exits.
        sigterm_timeout='5',
        parameters=[arg('config'),
                    {'robot_description': _robot_description(context),
                     'controller_name': arg('controller_name'),
                     'effort_scale': float(arg('effort_scale')),
                     'ramp_time': float(arg('ramp_time'))}],
    )]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and the gravity_compensation_node."""
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value=_share('urdf', 'cobot7.urdf'),
            description='URDF file for robot_description; empty = read /robot_description'),
        DeclareLaunchArgument(
            'config', default_value=_share('config', 'gravity_compensation.yaml'),
            description='Parameter file of gravity_compensation_node'),
        DeclareLaunchArgument('controller_name', default_value='effort_controller',
                              description='Commands go to /<controller_name>/commands'),
        DeclareLaunchArgument('effort_scale', default_value='1.0',
                              description='Clamp efforts to effort_scale * URDF limit, (0, 1]'),
        DeclareLaunchArgument('ramp_time', default_value='2.0',
                              description='Seconds to ramp the efforts in'),
        OpaqueFunction(function=_nodes),
    ])
