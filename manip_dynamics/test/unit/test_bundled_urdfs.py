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
Check the robot descriptions bundled in manip_dynamics/urdf/.

The tests read the files with urdf_parser_py and the standard library only (no rclpy,
no manip_dynamics calls): they check that every file parses, that every inertial is
physically valid, that every moving joint is limited, that no mesh is referenced, and
that the numbers match the published tables, typed in here independently of the files.
"""

import contextlib
import io
import math
from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from urdf_parser_py.urdf import Box, Cylinder, Sphere, URDF

from manip_dynamics.bundled import urdf_path
from manip_dynamics.model_check import check_urdf_file

URDF_DIR = Path(__file__).resolve().parents[2] / 'urdf'

# file -> (robot name, degrees of freedom: every non-fixed joint, mimic joints included)
ROBOTS = {
    'planar_2r.urdf': ('planar_2r', 2),
    'puma560.urdf': ('puma560', 6),
    'cobot7.urdf': ('cobot7', 7),
    'gripper_arm.urdf': ('gripper_arm', 6),
}

# Armstrong, Khatib, Burdick, ICRA 1986 (AKB86): modified DH (alpha_{i-1} [rad],
# a_{i-1} [m], d_i [m]) and, for links 2-6, mass [kg], COM [m] and principal moments
# about the COM (Ixx, Iyy, Izz) [kg m^2], all in the modified-DH link frames.
AKB_MDH = [(0.0, 0.0, 0.0), (-math.pi / 2, 0.0, 0.2435), (0.0, 0.4318, -0.0934),
           (math.pi / 2, -0.0203, 0.4331), (-math.pi / 2, 0.0, 0.0), (math.pi / 2, 0.0, 0.0)]
AKB_MASS = {2: 17.40, 3: 4.80, 4: 0.82, 5: 0.34, 6: 0.09}
AKB_COM = {1: (0.0, 0.0, 0.0), 2: (0.068, 0.006, -0.016), 3: (0.0, -0.070, 0.014),
           4: (0.0, 0.0, -0.019), 5: (0.0, 0.0, 0.0), 6: (0.0, 0.0, 0.032)}
AKB_INERTIA = {2: (0.130, 0.524, 0.539), 3: (0.066, 0.0125, 0.086), 4: (1.8e-3, 1.8e-3, 1.3e-3),
               5: (0.30e-3, 0.30e-3, 0.40e-3), 6: (0.15e-3, 0.15e-3, 0.04e-3)}
AKB_IZZ1 = 0.35
AKB_MAX_TORQUE = (97.6, 186.4, 89.4, 24.2, 20.1, 21.3)

# Gaz, Cognetti, Oliva, Robuffo Giordano, De Luca, RA-L 2019 (Panda): mass [kg],
# COM [m], inertia about the COM (ixx, ixy, ixz, iyy, iyz, izz) [kg m^2], links 1-7.
GAZ_MASS = (4.970684, 0.646926, 3.228604, 3.587895, 1.225946, 1.666555, 0.735522)
GAZ_COM = ((3.875e-03, 2.081e-03, -0.1750), (-3.141e-03, -2.872e-02, 3.495e-03),
           (2.7518e-02, 3.9252e-02, -6.6502e-02), (-5.317e-02, 1.04419e-01, 2.7454e-02),
           (-1.1953e-02, 4.1065e-02, -3.8437e-02), (6.0149e-02, -1.4117e-02, -1.0517e-02),
           (1.0517e-02, -4.252e-03, 6.1597e-02))
GAZ_INERTIA = (
    (7.0337e-01, -1.3900e-04, 6.7720e-03, 7.0661e-01, 1.9169e-02, 9.1170e-03),
    (7.9620e-03, -3.9250e-03, 1.0254e-02, 2.8110e-02, 7.0400e-04, 2.5995e-02),
    (3.7242e-02, -4.7610e-03, -1.1396e-02, 3.6155e-02, -1.2805e-02, 1.0830e-02),
    (2.5853e-02, 7.7960e-03, -1.3320e-03, 1.9552e-02, 8.6410e-03, 2.8323e-02),
    (3.5549e-02, -2.1170e-03, -4.0370e-03, 2.9474e-02, 2.2900e-04, 8.6270e-03),
    (1.9640e-03, 1.0900e-04, -1.1580e-03, 4.3540e-03, 3.4100e-04, 5.4330e-03),
    (1.2516e-02, -4.2800e-04, -1.1960e-03, 1.0027e-02, -7.4100e-04, 4.8150e-03))
# Panda modified DH from Franka's documentation: alpha_{i-1}, a_{i-1}, d_i; flange d = 0.107.
PANDA_MDH = [(0.0, 0.0, 0.333), (-math.pi / 2, 0.0, 0.0), (math.pi / 2, 0.0, 0.316),
             (math.pi / 2, 0.0825, 0.0), (-math.pi / 2, -0.0825, 0.384),
             (math.pi / 2, 0.0, 0.0), (math.pi / 2, 0.088, 0.0)]
PANDA_FLANGE_D = 0.107
PANDA_EFFORT = (87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0)
PANDA_VELOCITY = (2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61)
PANDA_LOWER = (-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973)
PANDA_UPPER = (2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973)

TOL = 1e-12


def load(fname: str) -> URDF:
    """
    Parse a bundled URDF, checking that the parser warned only about <ros2_control>.

    :param fname: File name inside manip_dynamics/urdf/.
    :return: The parsed urdf_parser_py robot.
    """
    text = (URDF_DIR / fname).read_text()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        robot = URDF.from_xml_string(text)
    unexpected = [line for line in err.getvalue().splitlines()
                  if line.strip() and 'ros2_control' not in line]
    assert not unexpected, f'{fname}: parser warnings {unexpected}'
    return robot


def inertia_matrix(inertia) -> np.ndarray:
    """
    Build the symmetric 3x3 inertia matrix of a urdf_parser_py Inertia.

    :param inertia: urdf_parser_py Inertia element.
    :return: Inertia matrix [kg m^2], shape (3, 3).
    """
    i = inertia
    return np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])


def rot_x(a: float) -> np.ndarray:
    """
    Return the 4x4 homogeneous rotation about x by a [rad].

    :param a: Angle [rad].
    :return: Transform, shape (4, 4).
    """
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def rot_z(a: float) -> np.ndarray:
    """
    Return the 4x4 homogeneous rotation about z by a [rad].

    :param a: Angle [rad].
    :return: Transform, shape (4, 4).
    """
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def trans(x: float, y: float, z: float) -> np.ndarray:
    """
    Return the 4x4 homogeneous translation by (x, y, z) [m].

    :param x: Translation along x [m].
    :param y: Translation along y [m].
    :param z: Translation along z [m].
    :return: Transform, shape (4, 4).
    """
    t = np.eye(4)
    t[:3, 3] = (x, y, z)
    return t


def rpy_matrix(rpy) -> np.ndarray:
    """
    Return the URDF rotation Rz(yaw) Ry(pitch) Rx(roll) as a 4x4 transform.

    :param rpy: (roll, pitch, yaw) [rad].
    :return: Transform, shape (4, 4).
    """
    r, p, y = rpy
    cp, sp = math.cos(p), math.sin(p)
    ry = np.array([[cp, 0, sp, 0], [0, 1, 0, 0], [-sp, 0, cp, 0], [0, 0, 0, 1.0]])
    return rot_z(y) @ ry @ rot_x(r)


def mdh_fk(table, q) -> list:
    """
    Chain Craig's modified-DH transforms Rx(alpha) Tx(a) Rz(q) Tz(d).

    :param table: Rows (alpha_{i-1} [rad], a_{i-1} [m], d_i [m]).
    :param q: Joint angles [rad], shape (n,).
    :return: The (4, 4) base <- frame i transforms, i = 1..n.
    """
    t = np.eye(4)
    out = []
    for (alpha, a, d), qi in zip(table, q):
        t = t @ rot_x(alpha) @ trans(a, 0, 0) @ rot_z(qi) @ trans(0, 0, d)
        out.append(t)
    return out


def urdf_chain_fk(robot: URDF, joint_names, q) -> list:
    """
    Chain the URDF joint origins and z-axis rotations of a serial list of joints.

    :param robot: Parsed robot.
    :param joint_names: Joint names from the root outwards; fixed joints get no angle.
    :param q: Angles [rad] of the revolute joints, in order.
    :return: The (4, 4) root <- child-link transforms, one per joint.
    """
    joints = {j.name: j for j in robot.joints}
    t = np.eye(4)
    out = []
    qi = iter(q)
    for name in joint_names:
        j = joints[name]
        t = t @ trans(*j.origin.xyz) @ rpy_matrix(j.origin.rpy)
        if j.type != 'fixed':
            assert np.allclose(j.axis, (0, 0, 1)), name
            t = t @ rot_z(next(qi))
        out.append(t)
    return out


def link_by_name(robot: URDF, name: str):
    """
    Return the link called name.

    :param robot: Parsed robot.
    :param name: Link name.
    :return: urdf_parser_py Link.
    """
    return next(lk for lk in robot.links if lk.name == name)


@pytest.mark.parametrize('fname', sorted(ROBOTS))
def test_parses_with_expected_names_and_dof(fname):
    robot = load(fname)
    name, dof = ROBOTS[fname]
    assert robot.name == name
    assert robot.get_root() == f'{name}_base_link'
    moving = [j for j in robot.joints if j.type != 'fixed']
    assert len(moving) == dof
    assert all(j.type in ('revolute', 'prismatic') for j in moving)


@pytest.mark.parametrize('fname', sorted(ROBOTS))
def test_inertials_are_physical(fname):
    robot = load(fname)
    with_inertial = [lk for lk in robot.links if lk.inertial is not None]
    assert len(with_inertial) >= ROBOTS[fname][1]
    for lk in with_inertial:
        assert lk.inertial.mass > 0.0, lk.name
        inertia = inertia_matrix(lk.inertial.inertia)
        eig = np.sort(np.linalg.eigvalsh(inertia))
        assert eig[0] >= -TOL, f'{lk.name}: eigenvalues {eig}'
        # triangle inequality on the principal moments (any pair sums to at least the third)
        assert eig[0] + eig[1] >= eig[2] - TOL, f'{lk.name}: principal moments {eig}'


@pytest.mark.parametrize('fname', sorted(ROBOTS))
def test_moving_joints_are_limited(fname):
    robot = load(fname)
    for j in robot.joints:
        if j.type == 'fixed':
            continue
        assert j.limit is not None, j.name
        assert j.limit.effort > 0.0, j.name
        assert j.limit.velocity > 0.0, j.name
        assert j.limit.lower < j.limit.upper, j.name
        assert np.linalg.norm(j.axis) == pytest.approx(1.0), j.name


@pytest.mark.parametrize('fname', sorted(ROBOTS))
def test_primitive_shapes_only(fname):
    text = (URDF_DIR / fname).read_text()
    assert '<mesh' not in text
    assert 'package://' not in text
    assert 'file://' not in text
    robot = load(fname)
    n_visuals = 0
    for lk in robot.links:
        for vis in lk.visuals:
            n_visuals += 1
            assert isinstance(vis.geometry, (Box, Cylinder, Sphere)), lk.name
            assert vis.material is not None, lk.name
        for col in lk.collisions:
            assert isinstance(col.geometry, (Box, Cylinder, Sphere)), lk.name
    assert n_visuals >= ROBOTS[fname][1]


def test_planar_2r_matches_craig_section_6_7():
    robot = load('planar_2r.urdf')
    joints = {j.name: j for j in robot.joints}
    l1, l2, m1, m2 = 1.0, 0.8, 2.0, 1.5
    assert joints['planar_2r_joint1'].origin.xyz == pytest.approx([0, 0, 0])
    assert joints['planar_2r_joint2'].origin.xyz == pytest.approx([l1, 0, 0])
    assert joints['planar_2r_tool_joint'].origin.xyz == pytest.approx([l2, 0, 0])
    assert joints['planar_2r_tool_joint'].child == 'tool'
    for name in ('planar_2r_joint1', 'planar_2r_joint2'):
        assert joints[name].axis == pytest.approx([0, 0, 1])
    for lname, mass, length in (('planar_2r_link1', m1, l1), ('planar_2r_link2', m2, l2)):
        inertial = link_by_name(robot, lname).inertial
        assert inertial.mass == pytest.approx(mass)
        assert inertial.origin.xyz == pytest.approx([length, 0, 0])
        assert np.all(inertia_matrix(inertial.inertia) == 0.0)
    assert 'gravity along -Y' in (URDF_DIR / 'planar_2r.urdf').read_text()


def test_puma560_inertials_match_akb86():
    robot = load('puma560.urdf')
    identified_total = 0.0
    for i in range(2, 7):
        inertial = link_by_name(robot, f'puma560_link{i}').inertial
        identified_total += inertial.mass
        assert inertial.mass == pytest.approx(AKB_MASS[i], abs=1e-12)
        assert inertial.origin.xyz == pytest.approx(AKB_COM[i], abs=1e-12)
        assert inertial.origin.rpy == pytest.approx([0, 0, 0])
        inertia = inertia_matrix(inertial.inertia)
        assert np.all(inertia - np.diag(np.diag(inertia)) == 0.0)
        expected = list(AKB_INERTIA[i])
        if i == 3:
            # documented correction: Ixx3 raised to Izz3 - Iyy3 (AKB86's violates the
            # triangle inequality, see the next test); Iyy3 and Izz3 as published
            expected[0] = expected[2] - expected[1]
        assert np.diag(inertia) == pytest.approx(expected, abs=1e-12)
    assert identified_total == pytest.approx(sum(AKB_MASS.values()), abs=1e-9)
    assert identified_total == pytest.approx(23.45, abs=1e-9)
    link1 = link_by_name(robot, 'puma560_link1').inertial
    assert link1.inertia.izz == pytest.approx(AKB_IZZ1)
    assert link1.origin.xyz == pytest.approx(AKB_COM[1])
    joints = {j.name: j for j in robot.joints}
    efforts = [joints[f'puma560_joint{i}'].limit.effort for i in range(1, 7)]
    assert efforts == pytest.approx(AKB_MAX_TORQUE)


def test_akb86_link3_inertia_violates_triangle_inequality():
    ixx, iyy, izz = AKB_INERTIA[3]
    assert ixx + iyy < izz
    assert 'raises Ixx3 to 0.0735' in (URDF_DIR / 'puma560.urdf').read_text()


def test_puma560_joint_origins_reproduce_akb86_dh():
    robot = load('puma560.urdf')
    names = [f'puma560_joint{i}' for i in range(1, 7)]
    rng = np.random.default_rng(5)
    for q in [np.zeros(6)] + [rng.uniform(-3, 3, 6) for _ in range(5)]:
        for t_dh, t_urdf in zip(mdh_fk(AKB_MDH, q), urdf_chain_fk(robot, names, q)):
            assert np.allclose(t_dh, t_urdf, atol=1e-12)
    # AKB86 zero pose: wrist centre at (a2 + a3, d2 + d3, d4)
    wrist = urdf_chain_fk(robot, names, np.zeros(6))[-1][:3, 3]
    assert wrist == pytest.approx([0.4318 - 0.0203, 0.2435 - 0.0934, 0.4331], abs=1e-12)


def test_cobot7_inertials_match_gaz_2019():
    robot = load('cobot7.urdf')
    total = 0.0
    for i in range(7):
        inertial = link_by_name(robot, f'cobot7_link{i + 1}').inertial
        total += inertial.mass
        assert inertial.mass == pytest.approx(GAZ_MASS[i], abs=1e-12)
        assert inertial.origin.xyz == pytest.approx(GAZ_COM[i], abs=1e-12)
        assert inertial.origin.rpy == pytest.approx([0, 0, 0])
        ii = inertial.inertia
        got = (ii.ixx, ii.ixy, ii.ixz, ii.iyy, ii.iyz, ii.izz)
        assert got == pytest.approx(GAZ_INERTIA[i], abs=1e-12)
    assert total == pytest.approx(sum(GAZ_MASS), abs=1e-9)
    assert total == pytest.approx(16.062132, abs=1e-9)
    assert link_by_name(robot, 'cobot7_base_link').inertial is None


def test_cobot7_kinematics_and_limits_match_panda():
    robot = load('cobot7.urdf')
    names = [f'cobot7_joint{i}' for i in range(1, 8)] + ['cobot7_flange_joint']
    table = PANDA_MDH + [(0.0, 0.0, PANDA_FLANGE_D)]
    rng = np.random.default_rng(7)
    for q in [np.zeros(7)] + [rng.uniform(-2.5, 2.5, 7) for _ in range(5)]:
        q_dh = np.append(q, 0.0)
        for t_dh, t_urdf in zip(mdh_fk(table, q_dh), urdf_chain_fk(robot, names, q)):
            assert np.allclose(t_dh, t_urdf, atol=1e-12)
    # the Panda's flange at q = 0: x = a7, z = d1 + d3 + d5 - d_flange, pointing down
    t_flange = urdf_chain_fk(robot, names, np.zeros(7))[-1]
    assert t_flange[:3, 3] == pytest.approx([0.088, 0.0, 0.926], abs=1e-12)
    assert t_flange[:3, 2] == pytest.approx([0.0, 0.0, -1.0], abs=1e-12)
    joints = {j.name: j for j in robot.joints}
    assert joints['cobot7_tool0_joint'].parent == 'cobot7_flange'
    for i in range(7):
        lim = joints[f'cobot7_joint{i + 1}'].limit
        assert (lim.lower, lim.upper) == pytest.approx((PANDA_LOWER[i], PANDA_UPPER[i]))
        assert lim.effort == pytest.approx(PANDA_EFFORT[i])
        assert lim.velocity == pytest.approx(PANDA_VELOCITY[i])
        dyn = joints[f'cobot7_joint{i + 1}'].dynamics
        assert dyn is not None
        assert 0.0 <= dyn.damping <= 0.5 and 0.0 <= dyn.friction <= 1.0


def test_cobot7_ros2_control_block():
    root = ET.parse(URDF_DIR / 'cobot7.urdf').getroot()
    blocks = root.findall('ros2_control')
    assert len(blocks) == 1
    block = blocks[0]
    assert block.get('name') == 'cobot7'
    assert block.get('type') == 'system'
    hardware = block.find('hardware')
    assert hardware.find('plugin').text == \
        'joint_state_topic_hardware_interface/JointStateTopicSystem'
    params = {p.get('name'): p.text for p in hardware.findall('param')}
    # the simulator's topics as control.launch.py runs it; commands sent every cycle
    assert params == {'joint_commands_topic': '/sim/joint_commands',
                      'joint_states_topic': '/sim/joint_states',
                      'trigger_joint_command_threshold': '-1'}
    robot = load('cobot7.urdf')
    limits = {j.name: j.limit for j in robot.joints if j.type != 'fixed'}
    rc_joints = block.findall('joint')
    assert [j.get('name') for j in rc_joints] == list(limits)
    for j in rc_joints:
        assert [c.get('name') for c in j.findall('command_interface')] == ['effort']
        states = [s.get('name') for s in j.findall('state_interface')]
        assert states == ['position', 'velocity', 'effort']
        initial = j.find("state_interface[@name='position']/param[@name='initial_value']")
        lim = limits[j.get('name')]
        assert lim.lower <= float(initial.text) <= lim.upper
    assert 'mock_components/GenericSystem' in (URDF_DIR / 'cobot7.urdf').read_text()


def box_inertia(m: float, a: float, b: float, c: float) -> np.ndarray:
    """
    Return the principal moments of a uniform solid box about its centre.

    :param m: Mass [kg].
    :param a: Edge along x [m].
    :param b: Edge along y [m].
    :param c: Edge along z [m].
    :return: (Ixx, Iyy, Izz) [kg m^2], shape (3,).
    """
    return m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def test_gripper_arm_is_a_tree_with_textbook_inertias():
    robot = load('gripper_arm.urdf')
    joints = {j.name: j for j in robot.joints}
    children = [j for j in robot.joints if j.parent == 'gripper_arm_hand']
    assert sorted(j.type for j in children) == ['fixed', 'prismatic', 'prismatic']
    assert sum(j.type == 'revolute' for j in robot.joints) == 4
    right = joints['gripper_arm_finger_right_joint']
    assert right.mimic is not None
    assert right.mimic.joint == 'gripper_arm_finger_left_joint'
    left = joints['gripper_arm_finger_left_joint']
    assert np.dot(left.axis, right.axis) == pytest.approx(-1.0)
    # the tool frame lies between the fingers, on the hand's x axis
    tool = joints['gripper_arm_tool_joint']
    assert tool.origin.xyz[1:] == pytest.approx([0, 0])
    assert tool.origin.xyz[0] > left.origin.xyz[0]
    # uniform solids, with the dimensions stated in the file's comment
    r, h, m = 0.05, 0.10, 1.2
    cyl = [m * (3 * r * r + h * h) / 12, m * (3 * r * r + h * h) / 12, m * r * r / 2]
    expected = {
        'gripper_arm_link1': (m, cyl),
        'gripper_arm_link2': (1.0, box_inertia(1.0, 0.30, 0.05, 0.05)),
        'gripper_arm_link3': (0.6, box_inertia(0.6, 0.25, 0.04, 0.04)),
        'gripper_arm_hand': (0.4, box_inertia(0.4, 0.06, 0.10, 0.04)),
        'gripper_arm_finger_left': (0.05, box_inertia(0.05, 0.05, 0.01, 0.02)),
        'gripper_arm_finger_right': (0.05, box_inertia(0.05, 0.05, 0.01, 0.02)),
    }
    total = 0.0
    for lname, (mass, moments) in expected.items():
        inertial = link_by_name(robot, lname).inertial
        total += inertial.mass
        assert inertial.mass == pytest.approx(mass)
        assert np.diag(inertia_matrix(inertial.inertia)) == pytest.approx(moments, rel=1e-9)
    assert total == pytest.approx(3.3)
    assert 'Total moving mass 3.300 kg' in (URDF_DIR / 'gripper_arm.urdf').read_text()


@pytest.mark.parametrize('fname', sorted(ROBOTS))
def test_loads_in_pinocchio(fname):
    try:
        import pinocchio
    except ImportError:
        pytest.skip('pin (Pinocchio) not installed')
    model = pinocchio.buildModelFromUrdf(str(URDF_DIR / fname))
    dof = ROBOTS[fname][1]
    assert model.nq == dof
    assert model.nv == dof
    assert model.njoints == dof + 1  # plus the universe joint
    robot = load(fname)
    masses = sum(lk.inertial.mass for lk in robot.links if lk.inertial is not None)
    assert pinocchio.computeTotalMass(model) == pytest.approx(masses, rel=1e-12)


def test_the_bundled_cobot7_has_no_check_warning():
    findings = check_urdf_file(urdf_path('cobot7'))
    assert not [f for f in findings if f.severity in ('error', 'warning')], findings
