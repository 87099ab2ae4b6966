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

Featherstone, *Rigid Body Dynamics Algorithms* (2008), table 7.1 (velocities and bias
forces outward, articulated inertias inward, accelerations outward, gravity as a base
acceleration), carried out in the root frame as his sec. 7.3 and Pinocchio's ``aba`` do:
every spatial vector is expressed in root coordinates about the root origin, motion
``[w; v]``, force ``[n; f]``, and every articulated inertia ``[[A, B], [B^T, C]]`` too.  An
articulated inertia then passes to the parent by a plain sum, with no Plücker
transform; the price is one rotation of each body's inertia and one world pose per body.
Written in the 3-vector style of the Newton-Euler kernel: each spatial vector a pair of
3-vectors (angular, linear), each inertia its three 3x3 blocks, nothing allocated per
state.  The facade picks it over CRBA + Cholesky (:mod:`.forward_dynamics`) above a
measured number of joints.
"""

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import (
    add, cross, dot, load, matvec, scale, store, sub)

_JIT = INNER_OPTIONS


@njit(**_JIT)
def aba_state(parent, kind, axis, mass, com, inertia, armature, use_armature,  # noqa: N803
              base_acc, R, p, qd, tau, fext, use_fext, vec, D, u, blocks, blk, out):
    """
    Write the joint accelerations of one state into ``out`` (n,).

    ``R``, ``p`` the joint transforms (parent <- body); ``fext`` (n, 6) body wrenches
    ``[f; tau]`` in body frames about body origins, read when ``use_fext``.  Scratch:
    ``vec`` (11, n, 3), ``D``, ``u`` (n,), ``blocks`` (4, n, 3, 3), ``blk`` (>= 1, 3, 3).

    :return: False when a joint's articulated inertia ``D`` is not positive (the joint
        moves no mass), else True.
    """
    n = qd.shape[0]
    p0, vw, vl, sa, sl, cw, cl, pn, pf, Ut, Ub = (vec[0], vec[1], vec[2], vec[3], vec[4],
                                                  vec[5], vec[6], vec[7], vec[8], vec[9],
                                                  vec[10])
    A, B, C, R0 = blocks[0], blocks[1], blocks[2], blocks[3]
    T = blk[0]
    zero = (0.0, 0.0, 0.0)
    for i in range(n):
        Ri = R[i]
        R0i = R0[i]
        j = parent[i]
        # root <- body pose
        if j < 0:
            for r in range(3):
                for s in range(3):
                    R0i[r, s] = Ri[r, s]
            o = load(p, i)
            w = zero
            lin = zero
        else:
            Rj = R0[j]
            for r in range(3):
                for s in range(3):
                    R0i[r, s] = Rj[r, 0] * Ri[0, s] + Rj[r, 1] * Ri[1, s] + Rj[r, 2] * Ri[2, s]
            o = add(load(p0, j), matvec(Rj, load(p, i)))
            w = load(vw, j)
            lin = load(vl, j)
        store(p0, i, o)
        # motion subspace S = [a; o x a] (revolute) or [0; a] (prismatic), root frame
        a = matvec(R0i, load(axis, i))
        if kind[i] == 0:
            s_a = a
            s_l = cross(o, a)
        else:
            s_a = zero
            s_l = a
        store(sa, i, s_a)
        store(sl, i, s_l)
        dq = qd[i]
        vj_a = scale(dq, s_a)
        vj_l = scale(dq, s_l)
        # c = v x S qd (v the parent's velocity; S x S = 0)
        store(cw, i, cross(w, vj_a))
        store(cl, i, add(cross(w, vj_l), cross(lin, vj_a)))
        w = add(w, vj_a)
        lin = add(lin, vj_l)
        store(vw, i, w)
        store(vl, i, lin)
        # spatial inertia about the root origin (Featherstone eq. 2.63), root axes:
        # A = R Ic R^T + m ([c]x [c]x^T), B = m [c]x, C = m 1, c the centre of mass
        m = mass[i]
        c = add(o, matvec(R0i, load(com, i)))
        Ii = inertia[i]
        for r in range(3):
            for s in range(3):
                T[r, s] = Ii[r, 0] * R0i[s, 0] + Ii[r, 1] * R0i[s, 1] + Ii[r, 2] * R0i[s, 2]
        cc = dot(c, c)
        Ai = A[i]
        for r in range(3):
            for s in range(r, 3):
                v = (R0i[r, 0] * T[0, s] + R0i[r, 1] * T[1, s] + R0i[r, 2] * T[2, s]
                     - m * c[r] * c[s])
                if r == s:
                    v += m * cc
                Ai[r, s] = v
                Ai[s, r] = v
        h = scale(m, c)
        Bi = B[i]
        Ci = C[i]
        Bi[0, 0], Bi[0, 1], Bi[0, 2] = 0.0, -h[2], h[1]
        Bi[1, 0], Bi[1, 1], Bi[1, 2] = h[2], 0.0, -h[0]
        Bi[2, 0], Bi[2, 1], Bi[2, 2] = -h[1], h[0], 0.0
        for r in range(3):
            for s in range(3):
                Ci[r, s] = m if r == s else 0.0
        # bias force v x* I v (Featherstone table 7.1)
        nu = add(matvec(Ai, w), cross(h, lin))
        ph = sub(scale(m, lin), cross(h, w))
        bn = add(cross(w, nu), cross(lin, ph))
        bf = cross(w, ph)
        if use_fext:
            fw = matvec(R0i, (fext[i, 0], fext[i, 1], fext[i, 2]))
            nw = add(matvec(R0i, (fext[i, 3], fext[i, 4], fext[i, 5])), cross(o, fw))
            bn = sub(bn, nw)
            bf = sub(bf, fw)
        store(pn, i, bn)
        store(pf, i, bf)
    for i in range(n - 1, -1, -1):
        s_a = load(sa, i)
        s_l = load(sl, i)
        Ai, Bi, Ci = A[i], B[i], C[i]
        # U = I^A S
        ut = add(matvec(Ai, s_a), matvec(Bi, s_l))
        ub = add((Bi[0, 0] * s_a[0] + Bi[1, 0] * s_a[1] + Bi[2, 0] * s_a[2],
                  Bi[0, 1] * s_a[0] + Bi[1, 1] * s_a[1] + Bi[2, 1] * s_a[2],
                  Bi[0, 2] * s_a[0] + Bi[1, 2] * s_a[1] + Bi[2, 2] * s_a[2]),
                 matvec(Ci, s_l))
        Di = dot(s_a, ut) + dot(s_l, ub)
        if use_armature:
            Di += armature[i]
        if not Di > 0.0:
            return False
        pn_i = load(pn, i)
        pf_i = load(pf, i)
        ui = tau[i] - dot(s_a, pn_i) - dot(s_l, pf_i)
        D[i] = Di
        u[i] = ui
        store(Ut, i, ut)
        store(Ub, i, ub)
        j = parent[i]
        if j >= 0:
            # pa = pA + I^a c + U u / D with I^a = I^A - U U^T / D, summed into the parent
            ct = load(cw, i)
            cb = load(cl, i)
            Ic_n = add(matvec(Ai, ct), matvec(Bi, cb))
            Ic_f = add((Bi[0, 0] * ct[0] + Bi[1, 0] * ct[1] + Bi[2, 0] * ct[2],
                        Bi[0, 1] * ct[0] + Bi[1, 1] * ct[1] + Bi[2, 1] * ct[2],
                        Bi[0, 2] * ct[0] + Bi[1, 2] * ct[1] + Bi[2, 2] * ct[2]),
                       matvec(Ci, cb))
            k = (ui - dot(ut, ct) - dot(ub, cb)) / Di
            store(pn, j, add(load(pn, j), add(add(pn_i, Ic_n), scale(k, ut))))
            store(pf, j, add(load(pf, j), add(add(pf_i, Ic_f), scale(k, ub))))
            Aj, Bj, Cj = A[j], B[j], C[j]
            inv = 1.0 / Di
            for r in range(3):
                tr = ut[r] * inv
                br = ub[r] * inv
                for s in range(3):
                    Aj[r, s] += Ai[r, s] - tr * ut[s]
                    Bj[r, s] += Bi[r, s] - tr * ub[s]
                    Cj[r, s] += Ci[r, s] - br * ub[s]
    # accelerations outward; the root's is the base acceleration (gravity trick)
    aw, al = vw, vl
    for i in range(n):
        j = parent[i]
        if j < 0:
            w = load(cw, i)
            lin = add((base_acc[0], base_acc[1], base_acc[2]), load(cl, i))
        else:
            w = add(load(aw, j), load(cw, i))
            lin = add(load(al, j), load(cl, i))
        qdd = (u[i] - dot(load(Ut, i), w) - dot(load(Ub, i), lin)) / D[i]
        out[i] = qdd
        w = add(w, scale(qdd, load(sa, i)))
        lin = add(lin, scale(qdd, load(sl, i)))
        store(aw, i, w)
        store(al, i, lin)
    return True
