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
The ros2_control side of a description: its ``<ros2_control>`` block and the controllers.

Plain functions on URDF text, without ROS or launch imports (unit-tested without a ROS
install), used by ``launch/control.launch.py`` and simulator_node:

* :func:`ros2_control_joints` reads the joints of the ``<ros2_control type="system">``
  blocks (interfaces, ``initial_value`` of the position state);
* :func:`ros2_control_block` writes such a block for a description that has none: every
  actuated joint with an effort command interface limited to the URDF effort limit and
  position, velocity and effort state interfaces;
* :func:`with_hardware` sets the hardware plugin of the description: ``topic_based``
  (joint_state_topic_hardware_interface's JointStateTopicSystem, or where only that is
  installed its predecessor topic_based_ros2_control's TopicBasedSystem, on
  :data:`SIM_JOINT_STATES` and :data:`SIM_JOINT_COMMANDS`, where simulator_node is the arm;
  :func:`topic_based_hardware` chooses), ``mock``
  (mock_components/GenericSystem, no physics) or ``description`` (as written: a real driver);
* :func:`controllers_parameters` gives the controller_manager parameter file for it
  (joint_state_broadcaster, ``effort_controller`` = ForwardCommandController on the effort
  interface, and
  ``joint_trajectory_controller`` on the effort interface as an inactive alternative), and
  :func:`write_parameters_file` writes it as YAML.
"""

from dataclasses import dataclass
import math
import os
import re
import tempfile
from typing import Any, Callable
import xml.etree.ElementTree as ElementTree

import numpy as np
from numpy.typing import NDArray
import yaml

from manip_dynamics.model.urdf_loader import MOVING_JOINT_TYPES, read_robot_element
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.names import namespaced_name

FloatArray = NDArray[np.float64]

#: Where simulator_node publishes its joint state when a controller_manager stands in front
#: of it: only the joint_state_broadcaster publishes joint_states then. Relative, in the
#: launch's namespace; the hardware's parameters name it absolute (:func:`with_hardware`).
SIM_JOINT_STATES = 'sim/joint_states'
#: Where TopicBasedSystem publishes the effort commands for simulator_node
#: (sensor_msgs/JointState, effort field, keyed by name); relative as SIM_JOINT_STATES.
SIM_JOINT_COMMANDS = 'sim/joint_commands'
#: The topic-based hardware, (package, plugin), in order of preference. rosdistro removed
#: topic_based_ros2_control from Jazzy, Kilted and Rolling on 2025-10-09 (its successor,
#: joint_state_topic_hardware_interface, still loads the old plugin name as a deprecated
#: alias); Humble and hand-built workspaces may still have only the old package.
TOPIC_BASED_HARDWARE = (
    ('joint_state_topic_hardware_interface',
     'joint_state_topic_hardware_interface/JointStateTopicSystem'),
    ('topic_based_ros2_control', 'topic_based_ros2_control/TopicBasedSystem'),
)
#: The ``hardware`` launch argument's values -> the default plugin (None: the description's
#: own; ``topic_based``: see :func:`topic_based_hardware`).
HARDWARE_PLUGINS = {
    'topic_based': TOPIC_BASED_HARDWARE[0][1],
    'mujoco': TOPIC_BASED_HARDWARE[0][1],
    'mock': 'mock_components/GenericSystem',
    'description': None,
}
#: The ros2_control packages that provide each hardware plugin (checked before a launch;
#: ``topic_based``: the preferred one, see :func:`topic_based_hardware`).
HARDWARE_PACKAGES = {'topic_based': TOPIC_BASED_HARDWARE[0][0],
                     'mujoco': TOPIC_BASED_HARDWARE[0][0], 'mock': 'hardware_interface'}
#: The ``hardware`` choices where simulator_node is the arm behind the topic-based hardware,
#: and the physics it runs (simulator_node's ``engine``): the suite's own simulator, or MuJoCo.
SIMULATED_HARDWARE = {'topic_based': 'suite', 'mujoco': 'mujoco'}
#: Name of the effort controller gravity_compensation_node commands.
EFFORT_CONTROLLER = 'effort_controller'
#: Its type: ForwardCommandController with ``interface_name: effort`` takes the same
#: std_msgs/Float64MultiArray on ``/<name>/commands`` as effort_controllers'
#: JointGroupEffortController did, and exists on every distribution (effort_controllers is
#: deprecated, ros2_controllers #1913, and gone in Rolling and Lyrical, #2016). Unlike it,
#: it writes no zeros when deactivated: the last command stays until the next controller
#: writes.
EFFORT_CONTROLLER_TYPE = 'forward_command_controller/ForwardCommandController'
#: The package that provides it (checked before a launch).
EFFORT_CONTROLLER_PACKAGE = 'forward_command_controller'
#: Name of the inactive alternative: joint_trajectory_controller on the effort interface.
TRAJECTORY_CONTROLLER = 'joint_trajectory_controller'
#: Stiffness and damping written for a block joint the dynamics model does not move (a
#: joint outside the modelled chain) [N m/rad, N m s/rad]: small, it carries no load.
UNMODELLED_GAINS = {'p': 1.0, 'd': 0.1}

#: Default delay budget of the JTC gains control.launch.py writes [update cycles]: one cycle
#: for the hardware's read and the command's write, one for the topic hops and jitter.
DELAY_BUDGET_CYCLES = 2.0


@dataclass(frozen=True)
class Ros2ControlJoint:
    """One joint of a ``<ros2_control>`` block."""

    #: The joint's name (a URDF joint).
    name: str
    #: Command interface names, in block order, e.g. ``('effort',)``.
    command_interfaces: tuple[str, ...]
    #: State interface names, in block order, e.g. ``('position', 'velocity', 'effort')``.
    state_interfaces: tuple[str, ...]
    #: ``initial_value`` of the position state interface [rad or m], or None.
    initial_position: float | None


def _parse(urdf_xml: str) -> ElementTree.Element:
    """
    Parse URDF text.

    :param urdf_xml: The URDF text.
    :return: The root element.
    :raises ValueError: Not XML, or the root is not ``<robot>``.
    """
    return read_robot_element(urdf_xml)


def _is_system(block: ElementTree.Element) -> bool:
    """Return whether a ``<ros2_control>`` element is a system (the default type)."""
    return (block.get('type') or 'system').strip().lower() == 'system'


def _initial_position(joint: ElementTree.Element) -> float | None:
    """Return the finite ``initial_value`` of a joint's position state interface, or None."""
    for state in joint.findall('state_interface'):
        if state.get('name') != 'position':
            continue
        for param in state.findall('param'):
            if param.get('name') != 'initial_value':
                continue
            try:
                value = float((param.text or '').strip())
            except ValueError:
                return None
            return value if math.isfinite(value) else None
    return None


def ros2_control_joints(urdf_xml: str) -> list[Ros2ControlJoint]:
    """
    Return the joints of the description's ``<ros2_control>`` system blocks.

    :param urdf_xml: The URDF text.
    :return: The joints in block order (several blocks: one after the other); empty when
        the description has no system block.
    :raises ValueError: The text is not a URDF.
    """
    joints = []
    for block in _parse(urdf_xml).findall('ros2_control'):
        if not _is_system(block):
            continue
        for joint in block.findall('joint'):
            joints.append(Ros2ControlJoint(
                name=joint.get('name', ''),
                command_interfaces=tuple(c.get('name', '') for c in
                                         joint.findall('command_interface')),
                state_interfaces=tuple(s.get('name', '') for s in
                                       joint.findall('state_interface')),
                initial_position=_initial_position(joint)))
    return joints


def _effort_joints(urdf_xml: str) -> list[str]:
    """Return the joints with an ``effort`` command interface in the block, in its order."""
    return [joint.name for joint in ros2_control_joints(urdf_xml)
            if 'effort' in joint.command_interfaces]


def command_joint_names(urdf_xml: str) -> list[str]:
    """
    Return the joints an effort controller of this description commands, in its order.

    What the launch files give every commanding node (and the simulator and the observer)
    as ``command_joints``, so that the Float64MultiArray commands of any arm line up.

    :param urdf_xml: The URDF text.
    :return: The joints with an ``effort`` command interface in the ``<ros2_control>``
        block, in block order; without a block, every actuated joint of the URDF in
        document order.
    :raises ValueError: Not a URDF, or neither gives a joint.
    """
    joints = _effort_joints(urdf_xml)
    if not joints:
        joints = [joint.get('name', '') for joint in _parse(urdf_xml).findall('joint')
                  if joint.get('type') in MOVING_JOINT_TYPES]
    if not joints:
        raise ValueError('the robot description has no actuated joint with an effort '
                         'command: nothing to command')
    return joints


def _number(text: str | None, default: float) -> float:
    """Read a URDF number attribute; ``default`` when absent or not finite."""
    try:
        value = float(text) if text is not None else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def ros2_control_block(urdf_xml: str, name: str = '') -> str:
    """
    Write a ``<ros2_control>`` system block for every actuated joint of a description.

    Each joint gets an ``effort`` command interface with ``min``/``max`` = -/+ the URDF
    effort limit (when it has one) and ``position`` (``initial_value``: 0 clamped into the
    position limits), ``velocity`` and ``effort`` state interfaces. A ``<mimic>`` joint is
    listed with ``mimic="false"``: the suite's model and simulator treat it as a joint of
    its own. The hardware is the topic-based one (:data:`TOPIC_BASED_HARDWARE`) on
    :data:`SIM_JOINT_STATES` / :data:`SIM_JOINT_COMMANDS` (see :func:`with_hardware`).

    :param urdf_xml: The URDF text.
    :param name: The block's name; empty = the robot's name.
    :return: The block's XML text, indented by two spaces, ending with a newline.
    :raises ValueError: Not a URDF, or it has no actuated joint.
    """
    root = _parse(urdf_xml)
    lines = ['  <ros2_control name="%s" type="system">' % (name or root.get('name', 'robot')),
             _hardware_xml('topic_based', '    ')]
    count = 0
    for joint in root.findall('joint'):
        if joint.get('type') not in MOVING_JOINT_TYPES:
            continue
        count += 1
        limit = joint.find('limit')
        lower = _number(limit.get('lower') if limit is not None else None, -math.inf)
        upper = _number(limit.get('upper') if limit is not None else None, math.inf)
        if joint.get('type') == 'continuous' or lower > upper:
            lower, upper = -math.inf, math.inf
        effort = _number(limit.get('effort') if limit is not None else None, 0.0)
        mimic = ' mimic="false"' if joint.find('mimic') is not None else ''
        lines.append('    <joint name="%s"%s>' % (joint.get('name'), mimic))
        if effort > 0.0:
            lines += ['      <command_interface name="effort">',
                      '        <param name="min">%r</param>' % -effort,
                      '        <param name="max">%r</param>' % effort,
                      '      </command_interface>']
        else:
            lines.append('      <command_interface name="effort"/>')
        start = min(max(0.0, lower), upper)
        lines += ['      <state_interface name="position">',
                  '        <param name="initial_value">%r</param>' % start,
                  '      </state_interface>',
                  '      <state_interface name="velocity"/>',
                  '      <state_interface name="effort"/>',
                  '    </joint>']
    if not count:
        raise ValueError('the robot description has no actuated joint (revolute, continuous '
                         'or prismatic): nothing for ros2_control to command')
    lines.append('  </ros2_control>')
    return '\n'.join(lines) + '\n'


def topic_based_hardware(installed: Callable[[str], bool]) -> tuple[str, str]:
    """
    Return the topic-based hardware to use: the first of :data:`TOPIC_BASED_HARDWARE` installed.

    :param installed: Package name -> whether it is installed (e.g. ament's index).
    :return: ``(package, plugin)``; none installed: the preferred one (the launch then names
        its apt package).
    """
    for package, plugin in TOPIC_BASED_HARDWARE:
        if installed(package):
            return package, plugin
    return TOPIC_BASED_HARDWARE[0]


def _hardware_xml(hardware: str, indent: str, plugin: str | None = None,
                  namespace: str = '') -> str:
    """
    Return the ``<hardware>`` element for a ``hardware`` choice other than description.

    ``plugin``: the plugin to name; None = the choice's default (:data:`HARDWARE_PLUGINS`).
    ``namespace``: the launch's; the topic-based hardware's topics are written absolute in it
    (the plugin's node is in the root namespace on some ros2_control versions).
    """
    plugin = plugin or HARDWARE_PLUGINS[hardware]
    lines = ['%s<hardware>' % indent, '%s  <plugin>%s</plugin>' % (indent, plugin)]
    if hardware in SIMULATED_HARDWARE:
        lines += ['%s  <param name="joint_commands_topic">%s</param>'
                  % (indent, namespaced_name(namespace, SIM_JOINT_COMMANDS)),
                  '%s  <param name="joint_states_topic">%s</param>'
                  % (indent, namespaced_name(namespace, SIM_JOINT_STATES)),
                  # publish every cycle: TopicBasedSystem compares position commands with
                  # position states to skip "unchanged" commands, which with effort commands
                  # at a still pose would never publish (and the simulator's brakes never
                  # release); its successor compares every command with its state, which
                  # skips a hold whose effort matches the measured one
                  '%s  <param name="trigger_joint_command_threshold">-1</param>' % indent]
    lines.append('%s</hardware>' % indent)
    return '\n'.join(lines)


_BLOCK = re.compile(r'<ros2_control\b[^>]*>.*?</ros2_control\s*>', re.DOTALL)
_HARDWARE = re.compile(r'([ \t]*)<hardware\b[^>]*>.*?</hardware\s*>', re.DOTALL)


def check_hardware(hardware: str) -> None:
    """
    Refuse a ``hardware`` launch argument that is not one of :data:`HARDWARE_PLUGINS`.

    :raises ValueError: The message names the choices.
    """
    if hardware not in HARDWARE_PLUGINS:
        raise ValueError('hardware:=%s: expected one of %s' % (hardware,
                                                               ', '.join(HARDWARE_PLUGINS)))


def with_hardware(urdf_xml: str, hardware: str, plugin: str | None = None,
                  namespace: str = '') -> str:
    """
    Return the description with the hardware plugin the ``hardware`` launch argument asks for.

    The text is edited in place (comments and formatting stay): the ``<hardware>`` element of
    every ``<ros2_control type="system">`` block is replaced; a description without such a
    block gets one from :func:`ros2_control_block` before ``</robot>``.

    :param urdf_xml: The URDF text (a xacro already expanded).
    :param hardware: ``topic_based``, ``mujoco``, ``mock`` or ``description`` (see
        :data:`HARDWARE_PLUGINS`).
    :param plugin: The plugin to name instead of the choice's default (``topic_based``: the
        one :func:`topic_based_hardware` found installed).
    :param namespace: The launch's namespace (``''``: the root one): ``topic_based`` names
        :data:`SIM_JOINT_STATES` and :data:`SIM_JOINT_COMMANDS` absolute in it.
    :return: The URDF text for robot_state_publisher and the controller_manager.
    :raises ValueError: An unknown ``hardware``, not a URDF, a block without ``<hardware>``,
        no actuated joint, or ``description`` for a description without a block.
    """
    check_hardware(hardware)
    root = _parse(urdf_xml)
    systems = [block for block in root.findall('ros2_control') if _is_system(block)]
    if not systems:
        if hardware == 'description':
            raise ValueError('hardware:=description needs a <ros2_control> block in the robot '
                             'description naming the hardware plugin; this one has none')
        block = ros2_control_block(urdf_xml)
        end = urdf_xml.rfind('</robot')
        return with_hardware(urdf_xml[:end] + block + urdf_xml[end:], hardware, plugin,
                             namespace)
    for block in systems:
        if block.find('hardware') is None:
            raise ValueError('the <ros2_control name="%s"> block has no <hardware> element'
                             % block.get('name', ''))
    if hardware == 'description':
        return urdf_xml

    def replace_hardware(match: re.Match) -> str:
        text = match.group(0)
        kind = re.search(r'\stype\s*=\s*["\']([^"\']*)', text[:text.index('>') + 1])
        if kind and kind.group(1).strip().lower() != 'system':
            return text
        return _HARDWARE.sub(
            lambda m: _hardware_xml(hardware, m.group(1), plugin, namespace), text, count=1)
    return _BLOCK.sub(replace_hardware, urdf_xml)


def default_initial_positions(model: RobotModel, urdf_xml: str) -> FloatArray:
    """
    Return the start pose used when ``initial_positions`` is not set.

    Per joint: the ``initial_value`` of the position state interface in the URDF's
    ``<ros2_control>`` block when there is one (cobot7 gives the Panda 'ready' pose there),
    otherwise 0 clamped into the joint's position limits (cobot7's joint 4 excludes 0).

    :param model: The robot model.
    :param urdf_xml: The URDF text the model was loaded from.
    :return: Joint positions [rad or m] in model order, shape (n,).
    """
    q0 = np.clip(np.zeros(model.dof), model.position_lower, model.position_upper)
    try:
        joints = ros2_control_joints(urdf_xml)
    except ValueError:
        return q0
    for joint in joints:
        if joint.name in model.joint_names and joint.initial_position is not None:
            i = model.joint_index(joint.name)
            q0[i] = min(max(joint.initial_position, model.position_lower[i]),
                        model.position_upper[i])
    return q0


def controllers_parameters(urdf_xml: str, update_rate: float,
                           delay_budget: float | None = None,
                           warnings: list[str] | None = None,
                           namespace: str = '') -> dict[str, Any]:
    """
    Return the controller_manager parameter file for a description's ros2_control joints.

    The joints with an ``effort`` command interface, in block order, go to
    ``effort_controller`` (:data:`EFFORT_CONTROLLER_TYPE` on the effort interface, what
    gravity_compensation_node commands) and to ``joint_trajectory_controller`` (effort
    command interface, position and velocity states; PD gains from
    :func:`manip_dynamics.control.gains.design_joint_gains` at ``update_rate`` with its
    default delay budget, over poses across the joint range and the start pose: stable up
    to twice that budget; without the efforts feedforward_filter fills in, the arm sags by
    about ``g(q) / p``) and ``constraints`` (per-joint path and goal tolerances, goal time
    and stopped velocity from :func:`manip_dynamics.control.gains.trajectory_tolerances`:
    a plan that ends off target is reported GOAL_TOLERANCE_VIOLATED, not SUCCESSFUL).
    joint_state_broadcaster publishes every joint of the block.

    :param urdf_xml: The URDF text with its ``<ros2_control>`` block (see
        :func:`with_hardware`).
    :param update_rate: The controller_manager's update rate [Hz], a whole number >= 1.
    :param delay_budget: Age of the measurement JTC's gains must tolerate [s]; default
        :data:`DELAY_BUDGET_CYCLES` update cycles (8 ms at 250 Hz; the designed gains stay
        stable at twice that). Behind TopicBasedSystem and the simulator the real
        controller_manager tracked with those gains and not with a 16 ms budget's, 4 times
        softer: the arm left a 2 s plan at 2.6 times a velocity limit (the velocity terms
        of a moving arm, which the design at rest leaves out, outweigh such soft damping;
        docs/ROS2_CONTROL.md). A driver inside controller_manager reads in the same
        update: one cycle.
    :param warnings: A list that gets one line when the gains cannot hold every pose of the
        joint range against gravity at this rate (:attr:`JointGains.hold_stiffness` < 0:
        gravity outweighs the stiffness somewhere; the remedy is a higher update rate).
    :param namespace: The launch's namespace: ``''`` keys the nodes by name (the root
        namespace), else by full name (``/arm1/controller_manager``; the controllers run in
        controller_manager's namespace and read its parameter file).
    :return: ``{node name: {'ros__parameters': {...}}}`` as a ROS 2 parameter file has it.
    :raises ValueError: No joint with an effort command interface, a bad update rate, or a
        description the dynamics model does not load.
    """
    if not (isinstance(update_rate, (int, float)) and math.isfinite(update_rate)
            and update_rate >= 1.0 and float(update_rate).is_integer()):
        raise ValueError('update_rate must be a whole number of Hz >= 1, got %r'
                         % (update_rate,))
    joints = _effort_joints(urdf_xml)
    if not joints:
        raise ValueError('no joint of the <ros2_control> block has an effort command '
                         'interface: the effort controller and the gravity compensation '
                         'need one per joint')
    from manip_dynamics.control.gains import design_joint_gains, trajectory_tolerances
    model = RobotModel.from_urdf_string(urdf_xml)
    designed = design_joint_gains(
        model, float(update_rate), start=default_initial_positions(model, urdf_xml),
        delay_budget=(DELAY_BUDGET_CYCLES / float(update_rate) if delay_budget is None
                      else delay_budget))
    if designed.hold_stiffness < 0.0 and warnings is not None:
        warnings.append(
            'the joint_trajectory_controller gains written for %g Hz cannot hold every pose '
            'of %s against gravity (least stiffness left %.1f N m/rad): a held pose may drift '
            'away; a higher update_rate allows stiffer gains (cobot7: 500 Hz)'
            % (update_rate, model.name, designed.hold_stiffness))
    tolerances = trajectory_tolerances(model, designed.p)
    gains = {}
    constraints = {'stopped_velocity_tolerance': tolerances.stopped_velocity,
                   'goal_time': tolerances.goal_time}
    for name in joints:
        p, d = UNMODELLED_GAINS['p'], UNMODELLED_GAINS['d']
        if name in model.joint_names:
            i = model.joint_index(name)
            p, d = float(designed.p[i]), float(designed.d[i])
            constraints[name] = {'trajectory': round(float(tolerances.trajectory[i]), 6),
                                 'goal': round(float(tolerances.goal[i]), 6)}
        gains[name] = {'p': round(p, 6), 'd': round(d, 6), 'i': 0.0, 'i_clamp': 0.0}

    def key(node: str) -> str:
        return namespaced_name(namespace, node) if namespace.strip('/') else node
    return {
        key('controller_manager'): {'ros__parameters': {
            'update_rate': int(update_rate),
            'joint_state_broadcaster': {
                'type': 'joint_state_broadcaster/JointStateBroadcaster'},
            EFFORT_CONTROLLER: {'type': EFFORT_CONTROLLER_TYPE},
            TRAJECTORY_CONTROLLER: {
                'type': 'joint_trajectory_controller/JointTrajectoryController'},
        }},
        # copies: a shared list would be written as a YAML alias, which ROS's parameter
        # parser does not read
        key(EFFORT_CONTROLLER): {'ros__parameters': {'joints': list(joints),
                                                     'interface_name': 'effort'}},
        key(TRAJECTORY_CONTROLLER): {'ros__parameters': {
            'joints': list(joints),
            'command_interfaces': ['effort'],
            'state_interfaces': ['position', 'velocity'],
            'gains': gains,
            'constraints': constraints,
        }},
    }


def write_parameters_file(parameters: dict[str, Any], directory: str | None = None) -> str:
    """
    Write a ROS 2 parameter file (YAML) to a new temporary file.

    :param parameters: ``{node name: {'ros__parameters': {...}}}``.
    :param directory: Folder for the file; None = the system's temporary folder.
    :return: The file's path (the caller's process removes nothing: launch keeps it, as
        launch_ros does with its own parameter files).
    """
    handle, path = tempfile.mkstemp(prefix='manip_dynamics_controllers_', suffix='.yaml',
                                    dir=directory)
    with os.fdopen(handle, 'w', encoding='utf-8') as stream:
        stream.write('# written by manip_dynamics control.launch.py from the robot '
                     'description\n')
        yaml.safe_dump(parameters, stream, sort_keys=False)
    return path
