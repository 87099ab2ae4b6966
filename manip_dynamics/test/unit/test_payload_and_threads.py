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
Check run-time payloads against URDFs written with the payload as a fixed child link.

The reference for ``set_payload(link, m, com, inertia)`` is the same URDF text with one
more link, attached to ``link`` by a fixed joint at ``com``, carrying ``m`` and
``inertia`` about its origin: an independent description loaded from scratch.  The thread
test checks that concurrent readers see either the old or the new payload, never a mix.
"""

import threading
import time

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import InputError, RobotModel
from manip_dynamics.bundled import urdf_path

TOOL = 'tool0'
PAYLOAD_A = (2.5, (0.01, -0.02, 0.08), (0.004, 0.0005, -0.0003, 0.005, 0.0002, 0.003))
PAYLOAD_B = (0.8, (-0.03, 0.0, 0.05), (0.001, 0.0, 0.0, 0.001, 0.0, 0.0015))
TOL = 1e-10


def with_fixed_payload(xml: str, link: str, payload) -> str:
    """Return ``xml`` with the payload as a fixed child link of ``link`` (typed by hand)."""
    mass, com, (ixx, ixy, ixz, iyy, iyz, izz) = payload
    extra = '''
  <joint name="payload_joint" type="fixed">
    <parent link="%s"/><child link="payload_link"/>
    <origin xyz="%r %r %r" rpy="0 0 0"/>
  </joint>
  <link name="payload_link">
    <inertial>
      <origin xyz="0 0 0" rpy="0 0 0"/><mass value="%r"/>
      <inertia ixx="%r" ixy="%r" ixz="%r" iyy="%r" iyz="%r" izz="%r"/>
    </inertial>
  </link>
</robot>''' % (link, com[0], com[1], com[2], mass, ixx, ixy, ixz, iyy, iyz, izz)
    head, _, _ = xml.rpartition('</robot>')
    return head + extra


@pytest.fixture(scope='module')
def cobot_xml() -> str:
    with open(urdf_path('cobot7'), encoding='utf-8') as f:
        return f.read()


def _states(n: int, count: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-1.5, 1.5, n) for _ in range(3)) for _ in range(count)]


def _assert_same(model: RobotModel, ref: RobotModel) -> None:
    for q, qd, qdd in _states(model.dof):
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd),
                                   ref.inverse_dynamics(q, qd, qdd), rtol=TOL, atol=TOL)
        np.testing.assert_allclose(model.mass_matrix(q), ref.mass_matrix(q), rtol=TOL,
                                   atol=TOL)
        np.testing.assert_allclose(model.coriolis_matrix(q, qd), ref.coriolis_matrix(q, qd),
                                   rtol=TOL, atol=TOL)
        np.testing.assert_allclose(model.forward_dynamics(q, qd, qdd),
                                   ref.forward_dynamics(q, qd, qdd), rtol=1e-9, atol=1e-9)
    assert model.total_mass == pytest.approx(ref.total_mass, rel=1e-12)


def test_payload_equals_fixed_child_link(cobot_xml):
    model = RobotModel.from_urdf_string(cobot_xml)
    original = RobotModel.from_urdf_string(cobot_xml)
    model.set_payload(TOOL, PAYLOAD_A[0], PAYLOAD_A[1], PAYLOAD_A[2])
    assert set(model.payloads) == {TOOL}
    _assert_same(model, RobotModel.from_urdf_string(
        with_fixed_payload(cobot_xml, TOOL, PAYLOAD_A)))
    # the payload changes the dynamics measurably (the comparison above can fail)
    q = np.full(7, 0.3)
    assert np.abs(model.gravity_torques(q) - original.gravity_torques(q)).max() > 1.0


def test_payload_replace_and_remove(cobot_xml):
    model = RobotModel.from_urdf_string(cobot_xml)
    original = RobotModel.from_urdf_string(cobot_xml)
    model.set_payload(TOOL, *PAYLOAD_A)
    model.set_payload(TOOL, *PAYLOAD_B)  # replaces A
    _assert_same(model, RobotModel.from_urdf_string(
        with_fixed_payload(cobot_xml, TOOL, PAYLOAD_B)))
    model.set_payload(TOOL, 0.0)  # mass 0 removes
    assert model.payloads == {}
    _assert_same(model, original)
    model.set_payload(TOOL, *PAYLOAD_A)
    model.remove_payload(TOOL)
    _assert_same(model, original)


def test_payload_inertia_as_matrix(cobot_xml):
    model = RobotModel.from_urdf_string(cobot_xml)
    mass, com, (ixx, ixy, ixz, iyy, iyz, izz) = PAYLOAD_A
    model.set_payload(TOOL, mass, com, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz],
                                                 [ixz, iyz, izz]]))
    _assert_same(model, RobotModel.from_urdf_string(
        with_fixed_payload(cobot_xml, TOOL, PAYLOAD_A)))


def test_payload_on_craig_arm_closed_form():
    """A point payload at the tip of Craig's 2R arm just adds to m2 (eq. 6.60-6.62)."""
    l1, l2, m1, m2, mp = 0.7, 0.45, 3.1, 1.2, 0.9
    model = RobotModel.from_urdf_string(urdf_factory.craig_2r_urdf(l1, l2, m1, m2),
                                        gravity=(0.0, -9.81, 0.0))
    heavier = RobotModel.from_urdf_string(urdf_factory.craig_2r_urdf(l1, l2, m1, m2 + mp),
                                          gravity=(0.0, -9.81, 0.0))
    model.set_payload('tool', mp)
    _assert_same(model, heavier)
    model.set_payload('link2', mp, (l2, 0.0, 0.0))  # same point, given on link 2
    model.remove_payload('tool')
    _assert_same(model, heavier)


def test_payload_on_link_fixed_to_root(cobot_xml):
    model = RobotModel.from_urdf_string(cobot_xml)
    with pytest.raises(InputError, match='cobot7_base_link'):
        model.set_payload('cobot7_base_link', 1.0)


def test_with_joint_dynamics_keeps_payload(cobot_xml):
    model = RobotModel.from_urdf_string(cobot_xml)
    model.set_payload(TOOL, *PAYLOAD_A)
    copy = model.with_joint_dynamics(damping={'cobot7_joint1': 0.5})
    _assert_same(copy, RobotModel.from_urdf_string(
        with_fixed_payload(cobot_xml, TOOL, PAYLOAD_A)))


def test_threads_see_old_or_new_payload(cobot_xml):
    model = RobotModel.from_urdf_string(cobot_xml)
    without = RobotModel.from_urdf_string(cobot_xml)
    with_a = RobotModel.from_urdf_string(with_fixed_payload(cobot_xml, TOOL, PAYLOAD_A))
    states = _states(7, count=3, seed=4)
    refs = [([without.inverse_dynamics(*s), with_a.inverse_dynamics(*s)],
             [without.mass_matrix(s[0]), with_a.mass_matrix(s[0])]) for s in states]
    stop = threading.Event()
    failures, counts = [], []

    def reader(index: int) -> None:
        seen = set()
        done = 0
        try:
            while not stop.is_set():
                k = done % len(states)
                q, qd, qdd = states[k]
                tau = model.inverse_dynamics(q, qd, qdd)
                m = model.mass_matrix(q)
                match_tau = [np.allclose(tau, r, rtol=TOL, atol=TOL) for r in refs[k][0]]
                match_m = [np.allclose(m, r, rtol=TOL, atol=TOL) for r in refs[k][1]]
                if not any(match_tau) or not any(match_m):
                    failures.append((index, k, tau))
                    return
                seen.add(match_tau.index(True))
                done += 1
        except Exception as exc:  # noqa: B902 - report any failure of a worker thread
            failures.append((index, repr(exc)))
        counts.append((done, seen))

    def writer() -> None:
        try:
            for i in range(300):
                if i % 2 == 0:
                    model.set_payload(TOOL, *PAYLOAD_A)
                else:
                    model.set_payload(TOOL, 0.0)
                time.sleep(0.002)  # let the readers run under each payload
        except Exception as exc:  # noqa: B902
            failures.append(('writer', repr(exc)))

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    w = threading.Thread(target=writer)
    w.start()
    w.join(timeout=60)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not failures, failures[:3]
    assert len(counts) == 4 and all(done > 0 for done, _ in counts)
    # across all readers both variants were observed (the writer really interleaved)
    assert set().union(*(seen for _, seen in counts)) == {0, 1}
