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

"""The two forward-dynamics methods (ABA and Cholesky of the CRBA mass matrix) agree."""

import numpy as np
import pytest

from manip_dynamics import RobotModel
from manip_dynamics.algorithms.aba import aba
from manip_dynamics.algorithms.forward_dynamics import forward_dynamics
from manip_dynamics.bundled import bundled_robots, urdf_path


def _kernel_args(model, q, qd, tau, fext):
    a = model._arrays
    return (a.parent, a.kind, a.axis, a.R_tree, a.p_tree, a.mass, a.com, a.inertia,
            model.armature, -model.gravity, q, qd, tau, fext)


@pytest.mark.parametrize('robot', bundled_robots())
def test_aba_equals_cholesky_solve(robot):
    model = RobotModel.from_urdf_file(urdf_path(robot))
    rng = np.random.default_rng(7)
    n = model.dof
    q = rng.uniform(-1.0, 1.0, (5, n))
    qd = rng.uniform(-2.0, 2.0, (5, n))
    tau = rng.uniform(-10.0, 10.0, (5, n))
    fext = rng.normal(size=(5, n, 6))
    out_aba = np.empty((5, n))
    out_chol = np.empty((5, n))
    assert aba(*_kernel_args(model, q, qd, tau, fext), out_aba) == 0
    assert forward_dynamics(*_kernel_args(model, q, qd, tau, fext), out_chol) == 0
    np.testing.assert_allclose(out_aba, out_chol, rtol=1e-9, atol=1e-9)


def test_aba_reports_non_finite_input():
    model = RobotModel.from_urdf_file(urdf_path('planar_2r'))
    q = np.array([[0.1, np.nan]])
    out = np.empty((1, 2))
    code = aba(*_kernel_args(model, q, np.zeros((1, 2)), np.zeros((1, 2)),
                             np.zeros((1, 2, 6))), out)
    assert code == 1
