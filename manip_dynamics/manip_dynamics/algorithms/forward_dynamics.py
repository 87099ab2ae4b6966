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
Forward dynamics: joint accelerations from torques.

Solves Craig eq. 6.59 for the accelerations, ``qdd = M(q)^-1 (tau - V(q, qd) - G(q))``
(Craig sec. 6.12), by one of two methods in one kernel:

* ``CHOLESKY``: the bias ``V + G`` (minus external wrenches) is one Newton-Euler pass with
  ``qdd = 0``, ``M`` comes from the composite-rigid-body algorithm and the system is solved
  by a Cholesky factorisation, which also proves M positive definite.  Cost
  O(n d + n^3 / 6).
* ``ABA``: the articulated-body algorithm of :mod:`.aba`, O(n).

The facade chooses by the number of joints (``ABA_MIN_DOF`` in robot_model_calls.py, the
crossover measured by benchmarks/forward_dynamics_methods.py, table in docs/BENCHMARKS.md).
"""

import math

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS

_JIT = INNER_OPTIONS


@njit(**_JIT)
def cholesky_solve(M, b):  # noqa: N803
    """
    Solve ``M x = b`` in place (``b`` becomes ``x``) for symmetric positive-definite M.

    ``M`` is overwritten by its lower Cholesky factor.  Returns False when M is not
    positive definite (a pivot <= 0).
    """
    n = b.shape[0]
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= M[i, k] * b[k]
        b[i] = s / M[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= M[k, i] * b[k]
        b[i] = s / M[i, i]
    return True
