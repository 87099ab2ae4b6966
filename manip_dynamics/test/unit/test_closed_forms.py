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
Compare the library with textbook closed forms typed in by hand.

* Craig, Introduction to Robotics, sec. 6.7-6.8: planar 2R arm, point masses at the distal
  link ends, gravity along -Y (eq. 6.58, 6.60, 6.61, 6.62).
* Lumelsky, Sensing, Intelligence, Motion, p. 35 (eq. 2.12-2.14): planar 2R arm of uniform
  rods with a force and a moment at the tip.
* Craig example 6.6 (eq. 6.100-6.103): Cartesian mass matrix and gravity of the 2R arm in
  the tip frame; the world-frame Cartesian terms from the hand-written Jacobian.
* Craig exercise 6.4 (prismatic joints) and example 6.5 (polar RP arm): hand-derived.

Tolerance: 1e-10 relative to the size of the expected value (plus 1e-10 absolute); the
closed forms are exact, so only rounding separates them from the recursive algorithms.
"""

import math

import numpy as np
import pytest
import urdf_factory
from urdf_factory import craig_g, craig_m, craig_v

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path

G = 9.81
RTOL = 1e-10
ATOL = 1e-10


def _states(count: int, n: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    out = [(np.zeros(n), np.zeros(n), np.zeros(n)),
           (np.full(n, 0.5 * math.pi), np.ones(n), -np.ones(n))]
    for _ in range(count):
        out.append(tuple(rng.uniform(-3.0, 3.0, n) for _ in range(3)))
    return out


# ---------------------------------------------------------------- Craig sec. 6.7
def craig_tau(l1, l2, m1, m2, q, qd, qdd):
    """Craig eq. 6.58, typed from the book."""
    c1, c2 = math.cos(q[0]), math.cos(q[1])
    s2, c12 = math.sin(q[1]), math.cos(q[0] + q[1])
    t1 = (m2 * l2 ** 2 * (qdd[0] + qdd[1]) + m2 * l1 * l2 * c2 * (2 * qdd[0] + qdd[1])
          + (m1 + m2) * l1 ** 2 * qdd[0] - m2 * l1 * l2 * s2 * qd[1] ** 2
          - 2 * m2 * l1 * l2 * s2 * qd[0] * qd[1] + m2 * l2 * G * c12
          + (m1 + m2) * l1 * G * c1)
    t2 = (m2 * l1 * l2 * c2 * qdd[0] + m2 * l1 * l2 * s2 * qd[0] ** 2 + m2 * l2 * G * c12
          + m2 * l2 ** 2 * (qdd[0] + qdd[1]))
    return np.array([t1, t2])


CRAIG_ARMS = {
    # bundled planar_2r: l1 = 1.0, l2 = 0.8, m1 = 2.0, m2 = 1.5 (its README)
    'bundled': ((1.0, 0.8, 2.0, 1.5), None),
    'factory': ((0.7, 0.45, 3.1, 1.2), urdf_factory.craig_2r_urdf(0.7, 0.45, 3.1, 1.2)),
}


@pytest.fixture(params=sorted(CRAIG_ARMS), scope='module')
def craig_arm(request):
    params, xml = CRAIG_ARMS[request.param]
    if xml is None:
        model = RobotModel.from_urdf_file(urdf_path('planar_2r'), gravity=(0.0, -G, 0.0))
    else:
        model = RobotModel.from_urdf_string(xml, gravity=(0.0, -G, 0.0))
    return params, model


def test_craig_inverse_dynamics_eq_6_58(craig_arm):
    params, model = craig_arm
    for q, qd, qdd in _states(8, 2, 1):
        expected = craig_tau(*params, q, qd, qdd)
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), expected,
                                   rtol=RTOL, atol=ATOL * (1 + np.abs(expected).max()))


def test_craig_m_v_g_eq_6_60_to_6_62(craig_arm):
    params, model = craig_arm
    for q, qd, _ in _states(8, 2, 2):
        np.testing.assert_allclose(model.mass_matrix(q), craig_m(*params, q),
                                   rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(model.coriolis_torques(q, qd), craig_v(*params, q, qd),
                                   rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(model.coriolis_matrix(q, qd) @ qd,
                                   craig_v(*params, q, qd), rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(model.gravity_torques(q), craig_g(*params, q),
                                   rtol=RTOL, atol=ATOL)


def test_craig_forward_dynamics_solves_6_59(craig_arm):
    params, model = craig_arm
    for q, qd, tau in _states(6, 2, 3):
        # qdd = M^-1 (tau - V - G) with M, V, G from eq. 6.60-6.62
        expected = np.linalg.solve(craig_m(*params, q),
                                   tau - craig_v(*params, q, qd) - craig_g(*params, q))
        np.testing.assert_allclose(model.forward_dynamics(q, qd, tau), expected,
                                   rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- Lumelsky eq. 2.12-2.14
def lumelsky_tau(l1, l2, m1, m2, i1, i2, q, qd, qdd, f_tip):
    """
    Lumelsky eq. 2.14 for uniform rods, I_i about the centre of mass.

    The OCR of the seed is garbled; the torques below were re-derived by hand (Newton-Euler,
    centres of mass at l_i / 2) and agree with the readable parts of eq. 2.14:

      n_{1,2} = qdd1 (I2 + m2 l1 l2 c2 / 2 + m2 l2^2 / 4) + qdd2 (I2 + m2 l2^2 / 4)
                + m2 l1 l2 qd1^2 s2 / 2 + m2 l2 g c12 / 2 + [tip load]
      n_{0,1} = qdd1 (I1 + I2 + m2 l1 l2 c2 + m1 l1^2 / 4 + m2 l2^2 / 4 + m2 l1^2)
                + qdd2 (I2 + m2 l2^2 / 4 + m2 l1 l2 c2 / 2)
                - m2 l1 l2 qd2^2 s2 / 2 - m2 l1 l2 qd1 qd2 s2
                + (m2 l2 c12 / 2 + l1 (m1 / 2 + m2) c1) g + [tip load]

    Tip load: the environment pushes the tip with F = (fx, fy) and a moment nz about z,
    given in the tip (link-2) frame.  The tip velocity in link-2 axes is (Craig eq. 5.66)
    v = [[l1 s2, 0], [l1 c2 + l2, l2]] qd, and the angular velocity is qd1 + qd2, so the
    joint torques gain -(l1 s2 fx + (l1 c2 + l2) fy + nz) and -(l2 fy + nz).  In the book
    the load is f_{2,3} = -F, the force link 2 exerts on the environment, in base axes;
    the printed joint-2 term "- l2 s12 f23x - l2 c12 f23y" has a sign the OCR lost
    (J^T f_{2,3} gives -l2 s12 f23x + l2 c12 f23y); test_lumelsky_base_frame_force checks
    that base-axes form.
    """
    fx, fy, nz = f_tip
    c1, c2, s2 = math.cos(q[0]), math.cos(q[1]), math.sin(q[1])
    c12 = math.cos(q[0] + q[1])
    n12 = (qdd[0] * (i2 + m2 * l1 * l2 * c2 / 2 + m2 * l2 ** 2 / 4)
           + qdd[1] * (i2 + m2 * l2 ** 2 / 4) + m2 * l1 * l2 * qd[0] ** 2 * s2 / 2
           + m2 * l2 * G * c12 / 2)
    n01 = (qdd[0] * (i1 + i2 + m2 * l1 * l2 * c2 + m1 * l1 ** 2 / 4 + m2 * l2 ** 2 / 4
                     + m2 * l1 ** 2)
           + qdd[1] * (i2 + m2 * l2 ** 2 / 4 + m2 * l1 * l2 * c2 / 2)
           - m2 * l1 * l2 * qd[1] ** 2 * s2 / 2 - m2 * l1 * l2 * qd[0] * qd[1] * s2
           + (m2 * l2 * c12 / 2 + l1 * (m1 / 2 + m2) * c1) * G)
    n01 -= l1 * s2 * fx + (l1 * c2 + l2) * fy + nz
    n12 -= l2 * fy + nz
    return np.array([n01, n12])


ROD = {'l1': 0.9, 'l2': 0.6, 'm1': 4.0, 'm2': 2.5, 'r': 0.02}


@pytest.fixture(scope='module')
def rods():
    xml = urdf_factory.rods_2r_urdf(ROD['l1'], ROD['l2'], ROD['m1'], ROD['m2'], ROD['r'])
    model = RobotModel.from_urdf_string(xml, gravity=(0.0, -G, 0.0))
    # izz of a solid cylinder about its centre of mass: m (3 r^2 + l^2) / 12
    i1 = ROD['m1'] * (3 * ROD['r'] ** 2 + ROD['l1'] ** 2) / 12
    i2 = ROD['m2'] * (3 * ROD['r'] ** 2 + ROD['l2'] ** 2) / 12
    return model, (ROD['l1'], ROD['l2'], ROD['m1'], ROD['m2'], i1, i2)


def test_lumelsky_free_arm(rods):
    model, params = rods
    for q, qd, qdd in _states(8, 2, 4):
        expected = lumelsky_tau(*params, q, qd, qdd, (0.0, 0.0, 0.0))
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), expected,
                                   rtol=RTOL, atol=ATOL * 10)


def test_lumelsky_tip_force_in_tip_frame(rods):
    model, params = rods
    rng = np.random.default_rng(5)
    for q, qd, qdd in _states(8, 2, 6):
        fx, fy, nz = rng.uniform(-20.0, 20.0, 3)
        fz, tx, ty = rng.uniform(-20.0, 20.0, 3)  # out of plane: no joint torque
        wrench = {'tool': [fx, fy, fz, tx, ty, nz]}
        expected = lumelsky_tau(*params, q, qd, qdd, (fx, fy, nz))
        np.testing.assert_allclose(
            model.inverse_dynamics(q, qd, qdd, external_wrenches=wrench), expected,
            rtol=RTOL, atol=ATOL * 100)


def test_lumelsky_base_frame_force(rods):
    model, params = rods
    l1, l2 = params[0], params[1]
    rng = np.random.default_rng(7)
    for q, qd, qdd in _states(6, 2, 8):
        f23 = rng.uniform(-15.0, 15.0, 2)  # force link 2 exerts on the environment, base axes
        s1, c1 = math.sin(q[0]), math.cos(q[0])
        s12, c12 = math.sin(q[0] + q[1]), math.cos(q[0] + q[1])
        # J^T f_{2,3} with the base-axes tip Jacobian of the 2R arm
        load = np.array([(-l1 * s1 - l2 * s12) * f23[0] + (l1 * c1 + l2 * c12) * f23[1],
                         -l2 * s12 * f23[0] + l2 * c12 * f23[1]])
        expected = lumelsky_tau(*params, q, qd, qdd, (0.0, 0.0, 0.0)) + load
        # the environment's force on the tip, -f23, rotated into the tool frame
        f_env = np.array([[c12, s12], [-s12, c12]]) @ (-f23)
        wrench = {'tool': [f_env[0], f_env[1], 0.0, 0.0, 0.0, 0.0]}
        np.testing.assert_allclose(
            model.inverse_dynamics(q, qd, qdd, external_wrenches=wrench), expected,
            rtol=RTOL, atol=ATOL * 100)


# ---------------------------------------------------------------- Craig example 6.6
def test_craig_example_6_6_cartesian_mass_matrix_tip_frame(craig_arm):
    (l1, l2, m1, m2), model = craig_arm
    rng = np.random.default_rng(9)
    for _ in range(10):
        q = np.array([rng.uniform(-3, 3), rng.choice([-1, 1]) * rng.uniform(0.3, 2.8)])
        qd = rng.uniform(-2, 2, 2)
        cart = model.cartesian_dynamics(q, qd, 'tool', frame='link', directions=('x', 'y'))
        s2, c2 = math.sin(q[1]), math.cos(q[1])
        c1, s12, c12 = math.cos(q[0]), math.sin(q[0] + q[1]), math.cos(q[0] + q[1])
        # eq. 6.100: J in the tip frame
        np.testing.assert_allclose(cart.jacobian,
                                   [[l1 * s2, 0.0], [l1 * c2 + l2, l2]], atol=1e-12)
        # eq. 6.103: M_x = diag(m2 + m1 / s2^2, m2); G_x = [m1 g c1 / s2 + m2 g s12, m2 g c12]
        expected_m = np.diag([m2 + m1 / s2 ** 2, m2])
        np.testing.assert_allclose(cart.mass_matrix, expected_m, rtol=1e-9,
                                   atol=1e-9 * expected_m.max())
        np.testing.assert_allclose(cart.gravity_term,
                                   [m1 * G * c1 / s2 + m2 * G * s12, m2 * G * c12],
                                   rtol=1e-9, atol=1e-9)
        assert not cart.near_singular


def test_craig_2r_cartesian_world_frame(craig_arm):
    """World x-y: M_x = J^-T M J^-1, V_x = J^-T V - M_x Jdot qd, G_x = J^-T G (Craig 6.99)."""
    params, model = craig_arm
    l1, l2 = params[0], params[1]
    rng = np.random.default_rng(10)
    for _ in range(10):
        q = np.array([rng.uniform(-3, 3), rng.choice([-1, 1]) * rng.uniform(0.3, 2.8)])
        qd = rng.uniform(-2, 2, 2)
        s1, c1 = math.sin(q[0]), math.cos(q[0])
        s12, c12 = math.sin(q[0] + q[1]), math.cos(q[0] + q[1])
        w12 = qd[0] + qd[1]
        jac = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
        jdot_qd = np.array([-l1 * c1 * qd[0] ** 2 - l2 * c12 * w12 ** 2,
                            -l1 * s1 * qd[0] ** 2 - l2 * s12 * w12 ** 2])
        j_inv_t = np.linalg.inv(jac).T
        m_x = j_inv_t @ craig_m(*params, q) @ np.linalg.inv(jac)
        cart = model.cartesian_dynamics(q, qd, 'tool', directions=('x', 'y'))
        np.testing.assert_allclose(cart.jacobian, jac, atol=1e-12)
        np.testing.assert_allclose(cart.mass_matrix, m_x, rtol=1e-9, atol=1e-9 * np.abs(m_x).max())
        np.testing.assert_allclose(cart.velocity_term,
                                   j_inv_t @ craig_v(*params, q, qd) - m_x @ jdot_qd,
                                   rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(cart.gravity_term, j_inv_t @ craig_g(*params, q),
                                   rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- prismatic joints
def test_vertical_prismatic():
    """Craig ex. 6.4 style, one sliding joint along z: f = m (qdd + g); M = m; no C."""
    mass = 3.7
    model = RobotModel.from_urdf_string(urdf_factory.vertical_prismatic_urdf(mass))
    for q, qd, qdd in _states(6, 1, 11):
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), mass * (qdd + G),
                                   rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(model.mass_matrix(q), [[mass]], rtol=RTOL)
        np.testing.assert_allclose(model.coriolis_matrix(q, qd), [[0.0]], atol=ATOL)
        np.testing.assert_allclose(model.potential_energy(q), mass * G * (0.3 + 0.1 + q[0]),
                                   rtol=RTOL)
    # gravity tilted by 30 degrees from -z: only its z component loads the joint
    tilted = RobotModel.from_urdf_string(
        urdf_factory.vertical_prismatic_urdf(mass),
        gravity=(G * math.sin(math.pi / 6), 0.0, -G * math.cos(math.pi / 6)))
    np.testing.assert_allclose(tilted.gravity_torques([0.2]), [mass * G * math.cos(math.pi / 6)],
                               rtol=RTOL)


def polar_tau(m1, l1, i1, m2, i2, q, qd, qdd):
    """
    Polar RP arm in the x-y plane, gravity along -y (Lagrange, derived by hand).

    T = 1/2 (i1 + m1 l1^2 + i2 + m2 r^2) thd^2 + 1/2 m2 rd^2,  V = g s1 (m1 l1 + m2 r), so
    tau = (i1 + m1 l1^2 + i2 + m2 r^2) thdd + 2 m2 r rd thd + (m1 l1 + m2 r) g c1
    f   = m2 rdd - m2 r thd^2 + m2 g s1
    """
    r, rd = q[1], qd[1]
    inertia = i1 + m1 * l1 ** 2 + i2 + m2 * r ** 2
    return np.array([
        inertia * qdd[0] + 2 * m2 * r * rd * qd[0] + (m1 * l1 + m2 * r) * G * math.cos(q[0]),
        m2 * qdd[1] - m2 * r * qd[0] ** 2 + m2 * G * math.sin(q[0])])


def test_polar_rp_arm():
    params = (2.0, 0.3, 0.05, 1.4, 0.02)
    model = RobotModel.from_urdf_string(urdf_factory.polar_rp_urdf(*params),
                                        gravity=(0.0, -G, 0.0))
    m1, l1, i1, m2, i2 = params
    for q, qd, qdd in _states(8, 2, 12):
        expected = polar_tau(*params, q, qd, qdd)
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), expected,
                                   rtol=RTOL, atol=ATOL * (1 + np.abs(expected).max()))
        np.testing.assert_allclose(
            model.mass_matrix(q), np.diag([i1 + m1 * l1 ** 2 + i2 + m2 * q[1] ** 2, m2]),
            rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(model.coriolis_torques(q, qd),
                                   [2 * m2 * q[1] * qd[1] * qd[0], -m2 * q[1] * qd[0] ** 2],
                                   rtol=RTOL, atol=ATOL * (1 + np.abs(expected).max()))
