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
The ros2_control bring-up of a simulated arm, held by gravity compensation.

    ros2 launch manip_dynamics control.launch.py
    ros2 launch manip_dynamics control.launch.py rviz:=false robot:=puma560
    ros2 launch manip_dynamics control.launch.py hardware:=mock rviz:=false

The arm is simulated by simulator_node behind the real controller_manager, as
ros2_control_demos and the MuJoCo and Gazebo ros2_control packages run their arms:

* robot_state_publisher (argument ``robot_state_publisher``: true, false, or auto, the
  default: where installed; otherwise description_publisher) publishes /robot_description,
  which controller_manager on Jazzy and newer reads;
* controller_manager's ros2_control_node loads the hardware named by the description's
  ``<ros2_control>`` block (argument ``hardware``: ``topic_based``, the default:
  joint_state_topic_hardware_interface's JointStateTopicSystem, or where only it is
  installed its predecessor topic_based_ros2_control's TopicBasedSystem, which sends the
  effort commands to the simulator on sim/joint_commands and reads its state from
  sim/joint_states; ``mock``:
  mock_components/GenericSystem, a dry run of the controllers without physics and without
  the simulator; ``description``: the block as written, e.g. your arm's driver) with the
  controllers of ``controllers`` (default: written from the description, see
  config/ros2_controllers.yaml) at ``update_rate``;
* spawners activate joint_state_broadcaster (the only publisher of /joint_states) and
  ``effort_controller`` (ForwardCommandController on the effort interface) and load
  joint_trajectory_controller on the effort interface inactive, as the alternative, where
  it is installed;
* feedforward_filter (argument ``feedforward_filter``, where joint_trajectory_controller is
  installed) serves ``/feedforward_filter/follow_joint_trajectory``, the action a planner
  (MoveIt's simple controller manager) sends plans to: checked against the limits, given
  the model's torques as feed-forward and forwarded to joint_trajectory_controller, which
  it holds with gravity torques when it becomes active (docs/ROS2_CONTROL.md: switching);
* simulator_node (``simulator``, hardware topic_based only) is the arm; its brakes hold the
  pose until a command that holds it arrives (the hardware sends zeros until a controller
  writes);
* gravity_compensation_node (argument ``gravity_compensation``) commands
  /effort_controller/commands, or trajectory_controller does (argument
  ``trajectory_controller``, default off; it replaces the compensation), and the
  external-torque observer (argument ``observer``) reads those commands
  (``effort_source: commands``) and flags contacts;
* rviz2 (argument ``rviz``) and viewer_node (argument ``viewer``) as in sim.launch.py.

With ``namespace:=arm1`` every node, controller_manager and its controllers included, runs
under ``/arm1`` (``/arm1/joint_states``, ``/arm1/controller_manager``,
``/arm1/feedforward_filter/follow_joint_trajectory``, ...): two arms in one graph, each
launched with its own namespace. The hardware's topics to the simulator are written into the
description absolute in that namespace (``/arm1/sim/joint_states``), the controllers'
parameters keyed by their full names.

Every node runs on the wall clock. The C++ parts (controller_manager, the controllers, the
hardware plugin, robot_state_publisher and rviz2 when switched on) are checked before
anything starts: a missing one stops the launch with one line naming its apt package. If
controller_manager, the simulator or the commanding node exits, the whole launch stops.
See docs/ROS2_CONTROL.md.
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from manip_dynamics.ros.launch_support.launch_helpers import (
    COMPENSATION_ABOVE_NODES, executable_path, FILTER_ABOVE_NODES, is_true,
    JOINT_DYNAMICS_HELP, joint_dynamics_parameters, LaunchArgumentError, loop_priority,
    MANAGER_ABOVE_NODES, manager_prefix, missing_executables, missing_message,
    MUJOCO_MODEL_HELP, NODE_PRIORITY, observer_stiction, OBSERVER_STICTION_HELP,
    priority_above, robot_description, SIMULATOR_ABOVE_NODES, state_publisher_wanted)
from manip_dynamics.ros.launch_support.launch_nodes import (
    config_file, description_node, in_namespace, launch_namespace, observer_node,
    remove_on_shutdown, rviz_node, stop_launch, trajectory_nodes, viewer_node)
from manip_dynamics.ros.launch_support.ros2_control_setup import (
    check_hardware, command_joint_names, controllers_parameters, EFFORT_CONTROLLER,
    EFFORT_CONTROLLER_PACKAGE,
    HARDWARE_PACKAGES, SIM_JOINT_COMMANDS, SIM_JOINT_STATES, SIMULATED_HARDWARE,
    topic_based_hardware,
    TRAJECTORY_CONTROLLER, with_hardware, write_parameters_file)
from manip_dynamics.ros.parameters.simulator_node import LOOP_TIMEOUT
from manip_dynamics.ros.runtime.names import child_name

PACKAGE = 'manip_dynamics'
#: Relative: the spawners resolve it in their namespace, the launch's.
CONTROLLER_MANAGER = 'controller_manager'
#: Seconds a spawner waits for the controller_manager's services (a loaded 2-core machine
#: took up to 10 s from the launch to the services).
SPAWNER_TIMEOUT = '60'
#: Ramp-in of the compensation on hardware other than the simulator [s]: a real arm's
#: brakes may release before the first command (gravity_compensation.yaml's default).
REAL_ARM_RAMP = 2.0
#: With ``observer_effort_source:=commands`` (hardware without an effort state interface; the
#: default is ``joint_states``: the hardware's own effort state) the observer pairs a joint state
#: with the command sent this many controller_manager update cycles before it: the effort
#: controller writes a command at the next update, the hardware sends it, and the state
#: showing its effect is read an update later. Measured with the simulator behind
#: TopicBasedSystem at 250 Hz, three moves of trajectory_controller, no push: the largest
#: normalized residual (contact at 1.0) was 9.8 to 12.6 with no delay (false contacts in
#: every move), 0.63 to 0.87 with 1 cycle and 0.23 to 0.29 with 2 cycles (joint_states:
#: 0.25 to 0.30).
COMMAND_DELAY_CYCLES = 2.0


def _stop(what: str) -> object:
    """Return the action that ends the launch when a required process exits."""
    return stop_launch(what, 'control.launch.py')


def _spawner(controllers: list[str], inactive: bool = False) -> Node:
    """Return a controller_manager spawner for the controllers (it exits when done)."""
    arguments = controllers + ['--controller-manager', CONTROLLER_MANAGER,
                               '--controller-manager-timeout', SPAWNER_TIMEOUT]
    if inactive:
        arguments.append('--inactive')
    return Node(package='controller_manager', executable='spawner', output='screen',
                arguments=arguments)


def _delay_budget(text: str) -> float | None:
    """Return the gains' delay budget [s] from its argument; None (2 cycles) when empty."""
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise LaunchArgumentError('gains_delay_budget:=%s: expected seconds or nothing'
                                  % text) from None


def _nodes(context: LaunchContext) -> list:
    """Check the arguments and the installed parts, then build the node actions."""
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    def flag(name: str) -> bool:
        return is_true(arg(name), name)
    namespace = launch_namespace(arg('namespace'))
    hardware = arg('hardware').strip()
    try:
        check_hardware(hardware)  # before the installed packages are looked at
    except ValueError as exc:
        raise LaunchArgumentError(str(exc)) from None
    try:
        update_rate = float(arg('update_rate'))
    except ValueError:
        raise LaunchArgumentError('update_rate:=%s: expected a number of Hz'
                                  % arg('update_rate')) from None
    try:
        # one state per update by default: the hardware reads only the newest; at 1000 Hz
        # behind a 500 Hz controller_manager 4.46 the extra states cost that process and the
        # simulator a third of a core on a 2-core machine, and the observer, starved, coasted
        # (docs/ROS2_CONTROL.md, round 21)
        sim_publish_rate = float(arg('sim_publish_rate') or update_rate)
    except ValueError:
        raise LaunchArgumentError('sim_publish_rate:=%s: expected a number of Hz'
                                  % arg('sim_publish_rate')) from None
    rviz = flag('rviz')
    state_publisher = state_publisher_wanted(arg('robot_state_publisher'))
    trajectory_controller = flag('trajectory_controller')
    gravity_compensation = flag('gravity_compensation') and not trajectory_controller
    simulated = hardware in SIMULATED_HARDWARE
    wanted = [('controller_manager', 'ros2_control_node', ''),
              ('controller_manager', 'spawner', ''),
              ('joint_state_broadcaster', '', ''), (EFFORT_CONTROLLER_PACKAGE, '', '')]
    plugin = None
    if simulated:
        # the successor where installed, else the package rosdistro removed (Humble)
        package, plugin = topic_based_hardware(lambda name: bool(executable_path(name, '')))
        wanted.append((package, '', ''))
    elif hardware in HARDWARE_PACKAGES:
        wanted.append((HARDWARE_PACKAGES[hardware], '', ''))
    if state_publisher:
        wanted.append(('robot_state_publisher', 'robot_state_publisher',
                       'robot_state_publisher'))
    if rviz:
        wanted.append(('rviz2', 'rviz2', 'rviz'))
    missing = missing_executables(wanted)
    if missing:
        # raised before any process starts: launch prints the line and exits 1
        raise LaunchArgumentError(missing_message(missing))
    urdf = arg('urdf')
    given_controllers = arg('controllers').strip()
    warnings: list[str] = []
    try:
        description = with_hardware(
            robot_description(urdf, '' if urdf.strip() else arg('robot')), hardware, plugin,
            namespace)
        controllers = given_controllers or write_parameters_file(
            controllers_parameters(description, update_rate,
                                   _delay_budget(arg('gains_delay_budget')), warnings,
                                   namespace))
    except LaunchArgumentError:
        raise
    except ValueError as exc:
        raise LaunchArgumentError(str(exc)) from None
    # the suite's model nodes take the identified joint dynamics; the simulated arm does not
    model = {'robot_description': description,
             **joint_dynamics_parameters(arg('joint_dynamics'))}
    timeout = float(arg('timeout'))
    ramp = arg('ramp_time').strip()
    ramp_time = float(ramp) if ramp else (0.0 if simulated else REAL_ARM_RAMP)
    # every commanding node (and the simulator, the observer) in the effort controller's
    # joint order, whatever arm: the package's YAML files list cobot7's joints
    joints = command_joint_names(description)
    follow = {'use_sim_time': False, **model, 'command_joints': joints}
    priority = loop_priority(arg('thread_priority'))
    loop = {**follow, **priority}
    # controller_manager outranks the nodes it feeds (launch_helpers.manager_prefix)
    prefix, scheduling = manager_prefix(priority['thread_priority'])
    nodes = [LogInfo(msg='control.launch.py: warning: ' + text) for text in warnings]
    nodes.append(LogInfo(msg='control.launch.py: ' + scheduling))
    if not given_controllers:
        # the file written from the description goes with the launch (nothing left in /tmp)
        nodes.append(remove_on_shutdown(controllers))
    nodes += [
        description_node(state_publisher, description, False),
        Node(package='controller_manager', executable='ros2_control_node', output='screen',
             # it reads /robot_description (Jazzy's ros2_control >= 4.8; 4.0 to 4.7 read
             # ~/robot_description: remap that to /robot_description there)
             parameters=[controllers], prefix=prefix, exec_name='ros2_control_node',
             on_exit=_stop('ros2_control_node')),
        _spawner(['joint_state_broadcaster', EFFORT_CONTROLLER]),
    ]
    if executable_path('joint_trajectory_controller', ''):
        nodes.append(_spawner([TRAJECTORY_CONTROLLER], inactive=True))
        if flag('feedforward_filter'):
            # the planners' controller: plans checked, efforts filled, forwarded to JTC;
            # it holds the arm with gravity torques when JTC becomes active
            nodes.append(Node(
                package=PACKAGE, executable='feedforward_filter', name='feedforward_filter',
                output='screen', parameters=[{
                    'use_sim_time': False, **model, 'jtc_name': TRAJECTORY_CONTROLLER,
                    **priority_above(priority, FILTER_ABOVE_NODES)}]))
    if simulated:
        nodes.append(Node(
            package=PACKAGE, executable='simulator_node', name='simulator', output='screen',
            parameters=[arg('simulator_config'), {
                'robot_description': description, 'publish_clock': False,
                'publish_rate': sim_publish_rate, 'engine': SIMULATED_HARDWARE[hardware],
                'mujoco_model': arg('mujoco_model'),
                'real_time_factor': 1.0, 'command_timeout': timeout,
                'brakes': flag('brakes'), 'brake_release': 'holding_command',
                # commands come from the hardware interface only
                'joint_commands_topic': SIM_JOINT_COMMANDS, 'controller_commands': False,
                'command_joints': joints,
                **priority_above(priority, SIMULATOR_ABOVE_NODES)}],
            # only joint_state_broadcaster publishes joint_states (relative: in the namespace)
            remappings=[('joint_states', SIM_JOINT_STATES)],
            on_exit=_stop('simulator_node')))
    commands = child_name(EFFORT_CONTROLLER, 'commands')
    if gravity_compensation:
        nodes.append(Node(
            package=PACKAGE, executable='gravity_compensation_node',
            name='gravity_compensation', output='screen', sigterm_timeout='5',
            parameters=[config_file('gravity_compensation.yaml'),
                        {'ramp_time': ramp_time, 'timeout': timeout,
                         'controller_name': EFFORT_CONTROLLER}, follow,
                        priority_above(priority, COMPENSATION_ABOVE_NODES)],
            on_exit=_stop('gravity_compensation_node')))
    # behind the controller_manager a command acts about 1.5 update cycles after it is sent
    delay = arg('observer_command_delay').strip()
    observer = {'effort_source': arg('observer_effort_source'), 'commands_topic': commands,
                'command_delay': float(delay) if delay else COMMAND_DELAY_CYCLES / update_rate,
                'stiction': observer_stiction(arg('observer_stiction'), hardware)}
    if trajectory_controller:
        nodes += trajectory_nodes(timeout, loop, _stop('trajectory_controller'), observer)
    elif gravity_compensation and flag('observer'):
        nodes.append(observer_node(loop, observer))
    if rviz:
        nodes += rviz_node(False, _stop('rviz2'), description, namespace)
    if flag('viewer'):
        nodes.append(viewer_node(int(arg('viewer_port')), follow))
    return in_namespace(namespace, nodes)


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments and the ros2_control bring-up."""
    return LaunchDescription([
        DeclareLaunchArgument('urdf', default_value='',
                              description='URDF (or xacro) file of the arm; not given = '
                                          'the bundled arm named by robot'),
        DeclareLaunchArgument('robot', default_value='cobot7',
                              description='Bundled arm, used when urdf is not given'),
        DeclareLaunchArgument('hardware', default_value='topic_based',
                              description='topic_based: the simulator behind '
                                          'JointStateTopicSystem (or TopicBasedSystem); '
                                          'mujoco: the same with MuJoCo as the arm '
                                          '(mujoco_model); mock: GenericSystem, no '
                                          'physics; description: the <ros2_control> block '
                                          'as written (a real driver)'),
        DeclareLaunchArgument('mujoco_model', default_value='',
                              description=MUJOCO_MODEL_HELP),
        DeclareLaunchArgument('joint_dynamics', default_value='',
                              description=JOINT_DYNAMICS_HELP),
        DeclareLaunchArgument('controllers', default_value='',
                              description='controller_manager parameter file; empty = '
                                          'written from the description'),
        DeclareLaunchArgument('update_rate', default_value='500',
                              description='controller_manager update rate [Hz] of the '
                                          'written parameter file (500: the JTC gains '
                                          'written for cobot7 outweigh gravity from there)'),
        DeclareLaunchArgument('gravity_compensation', default_value='true',
                              description='Start gravity_compensation_node, commanding '
                                          '/effort_controller/commands'),
        DeclareLaunchArgument('trajectory_controller', default_value='false',
                              description='Start trajectory_controller instead of the '
                                          'compensation'),
        DeclareLaunchArgument('gains_delay_budget', default_value='',
                              description='Measurement age [s] the written JTC gains stay '
                              'stable at, twice over (design_joint_gains); empty = 2 update '
                              'cycles'),
        DeclareLaunchArgument('feedforward_filter', default_value='true',
                              description='Start feedforward_filter (the FollowJointTrajectory '
                              'action for planners, in front of joint_trajectory_controller)'),
        DeclareLaunchArgument('observer', default_value='true',
                              description='Start external_torque_observer (contact flag)'),
        DeclareLaunchArgument('observer_effort_source', default_value='joint_states',
                              description='Applied torque of the observer: joint_states '
                                          '(the effort state interface: the torque the '
                                          'hardware applied or measured, paired with the '
                                          'state it belongs to) or commands (the effort '
                                          "controller's input, for hardware without an "
                                          'effort state)'),
        DeclareLaunchArgument('observer_stiction', default_value='',
                              description=OBSERVER_STICTION_HELP),
        DeclareLaunchArgument('observer_command_delay', default_value='',
                              description='Observer command_delay [s]; empty = %g update '
                                          'cycles' % COMMAND_DELAY_CYCLES),
        DeclareLaunchArgument('ramp_time', default_value='',
                              description='Ramp-in of the compensation [s]; empty = 0 with '
                                          'the simulator, %g otherwise' % REAL_ARM_RAMP),
        DeclareLaunchArgument('rviz', default_value='true', description='Start rviz2'),
        DeclareLaunchArgument('robot_state_publisher', default_value='auto',
                              description='Start robot_state_publisher: true, false, or '
                                          'auto (where installed); otherwise '
                                          'description_publisher gives /robot_description'),
        DeclareLaunchArgument('viewer', default_value='false',
                              description='Start viewer_node: the arm in a web browser'),
        DeclareLaunchArgument('viewer_port', default_value='8080',
                              description='Port of the viewer page on 127.0.0.1'),
        DeclareLaunchArgument('sim_publish_rate', default_value='',
                              description='Simulator state rate [Hz]; empty = update_rate (the '
                                          'topic-based hardware reads the newest state at each '
                                          'update)'),
        DeclareLaunchArgument('brakes', default_value='true',
                              description='Simulator holds the arm until a holding command'),
        DeclareLaunchArgument('timeout', default_value=str(LOOP_TIMEOUT),
                              description='Simulator command_timeout and compensation '
                                          'timeout [s] (simulator_node LOOP_TIMEOUT)'),
        DeclareLaunchArgument('thread_priority', default_value=str(NODE_PRIORITY),
                              description='SCHED_FIFO priority (1 to 99) of the commanding '
                                          'nodes and the observer; feedforward_filter runs '
                                          '%d above them, the simulator (the arm) %d, '
                                          'controller_manager %d '
                                          'them, its update loop at its own '
                                          'thread_priority (50); needs root or an rtprio '
                                          'limit (a warning and the normal scheduler where '
                                          'refused); 0: the normal scheduler' % (
                                              FILTER_ABOVE_NODES, SIMULATOR_ABOVE_NODES,
                                              MANAGER_ABOVE_NODES)),
        DeclareLaunchArgument('simulator_config', default_value=config_file('simulator.yaml'),
                              description='Parameter file of simulator_node'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of every node, controller_manager '
                                          'and its controllers included (two arms in one '
                                          'graph, each in its own); empty: the root one'),
        OpaqueFunction(function=_nodes),
    ])
