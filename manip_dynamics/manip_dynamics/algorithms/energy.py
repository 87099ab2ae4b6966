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
Potential energy (Craig sec. 6.9, eq. 6.73 form): ``u = -sum_i m_i g^T c_i``.

The kinetic energy ``k = 1/2 qd^T M(q) qd`` (Craig eq. 6.69) is computed by the facade from
the mass matrix.  The zero of the potential is at the root origin.
"""

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS
from manip_dynamics.algorithms.kinematics import all_finite, joint_transforms, world_poses

_JIT = JIT_OPTIONS


@njit(**_JIT)
def potential_energy(parent, kind, axis, R_tree, p_tree, mass, com, gravity, q,  # noqa: N803
                     out):
    """
    Potential energies [J] of a batch of states ``q`` (N, n) into ``out`` (N,).

    :return: 0, or ``1 + k`` when state ``k`` has a non-finite position.
    """
    N, n = q.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    R0 = np.empty((n, 3, 3))
    p0 = np.empty((n, 3))
    for k in range(N):
        if not all_finite(q[k]):
            return 1 + k
        joint_transforms(kind, axis, R_tree, p_tree, q[k], R, p)
        world_poses(parent, R, p, R0, p0)
        u = 0.0
        for i in range(n):
            c0 = p0[i] + R0[i] @ com[i]
            u -= mass[i] * (gravity[0] * c0[0] + gravity[1] * c0[1] + gravity[2] * c0[2])
        out[k] = u
    return 0
