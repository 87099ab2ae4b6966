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
The ros2_control side of the descriptions, without a ROS install.

Each bundled arm's ``<ros2_control>`` block is checked against its URDF as urdfdom-py
(urdf_parser_py, an independent parser) reads it: every actuated joint once, an effort
command interface limited to the URDF effort limit, position/velocity/effort states, a start
pose inside the limits, and the TopicBasedSystem hardware on the simulator's topics with
commands sent every cycle. The hardware switch of control.launch.py, the written controller
parameters (also config/ros2_controllers.yaml, which must equal them for cobot7) and the
errors are checked on the text they produce.
"""

import os
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from urdf_parser_py.urdf import URDF
import yaml

from manip_dynamics.bundled import bundled_robots, urdf_path
from manip_dynamics.model.urdf_loader import MOVING_JOINT_TYPES
from manip_dynamics.ros.launch_support import ros2_control_setup as rc
from manip_dynamics.ros.launch_support.launch_helpers import missing_message

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, '..', '..', 'config', 'ros2_controllers.yaml')
ARMS = bundled_robots()


def _text(name: str) -> str:
    with open(urdf_path(name), encoding='utf-8') as stream:
        return stream.read()


def _hardware(xml: str) -> ElementTree.Element:
    blocks = list(ElementTree.fromstring(xml).findall('ros2_control'))
    assert len(blocks) == 1
    return blocks[0].find('hardware')


def _params(hardware: ElementTree.Element) -> dict:
    return {p.get('name'): (p.text or '').strip() for p in hardware.findall('param')}


def test_every_bundled_arm_is_checked():
    assert {'cobot7', 'gripper_arm', 'planar_2r', 'puma560'} <= set(ARMS)


@pytest.mark.parametrize('arm', ARMS)
def test_the_block_lists_every_actuated_joint_with_its_effort_limit(arm):
    xml = _text(arm)
    robot = URDF.from_xml_string(xml)
    actuated = {j.name: j for j in robot.joints if j.type in MOVING_JOINT_TYPES}
    joints = rc.ros2_control_joints(xml)
    assert sorted(j.name for j in joints) == sorted(actuated)
    blocks = {j.get('name'): j for j in ElementTree.fromstring(xml).iter('joint')
              if j.find('command_interface') is not None}
    for joint in joints:
        urdf_joint = actuated[joint.name]
        assert joint.command_interfaces == ('effort',)
        assert joint.state_interfaces == ('position', 'velocity', 'effort')
        command = {p.get('name'): float(p.text) for p in
                   blocks[joint.name].find('command_interface').findall('param')}
        assert command == {'min': -urdf_joint.limit.effort, 'max': urdf_joint.limit.effort}
        assert joint.initial_position is not None
        assert urdf_joint.limit.lower <= joint.initial_position <= urdf_joint.limit.upper
        # a URDF mimic joint is commanded as a joint of its own, as the model treats it
        if urdf_joint.mimic is not None:
            assert blocks[joint.name].get('mimic') == 'false'


@pytest.mark.parametrize('arm', ARMS)
def test_the_hardware_is_the_simulator_behind_the_topic_based_interface(arm):
    hardware = _hardware(_text(arm))
    # rosdistro's package for Jazzy and newer (topic_based_ros2_control was removed there)
    assert hardware.findtext('plugin').strip() == \
        'joint_state_topic_hardware_interface/JointStateTopicSystem'
    assert _params(hardware) == {'joint_commands_topic': '/sim/joint_commands',
                                 'joint_states_topic': '/sim/joint_states',
                                 'trigger_joint_command_threshold': '-1'}


def test_mujoco_hardware_is_the_same_topic_based_block_with_mujoco_behind_it():
    topic = _hardware(rc.with_hardware(_text('cobot7'), 'topic_based'))
    mujoco = _hardware(rc.with_hardware(_text('cobot7'), 'mujoco'))
    assert ElementTree.tostring(mujoco) == ElementTree.tostring(topic)
    assert rc.SIMULATED_HARDWARE == {'topic_based': 'suite', 'mujoco': 'mujoco'}


@pytest.mark.parametrize('arm', ARMS)
def test_a_namespaced_launch_moves_the_hardware_topics_and_the_parameter_keys(arm):
    """namespace:=arm1: the plugin's topics and every node's parameters under /arm1."""
    xml = rc.with_hardware(_text(arm), 'topic_based', namespace='/arm1/')
    assert _params(_hardware(xml)) == {'joint_commands_topic': '/arm1/sim/joint_commands',
                                       'joint_states_topic': '/arm1/sim/joint_states',
                                       'trigger_joint_command_threshold': '-1'}
    root = rc.controllers_parameters(rc.with_hardware(_text(arm), 'topic_based'), 500)
    spaced = rc.controllers_parameters(xml, 500, namespace='arm1')
    assert list(spaced) == ['/arm1/' + name for name in root]
    assert list(spaced.values()) == list(root.values())


@pytest.mark.parametrize('installed, expected', [
    ({'joint_state_topic_hardware_interface', 'topic_based_ros2_control'},
     'joint_state_topic_hardware_interface/JointStateTopicSystem'),
    ({'topic_based_ros2_control'}, 'topic_based_ros2_control/TopicBasedSystem'),
    (set(), 'joint_state_topic_hardware_interface/JointStateTopicSystem'),
])
def test_the_successor_is_preferred_and_the_old_package_still_used_alone(installed, expected):
    package, plugin = rc.topic_based_hardware(installed.__contains__)
    assert plugin == expected and plugin.startswith(package + '/')
    hardware = _hardware(rc.with_hardware(_text('cobot7'), 'topic_based', plugin))
    assert hardware.findtext('plugin').strip() == expected
    # the same topics and threshold whichever plugin
    assert _params(hardware)['trigger_joint_command_threshold'] == '-1'


def test_mock_hardware_replaces_only_the_hardware_element():
    xml = _text('cobot7')
    mock = rc.with_hardware(xml, 'mock')
    hardware = _hardware(mock)
    assert hardware.findtext('plugin').strip() == 'mock_components/GenericSystem'
    assert _params(hardware) == {}
    start, end = xml.index('<hardware>'), xml.index('</hardware>') + len('</hardware>')
    assert mock.startswith(xml[:start]) and mock.endswith(xml[end:])
    assert rc.ros2_control_joints(mock) == rc.ros2_control_joints(xml)
    assert rc.with_hardware(xml, 'description') == xml
    assert rc.with_hardware(mock, 'topic_based').count(
        '<plugin>joint_state_topic_hardware_interface/JointStateTopicSystem</plugin>') == 1


def test_a_description_without_a_block_gets_one_for_its_actuated_joints():
    xml = _text('puma560')
    bare = xml[:xml.index('  <!--\n    ros2_control')] + '</robot>\n'
    assert not rc.ros2_control_joints(bare)
    written = rc.with_hardware(bare, 'topic_based')
    assert rc.ros2_control_joints(written) == rc.ros2_control_joints(xml)
    assert _params(_hardware(written)) == _params(_hardware(xml))
    URDF.from_xml_string(written)  # still a URDF to urdfdom-py
    with pytest.raises(ValueError, match='hardware:=description needs a <ros2_control>'):
        rc.with_hardware(bare, 'description')


def test_a_non_system_block_keeps_its_hardware():
    xml = _text('planar_2r')
    sensor = ('<ros2_control name="ft" type="sensor"><hardware><plugin>my/Sensor</plugin>'
              '</hardware><sensor name="ft"/></ros2_control>\n')
    end = xml.rfind('</robot>')
    both = rc.with_hardware(xml[:end] + sensor + xml[end:], 'mock')
    assert '<plugin>my/Sensor</plugin>' in both
    assert both.count('<plugin>mock_components/GenericSystem</plugin>') == 1


@pytest.mark.parametrize('bad, message', [
    ('<robot name="r"><link name="a"/>', 'the XML does not parse'),
    ('<model name="r"/>', 'root element is <model>'),
    ('<robot name="r"><link name="a"/></robot>', 'no actuated joint'),
])
def test_descriptions_that_cannot_be_controlled_are_named(bad, message):
    with pytest.raises(ValueError, match=message):
        rc.with_hardware(bad, 'topic_based')


def test_unknown_hardware_is_refused_with_the_choices():
    with pytest.raises(ValueError, match='hardware:=gazebo: expected one of topic_based, '
                                         'mujoco, mock, description'):
        rc.with_hardware(_text('cobot7'), 'gazebo')


@pytest.mark.parametrize('arm', ARMS)
def test_controllers_command_every_effort_joint_of_the_block(arm, tmp_path):
    xml = _text(arm)
    params = rc.controllers_parameters(xml, 500)
    path = rc.write_parameters_file(params, str(tmp_path))
    text = open(path, encoding='utf-8').read()
    # ROS's parameter parser reads no YAML anchors or aliases
    assert '&' not in text and '*' not in text
    read = yaml.safe_load(text)
    assert read == params
    manager = read['controller_manager']['ros__parameters']
    assert manager['update_rate'] == 500
    # on every distribution (effort_controllers is gone from Rolling and Lyrical)
    assert manager['effort_controller']['type'] == \
        'forward_command_controller/ForwardCommandController'
    assert manager['joint_state_broadcaster']['type'] == \
        'joint_state_broadcaster/JointStateBroadcaster'
    joints = [j.name for j in rc.ros2_control_joints(xml)]
    effort = read['effort_controller']['ros__parameters']
    assert effort == {'joints': joints, 'interface_name': 'effort'}
    trajectory = read['joint_trajectory_controller']['ros__parameters']
    assert trajectory['joints'] == joints
    assert trajectory['command_interfaces'] == ['effort']
    assert sorted(trajectory['gains']) == sorted(joints)


@pytest.mark.parametrize('arm', ['cobot7', 'puma560'])
def test_trajectory_gains_hold_still_pinocchios_arm_with_delay(arm):
    """
    The written PD gains keep the delayed, sampled loop about Pinocchio's M(q) stable.

    Pinocchio's mass matrix (CRBA) at the start pose and at poses across the range; the loop
    ``M e'' = -P e - D e'`` discretized here by matrix exponential, the command from a
    state as old as the default budget (2 update cycles at 250 Hz; Pinocchio's arm has no
    rotor inertia, which the design counts: at 4 cycles puma560 reached a spectral radius of
    1.011 at one of these poses).
    """
    pinocchio = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    from scipy.linalg import expm
    xml = _text(arm)
    model = pinocchio.buildModelFromXML(xml)
    names = list(model.names[1:])
    rate, delay = 250.0, int(rc.DELAY_BUDGET_CYCLES)
    gains = rc.controllers_parameters(xml, rate)['joint_trajectory_controller'][
        'ros__parameters']['gains']
    p = np.array([gains[name]['p'] for name in names])
    d = np.array([gains[name]['d'] for name in names])
    n = len(names)
    rng = np.random.default_rng(3)
    lower, upper = model.lowerPositionLimit, model.upperPositionLimit
    poses = [np.clip(np.zeros(model.nq), lower, upper)] + [
        rng.uniform(lower, upper) for _ in range(5)]
    for q in poses:
        mass = pinocchio.crba(model, model.createData(), q)
        mass = np.triu(mass) + np.triu(mass, 1).T  # crba fills the upper triangle
        cont = np.zeros((3 * n, 3 * n))   # [e, e', u] with u held over the period
        cont[:n, n:2 * n] = np.eye(n)
        cont[n:2 * n, 2 * n:] = np.linalg.inv(mass)
        step = expm(cont / rate)
        a_d, b_d = step[:2 * n, :2 * n], step[:2 * n, 2 * n:]
        size = 2 * n * (delay + 1)
        loop = np.zeros((size, size))
        loop[:2 * n, :2 * n] = a_d
        loop[:2 * n, -2 * n:] = -b_d @ np.hstack([np.diag(p), np.diag(d)])
        loop[2 * n:, :-2 * n] = np.eye(size - 2 * n)
        assert np.max(np.abs(np.linalg.eigvals(loop))) < 1.0, q


def test_gains_that_cannot_hold_every_pose_against_gravity_are_said():
    """cobot7 at 250 Hz: gravity outweighs joint 3 at its ready pose (measured: it drifted)."""
    said = []
    rc.controllers_parameters(_text('cobot7'), 250, warnings=said)
    assert len(said) == 1 and 'cannot hold every pose of cobot7 against gravity' in said[0]
    said = []
    rc.controllers_parameters(_text('cobot7'), 500, warnings=said)
    assert said == []


def test_the_committed_controllers_file_is_what_the_launch_writes_for_cobot7():
    with open(CONFIG, encoding='utf-8') as stream:
        committed = yaml.safe_load(stream)
    assert committed == rc.controllers_parameters(_text('cobot7'), 500)


@pytest.mark.parametrize('rate', [0, 0.5, 100.5, float('nan'), float('inf'), '250'])
def test_a_bad_update_rate_is_refused(rate):
    with pytest.raises(ValueError, match='update_rate must be a whole number'):
        rc.controllers_parameters(_text('cobot7'), rate)


def test_a_block_without_effort_commands_is_refused():
    xml = _text('planar_2r').replace('<command_interface name="effort">',
                                     '<command_interface name="position">')
    with pytest.raises(ValueError, match='no joint of the <ros2_control> block has an effort'):
        rc.controllers_parameters(xml, 250)


def test_a_missing_plugin_package_is_named_with_its_apt_package():
    text = missing_message([('topic_based_ros2_control', '', ''),
                            ('rviz2', 'rviz2', 'rviz')])
    assert text == ('topic_based_ros2_control (package topic_based_ros2_control) is not '
                    'installed: install it (apt install ros-$ROS_DISTRO-topic-based-ros2-'
                    'control); rviz2 (package rviz2) is not installed: install it (apt '
                    'install ros-$ROS_DISTRO-rviz2) or pass rviz:=false. Nothing was started.')
