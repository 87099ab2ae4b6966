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
Link poses, geometric Jacobians and Jacobian-derivative terms.

The geometric Jacobian of a link (Craig ch. 5, velocity propagation) maps joint
velocities to the twist ``[v; w]`` of the link origin: for an ancestor revolute joint
``k`` with world axis ``z_k`` at origin ``o_k`` the column is ``[z_k x (o - o_k); z_k]``,
for a prismatic joint ``[z_k; 0]``; other columns are zero.  Frames: 'world' uses the root
frame's axes, 'link' the link's own axes; the reference point is the link origin in both.
"""

from numba import njit
import numpy as np

from manip_dynamics.algorithms._jit import JIT_OPTIONS
from manip_dynamics.algorithms._vec3 import add, cross, load, matTvec, matvec, sub
from manip_dynamics.algorithms.kinematics import (
    joint_transforms, outward_pass, point_acceleration, world_poses)

_JIT = JIT_OPTIONS


@njit(**_JIT)
def body_poses(parent, kind, axis, R_tree, p_tree, q, R0, p0):  # noqa: N803
    """Fill world poses ``R0`` (n, 3, 3), ``p0`` (n, 3) of every body for ``q`` (n,)."""
    n = q.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    joint_transforms(kind, axis, R_tree, p_tree, q, R, p)
    world_poses(parent, R, p, R0, p0)


@njit(**_JIT)
def _rotate_into(R0, T, out):  # noqa: N803
    """``out[:3, :3] = R0 @ T[:3, :3]`` without temporaries."""
    for r in range(3):
        for c in range(3):
            out[r, c] = R0[r, 0] * T[0, c] + R0[r, 1] * T[1, c] + R0[r, 2] * T[2, c]


@njit(**_JIT)
def link_pose(parent, kind, axis, R_tree, p_tree, q, body, T_body_link, out):  # noqa: N803
    """Write the (4, 4) transform root <- link for joint positions ``q`` (n,) into ``out``."""
    n = q.shape[0]
    R0 = np.empty((n, 3, 3))
    p0 = np.empty((n, 3))
    body_poses(parent, kind, axis, R_tree, p_tree, q, R0, p0)
    out[:, :] = 0.0
    out[3, 3] = 1.0
    if body < 0:
        out[:3, :3] = T_body_link[:3, :3]
        out[:3, 3] = T_body_link[:3, 3]
        return
    _rotate_into(R0[body], T_body_link, out)
    t = (T_body_link[0, 3], T_body_link[1, 3], T_body_link[2, 3])
    o = add(load(p0, body), matvec(R0[body], t))
    for r in range(3):
        out[r, 3] = o[r]


@njit(**_JIT)
def link_jacobian(parent, kind, axis, R_tree, p_tree, q, body, T_body_link,  # noqa: N803
                  local, out):
    """Write the (6, n) geometric Jacobian of a link into ``out``; see module doc."""
    n = q.shape[0]
    R0 = np.empty((n, 3, 3))
    p0 = np.empty((n, 3))
    body_poses(parent, kind, axis, R_tree, p_tree, q, R0, p0)
    out[:, :] = 0.0
    if body < 0:
        return
    o = add(load(p0, body), matvec(R0[body], (T_body_link[0, 3], T_body_link[1, 3],
                                              T_body_link[2, 3])))
    Rl = np.empty((3, 3))
    _rotate_into(R0[body], T_body_link, Rl)
    k = body
    while k >= 0:
        z = matvec(R0[k], load(axis, k))
        if kind[k] == 0:
            lin = cross(z, sub(o, load(p0, k)))
            ang = z
        else:
            lin = z
            ang = (0.0, 0.0, 0.0)
        if local:
            lin = matTvec(Rl, lin)
            ang = matTvec(Rl, ang)
        for r in range(3):
            out[r, k] = lin[r]
            out[3 + r, k] = ang[r]
        k = parent[k]


@njit(**_JIT)
def link_bias_acceleration(parent, kind, axis, R_tree, p_tree, q, qd, body,  # noqa: N803
                           T_body_link, local, out):
    """
    Write ``dJ/dt qd`` (6,) of a link: the acceleration ``[a; wdot]`` of its origin at qdd = 0.

    The classical (not spatial) acceleration, from one outward pass with zero joint
    accelerations and no gravity, expressed in root ('world') or link axes.
    """
    n = q.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    w = np.empty((n, 3))
    wd = np.empty((n, 3))
    vd = np.empty((n, 3))
    R0 = np.empty((n, 3, 3))
    p0 = np.empty((n, 3))
    out[:] = 0.0
    if body < 0:
        return
    joint_transforms(kind, axis, R_tree, p_tree, q, R, p)
    world_poses(parent, R, p, R0, p0)
    outward_pass(parent, kind, axis, R, p, np.zeros(3), qd, np.zeros(n), w, wd, vd)
    r = (T_body_link[0, 3], T_body_link[1, 3], T_body_link[2, 3])
    acc = point_acceleration(load(w, body), load(wd, body), load(vd, body), r)
    wdot = load(wd, body)
    if local:
        Rbl = T_body_link[:3, :3]
        acc = matTvec(Rbl, acc)
        wdot = matTvec(Rbl, wdot)
    else:
        acc = matvec(R0[body], acc)
        wdot = matvec(R0[body], wdot)
    for i in range(3):
        out[i] = acc[i]
        out[3 + i] = wdot[i]
