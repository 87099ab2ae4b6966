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
The computed-torque and joint-impedance controllers in closed loop.

References: Craig ch. 10's error equation ``e'' + Kv e' + Kp e = 0`` (with a perfect model the
computed-torque loop is a critically damped second-order system whose solution is written
out below), the trajectory itself (tracking), and the controller's own contract (limits,
refusals, reactions).
"""

import math

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control import (ComputedTorqueController, JointImpedanceController,
                                    TimedPoints)
from manip_dynamics.errors import InputError
from manip_dynamics.planning import retime
from manip_dynamics.simulation import Simulator

READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])


@pytest.fixture(scope='module')
def model():
    """Return cobot7 (URDF friction and rotor inertia are part of the model)."""
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


def closed_loop(model, controller, q0, duration, dt=5e-4, qd0=None, push=None,
                friction=True):
    """Simulate the arm under ``controller``; return times, positions, commands, states."""
    sim = Simulator(model, q0, qd0, dt=dt, integrator='rk4', include_friction=friction,
                    include_armature=True, limits='none')
    ts, qs, taus, states = [], [], [], []
    for k in range(int(round(duration / dt))):
        t = k * dt
        command = controller.update(t, sim.q, sim.qd)
        tau = command.tau + (push(t) if push is not None else 0.0)
        sim.step(tau)
        ts.append(t)
        qs.append(sim.q.copy())
        taus.append(command.tau)
        states.append(command.state)
    return np.array(ts), np.array(qs), np.array(taus), states


def test_error_follows_the_critically_damped_closed_form(model):
    """
    Craig ch. 10: e'' + 2 w e' + w^2 e = 0, e(t) = (e0 + (e0' + w e0) t) exp(-w t).

    The error equation holds for a perfect model: the rigid arm without friction (the
    controller's friction compensation acts at the desired velocity, 0 here).
    """
    w = 20.0
    ctl = ComputedTorqueController(model, kp=w * w, kd=2 * w, effort_limits=np.full(7, 1e6),
                                   include_friction=False)
    target = TimedPoints([0.0], [READY])
    ctl.set_trajectory(target, 0.0, READY)
    e0 = np.array([0.02, -0.015, 0.01, 0.02, -0.01, 0.015, 0.01])
    ctl.start_tolerance = 1.0
    dt = 2e-4
    ts, qs, _, _ = closed_loop(model, ctl, READY - e0, 0.4, dt=dt, friction=False)
    # the command is held over each step: compare from one step on, with the step's lag
    expected = (e0[None, :] + (w * e0)[None, :] * (ts + dt)[:, None]) * np.exp(
        -w * (ts + dt))[:, None]
    error = READY - qs
    assert np.max(np.abs(error - expected)) < 0.02 * np.max(np.abs(e0))
    assert np.max(np.abs(error[-1])) < 0.01 * np.max(np.abs(e0))  # 9 e^-8 = 0.3 % left


def test_tracks_a_retimed_trajectory_and_holds_the_end(model):
    waypoints = np.array([READY, READY + [0.4, 0.3, -0.2, 0.4, 0.3, -0.3, 0.2]])
    traj = retime(model, waypoints, acceleration_limits=3.0, effort_scale=0.7)
    ctl = ComputedTorqueController(model, kp=400.0, kd=40.0)
    ctl.set_trajectory(traj, 0.0, READY)
    ts, qs, taus, states = closed_loop(model, ctl, READY, traj.duration + 0.5)
    desired, _, _ = traj.sample(ts)
    assert np.max(np.abs(qs - desired)) < 2e-3
    assert states[-1] == 'done'
    np.testing.assert_allclose(qs[-1], waypoints[-1], atol=1e-3)
    assert np.all(np.abs(taus) <= model.effort_limits)


def test_impedance_variant_tracks_within_its_stiffness(model):
    waypoints = np.array([READY, READY + [0.3, 0.2, 0.0, 0.3, 0.0, 0.0, 0.0]])
    traj = retime(model, waypoints, acceleration_limits=2.0)
    ctl = JointImpedanceController(model, kp=[600, 600, 600, 600, 100, 100, 100],
                                   kd=[50, 50, 50, 50, 10, 10, 10])
    ctl.set_trajectory(traj, 0.0, READY)
    ts, qs, _, _ = closed_loop(model, ctl, READY, traj.duration + 1.0)
    desired, _, _ = traj.sample(ts)
    assert np.max(np.abs(qs - desired)) < 0.02
    np.testing.assert_allclose(qs[-1], waypoints[-1], atol=2e-3)


def test_efforts_are_clamped_to_the_limits(model):
    ctl = ComputedTorqueController(model, kp=1e6, kd=1e3, effort_scale=0.5,
                                   start_tolerance=1.0)
    ctl.set_trajectory(TimedPoints([0.0], [READY + 0.5]), 0.0, READY)
    command = ctl.update(0.0, READY, np.zeros(7))
    assert command.saturated
    assert np.all(np.abs(command.tau) <= 0.5 * model.effort_limits + 1e-12)


def test_a_new_effort_scale_clamps_the_next_command(model):
    ctl = ComputedTorqueController(model, kp=1e6, kd=1e3, start_tolerance=1.0)
    ctl.set_trajectory(TimedPoints([0.0], [READY + 0.5]), 0.0, READY)
    ctl.rescale(0.25)
    command = ctl.update(0.0, READY, np.zeros(7))
    assert command.saturated
    assert np.all(np.abs(command.tau) <= 0.25 * model.effort_limits + 1e-12)
    assert np.any(np.abs(command.tau) > 0.25 * model.effort_limits - 1e-9)
    for bad in (0.0, 1.5, math.nan):
        with pytest.raises(InputError, match='effort_scale'):
            ctl.rescale(bad)


def test_a_trajectory_that_starts_away_is_refused(model):
    ctl = ComputedTorqueController(model, kp=100.0, kd=20.0)
    far = TimedPoints([0.0, 1.0], [READY + [0, 0.3, 0, 0, 0, 0, 0], READY])
    with pytest.raises(InputError, match="joint 'cobot7_joint2'.*jump"):
        ctl.set_trajectory(far, 0.0, READY)
    assert ctl.state == 'idle'


def test_tracking_error_stops_and_holds(model):
    ctl = ComputedTorqueController(model, kp=100.0, kd=20.0, max_tracking_error=0.05)
    traj = TimedPoints([0.0, 2.0], [READY, READY + 0.5])
    ctl.set_trajectory(traj, 0.0, READY)
    stuck = READY.copy()  # the arm does not move (blocked): the error grows
    events = []
    for k in range(400):
        command = ctl.update(0.01 * k, stuck, np.zeros(7))
        events.append(command.event)
        if command.event:
            break
    assert events[-1] == 'tracking_error' and 'max_tracking_error' in command.message
    assert ctl.state == 'holding'
    again = ctl.update(5.0, stuck, np.zeros(7))
    np.testing.assert_allclose(again.error, 0.0)  # holds where it stopped


def test_collision_reactions_and_resume(model):
    traj = retime(model, np.array([READY, READY + 0.3]), acceleration_limits=2.0)
    ctl = ComputedTorqueController(model, kp=400.0, kd=40.0)
    ctl.set_trajectory(traj, 0.0, READY)
    q_mid, _, _ = traj.sample([0.5])
    ctl.update(0.5, q_mid[0], np.zeros(7))
    ctl.react('float', q_mid[0])
    floating = ctl.update(0.6, q_mid[0], np.zeros(7))
    np.testing.assert_allclose(floating.tau, model.gravity_torques(q_mid[0]))
    pushed = q_mid[0] + [0.2, 0, 0, 0, 0, 0, 0]
    with pytest.raises(InputError, match='away from the current pose'):
        ctl.resume(0.7, pushed)
    assert 'resumed at 0.500' in ctl.resume(0.7, q_mid[0])
    command = ctl.update(0.7, q_mid[0], np.zeros(7))
    assert command.state == 'tracking'
    np.testing.assert_allclose(command.error, 0.0, atol=1e-9)  # continues where it was
    ctl.react('hold', q_mid[0])
    assert ctl.update(0.8, q_mid[0], np.zeros(7)).state == 'holding'
    with pytest.raises(InputError, match='reaction'):
        ctl.react('panic', q_mid[0])


def test_a_resume_mid_motion_starts_from_rest_without_a_torque_step(model):
    """
    Held mid-motion, then resumed: the first command is the holding torque ID(q, 0, 0).

    The trajectory's clock ramps up from standstill (RESUME_RAMP), so the desired velocity
    and acceleration start at zero and the arm at rest gets exactly the inverse dynamics of
    rest (the model's reference, not the controller's); then it follows the rest of the
    trajectory to its end, RESUME_RAMP / 2 later than without the stop.
    """
    from manip_dynamics.control.computed_torque import RESUME_RAMP
    waypoints = np.array([READY, READY + [0.4, 0.3, -0.2, 0.4, 0.3, -0.3, 0.2]])
    traj = retime(model, waypoints, acceleration_limits=3.0, effort_scale=0.7)
    ctl = ComputedTorqueController(model, kp=400.0, kd=40.0, include_friction=False)
    ctl.set_trajectory(traj, 0.0, READY)
    stop = 0.5 * traj.duration
    q_mid, qd_mid, _ = traj.sample([stop])
    assert np.max(np.abs(qd_mid)) > 0.1  # a real mid-motion stop
    ctl.update(stop, q_mid[0], qd_mid[0])
    ctl.react('hold', q_mid[0])
    held = ctl.update(stop + 1.0, q_mid[0], np.zeros(7))
    ctl.resume(stop + 1.0, q_mid[0])
    first = ctl.update(stop + 1.0, q_mid[0], np.zeros(7))
    rest = model.inverse_dynamics(q_mid[0], np.zeros(7), np.zeros(7))
    np.testing.assert_allclose(first.tau, rest, atol=1e-9)
    np.testing.assert_allclose(first.tau, held.tau, atol=1e-9)
    # closed loop from rest at the stop pose: no jump, and the goal is reached
    ctl = ComputedTorqueController(model, kp=400.0, kd=40.0)
    ctl.set_trajectory(traj, 0.0, READY)
    ctl.update(stop, q_mid[0], qd_mid[0])
    ctl.react('hold', q_mid[0])
    ctl.resume(0.0, q_mid[0])
    remaining = traj.duration - stop + 0.5 * RESUME_RAMP
    ts, qs, taus, states = closed_loop(model, ctl, q_mid[0], remaining + 0.5)
    # continuing at the trajectory's velocity at once would have stepped the torque by
    # ID(q, 0, qdd_d + kd qd_d) - ID(q, 0, 0) (26 N m here); over the ramp every step of
    # the 2 kHz loop is below 1 % of that
    _, _, qdd_mid = traj.sample([stop])
    jump = np.max(np.abs(model.inverse_dynamics(q_mid[0], np.zeros(7),
                                                qdd_mid[0] + 40.0 * qd_mid[0]) - rest))
    steps = np.max(np.abs(np.diff(taus, axis=0)), axis=1)
    assert np.max(steps[ts[1:] <= RESUME_RAMP]) < 0.01 * jump
    assert states[-1] == 'done'
    np.testing.assert_allclose(qs[-1], waypoints[-1], atol=1e-3)


def test_bad_gains_and_states_are_named(model):
    with pytest.raises(InputError, match='kp'):
        ComputedTorqueController(model, kp=[1.0] * 3, kd=1.0)
    with pytest.raises(InputError, match='kd'):
        ComputedTorqueController(model, kp=1.0, kd=-1.0)
    with pytest.raises(InputError, match='effort limits'):
        ComputedTorqueController(model, kp=1.0, kd=1.0, effort_limits=[math.inf] * 7)
    ctl = ComputedTorqueController(model, kp=1.0, kd=1.0)
    with pytest.raises(InputError, match='finite'):
        ctl.update(0.0, READY * np.nan, np.zeros(7))
    with pytest.raises(InputError, match='times'):
        TimedPoints([0.0, 0.0], [READY, READY])


@pytest.mark.parametrize('law', [ComputedTorqueController, JointImpedanceController])
def test_a_large_error_closes_within_the_velocity_limits(model, law):
    """
    Pushed 1 rad away at hold, the wrist comes back no faster than its URDF velocity limit.

    With ``Kd e_dot + Kp e`` unclamped the loop asks for ``Kp / Kd e`` = 10 rad/s here,
    four times cobot7's wrist limit (behind the controller_manager stand-in a push that
    arrived while the controller was starved came back at 3.3 x the limit).
    """
    gains = (400.0, 40.0) if law is ComputedTorqueController else (200.0, 20.0)
    ctl = law(model, kp=gains[0], kd=gains[1])
    ctl.hold(READY)
    away = READY + np.array([0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.6])
    dt = 5e-4
    ts, qs, _, _ = closed_loop(model, ctl, away, 3.0, dt=dt)
    speed = np.abs(np.diff(qs, axis=0)) / dt
    limits = np.array(model.velocity_limits)
    assert np.max(speed / limits) < 1.05, np.max(speed / limits, axis=0)
    # and it does come back (within what the joints' Coulomb friction leaves at 3 s)
    assert np.max(np.abs(qs[-1] - READY)) < 5e-3


def test_timed_points_are_scipys_splines_one_time_or_many():
    """
    TimedPoints against scipy's own splines (the reference), one time and many at once.

    Quintic through positions, velocities and accelerations: BPoly.from_derivatives (order
    5), which TimedPoints no longer calls (built interval by interval in Python, 0.1 s for
    151 points); cubic Hermite with velocities; clamped cubic with positions only. At rest
    (zero derivatives) before the start and after the end.
    """
    from scipy.interpolate import BPoly, CubicHermiteSpline, CubicSpline
    rng = np.random.default_rng(3)
    t = 0.2 + np.cumsum(rng.uniform(0.01, 0.05, 40))
    q, qd, qdd = (rng.normal(size=(40, 7)) for _ in range(3))
    cases = [(TimedPoints(t, q, qd, qdd),
              BPoly.from_derivatives(t, np.stack([q, qd, qdd], axis=1), orders=5)),
             (TimedPoints(t, q, qd), CubicHermiteSpline(t, q, qd, axis=0)),
             (TimedPoints(t, q), CubicSpline(t, q, axis=0, bc_type='clamped'))]
    times = np.concatenate([[0.0, t[0], t[-1], t[-1] + 0.5], t[5:8],
                            rng.uniform(t[0], t[-1], 50)])
    for traj, ref in cases:
        inside = ((times > t[0]) & (times < t[-1]))[:, None]
        tc = np.clip(times, t[0], t[-1])
        expected = (ref(tc), np.where(inside, ref(tc, 1), 0.0), np.where(inside, ref(tc, 2), 0.0))
        many = traj.sample(times)
        for k in range(3):
            scale = 1.0 + np.max(np.abs(expected[k]))
            np.testing.assert_allclose(many[k], expected[k], rtol=0, atol=1e-9 * scale)
            for j, tj in enumerate(times):
                one = traj.sample(tj)[k]
                assert one.shape == (1, 7)
                np.testing.assert_allclose(one[0], expected[k][j], rtol=0, atol=1e-9 * scale)
