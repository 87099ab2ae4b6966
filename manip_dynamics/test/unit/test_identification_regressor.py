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
The regressor ``tau = Y pi`` and the base parameters, against independent references.

References: the library's own recursive Newton-Euler (``inverse_dynamics``, a different
algorithm: wrenches about the centre of mass, no parameter linearisation) for the identity
``Y pi = ID`` on every bundled arm and random trees, with friction and armature, for the
model's parameters and for random ones; Pinocchio's ``computeJointTorqueRegressor`` column
for column after mapping joints by name and the inertia entries' order; and for the base
parameters the textbook count of the PUMA 560 (36, Gautier 1990; Khalil and Dombre
ch. 12) and ``Y_b K pi = Y pi``.
"""

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import bundled_robots, urdf_path
from manip_dynamics.errors import InputError
from manip_dynamics.identification.base_parameters import random_states
from manip_dynamics.identification.regressor import (
    body_from_parameters, body_parameters, model_with_parameters, parameter_names,
    parameters_from_pseudo_inertia, pseudo_inertia)

REL = 1e-10


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1.0))


def _with_joint_terms(model: RobotModel, rng: np.random.Generator) -> RobotModel:
    names = model.joint_names
    return model.with_joint_dynamics(
        damping={j: float(v) for j, v in zip(names, rng.uniform(0.0, 2.0, len(names)))},
        friction={j: float(v) for j, v in zip(names, rng.uniform(0.0, 3.0, len(names)))},
        armature={j: float(v) for j, v in zip(names, rng.uniform(0.0, 0.5, len(names)))})


def _models():
    for name in bundled_robots():
        yield name, RobotModel.from_urdf_file(urdf_path(name))
    for seed in range(6):
        yield 'tree%d' % seed, RobotModel.from_urdf_string(
            urdf_factory.random_tree_urdf(seed, 7))


@pytest.mark.parametrize('name,model', list(_models()))
def test_regressor_times_parameters_is_inverse_dynamics(name, model):
    rng = np.random.default_rng(7)
    model = _with_joint_terms(model, rng)
    q, qd, qdd = rng.normal(size=(3, 25, model.dof)) * np.array([[1.0], [2.0], [5.0]])[:, None]
    for friction in (False, True):
        for armature in (False, True):
            y = model.regressor(q, qd, qdd, friction=friction, armature=armature)
            pi = model.inertial_parameters(friction=friction, armature=armature)
            assert y.shape == (25, model.dof, pi.shape[0])
            tau = model.inverse_dynamics(q, qd, qdd, include_friction=friction,
                                         include_armature=armature)
            assert _relative(y @ pi, tau) < REL, (name, friction, armature)
    # one state gives (n, p)
    assert model.regressor(q[0], qd[0], qdd[0]).shape == (model.dof, 10 * model.dof)


@pytest.mark.parametrize('seed', range(4))
def test_random_parameters(seed):
    """Random (not necessarily physical) parameters: a model carrying them has ID = Y pi."""
    rng = np.random.default_rng(100 + seed)
    model = RobotModel.from_urdf_string(urdf_factory.random_tree_urdf(seed + 20, 8))
    n = model.dof
    pi = rng.normal(size=13 * n + n)
    pi[0:10 * n:10] = rng.uniform(0.1, 3.0, n)        # masses > 0 (com = h / m)
    pi[10 * n:13 * n:3] = rng.uniform(0.0, 1.0, n)    # viscous >= 0
    pi[10 * n + 1:13 * n:3] = rng.uniform(0.0, 1.0, n)  # Coulomb >= 0
    pi[10 * n + 2:13 * n:3] = 0.0                      # the model has no offset
    pi[13 * n:] = rng.uniform(0.0, 0.3, n)
    other = model_with_parameters(model, pi, friction=True, armature=True)
    np.testing.assert_allclose(other.inertial_parameters(friction=True, armature=True), pi,
                               rtol=1e-12, atol=1e-12)
    q, qd, qdd = rng.normal(size=(3, 20, n))
    y = model.regressor(q, qd, qdd, friction=True, armature=True)
    tau = other.inverse_dynamics(q, qd, qdd, include_friction=True, include_armature=True)
    assert _relative(y @ pi, tau) < REL
    # an offset adds a constant torque
    pi[10 * n + 2:13 * n:3] = rng.normal(size=n)
    assert _relative(y @ pi, tau + pi[10 * n + 2:13 * n:3]) < REL


def test_payload_is_in_the_parameters():
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    model.set_payload('cobot7_flange', 1.5, (0.05, 0.0, 0.02))
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.normal(size=(3, 10, 7))
    assert _relative(model.regressor(q, qd, qdd) @ model.inertial_parameters(),
                     model.inverse_dynamics(q, qd, qdd)) < REL


def test_body_parameter_round_trip_and_pseudo_inertia():
    rng = np.random.default_rng(1)
    mass = 2.5
    com = np.array([0.1, -0.05, 0.2])
    i_c = urdf_factory.random_inertia(rng, mass)
    params = body_parameters(mass, com, i_c)
    m2, c2, i2 = body_from_parameters(params)
    assert m2 == mass
    np.testing.assert_allclose(c2, com, atol=1e-15)
    np.testing.assert_allclose(i2, i_c, atol=1e-14)
    j = pseudo_inertia(params)
    # J = integral [r; 1][r; 1]^T dm: a point mass m at c has J = m [c; 1][c; 1]^T
    point = pseudo_inertia(body_parameters(mass, com, np.zeros((3, 3))))
    np.testing.assert_allclose(point, mass * np.outer(np.r_[com, 1.0], np.r_[com, 1.0]),
                               atol=1e-14)
    assert np.min(np.linalg.eigvalsh(j)) > 0.0
    np.testing.assert_allclose(parameters_from_pseudo_inertia(j), params, atol=1e-14)


def test_bad_input_is_a_clear_error():
    model = RobotModel.from_urdf_file(urdf_path('planar_2r'))
    with pytest.raises(InputError, match='qd'):
        model.regressor([0.0, 0.0], [0.0, np.nan], [0.0, 0.0])
    with pytest.raises(InputError, match='shape'):
        model.regressor([0.0, 0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(InputError, match='parameters'):
        model_with_parameters(model, np.zeros(3))


# ---------------------------------------------------------------------- Pinocchio
pin = None
try:
    import pinocchio as pin
except ImportError:  # pragma: no cover - the reason is given by the skip below
    pass


@pytest.mark.skipif(pin is None, reason='pin (Pinocchio) not installed')
@pytest.mark.parametrize('name,model', list(_models()))
def test_against_pinocchio_regressor(name, model):
    """
    Pinocchio: same bodies (fixed links merged), same frames (joint = child link frame).

    Its parameter order per joint is ``m, m c, Ixx, Ixy, Iyy, Ixz, Iyz, Izz``; continuous
    joints take (cos, sin) in its q.
    """
    xml = (open(urdf_path(name)).read() if not name.startswith('tree')
           else urdf_factory.random_tree_urdf(int(name[4:]), 7))
    pmodel = pin.buildModelFromXML(xml)
    data = pmodel.createData()
    rng = np.random.default_rng(11)
    n = model.dof
    perm = [0, 1, 2, 3, 4, 5, 7, 6, 8, 9]   # our Ixz, Iyy are Pinocchio's 7th, 6th
    cols, idx_q, idx_v, cont = [], [], [], []
    for name_j in model.joint_names:
        jid = pmodel.getJointId(name_j)
        joint = pmodel.joints[jid]
        cols += [10 * (jid - 1) + c for c in perm]
        idx_q.append(joint.idx_q)
        idx_v.append(joint.idx_v)
        cont.append(joint.nq == 2)
    for _ in range(5):
        q, qd, qdd = rng.normal(size=(3, n))
        qp = np.zeros(pmodel.nq)
        v = np.zeros(pmodel.nv)
        a = np.zeros(pmodel.nv)
        for i in range(n):
            if cont[i]:
                qp[idx_q[i]], qp[idx_q[i] + 1] = np.cos(q[i]), np.sin(q[i])
            else:
                qp[idx_q[i]] = q[i]
            v[idx_v[i]], a[idx_v[i]] = qd[i], qdd[i]
        y_pin = pin.computeJointTorqueRegressor(pmodel, data, qp, v, a)
        ours = model.regressor(q, qd, qdd)
        assert _relative(ours, y_pin[np.ix_(idx_v, cols)]) < 1e-9, name


# ---------------------------------------------------------------------- base parameters
def test_base_parameters_puma560_count_and_identity():
    model = RobotModel.from_urdf_file(urdf_path('puma560'))
    base = model.base_parameters()
    # Gautier 1990 / Khalil and Dombre: the PUMA 560 has 36 base inertial parameters
    assert base.count == 36
    q, qd, qdd = random_states(model, 40, seed=9)
    y = model.regressor(q, qd, qdd)
    pi = model.inertial_parameters()
    assert _relative(base.base_regressor(y) @ base.base_values(pi), y @ pi) < 1e-10
    # the base regressor has full column rank
    yb = base.base_regressor(y).reshape(-1, base.count)
    assert np.linalg.matrix_rank(yb) == base.count


@pytest.mark.parametrize('name', bundled_robots())
def test_base_parameters_identity_with_friction(name):
    model = RobotModel.from_urdf_file(urdf_path(name))
    base = model.base_parameters(friction=True, armature=True)
    q, qd, qdd = random_states(model, 30, seed=4)
    y = model.regressor(q, qd, qdd, friction=True, armature=True)
    rng = np.random.default_rng(2)
    pi = rng.normal(size=y.shape[-1])   # any pi: the identity is structural
    assert _relative(base.base_regressor(y) @ base.base_values(pi), y @ pi) < 1e-9
    assert len(base.names) == base.count
    assert len(base.standard_names) == y.shape[-1]
    # friction of every moving joint is identifiable on its own
    for k in range(model.dof):
        assert 'fv%d' % (k + 1) in base.names


def test_base_parameter_names_in_words():
    """Planar 2R about z, gravity along -z: only 4 rigid-body combinations (Craig 6.7)."""
    model = RobotModel.from_urdf_file(urdf_path('planar_2r'))
    base = model.base_parameters()
    assert base.count == 4
    assert any(name.startswith('I1zz + ') and 'm2' in name for name in base.names)
    assert 'I2zz' in base.names
    assert parameter_names(1) == ['m1', 'm1 c1x', 'm1 c1y', 'm1 c1z', 'I1xx', 'I1xy', 'I1xz',
                                  'I1yy', 'I1yz', 'I1zz']
