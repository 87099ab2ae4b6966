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

Each entry kernel takes N states stored one after the other (N = 1: one state) and
returns 0, or ``1 + c k + a`` for state ``k`` with a non-finite argument ``a`` (``a`` = the
number of state arguments when the result is not finite).
"""

from numba import njit

from manip_dynamics.algorithms._jit import INNER_OPTIONS
from manip_dynamics.algorithms._vec3 import add, cross, load, matTvec, matvec, sub
from manip_dynamics.algorithms.kinematics import point_acceleration

_JIT = INNER_OPTIONS


@njit(**_JIT)
def _rotate_into(R0, T, out):  # noqa: N803
    """``out[:3, :3] = R0 @ T[:3, :3]`` without temporaries."""
    for r in range(3):
        for c in range(3):
            out[r, c] = R0[r, 0] * T[0, c] + R0[r, 1] * T[1, c] + R0[r, 2] * T[2, c]


@njit(**_JIT)
def pose_state(R0, p0, body, T_body_link, out):  # noqa: N803
    """Write the (4, 4) transform root <- link from the body poses ``R0``, ``p0``."""
    out[:, :] = 0.0
    out[3, 3] = 1.0
    if body < 0:
        for r in range(3):
            for c in range(4):
                out[r, c] = T_body_link[r, c]
        return
    _rotate_into(R0[body], T_body_link, out)
    t = (T_body_link[0, 3], T_body_link[1, 3], T_body_link[2, 3])
    o = add(load(p0, body), matvec(R0[body], t))
    for r in range(3):
        out[r, 3] = o[r]


@njit(**_JIT)
def jacobian_state(parent, kind, axis, R0, p0, body, T_body_link, local, Rl,  # noqa: N803
                   out):
    """Write the (6, n) geometric Jacobian of a link into ``out``; ``Rl`` (3, 3) scratch."""
    out[:, :] = 0.0
    if body < 0:
        return
    o = add(load(p0, body), matvec(R0[body], (T_body_link[0, 3], T_body_link[1, 3],
                                              T_body_link[2, 3])))
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
def bias_acceleration_state(R0, w, wd, vd, body, T_body_link, local, out):  # noqa: N803
    """
    Write ``dJ/dt qd`` (6,) of a link: the acceleration ``[a; wdot]`` of its origin at qdd = 0.

    The classical (not spatial) acceleration, from the outward pass ``w``, ``wd``, ``vd``
    (body frames) with zero joint accelerations and no gravity, in root or link axes;
    ``R0`` the world body rotations.
    """
    if body < 0:
        for i in range(6):
            out[i] = 0.0
        return
    r = (T_body_link[0, 3], T_body_link[1, 3], T_body_link[2, 3])
    acc = point_acceleration(load(w, body), load(wd, body), load(vd, body), r)
    wdot = load(wd, body)
    if local:
        acc = matTvec(T_body_link, acc)
        wdot = matTvec(T_body_link, wdot)
    else:
        acc = matvec(R0[body], acc)
        wdot = matvec(R0[body], wdot)
    for i in range(3):
        out[i] = acc[i]
        out[3 + i] = wdot[i]
