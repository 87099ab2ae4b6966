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
Start the simulation demo: the default arm simulated, held by gravity compensation, in RViz.

    ros2 launch manip_dynamics sim.launch.py
    ros2 launch manip_dynamics sim.launch.py rviz:=false gravity_compensation:=false
    ros2 launch manip_dynamics sim.launch.py urdf:=/path/to/arm.urdf

Nodes: robot_state_publisher (publishes /robot_description and TF), simulator_node
(``simulator``), dynamics_node (``manip_dynamics``), gravity_compensation_node
(``gravity_compensation``, argument ``gravity_compensation``), rviz2 (argument ``rviz``).
The three manip_dynamics nodes read the URDF from /robot_description. With ``use_sim_time``
(default true) the simulator publishes /clock and the other nodes follow it. The simulator
starts at once, so the arm sags a little until the compensation's first command arrives;
``ros2 service call /simulator/reset std_srvs/srv/Trigger`` releases it again at rest with
the compensation running. See docs/SIMULATOR.md.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = 'manip_dynamics'


def _share(*parts: str) -> str:
    """Return a path inside this package's share directory."""
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def _read_urdf(path: str) -> str:
    """Return the URDF text of a .urdf file, or of a .xacro file expanded by xacro."""
    if path.endswith('.xacro'):
        import xacro
        return xacro.process_file(path).toxml()
    with open(path, encoding='utf-8') as stream:
        return stream.read()


def _nodes(context: LaunchContext) -> list:
    """Build the node actions once the arguments are known."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)
    sim_time = arg('use_sim_time').lower() in ('true', '1', 'yes')
    follow = {'use_sim_time': sim_time}
    return [
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             name='robot_state_publisher', output='screen',
             parameters=[{'robot_description': _read_urdf(arg('urdf'))}, follow]),
        # The simulator never follows /clock: it publishes it.
        Node(package=PACKAGE, executable='simulator_node', name='simulator', output='screen',
             parameters=[arg('simulator_config'),
                         {'publish_clock': sim_time,
                          'real_time_factor': float(arg('real_time_factor'))}]),
        Node(package=PACKAGE, executable='dynamics_node', name='manip_dynamics',
             output='screen', parameters=[_share('config', 'dynamics_node.yaml'), follow]),
        Node(package=PACKAGE, executable='gravity_compensation_node',
             name='gravity_compensation', output='screen', sigterm_timeout='5',
             condition=IfCondition(LaunchConfiguration('gravity_compensation')),
             # A simulated arm needs no ramp-in (a real one does: keep the 2 s default).
             parameters=[_share('config', 'gravity_compensation.yaml'),
                         {'ramp_time': 0.0}, follow]),
        Node(package='rviz2', executable='rviz2', name='rviz2', output='log',
             arguments=['-d', _share('config', 'sim.rviz')],
             condition=IfCondition(LaunchConfiguration('rviz')), parameters=[follow]),
    ]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and the demo's nodes."""
    return LaunchDescription([
        DeclareLaunchArgument('urdf', default_value=_share('urdf', 'cobot7.urdf'),
                              description='URDF (or xacro) file of the arm'),
        DeclareLaunchArgument('rviz', default_value='true', description='Start rviz2'),
        DeclareLaunchArgument('gravity_compensation', default_value='true',
                              description='Start gravity_compensation_node'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='Simulator publishes /clock; the others follow it'),
        DeclareLaunchArgument('real_time_factor', default_value='1.0',
                              description='Simulated / wall time; 0 = as fast as possible'),
        DeclareLaunchArgument('simulator_config',
                              default_value=_share('config', 'simulator.yaml'),
                              description='Parameter file of simulator_node'),
        OpaqueFunction(function=_nodes),
    ])
