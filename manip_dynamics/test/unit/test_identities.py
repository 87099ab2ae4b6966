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
Check physical and algebraic identities on the bundled URDFs and on random trees.

Exact identities (same quantity two ways) use a relative tolerance of 1e-10; identities
checked against central finite differences (step 1e-6, truncation error O(h^2) plus
rounding O(eps / h)) use 1e-6 relative to the size of the compared quantity.
"""

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path

BUNDLED = ('planar_2r', 'puma560', 'cobot7', 'gripper_arm')
RANDOM_SEEDS = (1, 2, 3, 4, 5, 6)
EXACT = 1e-10
FD_TOL = 1e-6
H = 1e-6


def _load(name: str) -> RobotModel:
    if name.startswith('random'):
        seed = int(name[len('random'):])
        return RobotModel.from_urdf_string(urdf_factory.random_tree_urdf(seed, 3 + seed))
    gravity = (0.0, -9.81, 0.0) if name == 'planar_2r' else (0.0, 0.0, -9.81)
    return RobotModel.from_urdf_file(urdf_path(name), gravity=gravity)


MODELS = list(BUNDLED) + ['random%d' % s for s in RANDOM_SEEDS]


@pytest.fixture(params=MODELS, scope='module')
def model(request) -> RobotModel:
    return _load(request.param)


def _state(model: RobotModel, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = model.dof
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -3.0)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, 3.0)
    return rng.uniform(lower, upper), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)


def _close(actual, expected, rel, what=''):
    scale = 1.0 + np.max(np.abs(expected))
    err = np.max(np.abs(np.asarray(actual) - np.asarray(expected)))
    assert err <= rel * scale, '%s: error %.3e > %.1e * %.3e' % (what, err, rel, scale)


def test_mass_matrix_symmetric_positive_definite(model):
    for seed in range(5):
        q, _, _ = _state(model, seed)
        m = model.mass_matrix(q)
        _close(m, m.T, EXACT, 'symmetry')
        assert np.linalg.eigvalsh(m).min() > 0.0


def test_mdot_minus_2c_skew(model):
    for seed in range(3):
        q, qd, _ = _state(model, seed)
        mdot = (model.mass_matrix(q + H * qd) - model.mass_matrix(q - H * qd)) / (2 * H)
        s = mdot - 2.0 * model.coriolis_matrix(q, qd)
        _close(s + s.T, np.zeros_like(s), FD_TOL * (1 + np.abs(mdot).max()), 'skew')


def test_c_qd_equals_coriolis_torques(model):
    for seed in range(5):
        q, qd, _ = _state(model, seed)
        _close(model.coriolis_matrix(q, qd) @ qd, model.coriolis_torques(q, qd), EXACT)


def test_c_equals_christoffel_matrix_from_finite_differences(model):
    q, qd, _ = _state(model, 11)
    n = model.dof
    dm = np.empty((n, n, n))  # dm[k] = dM/dq_k
    for k in range(n):
        e = np.zeros(n)
        e[k] = H
        dm[k] = (model.mass_matrix(q + e) - model.mass_matrix(q - e)) / (2 * H)
    # c_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i); C_ij = sum_k c_ijk qd_k
    christoffel = 0.5 * (np.einsum('kij->ijk', dm) + np.einsum('jik->ijk', dm)
                         - np.einsum('ijk->ijk', dm))
    expected = christoffel @ qd
    _close(model.coriolis_matrix(q, qd), expected, FD_TOL * (1 + np.abs(dm).max()),
           'Christoffel')


def test_forward_of_inverse_dynamics(model):
    for seed in range(4):
        q, qd, qdd = _state(model, seed)
        tau = model.inverse_dynamics(q, qd, qdd)
        _close(model.forward_dynamics(q, qd, tau), qdd, 1e-8, 'FD(ID)')


def test_forward_of_inverse_dynamics_with_friction_armature_wrenches(model):
    names = model.joint_names
    tuned = model.with_joint_dynamics(
        damping={n: 0.1 * (i + 1) for i, n in enumerate(names)},
        friction=dict.fromkeys(names, 0.3),
        armature={n: 0.05 * (i + 1) for i, n in enumerate(names)})
    rng = np.random.default_rng(3)
    links = [name for name in tuned.link_names if name != tuned.root_link]
    wrenches = {link: rng.uniform(-5, 5, 6) for link in links[-2:]}
    for seed in range(3):
        q, qd, qdd = _state(model, seed)
        kwargs = {'include_friction': True, 'include_armature': True,
                  'external_wrenches': wrenches}
        tau = tuned.inverse_dynamics(q, qd, qdd, **kwargs)
        _close(tuned.forward_dynamics(q, qd, tau, **kwargs), qdd, 1e-8, 'FD(ID) full')
        # the opt-in terms add exactly b qd + fc tanh(qd / v) and armature * qdd
        plain = tuned.inverse_dynamics(q, qd, qdd, external_wrenches=wrenches)
        b = 0.1 * np.arange(1, model.dof + 1)
        extra = b * qd + 0.3 * np.tanh(qd / tuned.friction_velocity) + b / 2 * qdd
        _close(tau - plain, extra, EXACT, 'friction + armature')


def test_gravity_and_nonlinear_effects_are_inverse_dynamics(model):
    zero = np.zeros(model.dof)
    for seed in range(4):
        q, qd, _ = _state(model, seed)
        _close(model.gravity_torques(q), model.inverse_dynamics(q, zero, zero), EXACT)
        _close(model.nonlinear_effects(q, qd), model.inverse_dynamics(q, qd, zero), EXACT)
        _close(model.nonlinear_effects(q, qd),
               model.coriolis_torques(q, qd) + model.gravity_torques(q), EXACT)


def test_inverse_dynamics_is_m_qdd_plus_nle(model):
    for seed in range(4):
        q, qd, qdd = _state(model, seed)
        _close(model.inverse_dynamics(q, qd, qdd),
               model.mass_matrix(q) @ qdd + model.nonlinear_effects(q, qd), EXACT)


def test_batch_equals_loop(model):
    states = [_state(model, seed) for seed in range(5)]
    q, qd, qdd = (np.array(x) for x in zip(*states))
    rng = np.random.default_rng(0)
    link = model.link_names[-1]
    w_batch = rng.uniform(-3, 3, (5, 6))
    tau = model.inverse_dynamics(q, qd, qdd)
    calls = {
        'inverse_dynamics': (lambda *a: model.inverse_dynamics(*a), (q, qd, qdd)),
        'inverse_dynamics+wrench': (
            lambda *a, k=None: model.inverse_dynamics(
                *a, external_wrenches={link: w_batch if k is None else w_batch[k]}),
            (q, qd, qdd)),
        'mass_matrix': (model.mass_matrix, (q,)),
        'coriolis_matrix': (model.coriolis_matrix, (q, qd)),
        'coriolis_torques': (model.coriolis_torques, (q, qd)),
        'gravity_torques': (model.gravity_torques, (q,)),
        'nonlinear_effects': (model.nonlinear_effects, (q, qd)),
        'forward_dynamics': (model.forward_dynamics, (q, qd, tau)),
        'friction_torques': (model.friction_torques, (qd,)),
        'kinetic_energy': (model.kinetic_energy, (q, qd)),
        'potential_energy': (model.potential_energy, (q,)),
    }
    for what, (func, args) in calls.items():
        batch = np.asarray(func(*args))
        assert batch.shape[0] == 5, what
        for k in range(5):
            if what == 'inverse_dynamics+wrench':
                single = func(*(a[k] for a in args), k=k)
            else:
                single = func(*(a[k] for a in args))
            assert np.shape(single) == batch.shape[1:], what
            _close(batch[k], single, 1e-12, what)


def test_energy(model):
    for seed in range(3):
        q, qd, _ = _state(model, seed)
        m = model.mass_matrix(q)
        _close(model.kinetic_energy(q, qd), 0.5 * qd @ m @ qd, EXACT, 'kinetic')
        grad = np.empty(model.dof)
        for k in range(model.dof):
            e = np.zeros(model.dof)
            e[k] = H
            grad[k] = (model.potential_energy(q + e) - model.potential_energy(q - e)) / (2 * H)
        _close(grad, model.gravity_torques(q), FD_TOL, 'dV/dq == g')


def test_power_balance(model):
    """
    Check d(T + V)/dt = qd . tau along qdd = FD(q, qd, tau) (frictionless).

    tau is chosen as ID(q, qd, qdd) for a moderate qdd, so that the trajectory's third
    derivatives stay moderate (random torques on the PUMA's light wrist give qdd ~ 1e4).
    """
    h = 1e-4
    for seed in range(3):
        q, qd, qdd = _state(model, seed)
        tau = model.inverse_dynamics(q, qd, qdd)
        qdd = model.forward_dynamics(q, qd, tau)

        def energy(sign):
            qs = q + sign * h * qd + 0.5 * h * h * qdd
            qds = qd + sign * h * qdd
            return model.kinetic_energy(qs, qds) + model.potential_energy(qs)

        de_dt = (energy(1.0) - energy(-1.0)) / (2 * h)
        power = qd @ tau
        assert abs(de_dt - power) <= 1e-5 * (1 + abs(power) + np.abs(tau).max()), (de_dt, power)


def test_external_wrench_is_minus_jacobian_transpose(model):
    rng = np.random.default_rng(5)
    for link in model.link_names:
        q, qd, qdd = _state(model, 7)
        w = rng.uniform(-10, 10, 6)
        expected = (model.inverse_dynamics(q, qd, qdd)
                    - model.jacobian(q, link, frame='link').T @ w)
        _close(model.inverse_dynamics(q, qd, qdd, external_wrenches={link: w}), expected,
               EXACT, link)


def _skew_vector(a: np.ndarray) -> np.ndarray:
    return 0.5 * np.array([a[2, 1] - a[1, 2], a[0, 2] - a[2, 0], a[1, 0] - a[0, 1]])


def test_jacobian_against_finite_differences_of_pose(model):
    for link in model.link_names:
        q, qd, _ = _state(model, 9)
        plus = model.link_transform(q + H * qd, link)
        minus = model.link_transform(q - H * qd, link)
        pose = model.link_transform(q, link)
        rot = pose[:3, :3]
        v = (plus[:3, 3] - minus[:3, 3]) / (2 * H)
        omega = _skew_vector((plus[:3, :3] - minus[:3, :3]) / (2 * H) @ rot.T)
        world = np.concatenate([v, omega])
        _close(model.jacobian(q, link) @ qd, world, FD_TOL, link + ' world')
        local = np.concatenate([rot.T @ v, rot.T @ omega])
        _close(model.jacobian(q, link, frame='link') @ qd, local, FD_TOL, link + ' link')


def test_jacobian_dot_qd_against_finite_differences(model):
    for link in model.link_names:
        q, qd, _ = _state(model, 13)
        jqd_plus = model.jacobian(q + H * qd, link) @ qd
        jqd_minus = model.jacobian(q - H * qd, link) @ qd
        expected = (jqd_plus - jqd_minus) / (2 * H)
        world = model.jacobian_dot_qd(q, qd, link)
        _close(world, expected, FD_TOL, link)
        rot = model.link_transform(q, link)[:3, :3]
        _close(model.jacobian_dot_qd(q, qd, link, frame='link'),
               np.concatenate([rot.T @ world[:3], rot.T @ world[3:]]), EXACT, link + ' link')
