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

"""manip_dynamics.identification.payload_window: the recent joint states and the fit on them."""

import numpy as np
import pytest

from manip_dynamics import InputError, RobotModel
from manip_dynamics.bundled import urdf_path
from manip_dynamics.identification.payload_window import (
    estimate_payload_from_window, JointStateWindow)

MASS, COM = 1.7, np.array([0.02, -0.01, 0.05])


@pytest.fixture(scope='module')
def loaded():
    """cobot7 carrying MASS at COM on its last link: the arm whose torques are recorded."""
    model = RobotModel.from_urdf_file(urdf_path('cobot7'))
    model.set_payload('cobot7_link7', MASS, COM, np.zeros(6))
    return model


def _static_window(model: RobotModel, poses: int = 12) -> JointStateWindow:
    """Rest at several poses, 10 samples each, the efforts the gravity torques of the load."""
    rng = np.random.default_rng(3)
    window = JointStateWindow()
    t = 0.0
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -np.pi)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, np.pi)
    for _ in range(poses):
        q = rng.uniform(0.8 * lower, 0.8 * upper)
        for _ in range(10):
            window.add(t, q, np.zeros(model.dof), model.gravity_torques(q))
            t += 0.01
    return window


def test_static_samples_give_back_the_mass_and_centre_of_mass_that_made_them(loaded):
    window = _static_window(loaded)
    # the model the node holds knows no payload there: the fit must find all of it
    estimate, static = estimate_payload_from_window(loaded, window, 'cobot7_link7', 60.0)
    assert static
    assert estimate.mass == pytest.approx(MASS, rel=1e-6)
    np.testing.assert_allclose(estimate.com, COM, atol=1e-6)


def test_a_short_or_empty_window_and_a_bad_request_are_clear_errors(loaded):
    window = JointStateWindow()
    with pytest.raises(InputError, match='only 0 joint_states'):
        estimate_payload_from_window(loaded, window, 'cobot7_link7', 5.0)
    with pytest.raises(InputError, match='link is empty'):
        estimate_payload_from_window(loaded, window, '', 5.0)
    with pytest.raises(InputError, match='window_seconds must be > 0'):
        estimate_payload_from_window(loaded, window, 'cobot7_link7', 0.0)


def test_the_window_starts_again_when_time_goes_back_and_skips_samples_without_efforts():
    window = JointStateWindow(max_seconds=1.0)
    z = np.zeros(3)
    for k in range(5):
        window.add(10.0 + 0.1 * k, z, z, z)
    window.add(10.5, z, z, None)           # no efforts: of no use
    assert len(window) == 5
    window.add(2.0, z, z, z)               # a simulation reset
    assert len(window) == 1
    for k in range(30):                    # older than max_seconds before the newest: gone
        window.add(2.1 + 0.1 * k, z, z, z)
    assert [round(t, 6) for t, *_ in window.last(10.0)][0] >= round(5.0 - 1.0, 6)
