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
    for i in range(n):
        # joint motion subspace S_i in world Plücker coordinates
        ax = R0[i] @ axis[i]
        if kind[i] == 0:
            S[i, 0:3] = ax
            _cross3(p0[i], ax, S[i], 3)
        else:
            S[i, 0:3] = 0.0
            S[i, 3:6] = ax
        j = parent[i]
        for r in range(6):
            V[i, r] = (V[j, r] if j >= 0 else 0.0) + S[i, r] * qd[i]
        # dS/dt = v_i x S_i (motion cross product)
        w = V[i, 0:3]
        v = V[i, 3:6]
        tmp = np.empty(3)
        _cross3(w, S[i, 0:3], Sd[i], 0)
        _cross3(w, S[i, 3:6], Sd[i], 3)
        _cross3(v, S[i, 0:3], tmp, 0)
        Sd[i, 3:6] += tmp
        # world spatial inertia about the root origin
        m = mass[i]
        c0 = p0[i] + R0[i] @ com[i]
        Iw = R0[i] @ inertia[i] @ R0[i].T
        cc = c0 @ c0
        Ii = Ic[i]
        Ii[:, :] = 0.0
        for r in range(3):
            for s in range(3):
                Ii[r, s] = Iw[r, s] + m * ((cc if r == s else 0.0) - c0[r] * c0[s])
            Ii[3 + r, 3 + r] = m
        h = m * c0
        _skew_into(h, Ii, 0, 3, 1.0)
        _skew_into(h, Ii, 3, 0, -1.0)
        # B = 1/2 ((v x*) I + (I v) xbar* - I (v x))
        vx[:, :] = 0.0
        _skew_into(w, vx, 0, 0, 1.0)
        _skew_into(w, vx, 3, 3, 1.0)
        _skew_into(v, vx, 3, 0, 1.0)
        Iv = Ii @ V[i]
        X[:, :] = 0.0
        _skew_into(Iv[0:3], X, 0, 0, -1.0)
        _skew_into(Iv[3:6], X, 0, 3, -1.0)
        _skew_into(Iv[3:6], X, 3, 0, -1.0)
        Bc[i, :, :] = 0.5 * (-(vx.T @ Ii) + X - Ii @ vx)
    for i in range(n - 1, -1, -1):
        j = parent[i]
        if j >= 0:
            Ic[j] += Ic[i]
            Bc[j] += Bc[i]
    C[:, :] = 0.0
    for d in range(n):
        alpha = Ic[d] @ S[d]          # Ic symmetric: S_d^T Ic_d = alpha^T
        beta = Bc[d].T @ S[d]
        gamma = Ic[d] @ Sd[d] + Bc[d] @ S[d]
        k = d
        while k >= 0:
            C[d, k] = alpha @ Sd[k] + beta @ S[k]
            if k != d:
                C[k, d] = S[k] @ gamma
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
