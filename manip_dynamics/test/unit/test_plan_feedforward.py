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
plan_with_feedforward: a planner's timed plan checked, retimed or refused, fed forward.

References: the efforts are checked against M(q) qdd + C(q, qd) qd + g(q) assembled from
the model's own terms (Craig eq. 6.59, a different algorithm from the recursive
Newton-Euler that fills them) plus the written-out rotor inertia and friction; the limits
are the URDF's.
"""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.control.plan_feedforward import (
    hold_efforts, plan_with_feedforward, PlanRefused)

Q0 = np.array([0.0, -0.7854, 0.0, -2.3562, 0.0, 1.5708, 0.7854])
MOVE = np.array([0.5, 0.3, -0.4, 0.4, 0.6, -0.3, 0.8])


@pytest.fixture(scope='module')
def model():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


def quintic(duration: float, points: int = 31):
    t = np.linspace(0.0, duration, points)
    s = t / duration
    h = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
    hd = (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration
    hdd = (60 * s - 180 * s ** 2 + 120 * s ** 3) / duration ** 2
    return t, Q0 + np.outer(h, MOVE), np.outer(hd, MOVE), np.outer(hdd, MOVE)


def craig_torques(model, q, qd, qdd):
    """M qdd + C qd + g (Craig eq. 6.59) + I_a qdd + viscous and Coulomb friction."""
    out = []
    for k in range(len(q)):
        m = model.mass_matrix(q[k])
        c = model.coriolis_matrix(q[k], qd[k])
        g = model.gravity_torques(q[k])
        friction = model.damping * qd[k] + model.coulomb_friction * np.tanh(
            qd[k] / model.friction_velocity)
        out.append(m @ qdd[k] + c @ qd[k] + g + model.armature * qdd[k] + friction)
    return np.array(out)


def test_a_feasible_plan_keeps_its_timing_and_gets_the_dynamics_as_efforts(model):
    t, q, qd, qdd = quintic(3.0)
    order = list(range(model.dof))[::-1]   # the planner's joint order differs
    names = [model.joint_names[j] for j in order]
    plan = plan_with_feedforward(model, names, t, q[:, order], qd[:, order], qdd[:, order])
    assert not plan.retimed and plan.joint_names == tuple(model.joint_names)
    np.testing.assert_allclose(plan.times, t)
    np.testing.assert_allclose(plan.positions, q)
    np.testing.assert_allclose(plan.efforts, craig_torques(model, q, qd, qdd), atol=1e-6)
    assert 0.0 < plan.velocity_usage < 1.0 and 0.0 < plan.effort_usage < 1.0
    without = plan_with_feedforward(model, names, t, q[:, order], qd[:, order],
                                    qdd[:, order], gravity='exclude')
    gravity = np.array([model.gravity_torques(row) for row in q])
    np.testing.assert_allclose(plan.efforts - without.efforts, gravity, atol=1e-9)


def test_positions_only_are_given_the_velocities_of_the_curve_jtc_follows(model):
    t, q, _, _ = quintic(3.0)
    plan = plan_with_feedforward(model, model.joint_names, t, q)
    # a clamped spline through the points: at rest at both ends, moving between
    assert np.abs(plan.velocities[[0, -1]]).max() < 1e-9
    assert np.abs(plan.velocities[len(t) // 2]).max() > 0.1
    np.testing.assert_allclose(plan.efforts, craig_torques(
        model, plan.positions, plan.velocities, plan.accelerations), atol=1e-6)


def test_a_plan_too_fast_is_refused_or_retimed_within_the_limits(model):
    t, q, qd, qdd = quintic(0.4)
    with pytest.raises(PlanRefused, match='velocity limit'):
        plan_with_feedforward(model, model.joint_names, t, q, qd, qdd,
                              on_infeasible='refuse')
    plan = plan_with_feedforward(model, model.joint_names, t, q, qd, qdd)
    assert plan.retimed and plan.velocity_usage > 1.0
    assert np.all(np.abs(plan.velocities) <= model.velocity_limits * (1 + 1e-6))
    torques = craig_torques(model, plan.positions, plan.velocities, plan.accelerations)
    assert np.all(np.abs(torques) <= model.effort_limits * (1 + 1e-6))
    np.testing.assert_allclose(plan.positions[[0, -1]], q[[0, -1]], atol=1e-9)
    assert plan.duration > 0.4


@pytest.mark.parametrize('change, match', [
    (lambda n, t, q: (n[:-1], t, q[:, :-1]), 'missing'),
    (lambda n, t, q: (n[:-1] + ['nope'], t, q), 'does not have'),
    (lambda n, t, q: (n, t[::-1], q), 'increase'),
    (lambda n, t, q: (n, t, np.where(q == q[3, 2], np.nan, q)), 'finite'),
    (lambda n, t, q: (n, t, q + 10.0), 'position limits'),
])
def test_bad_plans_are_refused_with_the_reason(model, change, match):
    t, q, _, _ = quintic(3.0)
    names, times, positions = change(list(model.joint_names), t, q)
    with pytest.raises(PlanRefused, match=match):
        plan_with_feedforward(model, names, times, positions)


def test_the_hold_effort_is_gravity_or_nothing(model):
    np.testing.assert_allclose(hold_efforts(model, Q0), model.gravity_torques(Q0))
    np.testing.assert_allclose(hold_efforts(model, Q0, 'exclude'), np.zeros(model.dof))
