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
Forward dynamics by Featherstone's articulated-body algorithm (ABA), O(n).

Kept beside the Cholesky solve of :mod:`.forward_dynamics` as an independent second
method: the two must agree, and benchmarks/core_benchmark.py measures which one is faster
(the facade uses the faster for the arm sizes this suite targets).  Spatial vectors in body
coordinates, motion ``[w; v]``, force ``[n; f]``; ``X_i`` maps parent motion coordinates to
body ``i`` (``E = R_i^T``, ``r = p_i``: ``X = [[E, 0], [-E [r]x, E]]``).  Three passes
(Featherstone, *Rigid Body Dynamics Algorithms*, 2008, table 7.1): velocities and bias
forces outward, articulated inertias inward, accelerations outward; gravity as a base
acceleration.
"""

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS
from manip_dynamics.algorithms.kinematics import first_non_finite, joint_transforms

_JIT = JIT_OPTIONS


@njit(**_JIT)
def _motion_to_child(R, p, v, out):  # noqa: N803
    """``out = X v`` for the parent -> child Plücker transform of (R, p)."""
    w0, w1, w2 = v[0], v[1], v[2]
    # v - r x w
    l0 = v[3] - (p[1] * w2 - p[2] * w1)
    l1 = v[4] - (p[2] * w0 - p[0] * w2)
    l2 = v[5] - (p[0] * w1 - p[1] * w0)
    for r in range(3):
        out[r] = R[0, r] * w0 + R[1, r] * w1 + R[2, r] * w2
        out[3 + r] = R[0, r] * l0 + R[1, r] * l1 + R[2, r] * l2


@njit(**_JIT)
def _force_to_parent(R, p, f, out):  # noqa: N803
    """``out = X^T f``: a body-frame force expressed at the parent origin, parent axes."""
    n0 = R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2]
    n1 = R[1, 0] * f[0] + R[1, 1] * f[1] + R[1, 2] * f[2]
    n2 = R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2]
    g0 = R[0, 0] * f[3] + R[0, 1] * f[4] + R[0, 2] * f[5]
    g1 = R[1, 0] * f[3] + R[1, 1] * f[4] + R[1, 2] * f[5]
    g2 = R[2, 0] * f[3] + R[2, 1] * f[4] + R[2, 2] * f[5]
    out[0] = n0 + p[1] * g2 - p[2] * g1
    out[1] = n1 + p[2] * g0 - p[0] * g2
    out[2] = n2 + p[0] * g1 - p[1] * g0
    out[3] = g0
    out[4] = g1
    out[5] = g2


@njit(**_JIT)
def _motion_cross(a, b, out):
    """``out = a x b`` (spatial motion cross product)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    out[3] = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1]
    out[4] = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2]
    out[5] = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0]


@njit(**_JIT)
def _force_cross(a, f, out):
    """``out = a x* f`` (spatial force cross product)."""
    out[0] = a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4]
    out[1] = a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5]
    out[2] = a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3]
    out[3] = a[1] * f[5] - a[2] * f[4]
    out[4] = a[2] * f[3] - a[0] * f[5]
    out[5] = a[0] * f[4] - a[1] * f[3]


@njit(**_JIT)
def _spatial_inertia(m, c, Ic, out):  # noqa: N803
    """Body spatial inertia about the body origin: ``[[I_o, [h]x], [[h]x^T, m 1]]``."""
    cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    for r in range(3):
        for s in range(3):
            out[r, s] = Ic[r, s] + m * ((cc if r == s else 0.0) - c[r] * c[s])
            out[3 + r, 3 + s] = m if r == s else 0.0
    h0, h1, h2 = m * c[0], m * c[1], m * c[2]
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h2, h1
    out[1, 3], out[1, 4], out[1, 5] = h2, 0.0, -h0
    out[2, 3], out[2, 4], out[2, 5] = -h1, h0, 0.0
    for r in range(3):
        for s in range(3):
            out[3 + s, r] = out[r, 3 + s]


@njit(**_JIT)
def _congruence_to_parent(R, p, A, out, tmp):  # noqa: N803
    """``out += X^T A X`` for a symmetric 6x6 ``A`` in child coordinates."""
    col = np.empty(6)
    res = np.empty(6)
    # tmp = X^T A (apply X^T to each column of A)
    for k in range(6):
        for r in range(6):
            col[r] = A[r, k]
        _force_to_parent(R, p, col, res)
        for r in range(6):
            tmp[r, k] = res[r]
    # out += (X^T (X^T A)^T)^T = X^T A X, using symmetry of the result
    for k in range(6):
        for r in range(6):
            col[r] = tmp[k, r]
        _force_to_parent(R, p, col, res)
        for r in range(6):
            out[r, k] += res[r]


@njit(**_JIT)
def aba(parent, kind, axis, R_tree, p_tree, mass, com, inertia, armature,  # noqa: N803
        base_acc, q, qd, tau, fext, out):
    """
    Joint accelerations of a batch of states by the articulated-body algorithm.

    Arguments and return codes as :func:`manip_dynamics.algorithms.forward_dynamics.
    forward_dynamics` (``-1 - k``: a joint with zero articulated inertia in state ``k``).
    """
    N, n = q.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    S = np.zeros((n, 6))
    v = np.empty((n, 6))
    c = np.empty((n, 6))
    a = np.empty((n, 6))
    IA = np.empty((n, 6, 6))
    pA = np.empty((n, 6))
    U = np.empty((n, 6))
    D = np.empty(n)
    u = np.empty(n)
    tmp6 = np.empty(6)
    tmp66 = np.empty((6, 6))
    Ia = np.empty((6, 6))
    pa = np.empty(6)
    shared = fext.shape[0] == 1
    for i in range(n):
        for r in range(3):
            if kind[i] == 0:
                S[i, r] = axis[i, r]
            else:
                S[i, 3 + r] = axis[i, r]
    for k in range(N):
        code = first_non_finite(q[k], qd[k], tau[k])
        if code:
            return code + 3 * k
        fe = fext[0] if shared else fext[k]
        joint_transforms(kind, axis, R_tree, p_tree, q[k], R, p)
        for i in range(n):
            j = parent[i]
            if j < 0:
                tmp6[:] = 0.0
            else:
                _motion_to_child(R[i], p[i], v[j], tmp6)
            for r in range(6):
                v[i, r] = tmp6[r] + S[i, r] * qd[k, i]
            _motion_cross(v[i], S[i] * qd[k, i], c[i])
            _spatial_inertia(mass[i], com[i], inertia[i], IA[i])
            Iv = IA[i] @ v[i]
            _force_cross(v[i], Iv, pA[i])
            for r in range(3):  # fext rows are [f; tau], spatial forces [n; f]
                pA[i, r] -= fe[i, 3 + r]
                pA[i, 3 + r] -= fe[i, r]
        for i in range(n - 1, -1, -1):
            U[i] = IA[i] @ S[i]
            D[i] = S[i] @ U[i] + armature[i]
            if not D[i] > 0.0:
                return -1 - k
            u[i] = tau[k, i] - S[i] @ pA[i]
            j = parent[i]
            if j >= 0:
                for r in range(6):
                    for s in range(6):
                        Ia[r, s] = IA[i, r, s] - U[i, r] * U[i, s] / D[i]
                pa[:] = pA[i] + Ia @ c[i] + U[i] * (u[i] / D[i])
                _congruence_to_parent(R[i], p[i], Ia, IA[j], tmp66)
                _force_to_parent(R[i], p[i], pa, tmp6)
                for r in range(6):
                    pA[j, r] += tmp6[r]
        for i in range(n):
            j = parent[i]
            if j < 0:
                base = np.zeros(6)
                base[3] = base_acc[0]
                base[4] = base_acc[1]
                base[5] = base_acc[2]
                _motion_to_child(R[i], p[i], base, tmp6)
            else:
                _motion_to_child(R[i], p[i], a[j], tmp6)
            for r in range(6):
                a[i, r] = tmp6[r] + c[i, r]
            qdd = (u[i] - U[i] @ a[i]) / D[i]
            out[k, i] = qdd
            for r in range(6):
                a[i, r] += S[i, r] * qdd
    return 0
