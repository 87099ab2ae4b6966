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

    ros2 launch manip_dynamics gravity_compensation.launch.py effort_scale:=0.3
    ros2 launch manip_dynamics gravity_compensation.launch.py robot:=cobot7 ramp_time:=5.0

Arguments: ``urdf`` (a URDF or xacro file read into robot_description) or ``robot`` (a
bundled arm by name); with neither, the node takes the description from /robot_description
(what robot_state_publisher publishes, so it uses the same description as the rest of the
system). ``config`` (parameter file, default config/gravity_compensation.yaml),
``controller_name``, ``effort_scale``, ``ramp_time``. The node publishes one zero command
when joint_states stop and when it shuts down (docs/ROS_API.md). If the node dies, the
launch stops: on a real arm nothing should keep running as if it were compensated.
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from manip_dynamics.ros.launch_support.launch_helpers import robot_description
from manip_dynamics.ros.launch_support.launch_nodes import (
    config_file, in_namespace, launch_namespace)
from manip_dynamics.ros.launch_support.ros2_control_setup import command_joint_names

PACKAGE = 'manip_dynamics'


DEFAULT_CONFIG = config_file('gravity_compensation.yaml')


def _nodes(context: LaunchContext) -> list:
    """Build the node action once the arguments are known."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)
    overrides = {'controller_name': arg('controller_name'),
                 'effort_scale': float(arg('effort_scale')),
                 'ramp_time': float(arg('ramp_time'))}
    description = robot_description(arg('urdf'), arg('robot'))
    if description:
        overrides['robot_description'] = description
        if arg('config') == DEFAULT_CONFIG:
            # the default file lists cobot7's joints; another arm's come from its description
            overrides['command_joints'] = command_joint_names(description)
    return in_namespace(launch_namespace(arg('namespace')), [Node(
        package=PACKAGE,
        executable='gravity_compensation_node',
        name='gravity_compensation',
        output='screen',
        # SIGINT first: the node publishes a zero command before it exits.
        sigterm_timeout='5',
        parameters=[arg('config'), overrides],
        on_exit=Shutdown(reason='gravity_compensation_node exited: the arm is no longer '
                                'compensated, stopping the launch'),
    )])


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and the gravity_compensation_node."""
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value='',
            description='URDF or xacro file for robot_description; not given = read the '
                        '/robot_description topic'),
        DeclareLaunchArgument(
            'robot', default_value='',
            description='A bundled arm by name (e.g. cobot7) instead of urdf'),
        DeclareLaunchArgument(
            'config', default_value=DEFAULT_CONFIG,
            description='Parameter file of gravity_compensation_node'),
        DeclareLaunchArgument('controller_name', default_value='effort_controller',
                              description='Commands go to /<controller_name>/commands'),
        DeclareLaunchArgument('effort_scale', default_value='1.0',
                              description='Clamp efforts to effort_scale * URDF limit, (0, 1]'),
        DeclareLaunchArgument('ramp_time', default_value='2.0',
                              description='Seconds to ramp the efforts in'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of the node (its topics and '
                                          'services under it); empty: the root one'),
        OpaqueFunction(function=_nodes),
    ])
