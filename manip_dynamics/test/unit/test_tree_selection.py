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
Check chain selection (root_link / tip_link) and how real-world URDF content is read.

References: the full model of the same URDF (a chain selected KDL-style locks the joints
off the chain at 0, so its dynamics equal the full model's with those joints at rest),
and URDF variants written by hand (extra ROS elements removed, explicit zero inertials).
"""

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path

ARM = ('gripper_arm_joint1', 'gripper_arm_joint2', 'gripper_arm_joint3', 'gripper_arm_joint4')
TOL = 1e-10


@pytest.fixture(scope='module')
def full() -> RobotModel:
    return RobotModel.from_urdf_file(urdf_path('gripper_arm'))


def _rng_states(n: int, count: int, seed: int):
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-1.2, 1.2, n) for _ in range(3)) for _ in range(count)]


def test_full_gripper_arm_has_mimic_as_independent_dof(full):
    assert full.dof == 6
    assert full.joint_names[:4] == ARM
    assert set(full.joint_names[4:]) == {'gripper_arm_finger_left_joint',
                                         'gripper_arm_finger_right_joint'}
    # moving the left finger does not move the right one (no mimic coupling)
    q = np.zeros(6)
    right = full.link_transform(q, 'gripper_arm_finger_right')
    q[full.joint_index('gripper_arm_finger_left_joint')] = 0.03
    np.testing.assert_array_equal(full.link_transform(q, 'gripper_arm_finger_right'), right)
    # and the mimic joint has its own column in M
    assert abs(full.mass_matrix(q)[5, 5]) > 0.0


def test_tip_at_wrist_locks_and_lumps_fingers(full):
    wrist = RobotModel.from_urdf_file(urdf_path('gripper_arm'), tip_link='gripper_arm_hand')
    assert wrist.joint_names == ARM
    assert wrist.total_mass == pytest.approx(full.total_mass, rel=1e-12)  # fingers lumped
    for q, qd, qdd in _rng_states(4, 6, 1):
        q6, qd6, qdd6 = (np.concatenate([x, np.zeros(2)]) for x in (q, qd, qdd))
        np.testing.assert_allclose(wrist.gravity_torques(q), full.gravity_torques(q6)[:4],
                                   rtol=TOL, atol=TOL)
        np.testing.assert_allclose(wrist.mass_matrix(q), full.mass_matrix(q6)[:4, :4],
                                   rtol=TOL, atol=TOL)
        np.testing.assert_allclose(wrist.inverse_dynamics(q, qd, qdd),
                                   full.inverse_dynamics(q6, qd6, qdd6)[:4], rtol=TOL,
                                   atol=TOL)
    # the finger gravity load is really in there: dropping it changes the torques
    no_fingers = full.gravity_torques(np.zeros(6))[:4]
    assert np.abs(no_fingers).max() > 0.1


def test_tip_on_finger_keeps_only_the_chain(full):
    finger = RobotModel.from_urdf_file(urdf_path('gripper_arm'),
                                       tip_link='gripper_arm_finger_left')
    assert finger.joint_names == ARM + ('gripper_arm_finger_left_joint',)
    idx = [full.joint_index(n) for n in finger.joint_names]
    for q, qd, qdd in _rng_states(5, 4, 2):
        q6, qd6, qdd6 = (np.zeros(6) for _ in range(3))
        q6[idx], qd6[idx], qdd6[idx] = q, qd, qdd
        np.testing.assert_allclose(finger.inverse_dynamics(q, qd, qdd),
                                   full.inverse_dynamics(q6, qd6, qdd6)[idx], rtol=TOL,
                                   atol=TOL)


def test_root_link_mid_chain(full):
    sub_root = 'gripper_arm_link2'
    rng = np.random.default_rng(3)
    for q, qd, qdd in _rng_states(6, 4, 4):
        q[:2] = rng.uniform(-1, 1, 2)  # any pose of the joints above the new root
        qd[:2] = 0.0                   # ... held still, so the new root is a fixed base
        qdd[:2] = 0.0
        rot = full.link_transform(q, sub_root)[:3, :3]
        sub = RobotModel.from_urdf_file(urdf_path('gripper_arm'), root_link=sub_root,
                                        gravity=rot.T @ full.gravity)
        assert sub.root_link == sub_root
        assert sub.joint_names == full.joint_names[2:]
        np.testing.assert_allclose(sub.inverse_dynamics(q[2:], qd[2:], qdd[2:]),
                                   full.inverse_dynamics(q, qd, qdd)[2:], rtol=TOL, atol=TOL)
        np.testing.assert_allclose(sub.mass_matrix(q[2:]), full.mass_matrix(q)[2:, 2:],
                                   rtol=TOL, atol=TOL)


ROS_EXTRAS = '''
  <transmission name="t1">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="joint1">
      <hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface>
    </joint>
    <actuator name="m1"><mechanicalReduction>50</mechanicalReduction></actuator>
  </transmission>
  <gazebo reference="link1"><material>Gazebo/Orange</material><mu1>0.2</mu1></gazebo>
  <gazebo><plugin name="ctrl" filename="libgazebo_ros2_control.so"/></gazebo>
  <ros2_control name="arm" type="system">
    <hardware><plugin>mock_components/GenericSystem</plugin></hardware>
    <joint name="joint1">
      <command_interface name="effort"/><state_interface name="position"/>
    </joint>
  </ros2_control>
  <sensor name="cam" update_rate="30">
    <parent link="link2"/><camera><image width="640"/></camera>
  </sensor>
'''
MESH_VISUAL = ('<visual><geometry><mesh filename="package://no_such_package/meshes/arm.dae" '
               'scale="1 1 1"/></geometry></visual>'
               '<collision><geometry><mesh filename="package://no_such_package/meshes/arm.stl"/>'
               '</geometry></collision>')


def test_ros_elements_and_meshes_are_ignored(capfd):
    plain = urdf_factory.craig_2r_urdf(0.7, 0.45, 3.1, 1.2)
    decorated = plain.replace('</robot>', ROS_EXTRAS + '</robot>')
    decorated = decorated.replace('<link name="link2">', '<link name="link2">' + MESH_VISUAL)
    capfd.readouterr()
    model = RobotModel.from_urdf_string(decorated)
    out, err = capfd.readouterr()
    assert out == '' and err == '', 'loading printed: %r %r' % (out, err)
    reference = RobotModel.from_urdf_string(plain)
    for q, qd, qdd in _rng_states(2, 3, 5):
        np.testing.assert_array_equal(model.inverse_dynamics(q, qd, qdd),
                                      reference.inverse_dynamics(q, qd, qdd))


def test_bundled_cobot7_with_ros2_control_loads_silently(capfd):
    capfd.readouterr()
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    out, err = capfd.readouterr()
    assert model.dof == 7
    assert out == '' and err == ''


def test_links_without_inertial_are_massless():
    with_zero = urdf_factory.craig_2r_urdf(0.7, 0.45, 0.0, 1.2)
    without = with_zero.replace(
        '<link name="link1"><inertial><origin xyz="0.7 0.0 0.0" rpy="0.0 0.0 0.0"/>'
        '<mass value="0.0"/><inertia ixx="0.0" ixy="0.0" ixz="0.0" iyy="0.0" iyz="0.0" '
        'izz="0.0"/></inertial></link>', '<link name="link1"></link>')
    assert without != with_zero and '<link name="link1"></link>' in without
    a = RobotModel.from_urdf_string(without, gravity=(0, -9.81, 0))
    b = RobotModel.from_urdf_string(with_zero, gravity=(0, -9.81, 0))
    assert a.total_mass == pytest.approx(1.2)
    for q, qd, qdd in _rng_states(2, 4, 6):
        np.testing.assert_allclose(a.inverse_dynamics(q, qd, qdd),
                                   b.inverse_dynamics(q, qd, qdd), rtol=TOL, atol=TOL)
        # only m2 at the tip: Craig eq. 6.62 with m1 = 0
        c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
        np.testing.assert_allclose(a.gravity_torques(q),
                                   [1.2 * 9.81 * (0.45 * c12 + 0.7 * c1), 1.2 * 9.81 * 0.45 * c12],
                                   rtol=TOL, atol=TOL)


def test_continuous_joints_have_infinite_limits():
    xml = urdf_factory.random_tree_urdf(7, 4, kinds=('continuous', 'revolute'),
                                        weights=(0.5, 0.5))
    model = RobotModel.from_urdf_string(xml)
    kinds = np.array(model.joint_types)
    assert 'continuous' in kinds and 'revolute' in kinds
    cont = kinds == 'continuous'
    assert np.all(model.position_lower[cont] == -np.inf)
    assert np.all(model.position_upper[cont] == np.inf)
    assert np.all(model.position_lower[~cont] == -2.5)
    assert np.all(model.position_upper[~cont] == 2.5)
    # a continuous joint turned by 2 pi is the same configuration
    q = np.linspace(0.1, 0.4, model.dof)
    turned = q + 2 * np.pi * cont
    np.testing.assert_allclose(model.gravity_torques(turned), model.gravity_torques(q),
                               rtol=1e-9, atol=1e-9)
