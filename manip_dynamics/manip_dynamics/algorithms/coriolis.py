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
The Christoffel-consistent Coriolis matrix C(q, qd).

``C qd`` is the velocity term V(q, qd) of Craig eq. 6.59 (Coriolis and centrifugal
torques); among the many matrices with that product this is the one built from the
Christoffel symbols of M (Craig sec. 6.8-6.9, seed lecture notes on Lagrangian dynamics),
so that ``dM/dt - 2 C`` is skew-symmetric.

Computed without differentiating M, by the body-wise factorisation of Echeandia and
Wensing (2021): with world-frame spatial quantities (Plücker coordinates at the root origin,
motion ``[w; v]``), ``C = sum_i J_i^T (I_i dJ_i/dt + B_i J_i)`` and
``B_i = 1/2 ((v_i x*) I_i + (I_i v_i) xbar* - I_i (v_i x))``.  Because every term is
in one frame, subtree sums ``Ic_d = sum I_i``, ``Bc_d = sum B_i`` give, for joints ``j``,
``k`` on one path with ``d`` the deeper of the two,
``C[j, k] = S_j^T (Ic_d dS_k/dt + Bc_d S_k)``, where ``dS_k/dt = v_k x S_k``.  Cost
O(n d) after O(n) 6x6 products.
"""

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS
from manip_dynamics.algorithms._vec3 import add, cross, load, matvec, scale
from manip_dynamics.algorithms.kinematics import all_finite, joint_transforms, world_poses

_JIT = JIT_OPTIONS


@njit(**_JIT)
def _cross3(a, b, out, oa):
    out[oa + 0] = a[1] * b[2] - a[2] * b[1]
    out[oa + 1] = a[2] * b[0] - a[0] * b[2]
    out[oa + 2] = a[0] * b[1] - a[1] * b[0]


@njit(**_JIT)
def _skew_into(v, blk, r0, c0, sign):
    blk[r0 + 0, c0 + 1] += -sign * v[2]
    blk[r0 + 0, c0 + 2] += sign * v[1]
    blk[r0 + 1, c0 + 0] += sign * v[2]
    blk[r0 + 1, c0 + 2] += -sign * v[0]
    blk[r0 + 2, c0 + 0] += -sign * v[1]
    blk[r0 + 2, c0 + 1] += sign * v[0]


@njit(**_JIT)
def _matmul6(A, B, out, transpose_a):  # noqa: N803
    """``out = A @ B`` (or ``A.T @ B``) for 6x6 arrays, without temporaries."""
    for r in range(6):
        for c in range(6):
            acc = 0.0
            for k in range(6):
                acc += (A[k, r] if transpose_a else A[r, k]) * B[k, c]
            out[r, c] = acc


@njit(**_JIT)
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(**_JIT)
def coriolis_state(parent, kind, axis, mass, com, inertia, R, p, qd,  # noqa: N803
                   R0, p0, S, Sd, V, Ic, Bc, C):
    """
    Fill ``C`` (n, n) for one state whose joint transforms are ``R``, ``p``.

    Scratch: ``R0`` (n, 3, 3), ``p0`` (n, 3), ``S``, ``Sd``, ``V`` (n, 6),
    ``Ic``, ``Bc`` (n, 6, 6).
    """
    n = qd.shape[0]
    world_poses(parent, R, p, R0, p0)
    X = np.empty((6, 6))
    vx = np.empty((6, 6))
    T1 = np.empty((6, 6))
    T2 = np.empty((6, 6))
    Iv = np.empty(6)
    tmp = np.empty(3)
    for i in range(n):
        Ri = R0[i]
        # joint motion subspace S_i in world Plücker coordinates
        ax = matvec(Ri, load(axis, i))
        if kind[i] == 0:
            pxa = cross(load(p0, i), ax)
            for r in range(3):
                S[i, r] = ax[r]
                S[i, 3 + r] = pxa[r]
        else:
            for r in range(3):
                S[i, r] = 0.0
                S[i, 3 + r] = ax[r]
        j = parent[i]
        for r in range(6):
            V[i, r] = (V[j, r] if j >= 0 else 0.0) + S[i, r] * qd[i]
        # dS/dt = v_i x S_i (motion cross product)
        w = V[i, 0:3]
        v = V[i, 3:6]
        _cross3(w, S[i, 0:3], Sd[i], 0)
        _cross3(w, S[i, 3:6], Sd[i], 3)
        _cross3(v, S[i, 0:3], tmp, 0)
        for r in range(3):
            Sd[i, 3 + r] += tmp[r]
        # world spatial inertia about the root origin
        m = mass[i]
        c0 = add(load(p0, i), matvec(Ri, load(com, i)))
        cc = c0[0] * c0[0] + c0[1] * c0[1] + c0[2] * c0[2]
        Ii = Ic[i]
        for r in range(6):
            for s in range(6):
                Ii[r, s] = 0.0
        for r in range(3):
            for s in range(3):
                acc = 0.0
                for u in range(3):
                    acc += Ri[r, u] * (inertia[i, u, 0] * Ri[s, 0] + inertia[i, u, 1] * Ri[s, 1]
                                       + inertia[i, u, 2] * Ri[s, 2])
                Ii[r, s] = acc + m * ((cc if r == s else 0.0) - c0[r] * c0[s])
            Ii[3 + r, 3 + r] = m
        h = scale(m, c0)
        _skew_into(h, Ii, 0, 3, 1.0)
        _skew_into(h, Ii, 3, 0, -1.0)
        # B = 1/2 ((v x*) I + (I v) xbar* - I (v x)),  (v x*) = -(v x)^T
        for r in range(6):
            for s in range(6):
                vx[r, s] = 0.0
                X[r, s] = 0.0
        _skew_into(w, vx, 0, 0, 1.0)
        _skew_into(w, vx, 3, 3, 1.0)
        _skew_into(v, vx, 3, 0, 1.0)
        for r in range(6):
            Iv[r] = _dot6(Ii[r], V[i])
        _skew_into(Iv[0:3], X, 0, 0, -1.0)
        _skew_into(Iv[3:6], X, 0, 3, -1.0)
        _skew_into(Iv[3:6], X, 3, 0, -1.0)
        _matmul6(vx, Ii, T1, True)
        _matmul6(Ii, vx, T2, False)
        for r in range(6):
            for s in range(6):
                Bc[i, r, s] = 0.5 * (X[r, s] - T1[r, s] - T2[r, s])
    for i in range(n - 1, -1, -1):
        j = parent[i]
        if j >= 0:
            for r in range(6):
                for s in range(6):
                    Ic[j, r, s] += Ic[i, r, s]
                    Bc[j, r, s] += Bc[i, r, s]
    for r in range(n):
        for s in range(n):
            C[r, s] = 0.0
    alpha = np.empty(6)
    beta = np.empty(6)
    gamma = np.empty(6)
    for d in range(n):
        for r in range(6):
            # Ic symmetric: S_d^T Ic_d = alpha^T
            alpha[r] = _dot6(Ic[d, r], S[d])
            acc = 0.0
            for k in range(6):
                acc += Bc[d, k, r] * S[d, k]
            beta[r] = acc
            gamma[r] = _dot6(Ic[d, r], Sd[d]) + _dot6(Bc[d, r], S[d])
        k = d
        while k >= 0:
            C[d, k] = _dot6(alpha, Sd[k]) + _dot6(beta, S[k])
            if k != d:
                C[k, d] = _dot6(S[k], gamma)
            k = parent[k]


@njit(**_JIT)
def coriolis(parent, kind, axis, R_tree, p_tree, mass, com, inertia, q, qd, out):  # noqa: N803
    """
    Coriolis matrices of a batch of states.

    :param q: Joint positions, shape (N, n); likewise ``qd``.
    :param out: Matrices written here, shape (N, n, n).
    :return: 0, or ``1 + 2 k + a`` when state ``k`` has a non-finite entry in argument
        ``a`` (0 q, 1 qd).
    """
    N, n = q.shape
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    R0 = np.empty((n, 3, 3))
    p0 = np.empty((n, 3))
    S = np.empty((n, 6))
    Sd = np.empty((n, 6))
    V = np.empty((n, 6))
    Ic = np.empty((n, 6, 6))
    Bc = np.empty((n, 6, 6))
    for k in range(N):
        if not all_finite(q[k]):
            return 1 + 2 * k
        if not all_finite(qd[k]):
            return 2 + 2 * k
        joint_transforms(kind, axis, R_tree, p_tree, q[k], R, p)
        coriolis_state(parent, kind, axis, mass, com, inertia, R, p, qd[k],
                       R0, p0, S, Sd, V, Ic, Bc, out[k])
    return 0
