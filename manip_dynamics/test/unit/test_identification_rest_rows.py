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
The least-squares fit leaves out a joint's samples at rest (``min_speed``).

The data are exact torques of the model (``Y pi``, the regressor identity checked against
recursive Newton-Euler in test_identification_regressor) at random states, a third of them
with some joints at rest; at rest each such joint also carries a static friction torque
drawn within +-2 N m, which no function of the state predicts (a real joint's dry friction
holds whatever the motion before left it). The reference is the model's own parameters.
"""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.errors import InputError
from manip_dynamics.identification.base_parameters import random_states
from manip_dynamics.identification.data import Samples
from manip_dynamics.identification.estimation import least_squares

#: Static friction held at rest [N m]: about twice cobot7's dry friction.
STATIC = 2.0


def samples_with_rest(model, count: int = 1500, seed: int = 4) -> Samples:
    """Return exact samples; at rest a joint's torque is off by a static friction."""
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_states(model, count, seed=seed)
    resting = (rng.random(qd.shape) < 0.5) & (np.arange(count) % 3 == 0)[:, None]
    qd = np.where(resting, 0.0, qd)
    y = model.regressor(q, qd, qdd, friction=True)
    tau = y @ model.inertial_parameters(friction=True)
    tau = tau + resting * rng.uniform(-STATIC, STATIC, qd.shape)
    return Samples(t=np.arange(count) * 0.01, q=q, qd=qd, qdd=qdd, tau=tau)


@pytest.fixture(scope='module')
def model():
    return RobotModel.from_urdf_file(urdf_path('cobot7'))


def test_rows_at_rest_left_out_recover_the_parameters(model):
    samples = samples_with_rest(model)
    base = model.base_parameters(friction=True)
    truth = None
    errors = {}
    for speed in (0.0, 0.02):
        ls = least_squares(model, samples, base, min_speed=speed)
        truth = ls.K @ model.inertial_parameters(friction=True)
        errors[speed] = float(np.max(np.abs(ls.values - truth)))
        assert ls.min_speed == speed
    # the moving rows alone are exact: the fit is too; with the rest rows it is not
    assert errors[0.02] < 1e-6 * max(1.0, float(np.max(np.abs(truth)))), errors
    assert errors[0.0] > 1e3 * errors[0.02], errors


def test_a_joint_that_never_moves_fast_enough_is_named(model):
    samples = samples_with_rest(model, count=300)
    slow = samples.qd.copy()
    slow[:, 3] = 0.01
    still = Samples(t=samples.t, q=samples.q, qd=slow, qdd=samples.qdd, tau=samples.tau)
    with pytest.raises(InputError, match='cobot7_joint4 never moves as fast as min_speed'):
        least_squares(model, still, model.base_parameters(friction=True), min_speed=0.02)
    with pytest.raises(InputError, match='min_speed'):
        least_squares(model, samples, model.base_parameters(friction=True),
                      min_speed=float('nan'))
