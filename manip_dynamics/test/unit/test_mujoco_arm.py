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
MujocoArm and arm_variants: a physics engine nobody here wrote against the suite's own.

The two engines check each other: the same state and torque give the same accelerations
(MuJoCo's mass matrix and bias forces against the suite's), the same torque sequence the
same motion, the same push the same acceleration. Beyond that, physical identities: a
link-side torque sensor reads the rigid-body torque without the rotor's share, a table stops
an arm pushed into it, the drawn variant keeps every inertia physical and differs from the
description by the errors asked for.
"""

import os
import re

import numpy as np
import pytest

from manip_dynamics import InputError, RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.simulation import Simulator

mujoco = pytest.importorskip('mujoco', reason='mujoco (mujoco-core) not installed')

from manip_dynamics.simulation.arm_variants import (  # noqa: E402 (after the skip)
    arm_variant, ArmErrors, table)
from manip_dynamics.simulation.mujoco_arm import MujocoArm  # noqa: E402

ARMS = ('cobot7', 'puma560')


def _text(robot: str, friction: bool = True) -> str:
    with open(urdf_path(robot), encoding='utf-8') as stream:
        text = stream.read()
    return text if friction else re.sub(r'<dynamics[^>]*/>', '', text)


def _middle(model: RobotModel) -> np.ndarray:
    lower, upper = model.position_lower, model.position_upper
    return np.where(np.isfinite(lower) & np.isfinite(upper), 0.5 * (lower + upper), 0.0)


def _reference(model: RobotModel, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 0.5 Hz, 0.3 rad swing of every joint about the middle of its range."""
    w, amplitude, phase = 2.0 * np.pi * 0.5, 0.3, np.arange(model.dof)
    angle = w * t + phase
    return (_middle(model) + amplitude * np.sin(angle), amplitude * w * np.cos(angle),
            -amplitude * w * w * np.sin(angle))


def _ur5_path() -> str:
    import urdf_factory
    base = urdf_factory.example_robot_data_dir()
    path = base and os.path.join(base, 'ur_description', 'urdf',
                                 'ur5_joint_limited_robot.urdf')
    if not path or not os.path.isfile(path):
        pytest.skip('example-robot-data not installed (no ur5 description)')
    return path


@pytest.mark.parametrize('robot', ARMS + ('ur5',))
def test_the_engines_give_the_same_accelerations(robot):
    if robot == 'ur5':   # a public arm with package:// meshes MuJoCo cannot open
        with open(_ur5_path(), encoding='utf-8') as stream:
            text = stream.read()
    else:
        text = _text(robot, friction=False)
    model = RobotModel.from_urdf_string(text)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = _middle(model) + rng.uniform(-0.2, 0.2, model.dof)
        qd, tau = rng.uniform(-1.0, 1.0, model.dof), rng.uniform(-5.0, 5.0, model.dof)
        arm = MujocoArm(model, text, q, qd)
        m, d = arm.engine
        d.qfrc_applied[:] = tau
        mujoco.mj_forward(m, d)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        assert d.nefc == 0   # no contact, no limit: the rigid body alone
        np.testing.assert_allclose(full, model.mass_matrix(q), atol=1e-12)
        np.testing.assert_allclose(d.qfrc_bias, model.nonlinear_effects(q, qd), atol=1e-10)
        np.testing.assert_allclose(d.qacc, model.forward_dynamics(q, qd, tau), rtol=1e-9,
                                   atol=1e-8)


@pytest.mark.parametrize('robot', ARMS)
def test_one_torque_sequence_one_motion_without_friction(robot):
    """Open loop for 0.5 s (before the unstable open-loop arm departs): to round-off."""
    text = _text(robot, friction=False)
    model = RobotModel.from_urdf_string(text)
    q0, qd0, _ = _reference(model, 0.0)
    ours = Simulator(model, q0, qd0, dt=1e-3, limits='none')
    theirs = MujocoArm(model, text, q0, qd0, dt=1e-3)
    for k in range(500):
        q, qd, qdd = _reference(model, k * 1e-3)
        tau = model.inverse_dynamics(q, qd, qdd)
        ours.step(tau)
        theirs.step(tau)
    assert np.abs(ours.q - theirs.q).max() < 1e-9
    assert np.abs(ours.q - _reference(model, 0.5)[0]).max() > 1e-6   # it is open loop
    assert theirs.t == pytest.approx(0.5)


@pytest.mark.parametrize('robot,armature', [('cobot7', 0.1), ('puma560', 0.5)])
def test_one_controller_one_motion_with_friction_and_rotor_inertia(robot, armature):
    """
    3 s of the same PD + feed-forward law on each engine, with the description's damping,
    dry friction and a rotor inertia: within 1 mrad of each other (measured 0.34 and 0.37).
    """
    text = _text(robot)
    model = RobotModel.from_urdf_string(text).with_joint_dynamics(
        armature={name: armature for name in RobotModel.from_urdf_string(text).joint_names})
    q0, qd0, _ = _reference(model, 0.0)
    ours = Simulator(model, q0, qd0, dt=1e-3, limits='none')
    theirs = MujocoArm(model, text, q0, qd0, dt=1e-3)
    assert np.allclose(theirs.engine[0].dof_armature, armature)
    inertia = np.diag(model.mass_matrix(q0)) + model.armature
    kp, kd = inertia * 20.0 ** 2, 2.0 * inertia * 20.0
    gap = 0.0
    for k in range(3000):
        q, qd, qdd = _reference(model, k * 1e-3)
        feed = model.inverse_dynamics(q, qd, qdd) + model.friction_torques(qd)
        for engine in (ours, theirs):
            engine.step(feed + kp * (q - engine.q) + kd * (qd - engine.qd))
        gap = max(gap, float(np.abs(ours.q - theirs.q).max()))
    assert gap < 1e-3
    assert theirs.engine[1].nefc > 0   # MuJoCo's dry friction rows were in play


def test_a_push_accelerates_both_engines_alike():
    text = _text('cobot7', friction=False)
    model = RobotModel.from_urdf_string(text)
    q = _middle(model)
    wrench = {'tool0': np.array([5.0, -3.0, 8.0, 0.2, 0.1, -0.3])}
    theirs = MujocoArm(model, text, q, dt=1e-4)
    theirs.set_external_wrenches(wrench)
    assert theirs.external_wrenches_active
    gravity = model.gravity_torques(q)
    theirs.step(gravity)
    expected = model.forward_dynamics(q, np.zeros(model.dof), gravity, external_wrenches=wrench)
    np.testing.assert_allclose(theirs.qd / 1e-4, expected, rtol=1e-6, atol=1e-6)
    assert np.abs(expected).max() > 1.0
    theirs.set_external_wrenches(None)
    assert not theirs.external_wrenches_active


def test_a_link_side_torque_sensor_reads_the_rigid_body_torque():
    """The sensor sees M_link qdd + c + g + friction-free share; the rotor's part is not."""
    text = _text('cobot7', friction=False)
    model = RobotModel.from_urdf_string(text)
    with_rotor = model.with_joint_dynamics(armature=dict.fromkeys(model.joint_names, 0.2))
    q = _middle(model)
    arm = MujocoArm(with_rotor, text, q, dt=1e-3, effort_state='link_torque')
    tau = model.gravity_torques(q) + np.linspace(2.0, -2.0, model.dof)
    arm.step(tau)
    m, d = arm.engine
    sensed = arm.joint_effort
    # qacc is the acceleration of the step's start state: q, at rest
    rigid = model.inverse_dynamics(q, np.zeros(model.dof), d.qacc.copy())
    np.testing.assert_allclose(sensed, rigid, atol=1e-8)
    np.testing.assert_allclose(arm.applied_effort, tau)
    assert np.abs(sensed - tau).max() > 0.05   # the rotor took a visible share


def test_joints_that_do_not_match_are_refused():
    text = _text('cobot7')
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    renamed = text.replace('"cobot7_joint3"', '"elbow"')
    with pytest.raises(InputError, match=r"missing \['cobot7_joint3'\].*\['elbow'\]"):
        MujocoArm(model, renamed, _middle(model))
    prismatic = re.sub(r'(<joint name="cobot7_joint2" type=")revolute', r'\1prismatic', text)
    assert prismatic != text
    with pytest.raises(InputError, match='cobot7_joint2.*revolute.*SLIDE'):
        MujocoArm(model, prismatic, _middle(model))
    with pytest.raises(InputError, match='MuJoCo cannot load'):
        MujocoArm(model, '<robot name="x"><link name="a"/>', _middle(model))


def test_bad_torques_and_steps_are_refused_and_change_nothing():
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    arm = MujocoArm(model, urdf_path('cobot7'), _middle(model))
    bad = np.zeros(model.dof)
    bad[4] = np.nan
    for tau, match in ((bad, 'cobot7_joint5.*nan'), (np.zeros(3), 'shape')):
        with pytest.raises(InputError, match=match):
            arm.step(tau)
    with pytest.raises(InputError, match='steps'):
        arm.step(np.zeros(model.dof), steps=0)
    assert arm.steps == 0 and np.allclose(arm.q, _middle(model))
    arm.step(np.full(model.dof, 1e6))
    assert np.allclose(arm.applied_effort, model.effort_limits)   # clamped


def test_hold_and_reset_keep_one_clock():
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    arm = MujocoArm(model, urdf_path('cobot7'), _middle(model))
    arm.step(np.zeros(model.dof), steps=100)   # falls
    fallen = arm.q
    assert np.abs(fallen - _middle(model)).max() > 1e-3
    arm.hold(50)
    assert arm.steps == 150 and arm.t == pytest.approx(0.15)
    assert np.all(arm.qd == 0.0) and np.allclose(arm.q, fallen)
    arm.reset()
    assert arm.steps == 0 and np.allclose(arm.q, _middle(model))


def test_the_variant_differs_by_the_errors_asked_for_and_stays_physical():
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    errors = ArmErrors(mass=(0.1, 0.3), com=(0.1, 0.3), inertia=(0.1, 0.3),
                       friction_factor=2.0, armature=0.1, seed=7)
    xml = arm_variant(urdf_path('cobot7'), errors)
    assert xml == arm_variant(urdf_path('cobot7'), errors)   # seeded
    assert xml != arm_variant(urdf_path('cobot7'), ArmErrors(seed=8))
    true = mujoco.MjModel.from_xml_string(xml)
    described = mujoco.MjModel.from_xml_path(urdf_path('cobot7'))
    moving = [b for b in range(described.nbody) if described.body_jntnum[b] > 0]
    ratio = true.body_mass[moving] / described.body_mass[moving]
    assert np.all(np.abs(ratio - 1.0) >= 0.1 - 1e-9) and np.all(np.abs(ratio - 1.0) <= 0.3)
    for b in moving:
        moments = np.sort(true.body_inertia[b])
        assert moments[0] > 0 and moments[0] + moments[1] >= moments[2]
        assert np.linalg.norm(true.body_ipos[b] - described.body_ipos[b]) > 1e-4
    np.testing.assert_allclose(true.dof_damping, 2.0 * described.dof_damping)
    np.testing.assert_allclose(true.dof_frictionloss, 2.0 * described.dof_frictionloss)
    np.testing.assert_allclose(true.dof_armature, 0.1)
    # one motor per joint for mujoco_ros2_control, its range the URDF effort limit
    assert [mujoco.mj_id2name(true, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
            for a in range(true.nu)] == list(model.joint_names)
    np.testing.assert_allclose(true.actuator_ctrlrange[:, 1], model.effort_limits)
    # the suite's model of it is the description: the gravity torques now differ
    arm = MujocoArm(model, xml, _middle(model))
    m, d = arm.engine
    mujoco.mj_forward(m, d)
    assert np.abs(d.qfrc_bias - model.gravity_torques(_middle(model))).max() > 0.3


def test_a_variant_can_add_the_friction_a_description_omits():
    xml = arm_variant(urdf_path('cobot7'), ArmErrors(friction_factor=0.0,
                                                     friction_of_limit=0.02))
    true = mujoco.MjModel.from_xml_string(xml)
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    np.testing.assert_allclose(true.dof_frictionloss, 0.02 * model.effort_limits)
    np.testing.assert_allclose(true.dof_damping, 0.0)


def test_variant_refuses_impossible_errors():
    with pytest.raises(InputError, match='mass must satisfy'):
        arm_variant(urdf_path('cobot7'), ArmErrors(mass=(0.3, 0.1)))
    with pytest.raises(InputError, match='friction_factor'):
        arm_variant(urdf_path('cobot7'), ArmErrors(friction_factor=-1.0))
    with pytest.raises(InputError, match=r"armature given for joints \['nope'\]"):
        arm_variant(urdf_path('cobot7'), ArmErrors(armature={'nope': 0.1}))


def test_a_table_stops_the_arm_that_falls_onto_it():
    """With no torque cobot7 folds down onto a table below its tool; the table holds it."""
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    pose = np.array([0.0, 0.6, 0.0, -1.6, 0.0, 2.2, 0.8])
    tool = model.link_transform(pose, 'tool0')[:3, 3]
    top = float(tool[2]) - 0.15
    xml = arm_variant(urdf_path('cobot7'), ArmErrors(mass=0.0, com=0.0, inertia=0.0,
                                                     friction_factor=1.0, armature=0.05),
                      boxes=[table(top, center_xy=(float(tool[0]), float(tool[1])))])
    free = MujocoArm(model, urdf_path('cobot7'), pose)
    touches = []
    blocked = MujocoArm(model, xml, pose, on_touch=touches.append)
    contacts = 0
    for _ in range(1500):
        free.step(np.zeros(model.dof))
        blocked.step(np.zeros(model.dof))
        contacts = max(contacts, blocked.contact_count())
    assert contacts > 0
    assert len(touches) >= 1 and 0.0 < touches[0] < 1.5   # the time it met the table
    lowest = min(float(model.link_transform(blocked.q, link)[2, 3])
                 for link in ('cobot7_link7', 'tool0'))
    assert lowest > top - 0.08   # resting on the top (the tool's geometry reaches below it)
    assert float(model.link_transform(free.q, 'tool0')[2, 3]) < top - 0.1   # fell through


def test_the_command_line_writes_an_arm_the_engine_runs(tmp_path, capsys):
    from manip_dynamics.cli import main
    path = tmp_path / 'cobot7_true.xml'
    assert main(['mujoco-arm', 'cobot7', '--armature', '0.1', '--seed', '3', '--table',
                 '0.2', '-o', str(path)]) == 0
    assert 'total mass' in capsys.readouterr().out
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    arm = MujocoArm(model, str(path), _middle(model))
    m = arm.engine[0]
    assert np.allclose(m.dof_armature, 0.1)
    assert mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, 'table') >= 0
    assert main(['mujoco-arm', 'cobot7', '--mass', '0.3:0.1', '-o', str(path)]) == 2
    assert 'mass must satisfy' in capsys.readouterr().err
