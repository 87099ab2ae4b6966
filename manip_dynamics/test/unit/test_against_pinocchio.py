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
Compare the library with Pinocchio (PyPI ``pin``), an independent implementation.

Robots: Panda (9 DoF with fingers) and UR5 from example-robot-data, every bundled URDF,
and random trees from ``urdf_factory`` (hypothesis).  Both libraries load the same URDF
text; joints are matched by name (Pinocchio's continuous joints take (cos, sin) in q).
Quantities: rnea, crba, computeGeneralizedGravity, nonLinearEffects - gravity (C qd),
computeCoriolisMatrix, aba, and rnea with external forces.  Acceptance: relative error
``max|ours - pin| / max(max|pin|, 1)`` <= 1e-8 (the issue's bound).
"""

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path

pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
hypothesis = pytest.importorskip('hypothesis', reason='hypothesis not installed')
st = pytest.importorskip('hypothesis.strategies', reason='hypothesis not installed')

REL = 1e-8


class PinPair:
    """Our model and Pinocchio's, loaded from the same URDF, with the index maps."""

    def __init__(self, xml: str, gravity=(0.0, 0.0, -9.81)) -> None:
        self.ours = RobotModel.from_urdf_string(xml, gravity=gravity)
        self.pin = pin.buildModelFromXML(xml)
        self.pin.gravity.linear = np.array(gravity, dtype=float)
        self.data = self.pin.createData()
        assert self.pin.nv == self.ours.dof
        self.idx_q, self.idx_v, self.continuous = [], [], []
        for name in self.ours.joint_names:
            jid = self.pin.getJointId(name)
            assert jid < self.pin.njoints, 'Pinocchio has no joint %r' % name
            joint = self.pin.joints[jid]
            self.idx_q.append(joint.idx_q)
            self.idx_v.append(joint.idx_v)
            self.continuous.append(joint.nq == 2)
        self.idx_v = np.array(self.idx_v)

    def q(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin.nq)
        for i, (k, cont) in enumerate(zip(self.idx_q, self.continuous)):
            if cont:
                out[k], out[k + 1] = np.cos(q[i]), np.sin(q[i])
            else:
                out[k] = q[i]
        return out

    def v(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pin.nv)
        out[self.idx_v] = v
        return out

    def back(self, x: np.ndarray) -> np.ndarray:
        """Return Pinocchio's v-indexed vector or matrix in our joint order."""
        if x.ndim == 1:
            return x[self.idx_v]
        return x[np.ix_(self.idx_v, self.idx_v)]

    def fext(self, wrenches: dict) -> object:
        """Return Pinocchio's per-joint forces (joint frames) for our link wrenches."""
        forces = pin.StdVec_Force()
        for _ in range(self.pin.njoints):
            forces.append(pin.Force.Zero())
        for link, w in wrenches.items():
            frame = self.pin.frames[self.pin.getFrameId(link)]
            force = frame.placement.act(pin.Force(np.asarray(w[:3]), np.asarray(w[3:])))
            forces[frame.parentJoint] = forces[frame.parentJoint] + force
        return forces

    def state(self, seed: int):
        rng = np.random.default_rng(seed)
        n = self.ours.dof
        lower = np.where(np.isfinite(self.ours.position_lower), self.ours.position_lower, -3.0)
        upper = np.where(np.isfinite(self.ours.position_upper), self.ours.position_upper, 3.0)
        return rng.uniform(lower, upper), rng.uniform(-2, 2, n), rng.uniform(-3, 3, n)


def rel_error(ours, ref) -> float:
    ours, ref = np.asarray(ours), np.asarray(ref)
    return float(np.max(np.abs(ours - ref)) / max(float(np.max(np.abs(ref))), 1.0))


def compare(pair: PinPair, seeds=range(5), wrench_links=()) -> dict:
    """Assert every quantity within REL at several states; return the worst errors."""
    worst = {}
    model, data = pair.pin, pair.data
    for seed in seeds:
        q, qd, qdd = pair.state(seed)
        pq, pv, pa = pair.q(q), pair.v(qd), pair.v(qdd)
        m_pin = pin.crba(model, data, pq).copy()
        m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T
        g_pin = pin.computeGeneralizedGravity(model, data, pq).copy()
        tau_pin = pin.rnea(model, data, pq, pv, pa).copy()
        checks = {
            'ID': (pair.ours.inverse_dynamics(q, qd, qdd), pair.back(tau_pin)),
            'M': (pair.ours.mass_matrix(q), pair.back(m_pin)),
            'g': (pair.ours.gravity_torques(q), pair.back(g_pin)),
            'C qd': (pair.ours.coriolis_torques(q, qd),
                     pair.back(pin.nonLinearEffects(model, data, pq, pv).copy() - g_pin)),
            'C': (pair.ours.coriolis_matrix(q, qd),
                  pair.back(pin.computeCoriolisMatrix(model, data, pq, pv).copy())),
            'FD': (pair.ours.forward_dynamics(q, qd, qdd),
                   pair.back(pin.aba(model, data, pq, pv, pair.v(qdd)).copy())),
        }
        # the path terms with q' = qd, q'' = qdd: M q', M q'' + C(q, q') q', g
        terms = pair.ours.path_terms(q, qd, qdd)
        checks['path A'] = (terms[0], pair.back(m_pin) @ qd)
        checks['path B'] = (terms[1], pair.back(tau_pin - g_pin))
        checks['path C'] = (terms[2], pair.back(g_pin))
        if wrench_links:
            rng = np.random.default_rng(100 + seed)
            wrenches = {link: rng.uniform(-10, 10, 6) for link in wrench_links}
            checks['ID+wrench'] = (
                pair.ours.inverse_dynamics(q, qd, qdd, external_wrenches=wrenches),
                pair.back(pin.rnea(model, data, pq, pv, pa, pair.fext(wrenches)).copy()))
        for what, (ours, ref) in checks.items():
            err = rel_error(ours, ref)
            worst[what] = max(worst.get(what, 0.0), err)
            assert err <= REL, '%s differs from Pinocchio by %.3e (seed %d)' % (what, err, seed)
    return worst


def _example_robot(robot: str) -> str:
    path = urdf_factory.example_robot_urdf(robot)
    if path is None:
        pytest.skip('example-robot-data not installed (or has no %s URDF)' % robot)
    with open(path, encoding='utf-8') as f:
        return f.read()


@pytest.mark.parametrize('robot, dof', [('panda', 9), ('ur5', 6)])
def test_example_robot_data(robot, dof):
    xml = _example_robot(robot)
    try:
        pair = PinPair(xml)
    except Exception as exc:  # noqa: B902 - report any loading failure as the skip reason
        pytest.skip('%s failed to load: %s' % (robot, exc))
    assert pair.ours.dof == dof
    links = [name for name in pair.ours.link_names if name != pair.ours.root_link]
    compare(pair, wrench_links=links[-2:])


@pytest.mark.parametrize('name', ['planar_2r', 'puma560', 'cobot7', 'gripper_arm'])
def test_bundled(name):
    with open(urdf_path(name), encoding='utf-8') as f:
        xml = f.read()
    gravity = (0.0, -9.81, 0.0) if name == 'planar_2r' else (0.0, 0.0, -9.81)
    pair = PinPair(xml, gravity=gravity)
    links = [link for link in pair.ours.link_names if link != pair.ours.root_link]
    compare(pair, wrench_links=links[-3:])


@hypothesis.settings(max_examples=30, deadline=None,
                     suppress_health_check=[hypothesis.HealthCheck.too_slow])
@hypothesis.given(seed=st.integers(0, 2 ** 31 - 1), n_links=st.integers(1, 12),
                  branching=st.sampled_from([0.0, 0.35, 0.7]))
def test_random_trees(seed, n_links, branching):
    xml = urdf_factory.random_tree_urdf(seed, n_links, branching=branching)
    pair = PinPair(xml, gravity=(0.3, -1.2, -9.7))
    links = [link for link in pair.ours.link_names if link != pair.ours.root_link]
    compare(pair, seeds=range(2), wrench_links=links[-2:])


@pytest.mark.parametrize('seed', [0, 1, 2, 3])
def test_aba_in_root_coordinates_equals_pinocchio_on_random_trees(seed):
    # revolute and prismatic joints only: Pinocchio gives a continuous joint two q entries
    xml = urdf_factory.random_tree_urdf(seed, 25, kinds=('revolute', 'prismatic'),
                                        weights=(0.7, 0.3))
    rigid = RobotModel.from_urdf_string(xml)
    model = rigid.with_joint_dynamics(armature=dict.fromkeys(rigid.joint_names, 0.03))
    ref = pin.buildModelFromXML(xml)
    ref.gravity.linear = model.gravity
    ref.armature = np.full(ref.nv, 0.03)
    data = ref.createData()
    rng = np.random.default_rng(seed)
    n = model.dof
    q, qd, tau = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    pin_order = [ref.names[j] for j in range(1, ref.njoints)]
    perm = [model.joint_index(name) for name in pin_order]  # pin index -> ours
    link = model.link_names[-1]
    wrench = rng.normal(size=6)  # [f; tau] in the link frame about its origin
    ours = model.forward_dynamics(q, qd, tau, method='aba', include_armature=True,
                                  external_wrenches={link: wrench})
    frame = ref.getFrameId(link)
    joint = ref.frames[frame].parentJoint
    f_ext = [pin.Force.Zero() for _ in range(ref.njoints)]
    # the wrench at the link origin, carried to the joint frame pinocchio applies it in
    f_ext[joint] = ref.frames[frame].placement.act(pin.Force(wrench[:3], wrench[3:]))
    expected = pin.aba(ref, data, q[perm], qd[perm], tau[perm], f_ext)
    scale = max(1.0, float(np.max(np.abs(expected))))
    assert np.max(np.abs(ours[perm] - expected)) <= 1e-8 * scale
