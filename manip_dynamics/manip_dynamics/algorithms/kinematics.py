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
Joint transforms, forward kinematics and the outward velocity/acceleration pass.

Kernels (numba, nopython) shared by the dynamics algorithms.  Frames: ``R[i]`` rotates body
``i`` coordinates into its parent's, ``p[i]`` is body ``i``'s origin in the parent frame;
``R0[i]``/``p0[i]`` do the same relative to the root (world) frame.
"""

import math

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import (
    add, cross, dot, load, matTvec, matvec, scale, store)

_JIT = INNER_OPTIONS


@njit(**_JIT)
def joint_transforms(kind, axis, R_tree, p_tree, q, R, p):  # noqa: N803
    """
    Fill ``R[i]``, ``p[i]`` (parent <- body) for joint positions ``q`` (n,).

    Revolute: ``R = R_tree Rot(axis, q)`` (Rodrigues); prismatic:
    ``p = p_tree + R_tree axis q``.
    """
    n = q.shape[0]
    for i in range(n):
        ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
        if kind[i] == 0:
            c = math.cos(q[i])
            s = math.sin(q[i])
            v = 1.0 - c
            a00 = c + v * ax * ax
            a01 = v * ax * ay - s * az
            a02 = v * ax * az + s * ay
            a10 = v * ax * ay + s * az
            a11 = c + v * ay * ay
            a12 = v * ay * az - s * ax
            a20 = v * ax * az - s * ay
            a21 = v * ay * az + s * ax
            a22 = c + v * az * az
            for r in range(3):
                t0, t1, t2 = R_tree[i, r, 0], R_tree[i, r, 1], R_tree[i, r, 2]
                R[i, r, 0] = t0 * a00 + t1 * a10 + t2 * a20
                R[i, r, 1] = t0 * a01 + t1 * a11 + t2 * a21
                R[i, r, 2] = t0 * a02 + t1 * a12 + t2 * a22
                p[i, r] = p_tree[i, r]
        else:
            for r in range(3):
                R[i, r, 0] = R_tree[i, r, 0]
                R[i, r, 1] = R_tree[i, r, 1]
                R[i, r, 2] = R_tree[i, r, 2]
                p[i, r] = p_tree[i, r] + (R_tree[i, r, 0] * ax + R_tree[i, r, 1] * ay
                                          + R_tree[i, r, 2] * az) * q[i]


@njit(**_JIT)
def world_poses(parent, R, p, R0, p0):  # noqa: N803
    """Compose parent <- body transforms into root <- body ``R0[i]``, ``p0[i]``."""
    n = parent.shape[0]
    for i in range(n):
        j = parent[i]
        if j < 0:
            for r in range(3):
                for c in range(3):
                    R0[i, r, c] = R[i, r, c]
                p0[i, r] = p[i, r]
        else:
            for r in range(3):
                for c in range(3):
                    R0[i, r, c] = (R0[j, r, 0] * R[i, 0, c] + R0[j, r, 1] * R[i, 1, c]
                                   + R0[j, r, 2] * R[i, 2, c])
            store(p0, i, add(load(p0, j), matvec(R0[j], load(p, i))))


@njit(**_JIT)
def outward_pass(parent, kind, axis, R, p, base_acc, qd, qdd, w, wd, vd):  # noqa: N803
    """
    Propagate angular velocity, angular and linear acceleration outward (body frames).

    Craig eq. 6.45-6.47 (revolute) and their prismatic forms (Craig eq. 6.33-6.35,
    exercise 6.4); ``vd[i]`` is the linear acceleration of body ``i``'s origin, starting
    from ``base_acc`` (the root's acceleration: ``-gravity`` folds gravity in, Craig
    sec. 6.5 "inclusion of gravity forces").
    """
    n = qd.shape[0]
    for i in range(n):
        j = parent[i]
        if j < 0:
            w_p = (0.0, 0.0, 0.0)
            wd_p = (0.0, 0.0, 0.0)
            vd_p = (base_acc[0], base_acc[1], base_acc[2])
        else:
            w_p = load(w, j)
            wd_p = load(wd, j)
            vd_p = load(vd, j)
        Ri = R[i]
        pi = load(p, i)
        a = load(axis, i)
        # acceleration of this body's origin due to the parent's motion, parent frame
        lin = add(add(cross(wd_p, pi), cross(w_p, cross(w_p, pi))), vd_p)
        w_c = matTvec(Ri, w_p)
        wd_c = matTvec(Ri, wd_p)
        vd_c = matTvec(Ri, lin)
        if kind[i] == 0:
            wi = add(w_c, scale(qd[i], a))
            wdi = add(add(wd_c, cross(w_c, scale(qd[i], a))), scale(qdd[i], a))
            vdi = vd_c
        else:
            wi = w_c
            wdi = wd_c
            vdi = add(add(vd_c, cross(scale(2.0, wi), scale(qd[i], a))), scale(qdd[i], a))
        store(w, i, wi)
        store(wd, i, wdi)
        store(vd, i, vdi)


@njit(**_JIT)
def all_finite(x):
    """Return True when every entry of the 1-D array ``x`` is finite."""
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return False
    return True


@njit(**_JIT)
def load_state(src, lo, dst):
    """
    Copy ``src[lo:lo + len(dst)]`` into ``dst`` and return True when every entry is finite.

    The entry kernels take strided (N n,) arrays; copying each state into a contiguous
    scratch vector first means every inner kernel is compiled for one array layout only.
    """
    finite = True
    for i in range(dst.shape[0]):
        v = src[lo + i]
        dst[i] = v
        if not math.isfinite(v):
            finite = False
    return finite


@njit(**_JIT)
def store_state(src, dst, lo):
    """Copy ``src`` into ``dst[lo:lo + len(src)]``; return True when every entry is finite."""
    finite = True
    for i in range(src.shape[0]):
        v = src[i]
        dst[lo + i] = v
        if not math.isfinite(v):
            finite = False
    return finite


@njit(**_JIT)
def store_rows(src, dst, lo):
    """Copy the rows of ``src`` into rows ``lo:`` of ``dst``; True when all are finite."""
    finite = True
    for r in range(src.shape[0]):
        for c in range(src.shape[1]):
            v = src[r, c]
            dst[lo + r, c] = v
            if not math.isfinite(v):
                finite = False
    return finite


@njit(**_JIT)
def point_acceleration(wi, wdi, vdi, r):
    """Return the acceleration of the point ``r`` of a body (Craig eq. 6.48 form)."""
    return add(add(cross(wdi, r), cross(wi, cross(wi, r))), vdi)


__all__ = ['all_finite', 'dot', 'joint_transforms', 'load_state',
           'outward_pass', 'point_acceleration', 'store_rows', 'store_state', 'world_poses']
