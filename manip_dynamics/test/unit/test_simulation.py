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
Tests of manip_dynamics.simulation (Craig sec. 6.12) against independent references.

References: the small-angle pendulum period 2 pi sqrt(l/g); a pendulum ODE written out here
and integrated by scipy's DOP853 at tight tolerance; conservation of energy without friction;
dissipation with friction; the static balance tau = g(q); the documented contact law
(steady penetration tau / k with k = m_eff (2 pi / 5 ms)^2).

Energy tolerances established here (friction off, zero torque, 2 s, relative to the largest
kinetic energy of the run; measured values in brackets):

* rk4, dt = 1 ms: planar_2r < 1e-9 [8e-11], cobot7 < 1e-6 [1.1e-7];
* adaptive (DOP853, rtol 1e-9, atol 1e-12): < 1e-7 [2.6e-9, 1.1e-9];
* semi_implicit_euler, dt = 1 ms: planar_2r < 2e-2 [7.8e-3], cobot7 < 0.25 [0.11].  The
  scheme of Craig eq. 6.117 with the new velocity is symplectic only when M is constant
  (the pendulum below: bounded error, no drift); with a configuration-dependent M it is a
  first-order method whose energy error halves with dt (tested).
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from manip_dynamics import InputError, RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.simulation import (
    CONTACT_PERIOD, INTEGRATORS, simulate, SimulationResult, Simulator)

G0 = 9.81
PEND_L = 0.5
PEND_M = 1.0


def pendulum_urdf(lower: float = -3.0, upper: float = 3.0, effort: float = 50.0) -> str:
    """Return a 1-DoF pendulum: a point mass PEND_M at PEND_L below a joint about y."""
    return f'''<?xml version="1.0"?>
<robot name="pendulum">
  <link name="base"/>
  <joint name="swing" type="revolute">
    <parent link="base"/>
    <child link="bob"/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="10"/>
  </joint>
  <link name="bob">
    <inertial>
      <origin xyz="0 0 {-PEND_L}" rpy="0 0 0"/>
      <mass value="{PEND_M}"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>
    </inertial>
  </link>
</robot>
'''


@pytest.fixture(scope='module')
def planar():
    return RobotModel.from_urdf_file(urdf_path('planar_2r'), gravity=(0.0, -G0, 0.0))


@pytest.fixture(scope='module')
def cobot():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


@pytest.fixture(scope='module')
def pendulum():
    return RobotModel.from_urdf_string(pendulum_urdf(), gravity=(0.0, 0.0, -G0))


PLANAR_STATE = (np.array([0.3, 0.5]), np.array([1.0, -1.0]))
COBOT_STATE = (np.array([0.0, -0.3, 0.0, -1.8, 0.0, 1.6, 0.8]),
               np.array([0.5, 0.3, -0.4, 0.2, 0.6, -0.5, 1.0]))


def energy_error(result: SimulationResult) -> float:
    """Return max |E - E0| over the run divided by the largest kinetic energy."""
    return float(np.max(np.abs(result.energy - result.energy[0])) / np.max(result.kinetic))


# ---------------------------------------------------------------------- energy
@pytest.mark.parametrize('robot, integrator, dt, tol', [
    ('planar', 'rk4', 1e-3, 1e-9),
    ('cobot', 'rk4', 1e-3, 1e-6),
    ('planar', 'adaptive', 1e-3, 1e-7),
    ('cobot', 'adaptive', 1e-3, 1e-7),
    ('planar', 'semi_implicit_euler', 1e-3, 2e-2),
    ('cobot', 'semi_implicit_euler', 1e-3, 0.25),
])
def test_energy_conserved_without_friction(request, robot, integrator, dt, tol):
    model = request.getfixturevalue(robot)
    q0, qd0 = PLANAR_STATE if robot == 'planar' else COBOT_STATE
    r = simulate(model, q0, qd0, duration=2.0, dt=dt, integrator=integrator,
                 include_friction=False, limits='none', rtol=1e-9, atol=1e-12)
    assert np.max(r.kinetic) > 10.0  # the arm really moves
    np.testing.assert_allclose(r.energy, r.kinetic + r.potential, rtol=0, atol=1e-12)
    assert energy_error(r) < tol


@pytest.mark.parametrize('robot', ['planar', 'cobot'])
def test_semi_implicit_euler_energy_error_is_first_order(request, robot):
    model = request.getfixturevalue(robot)
    q0, qd0 = PLANAR_STATE if robot == 'planar' else COBOT_STATE
    errs = [energy_error(simulate(model, q0, qd0, duration=1.0, dt=dt,
                                  include_friction=False, limits='none'))
            for dt in (1e-3, 5e-4)]
    assert 0.3 < errs[1] / errs[0] < 0.7


def test_semi_implicit_euler_bounded_energy_for_constant_inertia(pendulum):
    # constant M: the scheme is symplectic, the energy error oscillates without drift
    r = simulate(pendulum, [1.0], duration=20.0, dt=1e-3, include_friction=False,
                 limits='none')
    err = np.abs(r.energy - r.energy[0]) / np.max(r.kinetic)
    first, last = err[:len(err) // 4].max(), err[-len(err) // 4:].max()
    # symplectic Euler on a harmonic-like oscillator: relative amplitude ~ omega dt / 2
    assert last < 3e-3
    assert last < 1.2 * first


# ---------------------------------------------------------------------- pendulum
def test_pendulum_small_angle_period(pendulum):
    r = simulate(pendulum, [0.01], duration=6.0, dt=1e-3, integrator='rk4',
                 include_friction=False, limits='none')
    q = r.q[:, 0]
    up = np.nonzero((q[:-1] < 0.0) & (q[1:] >= 0.0))[0]
    crossings = r.t[up] - q[up] * (r.t[up + 1] - r.t[up]) / (q[up + 1] - q[up])
    period = np.mean(np.diff(crossings))
    t0 = 2.0 * math.pi * math.sqrt(PEND_L / G0)
    # finite amplitude lengthens the period by theta0^2 / 16 = 6e-6
    assert period == pytest.approx(t0, rel=2e-5)


@pytest.mark.parametrize('integrator, tol', [
    ('rk4', 1e-8), ('adaptive', 1e-7), ('semi_implicit_euler', 2e-2)])
def test_pendulum_against_reference_ode(pendulum, integrator, tol):
    def ode(t, y):
        return [y[1], -G0 / PEND_L * math.sin(y[0])]

    r = simulate(pendulum, [1.2], [0.5], duration=3.0, dt=1e-3, integrator=integrator,
                 include_friction=False, limits='none', rtol=1e-10, atol=1e-12)
    ref = solve_ivp(ode, (0.0, 3.0), [1.2, 0.5], method='DOP853', t_eval=r.t, rtol=1e-12,
                    atol=1e-13)
    assert np.max(np.abs(r.q[:, 0] - ref.y[0])) < tol


# ---------------------------------------------------------------------- friction, holding
@pytest.mark.parametrize('integrator', ['rk4', 'adaptive'])
def test_friction_dissipates_energy_monotonically(cobot, integrator):
    q0, qd0 = COBOT_STATE
    r = simulate(cobot, q0, qd0, duration=2.0, integrator=integrator, limits='none',
                 record_every=10)
    assert np.all(np.diff(r.energy) <= 1e-9 * np.max(r.kinetic))
    assert r.energy[-1] < r.energy[0] - 1.0


def test_semi_implicit_euler_with_friction_is_stable_and_dissipative(cobot):
    q0, qd0 = COBOT_STATE
    r = simulate(cobot, q0, qd0, duration=3.0, limits='none')
    assert np.all(np.isfinite(r.q))
    assert r.energy[-1] < r.energy[0] - 1.0
    assert r.kinetic[-1] < 0.1 * np.max(r.kinetic)


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
@pytest.mark.parametrize('friction', [False, True])
def test_gravity_torque_holds_the_arm(cobot, integrator, friction):
    q0 = COBOT_STATE[0]
    sim = Simulator(cobot, q0, integrator=integrator, include_friction=friction)
    tau = cobot.gravity_torques(q0)
    for _ in range(2000):
        sim.step(tau)
    assert sim.t == pytest.approx(2.0)
    assert np.max(np.abs(sim.q - q0)) < 1e-6
    # and without the gravity torque it falls
    sim.reset()
    sim.step(np.zeros(7), steps=200)
    assert np.max(np.abs(sim.q - q0)) > 1e-2


def test_gravity_hold_with_controller_and_adaptive(cobot):
    q0 = COBOT_STATE[0]
    for integrator in INTEGRATORS:
        r = simulate(cobot, q0, duration=2.0, integrator=integrator, record_every=100,
                     controller=lambda t, q, qd: cobot.gravity_torques(q0))
        assert np.max(np.abs(r.q - q0)) < 1e-6
        np.testing.assert_allclose(r.tau, np.tile(cobot.gravity_torques(q0), (len(r.t), 1)))


# ---------------------------------------------------------------------- limits
@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_spring_limit_small_penetration(integrator):
    model = RobotModel.from_urdf_string(pendulum_urdf(-0.5, 0.5), gravity=(0.0, 0.0, 0.0))
    tau = 2.0
    sim = Simulator(model, [0.0], integrator=integrator, limits='spring')
    peak = 0.0
    for _ in range(1500):
        sim.step([tau])
        peak = max(peak, sim.q[0] - 0.5)
    # documented contact law: k = m_eff (2 pi / T_c)^2, m_eff = m l^2 for one joint
    k = PEND_M * PEND_L ** 2 * (2.0 * math.pi / CONTACT_PERIOD) ** 2
    assert sim.q[0] - 0.5 == pytest.approx(tau / k, rel=0.05)
    assert abs(sim.qd[0]) < 1e-4
    # impact at v = sqrt(2 (tau / m l^2) 0.5) = 2.83 rad/s: the contact is seen one step
    # late (v dt = 2.8 mrad), then the critically damped spring adds at most
    # v / (omega e) = 0.8 mrad
    v = math.sqrt(2.0 * tau / (PEND_M * PEND_L ** 2) * 0.5)
    assert 0.0 < peak < v * 1e-3 + v / (2.0 * math.pi / CONTACT_PERIOD * math.e)


def test_hard_limit_stops_exactly():
    model = RobotModel.from_urdf_string(pendulum_urdf(-0.5, 0.5), gravity=(0.0, 0.0, 0.0))
    for integrator in ('semi_implicit_euler', 'rk4'):
        sim = Simulator(model, [0.0], integrator=integrator, limits='hard')
        qs = []
        for _ in range(1000):
            sim.step([2.0])
            qs.append(sim.q[0])
        assert max(qs) == 0.5
        assert sim.q[0] == 0.5 and sim.qd[0] == 0.0
        sim.step([-2.0], steps=10)  # leaves the stop freely
        assert sim.q[0] < 0.5 and sim.qd[0] < 0.0


def test_no_limits_passes_through():
    model = RobotModel.from_urdf_string(pendulum_urdf(-0.5, 0.5), gravity=(0.0, 0.0, 0.0))
    sim = Simulator(model, [0.0], limits='none')
    sim.step([2.0], steps=1000)
    # free: q = 1/2 (tau / m l^2) t^2 = 4 rad after 1 s (first-order scheme: ~1e-2)
    assert sim.q[0] == pytest.approx(4.0, rel=1e-2)


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_cobot_limit_under_gravity_stays_close(cobot, integrator):
    # joint 2 (shoulder, limit +-1.7628) pushed by its full effort plus gravity
    q0 = np.array([0.0, 1.5, 0.0, -1.8, 0.0, 1.6, 0.8])
    upper = cobot.position_upper
    sim = Simulator(cobot, q0, integrator=integrator)
    tau = cobot.gravity_torques(q0)
    tau[1] = 87.0
    worst = 0.0
    for _ in range(1000):
        sim.step(tau)
        worst = max(worst, sim.q[1] - upper[1])
    assert np.all(np.isfinite(sim.q))
    assert 0.0 < worst < 0.02
    assert abs(sim.qd[1]) < 1e-3


# ---------------------------------------------------------------------- effort, API
def test_effort_clamping(planar):
    q0 = np.array([0.2, -0.4])
    sim = Simulator(planar, q0, integrator='semi_implicit_euler', dt=1e-3)
    sim.step([1000.0, -500.0])
    np.testing.assert_array_equal(sim.applied_effort, [100.0, -100.0])
    # one symplectic Euler step from rest: qd = dt * qdd(q0, 0, clamped torque)
    qdd = planar.forward_dynamics(q0, np.zeros(2), [100.0, -100.0])
    np.testing.assert_allclose(sim.qd, 1e-3 * qdd, rtol=1e-12)
    free = Simulator(planar, q0, clamp_effort=False)
    free.step([1000.0, -500.0])
    np.testing.assert_array_equal(free.applied_effort, [1000.0, -500.0])
    r = simulate(planar, q0, duration=0.01, controller=lambda t, q, qd: [300.0, 1.0])
    np.testing.assert_array_equal(r.tau[:, 0], 100.0)


def test_state_time_reset_and_copies(planar):
    sim = Simulator(planar, [0.1, 0.2], [0.0, 1.0])
    q = sim.q
    q[0] = 99.0
    assert sim.q[0] == 0.1
    sim.step([0.0, 0.0], steps=250)
    assert sim.t == pytest.approx(0.25)
    assert sim.total_energy() == pytest.approx(sim.kinetic_energy() + sim.potential_energy())
    sim.reset()
    assert sim.t == 0.0
    np.testing.assert_array_equal(sim.q, [0.1, 0.2])
    np.testing.assert_array_equal(sim.qd, [0.0, 1.0])
    sim.reset([0.5, 0.5], [0.0, 0.0])
    np.testing.assert_array_equal(sim.q, [0.5, 0.5])


def test_result_layout_and_progress(planar):
    seen = []
    r = simulate(planar, [0.1, 0.2], duration=0.105, dt=1e-3, record_every=10,
                 progress=seen.append)
    assert r.t.shape == (12,) and r.q.shape == (12, 2) and r.tau.shape == (12, 2)
    assert r.t[-1] == pytest.approx(0.105) and r.t[1] == pytest.approx(0.01)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    assert r.joint_names == planar.joint_names


def test_fixed_step_simulate_matches_simulator(planar):
    r = simulate(planar, [0.1, 0.2], duration=0.5, integrator='rk4')
    sim = Simulator(planar, [0.1, 0.2], integrator='rk4')
    sim.step([0.0, 0.0], steps=500)
    np.testing.assert_array_equal(r.q[-1], sim.q)


def test_payload_takes_effect_on_the_next_step(cobot):
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    q0 = COBOT_STATE[0]
    sim = Simulator(model, q0, include_friction=False)
    tau = model.gravity_torques(q0)
    model.set_payload(model.link_names[-1], 2.0)
    sim.step(tau, steps=100)
    assert np.max(np.abs(sim.q - q0)) > 1e-4  # the 2 kg payload pulls the arm down


@pytest.mark.parametrize('call, match', [
    (lambda s: s.step([1.0]), 'shape'),
    (lambda s: s.step([1.0, float('nan')]), 'planar_2r_joint2'),
    (lambda s: s.step([float('inf'), 0.0]), 'planar_2r_joint1'),
    (lambda s: s.step('ab'), 'tau'),
    (lambda s: s.step([0.0, 0.0], steps=0), 'steps'),
])
def test_bad_step_inputs(planar, call, match):
    sim = Simulator(planar, [0.0, 0.0])
    with pytest.raises(InputError, match=match):
        call(sim)
    assert sim.t == 0.0


@pytest.mark.parametrize('kwargs, match', [
    ({'dt': 0.0}, 'dt'),
    ({'dt': float('nan')}, 'dt'),
    ({'integrator': 'euler'}, 'integrator'),
    ({'integrator': 'adaptive'}, 'adaptive'),
    ({'limits': 'soft'}, 'limits'),
    ({'limit_stiffness': -1.0}, 'limit_stiffness'),
    ({'limit_damping': [1.0, 2.0, 3.0]}, 'limit_damping'),
])
def test_bad_simulator_arguments(planar, kwargs, match):
    with pytest.raises(InputError, match=match):
        Simulator(planar, [0.0, 0.0], **kwargs)


def test_bad_states_and_simulate_arguments(planar):
    with pytest.raises(InputError, match='q0'):
        Simulator(planar, [0.0])
    with pytest.raises(InputError, match='qd0'):
        Simulator(planar, [0.0, 0.0], [float('nan'), 0.0])
    with pytest.raises(InputError, match='duration'):
        simulate(planar, [0.0, 0.0], duration=0.0)
    with pytest.raises(InputError, match='record_every'):
        simulate(planar, [0.0, 0.0], duration=0.1, record_every=0)
    with pytest.raises(InputError, match='adaptive'):
        simulate(planar, [0.0, 0.0], duration=0.1, integrator='adaptive', limits='hard')
    with pytest.raises(InputError, match='controller torque at t = 0'):
        simulate(planar, [0.0, 0.0], duration=0.1, controller=lambda t, q, qd: [1.0])
    with pytest.raises(InputError, match='planar_2r_joint2'):
        simulate(planar, [0.0, 0.0], duration=0.1,
                 controller=lambda t, q, qd: [0.0, float('nan')])


def test_divergence_is_reported(pendulum):
    # a huge explicit step on a stiff user contact blows up: a clear error, last good state
    model = RobotModel.from_urdf_string(pendulum_urdf(-0.1, 0.1), gravity=(0.0, 0.0, 0.0))
    sim = Simulator(model, [0.0], [5.0], integrator='rk4', dt=0.01, limit_stiffness=1e9,
                    limit_damping=0.0)
    with pytest.raises(InputError, match='diverged'):
        sim.step([0.0], steps=100000)
    assert np.all(np.isfinite(sim.q))


def test_massless_joint_is_named_not_called_a_divergence():
    # j2 moves only a massless link: M(q) is singular from the first step.  The error names
    # the joint and the fix; reducing dt (the divergence advice) would not help.
    xml = ('<robot name="r"><link name="base"/><link name="a"><inertial><mass value="1"/>'
           '<origin xyz="0.5 0 0"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" '
           'ixz="0" iyz="0"/></inertial></link><link name="b"/>'
           '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>'
           '<axis xyz="0 0 1"/><limit effort="10" velocity="1" lower="-3" upper="3"/></joint>'
           '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/>'
           '<origin xyz="1 0 0"/><axis xyz="0 0 1"/>'
           '<limit effort="10" velocity="1" lower="-3" upper="3"/></joint></robot>')
    model = RobotModel.from_urdf_string(xml)
    for integrator in INTEGRATORS:
        if integrator == 'adaptive':
            call = lambda: simulate(model, [0.0, 0.0], duration=0.01,  # noqa: E731
                                    integrator='adaptive')
        else:
            sim = Simulator(model, [0.0, 0.0], integrator=integrator)
            call = lambda: sim.step([0.0, 0.0])  # noqa: E731
        with pytest.raises(InputError, match="singular.*'j2' move no mass") as info:
            call()
        assert 'diverged' not in str(info.value) and "'j1'" not in str(info.value)
