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
Torque-feasible retiming: waypoints, smoothness, limits everywhere, optimality.

References: the waypoints themselves (passed exactly), finite differences of the sampled
positions (the returned velocities and accelerations are their derivatives), Pinocchio's
``rnea`` for the torques, and the ``toppra`` package for the optimal duration (a slow test).
"""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.planning import read_joint_limits_yaml, retime

READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
WAYPOINTS = np.array([READY, [0.5, -0.3, 0.2, -1.8, 0.3, 1.8, 0.5],
                      [1.0, 0.2, -0.2, -1.2, -0.3, 2.2, 0.2],
                      [0.4, 0.1, 0.3, -1.6, 0.2, 1.4, -0.3]])
ACC = 5.0


@pytest.fixture(scope='module')
def cobot():
    """Return cobot7 with a 3 kg payload: the torque limit matters."""
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    model.set_payload('tool0', 3.0, [0.0, 0.0, 0.05], [0.01, 0, 0, 0.01, 0, 0.01])
    return model


@pytest.fixture(scope='module')
def trajectory(cobot):
    """Return the retimed path with tight effort limits (60 % of the URDF's)."""
    return retime(cobot, WAYPOINTS, acceleration_limits=ACC, effort_scale=0.6)


def _pinocchio_cobot7(model, payload: bool = False):
    """
    Return Pinocchio's cobot7 and its data, with ``model``'s gravity and rotor inertias.

    ``payload``: the ``cobot`` fixture's 3 kg at tool0, as an inertia on tool0's parent joint.
    """
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        ref = pin.buildModelFromXML(stream.read())
    ref.gravity.linear = model.gravity
    if payload:
        frame = ref.frames[ref.getFrameId('tool0')]
        inertia = pin.Inertia(3.0, np.array([0.0, 0.0, 0.05]), np.diag([0.01, 0.01, 0.01]))
        ref.inertias[frame.parentJoint] += frame.placement.act(inertia)
    ref.armature = model.armature
    return ref, ref.createData()


def _effort_use(model, reference, q, qd, qdd, effort_scale=0.6) -> float:
    """Return the largest |Pinocchio's rnea plus ``model``'s friction| / the used limit."""
    import pinocchio as pin

    ref, data = reference
    friction = model.friction_torques(qd)
    limit = effort_scale * model.effort_limits
    return max(float(np.max(np.abs(pin.rnea(ref, data, q[k], qd[k], qdd[k]) + friction[k])
                            / limit)) for k in range(len(q)))


def test_passes_through_every_waypoint_in_order(trajectory):
    times = trajectory.waypoint_times
    assert times[0] == 0.0 and times[-1] == pytest.approx(trajectory.duration)
    assert np.all(np.diff(times) > 0.0)
    q, qd, _ = trajectory.sample(times)
    np.testing.assert_allclose(q, WAYPOINTS, rtol=0, atol=1e-6)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-9)  # starts and ends at rest


def test_velocity_and_acceleration_are_continuous_derivatives(trajectory):
    dt = 1e-5
    t = np.arange(-0.01, trajectory.duration + 0.01, dt)
    q, qd, qdd = trajectory.sample(t)
    # the returned derivatives are those of the positions (central differences)
    np.testing.assert_allclose((q[2:] - q[:-2]) / (2 * dt), qd[1:-1], rtol=0, atol=1e-4)
    np.testing.assert_allclose((qd[2:] - qd[:-2]) / (2 * dt), qdd[1:-1], rtol=0, atol=2e-2)
    # continuous: no step between two samples 10 us apart (a jump of the acceleration
    # would show as a step of its size; a bounded jerk moves it by jerk * dt)
    assert np.max(np.abs(np.diff(qd, axis=0))) < 1e-3
    assert np.max(np.abs(np.diff(qdd, axis=0))) < 0.5
    # at rest before and after, and the acceleration starts and ends at 0
    np.testing.assert_allclose(qdd[[0, -1]], 0.0, atol=1e-9)


@pytest.mark.parametrize('rate', [1000.0, 10000.0])
def test_limits_hold_at_every_sample(cobot, trajectory, rate):
    # the same payload in Pinocchio's model, and the rotor inertias
    reference = _pinocchio_cobot7(cobot, payload=True)
    t = np.arange(0.0, trajectory.duration, 1.0 / rate)
    q, qd, qdd = trajectory.sample(t)
    assert np.all(np.abs(qd) <= cobot.velocity_limits)
    assert np.all(np.abs(qdd) <= ACC)
    worst = _effort_use(cobot, reference, q, qd, qdd)
    assert worst <= 1.0, 'effort limit exceeded: %.4f of it' % worst
    assert worst > 0.9, 'the effort limit is not what limits this motion (%.3f)' % worst


def _long_path(model, count, seed):
    """Return ``count`` random waypoints in the middle half of each joint's range."""
    rng = np.random.default_rng(seed)
    lo, hi = model.position_lower, model.position_upper
    mid, half = 0.5 * (lo + hi), 0.25 * (hi - lo)
    return mid + rng.uniform(-1.0, 1.0, (count, model.dof)) * half


def test_the_coarse_check_never_reports_less_than_the_dense_one():
    """
    A piece the coarse check accepts (a few samples and a curvature bound) must not hide a
    peak that the check at ``check_rate`` sees: its reported use is at least the dense one.
    """
    from manip_dynamics.planning import retiming
    from manip_dynamics.planning.reachability import limit_usage

    captured = {}
    usage = retiming._usage

    def spy(table, traj, p, counts, todo, accept, out):
        captured.setdefault('first', (table, traj, p, counts.copy(), accept))
        return usage(table, traj, p, counts, todo, accept, out)

    bare = RobotModel.from_urdf_file(urdf_path('cobot7'))
    retiming._usage = spy
    try:
        retime(bare, _long_path(bare, 8, 1), acceleration_limits=ACC, effort_scale=0.6)
    finally:
        retiming._usage = usage
    # the first check: the unrepaired profile, pieces over and under the limits
    table, traj, p, counts, accept = captured['first']
    every = np.ones(len(counts), dtype=np.bool_)
    args = (traj._t, traj._coef, counts, every, traj._knots[0], traj._knots[-1], table.knots,
            table.poly, table.terms, table.err, table.s, p.inv_v, p.inv_a, p.inv_tau,
            table.damping, table.coulomb, table.friction_velocity)
    coarse = np.zeros((3, len(counts)))
    dense = np.zeros((3, len(counts)))
    limit_usage(*args, retiming.COARSE_CHECK_POINTS, accept, coarse)
    limit_usage(*args, 0, accept, dense)
    accepted = np.all(coarse <= accept, axis=0)
    assert 0 < np.count_nonzero(accepted) < len(counts)  # both kinds of piece are there
    assert np.all(dense[:, accepted] <= coarse[:, accepted] + 1e-12)
    assert np.any(np.max(dense, axis=0) > accept)  # the unrepaired profile is over somewhere


def test_a_long_path_keeps_every_limit_at_10_khz():
    """12 waypoints (about 9 s): the coarse check decides most pieces, Pinocchio checks."""
    bare = RobotModel.from_urdf_file(urdf_path('cobot7'))
    reference = _pinocchio_cobot7(bare)
    w = _long_path(bare, 12, 2)
    traj = retime(bare, w, acceleration_limits=ACC, effort_scale=0.6)
    t = np.arange(0.0, traj.duration, 1e-4)
    q, qd, qdd = traj.sample(t)
    assert np.max(np.abs(qd) / bare.velocity_limits) <= 1.0
    assert np.max(np.abs(qdd)) <= ACC
    worst = _effort_use(bare, reference, q, qd, qdd)
    assert worst <= 1.0, 'effort limit exceeded: %.4f of it' % worst
    q_w, _, _ = traj.sample(traj.waypoint_times)
    np.testing.assert_allclose(q_w, w, rtol=0, atol=1e-6)


def test_torque_limit_and_payload_make_it_slower(cobot):
    bare = RobotModel.from_urdf_file(urdf_path('cobot7'))
    fast = retime(bare, WAYPOINTS, acceleration_limits=ACC)
    loaded = retime(cobot, WAYPOINTS, acceleration_limits=ACC, effort_scale=0.6)
    assert loaded.duration > fast.duration
    half = retime(bare, WAYPOINTS, acceleration_limits=ACC, velocity_scale=0.5,
                  acceleration_scale=0.5)
    assert half.duration > fast.duration


def test_the_uniform_slow_down_also_keeps_every_limit(cobot):
    """Without repair rounds the last resort, a uniform slow-down, must hold the limits."""
    traj = retime(cobot, WAYPOINTS, acceleration_limits=ACC, effort_scale=0.6,
                  max_repairs=0)
    assert traj.report.slowed_down > 1.0
    t = np.arange(0.0, traj.duration, 1e-4)
    q, qd, qdd = traj.sample(t)
    tau = cobot.inverse_dynamics(q, qd, qdd, include_friction=True, include_armature=True)
    assert np.max(np.abs(qd) / cobot.velocity_limits) <= 1.0
    assert np.max(np.abs(qdd)) <= ACC
    assert np.max(np.abs(tau) / (0.6 * cobot.effort_limits)) <= 1.0
    q_w, _, _ = traj.sample(traj.waypoint_times)
    np.testing.assert_allclose(q_w, WAYPOINTS, rtol=0, atol=1e-6)


def test_joint_trajectory_document(trajectory):
    doc = trajectory.to_joint_trajectory(rate=50.0)
    times = np.array([p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
                      for p in doc['points']])
    assert np.all(np.diff(times) > 0.0)
    for t_w, w in zip(trajectory.waypoint_times, WAYPOINTS):
        k = int(np.argmin(np.abs(times - t_w)))
        assert abs(times[k] - t_w) < 1e-9
        np.testing.assert_allclose(doc['points'][k]['positions'], w, atol=1e-6)
    assert doc['joint_names'] == ['cobot7_joint%d' % i for i in range(1, 8)]


def test_joint_limits_yaml(cobot, tmp_path):
    names = cobot.joint_names
    text = 'joint_limits:\n' + ''.join(
        '  %s:\n    has_velocity_limits: true\n    max_velocity: 1.0\n'
        '    has_acceleration_limits: true\n    max_acceleration: 2.0\n' % n for n in names)
    text += '  gripper_finger:\n    has_acceleration_limits: true\n    max_acceleration: 1\n'
    path = tmp_path / 'joint_limits.yaml'
    path.write_text(text)
    limits = read_joint_limits_yaml(str(path), names)
    assert limits['acceleration'] == dict.fromkeys(names, 2.0)
    traj = retime(cobot, WAYPOINTS[:2], joint_limits=str(path))
    t = np.arange(0.0, traj.duration, 1e-3)
    _, qd, qdd = traj.sample(t)
    assert np.max(np.abs(qd)) <= 1.0 and np.max(np.abs(qdd)) <= 2.0


@pytest.mark.parametrize('kwargs, text', [
    ({}, 'acceleration limits: a URDF has none'),
    ({'acceleration_limits': -1.0}, 'must be > 0'),
    ({'acceleration_limits': [1.0] * 3}, '3 values for 7 joints'),
    ({'acceleration_limits': {'nope': 1.0}}, "unknown joint 'nope'"),
    ({'acceleration_limits': 1.0, 'velocity_scale': 0.0}, 'velocity_scale'),
    ({'acceleration_limits': 1.0, 'effort_limits': float('nan')}, 'effort_limits'),
])
def test_bad_limits_are_named(cobot, kwargs, text):
    with pytest.raises(ValueError, match=text):
        retime(cobot, WAYPOINTS, **kwargs)


def test_bad_waypoints_are_named(cobot):
    with pytest.raises(ValueError, match='shape'):
        retime(cobot, WAYPOINTS[:, :3], acceleration_limits=1.0)
    with pytest.raises(ValueError, match='same pose'):
        retime(cobot, WAYPOINTS[[0, 0, 1]], acceleration_limits=1.0)
    bad = WAYPOINTS.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="waypoint 1 has NaN/inf for joint 'cobot7_joint3'"):
        retime(cobot, bad, acceleration_limits=1.0)
    out = WAYPOINTS.copy()
    out[1, 0] = 10.0
    with pytest.raises(ValueError, match='outside the limits'):
        retime(cobot, out, acceleration_limits=1.0)


def test_a_spline_that_leaves_the_position_limits_is_named(cobot):
    """Two waypoints just inside the upper limit: the cubic between them bulges over it."""
    top = cobot.position_upper[0]
    w = WAYPOINTS.copy()
    w[1, 0] = w[2, 0] = top - 0.005
    with pytest.raises(ValueError, match="joint 'cobot7_joint1' between waypoints 1 and 2"):
        retime(cobot, w, acceleration_limits=ACC)
    # the reference: the same natural spline, sampled densely, is over the limit there
    from scipy.interpolate import CubicSpline
    knots = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(w, axis=0), axis=1))])
    dense = CubicSpline(knots, w, bc_type='natural', axis=0)(
        np.linspace(knots[1], knots[2], 1001))
    assert dense[:, 0].max() > top
    # a path whose spline stays inside (by the same reference) is accepted
    w[1, 0], w[2, 0] = top - 0.05, 0.2
    knots = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(w, axis=0), axis=1))])
    dense = CubicSpline(knots, w, bc_type='natural', axis=0)(np.linspace(0, knots[-1], 5001))
    assert np.all(dense <= cobot.position_upper) and np.all(dense >= cobot.position_lower)
    assert retime(cobot, w, acceleration_limits=ACC).duration > 0.0


def test_an_arm_too_weak_to_hold_the_path_is_refused(cobot):
    with pytest.raises(ValueError, match='effort limit to hold the arm'):
        retime(cobot, WAYPOINTS, acceleration_limits=ACC, effort_scale=0.01)


@pytest.mark.slow
def test_duration_within_5_percent_of_toppra(cobot):
    ta = pytest.importorskip('toppra',
                             reason='toppra not installed (scripts/requirements-dev.txt)')
    import toppra.algorithm as algo
    import toppra.constraint as constraint
    bare = RobotModel.from_urdf_file(urdf_path('cobot7'))
    rng = np.random.default_rng(3)
    for _ in range(3):
        w = READY + rng.uniform(-0.6, 0.6, (4, 7))
        w[0] = READY
        ours = retime(bare, w, acceleration_limits=ACC, include_friction=False,
                      effort_scale=0.3)
        # toppra on the same waypoints and limits, our model's inverse dynamics as its
        # torque constraint, its own spline through the waypoints
        path = ta.SplineInterpolator(np.linspace(0.0, 1.0, len(w)), w)
        vel = constraint.JointVelocityConstraint(
            np.vstack([-bare.velocity_limits, bare.velocity_limits]).T)
        acc = constraint.JointAccelerationConstraint(
            np.vstack([-np.full(7, ACC), np.full(7, ACC)]).T)
        tau = 0.3 * bare.effort_limits
        torque = constraint.JointTorqueConstraint(
            lambda q, qd, qdd: bare.inverse_dynamics(q, qd, qdd, include_armature=True),
            np.vstack([-tau, tau]).T, np.zeros(7))
        reference = algo.TOPPRA([vel, acc, torque], path).compute_trajectory(0, 0)
        assert reference is not None
        assert ours.duration <= 1.05 * reference.duration, (ours.duration,
                                                            reference.duration)


def test_retime_command(tmp_path):
    import os
    import subprocess
    import sys
    import yaml
    from manip_dynamics.ros.runtime.node_process import PACKAGE_ROOT
    names = ['cobot7_joint%d' % i for i in range(1, 8)]
    csv = tmp_path / 'waypoints.csv'
    csv.write_text(','.join(names) + '\n' + ''.join(
        ','.join('%.17g' % v for v in row) + '\n' for row in WAYPOINTS))
    out = tmp_path / 'timed.yaml'
    env = dict(os.environ)
    env['PYTHONPATH'] = PACKAGE_ROOT + os.pathsep + env.get('PYTHONPATH', '')
    cli = [sys.executable, '-m', 'manip_dynamics.cli', 'retime', 'cobot7', str(csv)]
    done = subprocess.run(cli + ['--acceleration-limits', '5', '--out', str(out), '--json'],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    doc = yaml.safe_load(out.read_text())
    assert doc['joint_names'] == names
    positions = np.array([p['positions'] for p in doc['points']])
    for w in WAYPOINTS:  # every waypoint is one of the points
        assert np.min(np.max(np.abs(positions - w), axis=1)) < 1e-6
    refused = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=300,
                             check=False)
    assert refused.returncode == 2
    assert '--acceleration-limits' in refused.stderr and 'Traceback' not in refused.stderr


def test_path_terms_match_pinocchio(cobot):
    """A = M q' (+ rotor inertia), B = M q'' + C(q, q') q', C = g(q), by Pinocchio."""
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    with open(urdf_path('cobot7'), encoding='utf-8') as stream:
        ref = pin.buildModelFromXML(stream.read())
    ref.gravity.linear = cobot.gravity
    data = ref.createData()
    bare = RobotModel.from_urdf_file(urdf_path('cobot7'))
    armature = np.linspace(0.01, 0.07, bare.dof)
    bare = bare.with_joint_dynamics(armature=dict(zip(bare.joint_names, armature)))
    rng = np.random.default_rng(4)
    q = rng.uniform(-1.5, 1.5, (20, bare.dof))
    dq = rng.normal(size=q.shape)
    ddq = rng.normal(size=q.shape)
    A, B, C = bare.path_terms(q, dq, ddq, include_armature=True)
    for k in range(len(q)):
        M = pin.crba(ref, data, q[k])
        M = np.triu(M) + np.triu(M, 1).T
        g = pin.computeGeneralizedGravity(ref, data, q[k])
        np.testing.assert_allclose(A[k], M @ dq[k] + armature * dq[k], rtol=0, atol=1e-10)
        np.testing.assert_allclose(B[k], pin.rnea(ref, data, q[k], dq[k], ddq[k]) - g
                                   + armature * ddq[k], rtol=0, atol=1e-10)
        np.testing.assert_allclose(C[k], g, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="q' of joint"):
        bare.path_terms(q, np.full_like(q, np.nan), ddq)


def test_each_reachability_stage_matches_a_linear_programme():
    """The x interval where some u meets every row: scipy's linprog, min and max x."""
    linprog = pytest.importorskip('scipy.optimize', reason='scipy not installed').linprog
    from manip_dynamics.planning.reachability import _x_range

    rng = np.random.default_rng(7)
    checked = empty = 0
    for _ in range(300):
        m = int(rng.integers(4, 30))
        al = rng.normal(size=m) * (rng.random(m) > 0.1)  # some rows on x alone
        be = rng.normal(size=m)
        ga = rng.normal(size=m) + 1.0
        lo, hi = _x_range(al, be, ga, 0.0, 50.0, np.empty(m), np.empty(m))
        rows = np.stack([al, be], axis=1)
        ends = [linprog(c, A_ub=rows, b_ub=ga, bounds=[(None, None), (0.0, 50.0)])
                for c in ([0.0, 1.0], [0.0, -1.0])]
        if ends[0].status == 2:  # infeasible
            assert lo > hi
            empty += 1
            continue
        assert ends[0].status == 0 and ends[1].status == 0
        np.testing.assert_allclose([lo, hi], [ends[0].fun, -ends[1].fun], rtol=1e-7, atol=1e-7)
        checked += 1
    assert checked > 50 and empty > 10  # both kinds were met


def test_the_interpolation_bound_covers_the_path_terms(cobot):
    """
    Between grid points the interpolated A, B, C stay within the bound the check adds.

    The bound estimates the curvature from the grid rows, so where the curvature changes
    fast it can fall short: by at most 1e-5 of the effort limit (per unit of sdd and sd^2;
    1 % of the check's margin), and by more than 1e-7 of it in at most 0.2 % of the entries.
    """
    from scipy.interpolate import CubicSpline

    from manip_dynamics.planning import retiming

    limit = cobot.effort_limits
    for seed in (1, 2, 3):
        w = _long_path(cobot, 8, seed)
        knots = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(w, axis=0), axis=1))])
        path = CubicSpline(knots, w, bc_type='natural', axis=0)
        s, index = retiming._grid(knots, None)
        terms = np.stack(cobot.path_terms(path(s), path(s, 1), path(s, 2)), axis=1)
        err = retiming._interpolation_bound(s, terms, index)
        for frac in (0.25, 0.5, 0.75):
            mid = s[:-1] + frac * np.diff(s)
            exact = np.stack(cobot.path_terms(path(mid), path(mid, 1), path(mid, 2)), axis=1)
            gap = np.abs(exact - ((1.0 - frac) * terms[:-1] + frac * terms[1:]))
            assert np.all(gap <= err + 1e-5 * limit)
            assert np.count_nonzero(gap > err + 1e-7 * limit) <= 2e-3 * gap.size
            # and the bound is not vacuous: the interpolation's error is of its size
            assert np.max(gap / limit) > 0.1 * np.max(err / limit)


def test_the_friction_lines_bound_the_friction_at_every_speed():
    """f_hi + e_hi sd^2 >= the friction >= f_lo - e_lo sd^2 for every sd up to the top."""
    from manip_dynamics.planning import retiming

    rng = np.random.default_rng(5)
    dq = rng.normal(size=(50, 7))
    v = rng.uniform(0.5, 3.0, 7)
    damping, coulomb = rng.uniform(0.0, 10.0, 7), rng.uniform(0.0, 2.0, 7)
    top = np.min(v / np.abs(dq), axis=1)
    gravity = rng.normal(size=dq.shape) * 5.0
    tau = np.full(7, 12.0)
    for tangent in (0.5, 0.125, 1.0):
        f_hi, f_lo, e_hi, e_lo = retiming._friction_rows(dq, v, (damping, coulomb), tangent,
                                                         gravity, tau)
        for share in np.linspace(0.0, 1.0, 41):
            sd = (share * top)[:, None]
            # the friction in the direction of motion, Coulomb at full size
            friction = damping * dq * sd + coulomb * np.sign(dq)
            assert np.all(friction <= f_hi + e_hi * sd ** 2 + 1e-12)
            assert np.all(friction >= f_lo - e_lo * sd ** 2 - 1e-12)


def test_a_strongly_damped_arm_is_retimed_within_its_limits():
    """
    Viscous friction at the top speed of 40 % of the effort limit (a real description,
    xarm7 in example-robot-data, has as much): the path is timed (a constant bound of the
    friction at the top speed refused it), every limit kept at 10 kHz by Pinocchio's
    efforts plus the friction.
    """
    bare = RobotModel.from_urdf_file(urdf_path('cobot7'))
    damping = 0.4 * 0.6 * bare.effort_limits / bare.velocity_limits
    arm = bare.with_joint_dynamics(damping=dict(zip(bare.joint_names, damping)),
                                   friction=dict.fromkeys(bare.joint_names, 1.0))
    reference = _pinocchio_cobot7(arm)
    w = _long_path(arm, 6, 4)
    traj = retime(arm, w, acceleration_limits=ACC, effort_scale=0.6)
    t = np.arange(0.0, traj.duration, 1e-4)
    q, qd, qdd = traj.sample(t)
    worst = _effort_use(arm, reference, q, qd, qdd)
    assert worst <= 1.0, 'effort limit exceeded: %.4f of it' % worst
    assert np.max(np.abs(qd) / arm.velocity_limits) <= 1.0
