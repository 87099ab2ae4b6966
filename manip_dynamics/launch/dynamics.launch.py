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

    ros2 launch manip_dynamics dynamics.launch.py                 # reads /robot_description
    ros2 launch manip_dynamics dynamics.launch.py robot:=cobot7   # a bundled arm
    ros2 launch manip_dynamics dynamics.launch.py urdf:=/path/robot.urdf   # or .urdf.xacro

Arguments: ``urdf`` (a URDF or xacro file read into the robot_description parameter),
``robot`` (a bundled arm by name); with neither, the node takes the description from the
/robot_description topic that robot_state_publisher publishes (transient local), as the
rest of the system does. ``config`` (parameter file, default config/dynamics_node.yaml),
``node_name``. The launch ends when the node exits.
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from manip_dynamics.ros.launch_support.launch_helpers import robot_description
from manip_dynamics.ros.launch_support.launch_nodes import (
    config_file, in_namespace, launch_namespace, PACKAGE)


def _nodes(context: LaunchContext) -> list:
    """Build the node action once the arguments are known."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)
    description = robot_description(arg('urdf'), arg('robot'))
    parameters = [arg('config')]
    if description:
        parameters.append({'robot_description': description})
    return in_namespace(launch_namespace(arg('namespace')), [Node(
        package=PACKAGE,
        executable='dynamics_node',
        name=arg('node_name'),
        output='screen',
        parameters=parameters,
    )])


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and the dynamics_node."""
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value='',
            description='URDF or xacro file for robot_description; not given = read the '
                        '/robot_description topic'),
        DeclareLaunchArgument(
            'robot', default_value='',
            description='A bundled arm by name (e.g. cobot7) instead of urdf'),
        DeclareLaunchArgument(
            'config', default_value=config_file('dynamics_node.yaml'),
            description='Parameter file of dynamics_node'),
        DeclareLaunchArgument('node_name', default_value='manip_dynamics',
                              description='Node name (service prefix)'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of the node (its topics and '
                                          'services under it); empty: the root one'),
        OpaqueFunction(function=_nodes),
    ])
