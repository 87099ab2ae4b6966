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
Start dynamics_node for planners and tools.

    ros2 launch manip_dynamics dynamics.launch.py                 # bundled default arm
    ros2 launch manip_dynamics dynamics.launch.py urdf:=/path/robot.urdf
    ros2 launch manip_dynamics dynamics.launch.py urdf:=''        # read /robot_description

Arguments: ``urdf`` (URDF file read into the robot_description parameter; empty = take the
description from the /robot_description topic that robot_state_publisher publishes),
``config`` (parameter file, default config/dynamics_node.yaml), ``node_name``.
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
    return [Node(
        package=PACKAGE,
        executable='dynamics_node',
        name=LaunchConfiguration('node_name').perform(context),
        output='screen',
        parameters=[LaunchConfiguration('config').perform(context),
                    {'robot_description': _robot_description(context)}],
    )]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and the dynamics_node."""
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value=_share('urdf', 'cobot7.urdf'),
            description='URDF file for robot_description; empty = read /robot_description'),
        DeclareLaunchArgument(
            'config', default_value=_share('config', 'dynamics_node.yaml'),
            description='Parameter file of dynamics_node'),
        DeclareLaunchArgument('node_name', default_value='manip_dynamics',
                              description='Node name (service prefix)'),
        OpaqueFunction(function=_nodes),
    ])
