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
(Craig sec. 6.12): the bias ``V + G`` (minus external wrenches) is one Newton-Euler pass
with ``qdd = 0``, ``M`` comes from the composite-rigid-body algorithm and the system is
solved by a Cholesky factorisation, which also proves M positive definite.  Cost
O(n d + n^3 / 6); for the arm sizes this suite targets (n <= 50) it is faster here than
the articulated-body algorithm of :mod:`.aba` in the same kernel style (measured by
benchmarks/forward_dynamics_methods.py, table in docs/BENCHMARKS.md).
"""

import math

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS
from manip_dynamics.algorithms.crba import crba_state
from manip_dynamics.algorithms.kinematics import first_non_finite, joint_transforms
from manip_dynamics.algorithms.rnea import rnea_state

_JIT = JIT_OPTIONS


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


@njit(**_JIT)
def forward_dynamics(parent, kind, axis, R_tree, p_tree, mass, com, inertia,  # noqa: N803
                     armature, base_acc, q, qd, tau, fext, out):
    """
    Joint accelerations of a batch of states.

    :param q: Joint positions, shape (N, n); likewise ``qd`` and ``tau`` (the torques net
        of any friction the caller models).
    :param fext: Body wrenches, shape (1, n, 6) or (N, n, 6).
    :param out: Accelerations written here, shape (N, n).
    :return: 0; ``1 + 3 k + a`` for a non-finite entry of argument ``a`` (0 q, 1 qd, 2 tau)
        in state ``k``; ``-1 - k`` when M is not positive definite in state ``k``.
    """
    N, n = q.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    w = np.empty((n, 3))
    wd = np.empty((n, 3))
    vd = np.empty((n, 3))
    f = np.empty((n, 3))
    t = np.empty((n, 3))
    mc = np.empty(n)
    hc = np.empty((n, 3))
    Ioc = np.empty((n, 3, 3))
    M = np.empty((n, n))
    zero = np.zeros(n)
    shared = fext.shape[0] == 1
    for k in range(N):
        code = first_non_finite(q[k], qd[k], tau[k])
        if code:
            return code + 3 * k
        joint_transforms(kind, axis, R_tree, p_tree, q[k], R, p)
        rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, p, qd[k], zero,
                   fext[0] if shared else fext[k], w, wd, vd, f, t, out[k])
        for i in range(n):
            out[k, i] = tau[k, i] - out[k, i]
        crba_state(parent, kind, axis, mass, com, inertia, armature, R, p, mc, hc, Ioc, M)
        if not cholesky_solve(M, out[k]):
            return -1 - k
    return 0


@njit(**_JIT)
def forward_dynamics_single(parent, kind, axis, R_tree, p_tree, mass, com,  # noqa: N803
                            inertia, armature, base_acc, q, qd, tau, fext, out):
    """
    Joint accelerations of one state (all (n,), ``fext`` (n, 6)): the facade's fast path.

    :return: 0; 1 + the index of the first non-finite argument (0 q, 1 qd, 2 tau); -1 when
        M is not positive definite.
    """
    code = first_non_finite(q, qd, tau)
    if code:
        return code
    n = q.shape[0]
    R = np.empty((n, 3, 3))
    Ioc = np.empty((n, 3, 3))
    M = np.empty((n, n))
    work = np.empty((7, n, 3))
    joint_transforms(kind, axis, R_tree, p_tree, q, R, work[0])
    rnea_state(parent, kind, axis, mass, com, inertia, base_acc, R, work[0], qd, np.zeros(n),
               fext, work[1], work[2], work[3], work[4], work[5], out)
    for i in range(n):
        out[i] = tau[i] - out[i]
    crba_state(parent, kind, axis, mass, com, inertia, armature, R, work[0], np.empty(n),
               work[6], Ioc, M)
    if not cholesky_solve(M, out):
        return -1
    return 0
