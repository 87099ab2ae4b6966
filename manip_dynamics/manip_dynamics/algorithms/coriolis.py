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

The skew matrices ``(v x)`` are never formed: with ``I = [[A, [h]x], [[h]x^T, m 1]]``,
``W = [w]x``, ``V = [v]x`` and ``I v = [nu; phi]``, ``Y = (v x*) I`` has the blocks
``Y11 = W A - V [h]x``, ``Y12 = W [h]x + m V``, ``Y21 = -W [h]x``, ``Y22 = m W``, so
``B = 1/2 (X + Y + Y^T)`` with ``X = (I v) xbar* = [[-[nu]x, -[phi]x], [-[phi]x, 0]]``
needs only cross products, and ``B22 = 0``.  No array is allocated per state.
"""

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import add, cross, dot, load, matvec, scale, sub
from manip_dynamics.algorithms.kinematics import world_poses

_JIT = INNER_OPTIONS


@njit(**_JIT)
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(**_JIT)
def _body_terms(Ri, c0, m, inertia, w, v, Ii, Bi):  # noqa: N803
    """
    Fill the world spatial inertia ``Ii`` and ``Bi`` (6, 6) of one body (module doc).

    ``Ri`` body -> world rotation, ``c0`` centre of mass in the world, ``inertia`` (3, 3)
    about the centre of mass in body axes, ``(w, v)`` the body's spatial velocity.
    """
    cc = dot(c0, c0)
    for r in range(3):
        for s in range(3):
            acc = 0.0
            for u in range(3):
                acc += Ri[r, u] * (inertia[u, 0] * Ri[s, 0] + inertia[u, 1] * Ri[s, 1]
                                   + inertia[u, 2] * Ri[s, 2])
            Ii[r, s] = acc + m * ((cc if r == s else 0.0) - c0[r] * c0[s])
            Ii[3 + r, 3 + s] = m if r == s else 0.0
    h = scale(m, c0)
    # top right [h]x, bottom left [h]x^T
    Ii[0, 3], Ii[0, 4], Ii[0, 5] = 0.0, -h[2], h[1]
    Ii[1, 3], Ii[1, 4], Ii[1, 5] = h[2], 0.0, -h[0]
    Ii[2, 3], Ii[2, 4], Ii[2, 5] = -h[1], h[0], 0.0
    for r in range(3):
        for s in range(3):
            Ii[3 + s, r] = Ii[r, 3 + s]
    # I v = [nu; phi]
    nu = add((Ii[0, 0] * w[0] + Ii[0, 1] * w[1] + Ii[0, 2] * w[2],
              Ii[1, 0] * w[0] + Ii[1, 1] * w[1] + Ii[1, 2] * w[2],
              Ii[2, 0] * w[0] + Ii[2, 1] * w[1] + Ii[2, 2] * w[2]), cross(h, v))
    phi = sub(scale(m, v), cross(h, w))
    for s in range(3):
        e = (1.0 if s == 0 else 0.0, 1.0 if s == 1 else 0.0, 1.0 if s == 2 else 0.0)
        hs = cross(h, e)                      # column s of [h]x
        y11 = sub(cross(w, (Ii[0, s], Ii[1, s], Ii[2, s])), cross(v, hs))
        pm = cross(w, hs)                     # column s of W [h]x
        y12 = add(pm, scale(m, cross(v, e)))  # column s of W [h]x + m V
        for r in range(3):
            Bi[r, s] = y11[r]
            Bi[r, 3 + s] = y12[r]
            Bi[3 + r, s] = -pm[r]
            Bi[3 + r, 3 + s] = 0.0
    # symmetrise: B11 = (Y11 + Y11^T) / 2, B12 = (Y12 + Y21^T) / 2, B21 = (Y21 + Y12^T) / 2
    for r in range(3):
        for s in range(r, 3):
            a = 0.5 * (Bi[r, s] + Bi[s, r])
            Bi[r, s] = a
            Bi[s, r] = a
    for r in range(3):
        for s in range(3):
            Bi[r, 3 + s] = 0.5 * (Bi[r, 3 + s] + Bi[3 + s, r])
    for r in range(3):
        for s in range(3):
            Bi[3 + r, s] = Bi[s, 3 + r]  # B21 = B12^T before the X terms
    # X / 2: -[nu]x / 2 on B11, -[phi]x / 2 on B12 and B21
    for r in range(3):
        for s in range(3):
            if r != s:
                t = 3 - r - s  # the third index; [x]x[r, s] = -eps(r, s, t) x[t]
                sign = 0.5 if (s - r) % 3 == 1 else -0.5  # eps(r, s, t) / 2
                Bi[r, s] += sign * nu[t]
                Bi[r, 3 + s] += sign * phi[t]
                Bi[3 + r, s] += sign * phi[t]


@njit(**_JIT)
def coriolis_state(parent, kind, axis, mass, com, inertia, R, p, qd,  # noqa: N803
                   R0, p0, S, Sd, V, Ic, Bc, abg, C):
    """
    Fill ``C`` (n, n) for one state whose joint transforms are ``R``, ``p``.

    Scratch: ``R0`` (n, 3, 3), ``p0`` (n, 3), ``S``, ``Sd``, ``V`` (n, 6),
    ``Ic``, ``Bc`` (n, 6, 6), ``abg`` (3, 6).
    """
    n = qd.shape[0]
    world_poses(parent, R, p, R0, p0)
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
        w = (V[i, 0], V[i, 1], V[i, 2])
        v = (V[i, 3], V[i, 4], V[i, 5])
        sw = (S[i, 0], S[i, 1], S[i, 2])
        sv = (S[i, 3], S[i, 4], S[i, 5])
        dw = cross(w, sw)
        dv = add(cross(w, sv), cross(v, sw))
        for r in range(3):
            Sd[i, r] = dw[r]
            Sd[i, 3 + r] = dv[r]
        c0 = add(load(p0, i), matvec(Ri, load(com, i)))
        _body_terms(Ri, c0, mass[i], inertia[i], w, v, Ic[i], Bc[i])
    for i in range(n - 1, -1, -1):
        j = parent[i]
        if j >= 0:
            for r in range(6):
                for s in range(6):
                    Ic[j, r, s] += Ic[i, r, s]
                    Bc[j, r, s] += Bc[i, r, s]
    C[:, :] = 0.0  # entries of unrelated branches of a tree stay zero
    alpha = abg[0]
    beta = abg[1]
    gamma = abg[2]
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
