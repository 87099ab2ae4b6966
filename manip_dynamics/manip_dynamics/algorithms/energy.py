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

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import add, load, matvec

_JIT = INNER_OPTIONS


@njit(**_JIT)
def potential_state(mass, com, gravity, R0, p0):
    """
    Return the potential energy [J] of one state from the world body poses ``R0``, ``p0``.

    :param gravity: Gravity acceleration in the root frame [m/s^2], (3,).
    """
    u = 0.0
    for i in range(mass.shape[0]):
        c0 = add(load(p0, i), matvec(R0[i], load(com, i)))
        u -= mass[i] * (gravity[0] * c0[0] + gravity[1] * c0[1] + gravity[2] * c0[2])
    return u
