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
The URDF loader on structurally odd or impossible input (no rclpy).

Impossible or nonsense input is a clear :class:`URDFError` naming the element: a loop (also
one detached from the tree), duplicate names, floating or planar joints in the model, a
binary file, non-finite numbers (printed as ``nan``, not ``np.float64(nan)``).  A ``<mimic>``
naming no joint is a warning (urdfdom loads it, and a public description has one).  Tree walks
are iterative: a 5000-link chain loads, and its gravity torques match the closed form.  Forward
dynamics on a mass matrix made singular by massless links names the joints.
"""

import math
import pathlib

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.cli.formatting import tree_lines
from manip_dynamics.errors import URDFError
from manip_dynamics.model.urdf_loader import parse_urdf
from manip_dynamics.model_check import check_urdf_file, check_urdf_string

INERTIA = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>'


def link(name: str, mass: float | None = 1.0) -> str:
    if mass is None:
        return '<link name="%s"/>' % name
    return ('<link name="%s"><inertial><origin xyz="0.1 0 0"/><mass value="%r"/>%s</inertial>'
            '</link>' % (name, mass, INERTIA))


def joint(name: str, parent: str, child: str, kind: str = 'revolute', extra: str = '') -> str:
    limit = '<limit lower="-1" upper="1" effort="10" velocity="1"/>' if kind != 'fixed' else ''
    return ('<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>'
            '<origin xyz="0.2 0 0"/><axis xyz="0 1 0"/>%s%s</joint>'
            % (name, kind, parent, child, limit, extra))


def robot(*parts: str) -> str:
    return '<?xml version="1.0"?><robot name="r">%s</robot>' % ''.join(parts)


ARM = [link('base', None), joint('j1', 'base', 'a'), link('a'), joint('j2', 'a', 'b'),
       link('b')]


def test_detached_loop_is_refused_naming_its_links():
    xml = robot(*ARM, link('c'), link('d'), joint('jc', 'd', 'c'), joint('jd', 'c', 'd'))
    with pytest.raises(URDFError) as info:
        RobotModel.from_urdf_string(xml)
    message = str(info.value)
    assert 'loop' in message and "'c'" in message and "'d'" in message
    assert 'c -> d -> c' in message or 'd -> c -> d' in message


def test_duplicate_names_are_refused():
    with pytest.raises(URDFError, match="link 'a' is defined twice"):
        RobotModel.from_urdf_string(robot(*ARM, link('a')))
    with pytest.raises(URDFError, match="joint 'j2' is defined twice"):
        RobotModel.from_urdf_string(robot(*ARM, link('e'), joint('j2', 'b', 'e')))


@pytest.mark.parametrize('kind', ['floating', 'planar'])
def test_floating_and_planar_joints_say_fixed_base(kind):
    xml = robot(*ARM, link('e'), joint('free', 'b', 'e', kind=kind))
    with pytest.raises(URDFError) as info:
        RobotModel.from_urdf_string(xml)
    message = str(info.value)
    assert "'free'" in message and kind in message and 'fixed-base' in message
    assert 'root_link' in message
    # off the modelled chain it is locked like any other joint there
    model = RobotModel.from_urdf_string(xml, tip_link='b')
    assert model.joint_names == ('j1', 'j2') and 'free' in model.tree.locked_joints


def test_dangling_mimic_is_a_warning_and_strict_refuses_it():
    xml = robot(*ARM[:3], joint('j2', 'a', 'b', extra='<mimic joint="ghost"/>'), link('b'))
    model = RobotModel.from_urdf_string(xml)
    assert any("'j2'" in w and "'ghost'" in w and 'not defined' in w for w in model.warnings)
    with pytest.raises(URDFError, match='ghost'):
        RobotModel.from_urdf_string(xml, strict=True)
    findings = check_urdf_string(xml)
    assert any(f.severity == 'warning' and f.name == 'j2' and 'ghost' in f.message
               for f in findings)


def test_binary_file_gives_the_loader_error(tmp_path):
    path = tmp_path / 'mesh.urdf'
    path.write_bytes(b'\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\x00binary')
    for load in (RobotModel.from_urdf_file, check_urdf_file):
        with pytest.raises(URDFError) as info:
            load(str(path))
        assert not isinstance(info.value, UnicodeDecodeError)
        assert 'not UTF-8 text' in str(info.value) and str(path) in str(info.value)


def test_utf8_with_byte_order_mark_and_declared_encoding_loads(tmp_path):
    path = tmp_path / 'bom.urdf'
    path.write_bytes(b'\xef\xbb\xbf' + robot(*ARM).replace(
        '<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-8"?>').encode('utf-8'))
    assert RobotModel.from_urdf_file(str(path)).dof == 2


@pytest.mark.parametrize('text, where', [
    ('<mass value="nan"/>', 'mass'),
    ('<mass value="inf"/>', 'mass'),
])
def test_non_finite_numbers_print_plainly(text, where):
    xml = robot(link('base', None), joint('j1', 'base', 'a'),
                '<link name="a"><inertial>%s%s</inertial></link>' % (text, INERTIA))
    with pytest.raises(URDFError) as info:
        RobotModel.from_urdf_string(xml)
    message = str(info.value)
    assert where in message and 'np.float64' not in message
    assert 'nan' in message or 'inf' in message
    findings = check_urdf_string(xml)
    assert all('np.float64' not in f.message for f in findings)
    assert any(f.severity == 'error' and f.name == 'a' for f in findings)


def test_nan_axis_and_limits_print_plainly():
    xml = robot(link('base', None), '<joint name="j1" type="revolute"><parent link="base"/>'
                '<child link="a"/><axis xyz="nan 0 1"/><limit effort="nan" velocity="1"/>'
                '</joint>', link('a'))
    with pytest.raises(URDFError) as info:
        RobotModel.from_urdf_string(xml)
    assert "'j1'" in str(info.value) and 'np.float64' not in str(info.value)
    messages = ' '.join(f.message for f in check_urdf_string(xml))
    assert 'nan' in messages and 'np.float64' not in messages


def chain_of_point_masses(n: int, length: float, mass: float) -> str:
    """Return a planar chain: joint i about y, point mass at the end of each link, along x."""
    parts = ['<link name="l0"/>']
    for i in range(1, n + 1):
        origin = '0 0 0' if i == 1 else '%r 0 0' % length
        parts.append('<joint name="q%d" type="continuous"><parent link="l%d"/><child '
                     'link="l%d"/><origin xyz="%s"/><axis xyz="0 1 0"/></joint>'
                     % (i, i - 1, i, origin))
        parts.append('<link name="l%d"><inertial><origin xyz="%r 0 0"/><mass value="%r"/>'
                     '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>'
                     '</link>' % (i, length, mass))
    return robot(*parts)


@pytest.mark.slow
def test_5000_link_chain_loads_and_matches_the_closed_form():
    n, length, mass, g = 5000, 0.01, 0.01, 9.81
    xml = chain_of_point_masses(n, length, mass)
    model = RobotModel.from_urdf_string(xml, strict=True)
    assert model.dof == n and model.warnings == ()
    q = np.random.default_rng(0).uniform(-0.01, 0.01, n)
    # Closed form (statics of a planar chain): absolute angle theta_k = q_1 + ... + q_k about
    # y; a rotation by theta about y maps x to (cos theta, 0, -sin theta); mass k sits at the
    # end of link k.  Holding torque of joint i: g_i = -m g sum_{k >= i} (x_k - x_joint_i).
    theta = np.cumsum(q)
    x_end = np.cumsum(length * np.cos(theta))
    x_joint = np.concatenate(([0.0], x_end[:-1]))
    suffix = np.cumsum(x_end[::-1])[::-1]
    counts = np.arange(n, 0, -1)
    expected = -mass * g * (suffix - counts * x_joint)
    torques = model.gravity_torques(q)
    assert np.max(np.abs(torques - expected)) <= 1e-9 * np.max(np.abs(expected))
    robot_object, _ = parse_urdf(xml)
    assert len(tree_lines(robot_object, 'l0')) == n + 1
    assert not [f for f in check_urdf_string(xml) if f.severity != 'info']


def test_deep_chain_error_is_the_loaders_not_a_recursion_error():
    xml = chain_of_point_masses(3000, 0.01, 0.01).replace(
        '<mass value="0.01"/>', '<mass value="-0.01"/>', 1)
    with pytest.raises(URDFError, match='negative mass'):
        RobotModel.from_urdf_string(xml)


def massless_gripper() -> str:
    return robot(*ARM, link('finger', None), joint('grip', 'b', 'finger', kind='prismatic'),
                 link('tip', None), joint('tip_joint', 'finger', 'tip', kind='fixed'))


def test_forward_dynamics_on_massless_subtree_names_the_joint():
    model = RobotModel.from_urdf_string(massless_gripper())
    assert any(w.startswith("joint 'grip':") and 'moves no mass' in w for w in model.warnings)
    zero = np.zeros(model.dof)
    for q in (zero, np.zeros((3, model.dof))):
        with pytest.raises(ValueError) as info:
            model.forward_dynamics(q, q, q)
        assert not isinstance(info.value, np.linalg.LinAlgError)
        message = str(info.value)
        assert "'grip'" in message and 'move no mass' in message
        assert "'j1'" not in message and "'j2'" not in message
    # everything else is computable
    assert model.inverse_dynamics(zero, zero, zero).shape == (3,)
    # a payload on the finger gives the joint something to move
    model.set_payload('finger', 0.2)
    qdd = model.forward_dynamics(zero, zero, zero)
    assert np.all(np.isfinite(qdd))
    with pytest.raises(URDFError, match='grip'):
        RobotModel.from_urdf_string(massless_gripper(), strict=True)


def test_singular_mass_matrix_without_massless_joint_is_still_a_value_error():
    # A point mass on the axis of a revolute joint: mass > 0, but M[1, 1] = 0.
    xml = robot(link('base', None), joint('j1', 'base', 'a'), link('a'),
                '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/>'
                '<origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>'
                '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>',
                '<link name="b"><inertial><mass value="1"/><inertia ixx="0" ixy="0" ixz="0" '
                'iyy="0" iyz="0" izz="0"/></inertial></link>')
    model = RobotModel.from_urdf_string(xml)
    zero = np.zeros(2)
    with pytest.raises(ValueError, match='not positive definite'):
        model.forward_dynamics(zero, zero, zero)


def test_only_the_first_inertial_and_origin_count_as_in_urdfdom():
    xml = robot(link('base', None), joint('j1', 'base', 'a'),
                '<link name="a"><inertial><mass value="2"/>%s</inertial>'
                '<inertial><mass value="5"/>%s</inertial></link>' % (INERTIA, INERTIA))
    assert math.isclose(RobotModel.from_urdf_string(xml).total_mass, 2.0)


@pytest.mark.parametrize('xml, words', [
    ('<robot><link name="a"/></robot>', 'no name'),
    ('<model name="x"><link name="a"/></model>', '<model>'),
    ('<robot name="x"><link name="a"/>', 'does not parse'),
    ('', 'empty'),
])
def test_not_a_urdf(xml, words):
    with pytest.raises(URDFError, match=words):
        RobotModel.from_urdf_string(xml)


def test_model_messages_print_numpy_nan_plainly():
    model = RobotModel.from_urdf_string(robot(*ARM))
    nan = np.float64('nan')
    with pytest.raises(ValueError) as info:
        model.to_model_order(model.joint_names, [nan, 0.0])
    assert 'is nan' in str(info.value) and 'np.float64' not in str(info.value)
    with pytest.raises(ValueError) as info:
        RobotModel(model.tree, friction_velocity=nan)
    assert 'nan' in str(info.value) and 'np.float64' not in str(info.value)


def test_declared_encoding_is_honoured(tmp_path):
    text = robot(*ARM).replace('<?xml version="1.0"?>',
                               '<?xml version="1.0" encoding="ISO-8859-1"?>')
    text = text.replace('name="r"', 'name="bras_\u00e9"')
    path = tmp_path / 'latin1.urdf'
    path.write_bytes(text.encode('iso-8859-1'))
    assert RobotModel.from_urdf_file(str(path)).name == 'bras_\u00e9'
    assert RobotModel.from_urdf_string(text).name == 'bras_\u00e9'
    assert RobotModel.from_urdf_string(text.encode('iso-8859-1')).name == 'bras_\u00e9'


# What urdfdom loads, this loader loads: prefixes it ignores, defaults (a warning; strict
# refuses)
ONE_JOINT = ('<robot name="r"%s><link name="base"/><link name="l1"><inertial><mass value="1"/>'
             '<origin xyz="0.1 0 0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
             'izz="0.01"/></inertial></link><joint name="j1" type="revolute"><parent link="base"/>'
             '<child link="l1"/>%s<limit lower="%s" upper="%s" effort="5" velocity="1"/></joint>'
             '%s</robot>')


@pytest.mark.parametrize('xml', [
    ONE_JOINT % ('', '<axis xyz="0 1 0"/>', -1, 1, '<xacro:property name="m" value="1"/>'),
    ONE_JOINT % ('', '<axis xyz="0 1 0" xacro:if="1"/>', -1, 1, ''),
    ONE_JOINT % ('', '<axis xyz="0 1 0"/>', -1, 1, '<gazebo><sdf:thing/></gazebo>'),
], ids=['element', 'attribute', 'nested'])
def test_an_undeclared_namespace_prefix_loads_as_urdfdom_loads_it(xml):
    model = RobotModel.from_urdf_string(xml)
    assert model.joint_names == ('j1',) and model.tree.joints[0].axis == (0.0, 1.0, 0.0)
    assert model.warnings == ()   # nothing the dynamics read: no warning, strict loads it
    RobotModel.from_urdf_string(xml, strict=True)


def test_an_axis_without_xyz_loads_with_the_urdf_default_and_a_warning():
    xml = ONE_JOINT % ('', '<axis/>', -1, 1, '')
    model = RobotModel.from_urdf_string(xml)
    assert model.tree.joints[0].axis == (1.0, 0.0, 0.0)
    assert any("joint 'j1'" in w and 'without xyz' in w for w in model.warnings)
    with pytest.raises(URDFError, match='strict'):
        RobotModel.from_urdf_string(xml, strict=True)


def test_lower_limit_above_upper_loads_with_a_warning_strict_refuses():
    xml = ONE_JOINT % ('', '<axis xyz="0 1 0"/>', 1, -1, '')
    model = RobotModel.from_urdf_string(xml)
    assert any('lower limit 1 is above upper limit -1' in w for w in model.warnings)
    assert np.isinf(model.position_lower[0]) and np.isinf(model.position_upper[0])
    with pytest.raises(URDFError, match='strict'):
        RobotModel.from_urdf_string(xml, strict=True)


def test_malformed_xml_and_no_actuated_joint_stay_clear_errors():
    with pytest.raises(URDFError, match='does not parse'):
        RobotModel.from_urdf_string('<robot name="r"><link name="a"></robot>')
    with pytest.raises(URDFError, match='no actuated joint'):
        RobotModel.from_urdf_string('<robot name="r"><link name="a"/><link name="b"/><joint '
                                    'name="j" type="fixed"><parent link="a"/><child '
                                    'link="b"/></joint></robot>')


def test_every_reader_reads_a_description_the_same_way():
    # one parse (model.urdf_loader.read_robot_element): a default namespace on <robot> and a
    # xacro leftover read as urdfdom reads them, by the dynamics, the viewer's visuals, the
    # ros2_control set-up and the model check alike
    from manip_dynamics.model_check import link_shapes
    from manip_dynamics.ros.launch_support.ros2_control_setup import command_joint_names
    from manip_dynamics.viewer.urdf_visuals import parse_visuals
    visual = '<visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual>'
    xml = (ONE_JOINT % (' xmlns="http://www.ros.org"', '<axis xyz="0 1 0"/>', -1, 1,
                        '<xacro:property name="m" value="1"/>')).replace(
        '<link name="base"/>', '<link name="base">%s</link>' % visual)
    assert RobotModel.from_urdf_string(xml).joint_names == ('j1',)
    assert [v.link for v in parse_visuals(xml).visuals] == ['base']
    assert command_joint_names(xml) == ['j1']
    assert list(link_shapes(xml)) == ['base']
    # and the same refusal everywhere
    for read in (RobotModel.from_urdf_string, parse_visuals, command_joint_names):
        with pytest.raises(URDFError, match='the XML does not parse'):
            read('<robot name="r"><link')


def test_the_description_is_parsed_in_one_place():
    # no module but the loader parses XML text itself
    import manip_dynamics
    package = pathlib.Path(manip_dynamics.__file__).parent
    parsers = [str(path.relative_to(package)) for path in package.rglob('*.py')
               if 'fromstring(' in path.read_text(encoding='utf-8')]
    assert parsers == ['model/urdf_loader.py'], parsers
