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
Feed-forward torques of a planned trajectory: against Craig's closed form, and by use.

References: Craig eq. 6.58 typed from the book for the planar 2R arm, with rotor inertia
``I_a qdd`` and viscous + Coulomb friction of sec. 6.11 written out here; and the physical
test of a feed-forward: the simulated arm driven open loop by it follows the trajectory.
"""

import math

import numpy as np
import pytest
from test_closed_forms import craig_tau as craig_6_58

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control.feedforward import (
    feedforward_torques, joint_trajectory_with_feedforward)
from manip_dynamics.planning import retime
from manip_dynamics.simulation import Simulator

G = 9.81   # test_closed_forms' gravity, along -y
#: planar_2r's README: l1 = 1.0, l2 = 0.8, m1 = 2.0, m2 = 1.5 (point masses at the tips).
L1, L2, M1, M2 = 1.0, 0.8, 2.0, 1.5
J1, J2 = 'planar_2r_joint1', 'planar_2r_joint2'
ARMATURE = {J1: 0.3, J2: 0.1}
DAMPING = {J1: 0.7, J2: 0.4}
COULOMB = {J1: 1.5, J2: 0.8}
FRICTION_VELOCITY = 0.05


def craig_tau(q, qd, qdd):
    """Craig eq. 6.58 (the planar 2R arm, masses at the link ends, gravity along -y)."""
    return craig_6_58(L1, L2, M1, M2, q, qd, qdd)


def craig_gravity(q):
    """Eq. 6.58 at rest: G(q)."""
    return craig_tau(q, np.zeros(2), np.zeros(2))


def written_out_extras(qd, qdd):
    """Rotor inertia and friction, per joint, from the numbers set on the model."""
    names = (J1, J2)
    return np.array([ARMATURE[j] * qdd[i] + DAMPING[j] * qd[i]
                     + COULOMB[j] * math.tanh(qd[i] / FRICTION_VELOCITY)
                     for i, j in enumerate(names)])


@pytest.fixture(scope='module')
def arm():
    model = RobotModel.from_urdf_file(urdf_path('planar_2r'), gravity=(0.0, -G, 0.0))
    assert tuple(model.joint_names) == (J1, J2)
    return model.with_joint_dynamics(damping=DAMPING, friction=COULOMB, armature=ARMATURE,
                                     friction_velocity=FRICTION_VELOCITY)


def states(count=20, seed=3):
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-2.5, 2.5, 2) for _ in range(3)) for _ in range(count)]


@pytest.mark.parametrize('q, qd, qdd', states())
def test_feedforward_is_craig_6_58_with_rotor_inertia_and_friction(arm, q, qd, qdd):
    np.testing.assert_allclose(feedforward_torques(arm, q, qd, qdd),
                               craig_tau(q, qd, qdd) + written_out_extras(qd, qdd),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize('q, qd, qdd', states(5, seed=4))
def test_gravity_excluded_for_drivers_that_add_it(arm, q, qd, qdd):
    """Franka's effort interface and UR's direct torque control add g(q) themselves."""
    np.testing.assert_allclose(
        feedforward_torques(arm, q, qd, qdd, gravity='exclude'),
        craig_tau(q, qd, qdd) - craig_gravity(q) + written_out_extras(qd, qdd),
        rtol=1e-9, atol=1e-9)


def test_without_friction_and_rotor_inertia_it_is_the_rigid_body_torque(arm):
    q, qd, qdd = states(1, seed=5)[0]
    np.testing.assert_allclose(
        feedforward_torques(arm, q, qd, qdd, friction=False, armature=False),
        craig_tau(q, qd, qdd), rtol=1e-9, atol=1e-9)


def test_batches_are_rows(arm):
    rows = states(6, seed=6)
    q, qd, qdd = (np.array([r[k] for r in rows]) for k in range(3))
    batch = feedforward_torques(arm, q, qd, qdd)
    assert batch.shape == (6, 2)
    for k in range(6):
        np.testing.assert_allclose(batch[k], craig_tau(q[k], qd[k], qdd[k])
                                   + written_out_extras(qd[k], qdd[k]), rtol=1e-9, atol=1e-9)


def test_bad_gravity_mode_and_bad_input_are_named(arm):
    with pytest.raises(ValueError, match='gravity must be one of include, exclude'):
        feedforward_torques(arm, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], gravity='none')
    with pytest.raises(ValueError):
        feedforward_torques(arm, [0.0, np.nan], [0.0, 0.0], [0.0, 0.0])


# ---------------------------------------------------------------- the retimed trajectory
#: A move of every joint of cobot7 from a bent pose (joint 4 lies in [-3.07, -0.07]).
START = np.array([0.0, 0.3, 0.0, -1.6, 0.0, 1.2, 0.0])
PATH = [START, START + np.array([0.4, -0.3, 0.2, -0.8, 0.3, 0.4, -0.5])]


@pytest.fixture(scope='module')
def cobot7():
    return RobotModel.from_urdf_file(urdf_path('cobot7')).with_joint_dynamics(
        armature={'cobot7_joint%d' % i: 0.05 for i in range(1, 8)})


def test_retimed_points_carry_the_feedforward_at_their_states(cobot7):
    path = PATH
    traj = retime(cobot7, path, acceleration_limits=3.0)
    doc = joint_trajectory_with_feedforward(traj, 50.0, cobot7)
    without = traj.to_joint_trajectory(50.0)
    assert all(point['effort'] == [] for point in without['points'])
    q = np.array([p['positions'] for p in doc['points']])
    qd = np.array([p['velocities'] for p in doc['points']])
    qdd = np.array([p['accelerations'] for p in doc['points']])
    effort = np.array([p['effort'] for p in doc['points']])
    # M qdd + C qd + g with the armature on M's diagonal, from the mass matrix and the
    # Coriolis matrix (CRBA and Christoffel symbols: not the recursive Newton-Euler above)
    for k in range(0, len(q), 7):
        expected = (cobot7.mass_matrix(q[k], include_armature=True) @ qdd[k]
                    + cobot7.coriolis_matrix(q[k], qd[k]) @ qd[k]
                    + cobot7.gravity_torques(q[k]) + cobot7.friction_torques(qd[k]))
        np.testing.assert_allclose(effort[k], expected, rtol=1e-8, atol=1e-8)
    exclude = joint_trajectory_with_feedforward(traj, 50.0, cobot7, gravity='exclude')
    np.testing.assert_allclose(
        np.array([p['effort'] for p in exclude['points']]),
        effort - cobot7.gravity_torques(q), atol=1e-9)


def test_the_feedforward_alone_drives_the_simulated_arm_along_the_trajectory(cobot7):
    """Open loop, no feedback at all: the arm follows within 5 mrad over the whole move."""
    path = PATH
    traj = retime(cobot7, path, acceleration_limits=3.0)
    dt = 1e-4
    sim = Simulator(cobot7, path[0], dt=dt, integrator='rk4', include_friction=True,
                    include_armature=True, limits='spring',
                    clamp_effort=False)
    worst = 0.0
    for k in range(int(traj.duration / dt)):
        # the torque of the middle of the step: the step's average to second order
        q, qd, qdd = traj.sample((k + 0.5) * dt)
        sim.step(feedforward_torques(cobot7, q[0], qd[0], qdd[0]))
        q_d, _, _ = traj.sample(sim.t)
        worst = max(worst, float(np.max(np.abs(sim.q - q_d[0]))))
    assert traj.duration > 0.5
    assert worst < 5e-3, worst
    # without the model's part (gravity alone) the arm does not follow
    sim = Simulator(cobot7, path[0], dt=1e-3, include_friction=True, include_armature=True)
    for k in range(int(traj.duration / 1e-3)):
        q, _, _ = traj.sample(k * 1e-3)
        sim.step(cobot7.gravity_torques(q[0]))
    q_d, _, _ = traj.sample(sim.t)
    assert np.max(np.abs(sim.q - q_d[0])) > 10 * 5e-3


def test_a_model_of_another_arm_is_refused(cobot7, arm):
    traj = retime(cobot7, PATH, acceleration_limits=3.0)
    with pytest.raises(ValueError, match='joints'):
        joint_trajectory_with_feedforward(traj, 50.0, arm)
