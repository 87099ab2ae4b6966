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
The single-state fast paths, the batched kinematics, ``out=`` and the input checks.

References: loops of single calls (a batch equals a loop), Pinocchio's
``getFrameJacobian`` and ``getFrameClassicalAcceleration`` (LOCAL_WORLD_ALIGNED = our
'world', LOCAL = our 'link') at the suite's 1e-8 relative bound, and the rule that bad
input is an InputError naming the argument, never a number.
"""

import warnings

import numpy as np
import pytest
import urdf_factory

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.errors import InputError
from manip_dynamics.simulation import Simulator

REL = 1e-8


def _rel(ours: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(ours - ref)) / max(float(np.max(np.abs(ref))), 1.0))


def _robots() -> list[tuple[str, str]]:
    out = []
    panda = urdf_factory.example_robot_urdf('panda')
    if panda is not None:
        out.append(('panda', panda))
    out += [(name, urdf_path(name)) for name in ('cobot7', 'gripper_arm', 'puma560')]
    return out


@pytest.mark.parametrize('name,path', _robots())
def test_batched_jacobian_equals_loop_and_pinocchio(name, path):
    pin = pytest.importorskip('pinocchio', reason='pin (Pinocchio) not installed')
    with open(path, encoding='utf-8') as f:
        xml = f.read()
    model = RobotModel.from_urdf_string(xml)
    ref = pin.buildModelFromXML(xml)
    data = ref.createData()
    idx_v = [ref.joints[ref.getJointId(j)].idx_v for j in model.joint_names]
    assert all(ref.joints[ref.getJointId(j)].nq == 1 for j in model.joint_names)
    rng = np.random.default_rng(3)
    n = model.dof
    qs = rng.uniform(-1.5, 1.5, (6, n))
    qds = rng.uniform(-2.0, 2.0, (6, n))
    links = [link for link in model.link_names if ref.existFrame(link)][-3:]
    for link in links:
        fid = ref.getFrameId(link)
        for frame, ref_frame in (('world', pin.LOCAL_WORLD_ALIGNED), ('link', pin.LOCAL)):
            jac = model.jacobian(qs, link, frame=frame)
            bias = model.jacobian_dot_qd(qs, qds, link, frame=frame)
            assert jac.shape == (6, 6, n) and bias.shape == (6, 6)
            for k in range(6):
                np.testing.assert_array_equal(jac[k], model.jacobian(qs[k], link, frame=frame))
                np.testing.assert_array_equal(
                    bias[k], model.jacobian_dot_qd(qs[k], qds[k], link, frame=frame))
                pq = np.zeros(ref.nq)
                pv = np.zeros(ref.nv)
                pq[idx_v] = qs[k]
                pv[idx_v] = qds[k]
                pin.computeJointJacobians(ref, data, pq)
                pin.framesForwardKinematics(ref, data, pq)
                pj = pin.getFrameJacobian(ref, data, fid, ref_frame)[:, idx_v]
                assert _rel(jac[k], pj) <= REL, (link, frame)
                pin.forwardKinematics(ref, data, pq, pv, np.zeros(ref.nv))
                pin.updateFramePlacements(ref, data)
                acc = pin.getFrameClassicalAcceleration(ref, data, fid, ref_frame)
                assert _rel(bias[k], np.concatenate([acc.linear, acc.angular])) <= REL


def test_batched_link_transform_equals_loop():
    model = RobotModel.from_urdf_file(urdf_path('gripper_arm'))
    qs = np.random.default_rng(1).uniform(-1.0, 1.0, (4, model.dof))
    poses = model.link_transform(qs, 'gripper_arm_tool')
    assert poses.shape == (4, 4, 4)
    for k in range(4):
        np.testing.assert_array_equal(poses[k], model.link_transform(qs[k], 'gripper_arm_tool'))


@pytest.fixture(scope='module')
def arm():
    return RobotModel.from_urdf_file(urdf_path('gripper_arm'))


def test_out_argument_is_filled_and_returned(arm):
    n = arm.dof
    rng = np.random.default_rng(2)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    qs, qds = rng.uniform(-1.0, 1.0, (2, 5, n))
    cases = [
        (lambda o: arm.inverse_dynamics(q, qd, qdd, out=o), (n,)),
        (lambda o: arm.gravity_torques(q, out=o), (n,)),
        (lambda o: arm.coriolis_torques(q, qd, out=o), (n,)),
        (lambda o: arm.nonlinear_effects(q, qd, out=o), (n,)),
        (lambda o: arm.mass_matrix(q, out=o), (n, n)),
        (lambda o: arm.coriolis_matrix(q, qd, out=o), (n, n)),
        (lambda o: arm.forward_dynamics(q, qd, qdd, out=o), (n,)),
        (lambda o: arm.jacobian(q, 'gripper_arm_tool', out=o), (6, n)),
        (lambda o: arm.jacobian_dot_qd(q, qd, 'gripper_arm_tool', out=o), (6,)),
        (lambda o: arm.link_transform(q, 'gripper_arm_tool', out=o), (4, 4)),
        (lambda o: arm.inverse_dynamics(qs, qds, qds, out=o), (5, n)),
        (lambda o: arm.mass_matrix(qs, out=o), (5, n, n)),
        (lambda o: arm.jacobian(qs, 'gripper_arm_tool', out=o), (5, 6, n)),
    ]
    for call, shape in cases:
        expected = call(None)
        assert expected.shape == shape
        out = np.full(shape, np.nan)
        assert call(out) is out
        np.testing.assert_array_equal(out, expected)
        for bad in (np.empty(shape[:-1] + (shape[-1] + 1,)), np.empty(shape, dtype=np.float32),
                    [0.0] * shape[0]):
            with pytest.raises(InputError, match='out must be'):
                call(bad)
        frozen = np.empty(shape)
        frozen.flags.writeable = False
        with pytest.raises(InputError, match='writable'):
            call(frozen)


def test_strided_input_on_the_fast_path(arm):
    rng = np.random.default_rng(4)
    big = rng.uniform(-1.0, 1.0, (3, 2 * arm.dof))
    q, qd, qdd = big[0, ::2], big[1, ::2], big[2, ::2]  # float64, right shape, strided
    expected = arm.inverse_dynamics(q.copy(), qd.copy(), qdd.copy())
    np.testing.assert_array_equal(arm.inverse_dynamics(q, qd, qdd), expected)
    np.testing.assert_array_equal(arm.mass_matrix(q), arm.mass_matrix(q.copy()))


def test_other_dtypes_are_converted_not_reinterpreted(arm):
    # The bound kernels read raw memory: an int64 or byte-swapped float64 array of the right
    # shape must be converted first, never read as float64 bits (a wrong number).
    n = arm.dof
    base = np.array([k % 3 for k in range(n)], dtype=np.int64)  # 0, 1, 2, 0 ...
    ref = base.astype(np.float64)
    tool = 'gripper_arm_tool'
    calls = [
        lambda a: arm.inverse_dynamics(a, a, a),
        lambda a: arm.gravity_torques(a),
        lambda a: arm.coriolis_torques(a, a),
        lambda a: arm.nonlinear_effects(a, a),
        lambda a: arm.mass_matrix(a),
        lambda a: arm.coriolis_matrix(a, a),
        lambda a: arm.forward_dynamics(a, a, a),
        lambda a: arm.jacobian(a, tool),
        lambda a: arm.jacobian_dot_qd(a, a, tool),
        lambda a: arm.link_transform(a, tool),
        lambda a: arm.kinetic_energy(a, a),
        lambda a: arm.potential_energy(a),
    ]
    variants = [base, base.astype(np.uint64), base.astype(np.int32), base.astype(np.float32),
                ref.astype('>f8'), ref.astype(object), ref.tolist()]
    for call in calls:
        expected = call(ref)
        assert np.all(np.isfinite(expected))
        for variant in variants:
            np.testing.assert_allclose(call(variant), expected, rtol=0.0, atol=1e-12,
                                       err_msg=str(getattr(variant, 'dtype', 'list')))
    # the float64 result itself is right: gravity torques are the derivative of the
    # potential energy (central differences, an independent check of the converted input)
    h = 1e-6
    grad = [(arm.potential_energy(ref + h * e) - arm.potential_energy(ref - h * e)) / (2 * h)
            for e in np.eye(n)]
    np.testing.assert_allclose(arm.gravity_torques(base), grad, atol=1e-6)


def test_huge_finite_input_is_an_error_naming_it(arm):
    n = arm.dof
    z = np.zeros(n)
    fast = np.full(n, 1e200)
    with pytest.raises(InputError, match=r'not finite.*qd'):
        arm.inverse_dynamics(z, fast, z)
    with pytest.raises(InputError, match=r'not finite.*qd'):
        arm.coriolis_torques(z, fast)
    with pytest.raises(InputError, match=r'not finite.*qd'):
        arm.nonlinear_effects(np.tile(z, (3, 1)), np.tile(fast, (3, 1)))
    assert np.isfinite(arm.coriolis_matrix(z, fast)).all()  # C is linear in qd: no overflow
    with pytest.raises(InputError, match=r'not finite.*qd'):
        arm.forward_dynamics(z, fast, z)
    with pytest.raises(InputError, match=r'not finite.*qd'):
        arm.kinetic_energy(z, fast)
    with pytest.raises(InputError, match=r'not finite.*qdd'):
        arm.inverse_dynamics(z, z, np.full(n, 1e308))  # M qdd overflows
    far = np.full(n, 1e300)  # the prismatic joints move the links 1e300 m away: m p^2
    ones = np.ones(n)
    for call in (lambda: arm.mass_matrix(far), lambda: arm.inverse_dynamics(far, z, ones),
                 lambda: arm.mass_matrix(np.tile(far, (2, 1))),
                 lambda: arm.kinetic_energy(far, ones)):
        with pytest.raises(InputError, match=r'not finite.*\bq\b'):
            call()


@pytest.mark.filterwarnings('ignore::PendingDeprecationWarning')  # np.matrix itself
def test_complex_and_matrix_input_rejected(arm):
    n = arm.dof
    z = np.zeros(n)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # no ComplexWarning either
        for bad in (z + 0.5j, [complex(0.1, 0.0)] * n):
            with pytest.raises(InputError, match='complex'):
                arm.inverse_dynamics(bad, z, z)
            with pytest.raises(InputError, match='complex'):
                arm.mass_matrix(bad)
            with pytest.raises(InputError, match='complex'):
                arm.to_model_order((), bad)
            with pytest.raises(InputError, match='complex'):
                Simulator(arm, z).step(bad)
    mat = np.matrix(np.zeros(n))
    for call in (lambda: arm.gravity_torques(mat), lambda: arm.inverse_dynamics(mat, z, z),
                 lambda: arm.jacobian(mat, 'gripper_arm_tool'),
                 lambda: arm.forward_dynamics(z, mat, z)):
        with pytest.raises(InputError, match='np.matrix'):
            call()


def test_simulator_torque_checks_name_the_joint(arm):
    sim = Simulator(arm, np.zeros(arm.dof))
    tau = np.zeros(arm.dof)
    tau[2] = np.inf
    with pytest.raises(InputError, match=arm.joint_names[2]):
        sim.step(tau)
    assert sim.t == 0.0
    with pytest.raises(InputError, match='shape'):
        sim.step(np.zeros(arm.dof + 1))


def test_single_state_friction_and_armature_equal_the_batched_path(arm):
    # the (n,) fast path adds friction and rotor inertia itself: the same numbers as a
    # batch of one row (the general path), and the same error for a sum that overflows
    names = arm.joint_names
    model = arm.with_joint_dynamics(damping={j: 0.3 + 0.1 * k for k, j in enumerate(names)},
                                    friction=dict.fromkeys(names, 0.5),
                                    armature={j: 0.02 * (k + 1) for k, j in enumerate(names)})
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, model.dof) for _ in range(3))
    for friction in (False, True):
        for armature in (False, True):
            single = model.inverse_dynamics(q, qd, qdd, include_friction=friction,
                                            include_armature=armature)
            batch = model.inverse_dynamics(q[None], qd[None], qdd[None],
                                           include_friction=friction,
                                           include_armature=armature)
            np.testing.assert_array_equal(single, batch[0])
    rigid = model.inverse_dynamics(q, qd, qdd)
    np.testing.assert_allclose(
        model.inverse_dynamics(q, qd, qdd, include_friction=True, include_armature=True),
        rigid + model.damping * qd + model.coulomb_friction * np.tanh(
            qd / model.friction_velocity) + model.armature * qdd, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(model.friction_torques(qd),
                                  model.friction_torques(qd[None])[0])
    huge = np.full(model.dof, 1e308)
    zero = np.zeros(model.dof)
    errors = []
    for args in ((q, zero, huge), (q[None], zero[None], huge[None])):
        with pytest.raises(InputError) as caught:
            model.inverse_dynamics(*args, include_armature=True)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
