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
The launch files' argument handling (manip_dynamics.ros.launch_support.launch_helpers),
without launch.

Expected texts are the bundled files themselves, read here; a missing executable is one
that no ROS prefix on this machine has.
"""

import os
import xml.etree.ElementTree as ElementTree

import pytest
import yaml

from manip_dynamics.bundled import bundled_robots, urdf_path
from manip_dynamics.ros.launch_support import launch_helpers as lh
from manip_dynamics.ros.launch_support.launch_nodes import (
    launch_namespace, RVIZ_CONFIG, rviz_config)


def _text(name: str) -> str:
    with open(urdf_path(name), encoding='utf-8') as stream:
        return stream.read()


def test_no_argument_means_the_topic() -> None:
    """Neither urdf nor robot: '' (the node subscribes to /robot_description)."""
    assert lh.robot_description('', '') == ''
    assert lh.robot_description('  ', ' ') == ''


def test_bundled_robot_by_name_and_file_by_path() -> None:
    assert lh.robot_description('', 'cobot7') == _text('cobot7')
    assert lh.robot_description(urdf_path('planar_2r'), '') == _text('planar_2r')


def test_xacro_file_is_expanded(tmp_path) -> None:
    pytest.importorskip('xacro', reason='xacro not installed')
    path = tmp_path / 'arm.urdf.xacro'
    path.write_text('<?xml version="1.0"?>\n'
                    '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="x">\n'
                    '  <xacro:property name="l" value="base"/>\n'
                    '  <link name="${l}_link"/>\n</robot>\n')
    text = lh.robot_description(str(path), '')
    assert '<link name="base_link"/>' in text and '${' not in text


def test_bad_arguments_say_what_to_pass(tmp_path) -> None:
    with pytest.raises(lh.LaunchArgumentError, match='not both'):
        lh.robot_description(urdf_path('cobot7'), 'cobot7')
    with pytest.raises(lh.LaunchArgumentError, match='no bundled robot.*cobot7'):
        lh.robot_description('', 'no_such_arm')
    with pytest.raises(lh.LaunchArgumentError, match='no such file'):
        lh.robot_description(str(tmp_path / 'missing.urdf'), '')


def test_missing_executable_is_found_and_explained() -> None:
    wanted = [('manip_dynamics_no_such_package', 'viewer', 'viewer')]
    missing = lh.missing_executables(wanted)
    assert missing == wanted
    message = lh.missing_message(missing)
    assert 'viewer:=false' in message and 'not installed' in message
    assert '\n' not in message


def test_installed_executable_is_found() -> None:
    """Our own dynamics_node is found where ros2 run looks (when the package is built)."""
    path = lh.executable_path('manip_dynamics', 'dynamics_node')
    if path is None:
        pytest.skip('manip_dynamics is not installed in a ROS prefix here (no colcon build)')
    assert os.access(path, os.X_OK)
    assert lh.missing_executables([('manip_dynamics', 'dynamics_node', 'x')]) == []


@pytest.mark.parametrize('text, value', [('true', True), ('False', False), ('1', True),
                                         ('off', False)])
def test_is_true(text, value) -> None:
    assert lh.is_true(text) is value


def test_is_true_rejects_other_text() -> None:
    with pytest.raises(lh.LaunchArgumentError, match='true or false'):
        lh.is_true('maybe')


def test_observer_stiction_follows_the_hardware_unless_given() -> None:
    """Empty: on where the arm's dry friction sticks (MuJoCo, a real driver), off elsewhere."""
    sticks = {'mujoco': True, 'description': True, 'simulator': False, 'topic_based': False,
              'mock': False}
    for hardware, expected in sticks.items():
        assert lh.observer_stiction('', hardware) is expected
        assert lh.observer_stiction(' true', hardware) is True
        assert lh.observer_stiction('false', hardware) is False
    with pytest.raises(lh.LaunchArgumentError, match='observer_stiction'):
        lh.observer_stiction('sometimes', 'mujoco')


def test_loop_priority_reads_0_to_99_and_names_the_argument() -> None:
    assert lh.loop_priority('0') == {'thread_priority': 0}
    assert lh.loop_priority(' 50 ') == {'thread_priority': 50}
    for bad in ('-1', '100', '2.5', 'high', ''):
        with pytest.raises(lh.LaunchArgumentError, match='thread_priority:='):
            lh.loop_priority(bad)


def test_controller_manager_outranks_the_nodes_it_feeds() -> None:
    """Nodes at SCHED_FIFO: controller_manager's process above them, below its update loop."""
    asked = []

    def permitted(priority: int) -> bool:
        asked.append(priority)
        return True
    prefix, note = lh.manager_prefix(lh.NODE_PRIORITY, permitted)
    manager = lh.NODE_PRIORITY + lh.MANAGER_ABOVE_NODES
    assert prefix == 'chrt -f %d' % manager and asked == [manager]
    assert lh.NODE_PRIORITY < manager < 50   # controller_manager's update loop: 50
    assert 'SCHED_FIFO %d' % manager in note
    # the normal scheduler asked for: nothing tried, no prefix
    assert lh.manager_prefix(0, permitted)[0] is None and asked == [manager]
    # refused by the system: no prefix (the process would not start), a warning
    prefix, note = lh.manager_prefix(lh.NODE_PRIORITY, lambda _: False)
    assert prefix is None and note.startswith('warning:') and str(manager) in note
    assert lh.manager_prefix(99, permitted)[0] == 'chrt -f 99'


def test_the_simulator_and_the_filter_outrank_the_nodes_and_not_controller_manager() -> None:
    """The arm's stand-in and the goal path above the nodes, below controller_manager."""
    nodes = lh.loop_priority(str(lh.NODE_PRIORITY))
    simulator = lh.priority_above(nodes, lh.SIMULATOR_ABOVE_NODES)['thread_priority']
    gate = lh.priority_above(nodes, lh.FILTER_ABOVE_NODES)['thread_priority']
    holder = lh.priority_above(nodes, lh.COMPENSATION_ABOVE_NODES)['thread_priority']
    assert lh.NODE_PRIORITY < gate < simulator < lh.NODE_PRIORITY + lh.MANAGER_ABOVE_NODES
    # the node that holds the arm outranks the observer, which only watches
    assert lh.NODE_PRIORITY < holder < simulator
    for above in (lh.SIMULATOR_ABOVE_NODES, lh.FILTER_ABOVE_NODES,
                  lh.COMPENSATION_ABOVE_NODES):
        assert lh.priority_above({'thread_priority': 0}, above) == {'thread_priority': 0}
        assert lh.priority_above({'thread_priority': 99}, above) == {'thread_priority': 99}


def test_fifo_permitted_agrees_with_the_system() -> None:
    """chrt's verdict is the kernel's: the same as setting this process's own scheduler."""
    import shutil
    if shutil.which('chrt') is None:
        pytest.skip('chrt (util-linux) is not installed')
    try:
        before = os.sched_getscheduler(0), os.sched_getparam(0)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        os.sched_setscheduler(0, before[0], before[1])
        allowed = True
    except PermissionError:
        allowed = False
    assert lh.fifo_permitted(1) is allowed


@pytest.mark.parametrize('arm', bundled_robots())
def test_rviz_is_fixed_on_each_arms_root_link(arm) -> None:
    """The RViz configuration names a frame robot_state_publisher publishes for this arm."""
    config = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), *RVIZ_CONFIG)
    with open(config, encoding='utf-8') as stream:
        text = rviz_config(stream.read(), _text(arm))
    frames = [line.split(':', 1)[1].strip() for line in text.splitlines()
              if line.strip().startswith('Fixed Frame:')]
    # the URDF's root: a link that is no joint's child (TF's root from robot_state_publisher)
    root = ElementTree.fromstring(_text(arm))
    children = {joint.find('child').get('link') for joint in root.findall('joint')}
    roots = [link.get('name') for link in root.findall('link')
             if link.get('name') not in children]
    assert frames == roots, (frames, roots)
    assert yaml.safe_load(text)['Visualization Manager']['Global Options']['Fixed Frame'] \
        == roots[0]


def _topics(node) -> list:
    """Every ``Value`` of a display's topic in an RViz configuration, depth first."""
    if isinstance(node, dict):
        found = []
        for key, value in node.items():
            if key in ('Topic', 'Description Topic') and isinstance(value, dict):
                found.append(value.get('Value'))
            found += _topics(value)
        return found
    if isinstance(node, list):
        return [t for item in node for t in _topics(item)]
    return []


def test_rviz_in_a_namespace_reads_the_namespaces_topics() -> None:
    """The description and torque markers of /arm1's nodes; TF stays the graph's own."""
    config = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), *RVIZ_CONFIG)
    with open(config, encoding='utf-8') as stream:
        original = stream.read()
    before = _topics(yaml.safe_load(rviz_config(original, _text('puma560'))))
    after = _topics(yaml.safe_load(rviz_config(original, _text('puma560'), 'arm1')))
    assert '/robot_description' in before and '/manip_dynamics/torque_markers' in before
    assert after == ['/arm1' + topic for topic in before], (before, after)


def test_the_namespace_argument_is_checked() -> None:
    assert launch_namespace('') == '' and launch_namespace(' /arm1/ ') == 'arm1'
    assert launch_namespace('robots/arm_2') == 'robots/arm_2'
    for bad in ('2arm', 'arm-1', 'arms//one', 'a b'):
        with pytest.raises(ValueError, match='not a ROS namespace'):
            launch_namespace(bad)


def test_rviz_config_without_a_fixed_frame_is_refused() -> None:
    with pytest.raises(ValueError, match='0 Fixed Frame lines'):
        rviz_config('Visualization Manager:\n  Class: ""\n', _text('cobot7'))


def test_a_bad_boolean_launch_argument_names_the_argument():
    with pytest.raises(lh.LaunchArgumentError, match=r'rviz:=maybe: expected true or false'):
        lh.is_true('maybe', 'rviz')
    assert lh.is_true('On', 'rviz') and not lh.is_true('0', 'rviz')
    with pytest.raises(lh.LaunchArgumentError, match='robot_state_publisher:=sometimes'):
        lh.state_publisher_wanted('sometimes')
    assert lh.state_publisher_wanted('true') and not lh.state_publisher_wanted('false')
    assert isinstance(lh.state_publisher_wanted('auto'), bool)


def test_a_config_file_missing_from_the_install_stops_the_launch(monkeypatch, tmp_path):
    from manip_dynamics.ros.launch_support import launch_nodes
    monkeypatch.setattr(launch_nodes, 'share', lambda *parts: str(tmp_path.joinpath(*parts)))
    (tmp_path / 'config').mkdir()
    (tmp_path / 'config' / 'simulator.yaml').write_text('{}')
    assert launch_nodes.config_file('simulator.yaml').endswith('simulator.yaml')
    with pytest.raises(RuntimeError, match='observer.yaml is missing.*colcon build'):
        launch_nodes.config_file('observer.yaml')


def test_every_config_file_the_launch_files_name_is_in_the_package() -> None:
    import re
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sources = [os.path.join(root, 'launch', name) for name in os.listdir(
        os.path.join(root, 'launch'))] + [
        os.path.join(root, 'manip_dynamics', 'ros', 'launch_support', 'launch_nodes.py')]
    named = set()
    for path in sources:
        with open(path, encoding='utf-8') as stream:
            named |= set(re.findall(r"config_file\('([^']+)'\)", stream.read()))
    assert len(named) >= 5, named
    missing = [name for name in sorted(named)
               if not os.path.isfile(os.path.join(root, 'config', name))]
    assert not missing, missing


def test_every_launch_file_takes_a_checked_namespace() -> None:
    """Each launch file declares ``namespace`` and checks it (one arm per namespace)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    folder = os.path.join(root, 'launch')
    names = sorted(name for name in os.listdir(folder) if name.endswith('.launch.py'))
    assert 'control.launch.py' in names and len(names) >= 4, names
    for name in names:
        with open(os.path.join(folder, name), encoding='utf-8') as stream:
            text = stream.read()
        assert "DeclareLaunchArgument('namespace'" in text, name
        assert "launch_namespace(arg('namespace'))" in text, name
        assert 'return in_namespace(' in text, name


def test_identified_joint_dynamics_become_the_model_nodes_parameters(tmp_path) -> None:
    """The file ``identify fit`` writes, given as ``joint_dynamics:=``: the node parameters."""
    path = tmp_path / 'identified_joint_dynamics.yaml'
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': {'joint_dynamics': {
        'joint_names': ['j2', 'j1'], 'damping': [0.5, 0.25], 'friction': [1.5, 0.75],
        'armature': [0.1, 0.0]}}}}))
    assert lh.joint_dynamics_parameters(str(path)) == {
        'joint_dynamics.joint_names': ['j2', 'j1'], 'joint_dynamics.damping': [0.5, 0.25],
        'joint_dynamics.friction': [1.5, 0.75], 'joint_dynamics.armature': [0.1, 0.0]}
    assert lh.joint_dynamics_parameters('  ') == {}


@pytest.mark.parametrize('text, expected', [
    (None, 'no such file'),
    ('robot: cobot7\n', 'no joint_dynamics block'),
    ('joint_dynamics: {joint_names: [a, b], friction: [1.0]}\n', 'has 1 values for 2'),
    ('joint_dynamics: {joint_names: [a], friction: [x]}\n', 'joint_dynamics:='),
    ('joint_dynamics: {joint_names: [a]}\n', 'no damping, friction or armature'),
    ('joint_dynamics: [unclosed\n', 'joint_dynamics:='),
])
def test_a_bad_joint_dynamics_file_stops_the_launch_naming_it(tmp_path, text, expected):
    path = tmp_path / 'dynamics.yaml'
    if text is not None:
        path.write_text(text)
    with pytest.raises(lh.LaunchArgumentError, match=expected) as info:
        lh.joint_dynamics_parameters(str(path))
    assert str(path) in str(info.value)


def test_the_simulating_launch_files_take_joint_dynamics_for_the_model_nodes_only() -> None:
    """sim and control launch declare ``joint_dynamics``; the simulator's parameters omit it."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name in ('sim.launch.py', 'control.launch.py'):
        with open(os.path.join(root, 'launch', name), encoding='utf-8') as stream:
            text = stream.read()
        assert "DeclareLaunchArgument('joint_dynamics'" in text, name
        assert text.count("joint_dynamics_parameters(arg('joint_dynamics'))") == 1, name
        simulator = text[text.index("executable='simulator_node'"):]
        simulator = simulator[:simulator.index('on_exit=')]
        assert "'robot_description': description" in simulator, name
        assert 'follow' not in simulator and 'model' not in simulator.replace(
            'mujoco_model', ''), name
