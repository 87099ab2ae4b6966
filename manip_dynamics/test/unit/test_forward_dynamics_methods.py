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
The two forward-dynamics methods (ABA and Cholesky of the CRBA mass matrix) agree.

Both are reached through ``forward_dynamics(..., method=...)``; 'auto' picks ABA from
``ABA_MIN_DOF`` joints on.  The 120-joint chain is also checked against Pinocchio's
``aba`` (an independent implementation) at the suite's 1e-8 relative bound.
"""

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import bundled_robots, urdf_path
from manip_dynamics.errors import InputError
from manip_dynamics.robot_model import ABA_MIN_DOF

REL = 1e-8


def _rel(ours: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(ours - ref)) / max(float(np.max(np.abs(ref))), 1.0))


@pytest.mark.parametrize('robot', bundled_robots())
def test_aba_equals_cholesky_solve(robot):
    rigid = RobotModel.from_urdf_file(urdf_path(robot))
    model = rigid.with_joint_dynamics(armature=dict.fromkeys(rigid.joint_names, 0.05))
    rng = np.random.default_rng(7)
    n = model.dof
    q = rng.uniform(-1.0, 1.0, (5, n))
    qd = rng.uniform(-2.0, 2.0, (5, n))
    tau = rng.uniform(-10.0, 10.0, (5, n))
    link = model.link_names[-1]
    wrench = rng.normal(size=(5, 6))
    for kwargs in ({}, {'include_armature': True},
                   {'external_wrenches': {link: wrench}, 'include_friction': True}):
        aba = model.forward_dynamics(q, qd, tau, method='aba', **kwargs)
        chol = model.forward_dynamics(q, qd, tau, method='cholesky', **kwargs)
        np.testing.assert_allclose(aba, chol, rtol=1e-9, atol=1e-9)
        for k in range(5):  # the single-state path gives the batch's rows
            one = model.forward_dynamics(q[k], qd[k], tau[k], method='aba',
                                         **{key: ({link: wrench[k]} if key ==
                                                  'external_wrenches' else value)
                                            for key, value in kwargs.items()})
            np.testing.assert_allclose(one, aba[k], rtol=1e-12, atol=1e-12)


def test_aba_cholesky_and_pinocchio_on_a_120_joint_chain():
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    n = 120
    xml = urdf_factory.random_chain_urdf(3, n)
    model = RobotModel.from_urdf_string(xml)
    ref_model = pin.buildModelFromXML(xml)
    ref_model.gravity.linear = model.gravity
    data = ref_model.createData()
    names = [ref_model.names[j] for j in range(1, ref_model.njoints)]
    assert list(model.joint_names) == names  # a chain: the same joint order
    rng = np.random.default_rng(11)
    q, qd, tau = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    ref = pin.aba(ref_model, data, q, qd, tau).copy()
    assert _rel(model.forward_dynamics(q, qd, tau, method='aba'), ref) <= REL
    assert _rel(model.forward_dynamics(q, qd, tau, method='cholesky'), ref) <= REL
    assert _rel(model.forward_dynamics(q, qd, tau), ref) <= REL  # 'auto' is ABA here
    # and ID(FD(tau)) gives tau back through the O(n) path
    qdd = model.forward_dynamics(q, qd, tau, method='aba')
    assert _rel(model.inverse_dynamics(q, qd, qdd), tau) <= REL


def test_auto_method_choice_and_bad_method():
    small = RobotModel.from_urdf_file(urdf_path('cobot7'))
    assert small.dof < ABA_MIN_DOF
    z = np.zeros(small.dof)
    with pytest.raises(InputError, match='method'):
        small.forward_dynamics(z, z, z, method='gauss')


def test_aba_reports_non_finite_input_and_massless_joint():
    model = RobotModel.from_urdf_file(urdf_path('planar_2r'))
    with pytest.raises(InputError, match='qd'):
        model.forward_dynamics([0.1, 0.2], [0.0, np.nan], [0.0, 0.0], method='aba')
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" '
                'iyz="0" izz="0.1"/></inertial>')
    massless = (  # joint j2 moves a link without mass: M is singular
        '<robot name="r"><link name="base"/><link name="a">%s</link><link name="b"/>'
        '<joint name="j1" type="continuous"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/></joint>'
        '<joint name="j2" type="continuous"><parent link="a"/><child link="b"/>'
        '<origin xyz="1 0 0"/><axis xyz="0 0 1"/></joint></robot>' % inertial)
    bad = RobotModel.from_urdf_string(massless)
    z = np.zeros(bad.dof)
    for method in ('aba', 'cholesky'):
        with pytest.raises(InputError, match="singular.*'j2'"):
            bad.forward_dynamics(z, z, z, method=method)
