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
Joint PD gains with a stated delay margin, checked by a closed loop built here.

The reference: the linearized coupled arm ``M(q) e'' = u`` discretized with a zero-order
hold by scipy (``cont2discrete``), the command ``u_k = -P e_{k-d} - D e'_{k-d}`` from a
measurement ``d`` cycles old, the delay kept as a line of past *states* (the library keeps
past commands), and its spectral radius, at the poses the gains were designed over and at
poses they never saw. The same construction reproduces the figures measured for the gains
the launch wrote before (0.973 up to 2 cycles, 0.992 at 3, 1.037 at 4 at 250 Hz)
and checks the ones it writes now (design_joint_gains).
"""

import numpy as np
import pytest
from scipy.signal import cont2discrete

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control.gains import (
    design_joint_gains, gravity_stiffness, sample_poses, spectral_radius)
from manip_dynamics.ros.launch_support.ros2_control_setup import controllers_parameters, \
    default_initial_positions, DELAY_BUDGET_CYCLES

ARMS = ('cobot7', 'planar_2r', 'puma560', 'gripper_arm')


def closed_loop_radius(mass, p, d, rate, delay, stiffness=None):
    """Spectral radius of the sampled, delayed PD loop about one pose (built independently)."""
    n = mass.shape[0]
    m_inv = np.linalg.inv(mass)
    spring = np.zeros((n, n)) if stiffness is None else stiffness
    a_c = np.block([[np.zeros((n, n)), np.eye(n)], [-m_inv @ spring, np.zeros((n, n))]])
    b_c = np.vstack([np.zeros((n, n)), m_inv])
    a_d, b_d, _, _, _ = cont2discrete((a_c, b_c, np.eye(2 * n), np.zeros((2 * n, n))),
                                      1.0 / rate, method='zoh')
    k = np.hstack([np.diag(p), np.diag(d)])
    blocks = delay + 1   # x_k, x_{k-1}, ..., x_{k-delay}
    size = 2 * n * blocks
    loop = np.zeros((size, size))
    loop[:2 * n, :2 * n] = a_d
    loop[:2 * n, 2 * n * delay:2 * n * blocks] += -b_d @ k
    for j in range(1, blocks):
        loop[2 * n * j:2 * n * (j + 1), 2 * n * (j - 1):2 * n * j] = np.eye(2 * n)
    return float(np.max(np.abs(np.linalg.eigvals(loop))))


def load(arm):
    with open(urdf_path(arm)) as stream:
        xml = stream.read()
    model = RobotModel.from_urdf_string(xml)
    return model, xml, default_initial_positions(model, xml)


@pytest.fixture(scope='module')
def designs():
    out = {}
    for arm in ARMS:
        model, xml, start = load(arm)
        out[arm] = (model, start, design_joint_gains(model, 250.0, start=start))
    return out


@pytest.mark.parametrize('arm', ARMS)
def test_designed_gains_are_stable_up_to_the_delay_budget_over_the_joint_range(designs, arm):
    model, start, gains = designs[arm]
    assert gains.delay_cycles == 4   # 16 ms at 250 Hz
    assert np.all(gains.p > 0.0) and np.all(gains.d > 0.0)
    designed = sample_poses(model, start)
    unseen = sample_poses(model, start, count=6, seed=99)[1:]
    # with gravity's stiffness in the loop where the gains outweigh it (a positive hold
    # stiffness), else the loop they were designed on without it (gravity_stiffness is
    # checked against Pinocchio below)
    with_gravity = gains.hold_stiffness > 0.0

    def gravity(q):
        return gravity_stiffness(model, q) if with_gravity else None
    for q in np.vstack([designed, unseen]):
        mass = model.mass_matrix(q, include_armature=True)
        for delay in range(gains.delay_cycles + 1):
            assert closed_loop_radius(mass, gains.p, gains.d, 250.0, delay,
                                      gravity(q)) < 1.0, (q, delay)
    # the stated margin holds too, and one cycle more than it does not (the search is right)
    worst = [closed_loop_radius(model.mass_matrix(q, include_armature=True), gains.p,
                                gains.d, 250.0, gains.delay_margin_cycles, gravity(q))
             for q in designed]
    assert max(worst) < 1.0
    assert gains.delay_margin_cycles >= 2 * gains.delay_cycles


@pytest.mark.parametrize('arm', ['cobot7', 'puma560'])
def test_gravity_stiffness_is_pinocchios_gravity_derivative(arm):
    """K = dG/dq against Pinocchio's analytic derivative of the generalized gravity."""
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    model, xml, start = load(arm)
    ref = pin.buildModelFromXML(xml)
    ref.gravity.linear = model.gravity
    data = ref.createData()
    for q in sample_poses(model, start, count=3, seed=11):
        expected = pin.computeGeneralizedGravityDerivatives(ref, data, q)
        got = gravity_stiffness(model, q)
        scale = max(1.0, float(np.max(np.abs(expected))))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * scale)


def test_the_loop_with_gravity_matches_the_independent_construction():
    """spectral_radius with K against scipy's zero-order hold of M e'' = -K e + u, delayed."""
    model, _, start = load('cobot7')
    gains = design_joint_gains(model, 250.0, start=start, delay_budget=0.008)
    for q in sample_poses(model, start, count=3, seed=4):
        mass = model.mass_matrix(q, include_armature=True)
        k = gravity_stiffness(model, q)
        for delay in (0, 2, 4):
            assert spectral_radius(mass, gains.p, gains.d, 250.0, delay, k) == pytest.approx(
                closed_loop_radius(mass, gains.p, gains.d, 250.0, delay, k), abs=1e-9)


def test_hold_stiffness_is_the_least_eigenvalue_of_p_plus_k_over_the_poses():
    """At cobot7's ready pose, 2 cycles at 250 Hz, gravity outweighs joint 3's stiffness."""
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    model, xml, start = load('cobot7')
    gains = design_joint_gains(model, 250.0, start=start, delay_budget=0.008)
    ref = pin.buildModelFromXML(xml)
    ref.gravity.linear = model.gravity
    data = ref.createData()
    least = min(np.linalg.eigvalsh(np.diag(gains.p) + pin.computeGeneralizedGravityDerivatives(
        ref, data, q))[0] for q in sample_poses(model, start))
    assert gains.hold_stiffness == pytest.approx(least, abs=1e-3)
    at_ready = np.linalg.eigvalsh(np.diag(gains.p) + pin.computeGeneralizedGravityDerivatives(
        ref, data, start))[0]
    assert at_ready < 0.0   # the drift measured behind the real controller_manager


def test_the_stiffness_floor_lifts_light_joints_within_its_cap(designs):
    model, start, gains = designs['gripper_arm']
    free = design_joint_gains(model, 250.0, start=start, floor_error=0.0)
    assert np.all(gains.p >= free.p * (1.0 - 1e-9) * (gains.bandwidth / free.bandwidth) ** 2)
    assert np.any(gains.p > 1.5 * free.p * (gains.bandwidth / free.bandwidth) ** 2)


def test_the_gains_the_launch_wrote_lost_stability_at_four_cycles():
    """The figures for cobot7 at 250 Hz, from the gains the launch wrote until then."""
    model, _, start = load('cobot7')
    mass = model.mass_matrix(start, include_armature=True)
    m = 1.0 / np.diag(np.linalg.inv(mass))   # p = m w^2, d = 2 m w, w = 0.1 x the rate
    w = 25.0
    p, d = m * w ** 2, 2.0 * m * w
    radius = [closed_loop_radius(mass, p, d, 250.0, delay) for delay in range(5)]
    assert radius[2] == pytest.approx(0.973, abs=1e-3)
    assert radius[3] == pytest.approx(0.992, abs=1e-3)
    assert radius[4] == pytest.approx(1.037, abs=1e-3)


@pytest.mark.parametrize('arm', ARMS)
def test_the_gains_the_launch_writes_hold_twice_the_default_budget(arm):
    """The controllers file's JTC gains: stable at 4 cycles of delay at 250 Hz, unseen poses."""
    model, xml, start = load(arm)
    written = controllers_parameters(xml, 250)['joint_trajectory_controller'][
        'ros__parameters']['gains']
    p = np.array([written[name]['p'] for name in model.joint_names])
    d = np.array([written[name]['d'] for name in model.joint_names])
    for q in sample_poses(model, start, count=4, seed=42):
        assert closed_loop_radius(model.mass_matrix(q, include_armature=True), p, d, 250.0,
                                  int(2 * DELAY_BUDGET_CYCLES)) < 1.0, q


def test_a_higher_rate_gets_a_budget_in_more_cycles():
    model, _, start = load('planar_2r')
    gains = design_joint_gains(model, 1000.0, start=start)
    assert gains.delay_cycles == 16
    for q in sample_poses(model, start, count=4, seed=5):
        mass = model.mass_matrix(q, include_armature=True)
        assert closed_loop_radius(mass, gains.p, gains.d, 1000.0, 16) < 1.0


@pytest.mark.parametrize('kwargs, match', [
    ({'update_rate': 0.0}, 'update_rate'), ({'update_rate': float('nan')}, 'update_rate'),
    ({'delay_budget': -0.001}, 'delay_budget'), ({'floor_error': -1.0}, 'floor_error'),
    ({'poses': np.zeros((2, 3))}, 'poses'), ({'poses': np.full((1, 2), np.nan)}, 'poses')])
def test_bad_settings_are_named(kwargs, match):
    model, _, _ = load('planar_2r')
    args = {'update_rate': 250.0}
    args.update(kwargs)
    rate = args.pop('update_rate')
    with pytest.raises(ValueError, match=match):
        design_joint_gains(model, rate, **args)


def test_goal_tolerances_admit_the_friction_offset_of_a_pd_rest_and_no_more():
    """
    At rest a PD loop without integral holds ``|p e| <= f_c`` (static friction balances the
    spring): the goal tolerance must admit ``f_c / p`` and stay within a few times it.
    """
    from manip_dynamics.control.gains import (GOAL_TOLERANCE_FLOOR, trajectory_tolerances,
                                              TRAJECTORY_TOLERANCE_RANGE)
    for name in ('cobot7', 'puma560', 'planar_2r'):
        model = RobotModel.from_urdf_file(urdf_path(name))
        p = np.linspace(50.0, 400.0, model.dof)
        tolerances = trajectory_tolerances(model, p)
        offset = np.abs(model.coulomb_friction) / p
        assert np.all(tolerances.goal > offset)
        assert np.all(tolerances.goal <= GOAL_TOLERANCE_FLOOR + 2.0 * offset + 1e-12)
        low, high = TRAJECTORY_TOLERANCE_RANGE
        assert np.all((tolerances.trajectory >= low) & (tolerances.trajectory <= high))
        assert tolerances.goal_time > 0.0 and tolerances.stopped_velocity > 0.0
    with pytest.raises(ValueError, match='stiffnesses > 0'):
        trajectory_tolerances(model, np.zeros(model.dof))
