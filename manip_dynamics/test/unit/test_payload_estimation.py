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
manip_dynamics.identification.payload.estimate_payload from motion.

On an arm whose friction and rotor inertia are in the model: exact on noise-free data, and a
physically consistent inertia or none.
"""

from joint_motion import moving_data
import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.identification.payload import estimate_payload


@pytest.fixture(scope='module')
def arm_with_joint_dynamics() -> RobotModel:
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    names = model.joint_names
    return model.with_joint_dynamics(damping=dict.fromkeys(names, 2.0),
                                     friction=dict.fromkeys(names, 1.5),
                                     armature=dict.fromkeys(names, 0.3))


def test_payload_from_motion_with_friction_and_rotor_inertia_is_exact(arm_with_joint_dynamics):
    """1.5 kg, 6 cm along the tool axis (an earlier estimator gave 1.43 kg and 14 mm off)."""
    model = arm_with_joint_dynamics
    inertia = np.array([0.004, 0.0002, 0.0, 0.005, 0.0, 0.003])
    truth = model.with_joint_dynamics()
    truth.set_payload('tool0', 1.5, [0.0, 0.0, 0.06], inertia)
    q, qd, qdd = moving_data(model)
    # the torques the joints apply, with the model's friction and rotor inertia (what a
    # torque-sensing arm measures; independent of the estimator: plain inverse dynamics)
    tau = truth.inverse_dynamics(q, qd, qdd, include_friction=True, include_armature=True)
    est = estimate_payload(model, 'tool0', q, tau, qd=qd, qdd=qdd)
    assert abs(est.mass - 1.5) < 1e-6
    np.testing.assert_allclose(est.com, [0.0, 0.0, 0.06], atol=1e-6)
    assert est.with_inertia and est.note == ''
    np.testing.assert_allclose(est.inertia, inertia, atol=1e-6)
    assert float(np.max(est.residual_rms)) < 1e-6


def test_payload_inertia_that_no_rigid_body_has_is_not_returned(arm_with_joint_dynamics):
    model = arm_with_joint_dynamics
    q, qd, qdd = moving_data(model)
    taus = []
    for moments in ([0.001, 0.001, 0.001], [0.02, 0.015, 0.015]):
        truth = model.with_joint_dynamics()
        ixx, iyy, izz = moments
        truth.set_payload('tool0', 1.0, [0.0, 0.0, 0.05], [ixx, 0, 0, iyy, 0, izz])
        taus.append(truth.inverse_dynamics(q, qd, qdd, include_friction=True,
                                           include_armature=True))
    # torques are linear in the inertia: 2 tau(I_b) - tau(I_a) is the arm carrying
    # principal moments -0.018, -0.013, -0.013 kg m^2, which no rigid body has
    tau = 2.0 * taus[0] - taus[1]
    est = estimate_payload(model, 'tool0', q, tau, qd=qd, qdd=qdd)
    assert not est.with_inertia
    assert 'not one a rigid body can have' in est.note
    np.testing.assert_array_equal(est.inertia, np.zeros(6))
