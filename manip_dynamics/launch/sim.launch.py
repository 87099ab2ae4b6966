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
    ros2 launch manip_dynamics sim.launch.py rviz:=false robot_state_publisher:=false
    ros2 launch manip_dynamics sim.launch.py urdf:=/path/to/arm.urdf gravity_compensation:=false
    ros2 launch manip_dynamics sim.launch.py hardware:=mujoco mujoco_model:=/path/to/arm.xml

Nodes: robot_state_publisher (publishes /robot_description and TF; argument
``robot_state_publisher``: true, false, or auto, the default: where installed; when it does
not run, description_publisher publishes /robot_description, without TF), simulator_node
(``simulator``), dynamics_node
(``manip_dynamics``), gravity_compensation_node (``gravity_compensation``, argument
``gravity_compensation``), trajectory_controller and external_torque_observer (argument
``trajectory_controller``, default off; then they replace the compensation), rviz2
(argument ``rviz``), viewer_node (``viewer``, argument
``viewer``, default off: the arm in a web browser on 127.0.0.1:``viewer_port``). The
description comes from ``urdf`` (URDF or xacro file) or else ``robot`` (a bundled arm,
default cobot7); every node gets the same text as its robot_description parameter, so none
waits for another. rviz2 and
robot_state_publisher are optional: when one is switched on but not installed the launch
stops before starting anything and says which argument turns it off. The simulator holds the
arm (brakes) until the compensation's first command arrives, so it starts still. If the
simulator, the dynamics node, the compensation or RViz exits, the whole launch stops: no
process is left behind. With ``use_sim_time`` (default true) the simulator publishes /clock
and the other nodes follow it. With ``namespace:=arm1`` every node runs under ``/arm1``
(``/arm1/joint_states``, ``/arm1/simulator/apply_wrench``, ...): two arms side by side, each
launched with its own namespace and ``use_sim_time:=false`` (``/clock`` is one per graph).
See docs/SIMULATOR.md.
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from manip_dynamics.ros.launch_support.launch_helpers import (
    is_true, JOINT_DYNAMICS_HELP, joint_dynamics_parameters, LaunchArgumentError,
    loop_priority, missing_executables, missing_message,
    MUJOCO_MODEL_HELP, NODE_PRIORITY, observer_stiction, OBSERVER_STICTION_HELP,
    priority_above, robot_description, SIM_HARDWARE, SIMULATOR_ABOVE_NODES,
    state_publisher_wanted)
from manip_dynamics.ros.launch_support.launch_nodes import (
    config_file, description_node, in_namespace, launch_namespace, rviz_node, stop_launch,
    trajectory_nodes, viewer_node)
from manip_dynamics.ros.launch_support.ros2_control_setup import command_joint_names
from manip_dynamics.ros.parameters.simulator_node import LOOP_TIMEOUT

PACKAGE = 'manip_dynamics'


def _stop(what: str) -> object:
    """Return the action that ends the launch when a required node exits."""
    return stop_launch(what, 'sim.launch.py')


def _nodes(context: LaunchContext) -> list:
    """Check the optional executables, then build the node actions."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    def flag(name: str) -> bool:
        return is_true(arg(name), name)
    rviz = flag('rviz')
    state_publisher = state_publisher_wanted(arg('robot_state_publisher'))
    trajectory_controller = flag('trajectory_controller')
    # one controller commands the arm: the trajectory controller holds it when it runs
    gravity_compensation = flag('gravity_compensation') and not trajectory_controller
    wanted = []
    if state_publisher:
        wanted.append(('robot_state_publisher', 'robot_state_publisher',
                       'robot_state_publisher'))
    if rviz:
        wanted.append(('rviz2', 'rviz2', 'rviz'))
    missing = missing_executables(wanted)
    if missing:
        # raised before any process starts: launch prints the line and exits 1
        raise LaunchArgumentError(missing_message(missing))
    namespace = launch_namespace(arg('namespace'))
    hardware = arg('hardware').strip()
    if hardware not in SIM_HARDWARE:
        raise LaunchArgumentError('hardware:=%s: expected one of %s' % (
            hardware, ', '.join(SIM_HARDWARE)))
    stiction = observer_stiction(arg('observer_stiction'), hardware)
    urdf = arg('urdf')
    description = robot_description(urdf, '' if urdf.strip() else arg('robot'))
    sim_time = flag('use_sim_time')
    timeout = float(arg('timeout'))
    # the arm's joints for every Float64MultiArray command (the YAML files list cobot7's)
    try:
        joints = command_joint_names(description)
    except ValueError as exc:
        raise LaunchArgumentError('%s: %s' % (urdf or 'robot:=%s' % arg('robot'), exc)) from None
    # the suite's model nodes take the identified joint dynamics; the simulated arm does not
    follow = {'use_sim_time': sim_time, 'robot_description': description,
              **joint_dynamics_parameters(arg('joint_dynamics'))}
    loop = loop_priority(arg('thread_priority'))
    commanding = {**follow, 'command_joints': joints, **loop}
    nodes = [
        description_node(state_publisher, description, sim_time),
        # The simulator never follows /clock: it publishes it.
        Node(package=PACKAGE, executable='simulator_node', name='simulator', output='screen',
             parameters=[arg('simulator_config'),
                         {'robot_description': description, 'publish_clock': sim_time,
                          'command_joints': joints,
                          'real_time_factor': float(arg('real_time_factor')),
                          'command_timeout': timeout, 'brakes': flag('brakes'),
                          'lockstep': flag('lockstep'), 'engine': SIM_HARDWARE[hardware],
                          'mujoco_model': arg('mujoco_model'),
                          **priority_above(loop, SIMULATOR_ABOVE_NODES)}],
             on_exit=_stop('simulator_node')),
        Node(package=PACKAGE, executable='dynamics_node', name='manip_dynamics',
             output='screen', parameters=[config_file('dynamics_node.yaml'), follow],
             on_exit=_stop('dynamics_node')),
    ]
    if gravity_compensation:
        nodes.append(Node(
            package=PACKAGE, executable='gravity_compensation_node',
            name='gravity_compensation', output='screen', sigterm_timeout='5',
            # A simulated arm needs no ramp-in (a real one does: keep the 2 s default).
            parameters=[config_file('gravity_compensation.yaml'),
                        {'ramp_time': 0.0, 'timeout': timeout}, commanding],
            on_exit=_stop('gravity_compensation_node')))
    if trajectory_controller:
        # computed-torque tracking of ~/joint_trajectory, collision reaction with the
        # observer's contact flag; it holds the arm between trajectories
        nodes += trajectory_nodes(timeout, commanding, _stop('trajectory_controller'),
                                  {'stiction': stiction})
    if rviz:
        nodes += rviz_node(sim_time, _stop('rviz2'), description, namespace)
    if flag('viewer'):
        # The arm in a web browser (no RViz needed): http://127.0.0.1:<viewer_port>
        nodes.append(viewer_node(int(arg('viewer_port')), follow))
    return in_namespace(namespace, nodes)


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and the demo's nodes."""
    return LaunchDescription([
        DeclareLaunchArgument('urdf', default_value='',
                              description='URDF (or xacro) file of the arm; not given = '
                                          'the bundled arm named by robot'),
        DeclareLaunchArgument('robot', default_value='cobot7',
                              description='Bundled arm, used when urdf is not given'),
        DeclareLaunchArgument('hardware', default_value='simulator',
                              description="The arm: simulator (the suite's own simulator of "
                                          'the description) or mujoco (MuJoCo runs '
                                          'mujoco_model as the arm)'),
        DeclareLaunchArgument('joint_dynamics', default_value='',
                              description=JOINT_DYNAMICS_HELP),
        DeclareLaunchArgument('mujoco_model', default_value='',
                              description=MUJOCO_MODEL_HELP),
        DeclareLaunchArgument('observer_stiction', default_value='',
                              description=OBSERVER_STICTION_HELP),
        DeclareLaunchArgument('rviz', default_value='true', description='Start rviz2'),
        DeclareLaunchArgument('robot_state_publisher', default_value='auto',
                              description='Start robot_state_publisher (TF for RViz): true, '
                                          'false, or auto (where installed); otherwise '
                                          'description_publisher gives /robot_description'),
        DeclareLaunchArgument('gravity_compensation', default_value='true',
                              description='Start gravity_compensation_node'),
        DeclareLaunchArgument('trajectory_controller', default_value='false',
                              description='Start trajectory_controller (and the observer for '
                                          'its collision reaction) instead of the gravity '
                                          'compensation: send it trajectories on '
                                          '/trajectory_controller/joint_trajectory'),
        DeclareLaunchArgument('viewer', default_value='false',
                              description='Start viewer_node: the arm in a web browser'),
        DeclareLaunchArgument('viewer_port', default_value='8080',
                              description='Port of the viewer page on 127.0.0.1'),
        DeclareLaunchArgument('brakes', default_value='true',
                              description='Simulator holds the arm until the first command; '
                                          'false: it falls from the start'),
        DeclareLaunchArgument('lockstep', default_value='true',
                              description='Simulator advances only on commands (one publish '
                                          'period per command, no catch-up burst); false: '
                                          'wall-clock time with catch-up'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='Simulator publishes /clock; the others follow it'),
        DeclareLaunchArgument('real_time_factor', default_value='1.0',
                              description='Simulated / wall time; 0 = as fast as possible'),
        DeclareLaunchArgument('timeout', default_value=str(LOOP_TIMEOUT),
                              description='Simulator command_timeout and compensation '
                                          'timeout [s] (simulator_node LOOP_TIMEOUT)'),
        DeclareLaunchArgument('thread_priority', default_value=str(NODE_PRIORITY),
                              description='SCHED_FIFO priority (1 to 99) of the commanding '
                                          'nodes and the observer, the simulator (the arm) '
                                          '%d above them (as in control.launch.py); needs '
                                          'root or an rtprio limit (a warning and the '
                                          'normal scheduler where refused); 0: the normal '
                                          'scheduler' % SIMULATOR_ABOVE_NODES),
        DeclareLaunchArgument('simulator_config',
                              default_value=config_file('simulator.yaml'),
                              description='Parameter file of simulator_node'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of every node (their topics, '
                                          'services and actions under it: two arms in one '
                                          'graph, each in its own); empty: the root one'),
        OpaqueFunction(function=_nodes),
    ])
