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

Featherstone, *Rigid Body Dynamics Algorithms* (2008), table 7.1: velocities and bias
forces outward, articulated inertias inward, accelerations outward, gravity as a base
acceleration.  Spatial vectors in body coordinates about the body origin, motion
``[w; v]``, force ``[n; f]``.  Written in the 3-vector style of the Newton-Euler kernel:
every spatial vector is a pair of 3-vectors (angular, linear) and every articulated
inertia is kept as its three 3x3 blocks ``[[A, B], [B^T, C]]``.  The Plücker transforms and
the congruence ``X^T I^A X`` that carries an articulated inertia to the parent are done
block by block with the body's rotation ``R`` and origin ``p`` (Featherstone eq. 2.24 split
into a rotation ``R (.) R^T`` of each block and a shift: ``A' = A + P B^T - B P - P C P``,
``B' = B + P C``, ``C' = C`` with ``P = [p]x``), so no 6x6 matrix product is formed and
nothing is allocated per state.  The facade picks it over CRBA + Cholesky
(:mod:`.forward_dynamics`) above a measured number of joints.
"""

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import (
    add, cross, dot, load, matTvec, matvec, scale, store, sub)

_JIT = INNER_OPTIONS


@njit(**_JIT)
def _rotate(R, M, tmp, out):  # noqa: N803
    """``out = R M R^T`` for (3, 3) arrays; ``tmp`` (3, 3) scratch."""
    for r in range(3):
        for s in range(3):
            tmp[r, s] = M[r, 0] * R[s, 0] + M[r, 1] * R[s, 1] + M[r, 2] * R[s, 2]
    for r in range(3):
        for s in range(3):
            out[r, s] = R[r, 0] * tmp[0, s] + R[r, 1] * tmp[1, s] + R[r, 2] * tmp[2, s]


@njit(**_JIT)
def _to_parent(R, p, Aa, Ba, Ca, blk, Ap, Bp, Cp):  # noqa: N803
    """Add ``X^T [[Aa, Ba], [Ba^T, Ca]] X`` (child -> parent of (R, p)) to the parent's blocks."""
    A = blk[0]
    B = blk[1]
    C = blk[2]
    Q = blk[3]
    tmp = blk[4]
    _rotate(R, Aa, tmp, A)
    _rotate(R, Ba, tmp, B)
    _rotate(R, Ca, tmp, C)
    for s in range(3):
        qs = cross(p, (C[0, s], C[1, s], C[2, s]))  # Q = P C, column s
        for r in range(3):
            Q[r, s] = qs[r]
    for s in range(3):
        # column s of T = P B^T is p x (row s of B), of Z = P Q^T is p x (row s of Q);
        # A' = A + T + T^T - P C P with P C P = -Z^T
        ts = cross(p, (B[s, 0], B[s, 1], B[s, 2]))
        zs = cross(p, (Q[s, 0], Q[s, 1], Q[s, 2]))
        for r in range(3):
            Ap[r, s] += A[r, s] + ts[r]
            Ap[s, r] += ts[r] + zs[r]
    for r in range(3):
        for s in range(3):
            Bp[r, s] += B[r, s] + Q[r, s]
            Cp[r, s] += C[r, s]


@njit(**_JIT)
def aba_state(parent, kind, axis, mass, com, inertia, armature, use_armature,  # noqa: N803
              base_acc, R, p, qd, tau, fext, use_fext, vec, D, u, blocks, blk, out):
    """
    Write the joint accelerations of one state into ``out`` (n,).

    ``R``, ``p`` the joint transforms; ``fext`` (n, 6) body wrenches ``[f; tau]`` read
    when ``use_fext``.  Scratch: ``vec`` (12, n, 3), ``D``, ``u`` (n,), ``blocks``
    (6, n, 3, 3), ``blk`` (5, 3, 3).

    :return: False when a joint's articulated inertia ``D`` is not positive (the joint
        moves no mass), else True.
    """
    n = qd.shape[0]
    vw, vl, cw, cl, pn, pf, Ut, Ub, aw, al = (vec[0], vec[1], vec[2], vec[3], vec[4], vec[5],
                                              vec[6], vec[7], vec[8], vec[9])
    A, B, C, Aa, Ba, Ca = blocks[0], blocks[1], blocks[2], blocks[3], blocks[4], blocks[5]
    zero = (0.0, 0.0, 0.0)
    for i in range(n):
        Ri = R[i]
        pi = load(p, i)
        ax = load(axis, i)
        j = parent[i]
        if j < 0:
            w = zero
            lin = zero
        else:
            wp = load(vw, j)
            w = matTvec(Ri, wp)
            lin = matTvec(Ri, sub(load(vl, j), cross(pi, wp)))
        sq = scale(qd[i], ax)
        if kind[i] == 0:
            w = add(w, sq)
            store(cw, i, cross(w, sq))
            store(cl, i, cross(lin, sq))
        else:
            lin = add(lin, sq)
            store(cw, i, zero)
            store(cl, i, cross(w, sq))
        store(vw, i, w)
        store(vl, i, lin)
        # body spatial inertia about the origin (Featherstone eq. 2.63) as blocks
        m = mass[i]
        cm = load(com, i)
        h = scale(m, cm)
        cc = dot(cm, cm)
        for r in range(3):
            for s in range(3):
                A[i, r, s] = inertia[i, r, s] + m * ((cc if r == s else 0.0) - cm[r] * cm[s])
                C[i, r, s] = m if r == s else 0.0
        B[i, 0, 0], B[i, 0, 1], B[i, 0, 2] = 0.0, -h[2], h[1]
        B[i, 1, 0], B[i, 1, 1], B[i, 1, 2] = h[2], 0.0, -h[0]
        B[i, 2, 0], B[i, 2, 1], B[i, 2, 2] = -h[1], h[0], 0.0
        # bias force v x* I v (Featherstone table 7.1)
        nu = add(matvec(A[i], w), cross(h, lin))
        ph = sub(scale(m, lin), cross(h, w))
        bn = add(cross(w, nu), cross(lin, ph))
        bf = cross(w, ph)
        if use_fext:
            bn = sub(bn, (fext[i, 3], fext[i, 4], fext[i, 5]))
            bf = sub(bf, (fext[i, 0], fext[i, 1], fext[i, 2]))
        store(pn, i, bn)
        store(pf, i, bf)
    for i in range(n - 1, -1, -1):
        ax = load(axis, i)
        if kind[i] == 0:
            ut = matvec(A[i], ax)
            ub = matTvec(B[i], ax)
            Di = dot(ax, ut)
            ui = tau[i] - dot(ax, load(pn, i))
        else:
            ut = matvec(B[i], ax)
            ub = matvec(C[i], ax)
            Di = dot(ax, ub)
            ui = tau[i] - dot(ax, load(pf, i))
        if use_armature:
            Di += armature[i]
        if not Di > 0.0:
            return False
        D[i] = Di
        u[i] = ui
        store(Ut, i, ut)
        store(Ub, i, ub)
        j = parent[i]
        if j >= 0:
            Ai, Bi, Ci = Aa[i], Ba[i], Ca[i]
            for r in range(3):
                for s in range(3):
                    Ai[r, s] = A[i, r, s] - ut[r] * ut[s] / Di
                    Bi[r, s] = B[i, r, s] - ut[r] * ub[s] / Di
                    Ci[r, s] = C[i, r, s] - ub[r] * ub[s] / Di
            # pa = pA + Ia c + U u / D, carried to the parent: X^T pa
            ct = load(cw, i)
            cb = load(cl, i)
            k = ui / Di
            an = add(add(load(pn, i), add(matvec(Ai, ct), matvec(Bi, cb))), scale(k, ut))
            af = add(add(load(pf, i), add(matTvec(Bi, ct), matvec(Ci, cb))), scale(k, ub))
            Ri = R[i]
            fp = matvec(Ri, af)
            np_ = add(matvec(Ri, an), cross(load(p, i), fp))
            store(pn, j, add(load(pn, j), np_))
            store(pf, j, add(load(pf, j), fp))
            _to_parent(Ri, load(p, i), Ai, Bi, Ci, blk, A[j], B[j], C[j])
    for i in range(n):
        Ri = R[i]
        j = parent[i]
        if j < 0:
            w = zero
            lin = matTvec(Ri, (base_acc[0], base_acc[1], base_acc[2]))
        else:
            wp = load(aw, j)
            w = matTvec(Ri, wp)
            lin = matTvec(Ri, sub(load(al, j), cross(load(p, i), wp)))
        w = add(w, load(cw, i))
        lin = add(lin, load(cl, i))
        qdd = (u[i] - dot(load(Ut, i), w) - dot(load(Ub, i), lin)) / D[i]
        out[i] = qdd
        ax = load(axis, i)
        if kind[i] == 0:
            w = add(w, scale(qdd, ax))
        else:
            lin = add(lin, scale(qdd, ax))
        store(aw, i, w)
        store(al, i, lin)
    return True
