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
The momentum observer, the contact detector, the wrench estimate and the simulator's pushes.

References, none computed by the code under test:

* a closed form: an arm held still while a constant torque pushes it gives the geometric
  sequence ``r_k = tau_ext (1 - (1 + k dt)^-k)`` of the backward-Euler low-pass;
* an independent discretisation: for a smooth motion whose joint torques come from the
  Newton-Euler inverse dynamics with a known external wrench, the continuous observer obeys
  ``dr/dt = K (J^T w - r)``, integrated here by scipy's DOP853; the discrete observer must
  converge to it at first order in dt;
* an independent implementation of the same discrete recursion with Pinocchio's M, C and g
  (to 1e-9);
* the simulator: an arm under gravity compensation pushed by a known wrench, as the ROS
  test does it over DDS;
* dry friction that sticks (``stiction``): at rest the momentum balance ``0 = tau - g +
  tau_ext - F`` with any ``|F| <= f_c`` (Craig sec. 6.11), and MuJoCo, whose dry friction
  sticks, as the arm that breaks away from rest and is pushed.
"""

import math

import numpy as np
import pytest

from manip_dynamics import InputError, RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.observers import (
    contact_is_current, ContactDetector, estimate_wrench, link_wrench, MomentumObserver,
    wrench_frames, wrench_in_axes)
from manip_dynamics.observers.command_history import CommandHistory, CommandUnavailable
from manip_dynamics.simulation import push_joint_torques, Simulator

POSE = np.array([0.3, -0.4, 0.2, -1.9, 0.1, 1.9, 0.5])


@pytest.fixture(scope='module')
def cobot():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


def smooth_motion(t: float, q0: np.ndarray):
    """Return q, qd, qdd of a sum of sines (any smooth motion will do)."""
    n = q0.size
    a = 0.3 + 0.05 * np.arange(n)
    w = 2.0 + 0.7 * np.arange(n)
    return (q0 + a * np.sin(w * t), a * w * np.cos(w * t), -a * w * w * np.sin(w * t))


# ---------------------------------------------------------------------- simulator pushes
def test_simulator_push_enters_forward_dynamics(cobot):
    wrench = {'tool0': [1.0, 2.0, -3.0, 0.1, 0.2, 0.3]}
    tau = cobot.gravity_torques(POSE)
    sim = Simulator(cobot, POSE, dt=1e-3, include_friction=False, limits='none')
    sim.set_external_wrenches(wrench)
    assert sim.external_wrenches_active
    sim.step(tau)
    # first semi-implicit Euler step from rest: qd1 = dt * qdd(q0, 0)
    expected = cobot.forward_dynamics(POSE, np.zeros(7), tau, external_wrenches=wrench)
    np.testing.assert_allclose(sim.qd / 1e-3, expected, rtol=1e-10, atol=1e-9)
    # same thing through J^T w (Jacobian in link axes: the wrench is in the link frame)
    jac = cobot.jacobian(POSE, 'tool0', frame='link')
    np.testing.assert_allclose(
        expected, cobot.forward_dynamics(POSE, np.zeros(7), tau + jac.T @ wrench['tool0']),
        rtol=1e-10, atol=1e-9)
    # joint_states' effort stays the motor torque
    np.testing.assert_array_equal(sim.applied_effort, tau)
    sim.reset()
    assert not sim.external_wrenches_active
    sim.step(tau)
    np.testing.assert_allclose(sim.qd, 0.0, atol=1e-12)


def test_simulator_push_bad_input_changes_nothing(cobot):
    sim = Simulator(cobot, POSE)
    sim.set_external_wrenches({'tool0': [0.0, 0.0, 5.0, 0.0, 0.0, 0.0]})
    for bad in ({'no_such_link': [0.0] * 6}, {'tool0': [1.0, 2.0]},
                {'tool0': [np.nan, 0.0, 0.0, 0.0, 0.0, 0.0]}):
        with pytest.raises(InputError):
            sim.set_external_wrenches(bad)
        assert sim.external_wrenches_active
    sim.set_external_wrenches(None)
    assert not sim.external_wrenches_active


# ---------------------------------------------------------------------- observer
def test_held_arm_gives_the_backward_euler_sequence(cobot):
    """Arm held still, motor torque g - tau_ext: r_k = tau_ext (1 - (1 + K dt)^-k)."""
    gains = np.linspace(20.0, 80.0, 7)
    tau_ext = np.array([3.0, -2.0, 1.5, 0.5, -0.25, 0.1, 0.05])
    obs = MomentumObserver(cobot, gains)
    tau = cobot.gravity_torques(POSE) - tau_ext
    dt = 1e-3
    assert np.all(obs.update(0.0, POSE, np.zeros(7), tau) == 0.0) and obs.restarted
    for k in range(1, 301):
        r = obs.update(k * dt, POSE, np.zeros(7), tau)
        np.testing.assert_allclose(r, tau_ext * (1.0 - (1.0 + gains * dt) ** -k),
                                   rtol=1e-10, atol=1e-12)
    assert not obs.restarted


def test_converges_to_the_continuous_observer(cobot):
    """Independent reference: dr/dt = K (J^T w - r) integrated by DOP853 along the motion."""
    solve_ivp = pytest.importorskip('scipy.integrate').solve_ivp
    gain = 40.0
    wrench = np.array([4.0, -6.0, 8.0, 0.3, -0.2, 0.1])
    duration = 0.5

    def tau_ext(t):
        q = smooth_motion(t, POSE)[0]
        return cobot.jacobian(q, 'tool0', frame='link').T @ wrench

    ref = solve_ivp(lambda t, r: gain * (tau_ext(t) - r), (0.0, duration), np.zeros(7),
                    method='DOP853', rtol=1e-11, atol=1e-11, dense_output=True)
    assert ref.success
    errors = []
    for dt in (2e-4, 1e-4):
        obs = MomentumObserver(cobot, gain)
        worst = 0.0
        for k in range(int(round(duration / dt)) + 1):
            t = k * dt
            q, qd, qdd = smooth_motion(t, POSE)
            # the motor torque when the environment applies `wrench` to tool0
            tau = cobot.inverse_dynamics(q, qd, qdd, external_wrenches={'tool0': wrench},
                                         include_friction=True)
            r = obs.update(t, q, qd, tau)
            worst = max(worst, float(np.max(np.abs(r - ref.sol(t)))))
        errors.append(worst)
    scale = max(np.max(np.abs(tau_ext(t))) for t in np.linspace(0.0, duration, 11))
    assert errors[1] < 2e-3 * scale, errors
    # first order: halving dt halves the error
    assert 0.4 < errors[1] / errors[0] < 0.6, errors


def test_same_recursion_with_pinocchio_terms(cobot):
    """Independent implementation of the documented recursion with Pinocchio's M, C, g."""
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    with open(urdf_path('cobot7')) as stream:
        pmodel = pin.buildModelFromXML(stream.read())
    data = pmodel.createData()
    idx = np.array([pmodel.joints[pmodel.getJointId(n)].idx_v for n in cobot.joint_names])
    assert pmodel.nq == pmodel.nv == 7
    damping, coulomb, eps = cobot.damping, cobot.coulomb_friction, cobot.friction_velocity
    rng = np.random.default_rng(12)
    gains = rng.uniform(10.0, 100.0, 7)
    obs = MomentumObserver(cobot, gains)
    p0 = z = r_ref = t_prev = None
    for k in range(200):
        t = 0.002 * k + 1e-4 * rng.uniform()
        q = POSE + 0.3 * np.sin(3.0 * t + np.arange(7))
        qd = rng.normal(0.0, 1.0, 7)
        tau = rng.normal(0.0, 10.0, 7)
        r = obs.update(t, q, qd, tau)
        pq, pv = np.zeros(7), np.zeros(7)
        pq[idx], pv[idx] = q, qd
        mass = pin.crba(pmodel, data, pq)
        mass = np.triu(mass) + np.triu(mass, 1).T
        cor = pin.computeCoriolisMatrix(pmodel, data, pq, pv)
        grav = pin.computeGeneralizedGravity(pmodel, data, pq)
        p = (mass @ pv)[idx]
        beta = tau + (cor.T @ pv)[idx] - grav[idx] - damping * qd - coulomb * np.tanh(qd / eps)
        if p0 is None:
            p0, z, r_ref = p, np.zeros(7), np.zeros(7)
        else:
            dt = t - t_prev
            r_ref = gains * (p - p0 - z - dt * beta) / (1.0 + gains * dt)
            z = z + dt * (beta + r_ref)
        t_prev = t
        np.testing.assert_allclose(r, r_ref, rtol=0.0, atol=1e-9 * max(1.0, np.max(np.abs(r))))


def test_pushed_arm_under_gravity_compensation(cobot):
    """10 N on the tool of the simulated arm: J^T w within 5 % after 5 / K, no contact after."""
    gain = 50.0
    push = np.array([0.0, 10.0, 0.0, 0.0, 0.0, 0.0])  # world axes, at the tool0 origin
    sim = Simulator(cobot, POSE, dt=1e-3)
    obs = MomentumObserver(cobot, gain)
    detector = ContactDetector(np.full(7, 1.0), hysteresis=0.5)
    start, end = 0.2, 0.6
    first_contact = released = None
    obs.update(0.0, POSE, np.zeros(7), np.zeros(7))
    for _ in range(1000):
        q = sim.q
        if start - 1e-9 <= sim.t < end - 1e-9:
            rot = cobot.link_transform(q, 'tool0')[:3, :3]
            sim.set_external_wrenches({'tool0': wrench_in_axes(push, rot)})
        else:
            sim.set_external_wrenches(None)
        sim.step(cobot.gravity_torques(q))
        t = sim.t
        r = obs.update(t, sim.q, sim.qd, sim.applied_effort)
        state = detector.update(r)
        if state.contact and first_contact is None:
            first_contact = t
        if first_contact is not None and not state.contact and released is None:
            released = t
        if start + 5.0 / gain <= t <= end:
            estimate = estimate_wrench(cobot.jacobian(sim.q, 'tool0'), r)
            assert np.linalg.norm(estimate[:3] - push[:3]) < 0.05 * 10.0, (t, estimate)
            # no applied moment: the estimate's is what a 1 cm lever of the force gives
            assert np.linalg.norm(estimate[3:]) < 0.01 * 10.0, (t, estimate)
    assert first_contact is not None and first_contact - start <= 0.02
    assert released is not None and end < released < end + 0.2


def test_gap_restarts_and_bad_samples_change_nothing(cobot):
    obs = MomentumObserver(cobot, 30.0, max_step=0.05)
    tau = cobot.gravity_torques(POSE) - 1.0
    obs.update(0.0, POSE, np.zeros(7), tau)
    r1 = obs.update(0.01, POSE, np.zeros(7), tau)
    for args in ((0.01, POSE, np.zeros(7), tau),            # time not increasing
                 (0.02, POSE, np.full(7, np.nan), tau),     # NaN velocity
                 (0.02, POSE, np.zeros(7), tau[:6]),        # wrong length
                 (np.inf, POSE, np.zeros(7), tau)):
        with pytest.raises(InputError):
            obs.update(*args)
        np.testing.assert_array_equal(obs.residual, r1)
        assert obs.time == 0.01
    r2 = obs.update(0.02, POSE, np.zeros(7), tau)
    assert np.all(r2 > r1)
    assert np.all(obs.update(0.2, POSE, np.zeros(7), tau) == 0.0) and obs.restarted
    obs.reset()
    assert obs.time is None


def _stalled_chain(stall_at: float, stall: float, end: float) -> tuple[list, list]:
    """
    Return sample stamps and the times their states were taken, as behind a stalled chain.

    What a recorder beside controller_manager and TopicBasedSystem saw on a loaded machine
    (docs/ROS2_CONTROL.md): 2 ms updates; after a stall the first state is as old as the
    stall, a burst of updates 0.1 ms apart each brings a state 1 ms newer, then every 2 ms
    update a state 12 ms newer until the states have caught up with their stamps.
    """
    stamps = list(np.arange(0.0, stall_at + 1e-9, 2e-3))
    taken = list(stamps)
    t, data = stall_at + stall, stall_at + 2e-3
    for _ in range(10):
        stamps.append(t), taken.append(data)
        t, data = t + 1e-4, data + 1e-3
    t = stamps[-1] + 2e-3
    while t < end:
        data = min(data + 12e-3, t)
        stamps.append(t), taken.append(data)
        t += 2e-3
    return stamps, taken


def test_a_stalled_sample_chain_makes_the_observer_coast_not_flag(cobot):
    """
    States that lag their stamps after a stall: no false external torque while coasting.

    References: the arm moves with no external torque (the motor torques are the inverse
    dynamics of the motion), so r should stay at the observer's discretisation floor on the
    same motion sampled without a stall; a constant wrench applied afterwards is estimated
    as J^T w.
    """
    gain = 25.0

    def run(stamps, taken, stall_gap, wrench=None, from_time=np.inf):
        obs = MomentumObserver(cobot, gain, stall_gap=stall_gap)
        out, coasted = [], 0
        for stamp, t in zip(stamps, taken):
            q, qd, qdd = smooth_motion(t, POSE)
            pushed = wrench is not None and t >= from_time
            tau = cobot.inverse_dynamics(q, qd, qdd, include_friction=True, external_wrenches=(
                {'tool0': wrench} if pushed else None))
            out.append(obs.update(stamp, q, qd, tau))
            coasted += obs.coasting
        return np.array(out), coasted, q

    clean = np.arange(0.0, 0.8, 2e-3)
    floor = np.max(np.abs(run(clean, clean, math.inf)[0]))
    stamps, taken = _stalled_chain(0.3, 0.065, 0.8)
    blind, coasted, _ = run(stamps, taken, math.inf)
    assert coasted == 0 and np.max(np.abs(blind)) > 5.0 * floor, \
        'the stalled chain must show the hazard without coasting'
    coasting, coasted, _ = run(stamps, taken, 0.02)
    assert coasted > 0
    assert np.max(np.abs(coasting)) <= 1.05 * floor + 1e-9, (np.max(np.abs(coasting)), floor)
    # a push after the stall is still seen: dr/dt = K (J^T w - r) from 0.45 s, integrated
    # here with 50 us exponential steps
    wrench = np.array([0.0, 0.0, -15.0, 0.0, 0.0, 0.0])
    pushed = run(stamps, taken, 0.02, wrench, from_time=0.45)[0]
    expected, step = np.zeros(7), 5e-5
    for t in np.arange(0.45, stamps[-1], step):
        tau_ext = cobot.jacobian(smooth_motion(t, POSE)[0], 'tool0', frame='link').T @ wrench
        expected += (1.0 - math.exp(-gain * step)) * (tau_ext - expected)
    np.testing.assert_allclose(pushed[-1], expected, atol=0.05 * np.max(np.abs(expected)))


def test_coasting_keeps_the_residual_and_restarts_still_clear_it(cobot):
    """A held arm pushed by a constant torque: r holds through the coast, then rises on."""
    tau_ext = np.array([3.0, -2.0, 1.5, 0.5, -0.25, 0.1, 0.05])
    tau = cobot.gravity_torques(POSE) - tau_ext
    obs = MomentumObserver(cobot, 30.0, stall_gap=0.02, max_step=0.1)
    for k in range(0, 51):
        r = obs.update(k * 1e-3, POSE, np.zeros(7), tau)
    assert not obs.coasting
    held = r.copy()
    r = obs.update(0.09, POSE, np.zeros(7), tau)   # a 40 ms gap: coast until 0.11 s
    assert obs.coasting and not obs.restarted
    np.testing.assert_array_equal(r, held)
    for k in range(46, 55):   # every 2 ms up to 0.108 s
        np.testing.assert_array_equal(obs.update(k * 2e-3, POSE, np.zeros(7), tau), held)
        assert obs.coasting
    after = obs.update(0.112, POSE, np.zeros(7), tau)
    assert not obs.coasting and np.all(np.abs(after - tau_ext) < np.abs(held - tau_ext))
    assert np.all(obs.update(0.3, POSE, np.zeros(7), tau) == 0.0) and obs.restarted
    assert not obs.coasting
    with pytest.raises(InputError):
        MomentumObserver(cobot, 30.0, stall_gap=0.0)


def test_a_reader_that_drops_samples_does_not_coast_through_a_contact(cobot):
    """
    Gaps that lost messages explain are no stall: a held arm pushed while its reader keeps
    only every 15th sample (30 ms gaps, over stall_gap) is flagged; told nothing about the
    lost samples, the observer coasts through the whole push; a gap the lost samples do not
    explain still coasts.

    Reference: a constant external torque on a held arm, r = tau_ext (1 - prod (1 + K dt)^-1)
    (module docstring), so r must reach most of tau_ext within 0.3 s at K = 25 1/s.
    """
    tau_ext = np.array([3.0, -2.0, 1.5, 0.5, -0.25, 0.1, 0.05])

    def run(told: bool):
        obs = MomentumObserver(cobot, 25.0, stall_gap=0.02, max_step=0.1)
        coasted, r, previous = 0, None, -1
        for k in range(0, 251):   # 2 ms samples to 0.5 s; after 0.1 s, 1 in 15 received
            t = k * 2e-3
            if k > 50 and k % 15:
                continue
            pushed = t > 0.2 + 1e-9
            tau = cobot.gravity_torques(POSE) - (tau_ext if pushed else 0.0)
            lost = k - previous - 1 if told and previous >= 0 else 0
            r = obs.update(t, POSE, np.zeros(7), tau, lost=lost)
            coasted += obs.coasting
            previous = k
        return r, coasted

    r, coasted = run(told=True)
    assert coasted == 0
    expected = tau_ext * (1.0 - (1.0 + 25.0 * 0.03) ** -10)   # 10 samples 30 ms apart
    np.testing.assert_allclose(r, expected, rtol=1e-6, atol=1e-9)
    blind, coasted = run(told=False)
    assert coasted > 0 and np.max(np.abs(blind)) < 0.1 * np.max(np.abs(tau_ext))
    # 60 ms with one sample lost: 2 ms explained, 58 ms a stall
    obs = MomentumObserver(cobot, 25.0, stall_gap=0.02, max_step=0.1)
    for k in range(0, 51):
        obs.update(k * 2e-3, POSE, np.zeros(7), cobot.gravity_torques(POSE))
    obs.update(0.16, POSE, np.zeros(7), cobot.gravity_torques(POSE), lost=1)
    assert obs.coasting


@pytest.mark.parametrize('gains', [0.0, -1.0, [1.0, 2.0], np.nan, 'x'])
def test_bad_gains(cobot, gains):
    with pytest.raises(InputError):
        MomentumObserver(cobot, gains)


# ---------------------------------------------------------------------- contact, wrench
def test_contact_hysteresis():
    det = ContactDetector([1.0, 2.0], hysteresis=0.25)
    sequence = [([0.5, 0.0], [False, False]), ([1.01, 0.0], [True, False]),
                ([0.8, -2.5], [True, True]), ([0.74, -1.6], [False, True]),
                ([0.9, -1.49], [False, False]), ([-1.2, 0.0], [True, False])]
    for r, flags in sequence:
        state = det.update(r)
        assert state.flags.tolist() == flags, (r, state)
        assert state.contact == any(flags)
        np.testing.assert_allclose(state.ratios, np.abs(r) / [1.0, 2.0])
        assert state.strongest == int(np.argmax(np.abs(r) / [1.0, 2.0]))
    with pytest.raises(InputError):
        det.update([np.nan, 0.0])
    assert det.update([1.0, 0.0]).flags.tolist() == [True, False]  # unchanged by the NaN
    for bad in ([0.0, 1.0], [np.inf], []):
        with pytest.raises(InputError):
            ContactDetector(bad)
    with pytest.raises(InputError):
        ContactDetector([1.0], hysteresis=1.0)


def test_wrench_estimate_inverts_jt(cobot):
    wrench = np.array([3.0, -4.0, 12.0, 0.5, -0.7, 0.2])
    jac = cobot.jacobian(POSE, 'tool0')
    np.testing.assert_allclose(estimate_wrench(jac, jac.T @ wrench, damping=0.0), wrench,
                               rtol=1e-9, atol=1e-9)
    damped = estimate_wrench(jac, jac.T @ wrench)
    assert np.linalg.norm(damped - wrench) < 1e-2 * np.linalg.norm(wrench)
    # a 2-joint arm feels only two components: the estimate explains r with the least norm
    planar = RobotModel.from_urdf_file(urdf_path('planar_2r'))
    q = np.array([0.4, 0.9])
    tip = planar.link_names[-1]
    jac2 = planar.jacobian(q, tip)
    r = jac2.T @ wrench
    est = estimate_wrench(jac2, r, damping=1e-4)
    np.testing.assert_allclose(jac2.T @ est, r, atol=1e-6)
    np.testing.assert_allclose(est, np.linalg.pinv(jac2.T) @ r, atol=1e-6)
    with pytest.raises(InputError):
        estimate_wrench(jac, np.zeros(6))
    with pytest.raises(InputError):
        estimate_wrench(jac, np.zeros(7), damping=-1.0)


def test_wrench_in_axes_round_trip(cobot):
    rot = cobot.link_transform(POSE, 'tool0')[:3, :3]
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    local = wrench_in_axes(w, rot)
    np.testing.assert_allclose(np.concatenate((rot @ local[:3], rot @ local[3:])), w)
    # J^T w is frame-independent: world-axes J with w equals link-axes J with local
    np.testing.assert_allclose(cobot.jacobian(POSE, 'tool0').T @ w,
                               cobot.jacobian(POSE, 'tool0', frame='link').T @ local,
                               atol=1e-12)


def test_retuned_thresholds_act_from_the_next_update_and_keep_the_flags():
    det = ContactDetector([1.0, 2.0], hysteresis=0.25)
    assert det.update([1.5, 0.0]).flags.tolist() == [True, False]
    det.retune([2.0, 1.0], hysteresis=0.5)
    # joint 1 stays in contact until below the new release threshold 1.0; joint 2 is now
    # flagged above 1.0
    assert det.update([1.2, 1.1]).flags.tolist() == [True, True]
    assert det.update([0.99, 0.6]).flags.tolist() == [False, True]
    assert det.update([0.0, 0.49]).flags.tolist() == [False, False]
    with pytest.raises(InputError, match='2 values'):
        det.retune([1.0, 1.0, 1.0], hysteresis=0.5)
    with pytest.raises(InputError, match='hysteresis'):
        det.retune([1.0, 1.0], hysteresis=1.0)
    np.testing.assert_allclose(det.thresholds, [2.0, 1.0])   # the old settings stay


def test_a_link_wrench_in_link_axes_is_what_the_link_feels(cobot):
    # a known wrench at the tool's origin, given in the tool's axes: the joint torques it
    # makes (J^T in the link's axes) come back as that wrench, undamped
    local = np.array([2.0, -1.0, 8.0, 0.3, 0.1, -0.4])
    r = cobot.jacobian(POSE, 'tool0', frame='link').T @ local
    link, axes = wrench_frames(cobot, 'tool0', '')
    assert (link, axes) == ('tool0', 'tool0')
    np.testing.assert_allclose(link_wrench(cobot, POSE, r, link, axes, damping=0.0), local,
                               atol=1e-9)
    # 'world' is the root's axes, '' the tip link; unknown links are named
    link, axes = wrench_frames(cobot, '', 'world')
    assert (link, axes) == (cobot.link_names[-1], cobot.root_link)   # no tip_link set
    for bad in (('nope', ''), ('tool0', 'nope')):
        with pytest.raises(InputError, match="'nope'"):
            wrench_frames(cobot, *bad)


def test_the_command_in_force_is_paired_not_the_newest():
    history = CommandHistory(max_age=0.05, delay=0.002)
    ms = 1_000_000
    for k in range(5):   # a command every 2 ms from t = 10 ms on, value k
        history.add((10 + 2 * k) * ms, np.full(2, float(k)))
    # a state received at 15 ms pairs with the one received by 13 ms (the delay): k = 1
    assert history.at(15 * ms, '/cmd')[0] == 1.0
    # the newest, while it is younger than max_age at the pairing time
    assert history.at(60 * ms, '/cmd')[0] == 4.0
    with pytest.raises(CommandUnavailable, match='older than 0.05 s') as stale:
        history.at(100 * ms, '/cmd')
    assert stale.value.kind == 'command stale'
    with pytest.raises(CommandUnavailable, match='no effort command on /cmd') as missing:
        history.at(11 * ms, '/cmd')
    assert missing.value.kind == 'command missing'


def test_a_contact_flag_counts_from_the_motion_on_and_while_young():
    # on the joint states' clock: the motion started at 10 s, the newest state is 12 s
    assert contact_is_current(11.8, 12.0, since=10.0, max_age=0.5)
    assert contact_is_current(10.0, 10.4, since=10.0, max_age=0.5)      # its very start
    assert not contact_is_current(9.99, 10.2, since=10.0, max_age=0.5)  # before the motion
    assert not contact_is_current(11.4, 12.0, since=10.0, max_age=0.5)  # too old


# ---------------------------------------------------------------------- stiction
def _held_at_rest(observer: MomentumObserver, model: RobotModel, held: np.ndarray,
                  seconds: float = 2.0, dt: float = 1e-3) -> np.ndarray:
    """Feed ``seconds`` of the arm still at POSE with motor torque g + held; return r."""
    tau = model.gravity_torques(POSE) + held
    zero = np.zeros(model.dof)
    r = zero
    for k in range(int(round(seconds / dt)) + 1):
        r = observer.update(k * dt, POSE, zero, tau)
    return r


def test_at_rest_dry_friction_explains_what_it_can_hold(cobot):
    """
    Still arm, motor torque g + h: the balance 0 = h + tau_ext - F. Without stiction the
    model's friction at rest is zero and r -> -h; with it, F takes any value up to f_c, so r
    -> 0 where |h| <= f_c and -(h - f_c sign h) beyond (50 time constants: converged).
    """
    coulomb = cobot.coulomb_friction
    assert np.all(coulomb > 0.1)
    held = 0.9 * coulomb * np.array([1, -1, 1, -1, 1, -1, 1])
    held[3] = -(coulomb[3] + 2.0)   # beyond what joint 4's friction can hold
    plain = _held_at_rest(MomentumObserver(cobot, 25.0), cobot, held)
    np.testing.assert_allclose(plain, -held, rtol=1e-6, atol=1e-9)
    sticking = _held_at_rest(MomentumObserver(cobot, 25.0, stiction=True), cobot, held)
    expected = np.zeros(7)
    expected[3] = 2.0
    np.testing.assert_allclose(sticking, expected, rtol=1e-6, atol=1e-9)


def test_stiction_changes_nothing_on_a_moving_arm(cobot):
    """Every joint faster than rest_speed: the same residual to the last bit."""
    plain = MomentumObserver(cobot, 40.0)
    sticking = MomentumObserver(cobot, 40.0, stiction=True)
    wrench = {'tool0': np.array([3.0, -2.0, 5.0, 0.1, 0.0, 0.2])}
    for k in range(300):
        t = 0.1 + k * 1e-3
        q, qd, qdd = smooth_motion(t, POSE)
        qd = qd + np.sign(qd) * 0.05   # every joint at 0.05 rad/s or faster
        tau = cobot.inverse_dynamics(q, qd, qdd, external_wrenches=wrench)
        np.testing.assert_array_equal(sticking.update(t, q, qd, tau), plain.update(t, q, qd, tau))


def test_stiction_needs_friction_and_a_rest_speed(cobot):
    with pytest.raises(InputError, match='stiction needs include_friction'):
        MomentumObserver(cobot, 25.0, include_friction=False, stiction=True)
    for bad in (-0.01, math.inf, math.nan, 'slow'):
        with pytest.raises(InputError, match='rest_speed'):
            MomentumObserver(cobot, 25.0, stiction=True, rest_speed=bad)


def test_breakaway_from_rest_on_mujoco_is_no_contact_and_a_push_still_is():
    """
    MuJoCo's dry friction sticks: cobot7 with 8 times its URDF friction (1.2 to 5.1 N m), the
    model exact otherwise, a PD + feed-forward move of 0.3 rad per joint from rest. Without
    stiction the torque the friction holds before breakaway shows in r above the 1.5 N m
    threshold of config/external_torque_observer.yaml (measured 1.84); with it the move
    stays under 1.0 (0.76). A 30 N push at rest is flagged within 10 ms either way (3 and 4
    ms), with r no more than 2 f_c below the push's own joint torques.
    """
    pytest.importorskip('mujoco', reason='mujoco (mujoco-core) not installed')
    import re
    from manip_dynamics.simulation.mujoco_arm import MujocoArm
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        text = re.sub(r'friction="([0-9.]+)"',
                      lambda m: 'friction="%g"' % (8.0 * float(m.group(1))), stream.read())
    model = RobotModel.from_urdf_string(text)
    coulomb = model.coulomb_friction
    lower, upper = model.position_lower, model.position_upper
    start = np.where(np.isfinite(lower) & np.isfinite(upper), 0.5 * (lower + upper), 0.0)
    step, begin, duration, threshold = 1e-3, 0.3, 1.5, 1.5
    inertia = np.diag(model.mass_matrix(start)) + model.armature
    kp, kd = inertia * 20.0 ** 2, 2.0 * inertia * 20.0

    def reference(t):
        s = min(max((t - begin) / duration, 0.0), 1.0)
        shape = np.array([10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5,
                          (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration,
                          (60 * s - 180 * s ** 2 + 120 * s ** 3) / duration ** 2])
        return [start + shape[0] * 0.3, shape[1] * 0.3 * np.ones(7),
                shape[2] * 0.3 * np.ones(7)]

    wrench = np.array([0.0, 30.0, 0.0, 0.0, 0.0, 0.0])
    for stiction in (False, True):
        arm = MujocoArm(model, text, start, dt=step)
        observer = MomentumObserver(model, 25.0, stiction=stiction)
        moving = 0.0
        for k in range(int(round((begin + duration + 0.5) / step))):
            q, qd, qdd = reference(k * step)
            arm.step(model.inverse_dynamics(q, qd, qdd) + model.friction_torques(qd)
                     + kp * (q - arm.q) + kd * (qd - arm.qd))
            r = observer.update(arm.t, arm.q, arm.qd, arm.applied_effort)
            moving = max(moving, float(np.abs(r).max()))
        if stiction:
            assert moving < 1.0, moving
        else:
            assert moving > threshold, moving   # the false contact stiction removes
        end = arm.q.copy()
        arm.set_external_wrenches({'tool0': wrench})
        flagged = None
        for k in range(500):
            arm.step(model.gravity_torques(end) + kp * (end - arm.q) - kd * arm.qd)
            r = observer.update(arm.t, arm.q, arm.qd, arm.applied_effort)
            if flagged is None and np.abs(r).max() > threshold:
                flagged = (k + 1) * step
        assert flagged is not None and flagged <= 0.01, flagged
        pushed = push_joint_torques(model, arm.q, 'tool0', wrench)
        assert np.all(np.abs(r - pushed) <= 2.0 * coulomb + 0.05 * np.abs(pushed) + 0.1), (
            r, pushed)
