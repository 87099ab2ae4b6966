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
Check that bad input raises a ValueError subclass naming the offending item.

Every case asserts the exception type (``InputError`` for arguments, ``URDFError`` for
descriptions, both ``ValueError``) and that the message contains the offending joint,
link, element or argument name.
"""

import math

import numpy as np
import pytest

from manip_dynamics import InputError, RobotModel, URDFError

INERTIA = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>'


def arm(*, link2_inertial=None, j1_axis='0 0 1', j2_type='prismatic', j2_parent='link1',
        extra='') -> str:
    """Return a 2-DoF test arm (revolute j1, prismatic j2, fixed tool) with one defect."""
    inertial2 = link2_inertial or ('<inertial><origin xyz="0.1 0 0"/><mass value="1.0"/>%s'
                                   '</inertial>' % INERTIA)
    return '''<?xml version="1.0"?>
<robot name="bad">
  <link name="base"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="link1"/><axis xyz="%s"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <link name="link1"><inertial><mass value="2.0"/>%s</inertial></link>
  <joint name="j2" type="%s">
    <parent link="%s"/><child link="link2"/><origin xyz="0.5 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <link name="link2">%s</link>
  <joint name="tool_joint" type="fixed">
    <parent link="link2"/><child link="tool"/><origin xyz="0.2 0 0"/>
  </joint>
  <link name="tool"/>
  %s
</robot>''' % (j1_axis, INERTIA, j2_type, j2_parent, inertial2, extra)


def _raises(cls, needle, func, *args, **kwargs):
    with pytest.raises(cls) as info:
        func(*args, **kwargs)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert needle in message, 'expected %r in %r' % (needle, message)
    return message


@pytest.fixture(scope='module')
def model() -> RobotModel:
    return RobotModel.from_urdf_string(arm())


# ---------------------------------------------------------------- arguments
def test_valid_arm_loads(model):
    assert model.joint_names == ('j1', 'j2')
    assert model.inverse_dynamics([0.1, 0.2], [0, 0], [0, 0]).shape == (2,)


@pytest.mark.parametrize('bad', [np.zeros(3), np.zeros(1), np.zeros((2, 3)), np.zeros((1, 2, 2)),
                                 'abc', [[0.0, 0.0], [0.0]]])
def test_wrong_shapes(model, bad):
    _raises(InputError, 'q', model.gravity_torques, bad)
    _raises(InputError, 'q', model.mass_matrix, bad)
    _raises(InputError, 'qdd', model.inverse_dynamics, np.zeros(2), np.zeros(2), bad)
    _raises(InputError, 'tau', model.forward_dynamics, np.zeros(2), np.zeros(2), bad)
    _raises(InputError, 'qd', model.coriolis_matrix, np.zeros(2), bad)


def test_mismatched_batches(model):
    _raises(InputError, 'qd', model.inverse_dynamics, np.zeros((3, 2)), np.zeros((4, 2)),
            np.zeros((3, 2)))
    _raises(InputError, 'qd', model.coriolis_matrix, np.zeros((3, 2)), np.zeros(2))
    _raises(InputError, 'wrench', model.inverse_dynamics, np.zeros((3, 2)), np.zeros((3, 2)),
            np.zeros((3, 2)), external_wrenches={'tool': np.zeros((4, 6))})


@pytest.mark.parametrize('value', [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize('joint', [0, 1])
def test_nan_inf_names_argument_and_joint(model, value, joint):
    names = ('j1', 'j2')
    for k, arg in enumerate(('q', 'qd', 'qdd')):
        args = [np.full(2, 0.1) for _ in range(3)]
        args[k][joint] = value
        msg = _raises(InputError, names[joint], model.inverse_dynamics, *args)
        assert arg in msg
    for k, arg in enumerate(('q', 'qd', 'tau')):
        args = [np.full(2, 0.1) for _ in range(3)]
        args[k][joint] = value
        msg = _raises(InputError, names[joint], model.forward_dynamics, *args)
        assert arg in msg
    bad = np.full(2, 0.1)
    bad[joint] = value
    _raises(InputError, names[joint], model.mass_matrix, bad)
    _raises(InputError, names[joint], model.gravity_torques, bad)
    _raises(InputError, names[joint], model.coriolis_matrix, np.zeros(2), bad)
    _raises(InputError, names[joint], model.coriolis_torques, bad, np.zeros(2))
    _raises(InputError, names[joint], model.potential_energy, bad)
    _raises(InputError, names[joint], model.kinetic_energy, np.zeros(2), bad)
    _raises(InputError, names[joint], model.friction_torques, bad)
    _raises(InputError, names[joint], model.jacobian, bad, 'tool')
    _raises(InputError, names[joint], model.to_model_order, ['j2', 'j1'], bad[::-1])
    batch = np.zeros((3, 2))
    batch[2, joint] = value
    msg = _raises(InputError, names[joint], model.gravity_torques, batch)
    assert '2' in msg


def test_nan_in_wrench(model):
    _raises(InputError, 'tool', model.inverse_dynamics, np.zeros(2), np.zeros(2), np.zeros(2),
            external_wrenches={'tool': [0, 0, math.nan, 0, 0, 0]})


def test_unknown_link_names(model):
    z = np.zeros(2)
    _raises(InputError, 'nowhere', model.inverse_dynamics, z, z, z,
            external_wrenches={'nowhere': np.zeros(6)})
    _raises(InputError, 'nowhere', model.forward_dynamics, z, z, z,
            external_wrenches={'nowhere': np.zeros(6)})
    _raises(InputError, 'nowhere', model.jacobian, z, 'nowhere')
    _raises(InputError, 'nowhere', model.jacobian_dot_qd, z, z, 'nowhere')
    _raises(InputError, 'nowhere', model.link_transform, z, 'nowhere')
    _raises(InputError, 'nowhere', model.cartesian_dynamics, z, z, 'nowhere')
    _raises(InputError, 'nowhere', model.set_payload, 'nowhere', 1.0)
    _raises(InputError, 'nowhere', model.remove_payload, 'nowhere')


def test_bad_wrench_and_direction(model):
    z = np.zeros(2)
    _raises(InputError, 'tool', model.inverse_dynamics, z, z, z,
            external_wrenches={'tool': [1.0, 2.0]})
    _raises(InputError, 'sideways', model.cartesian_dynamics, z, z, 'tool',
            directions=('x', 'sideways'))
    _raises(InputError, 'frame', model.jacobian, z, 'tool', frame='body')


def test_unknown_joint(model):
    _raises(InputError, 'j9', model.to_model_order, ['j1', 'j9'], [0.0, 0.0])
    _raises(InputError, 'j9', model.joint_index, 'j9')
    _raises(InputError, 'j9', model.with_joint_dynamics, damping={'j9': 1.0})
    _raises(InputError, 'j2', model.to_model_order, ['j1'], [0.0])  # missing joint
    _raises(InputError, 'j1', model.to_model_order, ['j1', 'j1'], [0.0, 1.0])  # duplicate


def test_bad_payload(model):
    _raises(InputError, 'mass', model.set_payload, 'tool', -1.0)
    _raises(InputError, 'tool', model.set_payload, 'tool', 1.0,
            inertia=(1.0, 0, 0, 0.1, 0, 0.1))
    _raises(InputError, 'base', model.set_payload, 'base', 1.0)


# ---------------------------------------------------------------- descriptions
def test_malformed_xml():
    _raises(URDFError, 'malformed', RobotModel.from_urdf_string, '<robot name="x"><link name=')


def test_empty_string():
    _raises(URDFError, 'empty', RobotModel.from_urdf_string, '')


def test_missing_file(tmp_path):
    missing = str(tmp_path / 'none.urdf')
    _raises(URDFError, missing, RobotModel.from_urdf_file, missing)


def test_negative_mass_names_link():
    inertial = '<inertial><mass value="-1.0"/>%s</inertial>' % INERTIA
    _raises(URDFError, 'negative mass', RobotModel.from_urdf_string,
            arm(link2_inertial=inertial))


@pytest.mark.parametrize('inertial, what', [
    ('<inertial><mass value="1.0"/><inertia ixx="-0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
     'izz="0.01"/></inertial>', 'not positive semi-definite'),
    ('<inertial><mass value="1.0"/><inertia ixx="0.01" ixy="0.02" ixz="0" iyy="0.01" iyz="0" '
     'izz="0.01"/></inertial>', 'not positive semi-definite'),
    ('<inertial><mass value="1.0"/><inertia ixx="1.0" ixy="0" ixz="0" iyy="0.1" iyz="0" '
     'izz="0.1"/></inertial>', 'triangle inequality'),
])
def test_suspect_inertia_warns_and_strict_refuses(inertial, what):
    # Physically suspect, not impossible: loaded as written with a warning naming the link
    # (docs/PYTHON_API.md); strict=True refuses it (test_suspect_inertias.py has more).
    xml = arm(link2_inertial=inertial)
    model = RobotModel.from_urdf_string(xml)
    assert [w for w in model.warnings if 'link2' in w and what in w], model.warnings
    msg = _raises(URDFError, 'link2', RobotModel.from_urdf_string, xml, strict=True)
    assert what in msg


def test_zero_axis_names_joint():
    _raises(URDFError, 'j1', RobotModel.from_urdf_string, arm(j1_axis='0 0 0'))


@pytest.mark.parametrize('kind', ['floating', 'planar'])
def test_floating_and_planar_joints_name_joint(kind):
    msg = _raises(URDFError, 'j2', RobotModel.from_urdf_string, arm(j2_type=kind))
    assert kind in msg


def test_missing_parent_link():
    _raises(URDFError, 'ghost', RobotModel.from_urdf_string, arm(j2_parent='ghost'))


def test_two_roots():
    _raises(URDFError, 'orphan', RobotModel.from_urdf_string,
            arm(extra='<link name="orphan"/>'))


def test_unknown_root_and_tip():
    xml = arm()
    _raises(URDFError, 'nowhere', RobotModel.from_urdf_string, xml, root_link='nowhere')
    _raises(URDFError, 'nowhere', RobotModel.from_urdf_string, xml, tip_link='nowhere')


def test_tip_not_below_root():
    msg = _raises(URDFError, 'link1', RobotModel.from_urdf_string, arm(), root_link='link2',
                  tip_link='link1')
    assert 'link2' in msg


def test_bad_gravity():
    _raises(InputError, 'gravity', RobotModel.from_urdf_string, arm(), gravity=(0.0, math.nan))
