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
Issue 23's minor items that need no running node, and issue 19's ABA rewrite on trees.

* A bad boolean launch argument names the argument; ``robot_state_publisher`` takes
  ``auto``.
* The bundled cobot7 loads without a warning of ``manip-dynamics check``.
* A trajectory YAML for ``identify play`` is checked before anything is published.
* The excitation's ``time_from_start`` never goes back at a second boundary.
* ABA (now in root coordinates) equals Pinocchio's ``aba`` on random trees with prismatic
  joints, branches, external wrenches and rotor inertias.
"""

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.model_check import check_urdf_file
from manip_dynamics.ros.launch_support.launch_helpers import (
    is_true, LaunchArgumentError, state_publisher_wanted)


def test_a_bad_boolean_launch_argument_names_the_argument():
    with pytest.raises(LaunchArgumentError, match=r'rviz:=maybe: expected true or false'):
        is_true('maybe', 'rviz')
    assert is_true('On', 'rviz') and not is_true('0', 'rviz')
    with pytest.raises(LaunchArgumentError, match='robot_state_publisher:=sometimes'):
        state_publisher_wanted('sometimes')
    assert state_publisher_wanted('true') and not state_publisher_wanted('false')
    assert isinstance(state_publisher_wanted('auto'), bool)


def test_the_bundled_cobot7_has_no_check_warning():
    findings = check_urdf_file(urdf_path('cobot7'))
    assert not [f for f in findings if f.severity in ('error', 'warning')], findings


def test_play_checks_the_trajectory_file():
    pytest.importorskip('trajectory_msgs', reason='trajectory_msgs (ROS 2) not installed')
    from manip_dynamics.ros.runtime.trajectory_player import trajectory_from_document
    good = {'joint_names': ['a', 'b'], 'points': [
        {'positions': [0.0, 1.0], 'time_from_start': {'sec': 0, 'nanosec': 0}},
        {'positions': [0.5, 1.0], 'velocities': [0.0, 0.0], 'time_from_start': 1.5}]}
    msg = trajectory_from_document(good)
    assert list(msg.joint_names) == ['a', 'b'] and len(msg.points) == 2
    assert (msg.points[1].time_from_start.sec, msg.points[1].time_from_start.nanosec) == (
        1, 500_000_000)
    bad = [
        ({'joint_names': [], 'points': good['points']}, 'joint_names'),
        ({'joint_names': ['a', 'a'], 'points': good['points']}, 'twice'),
        ({'joint_names': ['a', 'b'], 'points': []}, 'points'),
        ({'joint_names': ['a', 'b'], 'points': [{'positions': [0.0]}]}, 'point 0: positions'),
        ({'joint_names': ['a', 'b'], 'points': [{'positions': [0.0, float('nan')]}]}, 'NaN'),
        ({'joint_names': ['a', 'b'], 'points': [
            {'positions': [0, 0], 'time_from_start': 2.0},
            {'positions': [0, 0], 'time_from_start': 1.0}]}, 'point 1: time_from_start'),
        ({'joint_names': ['a', 'b'], 'points': [
            {'positions': [0, 0], 'time_from_start': {'sec': 0, 'nanosec': 2e9}}]}, 'nanosec'),
        ('text', 'mapping'),
    ]
    for doc, text in bad:
        with pytest.raises(ValueError, match=text):
            trajectory_from_document(doc)


def test_excitation_times_never_go_back_at_a_second_boundary():
    from manip_dynamics.identification.excitation import _duration
    for seconds in (2.9999999999, 0.99999999995, 5.0, 1.25):
        d = _duration(seconds)
        assert 0 <= d['nanosec'] < 1_000_000_000
        assert abs(d['sec'] + 1e-9 * d['nanosec'] - seconds) <= 1e-9


@pytest.mark.parametrize('seed', [0, 1, 2, 3])
def test_aba_in_root_coordinates_equals_pinocchio_on_random_trees(seed):
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
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
